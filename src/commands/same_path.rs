//! Whether two paths name one file, for commands that must not write an
//! output over one of their inputs, or two outputs into one file.

use std::path::{Path, PathBuf};

use crate::output::{folder_of, link_chain};

/// The regular file at `path`, if there is one: only such a file can be
/// overwritten (and a pipe is not opened).
fn existing_file(path: &Path) -> Option<same_file::Handle> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => same_file::Handle::from_path(path).ok(),
        _ => None,
    }
}

/// Where a file at `path` is or would be made: symbolic links to it
/// followed (one may name a file not made yet), and its folder resolved
/// (`..`, links); `None` when the folder does not exist.
fn resolved(path: &Path) -> Option<PathBuf> {
    let at = link_chain(path).last()?;
    let name = at.file_name()?;
    Some(std::fs::canonicalize(folder_of(&at)).ok()?.join(name))
}

/// Whether `a` and `b` name the same file: the same existing file, or the
/// same place for a file not made yet. Devices and pipes (`/dev/stdout`
/// and `/dev/stderr` on one terminal) are the same only by name.
pub fn same_path(a: &Path, b: &Path) -> bool {
    let missing = |path: &Path| std::fs::metadata(path).is_err();
    match (existing_file(a), existing_file(b)) {
        (Some(a), Some(b)) => a == b,
        _ if missing(a) && missing(b) => match (resolved(a), resolved(b)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        },
        _ => std::path::absolute(a).ok() == std::path::absolute(b).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_to_one_file_not_made_yet_are_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let out = dir.path().join("x.out");
        assert!(same_path(&out, &sub.join("../x.out")));
        std::os::unix::fs::symlink("x.out", dir.path().join("link.out")).unwrap();
        assert!(same_path(&out, &dir.path().join("link.out")));
        assert!(!same_path(&out, &sub.join("x.out")));
        std::fs::write(&out, "made").unwrap();
        assert!(same_path(&out, &dir.path().join("link.out")));
        assert!(same_path(&sub.join("../x.out"), &out));
        // Devices are told apart by name, as /dev/stdout and /dev/stderr
        // are though both may be one terminal.
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::os::unix::fs::symlink("/dev/null", &a).unwrap();
        std::os::unix::fs::symlink("/dev/null", &b).unwrap();
        assert!(!same_path(&a, &b));
        assert!(same_path(&a, &a));
    }
}
