//! Numbers of reports that may be negative: the costs of a difference file
//! (`diff --out`), and changes between runs.

use crate::output::grouped_wide;

/// `n` with thousands separators and a minus sign when negative:
/// `-1,234`.
pub fn grouped_signed(n: i128) -> String {
    let sign = if n < 0 { "-" } else { "" };
    format!("{sign}{}", grouped_wide(n.unsigned_abs()))
}

/// `n` as [`grouped_signed`], with a plus sign when positive: `+1,234`.
pub fn change(n: i128) -> String {
    let plus = if n > 0 { "+" } else { "" };
    format!("{plus}{}", grouped_signed(n))
}

/// The change from `a` to `b` as a percentage of `a`'s size, with two
/// decimals and its sign: empty when both are zero, `new` from zero, and a
/// change too small to show in two decimals as `+<0.01%` or `-<0.01%`, not
/// as no change at all.
pub fn relative_change(a: i128, b: i128) -> String {
    let rise = b - a;
    match (a, rise) {
        (0, 0) => String::new(),
        (0, _) => "new".to_string(),
        _ => {
            let percent = rise as f64 * 100.0 / a.unsigned_abs() as f64;
            match percent.abs() < 0.005 {
                true if rise > 0 => "+<0.01%".to_string(),
                true if rise < 0 => "-<0.01%".to_string(),
                _ => format!("{percent:+.2}%"),
            }
        }
    }
}

/// [`relative_change`] of a rise that was checked against a limit: in
/// hundredths of a percent rounded up when it exceeded the limit and down
/// when it did not, so that the figure shown never seems to contradict the
/// verdict (a rise of 1.004% past a limit of 1% shows `+1.01%`, one of
/// 0.996% within it `+0.99%`).
pub fn checked_change(a: i128, b: i128, exceeded: bool) -> String {
    let rise = b - a;
    let whole = a.unsigned_abs();
    if a == 0 || rise <= 0 {
        return relative_change(a, b);
    }
    // A rise and a baseline below 2^65: times 10^4 stays far below 2^128.
    let scaled = rise.unsigned_abs() * 10_000;
    let hundredths = match exceeded {
        true => scaled.div_ceil(whole),
        false => scaled / whole,
    };
    match hundredths {
        0 => "+<0.01%".to_string(),
        _ => format!("+{}.{:02}%", hundredths / 100, hundredths % 100),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_past_64_bits_are_grouped_too() {
        assert_eq!(grouped_signed(-1_234), "-1,234");
        let past = i128::from(u64::MAX) * 2;
        assert_eq!(change(past), "+36,893,488,147,419,103,230");
        assert_eq!(grouped_signed(-past), "-36,893,488,147,419,103,230");
    }

    #[test]
    fn a_checked_rise_rounds_toward_its_verdict() {
        // 1.0000085% of 11,700,176.
        assert_eq!(checked_change(11_700_176, 11_817_178, true), "+1.01%");
        assert_eq!(checked_change(100, 101, false), "+1.00%");
        assert_eq!(checked_change(1000, 1009, false), "+0.90%");
        assert_eq!(checked_change(1_000_000, 1_000_001, true), "+0.01%");
        assert_eq!(checked_change(1_000_000, 1_000_001, false), "+<0.01%");
        assert_eq!(checked_change(100, 90, false), "-10.00%");
        assert_eq!(checked_change(0, 5, true), "new");
    }

    #[test]
    fn signs_and_groups() {
        assert_eq!(grouped_signed(0), "0");
        assert_eq!(grouped_signed(-1234567), "-1,234,567");
        assert_eq!(
            grouped_signed(i128::from(i64::MIN)),
            "-9,223,372,036,854,775,808"
        );
        assert_eq!(
            grouped_signed(i128::MAX),
            "170,141,183,460,469,231,731,687,303,715,884,105,727"
        );
        assert_eq!(change(1000), "+1,000");
        assert_eq!(change(-5), "-5");
        assert_eq!(change(0), "0");
        assert_eq!(relative_change(0, 0), "");
        assert_eq!(relative_change(0, 7), "new");
        assert_eq!(relative_change(1000, 1050), "+5.00%");
        assert_eq!(relative_change(-1000, -1050), "-5.00%");
        assert_eq!(relative_change(5, 5), "+0.00%");
        assert_eq!(relative_change(1_000_000_000, 1_000_000_001), "+<0.01%");
        assert_eq!(relative_change(1_000_000_000, 999_999_999), "-<0.01%");
        // Exactly 0.005% shows, rounded, as a hundredth.
        assert_eq!(relative_change(20_000, 20_001), "+0.01%");
        assert_eq!(relative_change(20_000, 19_999), "-0.01%");
    }
}
