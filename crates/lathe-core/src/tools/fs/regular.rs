//! Opening files the file tools may touch: regular files only.
//!
//! A FIFO blocks an `open` until someone writes to it, a device such as
//! `/dev/zero` never ends, a socket cannot be read as a file. The file is
//! opened without blocking and checked through its own descriptor, so it
//! cannot be swapped for something else between the check and the read.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::tools::spec::ToolError;

/// Opens `path` (shown to the model as `shown`) for reading, if it is a
/// regular file.
pub fn open(path: &Path, shown: &str) -> Result<(File, Metadata), ToolError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
        .map_err(|e| ToolError::from_io(shown, &e))?;
    let meta = file.metadata().map_err(|e| ToolError::from_io(shown, &e))?;
    check(&meta, shown)?;
    if on_pseudo_fs(&file) {
        return Err(ToolError::InvalidArgs(format!(
            "{shown} is a file of the kernel's (/proc, /sys): the file tools read files on disk only"
        )));
    }
    Ok((file, meta))
}

/// The kernel's own file systems (`/proc`, `/sys`, debugfs, tracefs,
/// cgroups, …), by their magic numbers: their files say they are regular
/// and empty, and read without end (`/proc/self/pagemap`) or hand out
/// what the process holds (`/proc/self/environ`).
const PSEUDO_FS: &[i64] = &[
    0x9fa0,      // proc
    0x6265_6572, // sysfs
    0x6462_6720, // debugfs
    0x7472_6163, // tracefs
    0x7363_6673, // securityfs
    0xf97c_ff8c, // selinuxfs
    0x4341_5d53, // smackfs
    0x0027_e0eb, // cgroup
    0x6367_7270, // cgroup2
    0xcafe_4a11, // bpf
    0xde5e_81e4, // efivarfs
    0x6e73_6673, // nsfs
    0x6165_676c, // pstore
    0x6265_6570, // configfs
    0x6573_5543, // fusectl
    0x0765_5821, // resctrl
    0x9fa2,      // usbdevice
    0xabba_1974, // xenfs
    0x9fa1,      // openprom
    0x1cd1,      // devpts
];

/// Whether `file` is on one of the kernel's own file systems.
pub fn on_pseudo_fs(file: &File) -> bool {
    nix::sys::statfs::fstatfs(file).is_ok_and(|st| pseudo(&st))
}

// The magic's type is the C library's `long` or `int`, by target.
#[allow(clippy::unnecessary_cast)]
fn pseudo(st: &nix::sys::statfs::Statfs) -> bool {
    PSEUDO_FS.contains(&(st.filesystem_type().0 as i64))
}

/// Whether `path` (followed) is on one of the kernel's own file systems.
pub fn path_on_pseudo_fs(path: &Path) -> bool {
    nix::sys::statfs::statfs(path).is_ok_and(|st| pseudo(&st))
}

/// Refuses what is not a regular file, naming what it is.
pub fn check(meta: &Metadata, shown: &str) -> Result<(), ToolError> {
    let t = meta.file_type();
    let what = if t.is_file() {
        return Ok(());
    } else if t.is_dir() {
        return Err(ToolError::InvalidArgs(format!(
            "{shown} is a directory; use list_directory to see what it holds"
        )));
    } else if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    };
    Err(ToolError::InvalidArgs(format!(
        "{shown} is {what}; the file tools read and write regular files only"
    )))
}

/// Reads at most `max` bytes of a regular file; whether there was more.
pub fn read_capped(path: &Path, shown: &str, max: u64) -> Result<(Vec<u8>, bool), ToolError> {
    let (file, meta) = open(path, shown)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(max)).unwrap_or(0));
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::from_io(shown, &e))?;
    let more = bytes.len() as u64 > max;
    bytes.truncate(usize::try_from(max).unwrap_or(usize::MAX));
    Ok((bytes, more))
}

/// A path as its directory (`.` for a bare name) and its last name: the
/// entry itself, whatever a link there points to.
pub fn split_name(path: &str) -> Result<(&str, &std::ffi::OsStr), ToolError> {
    let p = Path::new(path);
    let name = p
        .file_name()
        .ok_or_else(|| ToolError::InvalidArgs(format!("{path} does not name a file")))?;
    let dir = match p.parent().and_then(Path::to_str) {
        Some("") | None => ".",
        Some(parent) => parent,
    };
    Ok((dir, name))
}

/// The existing regular file `path` names in the workspace, itself (not
/// what a link at that name points to): its canonical path and the name
/// shown for it. A link, a directory or a special file is refused, for
/// tools that remove or move the file itself.
pub fn own_file(
    workspace: &crate::policy::Workspace,
    path: &str,
    tool: &str,
) -> Result<(std::path::PathBuf, String), ToolError> {
    let resolved = workspace
        .resolve_existing(path)
        .map_err(ToolError::from_path)?;
    let shown = workspace.display_relative(&resolved);
    let (parent, name) = split_name(path)?;
    let dir = workspace
        .resolve_existing(parent)
        .map_err(ToolError::from_path)?;
    if dir.join(name) != resolved {
        return Err(ToolError::InvalidArgs(format!(
            "{path} is a symbolic link (to {shown}); {tool} works on regular files, not links"
        )));
    }
    let meta = std::fs::symlink_metadata(&resolved).map_err(|e| ToolError::from_io(&shown, &e))?;
    if meta.is_dir() {
        return Err(ToolError::InvalidArgs(format!(
            "{shown} is a directory; {tool} works on one file at a time"
        )));
    }
    check(&meta, &shown)?;
    Ok((resolved, shown))
}

/// The text of a file a change may show whole (UTF-8, at most `max`
/// bytes); `None` for anything else (binary, huge).
pub fn text_of(path: &Path, shown: &str, max: u64) -> Result<Option<String>, ToolError> {
    match read_capped(path, shown, max)? {
        (bytes, false) => Ok(String::from_utf8(bytes).ok()),
        (_, true) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_devices_and_directories_are_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = open(&fifo, "pipe").unwrap_err();
        assert!(e.to_string().contains("named pipe"), "{e}");
        let e = open(Path::new("/dev/zero"), "zero").unwrap_err();
        assert!(e.to_string().contains("device"), "{e}");
        let e = open(d.path(), "dir").unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        std::fs::write(d.path().join("f"), "0123456789").unwrap();
        let (bytes, more) = read_capped(&d.path().join("f"), "f", 4).unwrap();
        assert_eq!((bytes.as_slice(), more), (b"0123".as_slice(), true));
        let (bytes, more) = read_capped(&d.path().join("f"), "f", 10).unwrap();
        assert_eq!((bytes.len(), more), (10, false));
    }
}
