//! Opening files the file tools may touch: regular files only.
//!
//! A FIFO blocks an `open` until someone writes to it, a device such as
//! `/dev/zero` never ends, a socket cannot be read as a file. The file is
//! opened without blocking and checked through its own descriptor, so it
//! cannot be swapped for something else between the check and the read.

use std::fs::{File, Metadata};
use std::path::Path;

use crate::fs::{FileError, Kind, Links};
use crate::tools::spec::ToolError;

/// Opens `path` (shown to the model as `shown`) for reading, if it is a
/// regular file.
pub fn open(path: &Path, shown: &str) -> Result<(File, Metadata), ToolError> {
    let opened = crate::fs::open_regular(path, Links::Follow).map_err(|e| refused(e, shown))?;
    Ok((opened.file, opened.meta))
}

/// What the model reads when a file tool cannot open a file.
fn refused(e: FileError, shown: &str) -> ToolError {
    match e {
        FileError::Io(e) => ToolError::from_io(shown, &e),
        FileError::NotRegular {
            kind: Kind::Directory,
            ..
        } => ToolError::InvalidArgs(format!(
            "{shown} is a directory; use list_directory to see what it holds"
        )),
        FileError::NotRegular { kind, .. } => ToolError::InvalidArgs(format!(
            "{shown} is {}; the file tools read and write regular files only",
            kind.describe()
        )),
        FileError::Pseudo => ToolError::InvalidArgs(format!(
            "{shown} is a file of the kernel's (/proc, /sys): the file tools read files on disk only"
        )),
        other => ToolError::InvalidArgs(format!("{shown}: {other}")),
    }
}

/// Refuses what is not a regular file, naming what it is.
pub fn check(meta: &Metadata, shown: &str) -> Result<(), ToolError> {
    use std::os::unix::fs::MetadataExt;
    match Kind::of(meta) {
        None => Ok(()),
        Some(kind) => Err(refused(
            FileError::NotRegular {
                kind,
                mode: meta.mode(),
            },
            shown,
        )),
    }
}

/// Reads at most `max` bytes of a regular file; whether there was more.
pub fn read_capped(path: &Path, shown: &str, max: u64) -> Result<(Vec<u8>, bool), ToolError> {
    let opened = crate::fs::open_regular(path, Links::Follow).map_err(|e| refused(e, shown))?;
    opened
        .read_capped(max)
        .map_err(|e| ToolError::from_io(shown, &e))
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

    /// The model is told what the path is and what to do instead.
    #[test]
    fn refusals_name_what_the_path_is() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = open(&fifo, "pipe").unwrap_err();
        assert!(e.to_string().contains("pipe is a named pipe"), "{e}");
        let e = open(Path::new("/dev/zero"), "zero").unwrap_err();
        assert!(e.to_string().contains("zero is a device"), "{e}");
        let e = open(d.path(), "dir").unwrap_err();
        assert!(e.to_string().contains("use list_directory"), "{e}");
        let e = open(Path::new("/proc/self/environ"), "environ").unwrap_err();
        assert!(e.to_string().contains("kernel's"), "{e}");
        std::fs::write(d.path().join("f"), "0123456789").unwrap();
        let (bytes, more) = read_capped(&d.path().join("f"), "f", 4).unwrap();
        assert_eq!((bytes.as_slice(), more), (b"0123".as_slice(), true));
    }
}
