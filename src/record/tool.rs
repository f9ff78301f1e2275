//! The Valgrind tool, built into this binary by build.rs, and the private
//! `VALGRIND_LIB` folder it runs from: the tool next to links to every file
//! of the installed Valgrind's tool folder, set up once per tool build in
//! the user's cache directory.

use std::fmt;
use std::fs;
use std::hash::{Hash, Hasher};
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
    let dir = cache_dir().join(format!("valgrind-{:016x}", hasher.finish()));
    if dir.join(TOOL_FILE).exists() {
        return Ok(dir);
    }
    let setup = |err| ToolError::Setup(dir.clone(), err);
    // Built in a fresh folder and renamed into place, so that two recorders
    // starting at once never see a half-made one.
    let parent = dir.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(setup)?;
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
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&tool_path, fs::Permissions::from_mode(0o755)).map_err(setup)?;
    let fresh = fresh.keep();
    if fs::rename(&fresh, &dir).is_err() {
        // Another recorder got there first; use its folder.
        let _ = fs::remove_dir_all(&fresh);
    }
    Ok(dir)
}

fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("linegrind")
}
