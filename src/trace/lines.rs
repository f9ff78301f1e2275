//! Reading text line by line, with a bound on a line's length and the line
//! number errors give; or whole, with a bound on its size.

use std::io::{self, BufRead, Read};

use super::error::{Location, TraceError};

/// The longest line a text input may hold: far above any name or cost line
/// of a trace or profile, and a bound on the memory a file without line
/// breaks (a binary file, `/dev/zero`) takes before it is refused.
pub const MAX_LINE: usize = 16 << 20;

/// What [`read_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum LineRead {
    /// A line, in the buffer with its newline (if it had one).
    Line,
    /// The end of the input.
    End,
    /// A line longer than [`MAX_LINE`]; its first bytes are in the buffer.
    TooLong,
}

/// Why a [`LineRead::TooLong`] line is refused, followed by `what` the
/// input then is not.
pub fn too_long(what: &str) -> String {
    format!("a line longer than {} MiB{what}", MAX_LINE >> 20)
}

/// All of `input`, if it holds at most `max` bytes; `None` if it holds
/// more, of which only `max + 1` are read.
pub fn read_bounded(input: impl Read, max: u64) -> io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    input.take(max + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= max).then_some(bytes))
}

/// Reads the next line into `buf`, at most [`MAX_LINE`] bytes of it.
pub fn read_line(input: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<LineRead> {
    buf.clear();
    let read = input
        .by_ref()
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', buf)?;
    Ok(if buf.len() > MAX_LINE {
        LineRead::TooLong
    } else if read == 0 {
        LineRead::End
    } else {
        LineRead::Line
    })
}

/// The lines of a text input read so far, and the last of them if the
/// input ends inside it (no newline after it: the input may have been cut
/// there, which a warning tells).
#[derive(Default)]
pub struct LineCount {
    read: u64,
    unterminated: Option<u64>,
}

impl LineCount {
    /// Lines read.
    pub fn read(&self) -> u64 {
        self.read
    }

    /// The last line, if the input ends inside it.
    pub fn unterminated(&self) -> Option<u64> {
        self.unterminated
    }

    /// Counts `line`, just read, with its newline if it had one.
    pub fn count(&mut self, line: &[u8]) {
        self.read += 1;
        if line.last() != Some(&b'\n') {
            self.unterminated = Some(self.read);
        }
    }
}

/// Reads the next line of a trace and hands it to `parse`, newline
/// included, with its location, where it lies in the input's buffer: only
/// a line that straddles the end of the buffer is copied, into `buf`. The
/// line is counted in `lines`; `None` at the end of the input. A line
/// longer than [`MAX_LINE`] is refused with `too_long(what)`.
pub fn parse_line<T>(
    input: &mut impl BufRead,
    buf: &mut Vec<u8>,
    lines: &mut LineCount,
    what: &str,
    parse: impl FnOnce(&[u8], Location) -> Result<T, TraceError>,
) -> Result<Option<T>, TraceError> {
    let at = Location::Line(lines.read() + 1);
    let available = input.fill_buf().map_err(|err| TraceError::io(at, err))?;
    if let Some(end) = memchr::memchr(b'\n', available) {
        let line = &available[..=end];
        lines.count(line);
        let parsed = parse(line, at);
        input.consume(end + 1);
        return parsed.map(Some);
    }
    match read_line(input, buf).map_err(|err| TraceError::io(at, err))? {
        LineRead::End => Ok(None),
        LineRead::Line => {
            lines.count(buf);
            parse(buf, at).map(Some)
        }
        LineRead::TooLong => Err(TraceError::syntax(at, too_long(what))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_read_takes_up_to_the_bound_and_refuses_more() {
        assert_eq!(
            read_bounded(&b"four"[..], 4).unwrap(),
            Some(b"four".to_vec())
        );
        assert_eq!(read_bounded(&b"five!"[..], 4).unwrap(), None);
        assert_eq!(read_bounded(io::repeat(b'x'), 1 << 10).unwrap(), None);
    }

    #[test]
    fn a_line_past_the_bound_is_refused_without_reading_the_rest() {
        let mut input = io::repeat(b'x');
        let mut buf = Vec::new();
        assert_eq!(
            read_line(&mut io::BufReader::new(&mut input), &mut buf).unwrap(),
            LineRead::TooLong
        );
        assert_eq!(buf.len(), MAX_LINE + 1);
        let mut lines = &b"one\ntwo"[..];
        assert_eq!(read_line(&mut lines, &mut buf).unwrap(), LineRead::Line);
        assert_eq!(buf, b"one\n");
        assert_eq!(read_line(&mut lines, &mut buf).unwrap(), LineRead::Line);
        assert_eq!(buf, b"two");
        assert_eq!(read_line(&mut lines, &mut buf).unwrap(), LineRead::End);
    }

    #[test]
    fn lines_are_handed_over_whole_where_they_lie_or_straddle_the_buffer() {
        let text = &b"first line\nb\n\nlast"[..];
        for capacity in [1, 3, 8, 64] {
            let mut input = io::BufReader::with_capacity(capacity, text);
            let (mut buf, mut lines) = (Vec::new(), LineCount::default());
            let mut read = Vec::new();
            while let Some(line) = parse_line(&mut input, &mut buf, &mut lines, "", |line, at| {
                Ok((String::from_utf8(line.to_vec()).unwrap(), at))
            })
            .unwrap()
            {
                read.push(line);
            }
            let lines_at = |n| Location::Line(n);
            assert_eq!(
                read,
                [
                    ("first line\n".to_string(), lines_at(1)),
                    ("b\n".to_string(), lines_at(2)),
                    ("\n".to_string(), lines_at(3)),
                    ("last".to_string(), lines_at(4)),
                ],
                "buffer of {capacity}"
            );
            assert_eq!((lines.read(), lines.unterminated()), (4, Some(4)));
        }
    }
}
