//! `linegrind record`: record a program into a binary trace.

use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use super::failure::{Failure, InputContext, writable};
use super::same_path::same_path;
use crate::output::{bytes_per_event, grouped, is_open_as};
use crate::record::{self, RecordError, RecordJob, Recording, signal_name};

/// Records `job`; returns the program's exit code to exit with. A one-line
/// report goes to `stderr` (stdout is the program's).
pub fn record(job: &RecordJob, stderr: &mut dyn Write) -> Result<u8, Failure> {
    check_job(job)?;
    // No progress line: the program's output goes to the same terminal,
    // and a line redrawn under it would garble it.
    let recording = match record::record(job) {
        Ok(recording) => recording,
        // Valgrind killed before the tool wrote anything (`kill -9`, the
        // OOM killer): no trace, and the exit code of the kill.
        Err(err @ RecordError::NotStarted(status)) if status.signal().is_some() => {
            let _ = writeln!(stderr, "linegrind: {err}");
            return Ok(exit_code(status));
        }
        Err(err @ (RecordError::Tool(_) | RecordError::NotStarted(_))) => {
            return Err(Failure::Input(err.into()));
        }
        Err(err) => return Err(Failure::Other(err.into())),
    };
    // The trace is kept: a report that cannot be written (standard error
    // full) leaves the program's exit code, the one its caller looks at.
    let _ = report(job, &recording, stderr);
    Ok(exit_code(recording.status))
}

/// The warnings, and unless `job.quiet`, the line that says what was
/// recorded.
fn report(job: &RecordJob, recording: &Recording, stderr: &mut dyn Write) -> io::Result<()> {
    let totals = recording.totals;
    if recording.replaced {
        writeln!(
            stderr,
            "linegrind: warning: the program replaced itself by execve after {} instructions; \
             what it started ran unrecorded (as under Callgrind without --trace-children): \
             record that program itself",
            grouped(totals.instructions),
        )?;
    }
    if let Some(at) = recording.cut_at {
        writeln!(
            stderr,
            "linegrind: warning: the recorder's stream ends inside a record, at byte {at}: \
             Valgrind was ended as the tool wrote, and the trace holds what came before"
        )?;
    }
    if let Some((count, first)) = &recording.left_out {
        writeln!(
            stderr,
            "linegrind: warning: {count} record(s) the trace format cannot hold were left out \
             of the trace; the first: {first}",
        )?;
    }
    if job.quiet {
        return Ok(());
    }
    // A device or a pipe keeps no size to tell.
    let size = recording.bytes.map_or(String::new(), |bytes| {
        let events = totals.instructions + totals.accesses;
        format!(
            " ({} bytes, {} bytes per event)",
            grouped(bytes),
            bytes_per_event(bytes, events)
        )
    });
    writeln!(
        stderr,
        "linegrind: recorded {} instructions and {} data accesses into {}{size}{}",
        grouped(totals.instructions),
        grouped(totals.accesses),
        job.output.display(),
        ended_by_signal(recording.status),
    )
}

/// `; the program was ended by signal 6 (SIGABRT)` when a signal ended
/// it, which the exit code (128 + the signal) tells less plainly and the
/// trace does not keep.
fn ended_by_signal(status: std::process::ExitStatus) -> String {
    let Some(signal) = status.signal() else {
        return String::new();
    };
    format!(
        "; the program was ended by signal {signal}{}",
        signal_name(signal)
    )
}

/// Prints the `VALGRIND_LIB` folder `record` runs Valgrind with, setting it
/// up if need be.
pub fn print_valgrind_lib(stdout: &mut dyn Write) -> Result<(), Failure> {
    let folder = record::valgrind_lib().map_err(|err| Failure::Input(err.into()))?;
    stdout
        .write_all(folder.as_os_str().as_bytes())
        .and_then(|()| stdout.write_all(b"\n"))
        .other("cannot print the folder")
}

/// Checks, before the program runs, that the trace can be written, would
/// not replace the program, and would not mix with its output, and that
/// the program is one the recorder runs.
fn check_job(job: &RecordJob) -> Result<(), Failure> {
    use std::os::fd::AsFd;
    let output = &job.output;
    for (fd, stream) in [
        (std::io::stdout().as_fd(), "output"),
        (std::io::stderr().as_fd(), "error"),
    ] {
        if is_open_as(output, fd) && !is_null_device(output) {
            return Err(Failure::Input(anyhow::anyhow!(
                "the trace {} is where the program's standard {stream} goes, and the two \
                 would mix: name a file (-o)",
                output.display()
            )));
        }
    }
    if let Some(program) = job
        .program
        .first()
        .and_then(|name| record::program_file(name))
    {
        if same_path(&program, output) {
            return Err(Failure::Input(anyhow::anyhow!(
                "the trace {} would replace the program it records: name another (-o)",
                output.display()
            )));
        }
        if let Some(what) = record::foreign_program(&program) {
            return Err(Failure::Input(anyhow::anyhow!(
                "{} is {what}: linegrind records x86-64 programs only",
                program.display()
            )));
        }
    }
    writable(output)
}

/// Whether `path` is the null device, which takes anything.
fn is_null_device(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let null = |path: &Path| std::fs::metadata(path).map(|meta| meta.rdev());
    null(path).is_ok_and(|rdev| null(Path::new("/dev/null")).is_ok_and(|null| null == rdev))
}

/// The program's exit code, or 128 + the signal that ended it, as a shell
/// reports it.
fn exit_code(status: std::process::ExitStatus) -> u8 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code as u8,
        (None, Some(signal)) => (128 + signal) as u8,
        (None, None) => 1,
    }
}
