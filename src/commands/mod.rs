//! The commands of the `linegrind` binary, as library functions: each takes
//! a validated job and does the whole task, so the binary only parses
//! arguments.

mod failure;
mod sim;

pub use failure::{Failure, InputContext};
pub use sim::{SimJob, sim};
