//! Command-line arguments, and their conversion into validated jobs. Clap
//! types stay here; the library sees only [`linegrind::commands`] jobs.

mod classify;
mod report;
mod sim;
mod trace;

use std::io::IsTerminal;

use clap::{Parser, Subcommand};
use linegrind::commands::{
    CheckJob, ClassifyJob, ConvertJob, DiffJob, ReportJob, SimJob, TraceInput,
};
use linegrind::config::ConfigError;
use linegrind::record::RecordJob;

use classify::{CLASSIFY_EXAMPLES, ClassifyArgs};
use report::{CHECK_EXAMPLES, CheckArgs, DIFF_EXAMPLES, DiffArgs, REPORT_EXAMPLES, ReportArgs};
use sim::{SIM_EXAMPLES, SimArgs};
use trace::{CONVERT_EXAMPLES, ConvertArgs, InfoArgs, RECORD_EXAMPLES, RecordArgs};

const ABOUT: &str = "Trace-driven cache simulator with back-dated inclusive cache-use costs";

const LONG_ABOUT: &str = "\
Trace-driven cache simulator in the style of Valgrind's Callgrind.

linegrind simulates I1, D1 and LL caches over a recorded instruction and
memory-access trace. For every cache line it tracks exactly which bytes were
used and how often, charges spatial loss (bytes loaded but never used) and
temporal loss (few uses before eviction) to the instruction that loaded the
line, and back-dates those costs to every call on that instruction's stack,
so KCachegrind shows them as inclusive costs.";

const EXAMPLES: &str = "\
Examples:
  linegrind sim traces/hydro.lgt
  kcachegrind callgrind.out.hydro
  linegrind report callgrind.out.hydro --sort SpLoss1 --tree callee
  linegrind record -o app.lgt -- ./app --size 1000
  linegrind sim app.lgt --LL=2097152,16,64 --json app.json
  linegrind classify app.lgt --D1=16K,2,64
  linegrind check --baseline base.json app.json --limit SpLoss1=+2%";

#[derive(Parser, Debug)]
#[command(name = "linegrind", version, about = ABOUT, long_about = LONG_ABOUT, after_help = EXAMPLES)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate caches over a trace and write a callgrind-format profile.
    #[command(after_help = SIM_EXAMPLES, args_override_self = true)]
    Sim(SimArgs),
    /// Count each cache's misses by cause: compulsory, capacity, conflict.
    #[command(after_help = CLASSIFY_EXAMPLES)]
    Classify(ClassifyArgs),
    /// Run a program under Valgrind and record its trace.
    #[command(after_help = RECORD_EXAMPLES)]
    Record(RecordArgs),
    /// Convert a trace between the text and binary formats.
    #[command(after_help = CONVERT_EXAMPLES)]
    Convert(ConvertArgs),
    /// Describe a trace: format, command, modules, threads, events, size.
    #[command(after_help = "Example:\n  linegrind info app.lgt")]
    Info(InfoArgs),
    /// Report on a callgrind-format profile: top functions, call trees,
    /// annotated source.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Compare two runs (callgrind files or JSON summaries) function by
    /// function.
    #[command(after_help = DIFF_EXAMPLES)]
    Diff(DiffArgs),
    /// Fail (exit code 3) when events rose past their limits from a
    /// baseline run.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
}

/// A validated command.
pub enum Job {
    Sim(SimJob),
    Classify(ClassifyJob),
    Record(RecordJob),
    PrintValgrindLib,
    Convert(ConvertJob),
    Info(TraceInput),
    Report(ReportJob),
    Diff(DiffJob),
    Check(CheckJob),
}

impl Args {
    /// Checks the combination of options and builds the job.
    pub fn into_job(self) -> Result<Job, ConfigError> {
        Ok(match self.command {
            Command::Sim(args) => Job::Sim(args.into_job()?),
            Command::Classify(args) => Job::Classify(args.into_job()?),
            Command::Record(args) => match args.into_job() {
                Some(job) => Job::Record(job),
                None => Job::PrintValgrindLib,
            },
            Command::Convert(args) => Job::Convert(args.into_job()),
            Command::Info(args) => Job::Info(args.into_input()),
            Command::Report(args) => Job::Report(args.into_job()),
            Command::Diff(args) => Job::Diff(args.into_job()),
            Command::Check(args) => Job::Check(args.into_job()),
        })
    }
}

/// A file to write: any path but `-`, which many tools read as standard
/// output and linegrind would take for a file named `-`.
fn output_file(text: &str) -> Result<std::path::PathBuf, String> {
    match text {
        "-" => Err("`-` is not standard output here: name a file, or /dev/stdout".into()),
        "" => Err("an empty name: name a file".into()),
        _ => Ok(text.into()),
    }
}

/// A trace for `record` to write: a file, since the program's own output
/// goes to standard output.
fn trace_file(text: &str) -> Result<std::path::PathBuf, String> {
    match text {
        "-" => Err("`-` is not standard output here: name a file".into()),
        _ => output_file(text),
    }
}

/// A function name pattern: an empty one would match nothing.
fn pattern(text: &str) -> Result<String, String> {
    match text {
        "" => Err("an empty pattern, which matches no function".into()),
        _ => Ok(text.to_string()),
    }
}

/// A number of things to show: a whole number, 0 or more.
fn count(text: &str) -> Result<usize, String> {
    text.parse()
        .map_err(|err: std::num::ParseIntError| match err.kind() {
            std::num::IntErrorKind::PosOverflow => format!("more than {}", usize::MAX),
            _ => "expected a whole number, 0 or more".into(),
        })
}

fn yes_no(text: &str) -> Result<bool, String> {
    match text {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err(format!("expected `yes` or `no`, found `{text}`")),
    }
}

/// Colours on standard output: only on a terminal, without `--no-color`
/// and without the `NO_COLOR` environment variable.
fn color(no_color: bool) -> bool {
    !no_color && std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
}
