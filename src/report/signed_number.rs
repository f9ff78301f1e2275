//! Numbers of reports that may be negative: the costs of a difference file
//! (`diff --out`), and changes between runs.

use crate::output::grouped;

/// `n` with thousands separators and a minus sign when negative:
/// `-1,234`.
pub fn grouped_signed(n: i128) -> String {
    let sign = if n < 0 { "-" } else { "" };
    match u64::try_from(n.unsigned_abs()) {
        Ok(magnitude) => format!("{sign}{}", grouped(magnitude)),
        Err(_) => format!("{sign}{}", n.unsigned_abs()),
    }
}

/// `n` as [`grouped_signed`], with a plus sign when positive: `+1,234`.
pub fn change(n: i128) -> String {
    let plus = if n > 0 { "+" } else { "" };
    format!("{plus}{}", grouped_signed(n))
}

/// `part` as a percentage of the size of `whole`, with two decimals, or `-`
/// when `whole` is zero. The sign is `part`'s: in a difference file a
/// function that improved shows a negative share of the total change.
pub fn share(part: i128, whole: i128) -> String {
    if whole == 0 {
        "-".to_string()
    } else {
        format!("{:.2}%", part as f64 * 100.0 / whole.unsigned_abs() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_and_groups() {
        assert_eq!(grouped_signed(0), "0");
        assert_eq!(grouped_signed(-1234567), "-1,234,567");
        assert_eq!(
            grouped_signed(i128::from(i64::MIN)),
            "-9,223,372,036,854,775,808"
        );
        assert_eq!(grouped_signed(i128::MAX), i128::MAX.to_string());
        assert_eq!(change(1000), "+1,000");
        assert_eq!(change(-5), "-5");
        assert_eq!(change(0), "0");
        assert_eq!(share(1, 3), "33.33%");
        assert_eq!(share(-1, 4), "-25.00%");
        assert_eq!(share(1, -4), "25.00%");
        assert_eq!(share(5, 0), "-");
    }
}
