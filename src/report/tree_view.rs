//! Call trees drawn from a profile's call arcs: top-down from the functions
//! no other function calls, or bottom-up from the top functions to their
//! callers. Each line's cost is that of the calls along its arc (the
//! arc's inclusive cost, back-dated cache use included in our files). A
//! profile has no calling contexts, so a function's callees are the same
//! wherever it appears, as in KCachegrind's call graph.

use std::io::{self, Write};

use super::callgrind_file::FunctionIndex;
use super::text_report::Report;
use crate::output::table::{Align, Cell, Table};

/// Deeper call chains are cut off.
const MAX_DEPTH: usize = 40;

/// A table with cost and percentage columns for each shown event, then the
/// tree and the function's place.
fn tree_table(report: &Report, tree_header: &str) -> Table {
    let mut align = Vec::new();
    let mut header: Vec<&str> = Vec::new();
    for &event in &report.options.show {
        align.extend([Align::Right, Align::Right]);
        header.extend([report.file.events[event].as_str(), ""]);
    }
    align.extend([Align::Left, Align::Left]);
    header.extend([tree_header, "file [object]"]);
    let mut table = Table::new(&align);
    table.header(&header);
    table
}

fn line(report: &Report, costs: &[i64], prefix: &str, f: FunctionIndex) -> Vec<Cell> {
    let mut cells: Vec<Cell> = Vec::new();
    for &event in &report.options.show {
        cells.extend(report.cost_cells(event, costs[event]));
    }
    let mut label = report.label(f);
    label[0].text = format!("{prefix}{}", label[0].text);
    cells.extend(label);
    cells
}

/// Top-down: every root above the threshold with its inclusive cost, then
/// the calls it makes, recursively.
pub fn write_callee_tree(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    let file = report.file;
    let sort = report.options.sort;
    let mut calls_from: Vec<Vec<usize>> = vec![Vec::new(); file.functions.len()];
    let mut called = vec![false; file.functions.len()];
    for (at, call) in file.calls.iter().enumerate() {
        if call.caller != call.callee {
            calls_from[call.caller].push(at);
            called[call.callee] = true;
        }
    }
    for calls in &mut calls_from {
        calls.sort_by_key(|&at| std::cmp::Reverse(file.calls[at].inclusive[sort].unsigned_abs()));
    }
    let mut roots: Vec<FunctionIndex> = (0..file.functions.len())
        .filter(|&f| !called[f] && report.above_threshold(report.inclusive[f][sort]))
        .collect();
    roots.sort_by_key(|&f| std::cmp::Reverse(report.inclusive[f][sort].unsigned_abs()));
    let mut table = tree_table(report, "calls (top-down)");
    let mut path = Vec::new();
    for root in roots {
        table.row(line(report, &report.inclusive[root], "", root));
        path.push(root);
        branches(
            report,
            &calls_from,
            Direction::Callees,
            root,
            "",
            &mut path,
            &mut table,
        );
        path.pop();
    }
    table.write(out, report.options.color)
}

/// Which way a tree goes from a function: to the functions it calls, or
/// to those that call it.
#[derive(Clone, Copy)]
enum Direction {
    Callees,
    Callers,
}

/// The rows below `f`: its calls in `direction` above the threshold, each
/// followed by its own, until a recursion or [`MAX_DEPTH`].
fn branches(
    report: &Report,
    calls: &[Vec<usize>],
    direction: Direction,
    f: FunctionIndex,
    indent: &str,
    path: &mut Vec<FunctionIndex>,
    table: &mut Table,
) {
    let file = report.file;
    let shown: Vec<usize> = calls[f]
        .iter()
        .copied()
        .filter(|&at| report.above_threshold(file.calls[at].inclusive[report.options.sort]))
        .collect();
    for (n, &at) in shown.iter().enumerate() {
        let call = &file.calls[at];
        let last = n + 1 == shown.len();
        let (next, branch) = match (direction, last) {
            (Direction::Callees, false) => (call.callee, "├─ "),
            (Direction::Callees, true) => (call.callee, "└─ "),
            (Direction::Callers, false) => (call.caller, "├< "),
            (Direction::Callers, true) => (call.caller, "└< "),
        };
        let recursive = path.contains(&next);
        let mut row = line(report, &call.inclusive, &format!("{indent}{branch}"), next);
        if recursive {
            let name = row.len() - 2;
            row[name].text.push_str(" (recursive)");
        }
        table.row(row);
        if !recursive && path.len() < MAX_DEPTH {
            let indent = format!("{indent}{}", if last { "   " } else { "│  " });
            path.push(next);
            branches(report, calls, direction, next, &indent, path, table);
            path.pop();
        }
    }
}

/// Bottom-up: each top function with its cost, then the calls to it and,
/// recursively, the calls to its callers.
pub fn write_caller_trees(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    let file = report.file;
    let sort = report.options.sort;
    let mut calls_to: Vec<Vec<usize>> = vec![Vec::new(); file.functions.len()];
    for (at, call) in file.calls.iter().enumerate() {
        if call.caller != call.callee {
            calls_to[call.callee].push(at);
        }
    }
    for calls in &mut calls_to {
        calls.sort_by_key(|&at| std::cmp::Reverse(file.calls[at].inclusive[sort].unsigned_abs()));
    }
    let mut table = tree_table(report, "function, then its callers (bottom-up)");
    for (n, f) in report.ranked().into_iter().enumerate() {
        if n > 0 {
            table.row(Vec::new());
        }
        let costs = if report.options.by_self {
            &file.functions[f].self_cost
        } else {
            &report.inclusive[f]
        };
        table.row(line(report, costs, "", f));
        let mut path = vec![f];
        branches(
            report,
            &calls_to,
            Direction::Callers,
            f,
            "",
            &mut path,
            &mut table,
        );
    }
    table.write(out, report.options.color)
}
