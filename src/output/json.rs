//! The JSON summary of a simulation (`sim --json`), schema
//! `linegrind-summary` version 1, documented in `docs/json-summary.md`:
//! what CI keeps as a baseline and `check` and `diff` compare.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};

use rustc_hash::FxHashSet;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::byte_order_mark::without_bom;
use crate::cache::CacheGeometry;
use crate::cost::EventKind;
use crate::printable::{printable, shown};
use crate::profile::Profile;
use crate::report::ProfileFile;

use super::Source;

/// The schema name every summary carries.
pub const SCHEMA: &str = "linegrind-summary";
/// The schema version this linegrind writes and reads.
pub const VERSION: u32 = 1;

/// Costs by event name, in the order of the profile's events; written as a
/// JSON object. A summary made from a run names its events without a copy
/// per value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventValues<T>(pub Vec<(Cow<'static, str>, T)>);

impl<T: Copy + Default> EventValues<T> {
    /// The value of `event`, the default when absent.
    pub fn get(&self, event: &str) -> T {
        self.0
            .iter()
            .find(|(name, _)| name == event)
            .map_or_else(T::default, |(_, value)| *value)
    }
}

impl<T: Serialize> Serialize for EventValues<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for EventValues<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Entries<T> {
            type Value = EventValues<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of event names to values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(Cow<'static, str>, T)> = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, T>()? {
                    // JSON tools keep one of the two, not always the same.
                    if entries.iter().any(|(seen, _)| *seen == name) {
                        return Err(serde::de::Error::custom(format!(
                            "event `{}` given twice",
                            shown(name.as_bytes())
                        )));
                    }
                    entries.push((Cow::Owned(name), value));
                }
                Ok(EventValues(entries))
            }
        }
        deserializer.deserialize_map(Entries(std::marker::PhantomData))
    }
}

/// A whole summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Always [`VERSION`] for what this linegrind writes.
    pub version: u32,
    /// `linegrind-VERSION`.
    pub creator: String,
    pub trace: TraceInfo,
    pub caches: Caches,
    /// The events of the run, in Callgrind's order.
    pub events: Vec<String>,
    pub totals: EventValues<u64>,
    pub derived: Derived,
    /// Back-dating tree statistics, when back-dating was on.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tree: Option<Tree>,
    /// Every function with a cost, by object, file and name.
    pub functions: Vec<FunctionSummary>,
    /// Every call arc between them, by caller and callee (absent from
    /// summaries of earlier linegrinds).
    #[serde(default)]
    pub calls: Vec<CallSummary>,
}

/// What was simulated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceInfo {
    /// The trace file as given to `sim`.
    pub path: String,
    /// The command line the trace was recorded from, where it says.
    #[serde(default)]
    pub command: Option<String>,
    pub threads: u64,
    pub functions: u64,
    pub call_arcs: u64,
}

/// The cache configuration and the analysis options.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Caches {
    #[serde(rename = "I1")]
    pub i1: Geometry,
    #[serde(rename = "D1")]
    pub d1: Geometry,
    #[serde(rename = "LL")]
    pub ll: Geometry,
    pub cacheuse: bool,
    pub backdate: bool,
}

/// One cache: size in bytes, associativity, line size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Geometry {
    pub size: u64,
    pub assoc: u64,
    pub line: u64,
}

impl From<CacheGeometry> for Geometry {
    fn from(geometry: CacheGeometry) -> Geometry {
        Geometry {
            size: geometry.size(),
            assoc: u64::from(geometry.assoc()),
            line: u64::from(geometry.line_size()),
        }
    }
}

/// Figures computed from the totals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// Each miss event over the accesses it is a miss of (`I1mr` and
    /// `ILmr` over `Ir`, `D1mr` and `DLmr` over `Dr`, `D1mw` and `DLmw`
    /// over `Dw`), and `D1` and `LL` over all their accesses.
    pub miss_rate: EventValues<f64>,
    /// Each miss event per 1,000 instructions.
    pub misses_per_1000_instructions: EventValues<f64>,
    /// `SpLoss` over `Loaded` per level, in percent (with cache use only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub wasted_percent: Option<Wasted>,
}

/// Percent of the bytes loaded that were never used.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Wasted {
    #[serde(rename = "L1")]
    pub l1: f64,
    #[serde(rename = "LL")]
    pub ll: f64,
}

/// Back-dating tree statistics, as the callgrind file's `desc:` lines.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    /// 0 for a run without instructions, as schema version 1 has it a
    /// number.
    pub mean_nodes: f64,
    pub max_nodes: u64,
    pub nodes_created: u64,
}

/// One function: named as in the callgrind file; events with zero cost
/// are left out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionSummary {
    pub name: String,
    pub file: String,
    /// Empty when the trace names no objects.
    pub object: String,
    #[serde(rename = "self")]
    pub self_cost: EventValues<u64>,
    pub inclusive: EventValues<u64>,
}

/// The calls from one function to another, as the callgrind file's
/// `calls=` lines of that pair add up: both given as indices into
/// `functions`; events with zero cost are left out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallSummary {
    pub caller: usize,
    pub callee: usize,
    pub count: u64,
    pub inclusive: EventValues<u64>,
}

/// What serde_json says is wrong, and where. In its messages that quote
/// the input (an invalid type's string value, an unknown field's name)
/// the quoted part is escaped and cut, as a name of thousands of
/// characters would fill the screen; what it expected instead comes from
/// the summary's types, and this reader's own messages cut the names they
/// show.
fn json_error(err: &serde_json::Error) -> String {
    let message = err.to_string();
    let at = format!(" at line {} column {}", err.line(), err.column());
    let (what, at) = match message.strip_suffix(&at) {
        Some(what) => (what, at.as_str()),
        None => (message.as_str(), ""),
    };
    let quotes_input = what.starts_with("invalid ") || what.starts_with("unknown ");
    match what.rfind(", expected").filter(|_| quotes_input) {
        Some(tail) => {
            let (found, expected) = what.split_at(tail);
            format!("{}{}{at}", shown(found.as_bytes()), printable(expected))
        }
        None => format!("{}{at}", printable(what)),
    }
}

impl Summary {
    /// The summary of `profile`, simulated from `source`.
    pub fn new(profile: &Profile, source: &Source) -> Summary {
        let file = ProfileFile::from_profile(profile, source.cmd());
        let config = &profile.config;
        // The file's events, as the profile's kinds name them.
        let names: Vec<&'static str> = profile.events.kinds().iter().map(|k| k.name()).collect();
        let values = |costs: &[u64]| -> EventValues<u64> {
            EventValues(
                (names.iter().zip(costs))
                    .filter(|(_, value)| **value != 0)
                    .map(|(&name, &value)| (Cow::Borrowed(name), value))
                    .collect(),
            )
        };
        let inclusive = file.inclusive();
        let function_count = file.functions.len();
        // The functions with a cost, each with its index in the file.
        let mut kept: Vec<(usize, FunctionSummary)> = (file.functions.into_iter())
            .zip(&inclusive)
            .enumerate()
            .filter(|(_, (function, inclusive))| {
                function
                    .self_cost
                    .iter()
                    .chain(inclusive.iter())
                    .any(|&v| v != 0)
            })
            .map(|(index, (function, inclusive))| {
                let summary = FunctionSummary {
                    self_cost: values(&function.self_cost),
                    inclusive: values(inclusive),
                    name: function.key.name,
                    file: function.key.file,
                    object: function.key.object,
                };
                (index, summary)
            })
            .collect();
        kept.sort_by(|(_, a), (_, b)| {
            (&a.object, &a.file, &a.name).cmp(&(&b.object, &b.file, &b.name))
        });
        let mut listed_at = vec![None; function_count];
        for (at, (index, _)) in kept.iter().enumerate() {
            listed_at[*index] = Some(at);
        }
        // A call's ends have costs (the callee's instructions ran while it
        // was open), so both are listed.
        let mut calls: Vec<CallSummary> = file
            .calls
            .iter()
            .filter_map(|call| {
                Some(CallSummary {
                    caller: listed_at[call.caller]?,
                    callee: listed_at[call.callee]?,
                    count: call.count,
                    inclusive: values(&call.inclusive),
                })
            })
            .collect();
        calls.sort_by_key(|call| (call.caller, call.callee));
        let functions = kept.into_iter().map(|(_, function)| function).collect();
        Summary {
            schema: SCHEMA.to_string(),
            version: VERSION,
            creator: format!("linegrind-{}", env!("CARGO_PKG_VERSION")),
            trace: TraceInfo {
                path: source.trace.to_string(),
                command: source.command.map(str::to_string),
                threads: profile.threads,
                functions: profile.entered_functions() as u64,
                call_arcs: profile.called_arcs().count() as u64,
            },
            caches: Caches {
                i1: config.i1().into(),
                d1: config.d1().into(),
                ll: config.ll().into(),
                cacheuse: config.cache_use(),
                backdate: config.backdate(),
            },
            events: file.events,
            totals: EventValues(
                (names.iter().zip(&file.totals))
                    .map(|(&name, &value)| (Cow::Borrowed(name), value))
                    .collect(),
            ),
            derived: derived(profile),
            tree: profile.tree.as_ref().map(|tree| Tree {
                mean_nodes: tree.mean_nodes.unwrap_or(0.0),
                max_nodes: tree.max_nodes,
                nodes_created: tree.created_nodes,
            }),
            functions,
            calls,
        }
    }

    /// Writes the summary as pretty-printed JSON.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, self)?;
        writeln!(out)
    }

    /// Whether a file starting with `start` is JSON rather than a callgrind
    /// file: its first character is `{`, after blanks and the byte-order
    /// mark some editors save UTF-8 with.
    pub fn is_json(start: &[u8]) -> bool {
        without_bom(start).trim_ascii_start().starts_with(b"{")
    }

    /// Reads a summary, checking its schema and version.
    pub fn read(text: &[u8]) -> Result<Summary, String> {
        let text = without_bom(text);
        let mut summary: Summary = serde_json::from_slice(text).map_err(|err| json_error(&err))?;
        summary.escape_names();
        // Names as a message shows them: cut, as a name may be long.
        let cut = |text: &str| shown(text.as_bytes());
        if summary.schema != SCHEMA {
            return Err(format!(
                "not a linegrind summary (schema `{}`, expected `{SCHEMA}`)",
                cut(&summary.schema)
            ));
        }
        if summary.version != VERSION {
            return Err(format!(
                "summary version {} is not supported (this linegrind reads version {VERSION})",
                summary.version
            ));
        }
        for (at, event) in summary.events.iter().enumerate() {
            if summary.events[..at].contains(event) {
                return Err(format!("`events` lists `{}` twice", cut(event)));
            }
            if !summary.totals.0.iter().any(|(name, _)| name == event) {
                return Err(format!(
                    "`totals` has no `{}`, which `events` lists",
                    cut(event)
                ));
            }
        }
        let unlisted = |values: &EventValues<u64>| {
            values
                .0
                .iter()
                .find(|(name, _)| !summary.events.iter().any(|event| event == name))
                .map(|(name, _)| cut(name))
        };
        if let Some(event) = unlisted(&summary.totals) {
            return Err(format!(
                "`totals` has `{event}`, which `events` does not list"
            ));
        }
        // The writer gives each function once; a summary edited to give one
        // twice would have its costs added up unseen.
        let mut listed = FxHashSet::default();
        for function in &summary.functions {
            if !listed.insert((&function.object, &function.file, &function.name)) {
                return Err(format!(
                    "function `{}` of file `{}` in object `{}` is listed twice",
                    cut(&function.name),
                    cut(&function.file),
                    cut(&function.object)
                ));
            }
        }
        for function in &summary.functions {
            for (field, values) in [
                ("self", &function.self_cost),
                ("inclusive", &function.inclusive),
            ] {
                if let Some(event) = unlisted(values) {
                    return Err(format!(
                        "function `{}` has `{event}` in `{field}`, which `events` does not list",
                        cut(&function.name)
                    ));
                }
            }
        }
        let functions = summary.functions.len();
        for (at, call) in summary.calls.iter().enumerate() {
            if call.caller >= functions || call.callee >= functions {
                return Err(format!(
                    "call {at} is between functions {} and {}: `functions` lists {functions}",
                    call.caller, call.callee
                ));
            }
            if let Some(event) = unlisted(&call.inclusive) {
                return Err(format!(
                    "call {at} has `{event}` in `inclusive`, which `events` does not list"
                ));
            }
        }
        Ok(summary)
    }

    /// Control characters in names and events as their escapes, as names
    /// read from callgrind files have them.
    fn escape_names(&mut self) {
        let escape = |text: &mut String| {
            if let Cow::Owned(escaped) = printable(text) {
                *text = escaped;
            }
        };
        escape(&mut self.schema);
        self.events.iter_mut().for_each(escape);
        let values = self
            .functions
            .iter_mut()
            .flat_map(|function| [&mut function.self_cost, &mut function.inclusive])
            .chain(self.calls.iter_mut().map(|call| &mut call.inclusive));
        for values in std::iter::once(&mut self.totals).chain(values) {
            for (event, _) in &mut values.0 {
                if let Cow::Owned(escaped) = printable(event) {
                    *event = Cow::Owned(escaped);
                }
            }
        }
        for function in &mut self.functions {
            escape(&mut function.name);
            escape(&mut function.file);
            escape(&mut function.object);
        }
    }
}

fn derived(profile: &Profile) -> Derived {
    use EventKind::*;
    let t = &profile.totals;
    let ratio = |part: u64, whole: u64| {
        if whole == 0 {
            0.0
        } else {
            part as f64 / whole as f64
        }
    };
    let misses = [
        (I1mr, t[Ir]),
        (D1mr, t[Dr]),
        (D1mw, t[Dw]),
        (ILmr, t[Ir]),
        (DLmr, t[Dr]),
        (DLmw, t[Dw]),
    ];
    let mut miss_rate: Vec<(Cow<'static, str>, f64)> = misses
        .iter()
        .map(|&(kind, of)| (kind.name().into(), ratio(t[kind], of)))
        .collect();
    miss_rate.push(("D1".into(), ratio(t[D1mr] + t[D1mw], t[Dr] + t[Dw])));
    miss_rate.push((
        "LL".into(),
        ratio(t[ILmr] + t[DLmr] + t[DLmw], t[Ir] + t[Dr] + t[Dw]),
    ));
    let per_1000 = misses
        .iter()
        .map(|&(kind, _)| (kind.name().into(), 1000.0 * ratio(t[kind], t[Ir])))
        .collect();
    let wasted_percent = profile.events.has_cache_use().then(|| Wasted {
        l1: 100.0 * ratio(t[SpLoss1], t[Loaded1]),
        ll: 100.0 * ratio(t[SpLoss2], t[Loaded2]),
    });
    Derived {
        miss_rate: EventValues(miss_rate),
        misses_per_1000_instructions: EventValues(per_1000),
        wasted_percent,
    }
}
