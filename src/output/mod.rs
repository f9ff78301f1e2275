//! Writers: the callgrind-format profile, the JSON summary, the text
//! summary and tables, misses by cause (`classify`), the Firefox Profiler
//! profile; atomic file replacement (temporary files removed on an
//! interrupt: see [`crate::interrupt`]); and progress on a terminal.

mod atomic;
mod callgrind;
mod callgrind_names;
mod firefox;
pub mod json;
mod labels;
mod miss_classes;
mod number;
mod progress;
mod summary;
pub mod table;

pub use atomic::{
    OutputFile, check_writable, folder_of, is_char_device, is_open_as, is_stdout, link_chain,
    names_folder, write_atomically, write_uncommitted, written_in_place,
};
pub use callgrind::{Positions, Source, file_name, object_of, write_callgrind};
pub use callgrind_names::{NameIds, UNKNOWN, function_identity, one_line};
pub use firefox::write_firefox_profile;
pub use labels::object_file_name;
pub use miss_classes::{CLASSES_SCHEMA, ClassReport};
pub use number::{bytes_per_event, grouped, grouped_wide, percent};
pub use progress::Progress;
pub use summary::write_summary;
