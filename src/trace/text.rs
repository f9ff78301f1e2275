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
                    // The header is one of the lines after which none holds
                    // a `\r` (tokens end at one).
                    if inner_cr(line).is_some() {
                        return Err(TraceError::syntax(at, CR_LINES));
                    }
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
        shown(trim_blanks(content))
    )))
}

/// Whether `byte` separates tokens (or ends the line).
fn is_blank(byte: &u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n')
}

/// `text` without the blanks around it (not a form feed or another
/// character that is no blank here, which the error must show).
fn trim_blanks(text: &[u8]) -> &[u8] {
    let start = text.iter().position(|b| !is_blank(b)).unwrap_or(text.len());
    let end = text
        .iter()
        .rposition(|b| !is_blank(b))
        .map_or(start, |last| last + 1);
    &text[start..end]
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
                        "bad build-id `{}` in `{}`: expected hex digits, two per byte, \
                         without `0x`",
                        shown(value),
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
mod tests;
