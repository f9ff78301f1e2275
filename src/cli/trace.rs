//! Arguments of the trace commands: `record`, `convert` and `info`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::ArgAction;
use linegrind::commands::{ConvertJob, TraceInput};
use linegrind::record::RecordJob;
use linegrind::trace::{Binary, Format};

use super::{output_file, trace_file, yes_no};

pub const RECORD_EXAMPLES: &str = "\
Examples:
  linegrind record -- ./app input.dat        # writes app.lgt
  linegrind record -o run1.lgt -- ./app
  linegrind record --instr-atstart=no -- ./app   # record from CALLGRIND_START_INSTRUMENTATION
  # Callgrind as the recording ran, with the caches sim simulates by default:
  env _=\"$(command -v linegrind)\" VALGRIND_LIB=\"$(linegrind record --print-valgrind-lib)\" \\
      valgrind -q --tool=callgrind --cacheuse=yes \\
      --I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64 ./app";

pub const CONVERT_EXAMPLES: &str = "\
Examples:
  linegrind convert app.lgt app.txt            # binary to text
  linegrind convert hand.lgt hand.bin --to binary
  linegrind convert lackey.log app.lgt --binary ./app   # a Lackey trace, with its calls";

#[derive(clap::Args, Debug)]
pub struct RecordArgs {
    /// Write the trace here [default: <program file stem>.lgt]
    /// (example: -o app.lgt).
    #[arg(short, long, value_name = "FILE", value_parser = trace_file)]
    output: Option<PathBuf>,

    /// Record from the start, or only from the program's
    /// CALLGRIND_START_INSTRUMENTATION (example: --instr-atstart=no).
    #[arg(long = "instr-atstart", value_name = "yes|no", default_value = "yes", value_parser = yes_no, action = ArgAction::Set)]
    instr_atstart: bool,

    /// No report line at the end (example: -q).
    #[arg(short, long)]
    quiet: bool,

    /// Print the VALGRIND_LIB folder recordings run Valgrind with, set up
    /// if need be, and exit: Callgrind run with it (and `_` set to this
    /// linegrind's path) sees the environment a recording sees (example:
    /// --print-valgrind-lib).
    #[arg(long, conflicts_with_all = ["output", "instr_atstart", "quiet", "program"])]
    print_valgrind_lib: bool,

    /// The program to run and its arguments (example: -- ./app input.dat).
    #[arg(
        required_unless_present = "print_valgrind_lib",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROGRAM"
    )]
    program: Vec<OsString>,
}

/// The trace a command reads, and how.
#[derive(clap::Args, Debug)]
pub struct InputArgs {
    /// The trace: binary (from `linegrind record`), text, Valgrind Lackey's
    /// or Dinero's (told by its content).
    trace: PathBuf,

    /// Read what a binary trace without its end holds, with a warning
    /// (example: --allow-truncated).
    #[arg(long)]
    allow_truncated: bool,

    /// The trace's format, instead of telling it by its content: text,
    /// binary, lackey, din (Dinero's LABEL ADDRESS) or xdin (Dinero IV's
    /// TYPE ADDRESS SIZE) (example: --format din).
    #[arg(long, value_name = "FORMAT")]
    format: Option<Format>,

    /// The program's binary, for the calls and the function names of a
    /// Lackey or Dinero trace; a shared library needs its load bias in hex
    /// (repeatable; example: --binary ./app --binary /lib/libc.so.6:4845000).
    #[arg(long = "binary", value_name = "PATH[:BIAS]")]
    binaries: Vec<Binary>,
}

impl InputArgs {
    pub fn into_input(self) -> TraceInput {
        TraceInput {
            path: self.trace,
            allow_truncated: self.allow_truncated,
            format: self.format,
            binaries: self.binaries,
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct ConvertArgs {
    #[command(flatten)]
    input: InputArgs,
    /// The trace to write.
    #[arg(value_parser = output_file)]
    output: PathBuf,
    /// The output format, text or binary [default: text for a binary trace,
    /// binary for any other] (example: --to text).
    #[arg(long, value_name = "text|binary", value_parser = output_format)]
    to: Option<Format>,
}

#[derive(clap::Args, Debug)]
pub struct InfoArgs {
    #[command(flatten)]
    input: InputArgs,
}

impl InfoArgs {
    pub fn into_input(self) -> TraceInput {
        self.input.into_input()
    }
}

fn output_format(text: &str) -> Result<Format, String> {
    match text {
        "text" => Ok(Format::Text),
        "binary" => Ok(Format::Binary),
        _ => Err(format!("expected `text` or `binary`, found `{text}`")),
    }
}

impl RecordArgs {
    /// The recording, or `None` for `--print-valgrind-lib`.
    pub fn into_job(self) -> Option<RecordJob> {
        if self.print_valgrind_lib {
            return None;
        }
        let output = self
            .output
            .unwrap_or_else(|| RecordJob::default_output(Path::new(&self.program[0])));
        Some(RecordJob {
            output,
            program: self.program,
            instr_atstart: self.instr_atstart,
            quiet: self.quiet,
        })
    }
}

impl ConvertArgs {
    pub fn into_job(self) -> ConvertJob {
        ConvertJob {
            input: self.input.into_input(),
            output: self.output,
            to: self.to,
        }
    }
}
