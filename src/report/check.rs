//! Regression checks: how far each limited event may rise from a baseline
//! run to the current one, in total and for chosen functions (by their
//! inclusive cost).

use std::fmt;
use std::str::FromStr;

use super::diff::{Diff, FunctionDelta, delta};
use crate::pattern::glob;

/// How much an event may rise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Allowance {
    /// By this many percent of the baseline.
    Percent(f64),
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
        let usage = || format!("expected EVENT=+N% or EVENT=+N, found `{text}`");
        let (event, value) = text.split_once('=').ok_or_else(usage)?;
        let value = value.strip_prefix('+').unwrap_or(value);
        let allowance = match value.strip_suffix('%') {
            Some(percent) => Allowance::Percent(
                percent
                    .parse::<f64>()
                    .ok()
                    .filter(|p| p.is_finite() && *p >= 0.0)
                    .ok_or_else(usage)?,
            ),
            None => Allowance::Absolute(value.parse().map_err(|_| usage())?),
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
            Allowance::Percent(p) => write!(f, "{}=+{p}%", self.event),
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
            Allowance::Percent(p) => rise as f64 <= baseline.unsigned_abs() as f64 * p / 100.0,
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
    let mut matched: Vec<&FunctionDelta> = Vec::new();
    for pattern in functions {
        let mut any = false;
        for function in &diff.functions {
            let qualified = format!("{}:{}", function.file, function.name);
            if glob(pattern, &function.name) || glob(pattern, &qualified) {
                any = true;
                if !matched.iter().any(|m| std::ptr::eq(*m, function)) {
                    matched.push(function);
                }
            }
        }
        if !any {
            return Err(CheckError::NoFunction(pattern.clone()));
        }
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
                Some(format!("{}:{}", function.file, function.name)),
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
        assert_eq!(limit.allowance, Allowance::Percent(5.0));
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
        for bad in ["Ir", "=5%", "Ir=+x%", "Ir=-5%", "Ir=5.5", "Ir=+nan%"] {
            assert!(bad.parse::<Limit>().is_err(), "{bad}");
        }
    }
}
