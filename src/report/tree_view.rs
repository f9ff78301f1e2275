//! Call trees drawn from a profile's call arcs: top-down from the functions
//! no other function calls, or bottom-up from the top functions to their
//! callers. Each line's cost is that of the calls along its arc (the
//! arc's inclusive cost, back-dated cache use included in our files). A
//! profile has no calling contexts, so a function's callees are the same
//! wherever it appears, as in KCachegrind's call graph: a tree draws them
//! once, where the function first appears.

use std::io::{self, Write};

use super::callgrind_file::{FunctionIndex, ProfileFile};
use super::text_report::Report;
use crate::output::table::{Align, Cell, Table};

/// Deeper call chains are cut off, with a mark: the indentation would
/// outgrow any screen.
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

fn line<C>(report: &Report, costs: &[C], prefix: &str, f: FunctionIndex) -> Vec<Cell>
where
    C: Copy + Into<i128>,
{
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
/// the calls it makes, recursively. The roots share one tree: a function's
/// calls are drawn only where it first appears. A function called by
/// others that is also entered otherwise (a thread's first function, a
/// signal handler), by more than its callers' calls bring it, is a root
/// too, with that difference, after the functions nobody calls; and a
/// function that no root reaches (only calls in a cycle lead to it), or
/// any, where calls carry none of the event, is a root after them.
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
    let entered = entered_otherwise(report);
    // Calls that carry none of the event (cache use in Callgrind's files,
    // and in ours without back-dating) tell nothing of how else a function
    // is entered.
    let carried = file.calls.iter().any(|call| call.inclusive[sort] != 0);
    // Entered otherwise for a share of its cost, not for the double count
    // of a recursion, whose calls bring it more than it costs.
    let otherwise = |f: FunctionIndex| {
        let (share, cost) = (entered[f][sort], i128::from(report.inclusive[f][sort]));
        carried && share != 0 && share.signum() == cost.signum() && report.above_threshold(share)
    };
    // The functions nobody calls, then those entered otherwise as well,
    // then the rest, each part by the cost it is drawn with.
    let mut roots: Vec<(Root, FunctionIndex)> = (0..file.functions.len())
        .filter_map(|f| {
            let root = match called[f] {
                false => Root::Uncalled,
                true if otherwise(f) => Root::EnteredOtherwise,
                true => Root::Called,
            };
            (root == Root::EnteredOtherwise || report.above_threshold(report.inclusive[f][sort]))
                .then_some((root, f))
        })
        .collect();
    let cost = |root: Root, f: FunctionIndex, event: usize| match root {
        Root::EnteredOtherwise => entered[f][event],
        Root::Uncalled | Root::Called => report.inclusive[f][event].into(),
    };
    roots.sort_by_key(|&(root, f)| (root, std::cmp::Reverse(cost(root, f, sort).unsigned_abs())));
    let mut reached = vec![false; file.functions.len()];
    let table = tree_table(report, "calls (top-down)");
    let mut walk = TreeWalk::new(report, &calls_from, Direction::Callees, table);
    for (root, f) in roots {
        // Reached by calls that bring it none of the event, a function
        // with its own is drawn as a root.
        if root == Root::Called && reached[f] && carried {
            continue;
        }
        reach(file, &calls_from, f, &mut reached);
        let costs: Vec<i128> = (0..file.events.len()).map(|e| cost(root, f, e)).collect();
        let mut row = line(report, &costs, "", f);
        let drawn = walk.expanded[f] && walk.has_branches(f);
        if root == Root::EnteredOtherwise {
            let name = row.len() - 2;
            row[name].text.push_str(match drawn {
                true => " (entered otherwise; calls see above)",
                false => " (entered otherwise)",
            });
        }
        walk.table.row(row);
        if !drawn {
            walk.root(f);
        }
    }
    walk.table.write(out, report.options.color)
}

/// Why a function starts a top-down tree, in the order roots are drawn.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Root {
    /// No other function calls it.
    Uncalled,
    /// Other functions call it, and it is entered otherwise as well.
    EnteredOtherwise,
    /// Other functions call it, and only they: a root where no root
    /// reaches it (only calls in a cycle lead to it), or where calls carry
    /// none of the event.
    Called,
}

/// Per function and event, what its inclusive cost holds beyond what its
/// callers' calls bring it: what it costs where it is entered otherwise
/// than by a call from another function (0 for a function only calls
/// enter; recursion may make it negative). In 128 bits: a profile whose
/// calls bring a function more than it costs may leave 64.
fn entered_otherwise(report: &Report) -> Vec<Vec<i128>> {
    let widened = |costs: &Vec<i64>| costs.iter().map(|&cost| i128::from(cost)).collect();
    let mut entered: Vec<Vec<i128>> = report.inclusive.iter().map(widened).collect();
    for call in &report.file.calls {
        if call.caller != call.callee {
            for (cost, &by_call) in entered[call.callee].iter_mut().zip(&call.inclusive) {
                *cost -= i128::from(by_call);
            }
        }
    }
    entered
}

/// Marks in `reached` every function calls lead to from `root`, and `root`.
fn reach(
    file: &ProfileFile<i64>,
    calls_from: &[Vec<usize>],
    root: FunctionIndex,
    reached: &mut [bool],
) {
    let mut stack = vec![root];
    reached[root] = true;
    while let Some(f) = stack.pop() {
        for &at in &calls_from[f] {
            let callee = file.calls[at].callee;
            if !reached[callee] {
                reached[callee] = true;
                stack.push(callee);
            }
        }
    }
}

/// Which way a tree goes from a function: to the functions it calls, or
/// to those that call it.
#[derive(Clone, Copy)]
enum Direction {
    Callees,
    Callers,
}

/// The drawing of call trees in one direction. A profile's call graph can
/// reach a function along exponentially many paths (each of n layers of
/// two functions calling both functions of the next makes 2^n), so each
/// tree draws a function's branches once, where it first appears; later
/// appearances are marked `(see above)`. A tree then has at most one line
/// per arc.
struct TreeWalk<'a> {
    report: &'a Report<'a>,
    /// Per function, the arcs drawn from it (those above the threshold),
    /// in order.
    shown: Vec<Vec<usize>>,
    direction: Direction,
    /// The functions from the root to the line being drawn.
    path: Vec<FunctionIndex>,
    /// Per function, whether its branches are drawn in the current tree.
    expanded: Vec<bool>,
    table: Table,
}

impl<'a> TreeWalk<'a> {
    /// A walk along `calls`, per function the arcs to follow from it in
    /// the order drawn, that draws into `table`.
    fn new(
        report: &'a Report<'a>,
        calls: &[Vec<usize>],
        direction: Direction,
        table: Table,
    ) -> Self {
        let sort = report.options.sort;
        let above = |&at: &usize| report.above_threshold(report.file.calls[at].inclusive[sort]);
        TreeWalk {
            report,
            shown: (calls.iter())
                .map(|arcs| arcs.iter().copied().filter(above).collect())
                .collect(),
            direction,
            path: Vec::new(),
            expanded: vec![false; calls.len()],
            table,
        }
    }

    /// Draws the branches below `root`, whose own line is drawn.
    fn root(&mut self, root: FunctionIndex) {
        self.path.push(root);
        self.expanded[root] = true;
        self.branches(root, "");
        self.path.pop();
    }

    /// Starts a new tree: functions drawn in earlier ones are drawn again.
    fn forget_expanded(&mut self) {
        self.expanded.fill(false);
    }

    /// Whether any arc is drawn from `f`.
    fn has_branches(&self, f: FunctionIndex) -> bool {
        !self.shown[f].is_empty()
    }

    /// The rows below `f`: its arcs above the threshold, each followed by
    /// its own, until a recursion, a function drawn above, or
    /// [`MAX_DEPTH`].
    fn branches(&mut self, f: FunctionIndex, indent: &str) {
        let report = self.report;
        let count = self.shown[f].len();
        for n in 0..count {
            let call = &report.file.calls[self.shown[f][n]];
            let last = n + 1 == count;
            let (next, branch) = match (self.direction, last) {
                (Direction::Callees, false) => (call.callee, "├─ "),
                (Direction::Callees, true) => (call.callee, "└─ "),
                (Direction::Callers, false) => (call.caller, "├< "),
                (Direction::Callers, true) => (call.caller, "└< "),
            };
            let mark = if self.path.contains(&next) {
                Some(" (recursive)")
            } else if self.expanded[next] && self.has_branches(next) {
                Some(" (see above)")
            } else if self.path.len() >= MAX_DEPTH && self.has_branches(next) {
                Some(" (deeper calls not drawn)")
            } else {
                None
            };
            let mut row = line(report, &call.inclusive, &format!("{indent}{branch}"), next);
            if let Some(mark) = mark {
                let name = row.len() - 2;
                row[name].text.push_str(mark);
            }
            self.table.row(row);
            if mark.is_none() {
                let indent = format!("{indent}{}", if last { "   " } else { "│  " });
                self.path.push(next);
                self.expanded[next] = true;
                self.branches(next, &indent);
                self.path.pop();
            }
        }
    }
}

/// Bottom-up: each top function with its cost, then the calls to it and,
/// recursively, the calls to its callers. Each top function's tree is
/// drawn whole, whatever the trees above it drew.
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
    let table = tree_table(report, "function, then its callers (bottom-up)");
    let mut walk = TreeWalk::new(report, &calls_to, Direction::Callers, table);
    for (n, f) in report.ranked().into_iter().enumerate() {
        if n > 0 {
            walk.table.row(Vec::new());
        }
        let costs = if report.options.by_self {
            &file.functions[f].self_cost
        } else {
            &report.inclusive[f]
        };
        walk.table.row(line(report, costs, "", f));
        walk.forget_expanded();
        walk.root(f);
    }
    walk.table.write(out, report.options.color)
}
