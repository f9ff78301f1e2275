//! The text trace format, version 1 (see `docs/text-format.md`).
//!
//! Line-oriented: `#` starts a comment, blank lines are ignored, tokens are
//! separated by blanks, addresses are hex with an optional `0x`, sizes and
//! ids are decimal. The first non-comment line is `linegrind-trace text 1`.
//! Lines are read one at a time into a reused buffer.

use std::io::BufRead;

use super::error::{CR_LINES, Location, TraceError};
use super::hex::{hex_digit, parse_hex};
use super::lines::{LineCount, parse_line};
use super::{Access, Event, FunctionSymbol, LineSymbol, MarkEdge, ModuleMapping, TraceRead};
use crate::byte_order_mark::without_bom;
use crate::printable::shown;

const HEADER: [&[u8]; 3] = [b"linegrind-trace", b"text", b"1"];

const DIRECTIVES: &str = "fn, line, plt, object, thread, thread-exit, sp, i, r, w, m, call, ret, \
                          signal, sigreturn, mark, alloc, free, flush, restart";

/// Streams events from a text trace.
pub struct TextReader<R> {
    input: R,
    lines: LineCount,
    buf: Vec<u8>,
    header_seen: bool,
}

impl<R: BufRead> TextReader<R> {
    /// A reader positioned before the header.
    pub fn new(input: R) -> TextReader<R> {
        TextReader {
            input,
            lines: LineCount::default(),
            buf: Vec::with_capacity(128),
            header_seen: false,
        }
    }

    /// The last line, if the input ends inside it (no newline after it):
    /// the trace may have been cut there; for a warning.
    pub fn unterminated(&self) -> Option<u64> {
        self.lines.unterminated()
    }
}

impl<R: BufRead> TraceRead for TextReader<R> {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        loop {
            let header_seen = &mut self.header_seen;
            let read = parse_line(
                &mut self.input,
                &mut self.buf,
                &mut self.lines,
                " (is this a binary file?)",
                |line, at| {
                    // A byte-order mark, as some editors save text, is not
                    // part of the first line.
                    let line = match at {
                        Location::Line(1) => without_bom(line),
                        _ => line,
                    };
                    let content = without_comment(line);
                    let comment = &line[content.len()..];
                    // A line or a comment that ran on over lines that end
                    // in `\r` alone would hide them.
                    if (*header_seen && inner_cr(line).is_some())
                        || (!comment.is_empty() && inner_cr(comment).is_some())
                        || (!*header_seen && ends_lines_in_cr(line))
                    {
                        return Err(TraceError::syntax(at, CR_LINES));
                    }
                    let mut tokens = Tokens::new(content, at);
                    let Some(first) = tokens.next() else {
                        return Ok(None);
                    };
                    if *header_seen {
                        return directive(first, &mut tokens).map(Some);
                    }
                    check_header(content, first, &mut tokens)?;
                    *header_seen = true;
                    Ok(None)
                },
            )?;
            match read {
                Some(Some(event)) => return Ok(Some(event)),
                Some(None) => {}
                None if self.header_seen => return Ok(None),
                None => {
                    let (line, what) = match self.lines.read() {
                        0 => (1, "the trace is empty"),
                        last => (last, "the trace has only blank lines and comments"),
                    };
                    return Err(TraceError::syntax(
                        Location::Line(line),
                        format!("{what}: expected the header `linegrind-trace text 1`"),
                    ));
                }
            }
        }
    }

    fn location(&self) -> Location {
        Location::Line(self.lines.read())
    }
}

/// Where `text`, the end of a line, holds its first carriage return before
/// those that end it.
fn inner_cr(text: &[u8]) -> Option<usize> {
    let end = text
        .iter()
        .rposition(|b| !matches!(b, b'\r' | b'\n'))
        .map_or(0, |last| last + 1);
    text[..end].iter().position(|&b| b == b'\r')
}

/// Whether `line`, read before the header, is lines of old Mac OS text
/// read as one: a carriage return inside it (not among those that end it)
/// after a first part that is blank, a comment or the header. (After
/// anything else, the usual error says what the file is not.)
fn ends_lines_in_cr(line: &[u8]) -> bool {
    let Some(cr) = inner_cr(line) else {
        return false;
    };
    let first = without_comment(&line[..cr]);
    let tokens: Vec<&[u8]> = Tokens::new(first, Location::Line(1)).collect();
    tokens.is_empty() || tokens == HEADER
}

/// `line` up to its comment, if it has one.
fn without_comment(line: &[u8]) -> &[u8] {
    line.iter()
        .position(|&b| b == b'#')
        .map_or(line, |hash| &line[..hash])
}

/// Checks that the first line, `content` without its comment, whose first
/// token is `first`, is the header.
fn check_header(content: &[u8], first: &[u8], tokens: &mut Tokens) -> Result<(), TraceError> {
    let rest: Vec<&[u8]> = tokens.by_ref().collect();
    let found = std::iter::once(first).chain(rest.iter().copied());
    let found: Vec<&[u8]> = found.collect();
    if found == HEADER {
        return Ok(());
    }
    if found.len() == 3 && found[..2] == HEADER[..2] {
        return Err(tokens.error(format!(
            "unsupported text trace version {}; this linegrind reads version 1",
            shown(found[2])
        )));
    }
    if first.starts_with(b"\x7fELF") {
        return Err(tokens.error(
            "an ELF file, not a trace: `linegrind record -- PROGRAM` records a program's trace"
                .to_string(),
        ));
    }
    Err(tokens.error(format!(
        "expected the header `linegrind-trace text 1` as the first line, found `{}` \
         (linegrind reads text, binary, Lackey and Dinero traces: --format chooses)",
        shown(content.trim_ascii())
    )))
}

fn directive(name: &[u8], tokens: &mut Tokens) -> Result<Event, TraceError> {
    let event = match name {
        b"i" => {
            tokens.usage = "i ADDR LEN";
            let addr = tokens.hex("ADDR")?;
            let len = tokens.size("LEN")?;
            Event::Instr { addr, len }
        }
        b"r" | b"w" | b"m" => {
            tokens.usage = "r|w|m ADDR SIZE";
            let access = match name {
                b"r" => Access::Read,
                b"w" => Access::Write,
                _ => Access::Modify,
            };
            let addr = tokens.hex("ADDR")?;
            let size = tokens.size("SIZE")?;
            Event::Data { access, addr, size }
        }
        b"call" => {
            tokens.usage = "call TARGET";
            Event::Call {
                target: tokens.hex("TARGET")?,
            }
        }
        b"ret" => {
            tokens.usage = "ret";
            Event::Return
        }
        b"sp" => {
            tokens.usage = "sp ADDR";
            Event::StackPointer {
                sp: tokens.hex("ADDR")?,
            }
        }
        b"thread" => {
            tokens.usage = "thread TID";
            Event::Thread {
                tid: tokens.decimal("TID")?,
            }
        }
        b"thread-exit" => {
            tokens.usage = "thread-exit TID";
            Event::ThreadExit {
                tid: tokens.decimal("TID")?,
            }
        }
        b"signal" => {
            tokens.usage = "signal SIGNO";
            Event::Signal {
                signo: tokens.decimal("SIGNO")?,
            }
        }
        b"sigreturn" => {
            tokens.usage = "sigreturn";
            Event::SigReturn
        }
        b"mark" => {
            tokens.usage = "mark begin|end NAME";
            let edge = match tokens.expect("begin|end")? {
                b"begin" => MarkEdge::Begin,
                b"end" => MarkEdge::End,
                other => {
                    let other = shown(other);
                    return Err(tokens.error(format!(
                        "expected `begin` or `end` in `mark begin|end NAME`, found `{other}`"
                    )));
                }
            };
            Event::Mark {
                edge,
                name: tokens.text("NAME")?,
            }
        }
        b"alloc" => {
            tokens.usage = "alloc ADDR SIZE";
            let addr = tokens.hex("ADDR")?;
            let size = tokens.decimal("SIZE")?;
            Event::Alloc { addr, size }
        }
        b"flush" => {
            tokens.usage = "flush";
            Event::Flush
        }
        b"restart" => {
            tokens.usage = "restart";
            Event::Restart
        }
        b"free" => {
            tokens.usage = "free ADDR";
            Event::Free {
                addr: tokens.hex("ADDR")?,
            }
        }
        b"fn" => {
            tokens.usage = "fn START END NAME [FILE [LINE]]";
            let start = tokens.hex("START")?;
            let end = tokens.hex("END")?;
            let name = tokens.text("NAME")?;
            let file = tokens.optional_text("FILE")?;
            let line = match file {
                Some(_) => tokens.optional_decimal("LINE")?.unwrap_or(0),
                None => 0,
            };
            Event::Function(Box::new(FunctionSymbol {
                start,
                end,
                name,
                file,
                line,
            }))
        }
        b"line" => {
            tokens.usage = "line ADDR LINE [FILE]";
            let addr = tokens.hex("ADDR")?;
            let line = tokens.decimal("LINE")?;
            let file = tokens.optional_text("FILE")?;
            Event::Line(Box::new(LineSymbol { addr, line, file }))
        }
        b"plt" => {
            tokens.usage = "plt START END";
            let start = tokens.hex("START")?;
            let end = tokens.hex("END")?;
            Event::Plt { start, end }
        }
        b"object" => {
            tokens.usage =
                "object PATH [bias=HEX] [start=HEX end=HEX] [build-id=HEX] [symbols=embedded]";
            object(tokens)?
        }
        other => {
            let other = shown(other);
            return Err(tokens.error(format!(
                "unknown directive `{other}`; expected one of {DIRECTIVES}"
            )));
        }
    };
    if let Some(extra) = tokens.next() {
        let extra = shown(extra);
        return Err(tokens.error(format!(
            "unexpected `{extra}` at the end of `{}`",
            tokens.usage
        )));
    }
    event.check().map_err(|why| tokens.error(why))?;
    Ok(event)
}

/// `object PATH [bias=HEX] [start=HEX end=HEX] [build-id=HEX]
/// [symbols=embedded]`.
fn object(tokens: &mut Tokens) -> Result<Event, TraceError> {
    let path = tokens.text("PATH")?;
    let mut mapping = ModuleMapping {
        path,
        bias: 0,
        range: None,
        build_id: None,
        embedded: false,
    };
    let (mut start, mut end) = (None, None);
    while let Some(option) = tokens.next() {
        let Some(eq) = option.iter().position(|&b| b == b'=') else {
            let option = shown(option);
            return Err(tokens.error(format!(
                "expected KEY=VALUE after PATH in `{}`, found `{option}`",
                tokens.usage
            )));
        };
        let (key, value) = (&option[..eq], &option[eq + 1..]);
        let number = |what: &str| {
            parse_hex(value).ok_or_else(|| {
                let value = shown(value);
                tokens.error(format!(
                    "bad {what} `{value}` in `{}`: expected hex",
                    tokens.usage
                ))
            })
        };
        match key {
            b"bias" => mapping.bias = number("bias")?,
            b"start" => start = Some(number("start")?),
            b"end" => end = Some(number("end")?),
            b"build-id" => {
                let id = parse_hex_bytes(value).ok_or_else(|| {
                    tokens.error(format!(
                        "bad build-id in `{}`: expected an even number of hex digits",
                        tokens.usage
                    ))
                })?;
                mapping.build_id = Some(id);
            }
            b"symbols" if value == b"embedded" => mapping.embedded = true,
            b"symbols" => {
                return Err(tokens.error(format!(
                    "bad symbols `{}` in `{}`: the only value is `embedded`",
                    shown(value),
                    tokens.usage
                )));
            }
            other => {
                let other = shown(other);
                return Err(tokens.error(format!("unknown option `{other}` in `{}`", tokens.usage)));
            }
        }
    }
    mapping.range = match (start, end) {
        (None, None) => None,
        (Some(start), Some(end)) => Some((start, end)),
        _ => {
            return Err(tokens.error(format!("`{}` needs both start and end", tokens.usage)));
        }
    };
    Ok(Event::Module(Box::new(mapping)))
}

/// The blank-separated tokens of one line, with the directive's usage for
/// error messages.
struct Tokens<'a> {
    rest: &'a [u8],
    at: Location,
    usage: &'static str,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let is_blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
        let start = self.rest.iter().position(|b| !is_blank(b))?;
        let rest = &self.rest[start..];
        let end = rest.iter().position(is_blank).unwrap_or(rest.len());
        self.rest = &rest[end..];
        Some(&rest[..end])
    }
}

impl<'a> Tokens<'a> {
    fn new(line: &'a [u8], at: Location) -> Tokens<'a> {
        Tokens {
            rest: line,
            at,
            usage: "",
        }
    }

    fn error(&self, message: String) -> TraceError {
        TraceError::syntax(self.at, message)
    }

    fn expect(&mut self, what: &str) -> Result<&'a [u8], TraceError> {
        match self.next() {
            Some(token) => Ok(token),
            None => Err(self.error(format!("missing {what} in `{}`", self.usage))),
        }
    }

    fn hex(&mut self, what: &str) -> Result<u64, TraceError> {
        let token = self.expect(what)?;
        parse_hex(token).ok_or_else(|| {
            let token = shown(token);
            self.error(format!(
                "bad {what} `{token}` in `{}`: expected a hex number of at most 64 bits",
                self.usage
            ))
        })
    }

    fn decimal<T: TryFrom<u64>>(&mut self, what: &str) -> Result<T, TraceError> {
        let token = self.expect(what)?;
        self.parse_decimal(token, what)
    }

    fn parse_decimal<T: TryFrom<u64>>(&self, token: &[u8], what: &str) -> Result<T, TraceError> {
        parse_decimal(token)
            .and_then(|n| T::try_from(n).ok())
            .ok_or_else(|| {
                let token = shown(token);
                self.error(format!(
                    "bad {what} `{token}` in `{}`: expected a decimal number in range",
                    self.usage
                ))
            })
    }

    fn optional_decimal(&mut self, what: &str) -> Result<Option<u32>, TraceError> {
        match self.next() {
            Some(token) => self.parse_decimal(token, what).map(Some),
            None => Ok(None),
        }
    }

    /// A decimal size of at least one byte.
    fn size(&mut self, what: &str) -> Result<u32, TraceError> {
        let size: u32 = self.decimal(what)?;
        if size == 0 {
            return Err(self.error(format!(
                "{what} is 0 in `{}`: an access covers at least one byte",
                self.usage
            )));
        }
        Ok(size)
    }

    fn text(&mut self, what: &str) -> Result<String, TraceError> {
        let token = self.expect(what)?;
        self.utf8(token, what)
    }

    fn optional_text(&mut self, what: &str) -> Result<Option<String>, TraceError> {
        match self.next() {
            Some(token) => self.utf8(token, what).map(Some),
            None => Ok(None),
        }
    }

    /// A name or path: UTF-8, with `%XX` standing for the byte `XX`, so that
    /// blanks, `#` and `%` itself can be written; a `%` not followed by two
    /// hex digits is itself (`operator%`).
    fn utf8(&self, token: &[u8], what: &str) -> Result<String, TraceError> {
        let mut bytes = Vec::with_capacity(token.len());
        let mut rest = token;
        while let Some((&byte, tail)) = rest.split_first() {
            let escaped = match tail {
                [high, low, ..] if byte == b'%' => hex_digit(*high)
                    .zip(hex_digit(*low))
                    .map(|(high, low)| high << 4 | low),
                _ => None,
            };
            if let Some(value) = escaped {
                bytes.push(value);
                rest = &tail[2..];
            } else {
                bytes.push(byte);
                rest = tail;
            }
        }
        String::from_utf8(bytes)
            .map_err(|_| self.error(format!("{what} in `{}` is not valid UTF-8", self.usage)))
    }
}

fn parse_hex_bytes(text: &[u8]) -> Option<Vec<u8>> {
    if text.is_empty() || !text.len().is_multiple_of(2) {
        return None;
    }
    text.chunks(2)
        .map(|pair| parse_hex(pair).map(|byte| byte as u8))
        .collect()
}

fn parse_decimal(token: &[u8]) -> Option<u64> {
    if token.is_empty() {
        return None;
    }
    token.iter().try_fold(0u64, |value, &digit| {
        let digit = (digit as char).to_digit(10)?;
        value.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(text: &str) -> Result<Vec<Event>, TraceError> {
        let mut reader = TextReader::new(text.as_bytes());
        let mut events = Vec::new();
        while let Some(event) = reader.next_event()? {
            events.push(event);
        }
        Ok(events)
    }

    fn error(text: &str) -> String {
        read_all(text).unwrap_err().to_string()
    }

    #[test]
    fn reads_every_directive() {
        let events = read_all(
            "# a comment before the header\n\
             linegrind-trace text 1\n\
             fn 401000 0x401040 main transpose.c 12  # trailing comment\n\
             fn 401040 4010a0 gather\n\
             \n\
             thread 2\n\
             i 401000 4\n\
             w 7FF000 8\n\
             r 0x600000 4\n\
             m 600008 2\n\
             call 401040\n\
             sp 7ffff000\n\
             ret\n\
             signal 10\n\
             sigreturn\n\
             thread-exit 2\n\
             mark begin paint\n\
             mark end paint\n\
             alloc 10000000 4096\n\
             free 10000000\n\
             flush\n\
             restart\n\
             object /usr/lib/libc.so.6 bias=7f0000000000 build-id=0aFF\n\
             object ./app start=1000 end=2000 symbols=embedded\n\
             line 401004 13\n\
             line 401008 7 vector.h\n\
             plt 401020 401040\n",
        )
        .unwrap();
        assert_eq!(
            events,
            [
                Event::Function(Box::new(FunctionSymbol {
                    start: 0x401000,
                    end: 0x401040,
                    name: "main".into(),
                    file: Some("transpose.c".into()),
                    line: 12
                })),
                Event::Function(Box::new(FunctionSymbol {
                    start: 0x401040,
                    end: 0x4010a0,
                    name: "gather".into(),
                    file: None,
                    line: 0
                })),
                Event::Thread { tid: 2 },
                Event::Instr {
                    addr: 0x401000,
                    len: 4
                },
                Event::Data {
                    access: Access::Write,
                    addr: 0x7ff000,
                    size: 8
                },
                Event::Data {
                    access: Access::Read,
                    addr: 0x600000,
                    size: 4
                },
                Event::Data {
                    access: Access::Modify,
                    addr: 0x600008,
                    size: 2
                },
                Event::Call { target: 0x401040 },
                Event::StackPointer { sp: 0x7ffff000 },
                Event::Return,
                Event::Signal { signo: 10 },
                Event::SigReturn,
                Event::ThreadExit { tid: 2 },
                Event::Mark {
                    edge: MarkEdge::Begin,
                    name: "paint".into()
                },
                Event::Mark {
                    edge: MarkEdge::End,
                    name: "paint".into()
                },
                Event::Alloc {
                    addr: 0x10000000,
                    size: 4096
                },
                Event::Free { addr: 0x10000000 },
                Event::Flush,
                Event::Restart,
                Event::Module(Box::new(ModuleMapping {
                    path: "/usr/lib/libc.so.6".into(),
                    bias: 0x7f0000000000,
                    range: None,
                    build_id: Some(vec![0x0a, 0xff]),
                    embedded: false,
                })),
                Event::Module(Box::new(ModuleMapping {
                    path: "./app".into(),
                    bias: 0,
                    range: Some((0x1000, 0x2000)),
                    build_id: None,
                    embedded: true,
                })),
                Event::Line(Box::new(LineSymbol {
                    addr: 0x401004,
                    line: 13,
                    file: None
                })),
                Event::Line(Box::new(LineSymbol {
                    addr: 0x401008,
                    line: 7,
                    file: Some("vector.h".into())
                })),
                Event::Plt {
                    start: 0x401020,
                    end: 0x401040
                },
            ]
        );
    }

    #[test]
    fn names_may_escape_blanks_hashes_and_percents() {
        let events =
            read_all("linegrind-trace text 1\nfn 10 20 f(int,%20char)%23x%25 a%20b.c 3\n").unwrap();
        let Event::Function(function) = &events[0] else {
            panic!("not a function: {events:?}");
        };
        assert_eq!(function.name, "f(int, char)#x%");
        assert_eq!(function.file.as_deref(), Some("a b.c"));
        // A `%` that escapes nothing is itself.
        let events = read_all(
            "linegrind-trace text 1\nfn 10 20 operator%\nfn 20 30 f%2\nfn 30 40 g%zz%41\n",
        )
        .unwrap();
        let names: Vec<&str> = events
            .iter()
            .filter_map(|event| match event {
                Event::Function(symbol) => Some(symbol.name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["operator%", "f%2", "g%zzA"]);
    }

    #[test]
    fn object_options_are_checked() {
        let head = "linegrind-trace text 1\n";
        assert!(error(&format!("{head}object app bias\n")).contains("expected KEY=VALUE"));
        assert!(error(&format!("{head}object app bias=zz\n")).contains("bad bias `zz`"));
        assert!(
            error(&format!("{head}object app start=10\n")).contains("needs both start and end")
        );
        assert!(error(&format!("{head}object app build-id=abc\n")).contains("bad build-id"));
        assert!(error(&format!("{head}object app size=1\n")).contains("unknown option `size`"));
        assert!(
            error(&format!("{head}object app symbols=dwarf\n")).contains("bad symbols `dwarf`")
        );
        assert!(error(&format!("{head}object\n")).contains("missing PATH"));
    }

    #[test]
    fn a_missing_or_wrong_header_is_an_error_on_its_line() {
        assert_eq!(
            error(""),
            "line 1: the trace is empty: expected the header `linegrind-trace text 1`"
        );
        assert_eq!(
            error("\n# a comment\n"),
            "line 2: the trace has only blank lines and comments: expected the header \
             `linegrind-trace text 1`"
        );
        assert_eq!(
            error("# only a comment\n\ni 1000 4\n"),
            "line 3: expected the header `linegrind-trace text 1` as the first line, found \
             `i 1000 4` (linegrind reads text, binary, Lackey and Dinero traces: --format chooses)"
        );
        // The line as it is, its blanks kept, its comment left out.
        assert!(
            error(" I  0400,3\t # an instruction\n")
                .contains("as the first line, found `I  0400,3` (")
        );
        assert_eq!(
            error("linegrind-trace text 2\n"),
            "line 1: unsupported text trace version 2; this linegrind reads version 1"
        );
    }

    #[test]
    fn lines_that_end_in_a_carriage_return_alone_are_named_as_the_cause() {
        let expected = format!("line 1: {CR_LINES}");
        assert_eq!(error("linegrind-trace text 1\ri 1000 4\r"), expected);
        assert_eq!(error("# a comment\rlinegrind-trace text 1\r"), expected);
        // After the header, a comment would hide the lines after it, and
        // a record would run on into the next.
        assert_eq!(
            error("linegrind-trace text 1\n# a comment\ri 1000 4\r\n"),
            format!("line 2: {CR_LINES}")
        );
        for line in ["i 1000 4\ri 1004 4\n", "fn 1000 1010 main\rmain.c\n"] {
            assert_eq!(
                error(&format!("linegrind-trace text 1\n{line}")),
                format!("line 2: {CR_LINES}")
            );
        }
        // Lines that end in `\r\n`, or in more carriage returns, are lines.
        for text in [
            &b"linegrind-trace text 1\r\ni 1000 4\r\n"[..],
            b"linegrind-trace text 1\r\r\ni 1000 4\r\n",
        ] {
            let event = TextReader::new(text).next_event();
            assert!(matches!(event, Ok(Some(Event::Instr { .. }))), "{event:?}");
        }
        // What is not text with such lines is told what it is not.
        assert!(error("junk\u{2}\r\u{1}x\n").contains("--format chooses"));
        assert!(error("\u{7f}ELF\u{2}\r\u{1}x\n").contains("an ELF file, not a trace"));
    }

    #[test]
    fn a_byte_order_mark_before_the_first_line_is_passed_over() {
        let plain = read_all("linegrind-trace text 1\ni 1000 4\n").unwrap();
        for text in [
            "\u{feff}linegrind-trace text 1\ni 1000 4\n",
            "\u{feff}# saved by an editor\nlinegrind-trace text 1\ni 1000 4\n",
        ] {
            assert_eq!(read_all(text).unwrap(), plain);
        }
        // Anywhere else it is an unknown word.
        assert!(error("linegrind-trace text 1\n\u{feff}i 1000 4\n").starts_with("line 2:"));
    }

    #[test]
    fn an_unknown_directive_names_the_line_and_the_choices() {
        assert_eq!(
            error("linegrind-trace text 1\ni 1000 4\nload 1000 4\n"),
            format!("line 3: unknown directive `load`; expected one of {DIRECTIVES}")
        );
    }

    #[test]
    fn bad_numbers_say_what_was_expected() {
        let head = "linegrind-trace text 1\n";
        assert_eq!(
            error(&format!("{head}i 40g000 4\n")),
            "line 2: bad ADDR `40g000` in `i ADDR LEN`: expected a hex number of at most 64 bits"
        );
        assert_eq!(
            error(&format!("{head}i 401000 0x4\n")),
            "line 2: bad LEN `0x4` in `i ADDR LEN`: expected a decimal number in range"
        );
        assert_eq!(
            error(&format!("{head}r 1 99999999999\n")),
            "line 2: bad SIZE `99999999999` in `r|w|m ADDR SIZE`: expected a decimal number in range"
        );
        assert!(error(&format!("{head}i 11112222333344445 1\n")).contains("at most 64 bits"));
        // Leading zeros add no bits.
        let events = read_all(&format!("{head}i 0x00000000000401000 4\n")).unwrap();
        assert_eq!(
            events[0],
            Event::Instr {
                addr: 0x401000,
                len: 4
            }
        );
        assert!(error(&format!("{head}call 0x\n")).contains("bad TARGET `0x`"));
        assert_eq!(
            error(&format!("{head}w 1000\n")),
            "line 2: missing SIZE in `r|w|m ADDR SIZE`"
        );
        assert_eq!(
            error(&format!("{head}ret now\n")),
            "line 2: unexpected `now` at the end of `ret`"
        );
        assert!(error(&format!("{head}mark start x\n")).contains("expected `begin` or `end`"));
        assert!(
            error(&format!("{head}fn 20 10 f\n"))
                .contains("empty function range 20..10: its end must be above its start")
        );
        assert!(error(&format!("{head}fn 10 20 f f.c twelve\n")).contains("bad LINE `twelve`"));
    }

    #[test]
    fn size_zero_and_wrapping_ranges_are_errors() {
        let head = "linegrind-trace text 1\n";
        assert_eq!(
            error(&format!("{head}i 1000 4\nr 2000 0\n")),
            "line 3: SIZE is 0 in `r|w|m ADDR SIZE`: an access covers at least one byte"
        );
        assert!(error(&format!("{head}i 1000 0\n")).contains("LEN is 0"));
        assert!(
            error(&format!("{head}i 1000 1\nw ffffffffffffffff 2\n"))
                .contains("run past the end of the address space")
        );
    }

    /// A control character in a token is shown, not printed as it is.
    #[test]
    fn errors_show_control_characters_escaped() {
        let head = "linegrind-trace text 1\n";
        assert_eq!(
            error(&format!("{head}i 1000\0 4\n")),
            "line 2: bad ADDR `1000\\u{0}` in `i ADDR LEN`: expected a hex number of at most 64 bits"
        );
        assert!(error(&format!("{head}i\x1b[31m 10 1\n")).contains("`i\\u{1b}[31m`"));
    }

    /// An escaped line break would end the name early in a callgrind file.
    #[test]
    fn a_name_with_a_line_break_is_an_error() {
        let head = "linegrind-trace text 1\n";
        assert_eq!(
            error(&format!("{head}fn 10 20 f%0A0x0%200%209\n")),
            "line 2: function name `f\\n0x0 0 9` holds a line break"
        );
        assert!(error(&format!("{head}mark begin a%0Db\n")).contains("mark name"));
    }

    #[test]
    fn location_is_the_line_of_the_last_event() {
        let mut reader = TextReader::new("linegrind-trace text 1\n\n# x\ni 10 1\n".as_bytes());
        reader.next_event().unwrap();
        assert_eq!(reader.location(), Location::Line(4));
        assert_eq!(reader.next_event().unwrap(), None);
    }
}
