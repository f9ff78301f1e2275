//! The difference of two runs, function by function, as cg_diff computes
//! it for Cachegrind files: names line up after optional rewrites (a
//! function renamed between builds, a file moved), and the difference can
//! be written as a callgrind file of its own (B minus A).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;

use regex::Regex;

use crate::output::{NameIds, function_identity, object_file_name, one_line};
use crate::printable::printable;

use super::callgrind_file::{FunctionKey, ProfileFile};
use super::run_costs::RunCosts;
use super::setup::Unlike;

/// A `s/REGEX/REPLACEMENT/` rewrite of names, with a trailing `g` to
/// replace every match (cg_diff's `--mod-funcname`, `--mod-filename`).
/// In the replacement, `$1`, `${1}` and `\1` are the first group, as in
/// Perl, which cg_diff runs them in (`$1_x` is the group and `_x`), `${name}`
/// a named group and `$$` a dollar sign. As in sed, the character
/// after `s` is the delimiter (`s#/usr/#/#` rewrites paths), and a
/// delimiter inside a part is written with a backslash (`s/\//:/`).
#[derive(Clone, Debug)]
pub struct Rewrite {
    regex: Regex,
    replacement: String,
    all: bool,
}

impl FromStr for Rewrite {
    type Err = String;

    fn from_str(text: &str) -> Result<Rewrite, String> {
        let usage = || {
            format!("expected `s/REGEX/REPLACEMENT/` or `s/REGEX/REPLACEMENT/g`, found `{text}`")
        };
        let mut chars = text.chars();
        let (Some('s'), Some(delimiter)) = (chars.next(), chars.next()) else {
            return Err(usage());
        };
        if delimiter.is_alphanumeric() || delimiter.is_whitespace() || delimiter == '\\' {
            return Err(usage());
        }
        let parts = split_unescaped(chars.as_str(), delimiter);
        let [pattern, replacement, flags] = &parts[..] else {
            return Err(usage());
        };
        let all = match flags.as_str() {
            "" => false,
            "g" => true,
            _ => return Err(usage()),
        };
        let regex = Regex::new(pattern).map_err(|err| format!("bad regex in `{text}`: {err}"))?;
        let replacement = expansion(replacement, &regex)
            .map_err(|err| format!("bad replacement in `{text}`: {err}"))?;
        Ok(Rewrite {
            regex,
            replacement,
            all,
        })
    }
}

/// `replacement` in the `regex` crate's terms (`${1}`, `${name}`, `$$`),
/// every group it refers to checked against `regex`: a reference to no
/// group would otherwise expand to nothing without a word.
fn expansion(replacement: &str, regex: &Regex) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = replacement;
    while let Some(at) = rest.find(['$', '\\']) {
        out.push_str(&rest[..at]);
        let sign = &rest[at..at + 1];
        let after = &rest[at + 1..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let (group, taken) = match (sign, after.chars().next()) {
            // `\1` is one digit, as in sed and Perl; `$12` all of them.
            ("\\", Some(c)) if c.is_ascii_digit() => (Some(&after[..1]), 1),
            ("$", _) if digits > 0 => (Some(&after[..digits]), digits),
            ("$", Some('{')) => match after.find('}') {
                Some(end) => (Some(&after[1..end]), end + 1),
                None => return Err("`${` without its `}`".to_string()),
            },
            ("$", Some('$')) => {
                out.push_str("$$");
                rest = &after[1..];
                continue;
            }
            ("$", Some(c)) if c.is_ascii_alphabetic() || c == '_' => {
                let len = after.len()
                    - after
                        .trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_')
                        .len();
                (Some(&after[..len]), len)
            }
            ("$", _) => {
                out.push_str("$$");
                rest = after;
                continue;
            }
            _ => (None, 0),
        };
        match group {
            Some(group) => {
                let known = match group.parse::<usize>() {
                    Ok(number) => number < regex.captures_len(),
                    Err(_) => regex.capture_names().flatten().any(|name| name == group),
                };
                if !known {
                    return Err(format!("the regex has no group `{group}`"));
                }
                out.push_str(&format!("${{{group}}}"));
            }
            None => out.push_str(sign),
        }
        rest = &after[taken..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `text` split at every `delimiter` not preceded by a backslash; an
/// escaped delimiter stands for itself, other escapes stay as they are.
fn split_unescaped(text: &str, delimiter: char) -> Vec<String> {
    let mut parts = Vec::new();
    let mut part = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&delimiter) => {
                part.push(delimiter);
                chars.next();
            }
            '\\' => {
                part.push(c);
                part.extend(chars.next());
            }
            c if c == delimiter => parts.push(std::mem::take(&mut part)),
            c => part.push(c),
        }
    }
    parts.push(part);
    parts
}

impl Rewrite {
    /// `text` rewritten, with any control or invisible character the
    /// replacement brought in escaped, as in the names it rewrites.
    pub fn apply(&self, text: &str) -> String {
        let rewritten = if self.all {
            self.regex.replace_all(text, self.replacement.as_str())
        } else {
            self.regex.replace(text, self.replacement.as_str())
        };
        printable(&rewritten).into_owned()
    }
}

/// Rewrites applied to both runs' names before they are lined up.
#[derive(Clone, Debug, Default)]
pub struct Renames {
    pub functions: Vec<Rewrite>,
    pub files: Vec<Rewrite>,
}

impl Renames {
    /// A function's file and name after the rewrites.
    fn rename(&self, file: &str, name: &str) -> (String, String) {
        let file = self.files.iter().fold(file.to_string(), |f, r| r.apply(&f));
        let name = self
            .functions
            .iter()
            .fold(name.to_string(), |n, r| r.apply(&n));
        (file, name)
    }
}

/// Where a function lines up: its file and name after the rewrites, and
/// the file name of its object where those are not enough.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    file: String,
    name: String,
    object: Option<String>,
}

/// Where the functions of two runs (each run's function keys) line up, in
/// the runs' order: by file and name after the rewrites, objects left out
/// (a rebuilt program lives elsewhere); and by the file name of their
/// object too where one run has that file and name in objects of
/// different names (`(below main)` in file `???` of both an executable and
/// the C library, without debug information), which would otherwise be one
/// function calling itself through others, its inclusive cost counted
/// twice.
fn line_up(renames: &Renames, runs: [Vec<&FunctionKey>; 2]) -> [Vec<Key>; 2] {
    let renamed = runs.map(|run| {
        run.into_iter()
            .map(|key| {
                (
                    renames.rename(&key.file, &key.name),
                    object_file_name(&key.object),
                )
            })
            .collect::<Vec<_>>()
    });
    // The files and names lined up by object too.
    let mut by_object = HashSet::new();
    for run in &renamed {
        let mut objects: HashMap<&(String, String), &str> = HashMap::new();
        for (pair, object) in run {
            if *objects.entry(pair).or_insert(object) != *object {
                by_object.insert(pair.clone());
            }
        }
    }
    renamed.map(|run| {
        run.into_iter()
            .map(|(pair, object)| {
                let object = by_object.contains(&pair).then(|| object.to_string());
                let (file, name) = pair;
                Key { file, name, object }
            })
            .collect()
    })
}

/// One function in either run; costs are zero in a run without it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionDelta {
    pub file: String,
    pub name: String,
    /// Its object's file name, where another function of either run has
    /// the same file and name in another object.
    pub object: Option<String>,
    pub self_cost: [Vec<i128>; 2],
    pub inclusive: [Vec<i128>; 2],
}

impl FunctionDelta {
    /// Orders functions by name, file and object: how `diff` and `check`
    /// list functions that nothing else orders, the same from callgrind
    /// files as from JSON summaries, which list functions differently.
    pub fn by_name(&self, other: &FunctionDelta) -> std::cmp::Ordering {
        (&self.name, &self.file, &self.object).cmp(&(&other.name, &other.file, &other.object))
    }

    /// Its file, and its object's file name where it is lined up by it:
    /// `file [object]`, as `report` gives a function's file.
    pub fn place(&self) -> String {
        format!("{}{}", self.file, self.object_suffix())
    }

    /// `file:name`, and its object's file name where it is lined up by it.
    pub fn label(&self) -> String {
        format!("{}:{}{}", self.file, self.name, self.object_suffix())
    }

    /// ` [object]` where it is lined up by its object, else nothing.
    fn object_suffix(&self) -> String {
        self.object
            .as_ref()
            .map(|object| format!(" [{object}]"))
            .unwrap_or_default()
    }
}

/// Two runs lined up, over the events both have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff {
    pub events: Vec<String>,
    /// The events only A has, and those only B has: not compared.
    pub unshared: [Vec<String>; 2],
    /// The settings A and B were simulated with differently.
    pub unlike: Vec<Unlike>,
    /// For A and B, the part of its run each file holds when it is a later
    /// one (Callgrind's `part:` past 1).
    pub parts: [Option<u64>; 2],
    pub totals: [Vec<i128>; 2],
    /// Every function of either run, in order of first appearance (A, then
    /// B).
    pub functions: Vec<FunctionDelta>,
}

/// The runs share no event.
#[derive(Debug)]
pub struct NoCommonEvents;

impl fmt::Display for NoCommonEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the two runs have no event in common")
    }
}

impl std::error::Error for NoCommonEvents {}

impl Diff {
    /// Lines up `a` and `b` after `renames`.
    pub fn new(a: &RunCosts, b: &RunCosts, renames: &Renames) -> Result<Diff, NoCommonEvents> {
        let events = events_where(&a.events, |event| b.event(event).is_some());
        if events.is_empty() {
            return Err(NoCommonEvents);
        }
        let runs = [a, b];
        // Each common event's index in either run, looked up once.
        let columns = runs.map(|run| {
            events
                .iter()
                .map(|event| run.event(event).expect("a common event"))
                .collect::<Vec<usize>>()
        });
        let pick = |side: usize, costs: &[i128]| -> Vec<i128> {
            columns[side].iter().map(|&at| costs[at]).collect()
        };
        let keys = line_up(
            renames,
            runs.map(|run| run.functions.iter().map(|f| &f.key).collect()),
        );
        let mut functions: Vec<FunctionDelta> = Vec::new();
        let mut index: HashMap<Key, usize> = HashMap::new();
        for (side, (run, keys)) in runs.iter().zip(keys).enumerate() {
            // Where each function of the run is lined up.
            let mut lined_up = Vec::with_capacity(run.functions.len());
            for (function, key) in run.functions.iter().zip(keys) {
                let at = *index.entry(key.clone()).or_insert_with(|| {
                    let zero = vec![0; events.len()];
                    functions.push(FunctionDelta {
                        file: key.file,
                        name: key.name,
                        object: key.object,
                        self_cost: [zero.clone(), zero.clone()],
                        inclusive: [zero.clone(), zero],
                    });
                    functions.len() - 1
                });
                let entry = &mut functions[at];
                add(&mut entry.self_cost[side], &pick(side, &function.self_cost));
                add(&mut entry.inclusive[side], &pick(side, &function.inclusive));
                lined_up.push(at);
            }
            // Functions lined up as one (renamed alike, as `fib'2` and
            // `fib`) are one: the cost of calls from one to another, which
            // both inclusive costs hold, counts once.
            for call in &run.calls {
                let at = lined_up[call.caller];
                if call.caller != call.callee && at == lined_up[call.callee] {
                    subtract(
                        &mut functions[at].inclusive[side],
                        &pick(side, &call.inclusive),
                    );
                }
            }
        }
        let unshared = [
            events_where(&a.events, |event| b.event(event).is_none()),
            events_where(&b.events, |event| a.event(event).is_none()),
        ];
        Ok(Diff {
            totals: [pick(0, &a.totals), pick(1, &b.totals)],
            events,
            unshared,
            unlike: a.setup.unlike(&b.setup),
            parts: [a.setup.later_part(), b.setup.later_part()],
            functions,
        })
    }

    /// The index of `event`.
    pub fn event(&self, event: &str) -> Option<usize> {
        self.events.iter().position(|name| name == event)
    }
}

/// The events of `a` that pass `keep`, in `a`'s order.
fn events_where(a: &[String], keep: impl Fn(&str) -> bool) -> Vec<String> {
    a.iter().filter(|event| keep(event)).cloned().collect()
}

/// Adds `costs` to `into`. The costs are 64-bit numbers summed over
/// fewer than 2^63 functions: an `i128` holds any such sum.
fn add(into: &mut [i128], costs: &[i128]) {
    for (into, cost) in into.iter_mut().zip(costs) {
        *into += cost;
    }
}

/// Takes `costs` from `from`.
fn subtract(from: &mut [i128], costs: &[i128]) {
    for (from, cost) in from.iter_mut().zip(costs) {
        *from -= cost;
    }
}

/// `b - a`.
pub fn delta(a: i128, b: i128) -> i128 {
    b - a
}

/// Whose cost a difference is.
enum Holder<'a> {
    Total,
    Function(&'a str),
    Call(&'a str, &'a str),
}

/// A difference a callgrind file cannot hold: a cost that differs by more
/// than 64 bits hold (what, and by how much), or calls that renames made
/// one with more than 2^64 - 1 calls in all (caller, callee, count).
#[derive(Debug)]
pub enum BeyondRange {
    Cost { what: String, difference: i128 },
    Calls(String, String, u128),
}

impl fmt::Display for BeyondRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BeyondRange::Cost { what, difference } => write!(
                f,
                "{what} differs by {difference}, beyond the 64-bit signed costs a callgrind \
                 file holds"
            ),
            BeyondRange::Calls(caller, callee, count) => write!(
                f,
                "the calls {caller} -> {callee}, made one by the renames, number {count}, \
                 beyond the 64-bit counts a callgrind file holds"
            ),
        }
    }
}

impl std::error::Error for BeyondRange {}

/// B minus A as a callgrind file holds it: each function's self cost
/// difference and each call's inclusive difference (with B's call count,
/// or A's for a call only A made: callgrind_annotate reads the cost after
/// a count of 0 as the caller's own), over the events both files have.
pub struct DiffFile {
    events: Vec<String>,
    /// Per function: its key, its object (B's when in both), its self cost.
    functions: Vec<(Key, String, Vec<i128>)>,
    /// Per call: caller, callee (indices into `functions`), A's and B's
    /// counts, the inclusive cost.
    calls: Vec<(usize, usize, [u128; 2], Vec<i128>)>,
    totals: Vec<i128>,
}

impl DiffFile {
    /// The difference of `b` and `a`, or why a callgrind file cannot hold
    /// it: a difference beyond the 64-bit signed costs readers take.
    pub fn new(
        a: &ProfileFile<i64>,
        b: &ProfileFile<i64>,
        renames: &Renames,
    ) -> Result<DiffFile, BeyondRange> {
        let events = events_where(&a.events, |event| b.event(event).is_some());
        let pick = |file: &ProfileFile<i64>, costs: &[i64]| -> Vec<i128> {
            events
                .iter()
                .map(|event| file.event(event).map_or(0, |at| i128::from(costs[at])))
                .collect()
        };
        let keys = line_up(
            renames,
            [a, b].map(|file| file.functions.iter().map(|f| &f.key).collect()),
        );
        let mut functions: Vec<(Key, String, Vec<i128>)> = Vec::new();
        let mut function_at: HashMap<Key, usize> = HashMap::new();
        let mut calls: Vec<(usize, usize, [u128; 2], Vec<i128>)> = Vec::new();
        let mut call_at: HashMap<(usize, usize), usize> = HashMap::new();
        for (side, (file, keys)) in [a, b].into_iter().zip(keys).enumerate() {
            // B minus A.
            let sign: i128 = if side == 0 { -1 } else { 1 };
            let mut ids = Vec::with_capacity(file.functions.len());
            for (function, key) in file.functions.iter().zip(keys) {
                let at = *function_at.entry(key.clone()).or_insert_with(|| {
                    functions.push((key, function.key.object.clone(), vec![0; events.len()]));
                    functions.len() - 1
                });
                if side == 1 {
                    functions[at].1 = function.key.object.clone();
                }
                for (sum, value) in functions[at]
                    .2
                    .iter_mut()
                    .zip(pick(file, &function.self_cost))
                {
                    *sum += sign * value;
                }
                ids.push(at);
            }
            for call in &file.calls {
                let key = (ids[call.caller], ids[call.callee]);
                let at = *call_at.entry(key).or_insert_with(|| {
                    calls.push((key.0, key.1, [0; 2], vec![0; events.len()]));
                    calls.len() - 1
                });
                // Calls that the rewrites made one add up.
                calls[at].2[side] += u128::from(call.count);
                for (sum, value) in calls[at].3.iter_mut().zip(pick(file, &call.inclusive)) {
                    *sum += sign * value;
                }
            }
        }
        let totals: Vec<i128> = pick(b, &b.totals)
            .iter()
            .zip(pick(a, &a.totals))
            .map(|(b, a)| b - a)
            .collect();
        let diff = DiffFile {
            events,
            functions,
            calls,
            totals,
        };
        diff.check_range()?;
        Ok(diff)
    }

    /// Fails on the first difference outside the signed 64-bit range.
    fn check_range(&self) -> Result<(), BeyondRange> {
        let beyond = |costs: &[i128]| costs.iter().position(|&v| i64::try_from(v).is_err());
        let name = |at: usize| &self.functions[at].0.name;
        let named = std::iter::once((Holder::Total, &self.totals))
            .chain(
                self.functions
                    .iter()
                    .map(|(key, _, costs)| (Holder::Function(&key.name), costs)),
            )
            .chain(
                self.calls
                    .iter()
                    .map(|call| (Holder::Call(name(call.0), name(call.1)), &call.3)),
            );
        for (cost, costs) in named {
            if let Some(at) = beyond(costs) {
                let what = match cost {
                    Holder::Total => format!("the total {}", self.events[at]),
                    Holder::Function(function) => format!("{} of {function}", self.events[at]),
                    Holder::Call(caller, callee) => {
                        format!("{} of the call {caller} -> {callee}", self.events[at])
                    }
                };
                return Err(BeyondRange::Cost {
                    what,
                    difference: costs[at],
                });
            }
        }
        for &(caller, callee, counts, _) in &self.calls {
            if let Some(&count) = counts.iter().find(|&&count| count > u128::from(u64::MAX)) {
                let (caller, callee) = (name(caller).clone(), name(callee).clone());
                return Err(BeyondRange::Calls(caller, callee, count));
            }
        }
        Ok(())
    }

    /// Writes the difference as a callgrind file, at line 0.
    /// callgrind_annotate reads it; negative costs are improvements (which
    /// KCachegrind, reading costs as unsigned numbers, does not take).
    pub fn write(&self, out: &mut dyn Write, cmd: &str) -> io::Result<()> {
        let costs =
            |values: &[i128]| -> String { values.iter().map(|v| format!(" {v}")).collect() };
        writeln!(out, "# callgrind format")?;
        writeln!(out, "version: 1")?;
        writeln!(out, "creator: linegrind-{} diff", env!("CARGO_PKG_VERSION"))?;
        writeln!(out, "cmd: {}", one_line(cmd))?;
        writeln!(
            out,
            "desc: Difference: second profile minus first, per function"
        )?;
        writeln!(out, "positions: line")?;
        writeln!(out, "events: {}", self.events.join(" "))?;
        writeln!(out, "summary:{}", costs(&self.totals))?;
        let mut calls_from: Vec<Vec<usize>> = vec![Vec::new(); self.functions.len()];
        for (at, call) in self.calls.iter().enumerate() {
            calls_from[call.0].push(at);
        }
        let mut names = NameIds::default();
        let identity = |key: &Key, object: &str| function_identity(&key.name, &key.file, object);
        for (at, (key, object, self_delta)) in self.functions.iter().enumerate() {
            let changed_calls: Vec<usize> = calls_from[at]
                .iter()
                .copied()
                .filter(|&call| self.calls[call].3.iter().any(|&v| v != 0))
                .collect();
            if self_delta.iter().all(|&v| v == 0) && changed_calls.is_empty() {
                continue;
            }
            writeln!(out)?;
            if !object.is_empty() {
                names.write(out, "ob", "ob", object.clone(), object)?;
            }
            names.write(out, "fl", "fl", key.file.clone(), &key.file)?;
            names.write(out, "fn", "fn", identity(key, object), &key.name)?;
            writeln!(out, "0{}", costs(self_delta))?;
            for call in changed_calls {
                let (_, callee, [count_a, count_b], inclusive) = &self.calls[call];
                let count = if *count_b > 0 { count_b } else { count_a };
                // `cob=` and `cfi=` only where they change, as Callgrind
                // writes them (see the callgrind writer's `call`).
                let (callee_key, callee_object, _) = &self.functions[*callee];
                if callee_object != object {
                    names.write(out, "cob", "ob", callee_object.clone(), callee_object)?;
                }
                if callee_key.file != key.file {
                    names.write(out, "cfi", "fl", callee_key.file.clone(), &callee_key.file)?;
                }
                let callee_identity = identity(callee_key, callee_object);
                names.write(out, "cfn", "fn", callee_identity, &callee_key.name)?;
                writeln!(out, "calls={count} 0")?;
                writeln!(out, "0{}", costs(inclusive))?;
            }
        }
        writeln!(out, "\ntotals:{}", costs(&self.totals))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_are_sed_like() {
        let rewrite: Rewrite = "s/prog[0-9]+/progN/".parse().unwrap();
        assert_eq!(rewrite.apply("prog12.c prog3.c"), "progN.c prog3.c");
        let all: Rewrite = "s/[0-9]+/N/g".parse().unwrap();
        assert_eq!(all.apply("a1b22"), "aNbN");
        let group: Rewrite = "s/(.*)_v[0-9]/$1/".parse().unwrap();
        assert_eq!(group.apply("gather_v2"), "gather");
        // Groups as Perl and sed write them, followed by a name's letters.
        for (rewrite, expected) in [
            ("s/(.*)_v[0-9]/$1_x/", "gather_x"),
            (r"s/(.*)_v[0-9]/\1_x/", "gather_x"),
            ("s/(.*)_v[0-9]/${1}_x/", "gather_x"),
            ("s/(?P<base>.*)_v[0-9]/${base}_x/", "gather_x"),
            ("s/(?P<base>.*)_v[0-9]/$base/", "gather"),
            ("s/_v([0-9])/$$$1/", "gather$2"),
            ("s/_v/ costs $ /", "gather costs $ 2"),
            (r"s/_v/\t/", r"gather\t2"),
            // A control character typed into the replacement is escaped.
            ("s/_v/\u{1b}[2J\n/", r"gather\u{1b}[2J\n2"),
            ("s/(g)(a)(t)(h)(e)(r)(_)(v)(2)(x?)/$10$1/", "g"),
            // A name ends at the first character no name has.
            ("s/(?P<base>.*)_v[0-9]/$base-x/", "gather-x"),
            // A `$` before a group's backslash is a `$`.
            (r"s/_(v)2/$\1/", "gather$v"),
            // An escaped delimiter in the replacement stands for itself.
            (r"s/_/\//", "gather/v2"),
        ] {
            let rewrite: Rewrite = rewrite.parse().unwrap();
            assert_eq!(rewrite.apply("gather_v2"), expected, "{rewrite:?}");
        }
        for (rewrite, error) in [
            ("s/(.*)_v/$2/", "no group `2`"),
            (r"s/(.*)_v/\2/", "no group `2`"),
            ("s/(.*)_v/$name/", "no group `name`"),
            ("s/(.*)_v/${1/", "without its `}`"),
        ] {
            let err = rewrite.parse::<Rewrite>().unwrap_err();
            assert!(err.contains(error), "{rewrite}: {err}");
        }
        assert!("prog/progN/".parse::<Rewrite>().is_err());
        // Paths: another delimiter, or the delimiter escaped.
        let paths: Rewrite = "s#^\\./elf/\\./#./#".parse().unwrap();
        assert_eq!(paths.apply("./elf/./elf/rtld.c"), "./elf/rtld.c");
        let escaped: Rewrite = r"s/\//:/g".parse().unwrap();
        assert_eq!(escaped.apply("a/b/c"), "a:b:c");
        let kept: Rewrite = r"s/\d+\.c/N.c/".parse().unwrap();
        assert_eq!(kept.apply("x12.c"), "xN.c");
        assert!("sa/b/".parse::<Rewrite>().is_err());
        // Neither letters nor white space delimit.
        assert!("sxaxbx".parse::<Rewrite>().is_err());
        assert!("s a b ".parse::<Rewrite>().is_err());
        assert!("s/a/b".parse::<Rewrite>().is_err());
        assert!("s/a/b/x".parse::<Rewrite>().is_err());
        assert!(
            "s/(/b/"
                .parse::<Rewrite>()
                .unwrap_err()
                .contains("bad regex")
        );
    }
}
