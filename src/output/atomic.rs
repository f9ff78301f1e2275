//! Writing a file so that readers see the old file or the whole new one,
//! never a part: write a temporary file next to it, then rename.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Writes `path` through `write`, replacing it only once `write` succeeded.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut temp = temp_file_beside(path)?;
    {
        let mut out = BufWriter::new(temp.as_file_mut());
        write(&mut out)?;
        out.flush()?;
    }
    temp.persist(path).map_err(|err| err.error)?;
    Ok(())
}

/// A new temporary file in the folder of `path`, readable by others as a
/// finished output should be, to be renamed onto `path` when complete.
pub fn temp_file_beside(path: &Path) -> io::Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".linegrind-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o644));
    }
    builder.tempfile_in(dir)
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
}
