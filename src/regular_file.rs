//! Opening a file that a trace or a profile names (an object, a source
//! file), found to be a regular file, without the risk of waiting forever
//! for it.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The file at `path`, open for reading, if it is a regular file. Anything
/// else is refused before it is opened (a device may act on being opened);
/// and a regular file is opened without waiting, should a pipe have taken
/// its place meanwhile (opening a pipe waits for a writer), and checked
/// again once open. Reads of a regular file ignore that flag.
pub fn open_regular(path: &Path) -> io::Result<File> {
    regular(&fs::metadata(path)?)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    regular(&file.metadata()?)?;
    Ok(file)
}

/// Whether `meta` is a regular file's, or what it is instead.
fn regular(meta: &Metadata) -> io::Result<()> {
    match (meta.is_file(), meta.is_dir()) {
        (true, _) => Ok(()),
        (false, true) => Err(io::Error::other("a folder, not a regular file")),
        (false, false) => Err(io::Error::other("not a regular file (a pipe or a device)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::ffi::OsStrExt;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_regular_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("source.c");
        std::fs::write(&path, "int main;\n").unwrap();
        let mut text = String::new();
        open_regular(&path)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "int main;\n");
    }

    /// Opened as a plain file would be, a pipe without a writer would hold
    /// the test up: it runs on a thread of its own, and the test waits a
    /// while for its answer.
    #[test]
    fn a_pipe_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let name = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: `name` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let (sender, answer) = mpsc::channel();
        std::thread::spawn(move || sender.send(open_regular(&fifo).map(drop)));
        let answer = answer.recv_timeout(Duration::from_secs(30));
        let err = answer.expect("the pipe's opening waited").unwrap_err();
        assert_eq!(err.to_string(), "not a regular file (a pipe or a device)");
    }

    #[test]
    fn a_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = open_regular(dir.path()).unwrap_err();
        assert_eq!(err.to_string(), "a folder, not a regular file");
    }
}
