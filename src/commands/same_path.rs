//! Whether two paths name one file, for commands that must not write an
//! output over one of their inputs.

use std::path::Path;

/// The regular file at `path`, if there is one: only such a file can be
/// overwritten (and a pipe is not opened).
fn existing_file(path: &Path) -> Option<same_file::Handle> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => same_file::Handle::from_path(path).ok(),
        _ => None,
    }
}

/// Whether `a` and `b` name the same file: the same existing file, or the
/// same path once made absolute.
pub fn same_path(a: &Path, b: &Path) -> bool {
    match (existing_file(a), existing_file(b)) {
        (Some(a), Some(b)) => a == b,
        _ => std::path::absolute(a).ok() == std::path::absolute(b).ok(),
    }
}
