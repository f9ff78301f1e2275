//! Dinero's ASCII trace formats, read as Dinero IV reads them.
//!
//! Traditional `din` (Dinero III): `LABEL ADDRESS`, the rest of the line
//! ignored. Labels: `0` read, `1` write, `2` instruction fetch, `3` an
//! escape record of unknown access type (Dinero treats it as a read), `4` an
//! escape record that flushes the caches, as Dinero III documents it
//! (Dinero IV reads it as the copyback of one word, which flushes
//! nothing). Dinero III is word-oriented: every access is 4 bytes at the
//! address rounded down to a multiple of 4.
//!
//! Extended `din` (Dinero IV's `-informat D`): `TYPE ADDRESS SIZE`, the rest
//! ignored, with `r` read, `w` write, `i` instruction fetch, `m`
//! miscellaneous (a read), `c` copyback (writes dirty data back; a no-op in
//! a cache model without dirty data). Size 0, which Dinero IV allows for
//! copybacks and invalidations only, means the whole cache: `v` with size
//! 0 flushes every cache; `v` of a range is not supported.
//!
//! Fields are separated by spaces and tabs, as Dinero IV separates them:
//! any other control byte is part of a field; a carriage return within a
//! line (old Mac OS line ends) is an error of its own. Addresses and
//! sizes are hex, with an optional `0x`. Lines that start with `#` are
//! comments, as in linegrind's text format (format detection skips them
//! too); Dinero itself has none. Accesses before any instruction fetch are
//! charged to the `(unknown)` instruction.

use std::io::BufRead;

use super::error::{CR_LINES, Location, TraceError};
use super::hex::parse_hex;
use super::lines::{LineCount, parse_line};
use super::valid::within;
use super::{Access, Event, TraceRead};
use crate::printable::shown;

/// Which of the two forms a reader reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DinForm {
    /// `LABEL ADDRESS`.
    Traditional,
    /// `TYPE ADDRESS SIZE`.
    Extended,
}

/// Streams events from a Dinero trace.
pub struct DinReader<R> {
    input: R,
    form: DinForm,
    lines: LineCount,
    buf: Vec<u8>,
    /// Whether a line held a record.
    records: bool,
}

impl<R: BufRead> DinReader<R> {
    pub fn new(input: R, form: DinForm) -> DinReader<R> {
        DinReader {
            input,
            form,
            lines: LineCount::default(),
            buf: Vec::with_capacity(64),
            records: false,
        }
    }

    /// The last line, if the input ends inside it (no newline after it):
    /// the trace may have been cut there; for a warning.
    pub fn unterminated(&self) -> Option<u64> {
        self.lines.unterminated()
    }
}

/// Whether `line` has the shape of a traditional (`LABEL ADDRESS`) or an
/// extended (`TYPE ADDRESS SIZE`) din record.
pub fn form_of(line: &[u8]) -> Option<DinForm> {
    // Up to a carriage return: lines of old Mac OS text read as one are
    // told by the first (and then refused by the reader).
    let first_line = line.split(|&b| b == b'\r').next().unwrap_or(line);
    let mut tokens = fields(first_line);
    let first = tokens.next()?;
    tokens.next().and_then(parse_hex)?;
    match first {
        [b'r' | b'w' | b'i' | b'm' | b'c' | b'v' | b'R' | b'W' | b'I' | b'M' | b'C' | b'V'] => {
            tokens.next().and_then(parse_hex).map(|_| DinForm::Extended)
        }
        _ => parse_hex(first)
            .filter(|&label| label <= 4)
            .map(|_| DinForm::Traditional),
    }
}

/// What `line`, a record of the `form` at `at`, says: an event, or `None`
/// for an empty line, a comment or a copyback.
fn record(form: DinForm, line: &[u8], at: Location) -> Result<Option<Event>, TraceError> {
    // Lines of old Mac OS text, read as one, would hide all but the first.
    if line.contains(&b'\r') {
        return Err(TraceError::syntax(at, CR_LINES));
    }
    let mut tokens = fields(line);
    // The line as an error shows it, worked out only for an error.
    let show = || shown(line);
    let Some(first) = tokens.next().filter(|first| !first.starts_with(b"#")) else {
        return Ok(None);
    };
    let address = |token: Option<&[u8]>, what: &str| {
        token.and_then(parse_hex).ok_or_else(|| {
            TraceError::syntax(
                at,
                format!("a missing or bad {what} in `{}`: expected hex", show()),
            )
        })
    };
    match form {
        DinForm::Traditional => {
            let label = parse_hex(first).ok_or_else(|| {
                TraceError::syntax(at, format!("a bad label in `{}`: expected 0 to 4", show()))
            })?;
            let addr = address(tokens.next(), "address")? & !3;
            Ok(Some(match label {
                0 | 3 => word(Access::Read, addr),
                1 => word(Access::Write, addr),
                2 => Event::Instr { addr, len: 4 },
                4 => Event::Flush,
                other => {
                    return Err(TraceError::syntax(
                        at,
                        format!(
                            "unsupported record label {other:x} in `{}`: din labels are \
                                 0 read, 1 write, 2 instruction fetch, 3 escape (a read), 4 flush",
                            show()
                        ),
                    ));
                }
            }))
        }
        DinForm::Extended => {
            let kind = match first {
                b"r" | b"R" | b"m" | b"M" => Kind::Data(Access::Read),
                b"w" | b"W" => Kind::Data(Access::Write),
                b"i" | b"I" => Kind::Instr,
                b"c" | b"C" => Kind::Copyback,
                b"v" | b"V" => Kind::Invalidate,
                _ => {
                    return Err(TraceError::syntax(
                        at,
                        format!(
                            "unknown access type in `{}`: expected r, w, i, m, c or v \
                             (for the traditional `LABEL ADDRESS` form, use --format din)",
                            show()
                        ),
                    ));
                }
            };
            let addr = address(tokens.next(), "address")?;
            let size = address(tokens.next(), "size")?;
            let sized = |size: u64| {
                let size = u32::try_from(size)
                    .ok()
                    .filter(|&size| size > 0)
                    .ok_or_else(|| {
                        TraceError::syntax(
                            at,
                            format!("size {size:#x} in `{}` is out of range", show()),
                        )
                    })?;
                within(addr, u64::from(size))
                    .map_err(|why| TraceError::syntax(at, format!("`{}`: {why}", show())))?;
                Ok(size)
            };
            Ok(match kind {
                Kind::Data(access) => Some(Event::Data {
                    access,
                    addr,
                    size: sized(size)?,
                }),
                Kind::Instr => Some(Event::Instr {
                    addr,
                    len: sized(size)?,
                }),
                Kind::Copyback => None,
                Kind::Invalidate if size == 0 => Some(Event::Flush),
                Kind::Invalidate => {
                    return Err(TraceError::syntax(
                        at,
                        format!(
                            "invalidating a range is not supported, only the whole cache \
                             (size 0): `{}`",
                            show()
                        ),
                    ));
                }
            })
        }
    }
}

/// What an extended record's type letter asks for.
enum Kind {
    Data(Access),
    Instr,
    Copyback,
    Invalidate,
}

/// The fields of a line: separated by spaces and tabs only.
fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&b| b == b' ' || b == b'\t')
        .filter(|field| !field.is_empty())
}

/// A traditional record's access: one 4-byte word.
fn word(access: Access, addr: u64) -> Event {
    Event::Data {
        access,
        addr,
        size: 4,
    }
}

impl<R: BufRead> TraceRead for DinReader<R> {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        let (form, records) = (self.form, &mut self.records);
        loop {
            let read = parse_line(
                &mut self.input,
                &mut self.buf,
                &mut self.lines,
                " (is this a binary file?)",
                |line, at| {
                    let line = line.trim_ascii();
                    *records |= !line.is_empty() && !line.starts_with(b"#");
                    record(form, line, at)
                },
            )?;
            match read {
                None if !*records => {
                    return Err(TraceError::syntax(
                        Location::Line(1),
                        "the file holds no Dinero record: it is empty or blank",
                    ));
                }
                None => return Ok(None),
                Some(Some(event)) => return Ok(Some(event)),
                Some(None) => {}
            }
        }
    }

    fn location(&self) -> Location {
        Location::Line(self.lines.read())
    }

    fn detached_data(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str, form: DinForm) -> Result<Vec<Event>, TraceError> {
        let mut reader = DinReader::new(text.as_bytes(), form);
        let mut out = Vec::new();
        while let Some(event) = reader.next_event()? {
            out.push(event);
        }
        Ok(out)
    }

    #[test]
    fn traditional_records_are_words_and_label_4_flushes() {
        let read = events(
            "# made by hand\n2 0 comment\n0 1003\n\n1 0x70f60892\t# tabbed\n3 10\n  #\n4 0\r\n",
            DinForm::Traditional,
        )
        .unwrap();
        assert_eq!(
            read,
            [
                Event::Instr { addr: 0, len: 4 },
                Event::Data {
                    access: Access::Read,
                    addr: 0x1000,
                    size: 4
                },
                Event::Data {
                    access: Access::Write,
                    addr: 0x70f60890,
                    size: 4
                },
                Event::Data {
                    access: Access::Read,
                    addr: 0x10,
                    size: 4
                },
                Event::Flush,
            ]
        );
    }

    #[test]
    fn extended_records_carry_their_size() {
        let read = events(
            "i 400 3\nr 7ff0 8 # a comment\nw 0x10 0x10\nc 0 40\n",
            DinForm::Extended,
        )
        .unwrap();
        assert_eq!(
            read,
            [
                Event::Instr {
                    addr: 0x400,
                    len: 3
                },
                Event::Data {
                    access: Access::Read,
                    addr: 0x7ff0,
                    size: 8
                },
                Event::Data {
                    access: Access::Write,
                    addr: 0x10,
                    size: 16
                },
            ]
        );
    }

    #[test]
    fn unsupported_records_are_errors_naming_the_line() {
        let error = |text: &str, form| events(text, form).unwrap_err().to_string();
        assert!(
            error("0 10\n5 10\n", DinForm::Traditional)
                .starts_with("line 2: unsupported record label 5")
        );
        assert!(error("0 zz\n", DinForm::Traditional).contains("bad address"));
        assert!(
            error("i 0 4\nv 10 4\n", DinForm::Extended)
                .starts_with("line 2: invalidating a range is not supported")
        );
        assert!(error("r 10\n", DinForm::Extended).contains("bad size"));
        assert!(error("r 10 0\n", DinForm::Extended).contains("out of range"));
        assert!(error("x 10 4\n", DinForm::Extended).contains("unknown access type"));
        // Dinero IV's separators only: a carriage return within a line
        // is no line break.
        assert_eq!(
            error("2 0\r1 10\n", DinForm::Traditional),
            format!("line 1: {CR_LINES}")
        );
        assert_eq!(
            error("i 0 4\n\ni 4 4\rw 10 4\r", DinForm::Extended),
            format!("line 3: {CR_LINES}")
        );
        assert!(error("0 10\x0b1 20\n", DinForm::Traditional).contains("bad address"));
        // The type first, whatever follows it.
        assert!(error("2 0\n", DinForm::Extended).contains("use --format din"));
        for blank in ["", "\n \n", "# only a comment\n"] {
            assert_eq!(
                error(blank, DinForm::Traditional),
                "line 1: the file holds no Dinero record: it is empty or blank"
            );
        }
        assert_eq!(events("c 10 4\n", DinForm::Extended).unwrap(), []);
    }

    #[test]
    fn size_0_is_the_whole_cache_for_copybacks_and_invalidations() {
        assert_eq!(
            events("c 0 0\nV 0 0\n", DinForm::Extended).unwrap(),
            [Event::Flush]
        );
    }

    #[test]
    fn forms_are_told_apart_by_shape() {
        assert_eq!(form_of(b"2 400"), Some(DinForm::Traditional));
        assert_eq!(form_of(b"0 70f60888 ignored"), Some(DinForm::Traditional));
        assert_eq!(form_of(b"r 7ff0 8"), Some(DinForm::Extended));
        assert_eq!(form_of(b"2 0\r0 10\r"), Some(DinForm::Traditional));
        assert_eq!(form_of(b"9 400"), None);
        assert_eq!(form_of(b"I  04001234,3"), None);
        assert_eq!(form_of(b"linegrind-trace text 1"), None);
    }
}
