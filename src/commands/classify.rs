//! `linegrind classify`: a trace's misses in I1, D1 and LL by cause
//! (compulsory, capacity, conflict), as a table and optionally as JSON.

use std::io::Write;
use std::path::PathBuf;

use anyhow::anyhow;

use super::failure::{Failure, InputContext, writable};
use super::trace_input::TraceInput;
use crate::cache::{CacheGeometry, ClassifiedHierarchy, L1Side};
use crate::output::{ClassReport, Progress, write_atomically};
use crate::printable::printable;
use crate::trace::{Event, TraceRead};

/// A validated `classify` invocation.
#[derive(Clone, Debug)]
pub struct ClassifyJob {
    pub input: TraceInput,
    pub i1: CacheGeometry,
    pub d1: CacheGeometry,
    pub ll: CacheGeometry,
    /// Where to write the counts as JSON, if anywhere.
    pub json: Option<PathBuf>,
    /// No progress display and no table on standard output.
    pub quiet: bool,
}

/// Events between two updates of the progress display.
const PROGRESS_EVERY: u64 = 1 << 16;

/// Runs `job`, printing the table to `stdout` and warnings to `stderr`.
pub fn classify(
    job: &ClassifyJob,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<(), Failure> {
    if let Some(json) = &job.json {
        if let Some(input) = job.input.named(json) {
            return Err(Failure::Input(anyhow!(
                "the output {} is {input}: pick another output name (--json)",
                json.display()
            )));
        }
        writable(json)?;
    }
    let name = job.input.path.display();
    let mut reader = job.input.open()?;
    let format = reader.format();
    let progress = Progress::new("classifying", reader.events(), !job.quiet);
    let no_memory = || {
        format!(
            "cannot classify with I1 {}, D1 {}, LL {}",
            job.i1, job.d1, job.ll
        )
    };
    let mut caches = ClassifiedHierarchy::new(job.i1, job.d1, job.ll).other(no_memory())?;
    let mut events = 0u64;
    while let Some(event) = reader.next_event().input(&name)? {
        let accessed = match event {
            Event::Instr { addr, len } => caches.access(L1Side::Instr, addr, len),
            Event::Data { addr, size, .. } => caches.access(L1Side::Data, addr, size),
            Event::Flush | Event::Restart => {
                caches.flush();
                continue;
            }
            _ => continue,
        };
        if let Err(refused) = accessed {
            return Err(refused).other(no_memory());
        }
        events += 1;
        if events.is_multiple_of(PROGRESS_EVERY) {
            progress.set(events);
        }
    }
    progress.finish();
    for warning in reader.warnings(&name.to_string()) {
        writeln!(stderr, "linegrind: warning: {}", printable(&warning))
            .other("cannot write a warning")?;
    }
    let trace = job.input.path.to_string_lossy();
    let report = ClassReport {
        trace: &trace,
        caches: [job.i1, job.d1, job.ll],
        counts: caches.counts(),
    };
    if let Some(json) = &job.json {
        write_atomically(json, |out| report.write_json(out))
            .other(format!("cannot write {}", json.display()))?;
    }
    if job.quiet {
        return Ok(());
    }
    let mut table = || -> std::io::Result<()> {
        writeln!(stdout, "linegrind classify {name}")?;
        if let Some(read_as) = job.input.read_as(format) {
            writeln!(stdout, "{read_as}")?;
        }
        report.write_table(stdout)?;
        if let Some(json) = &job.json {
            writeln!(stdout, "\nwrote {}", json.display())?;
        }
        Ok(())
    };
    table().other("cannot write the table")
}
