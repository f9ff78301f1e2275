//! `linegrind sim` arguments.

use std::path::PathBuf;

use clap::ArgAction;
use linegrind::cache::CacheGeometry;
use linegrind::commands::{SimJob, SimRun};
use linegrind::config::{ConfigError, SimConfig};
use linegrind::hierarchies::{LEVEL_NAMES, Levels, NamedHierarchy, read_file, sweep};
use linegrind::output::Positions;
use linegrind::symbols::SkipRules;

use super::trace::InputArgs;
use super::{count, output_file, pattern, yes_no};

pub const SIM_EXAMPLES: &str = "\
Examples:
  linegrind sim traces/hydro.lgt
  linegrind sim app.lgt --D1=65536,8,64 --LL=2097152,16,64 -o app.out
  linegrind sim app.lgt --cacheuse=no          # misses only, fastest
  linegrind sim app.lgt --json app.json        # also a summary for `linegrind check`
  linegrind sim lackey.log --binary ./app      # a Valgrind Lackey trace, with calls from ./app
  linegrind sim app.lgt --sweep LL=256K..64M   # nine LL sizes from one pass over the trace
  callgrind_annotate --inclusive=yes callgrind.out.app";

#[derive(clap::Args, Debug)]
pub struct SimArgs {
    #[command(flatten)]
    input: InputArgs,

    /// Write the profile here [default: callgrind.out.<trace file stem>]
    /// (example: -o app.out).
    #[arg(short, long, value_name = "FILE", value_parser = output_file)]
    output: Option<PathBuf>,

    #[command(flatten)]
    caches: CacheArgs,

    /// Simulate one level at every size from FROM to TO, doubling, all from
    /// one decoding of the trace and in parallel; each writes its output
    /// with LEVEL=SIZE in its name (callgrind.out.LL=1M.app, summary.LL=1M.json;
    /// example: --sweep LL=256K..64M).
    #[arg(long, value_name = "LEVEL=FROM..TO", conflicts_with = "hierarchies")]
    sweep: Option<String>,

    /// Simulate every hierarchy listed in FILE (one per line: a name, then
    /// I1=, D1= or LL= geometries; levels left out are the command line's),
    /// each writing its output with its name in the output's
    /// (callgrind.out.NAME.app; example: --config caches.conf).
    #[arg(long = "config", value_name = "FILE")]
    hierarchies: Option<PathBuf>,

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
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = count)]
    top: usize,

    /// Give costs per instruction address, as Callgrind's --dump-instr
    /// (example: --dump-instr=no for per-line costs only).
    #[arg(long = "dump-instr", value_name = "yes|no", default_value = "yes", value_parser = yes_no, action = ArgAction::Set)]
    dump_instr: bool,

    /// Give costs per source line, as Callgrind's --dump-line
    /// (example: --dump-line=no).
    #[arg(long = "dump-line", value_name = "yes|no", default_value = "yes", value_parser = yes_no, action = ArgAction::Set)]
    dump_line: bool,

    /// Skip functions matching PATTERN (`*` and `?` wildcards; repeatable;
    /// names as profiles show them): their cost and calls are their
    /// caller's (example: --fn-skip='GOMP_*').
    #[arg(long = "fn-skip", value_name = "PATTERN", value_parser = pattern)]
    fn_skip: Vec<String>,

    /// Show inlined functions as functions of their own, called from the
    /// code they were inlined into; needs DWARF (example: --show-inlined=yes).
    #[arg(long = "show-inlined", value_name = "yes|no", default_value = "no", value_parser = yes_no, action = ArgAction::Set)]
    show_inlined: bool,

    /// Skip PLT stubs, as Callgrind does by default (example: --skip-plt=no).
    #[arg(long = "skip-plt", value_name = "yes|no", default_value = "yes", value_parser = yes_no, action = ArgAction::Set)]
    skip_plt: bool,

    /// Also write the JSON summary (totals, derived figures, per-function
    /// costs) that `check` and `diff` compare (example: --json app.json).
    #[arg(long, value_name = "FILE", value_parser = output_file)]
    json: Option<PathBuf>,

    /// Also write a Firefox Profiler profile: bytes loaded, used and wasted
    /// per loading call stack, one track each, and the trace's marks
    /// (example: --profile app.profile.json).
    #[arg(long = "profile", value_name = "FILE", value_parser = output_file)]
    firefox: Option<PathBuf>,

    /// No progress display and no summary; only warnings and errors
    /// (example: --quiet).
    #[arg(short, long)]
    quiet: bool,
}

/// The three caches, as Callgrind's options give them.
#[derive(clap::Args, Debug)]
pub struct CacheArgs {
    /// Level-1 instruction cache, as Callgrind's --I1; SIZE may end in K, M
    /// or G (example: --I1=65536,8,64 or --I1=64K,8,64).
    #[arg(
        long = "I1",
        value_name = "SIZE,ASSOC,LINE",
        default_value = "32768,8,64"
    )]
    i1: CacheGeometry,

    /// Level-1 data cache, as Callgrind's --D1; SIZE may end in K, M or G
    /// (example: --D1=49152,12,64 or --D1=48K,12,64).
    #[arg(
        long = "D1",
        value_name = "SIZE,ASSOC,LINE",
        default_value = "32768,8,64"
    )]
    d1: CacheGeometry,

    /// Last-level cache, as Callgrind's --LL; SIZE may end in K, M or G
    /// (example: --LL=2097152,16,64 or --LL=2M,16,64).
    #[arg(
        long = "LL",
        value_name = "SIZE,ASSOC,LINE",
        default_value = "8388608,16,64"
    )]
    ll: CacheGeometry,
}

impl CacheArgs {
    pub fn levels(&self) -> Levels {
        Levels {
            i1: self.i1,
            d1: self.d1,
            ll: self.ll,
        }
    }
}

/// For an error in a hierarchy of a sweep or a file: the levels it keeps
/// from the command line, which may be the ones at fault.
fn kept_levels(kept: &[&str]) -> String {
    if kept.is_empty() {
        return String::new();
    }
    let options: Vec<String> = kept.iter().map(|level| format!("--{level}")).collect();
    format!(
        " ({} from the command line or its defaults)",
        options.join(", ")
    )
}

impl SimArgs {
    /// Checks the combination of options and builds the job.
    pub fn into_job(self) -> Result<SimJob, ConfigError> {
        let skip = SkipRules {
            patterns: self.fn_skip,
            plt: self.skip_plt,
        };
        let given = self.caches.levels();
        let hierarchies = match (&self.sweep, &self.hierarchies) {
            (Some(spec), _) => Some(sweep(spec, given)),
            (None, Some(path)) => Some(read_file(path, given)),
            (None, None) => None,
        };
        let hierarchies = match hierarchies {
            Some(list) => list.map_err(|err| ConfigError::new(err.to_string()))?,
            None => vec![NamedHierarchy {
                name: String::new(),
                levels: given,
                line: None,
                kept: LEVEL_NAMES.to_vec(),
            }],
        };
        let several = self.sweep.is_some() || self.hierarchies.is_some();
        if several && self.firefox.is_some() {
            return Err(ConfigError::new(
                "--profile writes one Firefox profile: give it one hierarchy, not --sweep or --config",
            ));
        }
        let runs = hierarchies
            .into_iter()
            .map(|hierarchy| {
                let Levels { i1, d1, ll } = hierarchy.levels;
                let config = SimConfig::new(i1, d1, ll, self.cache_use, self.backdate)
                    .map_err(|err| {
                        let kept = kept_levels(&hierarchy.kept);
                        match (&self.sweep, &self.hierarchies) {
                            (Some(spec), _) => ConfigError::new(format!(
                                "--sweep {spec}: {}: {err}{kept}",
                                hierarchy.name
                            )),
                            (None, Some(path)) => {
                                let line = hierarchy.line.map(|line| format!("line {line}: "));
                                ConfigError::new(format!(
                                    "{}: {}hierarchy `{}`: {err}{kept}",
                                    path.display(),
                                    line.unwrap_or_default(),
                                    hierarchy.name
                                ))
                            }
                            (None, None) => err,
                        }
                    })?
                    .with_skip(skip.clone())
                    .with_inline_functions(self.show_inlined)
                    .with_stack_samples(self.firefox.is_some())?;
                Ok(SimRun {
                    name: several.then_some(hierarchy.name),
                    config,
                })
            })
            .collect::<Result<Vec<SimRun>, ConfigError>>()?;
        if !self.dump_instr && !self.dump_line {
            return Err(ConfigError::new(
                "--dump-instr=no and --dump-line=no leave cost lines without a position; \
                 keep one of them",
            ));
        }
        let input = self.input.into_input();
        let output = self
            .output
            .unwrap_or_else(|| SimJob::default_output(&input.path));
        Ok(SimJob {
            input,
            output,
            runs,
            hierarchies_file: self.hierarchies,
            positions: Positions {
                instr: self.dump_instr,
                line: self.dump_line,
            },
            top: self.top,
            json: self.json,
            firefox: self.firefox,
            quiet: self.quiet,
        })
    }
}
