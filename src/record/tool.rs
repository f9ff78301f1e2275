//! The Valgrind tool, built into this binary by build.rs, and the private
//! `VALGRIND_LIB` folder it runs from: the tool next to links to every file
//! of the installed Valgrind's tool folder, set up once per tool build in
//! the user's cache directory.

use std::fmt;
use std::fs;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Why the recorder cannot run on this machine.
#[derive(Debug)]
pub enum ToolError {
    /// This linegrind was built without Valgrind's tool libraries.
    NotBuilt,
    /// Valgrind is not installed where it can be found.
    NoValgrind,
    /// The private folder cannot be set up.
    Setup(PathBuf, std::io::Error),
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::NotBuilt => write!(
                f,
                "this linegrind was built without Valgrind's tool libraries, so it cannot \
                 record; install Valgrind (Debian: apt-get install valgrind) and rebuild"
            ),
            ToolError::NoValgrind => write!(
                f,
                "Valgrind is not installed (no valgrind on PATH, or no tool folder such as \
                 /usr/libexec/valgrind); install it (Debian: apt-get install valgrind)"
            ),
            ToolError::Setup(dir, err) => {
                write!(
                    f,
                    "cannot set up the Valgrind tool in {}: {err}",
                    dir.display()
                )
            }
        }
    }
}

impl std::error::Error for ToolError {}

#[cfg(linegrind_tool)]
const TOOL: Option<&[u8]> = Some(include_bytes!(env!("LINEGRIND_TOOL")));
#[cfg(not(linegrind_tool))]
const TOOL: Option<&[u8]> = None;

/// The tool's file name, as `valgrind --tool=linegrind` looks for it.
const TOOL_FILE: &str = "linegrind-amd64-linux";

/// Where the installed Valgrind keeps its tools and preload libraries.
fn valgrind_lib() -> Option<PathBuf> {
    let candidates = [
        "/usr/libexec/valgrind",
        "/usr/lib/x86_64-linux-gnu/valgrind",
        "/usr/lib/valgrind",
        "/usr/local/libexec/valgrind",
        "/usr/local/lib/valgrind",
        "/usr/lib64/valgrind",
    ];
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|dir| dir.join("vgpreload_core-amd64-linux.so").exists())
}

/// The folder to give Valgrind as `VALGRIND_LIB`, set up on first use.
pub fn install() -> Result<PathBuf, ToolError> {
    let tool = TOOL.ok_or(ToolError::NotBuilt)?;
    let installed = valgrind_lib().ok_or(ToolError::NoValgrind)?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    tool.hash(&mut hasher);
    installed.hash(&mut hasher);
    let parent = cache_dir();
    let dir = parent.join(format!("valgrind-{:016x}", hasher.finish()));
    let setup = |err| ToolError::Setup(dir.clone(), err);
    // The tool runs as the user: only a folder no one else can write into
    // is trusted to hold it.
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&parent)
        .and_then(|()| check_private(&parent))
        .map_err(setup)?;
    if dir.join(TOOL_FILE).exists() {
        return Ok(dir);
    }
    // Built in a fresh folder and renamed into place, so that two recorders
    // starting at once never see a half-made one.
    let fresh = tempfile::Builder::new()
        .prefix(".valgrind-")
        .tempdir_in(parent)
        .map_err(setup)?;
    for entry in fs::read_dir(&installed).map_err(setup)? {
        let entry = entry.map_err(setup)?;
        std::os::unix::fs::symlink(entry.path(), fresh.path().join(entry.file_name()))
            .map_err(setup)?;
    }
    let tool_path = fresh.path().join(TOOL_FILE);
    fs::write(&tool_path, tool).map_err(setup)?;
    fs::set_permissions(&tool_path, fs::Permissions::from_mode(0o755)).map_err(setup)?;
    let fresh = fresh.keep();
    if fs::rename(&fresh, &dir).is_err() {
        // Another recorder got there first; use its folder.
        let _ = fs::remove_dir_all(&fresh);
    }
    Ok(dir)
}

/// `linegrind` in the user's cache folder, or without one (no `HOME`), a
/// folder of the user's own in the temporary folder, which others share.
fn cache_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .map(|base| base.join("linegrind"))
        .unwrap_or_else(|| {
            // SAFETY: geteuid cannot fail and touches no memory.
            let user = unsafe { libc::geteuid() };
            std::env::temp_dir().join(format!("linegrind-{user}"))
        })
}

/// Refuses `dir` unless it is a folder (not a link to one) of the user's
/// own that no one else can write into, where another user could have put
/// a tool of theirs for linegrind to run.
fn check_private(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::symlink_metadata(dir)?;
    // SAFETY: geteuid cannot fail and touches no memory.
    let user = unsafe { libc::geteuid() };
    let why = if !meta.is_dir() {
        "it is not a folder"
    } else if meta.uid() != user {
        "another user owns it"
    } else if meta.mode() & 0o022 != 0 {
        "others can write into it"
    } else {
        return Ok(());
    };
    Err(std::io::Error::other(format!(
        "{} cannot be trusted to hold the tool linegrind runs: {why} (remove it, or set HOME)",
        dir.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_folder_of_the_users_own_that_others_cannot_write_is_trusted() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("linegrind");
        fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
        assert!(check_private(&dir).is_ok());
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(check_private(&dir).is_ok());
        let refused = |path: &Path| check_private(path).unwrap_err().to_string();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(refused(&dir).ends_with("others can write into it (remove it, or set HOME)"));
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        assert!(refused(&link).contains("it is not a folder"));
        // Another user's, where the tests run as root and can make one.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        // SAFETY: geteuid and chown are given valid arguments.
        if unsafe { libc::geteuid() } == 0 {
            let path = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
            assert_eq!(unsafe { libc::chown(path.as_ptr(), 65534, 65534) }, 0);
            assert!(refused(&dir).contains("another user owns it"));
        }
    }
}
