//! Writers: the callgrind-format profile, the text summary, and atomic
//! file replacement for both.

mod atomic;
mod callgrind;
mod number;
mod summary;

pub use atomic::{temp_file_beside, write_atomically};
pub use callgrind::{Positions, write_callgrind};
pub use number::{bytes_per_event, grouped, percent};
pub use summary::write_summary;
