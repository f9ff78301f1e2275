//! Arguments of the trace commands: `record`, `convert` and `info`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::ArgAction;
use linegrind::commands::ConvertJob;
use linegrind::record::RecordJob;
use linegrind::trace::Format;

use super::yes_no;

pub const RECORD_EXAMPLES: &str = "\
Examples:
  linegrind record -- ./app input.dat        # writes app.lgt
  linegrind record -o run1.lgt -- ./app
  linegrind record --instr-atstart=no -- ./app   # record from CALLGRIND_START_INSTRUMENTATION";

pub const CONVERT_EXAMPLES: &str = "\
Examples:
  linegrind convert app.lgt app.txt            # binary to text
  linegrind convert hand.lgt hand.bin --to binary";

#[derive(clap::Args, Debug)]
pub struct RecordArgs {
    /// Write the trace here [default: <program file stem>.lgt]
    /// (example: -o app.lgt).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// Record from the start, or only from the program's
    /// CALLGRIND_START_INSTRUMENTATION (example: --instr-atstart=no).
    #[arg(long = "instr-atstart", value_name = "yes|no", default_value = "yes", value_parser = yes_no, action = ArgAction::Set)]
    instr_atstart: bool,

    /// No progress display and no report line at the end (example: -q).
    #[arg(short, long)]
    quiet: bool,

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
pub struct ConvertArgs {
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
pub struct InfoArgs {
    /// The trace to describe.
    pub trace: PathBuf,
    /// Describe what a binary trace without its end holds
    /// (example: --allow-truncated).
    #[arg(long)]
    pub allow_truncated: bool,
}

fn format(text: &str) -> Result<Format, String> {
    match text {
        "text" => Ok(Format::Text),
        "binary" => Ok(Format::Binary),
        _ => Err(format!("expected `text` or `binary`, found `{text}`")),
    }
}

impl RecordArgs {
    pub fn into_job(self) -> RecordJob {
        let output = self
            .output
            .unwrap_or_else(|| RecordJob::default_output(Path::new(&self.program[0])));
        RecordJob {
            output,
            program: self.program,
            instr_atstart: self.instr_atstart,
            quiet: self.quiet,
        }
    }
}

impl ConvertArgs {
    pub fn into_job(self) -> ConvertJob {
        ConvertJob {
            input: self.input,
            output: self.output,
            to: self.to,
            allow_truncated: self.allow_truncated,
        }
    }
}
