//! Symbols: which object, function, file and line an address belongs to.

mod compressed;
mod demangle;
mod elf;
mod file_names;
mod fn_ranges;
mod module_map;
mod skip;
mod symbolizer;

pub use demangle::demangle;
pub use elf::{ElfFunction, ElfObject, InlineFrame, SourceLine, map_file, plt_ranges};
pub use fn_ranges::{FnRanges, OverlapError};
pub use module_map::{Module, ModuleId, ModuleMap};
pub use skip::SkipRules;
pub use symbolizer::{Resolution, Symbolizer, hex};
