//! Names as a terminal may show them: a program's symbols, paths and the
//! names in the files `report` reads are the input's to choose, and a
//! control character among them (an escape sequence that retitles or
//! clears the terminal, a tab that breaks a table's columns) is written as
//! its Rust escape instead.

use std::borrow::Cow;

/// `text` with every control character escaped (`\u{1b}`, `\t`, `\n`).
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert!(matches!(printable("std::vector<int>"), Cow::Borrowed(_)));
        assert_eq!(
            printable("\u{1b}]0;x\u{7}é\tf\n"),
            "\\u{1b}]0;x\\u{7}é\\tf\\n"
        );
    }
}
