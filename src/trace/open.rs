//! Opening a trace file in whichever format it is, told by its content or
//! forced.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::str::FromStr;

use super::binary::{BinaryReader, MAGIC, is_binary};
use super::call_inference::CallInference;
use super::code_objects::CodeObjects;
use super::din::{self, DinForm, DinReader};
use super::lackey::{self, LackeyReader};
use super::{Event, Feed, Location, TextReader, TraceError, TraceItem, TraceRead};
use crate::byte_order_mark::without_bom;

/// The formats linegrind reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `linegrind-trace text 1`.
    Text,
    /// What `record` writes.
    Binary,
    /// Valgrind Lackey's `--trace-mem=yes` output.
    Lackey,
    /// Dinero's traditional `LABEL ADDRESS`.
    Din,
    /// Dinero IV's extended `TYPE ADDRESS SIZE`.
    ExtendedDin,
}

impl Format {
    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Binary => "binary",
            Format::Lackey => "lackey",
            Format::Din => "din",
            Format::ExtendedDin => "xdin",
        }
    }

    /// What the format is, for people.
    pub fn describe(self) -> &'static str {
        match self {
            Format::Text => "text, version 1",
            Format::Binary => "binary, version 1",
            Format::Lackey => "Valgrind Lackey",
            Format::Din => "Dinero din (LABEL ADDRESS)",
            Format::ExtendedDin => "Dinero extended din (TYPE ADDRESS SIZE)",
        }
    }

    /// Whether the format is another tool's, imported.
    pub fn is_imported(self) -> bool {
        !matches!(self, Format::Text | Format::Binary)
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(text: &str) -> Result<Format, String> {
        [
            Format::Text,
            Format::Binary,
            Format::Lackey,
            Format::Din,
            Format::ExtendedDin,
        ]
        .into_iter()
        .find(|format| format.name() == text)
        .ok_or_else(|| format!("expected text, binary, lackey, din or xdin, found `{text}`"))
    }
}

/// Tells the format from the first bytes of a file: the binary magic, the
/// text header, or the shape of the first trace lines. Comments, blank lines
/// and Valgrind's `==PID==` messages are passed over, and after such a
/// message every line but a Lackey trace line (the program's output).
pub fn detect(start: &[u8]) -> Format {
    Detection::default()
        .decide(start, true)
        .unwrap_or(Format::Text)
}

/// The imported format one of the first lines of `start` shows by its
/// shape (a Lackey or Dinero trace line), if one does: not one told only
/// by Valgrind's messages, as a Callgrind log or a diff opens (`==1==`,
/// `---`), nor a binary or text linegrind trace.
pub fn imported_format(start: &[u8]) -> Option<Format> {
    let mut detection = Detection::default();
    without_bom(start)
        .split_inclusive(|&b| b == b'\n')
        .find_map(|line| detection.line(line))
        .filter(|format| format.is_imported())
}

/// How far the lines of a start that grows as a pipe gives it were looked
/// at: each line is looked at once, however small the pieces it comes in.
#[derive(Default)]
struct Detection {
    /// Bytes of the start looked at: whole lines that decided nothing.
    scanned: usize,
    /// Lines among them other than blank lines and comments.
    seen: usize,
    /// Whether one of them was a Valgrind message.
    valgrind: bool,
}

impl Detection {
    /// The format `start` shows, given that it begins with the start given
    /// before. Unless it is `whole` (all there is, or all that is looked
    /// at), only its complete lines count, and `None` says that they decide
    /// nothing yet: a pipe may give the first line in pieces.
    fn decide(&mut self, start: &[u8], whole: bool) -> Option<Format> {
        if is_binary(start) {
            // A start that could still grow into the magic waits for more.
            return (whole || start.len() >= MAGIC.len()).then_some(Format::Binary);
        }
        let end = match whole {
            true => start.len(),
            false => start
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |at| at + 1),
        };
        let lines = start[self.scanned..end].split_inclusive(|&b| b == b'\n');
        self.scanned = end;
        for line in lines {
            if let Some(format) = self.line(line) {
                return Some(format);
            }
        }
        if !whole && self.seen < DETECT_LINES {
            return None;
        }
        Some(if self.valgrind {
            Format::Lackey
        } else {
            Format::Text
        })
    }

    /// What one whole line decides, once it is looked at.
    fn line(&mut self, line: &[u8]) -> Option<Format> {
        let line = line.trim_ascii_end();
        let content = line.trim_ascii_start();
        if content.is_empty() || content.starts_with(b"#") || self.seen == DETECT_LINES {
            return None;
        }
        self.seen += 1;
        if content.starts_with(b"linegrind-trace") {
            return Some(Format::Text);
        }
        if lackey::shape(line).is_some() {
            return Some(Format::Lackey);
        }
        if content.starts_with(b"==") || content.starts_with(b"--") {
            self.valgrind = true;
            return None;
        }
        if self.valgrind {
            // The program's output, written into Lackey's log.
            return None;
        }
        Some(match din::form_of(content) {
            Some(DinForm::Traditional) => Format::Din,
            Some(DinForm::Extended) => Format::ExtendedDin,
            None => Format::Text,
        })
    }
}

/// Lines other than blank lines and comments looked at to tell a format:
/// Valgrind's messages before a Lackey trace's first line are a few dozen.
const DETECT_LINES: usize = 1000;

/// Bytes read at most to tell a format.
const DETECT_BYTES: usize = 1 << 20;

/// Reads the start of `file` into `head` until `enough` makes something of
/// it; `enough` is told whether the start is whole (the file ended, or
/// `DETECT_BYTES` were read), and must then answer.
fn read_start<T>(
    input: &mut impl Read,
    head: &mut Vec<u8>,
    mut enough: impl FnMut(&[u8], bool) -> Option<T>,
) -> io::Result<T> {
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let read = match input.read(&mut chunk) {
            Ok(read) => read,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        head.extend_from_slice(&chunk[..read]);
        let whole = read == 0 || head.len() >= DETECT_BYTES;
        if let Some(found) = enough(head, whole) {
            return Ok(found);
        }
        debug_assert!(!whole, "a whole start must be answered");
    }
}

/// A file whose first bytes were read to tell its format, read from its
/// start again: a pipe cannot be rewound.
pub struct Peeked {
    head: Vec<u8>,
    at: usize,
    file: File,
}

impl Read for Peeked {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = &self.head[self.at..];
        if left.is_empty() {
            return self.file.read(buf);
        }
        let len = left.len().min(buf.len());
        buf[..len].copy_from_slice(&left[..len]);
        self.at += len;
        Ok(len)
    }
}

/// How to open a trace.
#[derive(Default)]
pub struct ReadOptions {
    /// Read a binary trace without its end, as far as it goes.
    pub allow_truncated: bool,
    /// The format, instead of telling it from the content.
    pub format: Option<Format>,
    /// The program's binaries, to infer calls in Lackey and Dinero traces.
    pub code: Option<CodeObjects>,
}

/// A trace being read, in its format.
pub enum AnyReader {
    Text(TextReader<BufReader<Peeked>>),
    Binary(Box<BinaryReader<BufReader<File>>>),
    Lackey(CallInference<LackeyReader<BufReader<Peeked>>>),
    Din(CallInference<DinReader<BufReader<Peeked>>>, DinForm),
}

impl AnyReader {
    /// Reads `file` in the format its content shows. A binary trace without
    /// its end is an error unless `allow_truncated`.
    pub fn new(file: File, allow_truncated: bool) -> Result<AnyReader, TraceError> {
        AnyReader::open(
            file,
            ReadOptions {
                allow_truncated,
                ..ReadOptions::default()
            },
        )
    }

    /// Reads `file` as `options` say.
    pub fn open(mut file: File, options: ReadOptions) -> Result<AnyReader, TraceError> {
        let io = |err| TraceError::io(Location::Offset(0), err);
        let mut head = Vec::new();
        let format = match options.format {
            Some(Format::Binary) => Ok(Format::Binary),
            // Only as far as a byte-order mark, or the binary magic, goes.
            Some(format) => read_start(&mut file, &mut head, |start, whole| {
                (whole || start.len() >= MAGIC.len()).then_some(format)
            }),
            None => {
                let mut detection = Detection::default();
                read_start(&mut file, &mut head, |start, whole| {
                    detection.decide(without_bom(start), whole)
                })
            }
        }
        .map_err(io)?;
        if format != Format::Binary && head.starts_with(MAGIC) {
            return Err(TraceError::syntax(
                Location::Offset(0),
                format!(
                    "a binary linegrind trace, not --format {}: leave the option out",
                    format.name()
                ),
            ));
        }
        if format == Format::Binary {
            // The binary reader reads from the start again, and from the
            // end: it needs a file, and tells a pipe so.
            let reader = BinaryReader::new(BufReader::new(file), options.allow_truncated)?;
            return Ok(AnyReader::Binary(Box::new(reader)));
        }
        // An editor's byte-order mark is passed over (the text reader
        // passes over its own).
        let at = match format.is_imported() {
            true => head.len() - without_bom(&head).len(),
            false => 0,
        };
        // The other formats stream from the start read, so they can come
        // from a pipe.
        let input = BufReader::with_capacity(1 << 20, Peeked { head, at, file });
        Ok(match format {
            Format::Text | Format::Binary => AnyReader::Text(TextReader::new(input)),
            Format::Lackey => {
                AnyReader::Lackey(CallInference::new(LackeyReader::new(input), options.code))
            }
            Format::Din | Format::ExtendedDin => {
                let form = match format {
                    Format::Din => DinForm::Traditional,
                    _ => DinForm::Extended,
                };
                AnyReader::Din(
                    CallInference::new(DinReader::new(input, form), options.code),
                    form,
                )
            }
        })
    }

    /// The command line the trace was recorded from, where it says (a
    /// binary trace's `cmd`).
    pub fn command(&self) -> Option<&str> {
        match self {
            AnyReader::Binary(reader) => reader
                .meta()
                .iter()
                .find(|(key, _)| key == "cmd")
                .map(|(_, value)| value.as_str()),
            _ => None,
        }
    }

    /// The recorded program's exit code, where the trace says (a complete
    /// binary trace of a program that exited).
    pub fn exit_code(&self) -> Option<u8> {
        match self {
            AnyReader::Binary(reader) => reader.summary().and_then(|summary| summary.exit_code),
            _ => None,
        }
    }

    /// Which format the trace is in.
    pub fn format(&self) -> Format {
        match self {
            AnyReader::Text(_) => Format::Text,
            AnyReader::Binary(_) => Format::Binary,
            AnyReader::Lackey(_) => Format::Lackey,
            AnyReader::Din(_, DinForm::Traditional) => Format::Din,
            AnyReader::Din(_, DinForm::Extended) => Format::ExtendedDin,
        }
    }

    /// The instructions and data accesses the trace holds, when it says so
    /// up front (a complete binary trace).
    pub fn events(&self) -> Option<u64> {
        match self {
            AnyReader::Binary(reader) => reader
                .summary()
                .map(|summary| summary.instructions.saturating_add(summary.accesses)),
            _ => None,
        }
    }

    /// Why reading stopped before the end of a truncated binary trace.
    pub fn truncated(&self) -> Option<&str> {
        match self {
            AnyReader::Binary(reader) => reader.truncated(),
            _ => None,
        }
    }

    /// What to warn the reader of `name` about once it has read the trace
    /// through: a truncated binary trace, skipped lines, an unterminated
    /// last line.
    pub fn warnings(&self, name: &str) -> Vec<String> {
        let truncated = self
            .truncated()
            .map(|why| format!("{name} is truncated: {why}"));
        let noted = [self.skipped(), self.unterminated()];
        let noted = noted
            .into_iter()
            .flatten()
            .map(|what| format!("{name}: {what}"));
        truncated.into_iter().chain(noted).collect()
    }

    /// The last line of a text-based trace, if the input ends inside it
    /// (no newline after it), to warn about: the trace may have been cut
    /// there, and that line's numbers with it.
    pub fn unterminated(&self) -> Option<String> {
        let line = match self {
            AnyReader::Text(reader) => reader.unterminated(),
            AnyReader::Binary(_) => None,
            AnyReader::Lackey(reader) => reader.inner().unterminated(),
            AnyReader::Din(reader, _) => reader.inner().unterminated(),
        }?;
        Some(format!(
            "line {line}, the last, has no newline after it: if the trace was cut short \
             there, the line may be cut too"
        ))
    }

    /// What the reader passed over, to warn about: lines of a Lackey trace
    /// that were not trace lines.
    pub fn skipped(&self) -> Option<String> {
        let AnyReader::Lackey(reader) = self else {
            return None;
        };
        let (lines, first) = reader.inner().skipped()?;
        Some(match lines {
            1 => format!(
                "a line that is not a Lackey trace line (one of Valgrind's messages or the \
                 like) was skipped: line {first}"
            ),
            _ => format!(
                "{lines} lines that are not Lackey trace lines (Valgrind's messages and the \
                 like) were skipped, the first at line {first}"
            ),
        })
    }
}

impl TraceRead for AnyReader {
    #[inline]
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        match self {
            AnyReader::Text(reader) => reader.next_event(),
            AnyReader::Binary(reader) => reader.next_event(),
            AnyReader::Lackey(reader) => reader.next_event(),
            AnyReader::Din(reader, _) => reader.next_event(),
        }
    }

    #[inline]
    fn next_item(&mut self) -> Result<Option<TraceItem<'_>>, TraceError> {
        match self {
            AnyReader::Text(reader) => reader.next_item(),
            AnyReader::Binary(reader) => reader.next_item(),
            AnyReader::Lackey(reader) => reader.next_item(),
            AnyReader::Din(reader, _) => reader.next_item(),
        }
    }

    #[inline]
    fn fill(&mut self, feed: &mut Feed) -> Result<bool, TraceError> {
        match self {
            AnyReader::Text(reader) => reader.fill(feed),
            AnyReader::Binary(reader) => reader.fill(feed),
            AnyReader::Lackey(reader) => reader.fill(feed),
            AnyReader::Din(reader, _) => reader.fill(feed),
        }
    }

    fn location(&self) -> Location {
        match self {
            AnyReader::Text(reader) => reader.location(),
            AnyReader::Binary(reader) => reader.location(),
            AnyReader::Lackey(reader) => reader.location(),
            AnyReader::Din(reader, _) => reader.location(),
        }
    }

    fn detached_data(&self) -> bool {
        matches!(self, AnyReader::Lackey(_) | AnyReader::Din(..))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_by_their_content() {
        assert_eq!(
            detect(b"# c\n\nlinegrind-trace text 1\ni 1 1\n"),
            Format::Text
        );
        assert_eq!(
            detect(b"==12== Lackey\n==12== \nI  0400,3\n"),
            Format::Lackey
        );
        assert_eq!(detect(b" L 10,1\n M 20,1\n"), Format::Lackey);
        assert_eq!(detect(b"==12== only messages\n"), Format::Lackey);
        assert_eq!(detect(b"2 0\n0 1000\n"), Format::Din);
        assert_eq!(detect(b"i 400 4\nr 7ff0 8\n"), Format::ExtendedDin);
        assert_eq!(detect(b"I 400 4\nR 7ff0 8\n"), Format::ExtendedDin);
        assert_eq!(
            detect(b"==1== Lackey\nI am the program\nI  400,4\n"),
            Format::Lackey
        );
        assert_eq!(detect(b"something else\n"), Format::Text);
        assert_eq!(detect(b"LGTRACE\0\x01\0\0\0"), Format::Binary);
        // A binary trace cut within its magic.
        assert_eq!(detect(b"LGTR"), Format::Binary);
        assert_eq!(detect(b"LGTRAC"), Format::Binary);
        assert_eq!("xdin".parse::<Format>(), Ok(Format::ExtendedDin));
        assert!("csv".parse::<Format>().is_err());
    }

    /// What a start decides looked at in one piece.
    fn decide(start: &[u8], whole: bool) -> Option<Format> {
        Detection::default().decide(start, whole)
    }

    /// Decides a start as a pipe gives it, piece by piece.
    fn pieces() -> impl FnMut(&[u8], bool) -> Option<Format> {
        let mut detection = Detection::default();
        move |start, whole| detection.decide(start, whole)
    }

    /// A start given in pieces decides at each piece what it decides
    /// looked at whole, and each line is looked at once.
    #[test]
    fn a_start_in_pieces_decides_as_a_whole_one() {
        let comments = b"# a comment\n\n".repeat(10);
        let messages = b"==1== a message\n".repeat(DETECT_LINES - 1);
        for start in [
            [&comments[..], b"==1== Lackey\nI  0400,3\n"].concat(),
            [&comments[..], b"2 400\n0 7ff0\n"].concat(),
            [&comments[..], b"linegrind-trace text 1\n"].concat(),
            [&messages[..], b"output\nmore output\n"].concat(),
            [&b"LGTRACE\0"[..], &comments[..]].concat(),
        ] {
            for piece in [1, 5, 12, 64] {
                let mut detection = Detection::default();
                let mut read = 0;
                loop {
                    read = (read + piece).min(start.len());
                    let whole = read == start.len();
                    let found = detection.decide(&start[..read], whole);
                    assert_eq!(found, decide(&start[..read], whole), "{piece} at {read}");
                    if found.is_some() {
                        break;
                    }
                }
                let lines_end = start[..read].iter().rposition(|&b| b == b'\n');
                if !is_binary(&start) {
                    assert_eq!(detection.scanned, lines_end.map_or(0, |at| at + 1));
                }
            }
        }
    }

    /// Until the start read so far is all there is, only whole lines
    /// decide: a pipe may give the first line in pieces.
    #[test]
    fn a_start_in_pieces_waits_for_a_whole_line() {
        for start in [
            &b""[..],
            b"LGTR",
            b"2",
            b"2 400",
            b"I",
            b"==12== Lackey\nI  04",
        ] {
            assert_eq!(decide(start, false), None, "{start:?}");
        }
        assert_eq!(decide(b"2 400\n", false), Some(Format::Din));
        assert_eq!(decide(b"==12== Lackey\nI  04", true), Some(Format::Lackey));
        assert_eq!(decide(b"LGTRACE\0", false), Some(Format::Binary));
        // Enough lines that decide nothing are text, whatever follows.
        let messages = b"==1== a message\n".repeat(DETECT_LINES);
        assert_eq!(decide(&messages, false), Some(Format::Lackey));
        assert_eq!(decide(&messages[16..], false), None);
        let output = [&b"==1== Lackey\n"[..], &b"output\n".repeat(DETECT_LINES)].concat();
        assert_eq!(decide(&output, false), Some(Format::Lackey));
        // Blank lines and comments, which every format takes, count only
        // against the bytes read.
        let blank = [&b"\n# a comment\n".repeat(DETECT_LINES)[..], b"2 400\n"].concat();
        assert_eq!(decide(&blank, false), Some(Format::Din));
        assert_eq!(decide(&blank[..blank.len() - 6], false), None);
    }

    /// A pipe that gives a byte at a time is read until a whole line tells
    /// the format, and what was read is read again from the start.
    #[test]
    fn a_start_given_a_byte_at_a_time_is_read_to_a_whole_line() {
        struct ByteAtATime<'a>(&'a [u8]);
        impl Read for ByteAtATime<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let Some((&first, rest)) = self.0.split_first() else {
                    return Ok(0);
                };
                buf[0] = first;
                self.0 = rest;
                Ok(1)
            }
        }
        let trace = b"2 400\n0 7ff0\n";
        let mut head = Vec::new();
        let mut input = ByteAtATime(trace);
        let format = read_start(&mut input, &mut head, pieces()).unwrap();
        assert_eq!((format, &head[..]), (Format::Din, &trace[..6]));
        // At the end of a start that says nothing, the whole decides.
        let mut head = Vec::new();
        let format = read_start(&mut ByteAtATime(b"# c"), &mut head, pieces()).unwrap();
        assert_eq!((format, &head[..]), (Format::Text, &b"# c"[..]));
    }

    #[test]
    fn a_byte_order_mark_before_an_imported_trace_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let read_as = |content: &[u8], format: Option<Format>| {
            let path = dir.path().join("trace");
            std::fs::write(&path, content).unwrap();
            let options = ReadOptions {
                format,
                ..ReadOptions::default()
            };
            let mut reader = AnyReader::open(File::open(&path).unwrap(), options).unwrap();
            let events: Vec<Event> = std::iter::from_fn(|| reader.next_event().unwrap()).collect();
            (reader.format(), events, reader.skipped())
        };
        let read = |content: &[u8]| read_as(content, None);
        for (content, format) in [
            (
                &b"==12== Lackey\nI  0400,3\n L 7ff0,8\n"[..],
                Format::Lackey,
            ),
            (b"I  0400,3\n L 7ff0,8\n", Format::Lackey),
            (b"2 400\n0 7ff0\n", Format::Din),
            (b"i 400 3\nr 7ff0 8\n", Format::ExtendedDin),
        ] {
            let marked = read(&[&b"\xef\xbb\xbf"[..], content].concat());
            assert_eq!(marked.0, format);
            assert_eq!(marked.1.len(), 2, "{format:?}: {:?}", marked.1);
            assert_eq!(marked, read(content), "{format:?}");
            // With the format given, as well.
            let forced = read_as(&[&b"\xef\xbb\xbf"[..], content].concat(), Some(format));
            assert_eq!(forced, marked, "{format:?} given");
        }
    }

    #[test]
    fn a_binary_trace_read_as_another_format_says_what_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace");
        std::fs::write(&path, b"LGTRACE\0\x01\0\0\0").unwrap();
        for format in [
            Format::Text,
            Format::Lackey,
            Format::Din,
            Format::ExtendedDin,
        ] {
            let options = ReadOptions {
                format: Some(format),
                ..ReadOptions::default()
            };
            let Err(err) = AnyReader::open(File::open(&path).unwrap(), options) else {
                panic!("{format:?}: read");
            };
            assert_eq!(
                err.to_string(),
                format!(
                    "byte offset 0: a binary linegrind trace, not --format {}: leave the option out",
                    format.name()
                )
            );
        }
    }
}
