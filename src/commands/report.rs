//! `linegrind report`: a callgrind-format profile as a text report.

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::PathBuf;

use anyhow::anyhow;

use super::failure::{Failure, InputContext};
use crate::report::percent::Percent;
use crate::report::{ProfileFile, ReportOptions, TreeDirection, write_report};

/// A validated `report` invocation; event names are checked against the
/// profile.
#[derive(Clone, Debug)]
pub struct ReportJob {
    pub profile: PathBuf,
    /// The event to rank by; the profile's first when absent.
    pub sort: Option<String>,
    pub by_self: bool,
    /// Events shown besides the sort event.
    pub show: Vec<String>,
    pub threshold: Percent,
    pub top: usize,
    pub tree: Option<TreeDirection>,
    pub annotate: bool,
    pub include: Vec<PathBuf>,
    pub color: bool,
}

/// Runs `job`, writing the report to `out`.
pub fn report(job: &ReportJob, out: &mut dyn Write) -> Result<(), Failure> {
    let name = job.profile.display().to_string();
    let file = File::open(&job.profile).input(format!("cannot open {name}"))?;
    let input = BufReader::new(file);
    let profile = match job.annotate {
        true => ProfileFile::<i64>::parse(input),
        false => ProfileFile::<i64>::parse_without_lines(input),
    }
    .input(&name)?;
    if profile.events.is_empty() {
        return Err(Failure::Input(anyhow!(
            "{name}: not a callgrind profile (no `events:` line)"
        )));
    }
    let event = |event: &str| {
        profile.event(event).ok_or_else(|| {
            Failure::Input(anyhow!(
                "{name} has no event `{event}`; it has {}",
                profile.events.join(" ")
            ))
        })
    };
    let sort = match &job.sort {
        Some(sort) => event(sort)?,
        None => 0,
    };
    let mut show = vec![sort];
    for name in &job.show {
        let at = event(name)?;
        if !show.contains(&at) {
            show.push(at);
        }
    }
    let options = ReportOptions {
        sort,
        by_self: job.by_self,
        show,
        threshold: job.threshold,
        top: job.top,
        tree: job.tree,
        annotate: job.annotate,
        include: job.include.clone(),
        color: job.color,
    };
    write_report(out, &profile, &name, &options).other("cannot write the report")
}
