//! The UTF-8 byte-order mark some editors put at the start of a text file,
//! which every text input (traces, profiles, summaries, lists of
//! hierarchies) passes over.

/// The mark, as a character.
pub const BOM: char = '\u{feff}';

/// `text` without the byte-order mark it may start with (JSON readers may
/// skip one too, RFC 8259 section 8.1).
pub fn without_bom(text: &[u8]) -> &[u8] {
    text.strip_prefix("\u{feff}".as_bytes()).unwrap_or(text)
}
