//! Arguments of the reporting commands: `report`, `diff` and `check`.

use std::path::PathBuf;

use linegrind::commands::{CheckJob, DiffJob, ReportJob};
use linegrind::report::TreeDirection;
use linegrind::report::check::Limit;
use linegrind::report::diff::{Renames, Rewrite};
use linegrind::report::percent::{MAX_DECIMALS, Percent};

use super::{color, count, output_file, pattern, yes_no};

pub const REPORT_EXAMPLES: &str = "\
Examples:
  linegrind report callgrind.out.hydro
  linegrind report callgrind.out.hydro --sort SpLoss1 --show Ir,D1mr --threshold 1
  linegrind report callgrind.out.hydro --sort SpLoss1 --tree callee   # top-down from main
  linegrind report callgrind.out.hydro --tree caller --auto=yes       # who calls the top functions";

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// A callgrind-format profile, ours or Callgrind's.
    profile: PathBuf,

    /// Rank functions by this event [default: the profile's first]
    /// (example: --sort SpLoss1).
    #[arg(long, value_name = "EVENT")]
    sort: Option<String>,

    /// Rank by self cost instead of inclusive cost (example: --self).
    #[arg(long = "self")]
    by_self: bool,

    /// Also show these events, comma-separated (example: --show Ir,D1mr).
    #[arg(long, value_name = "EVENTS", value_delimiter = ',')]
    show: Vec<String>,

    /// Leave out functions and calls below this percent of the sort event's
    /// total; annotated source shows every line with a cost (example:
    /// --threshold 1).
    #[arg(long, value_name = "PERCENT", default_value = "0.1", value_parser = percent)]
    threshold: Percent,

    /// Show at most this many functions (example: --top 50).
    #[arg(long, value_name = "N", default_value_t = 25, value_parser = count)]
    top: usize,

    /// Show call trees instead of the flat profile: `callee` top-down from
    /// the roots, `caller` from each top function up to its callers
    /// (example: --tree callee).
    #[arg(long, value_name = "caller|callee", value_parser = tree)]
    tree: Option<TreeDirection>,

    /// Annotate the source files of the top functions with their lines'
    /// costs, like callgrind_annotate (example: --auto=yes).
    #[arg(long = "auto", value_name = "yes|no", default_value = "no", value_parser = yes_no, action = clap::ArgAction::Set)]
    auto: bool,

    /// Look for relative source files in DIR too (repeatable;
    /// example: --include ../src).
    #[arg(long, value_name = "DIR")]
    include: Vec<PathBuf>,

    /// No colours, even on a terminal (example: --no-color).
    #[arg(long)]
    no_color: bool,
}

fn percent(text: &str) -> Result<Percent, String> {
    Percent::parse(text)
        .filter(|p| p.at_most(100))
        .ok_or_else(|| {
            format!(
                "expected a percentage from 0 to 100 (digits, at most {MAX_DECIMALS} \
                 after the point), found `{text}`"
            )
        })
}

fn tree(text: &str) -> Result<TreeDirection, String> {
    match text {
        "caller" => Ok(TreeDirection::Caller),
        "callee" => Ok(TreeDirection::Callee),
        _ => Err(format!("expected `caller` or `callee`, found `{text}`")),
    }
}

impl ReportArgs {
    pub fn into_job(self) -> ReportJob {
        ReportJob {
            profile: self.profile,
            sort: self.sort,
            by_self: self.by_self,
            show: self.show,
            threshold: self.threshold,
            top: self.top,
            tree: self.tree,
            annotate: self.auto,
            include: self.include,
            color: color(self.no_color),
        }
    }
}

pub const DIFF_EXAMPLES: &str = "\
Examples:
  linegrind diff callgrind.out.small callgrind.out.large --sort D1mr
  linegrind diff base.json new.json
  linegrind diff old.out new.out --mod-funcname 's/_v[0-9]+$//' --out callgrind.out.diff";

#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// The first run: a callgrind file or a JSON summary.
    a: PathBuf,
    /// The second run.
    b: PathBuf,

    /// Rank functions by the change of this event [default: the first]
    /// (example: --sort SpLoss1).
    #[arg(long, value_name = "EVENT")]
    sort: Option<String>,

    /// Show at most this many functions (example: --top 50).
    #[arg(long, value_name = "N", default_value_t = 25, value_parser = count)]
    top: usize,

    /// Rewrite function names before lining them up, sed-style (repeatable;
    /// example: --mod-funcname 's/_v[0-9]+$//').
    #[arg(long = "mod-funcname", value_name = "s/REGEX/REPLACEMENT/")]
    mod_funcname: Vec<Rewrite>,

    /// Rewrite file names before lining them up (repeatable;
    /// example: --mod-filename 's/^build[0-9]+/build/').
    #[arg(long = "mod-filename", value_name = "s/REGEX/REPLACEMENT/")]
    mod_filename: Vec<Rewrite>,

    /// Also write B minus A as a callgrind file; needs two callgrind files
    /// (example: --out callgrind.out.diff).
    #[arg(long, value_name = "FILE", value_parser = output_file)]
    out: Option<PathBuf>,

    /// No colours, even on a terminal (example: --no-color).
    #[arg(long)]
    no_color: bool,
}

impl DiffArgs {
    pub fn into_job(self) -> DiffJob {
        DiffJob {
            a: self.a,
            b: self.b,
            sort: self.sort,
            top: self.top,
            renames: Renames {
                functions: self.mod_funcname,
                files: self.mod_filename,
            },
            out: self.out,
            color: color(self.no_color),
        }
    }
}

pub const CHECK_EXAMPLES: &str = "\
Examples:
  linegrind check --baseline base.json new.json --limit SpLoss1=+2% --limit D1mr=+1%
  linegrind check --baseline base.json new.json --limit Ir=+100000
  linegrind check --baseline base.json new.json --limit SpLoss1=+5% --function 'gather_*'

Exit codes: 0 within the limits, 3 when a limit is exceeded, 2 on bad input.";

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// The baseline run: a JSON summary from `sim --json` (or a callgrind
    /// file) (example: --baseline base.json).
    #[arg(long, value_name = "FILE")]
    baseline: PathBuf,

    /// The current run, compared with the baseline.
    current: PathBuf,

    /// How far an event may rise: EVENT=+N% of the baseline or EVENT=+N,
    /// the + optional (repeatable, at least one; example: --limit
    /// SpLoss1=+2%).
    #[arg(long, value_name = "EVENT=+N%", required = true)]
    limit: Vec<Limit>,

    /// Apply the limits to the inclusive cost of the functions matching
    /// PATTERN as well (`*`, `?`; on the name or `file:name`; repeatable;
    /// example: --function 'gather_*').
    #[arg(long, value_name = "PATTERN", value_parser = pattern)]
    function: Vec<String>,

    /// No colours, even on a terminal (example: --no-color).
    #[arg(long)]
    no_color: bool,
}

impl CheckArgs {
    pub fn into_job(self) -> CheckJob {
        CheckJob {
            baseline: self.baseline,
            current: self.current,
            limits: self.limit,
            functions: self.function,
            color: color(self.no_color),
        }
    }
}
