//! Hex numbers in the text formats, read byte by byte through a table.

/// What [`DIGIT`] holds for a byte that is not a hex digit.
pub const NOT_HEX: u8 = 0xff;

/// The value of each hex digit, [`NOT_HEX`] for other bytes.
pub const DIGIT: [u8; 256] = {
    let mut table = [NOT_HEX; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

/// The value of a hex digit.
pub fn hex_digit(byte: u8) -> Option<u8> {
    let digit = DIGIT[usize::from(byte)];
    (digit != NOT_HEX).then_some(digit)
}

/// A hex number of at most 64 bits, with an optional `0x`; leading zeros
/// add no bits.
pub fn parse_hex(token: &[u8]) -> Option<u64> {
    let digits = token
        .strip_prefix(b"0x")
        .or_else(|| token.strip_prefix(b"0X"))
        .unwrap_or(token);
    let significant = digits.iter().skip_while(|&&digit| digit == b'0').count();
    if digits.is_empty() || significant > 16 {
        return None;
    }
    digits.iter().try_fold(0u64, |value, &digit| {
        Some(value << 4 | u64::from(hex_digit(digit)?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_numbers_take_an_optional_prefix_and_at_most_64_bits() {
        assert_eq!(parse_hex(b"7ff0"), Some(0x7ff0));
        assert_eq!(parse_hex(b"0X7FF0"), Some(0x7ff0));
        assert_eq!(parse_hex(b"0x0000ffffffffffffffff"), Some(u64::MAX));
        assert_eq!(parse_hex(b"1ffffffffffffffff"), None);
        for bad in [&b""[..], b"0x", b"12g", b"+12", b"-1", b" 12"] {
            assert_eq!(parse_hex(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
