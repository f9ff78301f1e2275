//! Reading profiles back and reporting on them: callgrind-format files
//! (ours or Callgrind's) and JSON summaries; the text report, differences
//! between two runs, and regression checks.

mod callgrind_file;
pub mod check;
pub mod diff;
mod from_profile;
pub mod percent;
mod run_costs;
mod setup;
mod signed_number;
mod source_annotation;
mod text_report;
mod tree_view;

pub use callgrind_file::{
    CallEntry, CostValue, FunctionEntry, FunctionIndex, FunctionKey, ParseError, ProfileFile,
};
pub use run_costs::{FunctionCosts, LoadError, RunCosts};
pub use setup::{Setup, Unlike};
pub use signed_number::{change, checked_change, grouped_signed, relative_change};
pub use text_report::{ReportOptions, TreeDirection, write_report};
