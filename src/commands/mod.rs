//! The commands of the `linegrind` binary, as library functions: each takes
//! a validated job and does the whole task, so the binary only parses
//! arguments.

mod check;
mod classify;
mod convert;
mod diff;
mod failure;
mod info;
mod record;
mod report;
mod same_path;
mod sim;
mod trace_input;

pub use check::{CheckJob, EXCEEDED, check};
pub use classify::{ClassifyJob, classify};
pub use convert::{ConvertJob, convert};
pub use diff::{DiffJob, diff};
pub use failure::Failure;
pub use info::info;
pub use record::{print_valgrind_lib, record};
pub use report::{ReportJob, report};
pub use sim::{SimJob, SimRun, sim};
pub use trace_input::TraceInput;
