//! `linegrind classify` arguments.

use std::path::PathBuf;

use linegrind::commands::ClassifyJob;
use linegrind::config::{ConfigError, SimConfig};

use super::output_file;
use super::sim::CacheArgs;
use super::trace::InputArgs;

pub const CLASSIFY_EXAMPLES: &str = "\
Examples:
  linegrind classify traces/hydro.lgt
  linegrind classify app.lgt --D1=16K,2,64 --json classes.json
  linegrind classify trace.lackey --LL=256K,8,64   # a CS:APP cache lab trace";

#[derive(clap::Args, Debug)]
pub struct ClassifyArgs {
    #[command(flatten)]
    input: InputArgs,

    #[command(flatten)]
    caches: CacheArgs,

    /// Also write the counts as JSON (example: --json classes.json).
    #[arg(long, value_name = "FILE", value_parser = output_file)]
    json: Option<PathBuf>,

    /// No progress display and no table; only warnings and errors
    /// (example: --quiet).
    #[arg(short, long)]
    quiet: bool,
}

impl ClassifyArgs {
    /// Checks the caches as `sim --cacheuse=no` does and builds the job.
    pub fn into_job(self) -> Result<ClassifyJob, ConfigError> {
        let levels = self.caches.levels();
        SimConfig::new(levels.i1, levels.d1, levels.ll, false, false)?;
        Ok(ClassifyJob {
            input: self.input.into_input(),
            i1: levels.i1,
            d1: levels.d1,
            ll: levels.ll,
            json: self.json,
            quiet: self.quiet,
        })
    }
}
