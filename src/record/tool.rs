//! The Valgrind tool, built into this binary by build.rs, and the private
//! `VALGRIND_LIB` folder it runs from: the tool next to links to every file
//! of the installed Valgrind's tool folder, set up once per tool build in
//! the user's cache directory.

use std::fmt;
use std::fs;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

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

/// What a set-up's fresh folder is named after, before it is renamed into
/// place.
const FRESH_PREFIX: &str = ".valgrind-";

/// How long ago a fresh folder must have last changed for a set-up to take
/// it for one killed midway: making one takes milliseconds.
const ABANDONED_AFTER: Duration = Duration::from_secs(3600);

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
    let name = format!("valgrind-{:016x}", hasher.finish());
    // A home folder that is missing or cannot be written into leaves the
    // temporary folder, as no home folder does.
    let parent = match cache_dir() {
        Some(cache) if make_folder(&cache).is_ok() => cache,
        _ => {
            let shared = shared_cache_dir();
            make_folder(&shared).map_err(|err| ToolError::Setup(shared.join(&name), err))?;
            shared
        }
    };
    let dir = parent.join(name);
    let setup = |err| ToolError::Setup(dir.clone(), err);
    // The tool runs as the user: only a folder no one else can write into
    // is trusted to hold it, and only files of the user's own in it.
    make_private(&parent).map_err(setup)?;
    remove_abandoned(&parent);
    if fs::symlink_metadata(&dir).is_ok() {
        return tool_folder(&dir).map(|()| dir.clone()).map_err(setup);
    }
    // Built in a fresh folder and renamed into place, so that two recorders
    // starting at once never see a half-made one.
    let fresh = tempfile::Builder::new()
        .prefix(FRESH_PREFIX)
        .permissions(fs::Permissions::from_mode(0o700))
        .tempdir_in(&parent)
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
        // Another recorder got there first: its folder, once checked.
        let _ = fs::remove_dir_all(&fresh);
        tool_folder(&dir).map_err(setup)?;
    }
    Ok(dir)
}

/// Removes the fresh folders in `parent` of set-ups that were killed
/// before they renamed theirs into place (SIGKILL, or a signal while the
/// tool was written), which would otherwise stay, a copy of the tool each.
/// A folder that cannot be read or removed is left as it is: the set-up
/// under way does not need it gone.
fn remove_abandoned(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let fresh = entry
            .file_name()
            .to_string_lossy()
            .starts_with(FRESH_PREFIX);
        // The entry's own metadata: a link is never followed.
        let abandoned = entry.metadata().is_ok_and(|meta| {
            meta.is_dir()
                && meta
                    .modified()
                    .is_ok_and(|time| time.elapsed().is_ok_and(|age| age >= ABANDONED_AFTER))
        });
        if fresh && abandoned {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// Makes the existing tool folder `dir` the user's alone, or refuses it:
/// it must hold the tool as a file, and nothing of another user's.
fn tool_folder(dir: &Path) -> std::io::Result<()> {
    make_private(dir)?;
    check_own(dir)?;
    match fs::symlink_metadata(dir.join(TOOL_FILE)) {
        Ok(meta) if meta.is_file() => Ok(()),
        _ => Err(untrusted(dir, "it does not hold the tool as a file")),
    }
}

/// `linegrind` in the user's cache folder, if the user has one.
fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|home| home.is_absolute())
                .map(|home| home.join(".cache"))
        })
        .map(|base| base.join("linegrind"))
}

/// A folder of the user's own in the temporary folder, which others share
/// (`/tmp` where `TMPDIR` is relative, as for `HOME`).
fn shared_cache_dir() -> PathBuf {
    // SAFETY: geteuid cannot fail and touches no memory.
    let user = unsafe { libc::geteuid() };
    let temp = Some(std::env::temp_dir())
        .filter(|temp| temp.is_absolute())
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    temp.join(format!("linegrind-{user}"))
}

/// Makes the folder `dir` (the user's alone when made) and the folders
/// above it (as any program makes them), unless it exists.
fn make_folder(dir: &Path) -> std::io::Result<()> {
    if let Some(above) = dir.parent() {
        fs::create_dir_all(above)?;
    }
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(err) if err.kind() != std::io::ErrorKind::AlreadyExists => Err(err),
        _ => Ok(()),
    }
}

/// Makes `dir` a folder no one but the user can write into, or refuses
/// it: one another user owns, or that is a link, could hold a tool of
/// theirs for linegrind to run. (Versions before made it as the umask
/// said, writable by the user's group where that is 002.)
fn make_private(dir: &Path) -> std::io::Result<()> {
    let meta = fs::symlink_metadata(dir)?;
    owned(dir, &meta)?;
    if !meta.is_dir() {
        return Err(untrusted(dir, "it is not a folder"));
    }
    let mode = meta.permissions().mode();
    if mode & 0o022 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(mode & !0o022))?;
    }
    Ok(())
}

/// Refuses the folder `dir` unless everything in it is the user's own.
fn check_own(dir: &Path) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        owned(&entry.path(), &fs::symlink_metadata(entry.path())?)?;
    }
    Ok(())
}

/// Refuses `path` unless the user owns it.
fn owned(path: &Path, meta: &fs::Metadata) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid cannot fail and touches no memory.
    match meta.uid() == unsafe { libc::geteuid() } {
        true => Ok(()),
        false => Err(untrusted(path, "another user owns it")),
    }
}

fn untrusted(path: &Path, why: &str) -> std::io::Error {
    std::io::Error::other(format!(
        "{} cannot be trusted to hold the tool linegrind runs: {why} (remove it, or set \
         XDG_CACHE_HOME to a folder of your own)",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_folders_and_files_of_the_users_own_that_others_cannot_write_are_trusted() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("linegrind");
        fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
        assert!(make_private(&dir).is_ok());
        // A folder of an earlier version, writable by the user's group,
        // is made the user's alone.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o775)).unwrap();
        make_private(&dir).unwrap();
        let mode = fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        let refused = |result: std::io::Result<()>| result.unwrap_err().to_string();
        assert!(refused(make_private(&link)).contains("it is not a folder"));
        // The tool folder, and what it holds: one an earlier version made
        // writable by the user's group is made the user's alone; one
        // without the tool as a file is refused.
        let tool = dir.join("valgrind-0");
        fs::DirBuilder::new().mode(0o775).create(&tool).unwrap();
        fs::write(tool.join(TOOL_FILE), b"").unwrap();
        fs::set_permissions(&tool, fs::Permissions::from_mode(0o775)).unwrap();
        tool_folder(&tool).unwrap();
        let mode = fs::metadata(&tool).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        fs::remove_file(tool.join(TOOL_FILE)).unwrap();
        std::os::unix::fs::symlink("/bin/true", tool.join(TOOL_FILE)).unwrap();
        assert!(refused(tool_folder(&tool)).contains("it does not hold the tool as a file"));
        fs::remove_file(tool.join(TOOL_FILE)).unwrap();
        fs::write(tool.join(TOOL_FILE), b"").unwrap();
        // Another user's, where the tests run as root and can make one.
        // SAFETY: geteuid and chown are given valid arguments.
        if unsafe { libc::geteuid() } == 0 {
            let chown = |path: &Path| {
                let path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
                assert_eq!(unsafe { libc::chown(path.as_ptr(), 65534, 65534) }, 0);
            };
            chown(&tool.join(TOOL_FILE));
            assert!(refused(tool_folder(&tool)).contains("another user owns it"));
            chown(&dir);
            assert!(refused(make_private(&dir)).contains("another user owns it"));
        }
    }

    #[test]
    fn a_set_up_removes_the_fresh_folders_of_set_ups_killed_an_hour_ago_or_more() {
        let parent = tempfile::tempdir().unwrap();
        let folder = |name: &str, age_in_minutes: u64| {
            let dir = parent.path().join(name);
            fs::create_dir(&dir).unwrap();
            fs::write(dir.join(TOOL_FILE), b"tool").unwrap();
            std::os::unix::fs::symlink("/bin/true", dir.join("link")).unwrap();
            let age = Duration::from_secs(60 * age_in_minutes);
            let time = std::time::SystemTime::now() - age;
            fs::File::open(&dir).unwrap().set_modified(time).unwrap();
            dir
        };
        let killed = folder(".valgrind-killed", 61);
        let under_way = folder(".valgrind-under-way", 59);
        let installed = folder("valgrind-0123456789abcdef", 600);
        // A link of that name to an old folder is no set-up's: the folder
        // it leads to stays.
        let elsewhere = tempfile::tempdir().unwrap();
        fs::File::open(elsewhere.path())
            .unwrap()
            .set_modified(std::time::SystemTime::now() - ABANDONED_AFTER * 2)
            .unwrap();
        let link = parent.path().join(".valgrind-link");
        std::os::unix::fs::symlink(elsewhere.path(), &link).unwrap();
        remove_abandoned(parent.path());
        assert!(!killed.exists());
        assert!(under_way.join(TOOL_FILE).exists());
        assert!(installed.join(TOOL_FILE).exists());
        assert!(fs::symlink_metadata(&link).is_ok() && elsewhere.path().exists());
        // A folder that is no longer there is no error.
        remove_abandoned(&parent.path().join("gone"));
    }
}
