//! `linegrind check`: fail a CI job when an event rose past its limit from
//! a baseline run.

use std::io::Write;
use std::path::PathBuf;

use super::diff::write_notes;
use super::failure::{Failure, InputContext};
use crate::output::table::{Align, Cell, Style, Table};
use crate::report::check::{Limit, check as check_limits};
use crate::report::diff::{Diff, Renames, delta};
use crate::report::{RunCosts, change as signed_change, checked_change, grouped_signed};

/// The exit code when a limit is exceeded.
pub const EXCEEDED: u8 = 3;

/// A validated `check` invocation.
#[derive(Clone, Debug)]
pub struct CheckJob {
    pub baseline: PathBuf,
    pub current: PathBuf,
    pub limits: Vec<Limit>,
    /// Glob patterns of functions whose inclusive costs are limited too.
    pub functions: Vec<String>,
    pub color: bool,
}

/// Runs `job`, printing what moved; the exit code is 0 within the limits
/// and [`EXCEEDED`] otherwise.
pub fn check(job: &CheckJob, out: &mut dyn Write) -> Result<u8, Failure> {
    let baseline = RunCosts::load(&job.baseline).input("cannot read the baseline")?;
    let current = RunCosts::load(&job.current).input("cannot read the current run")?;
    let diff =
        Diff::new(&baseline, &current, &Renames::default()).input("cannot compare the runs")?;
    let rows = check_limits(&diff, &job.limits, &job.functions).input("cannot check")?;
    let mut table = Table::new(&[
        Align::Left,
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
        Align::Left,
    ]);
    table.header(&[
        "", "event", "baseline", "current", "change", "%", "limit", "scope",
    ]);
    let mut exceeded = 0;
    for row in &rows {
        let change = delta(row.baseline, row.current);
        let percent = checked_change(row.baseline, row.current, row.exceeded);
        let (status, style) = if row.exceeded {
            exceeded += 1;
            ("FAIL", Style::Red)
        } else {
            ("ok", Style::Green)
        };
        table.row(vec![
            Cell::styled(status, style),
            Cell::plain(&row.limit.event),
            Cell::plain(grouped_signed(row.baseline)),
            Cell::plain(grouped_signed(row.current)),
            Cell::styled(signed_change(change), style),
            Cell::styled(percent, style),
            Cell::plain(row.limit.to_string()),
            Cell::plain(row.function.as_deref().unwrap_or("total")),
        ]);
    }
    let verdict = if exceeded == 0 { 0 } else { EXCEEDED };
    let summary = match (exceeded, rows.len()) {
        (0, 1) => "the check is within its limit".to_string(),
        (_, 1) => "the check exceeded its limit".to_string(),
        (0, checks) => format!("all {checks} checks within their limits"),
        (_, checks) => format!("{exceeded} of {checks} checks exceeded their limits"),
    };
    let written = (|| {
        writeln!(out, "baseline: {}", job.baseline.display())?;
        writeln!(out, "current:  {}", job.current.display())?;
        write_notes(out, &diff, ["the baseline", "the current run"])?;
        writeln!(out)?;
        table.write(out, job.color)?;
        writeln!(out)?;
        writeln!(out, "{summary}")
    })();
    match written {
        // A reader that stopped reading (`check ... | head`) changes no
        // verdict: a CI job goes by the exit code.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(verdict),
        written => written.other("cannot write the check").map(|()| verdict),
    }
}
