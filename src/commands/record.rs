//! `linegrind record`: record a program into a binary trace.

use std::io::Write;

use super::failure::{Failure, InputContext};
use crate::output::{Progress, bytes_per_event, grouped};
use crate::record::{self, RecordError, RecordJob};

/// Records `job`; returns the program's exit code to exit with. A one-line
/// report goes to `stderr` (stdout is the program's).
pub fn record(job: &RecordJob, stderr: &mut dyn Write) -> Result<u8, Failure> {
    let progress = Progress::new("recording", None, !job.quiet);
    let shown = progress.clone();
    let recorded = record::record(job, move |events| shown.set(events));
    progress.finish();
    let recording = match recorded {
        Ok(recording) => recording,
        Err(err @ (RecordError::Tool(_) | RecordError::NotStarted(_))) => {
            return Err(Failure::Input(err.into()));
        }
        Err(err) => return Err(Failure::Other(err.into())),
    };
    if job.quiet {
        return Ok(exit_code(recording.status));
    }
    let totals = recording.totals;
    writeln!(
        stderr,
        "linegrind: recorded {} instructions and {} data accesses into {} ({} bytes, {} bytes per event)",
        grouped(totals.instructions),
        grouped(totals.accesses),
        job.output.display(),
        grouped(recording.bytes),
        bytes_per_event(recording.bytes, totals.instructions + totals.accesses),
    )
    .other("cannot write the report")?;
    Ok(exit_code(recording.status))
}

/// The program's exit code, or 128 + the signal that ended it, as a shell
/// reports it.
fn exit_code(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => code as u8,
        (None, Some(signal)) => (128 + signal) as u8,
        (None, None) => 1,
    }
}
