//! Per-function costs of one run, read from a callgrind file (ours or
//! Callgrind's) or a JSON summary: what `diff` and `check` compare.
//! Costs are `i128`, which hold both a summary's unsigned counts and a
//! callgrind file's signed costs (a difference file's may be negative)
//! without loss.

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use super::Setup;
use super::callgrind_file::{FunctionKey, ProfileFile};
use crate::cache::describe_cache;
use crate::output::json::Summary;
use crate::trace::lines::read_bounded;

/// The largest JSON summary read. A summary takes about 1.5 KB per
/// function with a cost (its self and inclusive costs and its calls), so
/// this is one of a run of some 700,000 functions; read, it takes about
/// five times its size in memory.
const MAX_SUMMARY: u64 = 1 << 30;

/// One function's self and inclusive costs, one value per event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionCosts {
    pub key: FunctionKey,
    pub self_cost: Vec<i128>,
    pub inclusive: Vec<i128>,
}

/// The calls from one function to another: indices into the run's
/// functions, and the calls' inclusive cost, one value per event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallCosts {
    pub caller: usize,
    pub callee: usize,
    pub inclusive: Vec<i128>,
}

/// The events, totals, functions and calls of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunCosts {
    pub events: Vec<String>,
    pub totals: Vec<i128>,
    pub functions: Vec<FunctionCosts>,
    /// Empty for a summary of a linegrind that did not list calls.
    pub calls: Vec<CallCosts>,
    /// The caches and back-dating the run was simulated with.
    pub setup: Setup,
    /// The parsed callgrind file, when the run came from one (it also has
    /// the call arcs).
    pub file: Option<ProfileFile<i64>>,
}

/// Why a run's costs cannot be read.
#[derive(Debug)]
pub struct LoadError {
    pub path: String,
    pub what: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.what)
    }
}

impl std::error::Error for LoadError {}

impl RunCosts {
    /// Reads `path`: a JSON summary when it starts with `{`, else a
    /// callgrind-format file, read as it streams by.
    pub fn load(path: &Path) -> Result<RunCosts, LoadError> {
        let error = |what: String| LoadError {
            path: path.display().to_string(),
            what,
        };
        let mut input = BufReader::new(File::open(path).map_err(|err| error(err.to_string()))?);
        let start = input.fill_buf().map_err(|err| error(err.to_string()))?;
        if Summary::is_json(start) {
            let text = read_bounded(input, MAX_SUMMARY).map_err(|err| error(err.to_string()))?;
            let Some(text) = text else {
                return Err(error(format!(
                    "a JSON file larger than {} MiB, more than linegrind reads as a summary \
                     (compare the runs' callgrind files instead)",
                    MAX_SUMMARY >> 20
                )));
            };
            let summary = Summary::read(&text).map_err(error)?;
            Ok(RunCosts::from_summary(&summary))
        } else {
            let file =
                ProfileFile::parse_without_lines(input).map_err(|err| error(err.to_string()))?;
            if file.events.is_empty() {
                return Err(error(
                    "neither a JSON summary nor a callgrind file (no `events:` line)".into(),
                ));
            }
            Ok(RunCosts::from_file(file))
        }
    }

    /// The costs a callgrind file states; inclusive costs as
    /// [`ProfileFile::inclusive`] computes them.
    pub fn from_file(file: ProfileFile<i64>) -> RunCosts {
        let wide = |costs: &[i64]| -> Vec<i128> { costs.iter().map(|&c| c.into()).collect() };
        let inclusive = file.inclusive();
        let functions = file
            .functions
            .iter()
            .zip(inclusive)
            .map(|(function, inclusive)| FunctionCosts {
                key: function.key.clone(),
                self_cost: wide(&function.self_cost),
                inclusive: wide(&inclusive),
            })
            .collect();
        let calls = file
            .calls
            .iter()
            .map(|call| CallCosts {
                caller: call.caller,
                callee: call.callee,
                inclusive: wide(&call.inclusive),
            })
            .collect();
        RunCosts {
            events: file.events.clone(),
            totals: wide(&file.totals),
            functions,
            calls,
            setup: file.setup.clone(),
            file: Some(file),
        }
    }

    /// The costs a JSON summary states.
    pub fn from_summary(summary: &Summary) -> RunCosts {
        let costs = |values: &crate::output::json::EventValues<u64>| -> Vec<i128> {
            summary
                .events
                .iter()
                .map(|event| values.get(event).into())
                .collect()
        };
        RunCosts {
            events: summary.events.clone(),
            totals: costs(&summary.totals),
            functions: summary
                .functions
                .iter()
                .map(|function| FunctionCosts {
                    // Trimmed as readers of callgrind files trim names, so
                    // that a name with blanks at an end lines up with the
                    // same run's callgrind file.
                    key: FunctionKey {
                        object: function.object.trim().to_string(),
                        file: function.file.trim().to_string(),
                        name: function.name.trim().to_string(),
                    },
                    self_cost: costs(&function.self_cost),
                    inclusive: costs(&function.inclusive),
                })
                .collect(),
            calls: summary
                .calls
                .iter()
                .map(|call| CallCosts {
                    caller: call.caller,
                    callee: call.callee,
                    inclusive: costs(&call.inclusive),
                })
                .collect(),
            setup: Setup {
                caches: [&summary.caches.i1, &summary.caches.d1, &summary.caches.ll]
                    .map(|cache| Some(describe_cache(cache.size, cache.line, cache.assoc))),
                backdate: Some(summary.caches.backdate),
                // A summary is of the whole run.
                part: None,
            },
            file: None,
        }
    }

    /// The index of `event`.
    pub fn event(&self, event: &str) -> Option<usize> {
        self.events.iter().position(|name| name == event)
    }
}
