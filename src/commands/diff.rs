//! `linegrind diff`: what changed between two runs, function by function,
//! and optionally the difference as a callgrind file.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::anyhow;

use super::failure::{Failure, InputContext, writable};
use super::same_path::same_path;
use crate::output::table::{Align, Cell, Style, Table};
use crate::output::{is_stdout, write_atomically};
use crate::report::diff::{Diff, DiffFile, Renames, delta};
use crate::report::{RunCosts, Unlike, change, grouped_signed, relative_change};

/// A validated `diff` invocation.
#[derive(Clone, Debug)]
pub struct DiffJob {
    /// The first run: a callgrind file or a JSON summary.
    pub a: PathBuf,
    /// The second run.
    pub b: PathBuf,
    /// The event functions are ranked by; the first common one when absent.
    pub sort: Option<String>,
    /// At most this many functions.
    pub top: usize,
    pub renames: Renames,
    /// Where to write B minus A as a callgrind file.
    pub out: Option<PathBuf>,
    pub color: bool,
}

/// Runs `job`, writing the comparison to `stdout`, or to `stderr` when
/// the difference file goes to standard output.
pub fn diff(job: &DiffJob, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<(), Failure> {
    if let Some(path) = &job.out {
        check_output(job, path)?;
    }
    let a = RunCosts::load(&job.a).input("cannot read the first run")?;
    let b = RunCosts::load(&job.b).input("cannot read the second run")?;
    let diff = Diff::new(&a, &b, &job.renames).input("cannot compare the runs")?;
    let sort = match &job.sort {
        Some(name) => diff.event(name).ok_or_else(|| {
            Failure::Input(anyhow!(
                "--sort {name}: the runs do not both have it; they share {}",
                diff.events.join(" ")
            ))
        })?,
        None => 0,
    };
    // A difference file sent where standard output goes has it to itself;
    // asked before the file is replaced (`--out d > d`).
    let to_stderr = job.out.as_deref().is_some_and(is_stdout);
    if let Some(path) = &job.out {
        let (Some(file_a), Some(file_b)) = (&a.file, &b.file) else {
            return Err(Failure::Input(anyhow!(
                "--out writes the difference of two callgrind files: \
                 give the runs' callgrind files, not their JSON summaries"
            )));
        };
        let difference = DiffFile::new(file_a, file_b, &job.renames)
            .input(format!("cannot write {}", path.display()))?;
        let cmd = format!("diff {} {}", job.a.display(), job.b.display());
        write_atomically(path, |out| difference.write(out, &cmd))
            .other(format!("cannot write {}", path.display()))?;
    }
    let report = |out: &mut dyn Write| -> std::io::Result<()> {
        write_comparison(out, job, &diff, sort)?;
        if let Some(path) = &job.out {
            writeln!(out, "\nwrote {}", path.display())?;
        }
        Ok(())
    };
    report(if to_stderr { stderr } else { stdout }).other("cannot write the comparison")
}

/// Refuses an `--out` file that is one of the runs compared (a usage
/// error: the diff would replace it), or that cannot be written.
fn check_output(job: &DiffJob, path: &Path) -> Result<(), Failure> {
    for (input, which) in [(&job.a, "first"), (&job.b, "second")] {
        if same_path(path, input) {
            return Err(Failure::Input(anyhow!(
                "--out {} is the {which} run {}: pick another output name",
                path.display(),
                input.display()
            )));
        }
    }
    writable(path)
}

fn change_style(change: i128) -> Style {
    match change {
        c if c > 0 => Style::Red,
        c if c < 0 => Style::Green,
        _ => Style::Plain,
    }
}

fn write_comparison(
    out: &mut dyn Write,
    job: &DiffJob,
    diff: &Diff,
    sort: usize,
) -> std::io::Result<()> {
    writeln!(out, "A: {}", job.a.display())?;
    writeln!(out, "B: {}", job.b.display())?;
    write_notes(out, diff, ["A", "B"])?;
    writeln!(out)?;
    let mut totals = Table::new(&[
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
    ]);
    totals.header(&["event", "A", "B", "B - A", "change"]);
    for (at, event) in diff.events.iter().enumerate() {
        let (a, b) = (diff.totals[0][at], diff.totals[1][at]);
        let moved = delta(a, b);
        totals.row(vec![
            Cell::plain(event),
            Cell::plain(grouped_signed(a)),
            Cell::plain(grouped_signed(b)),
            Cell::styled(change(moved), change_style(moved)),
            Cell::styled(relative_change(a, b), change_style(moved)),
        ]);
    }
    totals.write(out, job.color)?;
    for (run, events) in ["A", "B"].iter().zip(&diff.unshared) {
        if !events.is_empty() {
            writeln!(out, "only {run} has {}: not compared", events.join(" "))?;
        }
    }

    let event = &diff.events[sort];
    let mut changed: Vec<usize> = (0..diff.functions.len())
        .filter(|&f| {
            let function = &diff.functions[f];
            function.inclusive[0][sort] != function.inclusive[1][sort]
                || function.self_cost[0][sort] != function.self_cost[1][sort]
        })
        .collect();
    let size = |f: usize| {
        let function = &diff.functions[f];
        delta(function.inclusive[0][sort], function.inclusive[1][sort]).abs()
    };
    changed.sort_by(|&x, &y| {
        size(y)
            .cmp(&size(x))
            .then_with(|| diff.functions[x].by_name(&diff.functions[y]))
    });
    writeln!(out)?;
    if changed.is_empty() {
        // Say which events did change (the default, Ir, does not between
        // two cache configurations).
        let others: Vec<&str> = (0..diff.events.len())
            .filter(|&at| at != sort && diff.totals[0][at] != diff.totals[1][at])
            .map(|at| diff.events[at].as_str())
            .collect();
        if others.is_empty() {
            return writeln!(out, "no function's {event} changed");
        }
        return writeln!(
            out,
            "no function's {event} changed; --sort ranks them by an event whose total did: {}",
            others.join(", ")
        );
    }
    let shown = changed.len().min(job.top);
    if shown == 0 {
        return writeln!(out, "{} functions whose {event} changed", changed.len());
    }
    writeln!(
        out,
        "{shown} of {} functions whose {event} changed, by inclusive change:",
        changed.len()
    )?;
    let mut table = Table::new(&[
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
        Align::Left,
    ]);
    table.header(&[
        &format!("{event} incl A"),
        "incl B",
        "B - A",
        "change",
        "self B - A",
        "function",
        "file",
    ]);
    for &f in &changed[..shown] {
        let function = &diff.functions[f];
        let (a, b) = (function.inclusive[0][sort], function.inclusive[1][sort]);
        let self_change = delta(function.self_cost[0][sort], function.self_cost[1][sort]);
        table.row(vec![
            Cell::plain(grouped_signed(a)),
            Cell::plain(grouped_signed(b)),
            Cell::styled(change(delta(a, b)), change_style(delta(a, b))),
            Cell::styled(relative_change(a, b), change_style(delta(a, b))),
            Cell::styled(change(self_change), change_style(self_change)),
            Cell::plain(&function.name),
            Cell::styled(function.place(), Style::Dim),
        ]);
    }
    table.write(out, job.color)
}

/// Names the settings the two runs were simulated with differently, whose
/// changes may come from them and not from the program, and a run whose
/// file is a later part of it, whose costs are not the whole run's.
pub fn write_notes(out: &mut dyn Write, diff: &Diff, runs: [&str; 2]) -> std::io::Result<()> {
    for Unlike { setting, values } in &diff.unlike {
        writeln!(
            out,
            "note: {setting} differs: {} in {}; {} in {}",
            values[0], runs[0], values[1], runs[1]
        )?;
    }
    for (part, run) in diff.parts.iter().zip(runs) {
        if let Some(part) = part {
            writeln!(
                out,
                "note: {run} is part {part} of its run: the costs since Callgrind's dump \
                 before it, not the whole run's"
            )?;
        }
    }
    Ok(())
}
