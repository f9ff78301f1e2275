//! What makes an event possible, whichever format it came from: the text
//! reader parses these rules as it goes, the binary reader checks each
//! record it decodes against them, so that no format lets through what
//! another refuses.

use super::Event;

impl Event {
    /// Why this event cannot be, if it cannot: an instruction or access of
    /// no bytes or past the end of the address space, an empty range, or a
    /// name that is empty or holds a line break (a callgrind file has one
    /// name per line).
    pub fn check(&self) -> Result<(), String> {
        match self {
            Event::Instr { addr, len } => span("an instruction", *addr, u64::from(*len)),
            Event::Data { addr, size, .. } => span("an access", *addr, u64::from(*size)),
            Event::Function(symbol) => {
                range("function", symbol.start, symbol.end)?;
                name("function name", &symbol.name)?;
                if let Some(file) = &symbol.file {
                    name("file name", file)?;
                } else if symbol.line != 0 {
                    return Err(format!(
                        "function `{}` has line {} but no file",
                        symbol.name, symbol.line
                    ));
                }
                Ok(())
            }
            Event::Line(symbol) => symbol
                .file
                .as_deref()
                .map_or(Ok(()), |file| name("file name", file)),
            Event::Plt { start, end } => range("PLT", *start, *end),
            Event::Module(mapping) => {
                name("object path", &mapping.path)?;
                match mapping.range {
                    Some((start, end)) => range("object", start, end),
                    // Only the file would tell where it is mapped, and a
                    // trace that embeds its symbols never reads it.
                    None if mapping.embedded => Err(format!(
                        "object `{}` embeds its symbols but has no range: \
                         it needs start= and end=",
                        mapping.path
                    )),
                    None => Ok(()),
                }
            }
            Event::Mark { name: mark, .. } => name("mark name", mark),
            _ => Ok(()),
        }
    }
}

/// `len` bytes at `addr`: at least one, and none past the last address.
fn span(what: &str, addr: u64, len: u64) -> Result<(), String> {
    if len == 0 {
        return Err(format!("{what} of 0 bytes at {addr:x}"));
    }
    within(addr, len)
}

/// `len` bytes at `addr`, one at least, end at or before the last address.
pub fn within(addr: u64, len: u64) -> Result<(), String> {
    match addr.checked_add(len - 1) {
        Some(_) => Ok(()),
        None => Err(format!(
            "{len} bytes at {addr:x} run past the end of the address space"
        )),
    }
}

fn range(what: &str, start: u64, end: u64) -> Result<(), String> {
    if end <= start {
        return Err(format!(
            "empty {what} range {start:x}..{end:x}: its end must be above its start"
        ));
    }
    Ok(())
}

fn name(what: &str, text: &str) -> Result<(), String> {
    if text.is_empty() {
        return Err(format!("an empty {what}"));
    }
    // Readers of callgrind files trim names: blanks alone would be none.
    if text.trim().is_empty() {
        let article = if what.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        return Err(format!(
            "{article} {what} of nothing but blanks (`{}`)",
            text.escape_debug()
        ));
    }
    if text.contains(['\n', '\r']) {
        return Err(format!(
            "{what} `{}` holds a line break",
            text.escape_debug()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Access, FunctionSymbol, ModuleMapping};

    fn function(start: u64, end: u64, name: &str, file: Option<&str>, line: u32) -> Event {
        Event::Function(Box::new(FunctionSymbol {
            start,
            end,
            name: name.into(),
            file: file.map(Into::into),
            line,
        }))
    }

    #[test]
    fn impossible_events_say_why() {
        let data = |addr, size| Event::Data {
            access: Access::Read,
            addr,
            size,
        };
        let cases = [
            (
                Event::Instr { addr: 16, len: 0 },
                "an instruction of 0 bytes",
            ),
            (
                Event::Instr {
                    addr: u64::MAX - 1,
                    len: 4,
                },
                "4 bytes at fffffffffffffffe run past the end",
            ),
            (data(0x1000, 0), "an access of 0 bytes"),
            (
                data(u64::MAX - 6, 8),
                "8 bytes at fffffffffffffff9 run past",
            ),
            (
                function(0x20, 0x10, "f", None, 0),
                "empty function range 20..10",
            ),
            (function(0x10, 0x20, "", None, 0), "an empty function name"),
            (
                function(0x10, 0x20, " \t\u{2028}", None, 0),
                "a function name of nothing but blanks (` \\t\\u{2028}`)",
            ),
            (
                function(0x10, 0x20, "f", Some(" "), 1),
                "a file name of nothing but blanks",
            ),
            (
                function(0x10, 0x20, "f\n0x0 9", None, 0),
                "function name `f\\n0x0 9` holds a line break",
            ),
            (
                function(0x10, 0x20, "f", Some("a\r.c"), 3),
                "file name `a\\r.c` holds",
            ),
            (function(0x10, 0x20, "f", None, 42), "line 42 but no file"),
            (Event::Plt { start: 5, end: 5 }, "empty PLT range"),
            (
                Event::Module(Box::new(ModuleMapping {
                    path: String::new(),
                    bias: 0,
                    range: None,
                    build_id: None,
                    embedded: false,
                })),
                "an empty object path",
            ),
            (
                Event::Module(Box::new(ModuleMapping {
                    path: "/bin/app".into(),
                    bias: 0,
                    range: None,
                    build_id: None,
                    embedded: true,
                })),
                "object `/bin/app` embeds its symbols but has no range",
            ),
        ];
        for (event, why) in cases {
            let err = event.check().unwrap_err();
            assert!(err.contains(why), "{event:?}: {err}");
        }
        let fine = [
            Event::Instr {
                addr: u64::MAX - 3,
                len: 4,
            },
            data(u64::MAX, 1),
            function(0x10, 0x20, "f", Some("f.c"), 3),
            function(0x10, 0x20, "f", None, 0),
        ];
        for event in fine {
            assert_eq!(event.check(), Ok(()), "{event:?}");
        }
    }
}
