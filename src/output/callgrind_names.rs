//! Names in callgrind files: each on one line, and compressed as the
//! format allows, `key=(id) name` where a name is first met and `key=(id)`
//! after. Callgrind compresses every name, and readers tell a compressed
//! name by its `(digits)` prefix, so writing them all compressed keeps a
//! name such as `(below main)` from being misread.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Write};

/// A function's identity in a callgrind file, as [`NameIds::write`] tells
/// functions apart: its name, file and object.
pub fn function_identity(name: &str, file: &str, object: &str) -> String {
    format!("{name}\0{file}\0{object}")
}

/// The ids given so far, per kind of name (`ob`, `fl`, `fn`), which the
/// keys of each kind share (`fn=` and `cfn=`, `fl=`, `fi=` and `cfi=`).
#[derive(Default)]
pub struct NameIds {
    /// Compressed id of each name's identity, per kind.
    ids: HashMap<(&'static str, String), usize>,
    /// Ids given so far per kind.
    counts: HashMap<&'static str, usize>,
}

impl NameIds {
    /// Writes `key=(id) name` the first time `identity` is met in `space`,
    /// and `key=(id)` after. The identity is the name itself but for
    /// functions: two of one name in different files or objects (such as
    /// the two `(below main)`) get two ids, as in Callgrind's files, so
    /// that viewers keep them apart.
    pub fn write(
        &mut self,
        out: &mut dyn Write,
        key: &str,
        space: &'static str,
        identity: String,
        name: &str,
    ) -> io::Result<()> {
        if let Some(id) = self.ids.get(&(space, identity.clone())) {
            return writeln!(out, "{key}=({id})");
        }
        let count = self.counts.entry(space).or_insert(0);
        *count += 1;
        let id = *count;
        self.ids.insert((space, identity), id);
        writeln!(out, "{key}=({id}) {}", readable_name(name))
    }
}

/// Callgrind's name for what it does not know (an object, a file).
pub const UNKNOWN: &str = "???";

/// `name` as readers of callgrind files take it back: on one line, and
/// [`UNKNOWN`] for a name of nothing but blanks, which readers trim to
/// nothing and so to no name.
fn readable_name(name: &str) -> Cow<'_, str> {
    if name.trim().is_empty() {
        Cow::Borrowed(UNKNOWN)
    } else {
        one_line(name)
    }
}

/// `text` on one line: a line break, which would end a name early and
/// make the rest a line of its own, is written as `\n` or `\r` (traces
/// refuse such names; an object's symbols are not checked).
pub fn one_line(text: &str) -> Cow<'_, str> {
    if text.contains(['\n', '\r']) {
        Cow::Owned(text.replace('\n', "\\n").replace('\r', "\\r"))
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blank_name_is_written_as_unknown() {
        let mut ids = NameIds::default();
        let mut out = Vec::new();
        for name in ["", " \t", "\u{2028}", " x "] {
            ids.write(&mut out, "fl", "fl", name.to_string(), name)
                .unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, "fl=(1) ???\nfl=(2) ???\nfl=(3) ???\nfl=(4)  x \n");
    }

    #[test]
    fn a_name_is_given_once_and_its_id_after() {
        let mut ids = NameIds::default();
        let mut out = Vec::new();
        for (key, space, name) in [
            ("fn", "fn", "main"),
            ("cfn", "fn", "(below main)"),
            ("fl", "fl", "main"),
            ("fn", "fn", "(below main)"),
        ] {
            ids.write(&mut out, key, space, name.to_string(), name)
                .unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "fn=(1) main\ncfn=(2) (below main)\nfl=(1) main\nfn=(2)\n"
        );
    }

    #[test]
    fn line_breaks_in_names_are_escaped() {
        assert_eq!(one_line("f\n0x0 0 999\r"), "f\\n0x0 0 999\\r");
        assert!(matches!(one_line("main"), Cow::Borrowed("main")));
    }
}
