//! Regression checks: how far each limited event may rise from a baseline
//! run to the current one, in total and for chosen functions (by their
//! inclusive cost).

use std::fmt;
use std::str::FromStr;

use super::diff::{Diff, FunctionDelta, delta};
use super::percent::{MAX_DECIMALS, Percent};
use crate::pattern::glob;

/// How much an event may rise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allowance {
    /// By this percentage of the baseline, kept as the decimal it was
    /// written in, so that a rise to exactly the limit is allowed: in
    /// binary fractions 2.3% of 100,000 falls below 2,300.
    Percent(Percent),
    /// By this much.
    Absolute(u64),
}

/// `EVENT=+N%` or `EVENT=+N` (the `+` may be left out).
#[derive(Clone, Debug, PartialEq)]
pub struct Limit {
    pub event: String,
    pub allowance: Allowance,
}

impl FromStr for Limit {
    type Err = String;

    fn from_str(text: &str) -> Result<Limit, String> {
        let usage = || {
            format!(
                "expected EVENT=+N% (N with at most {MAX_DECIMALS} decimals) or EVENT=+N, \
                 the + optional, found `{text}`"
            )
        };
        let (event, value) = text.split_once('=').ok_or_else(usage)?;
        let value = value.strip_prefix('+').unwrap_or(value);
        let allowance = match value.strip_suffix('%') {
            Some(percent) => Allowance::Percent(Percent::parse(percent).ok_or_else(usage)?),
            None if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                Allowance::Absolute(value.parse().map_err(|_| usage())?)
            }
            None => return Err(usage()),
        };
        if event.is_empty() {
            return Err(usage());
        }
        Ok(Limit {
            event: event.to_string(),
            allowance,
        })
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.allowance {
            Allowance::Percent(percent) => write!(f, "{}=+{percent}%", self.event),
            Allowance::Absolute(n) => write!(f, "{}=+{n}", self.event),
        }
    }
}

impl Limit {
    /// Whether going from `baseline` to `current` stays within the limit.
    /// A percentage is of the baseline's size (a difference file's costs
    /// may be negative); from a zero baseline any rise exceeds it.
    pub fn allows(&self, baseline: i128, current: i128) -> bool {
        let rise = delta(baseline, current);
        match self.allowance {
            Allowance::Absolute(n) => rise <= i128::from(n),
            Allowance::Percent(percent) => match u128::try_from(rise) {
                Ok(rise) => percent.compare_share(rise, baseline.unsigned_abs()).is_le(),
                Err(_) => true,
            },
        }
    }
}

/// One checked value.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    /// `None` for the totals, else the function's `file:name`.
    pub function: Option<String>,
    pub limit: Limit,
    pub baseline: i128,
    pub current: i128,
    pub exceeded: bool,
}

/// A check that cannot be made as asked.
#[derive(Debug, PartialEq, Eq)]
pub enum CheckError {
    UnknownEvent(String, Vec<String>),
    NoFunction(String),
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::UnknownEvent(event, events) => write!(
                f,
                "--limit names the event `{event}`, which the runs do not both have ({})",
                events.join(" ")
            ),
            CheckError::NoFunction(pattern) => write!(
                f,
                "--function `{pattern}` matches no function of either run"
            ),
        }
    }
}

impl std::error::Error for CheckError {}

/// Checks every limit on the totals and on the inclusive cost of every
/// function matching one of `functions` (glob patterns on the function
/// name or `file:name`).
pub fn check(
    diff: &Diff,
    limits: &[Limit],
    functions: &[String],
) -> Result<Vec<Checked>, CheckError> {
    let mut events = Vec::with_capacity(limits.len());
    for limit in limits {
        let at = diff
            .event(&limit.event)
            .ok_or_else(|| CheckError::UnknownEvent(limit.event.clone(), diff.events.clone()))?;
        events.push(at);
    }
    // Each pattern's functions by name, those of the first pattern first,
    // each function once.
    let mut matched: Vec<&FunctionDelta> = Vec::new();
    let mut taken = vec![false; diff.functions.len()];
    for pattern in functions {
        let mut matches: Vec<usize> = (0..diff.functions.len())
            .filter(|&at| {
                let function = &diff.functions[at];
                let qualified = format!("{}:{}", function.file, function.name);
                glob(pattern, &function.name) || glob(pattern, &qualified)
            })
            .collect();
        if matches.is_empty() {
            return Err(CheckError::NoFunction(pattern.clone()));
        }
        matches.retain(|&at| !std::mem::replace(&mut taken[at], true));
        matches.sort_by(|&a, &b| diff.functions[a].by_name(&diff.functions[b]));
        matched.extend(matches.iter().map(|&at| &diff.functions[at]));
    }
    let mut rows = Vec::new();
    for (limit, &at) in limits.iter().zip(&events) {
        let mut push = |function: Option<String>, baseline: i128, current: i128| {
            rows.push(Checked {
                function,
                limit: limit.clone(),
                baseline,
                current,
                exceeded: !limit.allows(baseline, current),
            });
        };
        push(None, diff.totals[0][at], diff.totals[1][at]);
        for function in &matched {
            push(
                Some(function.label()),
                function.inclusive[0][at],
                function.inclusive[1][at],
            );
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_and_allow_what_they_say() {
        let limit: Limit = "SpLoss1=+5%".parse().unwrap();
        assert_eq!(
            limit.allowance,
            Allowance::Percent(Percent::parse("5").unwrap())
        );
        assert!(limit.allows(1000, 1050));
        assert!(!limit.allows(1000, 1051));
        assert!(limit.allows(1000, 10));
        assert!(limit.allows(0, 0));
        assert!(!limit.allows(0, 1));
        assert!(limit.allows(-1000, -950));
        assert!(!limit.allows(-1000, -949));
        let absolute: Limit = "Ir=100".parse().unwrap();
        assert_eq!(absolute.allowance, Allowance::Absolute(100));
        assert!(absolute.allows(5, 105));
        assert!(!absolute.allows(5, 106));
        assert_eq!(absolute.to_string(), "Ir=+100");
        let bad = [
            "Ir",
            "=5%",
            "Ir=+x%",
            "Ir=-5%",
            "Ir=5.5",
            "Ir=+nan%",
            "Ir=++5",
            "Ir=-0%",
            "Ir=+",
            "Ir=%",
            "Ir=.5%",
            "Ir=1e2%",
            "Ir=0.1234567%",
            "Ir=1000000000%",
        ];
        for bad in bad {
            assert!(bad.parse::<Limit>().is_err(), "{bad}");
        }
        let written = [
            "Ir=+2.30%",
            "Ir=+0.000001%",
            "Ir=+007%",
            "Ir=+2.%",
            "Ir=+999999999%",
        ];
        let shown = [
            "Ir=+2.30%",
            "Ir=+0.000001%",
            "Ir=+7%",
            "Ir=+2%",
            "Ir=+999999999%",
        ];
        for (written, shown) in written.into_iter().zip(shown) {
            assert_eq!(written.parse::<Limit>().unwrap().to_string(), shown);
        }
    }

    #[test]
    fn a_rise_to_exactly_a_decimal_percentage_is_allowed() {
        // Each of these baselines times its percentage is a whole number
        // that binary floating point computes a little too small.
        for (limit, baseline, rise) in [
            ("Ir=2.3%", 100_000, 2_300),
            ("Ir=4.1%", 3_000, 123),
            ("Ir=0.7%", 100_000, 700),
            ("Ir=9.2%", 100_000, 9_200),
        ] {
            let limit: Limit = limit.parse().unwrap();
            assert!(limit.allows(baseline, baseline + rise), "{limit}");
            assert!(!limit.allows(baseline, baseline + rise + 1), "{limit}");
        }
        // Past 2^53, where a float lets a little more through.
        let limit: Limit = "Ir=1%".parse().unwrap();
        let baseline = 1i128 << 60;
        let exact = baseline / 100; // 2^60 is not a multiple of 100
        assert!(limit.allows(baseline, baseline + exact));
        assert!(!limit.allows(baseline, baseline + exact + 1));
        // The largest costs a run can hold, either way.
        let most = i128::from(u64::MAX);
        let limit: Limit = "Ir=999999999.999999%".parse().unwrap();
        assert!(limit.allows(most / 2, most));
        assert!(!limit.allows(1, most));
        assert!(!"Ir=0%".parse::<Limit>().unwrap().allows(most, most + 1));
    }

    /// Patterns that match the same functions list each once, where the
    /// first pattern matching it puts it, each pattern's new ones by name.
    #[test]
    fn each_function_is_checked_once_in_the_order_of_the_patterns() {
        let function = |name: &str| FunctionDelta {
            file: "a.c".into(),
            name: name.into(),
            object: None,
            self_cost: [vec![1], vec![1]],
            inclusive: [vec![1], vec![1]],
        };
        let diff = Diff {
            events: vec!["Ir".into()],
            unshared: [vec![], vec![]],
            unlike: vec![],
            parts: [None, None],
            totals: [vec![3], vec![3]],
            functions: ["main", "b2", "a", "b1"].map(function).into(),
        };
        let limits = ["Ir=+0".parse().unwrap()];
        let patterns = ["b*", "a.c:*", "b1"].map(String::from);
        let rows = check(&diff, &limits, &patterns).unwrap();
        let listed: Vec<_> = rows.iter().map(|row| row.function.as_deref()).collect();
        let functions = ["a.c:b1", "a.c:b2", "a.c:a", "a.c:main"].map(Some);
        assert_eq!(listed, [&[None][..], &functions].concat());
    }
}
