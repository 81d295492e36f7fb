//! Atomic file replacement: write a temporary file in the target's
//! directory, flush it to disk, then rename it over the target. A reader
//! sees the old file or the new one, never half of either; a full disk or a
//! killed process leaves the old file as it was. An existing file keeps its
//! permissions; a new one gets 0644.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Replaces `path` with `data`; returns whether the file was created.
pub(crate) fn write_atomic(path: &Path, data: &[u8]) -> io::Result<bool> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    let existing = fs::metadata(path).ok();
    if existing.as_ref().is_some_and(fs::Metadata::is_dir) {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    let created = existing.is_none();
    let mut tmp = tempfile::Builder::new()
        .prefix(".lathe-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(data)?;
    let perms = existing.map_or_else(|| fs::Permissions::from_mode(0o644), |m| m.permissions());
    tmp.as_file().set_permissions(perms)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // Make the rename itself durable; failure here loses nothing.
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_contents_and_keeps_the_mode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("run.sh");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!write_atomic(&p, b"new").unwrap());
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o755
        );
        let leftovers: Vec<_> = fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
    }

    #[test]
    fn new_files_are_created_with_0644() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("new.txt");
        assert!(write_atomic(&p, b"x").unwrap());
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o644
        );
    }

    #[test]
    fn a_directory_is_never_replaced() {
        let d = tempfile::tempdir().unwrap();
        let err = write_atomic(d.path(), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
    }
}
