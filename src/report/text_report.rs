//! `linegrind report`: a callgrind-format profile as text. A flat profile
//! of the top functions by a chosen event (inclusive and self, with
//! percentages of the total), or call trees top-down from the program's
//! roots or bottom-up from the top functions, and the source lines of the
//! top functions with their costs.
//!
//! The profile's costs are signed: a difference file (`diff --out`) is
//! reported like any other, negative costs being improvements. Ranking,
//! thresholds and call orders go by the size of a cost, which for an
//! ordinary profile is the cost itself.

use std::io::{self, Write};
use std::path::PathBuf;

use super::callgrind_file::{FunctionIndex, ProfileFile};
use super::percent::Percent;
use super::signed_number::grouped_signed;
use super::source_annotation::write_annotated_sources;
use super::tree_view::{write_callee_tree, write_caller_trees};
use crate::output::table::{Align, Cell, Style, Table};
use crate::output::{object_file_name, percent};
use crate::printable::printable;

/// Which way call trees go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeDirection {
    /// From each top function up to its callers.
    Caller,
    /// From the roots down to the callees.
    Callee,
}

/// What to report, with event indices checked against the profile.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// The event functions are ranked by.
    pub sort: usize,
    /// Rank by self cost instead of inclusive cost.
    pub by_self: bool,
    /// The events shown, the sort event first.
    pub show: Vec<usize>,
    /// Leave out functions (and calls, and source lines) below this percent
    /// of the sort event's total.
    pub threshold: Percent,
    /// At most this many functions.
    pub top: usize,
    pub tree: Option<TreeDirection>,
    /// Annotate the source files of the top functions.
    pub annotate: bool,
    /// Folders to look for relative source files in, after the current one.
    pub include: Vec<PathBuf>,
    pub color: bool,
}

/// A profile with its inclusive costs, and what to report on it.
pub struct Report<'a> {
    pub file: &'a ProfileFile<i64>,
    pub inclusive: Vec<Vec<i64>>,
    pub options: &'a ReportOptions,
}

impl Report<'_> {
    /// Whether `cost` of the sort event reaches the threshold: its size
    /// against the size of the total.
    pub fn above_threshold(&self, cost: impl Into<i128>) -> bool {
        let cost = cost.into();
        let total = self.file.totals[self.options.sort].unsigned_abs();
        let share = (self.options.threshold).compare_share(cost.unsigned_abs(), total.into());
        cost != 0 && share.is_ge()
    }

    /// The functions ranked by the sort event, above the threshold, at most
    /// `top`.
    pub fn ranked(&self) -> Vec<FunctionIndex> {
        let sort = self.options.sort;
        let value = |f: FunctionIndex| {
            if self.options.by_self {
                self.file.functions[f].self_cost[sort]
            } else {
                self.inclusive[f][sort]
            }
        };
        let mut ranked: Vec<FunctionIndex> = (0..self.file.functions.len())
            .filter(|&f| self.above_threshold(value(f)))
            .collect();
        let size = |f: FunctionIndex| value(f).unsigned_abs();
        ranked.sort_by(|&a, &b| {
            size(b).cmp(&size(a)).then_with(|| {
                self.file.functions[a]
                    .key
                    .name
                    .cmp(&self.file.functions[b].key.name)
            })
        });
        ranked.truncate(self.options.top);
        ranked
    }

    /// `name  file [object]`, the object by its file name only.
    pub fn label(&self, f: FunctionIndex) -> Vec<Cell> {
        let key = &self.file.functions[f].key;
        let object = object_file_name(&key.object);
        let mut place = key.file.clone();
        if !object.is_empty() {
            place.push_str(&format!(" [{object}]"));
        }
        vec![Cell::plain(&key.name), Cell::styled(place, Style::Dim)]
    }

    /// `cost` and its percentage of event `event`'s total, as two cells.
    pub fn cost_cells(&self, event: usize, cost: impl Into<i128>) -> [Cell; 2] {
        let (cost, total) = (cost.into(), self.file.totals[event]);
        [
            Cell::plain(grouped_signed(cost)),
            Cell::styled(percent(cost, total), Style::Dim),
        ]
    }
}

/// Writes the report of `file`.
pub fn write_report(
    out: &mut dyn Write,
    file: &ProfileFile<i64>,
    name: &str,
    options: &ReportOptions,
) -> io::Result<()> {
    let report = Report {
        file,
        inclusive: file.inclusive(),
        options,
    };
    let events = &file.events;
    let sort = &events[options.sort];
    writeln!(out, "profile:   {name}")?;
    if let Some(cmd) = &file.cmd {
        writeln!(out, "command:   {}", printable(cmd))?;
    }
    if let Some(part) = file.setup.later_part() {
        writeln!(
            out,
            "part:      {part} of its run: the costs since Callgrind's dump before it, \
             not the whole run's"
        )?;
    }
    // The top-down tree starts at every root, whatever --top says, and
    // ranks calls by what they cost in all, whatever --self says.
    let (ranking, top) = match options.tree {
        Some(TreeDirection::Callee) => ("inclusive", String::new()),
        _ if options.by_self => ("self", format!(", top {}", options.top)),
        _ => ("inclusive", format!(", top {}", options.top)),
    };
    writeln!(
        out,
        "sorted by: {sort} {ranking} cost, threshold {}%{top}",
        options.threshold
    )?;
    let totals: Vec<String> = options
        .show
        .iter()
        .map(|&e| format!("{} {}", events[e], grouped_signed(file.totals[e].into())))
        .collect();
    writeln!(out, "totals:    {}", totals.join("  "))?;
    writeln!(out)?;
    match options.tree {
        None => write_flat(out, &report)?,
        Some(TreeDirection::Callee) => write_callee_tree(out, &report)?,
        Some(TreeDirection::Caller) => write_caller_trees(out, &report)?,
    }
    if options.annotate {
        write_annotated_sources(out, &report)?;
    }
    Ok(())
}

/// The flat profile: per function and shown event, inclusive and self cost
/// with percentages.
fn write_flat(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    let options = report.options;
    let mut align = Vec::new();
    let mut header: Vec<String> = Vec::new();
    for &event in &options.show {
        let name = &report.file.events[event];
        align.extend([Align::Right; 4]);
        header.extend([format!("{name} incl"), String::new()]);
        header.extend([format!("{name} self"), String::new()]);
    }
    align.extend([Align::Left, Align::Left]);
    header.extend(["function".to_string(), "file [object]".to_string()]);
    let mut table = Table::new(&align);
    table.header(&header.iter().map(String::as_str).collect::<Vec<_>>());
    let ranked = report.ranked();
    for &f in &ranked {
        let mut cells = Vec::new();
        for &event in &options.show {
            cells.extend(report.cost_cells(event, report.inclusive[f][event]));
            let own = report.file.functions[f].self_cost[event];
            cells.extend(report.cost_cells(event, own));
        }
        cells.extend(report.label(f));
        table.row(cells);
    }
    if ranked.is_empty() {
        let file = &report.file;
        // A data-only trace has no Ir, the default: the events it has.
        let with_costs: Vec<&str> = (0..file.events.len())
            .filter(|&at| file.totals[at] != 0)
            .map(|at| file.events[at].as_str())
            .collect();
        return match options.top {
            0 => writeln!(out, "--top 0 shows no function"),
            _ if file.totals[options.sort] == 0 && !with_costs.is_empty() => writeln!(
                out,
                "no function has any {}; --sort ranks them by an event that has costs: {}",
                file.events[options.sort],
                with_costs.join(", ")
            ),
            _ => writeln!(out, "no function reaches the threshold"),
        };
    }
    table.write(out, options.color)
}
