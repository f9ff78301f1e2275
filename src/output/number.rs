//! Number formatting for text output.

/// `n` with thousands separators: `1234567` becomes `1,234,567`.
pub fn grouped(n: u64) -> String {
    grouped_wide(n.into())
}

/// [`grouped`] for numbers past 64 bits (a difference's magnitude).
pub fn grouped_wide(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `part` as a percentage of the size of `whole`, with two decimals, or
/// `-` when `whole` is zero. The sign is `part`'s: in a difference file a
/// function that improved shows a negative share of the total change. A
/// part that is not zero never shows as `0.00%` but as `<0.01%` (`>-0.01%`
/// when negative), and one smaller than the whole never as `100.00%` but
/// as `>99.99%` (`<-99.99%`).
pub fn percent(part: impl Into<i128>, whole: impl Into<i128>) -> String {
    let (part, whole) = (part.into(), whole.into());
    if whole == 0 {
        return "-".to_string();
    }
    let (size, whole) = (part.unsigned_abs(), whole.unsigned_abs());
    let negative = part < 0;
    let sign = if negative { "-" } else { "" };
    let shown = format!("{:.2}", size as f64 * 100.0 / whole as f64);
    match shown.as_str() {
        "0.00" if size > 0 => (if negative { ">-0.01%" } else { "<0.01%" }).to_string(),
        "100.00" if size < whole => (if negative { "<-99.99%" } else { ">99.99%" }).to_string(),
        _ => format!("{sign}{shown}%"),
    }
}

/// Bytes per event of a trace of `bytes` bytes holding `events` events:
/// two decimals, or three significant digits below 0.1 so that a small
/// figure does not print as zero.
pub fn bytes_per_event(bytes: u64, events: u64) -> String {
    if events == 0 {
        return "-".to_string();
    }
    let ratio = bytes as f64 / events as f64;
    if ratio >= 0.1 || ratio == 0.0 {
        format!("{ratio:.2}")
    } else {
        let decimals = 2 - ratio.log10().floor() as i32;
        format!("{ratio:.*}", decimals as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_thousands_and_formats_percentages() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(1234567), "1,234,567");
        assert_eq!(grouped(u64::MAX), "18,446,744,073,709,551,615");
        assert_eq!(percent(1u64, 3u64), "33.33%");
        assert_eq!(percent(-1, 4), "-25.00%");
        assert_eq!(percent(1, -4), "25.00%");
        assert_eq!(percent(5u64, 0u64), "-");
        assert_eq!(percent(0u64, 7u64), "0.00%");
        assert_eq!(percent(1u64, 1_000_000u64), "<0.01%");
        assert_eq!(percent(-1, 1_000_000), ">-0.01%");
        assert_eq!(percent(-999_999, -1_000_000), "<-99.99%");
        assert_eq!(percent(999_999u64, 1_000_000u64), ">99.99%");
        assert_eq!(percent(7u64, 7u64), "100.00%");
        assert_eq!(percent(-7, 7), "-100.00%");
        // Past the whole, as a recursive function's inclusive cost.
        assert_eq!(percent(1_000_001u64, 1_000_000u64), "100.00%");
        assert_eq!(bytes_per_event(62, 100), "0.62");
        assert_eq!(bytes_per_event(231_881, 157_416_304), "0.00147");
        assert_eq!(bytes_per_event(5, 100), "0.0500");
        assert_eq!(bytes_per_event(0, 100), "0.00");
        assert_eq!(bytes_per_event(7, 0), "-");
    }
}
