//! The `linegrind` binary: parse arguments, run the command, map the result
//! to an exit code (0 success, 1 failure, 2 bad input or usage, 3 a
//! `check` limit exceeded).

mod cli;

use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;
use linegrind::commands::{self, Failure};

/// Runs before Rust's runtime starts, which ignores SIGPIPE and opens
/// `/dev/null` on closed standard descriptors: what the caller set up is
/// noted for the program `record` runs.
#[used]
#[unsafe(link_section = ".init_array")]
static NOTE_AT_START: extern "C" fn() = note_at_start;

extern "C" fn note_at_start() {
    linegrind::record::note_at_start();
}

fn main() -> ExitCode {
    let job = match cli::Args::parse().into_job() {
        Ok(job) => job,
        Err(err) => {
            say(format_args!("linegrind: {err}"));
            return ExitCode::from(2);
        }
    };
    // Line by line on a terminal; elsewhere in blocks, as Rust's standard
    // output alone writes every line with a call or two of its own.
    let lock = io::stdout().lock();
    let out: Box<dyn Write> = match lock.is_terminal() {
        true => Box::new(lock),
        false => Box::new(BufWriter::with_capacity(STDOUT_BUFFER, lock)),
    };
    let mut stdout = Stdout { out, closed: false };
    let mut stderr = Stderr(io::stderr());
    let result = match &job {
        cli::Job::Sim(job) => commands::sim(job, &mut stdout, &mut stderr).map(|()| 0),
        cli::Job::Classify(job) => commands::classify(job, &mut stdout, &mut stderr).map(|()| 0),
        cli::Job::Record(job) => commands::record(job, &mut stderr),
        cli::Job::PrintValgrindLib => commands::print_valgrind_lib(&mut stdout).map(|()| 0),
        cli::Job::Convert(job) => commands::convert(job, &mut stderr).map(|()| 0),
        cli::Job::Info(input) => commands::info(input, &mut stdout).map(|()| 0),
        cli::Job::Report(job) => commands::report(job, &mut stdout).map(|()| 0),
        cli::Job::Diff(job) => commands::diff(job, &mut stdout, &mut stderr).map(|()| 0),
        cli::Job::Check(job) => commands::check(job, &mut stdout),
    };
    let code = match result {
        Ok(code) => code,
        Err(failure) if stdout.closed && is_closed_pipe(&failure) => 0,
        Err(failure) => {
            say(format_args!("linegrind: {failure}"));
            return ExitCode::from(failure.exit_code());
        }
    };
    // What is left to print goes out now; a reader gone by then changes
    // no exit code (`check`'s 3 included).
    match stdout.flush() {
        Err(err) if !stdout.closed => {
            say(format_args!("linegrind: {err}"));
            ExitCode::FAILURE
        }
        _ => ExitCode::from(code),
    }
}

/// Bytes of standard output gathered before they are written, where it is
/// not a terminal.
const STDOUT_BUFFER: usize = 64 << 10;

/// Prints a line on standard error, if it can: with nowhere to say it
/// (closed, full), the exit code is all that is left to tell.
fn say(message: std::fmt::Arguments) {
    let _ = writeln!(io::stderr(), "{message}");
}

/// Standard error, for warnings, progress and `record`'s report: a reader
/// that stopped reading it (`linegrind record -- app 2>&1 | head -1`) is
/// not an error, and what is left to say goes nowhere.
struct Stderr(io::Stderr);

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.write(buf) {
            Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(buf.len()),
            other => other,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.0.flush() {
            Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    }
}

/// Standard output, noting whether its reader went away.
struct Stdout<W> {
    out: W,
    closed: bool,
}

impl<W: Write> Stdout<W> {
    fn noted<T>(&mut self, result: io::Result<T>) -> io::Result<T> {
        if result
            .as_ref()
            .is_err_and(|err| err.kind() == io::ErrorKind::BrokenPipe)
        {
            self.closed = true;
        }
        result
    }
}

impl<W: Write> Write for Stdout<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = self.out.write(buf);
        self.noted(result)
    }

    fn flush(&mut self) -> io::Result<()> {
        let result = self.out.flush();
        self.noted(result)
    }
}

/// A reader that stops reading what a command prints (`linegrind report
/// p | head`) is not an error; one that stops reading an output file
/// (`-o /dev/stdout`) left that file short, which is.
fn is_closed_pipe(failure: &Failure) -> bool {
    failure.error().chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|err| err.kind() == io::ErrorKind::BrokenPipe)
    })
}
