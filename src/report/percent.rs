//! Percentages as they were written, in decimal: `2.3` is 23 tenths, not
//! the binary fraction nearest it, so that a share of exactly 2.3% of
//! 100,000 (2,300) compares equal to it rather than a little below.

use std::fmt;

/// Digits a percentage may have after its point.
pub const MAX_DECIMALS: usize = 6;
/// Digits a percentage may have before its point: with the decimals, few
/// enough that any 64-bit cost (or a difference of two, 65 bits) times the
/// digits fits in 128 bits.
const MAX_WHOLE: usize = 9;

/// `digits / 10^decimals` percent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Percent {
    digits: u64,
    decimals: u32,
}

impl Percent {
    /// `N`, `N.` or `N.D` in plain digits, at most [`MAX_DECIMALS`] after
    /// the point.
    pub fn parse(text: &str) -> Option<Percent> {
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let plain = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() || !plain(whole) || !plain(fraction) {
            return None;
        }
        let whole = whole.trim_start_matches('0');
        if whole.len() > MAX_WHOLE || fraction.len() > MAX_DECIMALS {
            return None;
        }
        // At most 15 digits in all: no overflow.
        let digits = (whole.bytes().chain(fraction.bytes()))
            .fold(0u64, |n, digit| n * 10 + u64::from(digit - b'0'));
        Some(Percent {
            digits,
            decimals: fraction.len() as u32,
        })
    }

    /// `part` as a share of `whole`, against this percentage of it:
    /// `part * 100 / whole` against `digits / 10^decimals`, in whole
    /// numbers (at most 2^65 times 10^8 or 10^15: far below 2^128).
    pub fn compare_share(self, part: u128, whole: u128) -> std::cmp::Ordering {
        let scale = 100 * 10u128.pow(self.decimals);
        let share = part.saturating_mul(scale);
        share.cmp(&whole.saturating_mul(u128::from(self.digits)))
    }

    /// Whether this is at most `most` percent.
    pub fn at_most(self, most: u64) -> bool {
        u128::from(self.digits) <= u128::from(most) * 10u128.pow(self.decimals)
    }
}

/// As it was written, without the sign: `2.30`, `7` for `007`, `2` for `2.`.
impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scale = 10u64.pow(self.decimals);
        let (whole, fraction) = (self.digits / scale, self.digits % scale);
        match self.decimals {
            0 => write!(f, "{whole}"),
            _ => write!(
                f,
                "{whole}.{fraction:0width$}",
                width = self.decimals as usize
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering::{Equal, Greater, Less};

    fn percent(text: &str) -> Percent {
        Percent::parse(text).unwrap()
    }

    #[test]
    fn percentages_are_read_as_written_and_shown_so() {
        for (written, shown) in [
            ("2.30", "2.30"),
            ("0.000001", "0.000001"),
            ("007", "7"),
            ("2.", "2"),
            ("999999999", "999999999"),
            ("0", "0"),
        ] {
            assert_eq!(percent(written).to_string(), shown);
        }
        for bad in [
            "",
            ".5",
            "x",
            "+5",
            "-5",
            "1e2",
            "nan",
            "1.2.3",
            "0.1234567",
            "1000000000",
        ] {
            assert_eq!(Percent::parse(bad), None, "{bad}");
        }
    }

    /// Shares that binary floating point gets wrong: 33 of 3,000 is exactly
    /// 1.1% (3,000 times 1.1 comes out above 3,300), and 2^60 - 1 of 2^61
    /// is below half (as a double, 2^60 - 1 is 2^60).
    #[test]
    fn shares_are_compared_exactly() {
        assert_eq!(percent("1.1").compare_share(33, 3_000), Equal);
        assert_eq!(percent("1.1").compare_share(32, 3_000), Less);
        assert_eq!(percent("2.3").compare_share(2_300, 100_000), Equal);
        assert_eq!(percent("50").compare_share((1 << 60) - 1, 1 << 61), Less);
        assert_eq!(percent("50").compare_share((1 << 60) + 1, 1 << 61), Greater);
        let most = u128::from(u64::MAX) * 2;
        assert_eq!(percent("999999999.999999").compare_share(most, 1), Greater);
        assert_eq!(percent("0").compare_share(0, most), Equal);
    }

    #[test]
    fn a_bound_is_checked_exactly() {
        assert!(percent("100").at_most(100));
        assert!(percent("100.000000").at_most(100));
        assert!(!percent("100.000001").at_most(100));
        assert!(percent("0").at_most(0));
    }
}
