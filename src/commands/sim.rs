//! `linegrind sim`: simulate a trace, write the callgrind file, print the
//! summary.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::failure::{Failure, InputContext};
use super::trace_input::TraceInput;
use crate::config::SimConfig;
use crate::output::json::Summary;
use crate::output::{
    Positions, Progress, write_atomically, write_callgrind, write_firefox_profile, write_summary,
};
use crate::pipeline::simulate_each;

/// A validated `sim` invocation.
#[derive(Clone, Debug)]
pub struct SimJob {
    pub input: TraceInput,
    /// The callgrind file to write.
    pub output: PathBuf,
    pub config: SimConfig,
    /// Subpositions of the callgrind file's cost lines.
    pub positions: Positions,
    /// Functions listed in each top list of the summary.
    pub top: usize,
    /// Where to write the JSON summary, if anywhere.
    pub json: Option<PathBuf>,
    /// Where to write the Firefox Profiler profile, if anywhere (the
    /// configuration then collects stack samples).
    pub firefox: Option<PathBuf>,
    /// No progress display and no summary on standard output.
    pub quiet: bool,
}

impl SimJob {
    /// Callgrind's naming, so viewers find the file: `callgrind.out.<stem>`
    /// in the current directory.
    pub fn default_output(trace: &Path) -> PathBuf {
        let stem = trace
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_else(|| "trace".to_string());
        PathBuf::from(format!("callgrind.out.{stem}"))
    }
}

/// Runs `job`, printing the summary to `stdout` and warnings to `stderr`.
pub fn sim(job: &SimJob, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<(), Failure> {
    let name = job.input.path.display();
    let reader = job.input.open()?;
    let progress = Progress::new("simulating", reader.events(), !job.quiet);
    let simulated = simulate_each(reader, &[job.config.clone()], &|events| {
        progress.set(events)
    });
    progress.finish();
    let (reader, mut profiles) = simulated.input(&name)?;
    let profile = profiles.remove(0).input(&name)?;
    let truncated = reader
        .truncated()
        .map(|why| format!("{name} is truncated: {why}"));
    let skipped = reader.skipped().map(|what| format!("{name}: {what}"));
    let warnings = profile
        .program
        .symbolizer()
        .warnings()
        .iter()
        .chain(&truncated)
        .chain(&skipped);
    for warning in warnings {
        writeln!(stderr, "linegrind: warning: {warning}").other("cannot write a warning")?;
    }
    let cmd = job.input.path.to_string_lossy();
    write_atomically(&job.output, |out| {
        write_callgrind(out, &profile, &cmd, job.positions)
    })
    .other(format!("cannot write {}", job.output.display()))?;
    if let Some(path) = &job.json {
        let summary = Summary::new(&profile, &cmd);
        write_atomically(path, |out| summary.write(out))
            .other(format!("cannot write {}", path.display()))?;
    }
    if let (Some(path), Some(samples)) = (&job.firefox, &profile.samples) {
        write_atomically(path, |out| {
            write_firefox_profile(out, &profile, samples, &cmd)
        })
        .other(format!("cannot write {}", path.display()))?;
    }
    if job.quiet {
        return Ok(());
    }
    writeln!(stdout, "linegrind sim {name}")
        .and_then(|()| write_summary(stdout, &profile, job.top))
        .and_then(|()| writeln!(stdout, "\nwrote {}", job.output.display()))
        .and_then(|()| match &job.json {
            Some(path) => writeln!(stdout, "wrote {}", path.display()),
            None => Ok(()),
        })
        .and_then(|()| match &job.firefox {
            Some(path) => writeln!(stdout, "wrote {}", path.display()),
            None => Ok(()),
        })
        .other("cannot write the summary")
}
