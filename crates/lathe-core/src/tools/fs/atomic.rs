//! Atomic file replacement: write a temporary file in the target's
//! directory, flush it to disk, then rename it over the target. A reader
//! sees the old file or the new one, never half of either; a full disk or a
//! killed process leaves the old file as it was. The temporary file has no
//! name while it is written (`O_TMPFILE`, where the file system has it), so
//! a process killed mid-write leaves nothing behind; it is named beside
//! the target only once whole, for the rename. An existing file keeps its
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
    let perms = existing.as_ref().map_or_else(
        || fs::Permissions::from_mode(0o644),
        fs::Metadata::permissions,
    );
    match write_unnamed(dir, path, data, &perms) {
        Ok(()) => return Ok(created),
        // No O_TMPFILE here (some file systems): a named temporary file.
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(nix::libc::EOPNOTSUPP | nix::libc::EISDIR | nix::libc::EINVAL)
            ) => {}
        Err(e) => return Err(e),
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(".lathe-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(data)?;
    tmp.as_file().set_permissions(perms)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // Make the rename itself durable; failure here loses nothing.
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(created)
}

/// Writes `data` to a file with no name in `dir` and makes it durable;
/// then names it `path` at once when `path` is new, else names it beside
/// `path` and renames it over it.
fn write_unnamed(dir: &Path, path: &Path, data: &[u8], perms: &fs::Permissions) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = fs::OpenOptions::new()
        .write(true)
        .custom_flags(nix::libc::O_TMPFILE)
        .mode(0o600)
        .open(dir)?;
    file.write_all(data)?;
    file.set_permissions(perms.clone())?;
    file.sync_all()?;
    let fd = format!("/proc/self/fd/{}", file.as_raw_fd());
    let link = |to: &Path| {
        nix::unistd::linkat(
            nix::fcntl::AT_FDCWD,
            fd.as_str(),
            nix::fcntl::AT_FDCWD,
            to,
            nix::fcntl::AtFlags::AT_SYMLINK_FOLLOW,
        )
    };
    // A new file is named at once, whole: no moment when a kill could
    // leave a temporary name behind.
    match link(path) {
        Ok(()) => return Ok(()),
        Err(nix::errno::Errno::EEXIST) => {}
        // No /proc to name it through: as if O_TMPFILE were missing.
        Err(nix::errno::Errno::ENOENT) => {
            return Err(io::Error::from_raw_os_error(nix::libc::EOPNOTSUPP));
        }
        Err(other) => return Err(io::Error::from(other)),
    }
    // A file replaced: named beside it, then renamed over it.
    let name = dir.join(format!(
        ".lathe-{}-{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    link(&name).map_err(|e| match e {
        nix::errno::Errno::ENOENT => io::Error::from_raw_os_error(nix::libc::EOPNOTSUPP),
        other => io::Error::from(other),
    })?;
    if let Err(e) = fs::rename(&name, path) {
        let _ = fs::remove_file(&name);
        return Err(e);
    }
    Ok(())
}

/// Removes from `dir` the temporary names [`write_atomic`] gives a file
/// for the moment between naming it and renaming it over its target, left
/// there by a Lathe killed in that moment (`.lathe-PID-N.tmp` of a process
/// no longer running). Nothing else is touched; returns how many went.
pub(crate) fn sweep_leftovers(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(leftover_pid) else {
            continue;
        };
        let alive = pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists();
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        if !alive && regular && fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The process that named `name`, if it is one of [`write_atomic`]'s
/// temporary names.
fn leftover_pid(name: &str) -> Option<u32> {
    let (pid, n) = name
        .strip_prefix(".lathe-")?
        .strip_suffix(".tmp")?
        .split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(pid) && digits(n))
        .then(|| pid.parse().ok())
        .flatten()
}

/// Names of temporary files of this process, one each.
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

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
    fn only_a_dead_processs_temporary_names_are_swept() {
        let d = tempfile::tempdir().unwrap();
        // A pid past the kernel's largest is never running.
        let dead = d.path().join(".lathe-4194305-0.tmp");
        let ours = d
            .path()
            .join(format!(".lathe-{}-7.tmp", std::process::id()));
        let others = [
            ".lathe-4194305-x.tmp",
            ".lathe--0.tmp",
            "lathe-4194305-0.tmp",
            ".lathe-4194305-0.tmp.bak",
            "data.txt",
        ];
        for p in [&dead, &ours] {
            fs::write(p, "x").unwrap();
        }
        for o in others {
            fs::write(d.path().join(o), "x").unwrap();
        }
        fs::create_dir(d.path().join(".lathe-4194306-0.tmp")).unwrap();
        assert_eq!(sweep_leftovers(d.path()), 1);
        assert!(!dead.exists());
        assert!(ours.exists(), "a running process's name is its own");
        for o in others {
            assert!(d.path().join(o).exists(), "{o} is not ours to remove");
        }
        assert!(d.path().join(".lathe-4194306-0.tmp").is_dir());
    }

    proptest::proptest! {
        #[test]
        fn any_name_is_read_without_a_panic(name in "\\PC{0,40}") {
            if let Some(pid) = leftover_pid(&name) {
                proptest::prop_assert!(name.starts_with(".lathe-") && name.ends_with(".tmp"));
                proptest::prop_assert!(name.contains(&pid.to_string()));
            }
        }
    }

    #[test]
    fn a_directory_is_never_replaced() {
        let d = tempfile::tempdir().unwrap();
        let err = write_atomic(d.path(), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
    }
}
