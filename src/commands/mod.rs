//! The commands of the `linegrind` binary, as library functions: each takes
//! a validated job and does the whole task, so the binary only parses
//! arguments.

mod convert;
mod failure;
mod info;
mod record;
mod sim;

pub use convert::{ConvertJob, convert};
pub use failure::{Failure, InputContext};
pub use info::info;
pub use record::record;
pub use sim::{SimJob, sim};
