//! Writing a file so that readers see the old file or the whole new one,
//! never a part: write a temporary file next to it, then rename (and on an
//! interrupt, remove it: see [`crate::interrupt`]). A symbolic link is
//! followed, so that the file it names is replaced and the link stays.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::interrupt::{Registered, remove_on_interrupt};

/// Writes `path` through `write`, replacing it only once `write` succeeded.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    write_uncommitted(path, write)?.commit()
}

/// Writes the file that will replace `path` through `write`, down to the
/// disk (a full disk may only say so then); it replaces `path` when
/// committed, so that several files written together replace theirs only
/// once all of them are whole.
pub fn write_uncommitted(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<OutputFile> {
    let output = OutputFile::create(path)?;
    {
        let mut out = BufWriter::new(output.file());
        write(&mut out)?;
        out.flush()?;
    }
    output.sync()?;
    Ok(output)
}

/// An output file being written: a temporary file beside the file `path`
/// names, renamed onto it by [`OutputFile::commit`], or, when `path` is a
/// device or a pipe (`/dev/null`) or one of this process's open files
/// (`/dev/stdout`), that file itself, appended to, which a rename would
/// replace.
pub struct OutputFile {
    path: PathBuf,
    temp: Option<tempfile::NamedTempFile>,
    special: Option<File>,
    /// Removes the temporary file if linegrind is interrupted.
    _interrupt: Option<Registered>,
}

impl OutputFile {
    /// Starts writing `path`.
    pub fn create(path: &Path) -> io::Result<OutputFile> {
        let Some(path) = replaced(path)? else {
            let file = OpenOptions::new().append(true).open(path)?;
            return Ok(OutputFile {
                path: path.to_path_buf(),
                temp: None,
                special: Some(file),
                _interrupt: None,
            });
        };
        let (temp, interrupt) = temp_file_beside(&path)?;
        keep_permissions(&path, temp.as_file())?;
        Ok(OutputFile {
            path,
            temp: Some(temp),
            special: None,
            _interrupt: Some(interrupt),
        })
    }

    /// The file to write to.
    pub fn file(&self) -> &File {
        match (&self.temp, &self.special) {
            (Some(temp), _) => temp.as_file(),
            (None, Some(file)) => file,
            (None, None) => unreachable!("an output file has a temporary or a special file"),
        }
    }

    /// Bytes written so far; `None` for a device or a pipe, which does not
    /// keep them.
    pub fn written(&self) -> Option<u64> {
        let temp = self.temp.as_ref()?;
        temp.as_file().metadata().ok().map(|meta| meta.len())
    }

    /// Writes what the file holds down to the disk (nothing to do for a
    /// device or a pipe).
    pub fn sync(&self) -> io::Result<()> {
        match &self.temp {
            Some(temp) => temp.as_file().sync_all(),
            None => Ok(()),
        }
    }

    /// Makes the written file the one at the path: synced to disk (if not
    /// yet) and renamed into place (nothing to do for a device or a pipe).
    pub fn commit(self) -> io::Result<()> {
        self.sync()?;
        if let Some(temp) = self.temp {
            temp.persist(&self.path).map_err(|err| err.error)?;
        }
        Ok(())
    }
}

/// A new temporary file in the folder of `path`, readable by others as a
/// finished output should be, and removed on an interrupt until the
/// registration returned is dropped. Its name is registered before the
/// file is made, so that no interrupt comes between the two.
fn temp_file_beside(path: &Path) -> io::Result<(tempfile::NamedTempFile, Registered)> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = folder_of(path);
    let mut registered = None;
    let made = tempfile::Builder::new()
        .prefix(".linegrind-")
        .suffix(".tmp")
        .make_in(dir, |name| {
            // A name taken already (tried again under another) is no
            // longer registered once the attempt fails.
            let interrupt = remove_on_interrupt(name);
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o644)
                .open(name)?;
            registered = Some(interrupt);
            Ok(file)
        });
    let temp = made.map_err(|err| {
        // Named after the folder, not after the temporary file, which the
        // user never asked for and which `tempfile` appends to the reason.
        let text = err.to_string();
        let reason = text.split(" at path \"").next().unwrap_or(&text);
        io::Error::new(
            err.kind(),
            format!("cannot create a file in {}: {reason}", dir.display()),
        )
    })?;
    let registered = registered.expect("the name of the file made was registered");
    Ok((temp, registered))
}

/// Gives `new`, which will replace the file at `path`, that file's
/// permissions if it exists, so that an output kept private (or read-only)
/// stays so; a new file keeps the default of [`temp_file_beside`].
fn keep_permissions(path: &Path, new: &File) -> io::Result<()> {
    #[cfg(unix)]
    if let Ok(old) = fs::metadata(path) {
        use std::os::unix::fs::PermissionsExt;
        let mode = old.permissions().mode() & 0o777;
        new.set_permissions(fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// The folder a file at `path` is in.
pub fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    }
}

/// Checks, before a long run, that `path` can be written: it is a device
/// or a pipe, or its folder takes a new file (made and removed at once)
/// and the file at its name, if any, can be replaced.
pub fn check_writable(path: &Path) -> io::Result<()> {
    if names_folder(path) {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it names a folder; name a file in it",
        ));
    }
    let Some(path) = replaced(path)? else {
        return Ok(());
    };
    temp_file_beside(&path)?;
    replaceable(&path)
}

/// Whether a new file can be renamed onto `path`: its name fits the file
/// system, and a file there is not another user's in a folder that lets
/// only owners remove files (sticky, as `/tmp`).
fn replaceable(path: &Path) -> io::Result<()> {
    let old = match fs::symlink_metadata(path) {
        Ok(old) => old,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(err),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let folder = fs::metadata(folder_of(path))?;
        // SAFETY: geteuid takes nothing and cannot fail.
        let me = unsafe { libc::geteuid() };
        let sticky = folder.mode() & libc::S_ISVTX != 0;
        if sticky && me != 0 && old.uid() != me && folder.uid() != me {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "another user's file, in a folder where only a file's owner may replace it",
            ));
        }
    }
    Ok(())
}

/// Whether `path` names a folder: one that exists, or a name ending in `/`.
pub fn names_folder(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    path.is_dir() || path.as_os_str().as_bytes().ends_with(b"/")
}

/// Whether an output at `path` is written in place rather than replaced: a
/// device, a pipe or a file this process has open (`/dev/stdout`).
pub fn written_in_place(path: &Path) -> bool {
    replaced(path).is_ok_and(|replaced| replaced.is_none())
}

/// Whether `path` is the file or pipe this process's standard output goes
/// to (`/dev/stdout`, or what it was redirected to): an output written
/// there leaves no room for anything else on standard output. A device
/// (a terminal, `/dev/null`) takes both.
pub fn is_stdout(path: &Path) -> bool {
    use std::os::fd::AsFd;
    is_open_as(path, io::stdout().as_fd()) && !is_char_device(path)
}

/// Whether `path` is a character device (`/dev/null`, a terminal), which
/// takes what any number of writers write.
pub fn is_char_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    fs::metadata(path).is_ok_and(|meta| meta.file_type().is_char_device())
}

/// Whether `path` is the file, pipe or device open as `fd`.
pub fn is_open_as(path: &Path, fd: std::os::fd::BorrowedFd<'_>) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(open) = fd.try_clone_to_owned() else {
        return false;
    };
    match (File::from(open).metadata(), fs::metadata(path)) {
        (Ok(open), Ok(file)) => (open.dev(), open.ino()) == (file.dev(), file.ino()),
        _ => false,
    }
}

/// Symbolic links followed at most, as the kernel follows them.
const MAX_LINKS: usize = 40;

/// `path`, then each file the symbolic links from it lead to in turn, as
/// far as the kernel would follow them.
pub fn link_chain(path: &Path) -> impl Iterator<Item = PathBuf> {
    let mut next = Some(path.to_path_buf());
    std::iter::from_fn(move || {
        let at = next.take()?;
        // A relative target is relative to the link's folder.
        let folder = at.parent().unwrap_or(Path::new(""));
        next = fs::read_link(&at).ok().map(|target| folder.join(target));
        Some(at)
    })
    .take(MAX_LINKS + 1)
}

/// The file a new output at `path` replaces, through symbolic links (a
/// rename onto the link would replace the link and leave its target as it
/// was); `None` for a file written in place: a device or a pipe
/// (`/dev/null`), which a rename would replace, or a link into `/proc`
/// (`/dev/stdout` is one), which names a file this process has open. Links
/// that go on further than the kernel follows them (a loop) are an error,
/// as the kernel's.
fn replaced(path: &Path) -> io::Result<Option<PathBuf>> {
    if fs::metadata(path).is_ok_and(|meta| !meta.is_file() && !meta.is_dir()) {
        return Ok(None);
    }
    let mut replaced = None;
    for at in link_chain(path) {
        if fs::canonicalize(folder_of(&at)).is_ok_and(|real| real.starts_with("/proc")) {
            return Ok(None);
        }
        replaced = Some(at);
    }
    match replaced {
        Some(last) if fs::symlink_metadata(&last).is_ok_and(|meta| meta.is_symlink()) => {
            Err(io::Error::from_raw_os_error(libc::ELOOP))
        }
        replaced => Ok(replaced),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        write_atomically(&path, |out| out.write_all(b"first")).unwrap();
        let failed = write_atomically(&path, |out| {
            out.write_all(b"half")?;
            Err(io::Error::other("disk on fire"))
        });
        assert!(failed.is_err());
        assert_eq!(fs::read_to_string(&path).unwrap(), "first");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        write_atomically(&path, |out| out.write_all(b"second")).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "second");
    }

    #[test]
    fn a_missing_folder_is_named_not_the_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no/such/out.txt");
        let err = check_writable(&path).unwrap_err().to_string();
        assert!(err.starts_with("cannot create a file in "), "{err}");
        assert!(err.contains("no/such"), "{err}");
        assert!(!err.contains(".linegrind-"), "{err}");
        check_writable(&dir.path().join("out.txt")).unwrap();
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        let err = check_writable(&dir.path().join("new/"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("it names a folder"), "{err}");
        let err = check_writable(dir.path()).unwrap_err().to_string();
        assert!(err.contains("names a folder"), "{err}");
    }

    #[test]
    #[cfg(unix)]
    fn a_symbolic_link_is_followed_and_kept() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("data")).unwrap();
        let target = dir.path().join("data/out.txt");
        fs::write(&target, "old").unwrap();
        // A relative link to a link, and a link to a file not made yet.
        symlink("data/out.txt", dir.path().join("first")).unwrap();
        symlink("first", dir.path().join("second")).unwrap();
        symlink("data/new.txt", dir.path().join("dangling")).unwrap();
        write_atomically(&dir.path().join("second"), |out| out.write_all(b"new")).unwrap();
        write_atomically(&dir.path().join("dangling"), |out| out.write_all(b"made")).unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(
            fs::read_to_string(dir.path().join("data/new.txt")).unwrap(),
            "made"
        );
        for link in ["first", "second", "dangling"] {
            let meta = fs::symlink_metadata(dir.path().join(link)).unwrap();
            assert!(meta.file_type().is_symlink(), "{link} is still a link");
        }
        let names = |folder: &Path| fs::read_dir(folder).unwrap().count();
        assert_eq!((names(dir.path()), names(&dir.path().join("data"))), (4, 2));
    }

    #[test]
    #[cfg(unix)]
    fn a_replaced_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
        for (name, old) in [("private", 0o600), ("read-only", 0o444), ("shared", 0o664)] {
            let path = dir.path().join(name);
            fs::write(&path, "old").unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(old)).unwrap();
            write_atomically(&path, |out| out.write_all(b"new")).unwrap();
            assert_eq!(fs::read_to_string(&path).unwrap(), "new");
            assert_eq!(mode(&path), old, "{name}");
        }
        // Through a link, the linked file's permissions are kept.
        std::os::unix::fs::symlink("private", dir.path().join("link")).unwrap();
        write_atomically(&dir.path().join("link"), |out| out.write_all(b"again")).unwrap();
        assert_eq!(mode(&dir.path().join("private")), 0o600);
        // A new file is readable by others, as a finished output should be
        // (but for what the umask takes away).
        let new = dir.path().join("new");
        write_atomically(&new, |out| out.write_all(b"made")).unwrap();
        assert_eq!(mode(&new) & 0o600, 0o600);
    }

    #[test]
    #[cfg(unix)]
    fn a_link_into_proc_is_written_in_place() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("open.txt");
        fs::write(&file, "kept ").unwrap();
        let open = File::open(&file).unwrap();
        let own = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&open));
        let link = dir.path().join("stdout");
        symlink(&own, &link).unwrap();
        write_atomically(&link, |out| out.write_all(b"added")).unwrap();
        write_atomically(Path::new(&own), |out| out.write_all(b" twice")).unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "kept added twice");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    #[cfg(unix)]
    fn a_loop_of_links_is_refused_and_kept() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let (one, two) = (dir.path().join("one"), dir.path().join("two"));
        symlink("two", &one).unwrap();
        symlink("one", &two).unwrap();
        let err = check_writable(&one).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ELOOP), "{err}");
        assert!(write_atomically(&one, |out| out.write_all(b"lost")).is_err());
        assert!(!written_in_place(&one));
        for link in [&one, &two] {
            assert!(fs::symlink_metadata(link).unwrap().is_symlink());
        }
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_name_too_long_is_refused_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let long = dir.path().join("n".repeat(300));
        let err = check_writable(&long).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENAMETOOLONG), "{err}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// A pipe (or a device: any file that is neither a regular file nor a
    /// folder) is written to, not replaced. Tried on a FIFO of the test's
    /// own, so that a regression cannot replace the host's `/dev/null`.
    #[test]
    fn a_pipe_is_written_to_not_replaced() {
        use std::io::Read;
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let name = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: `name` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        // The read end, opened first without waiting for a writer; what
        // is written stays in the pipe until it is read.
        let mut reader = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        write_atomically(&fifo, |out| out.write_all(b"through")).unwrap();
        let mut read = Vec::new();
        reader.read_to_end(&mut read).unwrap();
        assert_eq!(read, b"through");
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
