//! Symbols: which function, file and line an address belongs to.

mod fn_ranges;

pub use fn_ranges::{FnRanges, OverlapError};
