//! Reading callgrind-format profiles, ours or Callgrind's: per-function self
//! costs, call arcs with counts and inclusive costs, and per-line costs.
//!
//! Costs are read as [`CostValue`]s: `u64` for a run's counts, `i64` where a
//! file may be a difference of two runs (`diff --out`), whose costs are
//! negative where the second run did better. Every sum the reader forms is
//! checked, so a file whose costs add up beyond their range is an error, not a
//! wrapped number.

use std::fmt;
use std::io::BufRead;
use std::str::FromStr;

use rustc_hash::FxHashMap;

use super::Setup;

mod parser;
mod whole;

/// A cost as a profile holds it: `u64` for the counts of a run, `i64` for
/// files that may hold differences.
pub trait CostValue:
    Copy + Default + PartialEq + Eq + fmt::Debug + fmt::Display + FromStr + TryFrom<u64>
{
    /// The costs the type holds, as messages name them.
    const RANGE: &'static str;
    /// `self + other`, or `None` past the type's range.
    fn checked_add(self, other: Self) -> Option<Self>;
    /// `self + other` modulo 2^64: the exact sum whenever the sum is in
    /// range, whatever the order of the terms.
    fn wrapping_add(self, other: Self) -> Self;
}

impl CostValue for u64 {
    const RANGE: &'static str = "0 to 2^64 - 1";

    fn checked_add(self, other: u64) -> Option<u64> {
        u64::checked_add(self, other)
    }

    fn wrapping_add(self, other: u64) -> u64 {
        u64::wrapping_add(self, other)
    }
}

impl CostValue for i64 {
    const RANGE: &'static str = "-2^63 to 2^63 - 1";

    fn checked_add(self, other: i64) -> Option<i64> {
        i64::checked_add(self, other)
    }

    fn wrapping_add(self, other: i64) -> i64 {
        i64::wrapping_add(self, other)
    }
}

/// Index into [`ProfileFile::functions`].
pub type FunctionIndex = usize;

/// A function: its name, the file `fl=` gave it, and its object.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionKey {
    pub object: String,
    pub file: String,
    pub name: String,
}

/// One function's totals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionEntry<C = u64> {
    pub key: FunctionKey,
    /// Self cost, per event.
    pub self_cost: Vec<C>,
}

/// All calls from one function to another, summed over call sites.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallEntry<C = u64> {
    pub caller: FunctionIndex,
    pub callee: FunctionIndex,
    pub count: u64,
    /// Inclusive cost of the calls, per event.
    pub inclusive: Vec<C>,
}

/// The self costs of one source file's lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileLines<C = u64> {
    pub file: String,
    /// Self cost per line number; line 0 for costs at no line.
    pub lines: FxHashMap<u64, Vec<C>>,
}

/// A parsed profile, its costs of type `C` (see [`CostValue`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProfileFile<C = u64> {
    pub cmd: Option<String>,
    pub events: Vec<String>,
    pub positions: Vec<String>,
    /// The `totals:` line, or else `summary:`, or else the sum of self costs.
    pub totals: Vec<C>,
    pub functions: Vec<FunctionEntry<C>>,
    pub calls: Vec<CallEntry<C>>,
    /// Self cost per source line, file by file; none when read without
    /// them ([`ProfileFile::parse_without_lines`]).
    pub lines: Vec<FileLines<C>>,
    /// The caches and back-dating, as the `desc:` lines tell them.
    pub setup: Setup,
}

/// A profile that cannot be read, with the line where it went wrong.
#[derive(Debug)]
pub struct ParseError {
    pub line: u64,
    pub what: String,
}

impl fmt::Display for ParseError {
    /// Line 0 is a file without lines: the error is the whole file's.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            0 => f.write_str(&self.what),
            line => write!(f, "line {line}: {}", self.what),
        }
    }
}

impl std::error::Error for ParseError {}

impl<C: CostValue> ProfileFile<C> {
    /// Parses a whole profile.
    pub fn parse(input: impl BufRead) -> Result<ProfileFile<C>, ParseError> {
        parser::parse(input, true)
    }

    /// Parses a profile without the self costs of its source lines, which
    /// only source annotation reads (they take most of the memory and
    /// half the time of reading a file that gives lines).
    pub fn parse_without_lines(input: impl BufRead) -> Result<ProfileFile<C>, ParseError> {
        parser::parse(input, false)
    }

    /// The index of the event called `name`.
    pub fn event(&self, name: &str) -> Option<usize> {
        self.events.iter().position(|event| event == name)
    }

    /// Inclusive cost of each function: its self cost plus the inclusive
    /// cost of its calls to other functions (recursive calls to itself are
    /// already inside them). The reader has checked that these sums fit in
    /// `C`, so adding modulo 2^64 gives them exactly, even when negative
    /// and positive differences add up in another order than the file's.
    pub fn inclusive(&self) -> Vec<Vec<C>> {
        let mut inclusive: Vec<Vec<C>> =
            self.functions.iter().map(|f| f.self_cost.clone()).collect();
        for call in &self.calls {
            if call.caller != call.callee {
                let into = &mut inclusive[call.caller];
                for (into, &cost) in into.iter_mut().zip(&call.inclusive) {
                    *into = into.wrapping_add(cost);
                }
            }
        }
        inclusive
    }
}
