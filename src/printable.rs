//! Names as a terminal may show them: a program's symbols, paths and the
//! names in the files `report` reads are the input's to choose, and a
//! control character among them (an escape sequence that retitles or
//! clears the terminal, a tab that breaks a table's columns) or an
//! invisible formatting one (a byte-order mark, a zero-width space, a
//! right-to-left override that shows the rest of a line reversed) is
//! written as its Rust escape instead.

use std::borrow::Cow;

/// `text` with every control and invisible formatting character escaped
/// (`\u{1b}`, `\t`, `\n`, `\u{feff}`, `\u{202e}`).
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether `c` is a control character, or one that a terminal shows as
/// nothing or that reorders the text around it: the embeddings,
/// overrides and isolates of bidirectional text (what "Trojan Source"
/// hides code with), the byte-order mark, the zero-width space, the word
/// joiner and invisible operators, the line and paragraph separators,
/// interlinear annotations and tag characters. The joiners, marks and
/// hyphens that ordinary text of some scripts holds (Persian, Indic,
/// emoji) stay, so that such a path still names its file.
pub fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200b}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e007f}'
        )
}

/// Characters of input text an error message shows at most.
const SHOWN_CHARS: usize = 80;

/// Text of an input (a trace's, a configuration's) as an error message
/// shows it: control characters (a NUL, a tab inside a token, a binary
/// file read as text) escaped, so that what is wrong can be seen and the
/// terminal is left alone, and cut after [`SHOWN_CHARS`] characters.
pub(crate) fn shown(text: &[u8]) -> String {
    let text = String::from_utf8_lossy(text);
    let head: String = text.chars().take(SHOWN_CHARS).collect();
    let mut out = printable(&head).into_owned();
    if text.chars().nth(SHOWN_CHARS).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_text_is_escaped_and_cut() {
        assert_eq!(shown(b"a\0b\x1b[31m"), "a\\u{0}b\\u{1b}[31m");
        let long = shown(&[b'x'; 100]);
        assert_eq!(long, format!("{}…", "x".repeat(80)));
        assert_eq!(shown(&[b'x'; 80]), "x".repeat(80));
    }

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert!(matches!(printable("std::vector<int>"), Cow::Borrowed(_)));
        assert_eq!(
            printable("\u{1b}]0;x\u{7}é\tf\n"),
            "\\u{1b}]0;x\\u{7}é\\tf\\n"
        );
        // Invisible, or reordering what follows; letters, joiners and
        // marks of ordinary text in any script stay.
        assert_eq!(
            printable("\u{feff}safe\u{202e}live\u{200b}\u{2066}\u{e0041}ü日本"),
            "\\u{feff}safe\\u{202e}live\\u{200b}\\u{2066}\\u{e0041}ü日本"
        );
        let persian = "می\u{200c}خواهم\u{200f}.c";
        assert!(matches!(printable(persian), Cow::Borrowed(_)));
    }
}
