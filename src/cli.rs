//! Command-line arguments, and their conversion into validated jobs. Clap
//! types stay here; the library sees only [`linegrind::commands`] jobs.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::{ArgAction, Parser, Subcommand};
use linegrind::cache::CacheGeometry;
use linegrind::commands::{ConvertJob, SimJob};
use linegrind::config::{ConfigError, SimConfig};
use linegrind::output::Positions;
use linegrind::record::RecordJob;
use linegrind::symbols::SkipRules;
use linegrind::trace::Format;

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
  linegrind record -o app.lgt -- ./app --size 1000
  linegrind sim app.lgt --LL=2097152,16,64";

#[derive(Parser, Debug)]
#[command(name = "linegrind", version, about = ABOUT, long_about = LONG_ABOUT, after_help = EXAMPLES)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate caches over a trace and write a callgrind-format profile.
    #[command(after_help = SIM_EXAMPLES)]
    Sim(SimArgs),
    /// Run a program under Valgrind and record its trace.
    #[command(after_help = RECORD_EXAMPLES)]
    Record(RecordArgs),
    /// Convert a trace between the text and binary formats.
    #[command(after_help = CONVERT_EXAMPLES)]
    Convert(ConvertArgs),
    /// Describe a trace: format, command, modules, threads, events, size.
    #[command(after_help = "Example:\n  linegrind info app.lgt")]
    Info(InfoArgs),
}

const RECORD_EXAMPLES: &str = "\
Examples:
  linegrind record -- ./app input.dat        # writes app.lgt
  linegrind record -o run1.lgt -- ./app
  linegrind record --instr-atstart=no -- ./app   # record from CALLGRIND_START_INSTRUMENTATION";

const CONVERT_EXAMPLES: &str = "\
Examples:
  linegrind convert app.lgt app.txt            # binary to text
  linegrind convert hand.lgt hand.bin --to binary";

#[derive(clap::Args, Debug)]
struct RecordArgs {
    /// Write the trace here [default: <program file stem>.lgt]
    /// (example: -o app.lgt).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// Record from the start, or only from the program's
    /// CALLGRIND_START_INSTRUMENTATION (example: --instr-atstart=no).
    #[arg(long = "instr-atstart", value_name = "yes|no", default_value = "yes", value_parser = yes_no, action = ArgAction::Set)]
    instr_atstart: bool,

    /// The program to run and its arguments (example: -- ./app input.dat).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROGRAM"
    )]
    program: Vec<OsString>,
}

#[derive(clap::Args, Debug)]
struct ConvertArgs {
    /// The trace to read (text or binary).
    input: PathBuf,
    /// The trace to write.
    output: PathBuf,
    /// The output format [default: the other one] (example: --to text).
    #[arg(long, value_name = "text|binary", value_parser = format)]
    to: Option<Format>,
    /// Convert what a binary trace without its end holds
    /// (example: --allow-truncated).
    #[arg(long)]
    allow_truncated: bool,
}

#[derive(clap::Args, Debug)]
struct InfoArgs {
    /// The trace to describe.
    trace: PathBuf,
    /// Describe what a binary trace without its end holds
    /// (example: --allow-truncated).
    #[arg(long)]
    allow_truncated: bool,
}

fn format(text: &str) -> Result<Format, String> {
    match text {
        "text" => Ok(Format::Text),
        "binary" => Ok(Format::Binary),
        _ => Err(format!("expected `text` or `binary`, found `{text}`")),
    }
}

const SIM_EXAMPLES: &str = "\
Examples:
  linegrind sim traces/hydro.lgt
  linegrind sim app.lgt --D1=65536,8,64 --LL=2097152,16,64 -o app.out
  linegrind sim app.lgt --cacheuse=no          # misses only, fastest
  callgrind_annotate --inclusive=yes callgrind.out.app";

#[derive(clap::Args, Debug)]
struct SimArgs {
    /// The trace to simulate: binary (from `linegrind record`) or text.
    trace: PathBuf,

    /// Write the profile here [default: callgrind.out.<trace file stem>]
    /// (example: -o app.out).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// Level-1 instruction cache, as Callgrind's --I1 (example: --I1=65536,8,64).
    #[arg(
        long = "I1",
        value_name = "SIZE,ASSOC,LINE",
        default_value = "32768,8,64"
    )]
    i1: CacheGeometry,

    /// Level-1 data cache, as Callgrind's --D1 (example: --D1=49152,12,64).
    #[arg(
        long = "D1",
        value_name = "SIZE,ASSOC,LINE",
        default_value = "32768,8,64"
    )]
    d1: CacheGeometry,

    /// Last-level cache, as Callgrind's --LL (example: --LL=2097152,16,64).
    #[arg(
        long = "LL",
        value_name = "SIZE,ASSOC,LINE",
        default_value = "8388608,16,64"
    )]
    ll: CacheGeometry,

    /// Collect cache-use metrics: AcCost/SpLoss and bytes loaded and used per
    /// loading instruction (example: --cacheuse=no for misses only).
    #[arg(long = "cacheuse", value_name = "yes|no", default_value = "yes", value_parser = yes_no, action = ArgAction::Set)]
    cache_use: bool,

    /// Back-date cache-use metrics to every call on the loading stack, so they
    /// appear as inclusive costs (example: --backdate=no for self costs only,
    /// as Callgrind).
    #[arg(long = "backdate", value_name = "yes|no", default_value = "yes", value_parser = yes_no, action = ArgAction::Set)]
    backdate: bool,

    /// Functions listed in each top list of the summary (example: --top=20).
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,

    /// Give costs per instruction address, as Callgrind's --dump-instr
    /// (example: --dump-instr=no for per-line costs only).
    #[arg(long = "dump-instr", value_name = "yes|no", default_value = "yes", value_parser = yes_no, action = ArgAction::Set)]
    dump_instr: bool,

    /// Give costs per source line, as Callgrind's --dump-line
    /// (example: --dump-line=no).
    #[arg(long = "dump-line", value_name = "yes|no", default_value = "yes", value_parser = yes_no, action = ArgAction::Set)]
    dump_line: bool,

    /// Skip functions matching PATTERN (`*` and `?` wildcards; repeatable):
    /// their cost and calls are their caller's (example: --fn-skip='GOMP_*').
    #[arg(long = "fn-skip", value_name = "PATTERN")]
    fn_skip: Vec<String>,

    /// Show inlined functions as functions of their own, called from the
    /// code they were inlined into; needs DWARF (example: --show-inlined=yes).
    #[arg(long = "show-inlined", value_name = "yes|no", default_value = "no", value_parser = yes_no, action = ArgAction::Set)]
    show_inlined: bool,

    /// Simulate what a binary trace without its end holds, with a warning
    /// (example: --allow-truncated).
    #[arg(long)]
    allow_truncated: bool,

    /// Skip PLT stubs, as Callgrind does by default (example: --skip-plt=no).
    #[arg(long = "skip-plt", value_name = "yes|no", default_value = "yes", value_parser = yes_no, action = ArgAction::Set)]
    skip_plt: bool,
}

fn yes_no(text: &str) -> Result<bool, String> {
    match text {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err(format!("expected `yes` or `no`, found `{text}`")),
    }
}

/// A validated command.
pub enum Job {
    Sim(SimJob),
    Record(RecordJob),
    Convert(ConvertJob),
    Info {
        trace: PathBuf,
        allow_truncated: bool,
    },
}

impl Args {
    /// Checks the combination of options and builds the job.
    pub fn into_job(self) -> Result<Job, ConfigError> {
        match self.command {
            Command::Sim(args) => {
                let skip = SkipRules {
                    patterns: args.fn_skip,
                    plt: args.skip_plt,
                };
                let config =
                    SimConfig::new(args.i1, args.d1, args.ll, args.cache_use, args.backdate)?
                        .with_skip(skip)
                        .with_inline_functions(args.show_inlined);
                if !args.dump_instr && !args.dump_line {
                    return Err(ConfigError::new(
                        "--dump-instr=no and --dump-line=no leave cost lines without a position; \
                         keep one of them",
                    ));
                }
                let output = args
                    .output
                    .unwrap_or_else(|| SimJob::default_output(&args.trace));
                Ok(Job::Sim(SimJob {
                    trace: args.trace,
                    output,
                    config,
                    positions: Positions {
                        instr: args.dump_instr,
                        line: args.dump_line,
                    },
                    top: args.top,
                    allow_truncated: args.allow_truncated,
                }))
            }
            Command::Record(args) => {
                let output = args
                    .output
                    .unwrap_or_else(|| RecordJob::default_output(Path::new(&args.program[0])));
                Ok(Job::Record(RecordJob {
                    output,
                    program: args.program,
                    instr_atstart: args.instr_atstart,
                }))
            }
            Command::Convert(args) => Ok(Job::Convert(ConvertJob {
                input: args.input,
                output: args.output,
                to: args.to,
                allow_truncated: args.allow_truncated,
            })),
            Command::Info(args) => Ok(Job::Info {
                trace: args.trace,
                allow_truncated: args.allow_truncated,
            }),
        }
    }
}
