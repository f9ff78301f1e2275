//! Valgrind Lackey's memory traces (`valgrind --tool=lackey
//! --trace-mem=yes`), and the data-only traces in the same form that the
//! CS:APP cache lab ships:
//!
//! ```text
//! I  04001234,3      an instruction of 3 bytes
//!  L 7ff000a78,8     a load of 8 bytes by it
//!  S 7ff000a70,8     a store
//!  M 0421d568,4      a modify (load and store of the same bytes): one Dw
//! ```
//!
//! Addresses are hex without `0x`, sizes decimal. Valgrind's own lines
//! (`==1234== ...`) and anything else that is not a trace line are skipped
//! and counted. Accesses before any instruction are charged to the
//! `(unknown)` instruction. Regular accesses are 1, 2, 4, 8, 16 or 32
//! bytes; dirty-helper accesses (x87 and SSE state saves, pieces of up to
//! 512 bytes) over 64 bytes are clamped to 64, as Callgrind clamps them
//! with 64-byte lines (to its smallest line size) and as `linegrind
//! record` does.

use std::io::BufRead;

use super::error::{Location, TraceError};
use super::hex::{DIGIT, NOT_HEX};
use super::lines::{LineCount, parse_line};
use super::valid::within;
use super::{Access, Event, TraceRead};
use crate::printable::shown;

/// Callgrind's limit for dirty-helper accesses with 64-byte lines: the
/// smallest of its line sizes.
const HELPER_ACCESS_LIMIT: u32 = 64;

/// The size Callgrind would simulate, with 64-byte lines, for an access
/// Lackey reports as `size` bytes.
pub fn clamped(size: u32) -> u32 {
    size.min(HELPER_ACCESS_LIMIT)
}

/// Streams events from a Lackey trace.
pub struct LackeyReader<R> {
    input: R,
    /// A line that straddled the end of the input's buffer.
    buf: Vec<u8>,
    lines: Lines,
}

/// Where the reader is, and what it skipped.
#[derive(Default)]
struct Lines {
    count: LineCount,
    /// Lines that were not trace lines, and the first of them.
    skipped: u64,
    first_skipped: u64,
}

impl<R: BufRead> LackeyReader<R> {
    pub fn new(input: R) -> LackeyReader<R> {
        LackeyReader {
            input,
            buf: Vec::with_capacity(64),
            lines: Lines::default(),
        }
    }

    /// The last line, if the input ends inside it (no newline after it):
    /// the trace may have been cut there; for a warning.
    pub fn unterminated(&self) -> Option<u64> {
        self.lines.count.unterminated()
    }

    /// Lines that were not trace lines so far (Valgrind's messages, blank
    /// lines), with the number of the first; for a warning.
    pub fn skipped(&self) -> Option<(u64, u64)> {
        let lines = &self.lines;
        (lines.skipped > 0).then_some((lines.skipped, lines.first_skipped))
    }
}

/// Whether `line` looks like a Lackey trace line, and which. An
/// instruction's line starts `I`, blanks and a hex digit, and holds a
/// comma: a line of the program's output that starts with `I ` (Lackey
/// writes to the program's standard error by default) is not one, nor is
/// a Dinero IV record in capitals (`I 400 4`), while a malformed address
/// or size is still an error. A data access's leading blank makes its line
/// Lackey's already.
pub fn shape(line: &[u8]) -> Option<char> {
    match line {
        [b'I', b' ', rest @ ..] if address_like(rest.trim_ascii_start()) => Some('I'),
        [b' ', kind @ (b'L' | b'S' | b'M'), b' ', ..] => Some(*kind as char),
        _ => None,
    }
}

/// Whether `text` starts with a hex digit and holds a comma.
fn address_like(text: &[u8]) -> bool {
    text.first().is_some_and(u8::is_ascii_hexdigit) && text.contains(&b',')
}

/// What `line` says, at `at`: an event, or `None` for a line that is not
/// a trace line.
fn parse(line: &[u8], at: Location) -> Result<Option<Event>, TraceError> {
    let line = line.trim_ascii_end();
    let access = match shape(line) {
        Some('I') => None,
        Some('L') => Some(Access::Read),
        Some('S') => Some(Access::Write),
        Some('M') => Some(Access::Modify),
        _ => return Ok(None),
    };
    let (addr, size) = address_and_size(&line[2..], at)?;
    Ok(Some(match access {
        None => Event::Instr { addr, len: size },
        Some(access) => Event::Data {
            access,
            addr,
            size: clamped(size),
        },
    }))
}

impl Lines {
    /// Counts the line just read as skipped.
    fn skip(&mut self) {
        if self.skipped == 0 {
            self.first_skipped = self.count.read();
        }
        self.skipped += 1;
    }

    /// The end of the input: an empty file, or one of lines none of which
    /// is a trace line (every line read was skipped), is not a Lackey trace (read as one by
    /// `--format=lackey`, or told so by Valgrind's messages alone).
    fn end(&self) -> Result<Option<Event>, TraceError> {
        if self.count.read() == 0 {
            return Err(TraceError::syntax(
                Location::Line(1),
                "the file is empty: expected Lackey trace lines",
            ));
        }
        if self.skipped == self.count.read() {
            return Err(TraceError::syntax(
                Location::Line(self.first_skipped),
                format!(
                    "none of the {} lines is a Lackey trace line (`I  ADDR,SIZE`, \
                     ` L ADDR,SIZE`, ` S ...`, ` M ...`)",
                    self.skipped
                ),
            ));
        }
        Ok(None)
    }
}

impl<R: BufRead> TraceRead for LackeyReader<R> {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        loop {
            let read = parse_line(
                &mut self.input,
                &mut self.buf,
                &mut self.lines.count,
                ": not a Lackey trace",
                parse,
            )?;
            match read {
                None => return self.lines.end(),
                Some(Some(event)) => return Ok(Some(event)),
                Some(None) => self.lines.skip(),
            }
        }
    }

    fn location(&self) -> Location {
        Location::Line(self.lines.count.read())
    }

    fn detached_data(&self) -> bool {
        true
    }
}

/// `ADDR,SIZE` after the kind: hex address, decimal size of at least 1,
/// within the address space. One pass over the bytes.
fn address_and_size(text: &[u8], at: Location) -> Result<(u64, u32), TraceError> {
    let bad = |what: &str| {
        TraceError::syntax(
            at,
            format!(
                "{what} in `{}`: expected ADDR,SIZE (hex address, decimal size)",
                shown(text.trim_ascii())
            ),
        )
    };
    let mut bytes = text.iter().copied().skip_while(|&b| b == b' ').peekable();
    let mut addr = 0u64;
    let mut digits = 0;
    loop {
        match bytes.next() {
            Some(b',') => break,
            Some(b) => {
                let nibble = DIGIT[usize::from(b)];
                // Leading zeros add no bits, as in the other text formats.
                if nibble == NOT_HEX || addr >> 60 != 0 {
                    let comma = text.contains(&b',');
                    return Err(bad(if comma { "a bad address" } else { "no comma" }));
                }
                addr = addr << 4 | u64::from(nibble);
                digits += 1;
            }
            None => return Err(bad("no comma")),
        }
    }
    if digits == 0 {
        return Err(bad("a bad address"));
    }
    let mut size = 0u32;
    let mut digits = 0;
    while let Some(b) = bytes.next_if(u8::is_ascii_digit) {
        size = size
            .checked_mul(10)
            .and_then(|size| size.checked_add(u32::from(b - b'0')))
            .ok_or_else(|| bad("a bad size"))?;
        digits += 1;
    }
    if digits == 0 || !bytes.all(|b| b.is_ascii_whitespace()) {
        return Err(bad("a bad size"));
    }
    if size == 0 {
        return Err(bad("size 0"));
    }
    within(addr, u64::from(size)).map_err(|why| bad(&why))?;
    Ok((addr, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Result<Vec<Event>, TraceError> {
        read(text).map(|(events, _)| events)
    }

    /// Lines skipped: how many, and the first.
    type Skipped = Option<(u64, u64)>;

    /// The events of `text`, and the lines skipped.
    fn read(text: &str) -> Result<(Vec<Event>, Skipped), TraceError> {
        let mut reader = LackeyReader::new(text.as_bytes());
        let mut out = Vec::new();
        while let Some(event) = reader.next_event()? {
            out.push(event);
        }
        Ok((out, reader.skipped()))
    }

    #[test]
    fn reads_instructions_and_accesses_and_skips_valgrind_lines() {
        let text = "==123== Lackey, an example Valgrind tool\n\
                    I  04001234,3\n \
                    L 7ff000a78,8\n \
                    S 0000beef,4\n \
                    M 0421d568,2\n\
                    ==123== \n \
                    L 10,512\n";
        let (read, skipped) = read(text).unwrap();
        assert_eq!(
            read,
            [
                Event::Instr {
                    addr: 0x4001234,
                    len: 3
                },
                Event::Data {
                    access: Access::Read,
                    addr: 0x7ff000a78,
                    size: 8
                },
                Event::Data {
                    access: Access::Write,
                    addr: 0xbeef,
                    size: 4
                },
                Event::Data {
                    access: Access::Modify,
                    addr: 0x421d568,
                    size: 2
                },
                // A state save: clamped as Callgrind clamps it.
                Event::Data {
                    access: Access::Read,
                    addr: 0x10,
                    size: 64
                },
            ]
        );
        assert_eq!(skipped, Some((2, 1)));
    }

    #[test]
    fn program_output_that_starts_with_an_i_is_skipped() {
        let text = "I am the program's output\nI  40,3\nI 41,1\n";
        let (read, skipped) = read(text).unwrap();
        assert_eq!(
            read,
            [
                Event::Instr { addr: 0x40, len: 3 },
                Event::Instr { addr: 0x41, len: 1 }
            ]
        );
        assert_eq!(skipped, Some((1, 1)));
        assert_eq!(shape(b"I 400 4"), None);
    }

    #[test]
    fn leading_zeros_add_no_bits() {
        let events = events("I  00000000000401000,3\n").unwrap();
        assert_eq!(
            events,
            [Event::Instr {
                addr: 0x401000,
                len: 3
            }]
        );
    }

    #[test]
    fn malformed_trace_lines_are_errors_with_their_line() {
        let error = |text: &str| events(text).unwrap_err().to_string();
        assert!(error("I  40,3\n L zz,4\n").starts_with("line 2: a bad address"));
        assert!(error("I  40,3\n M 40,4x\n").starts_with("line 2: a bad size"));
        assert!(error("I  40,3\nI  40zz,3\n").starts_with("line 2: a bad address"));
        assert!(error(" S 40;4\n").contains("no comma"));
        assert!(error(" S 40,x\n").contains("a bad size"));
        assert!(error("I  40,0\n").contains("size 0"));
        assert!(error(" L ffffffffffffffff,8\n").contains("past the end"));
        assert!(error(" L 10000000000000000,8\n").starts_with("line 1: a bad address"));
        // No trace line at all: not a Lackey trace.
        assert_eq!(
            error("==12== Lackey\nlinegrind-trace text 1\n"),
            "line 1: none of the 2 lines is a Lackey trace line (`I  ADDR,SIZE`, \
             ` L ADDR,SIZE`, ` S ...`, ` M ...`)"
        );
        assert_eq!(
            error(""),
            "line 1: the file is empty: expected Lackey trace lines"
        );
    }

    #[test]
    fn only_oversized_accesses_are_clamped() {
        for regular in [1, 2, 4, 8, 10, 16, 28, 32, 64] {
            assert_eq!(clamped(regular), regular);
        }
        for helper in [65, 108, 160, 512] {
            assert_eq!(clamped(helper), 64);
        }
    }
}
