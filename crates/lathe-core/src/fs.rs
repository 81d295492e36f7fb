//! The one safe open: how every part of the core reads a file it did not
//! make (a config, `.mcp.json`, AGENTS.md, a hook's script, git's `HEAD`,
//! a file a tool reads or searches). The bottom floor: it uses nothing of
//! the core.
//!
//! A FIFO blocks an `open` until someone writes to it, a device such as
//! `/dev/zero` never ends, a socket cannot be read as a file, and the
//! kernel's own files (`/proc`, `/sys`) say they are regular and empty
//! yet read without end or hand out what the process holds. So a file is
//! opened without blocking, checked through its own descriptor (it cannot
//! be swapped for something else between the check and the read), must be
//! a regular file on a disk, and is read up to a cap.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Why a file was not opened or read.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Not a regular file: what it is instead, and its mode.
    #[error("not a regular file ({})", .kind.describe())]
    NotRegular { kind: Kind, mode: u32 },
    /// A file of the kernel's own file systems.
    #[error("a file of the kernel's (/proc, /sys)")]
    Pseudo,
    /// The last name is a symbolic link, opened with [`Links::Refuse`].
    #[error("a symbolic link")]
    Link,
    /// Larger than the caller takes whole.
    #[error("larger than {} KiB", .limit / 1024)]
    TooLarge { limit: u64 },
    #[error("not UTF-8 text")]
    NotText,
}

/// What a path that is not a regular file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Directory,
    Fifo,
    Socket,
    Device,
    Other,
}

impl Kind {
    /// What `meta` is, when it is not a regular file.
    pub fn of(meta: &Metadata) -> Option<Kind> {
        let t = meta.file_type();
        if t.is_file() {
            return None;
        }
        Some(if t.is_dir() {
            Kind::Directory
        } else if t.is_fifo() {
            Kind::Fifo
        } else if t.is_socket() {
            Kind::Socket
        } else if t.is_char_device() || t.is_block_device() {
            Kind::Device
        } else {
            Kind::Other
        })
    }

    /// The words for it: "a directory", "a named pipe (FIFO)", …
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Directory => "a directory",
            Kind::Fifo => "a named pipe (FIFO)",
            Kind::Socket => "a socket",
            Kind::Device => "a device",
            Kind::Other => "a special file",
        }
    }
}

/// Whether a symbolic link as the last name is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    Follow,
    /// Refused ([`FileError::Link`]): the caller resolved the real place
    /// and a link put there since must not lead elsewhere.
    Refuse,
}

/// An open regular file and what it was when checked.
#[derive(Debug)]
pub struct Opened {
    pub file: File,
    pub meta: Metadata,
}

impl Opened {
    /// Reads at most `max` bytes; whether there was more.
    pub fn read_capped(self, max: u64) -> std::io::Result<(Vec<u8>, bool)> {
        let mut bytes = Vec::with_capacity(usize::try_from(self.meta.len().min(max)).unwrap_or(0));
        self.file
            .take(max.saturating_add(1))
            .read_to_end(&mut bytes)?;
        let more = bytes.len() as u64 > max;
        bytes.truncate(usize::try_from(max).unwrap_or(usize::MAX));
        Ok((bytes, more))
    }
}

/// Opens `path` for reading if it is a regular file on a disk, without
/// waiting on it.
pub fn open_regular(path: &Path, links: Links) -> Result<Opened, FileError> {
    let mut flags = nix::fcntl::OFlag::O_NONBLOCK;
    if links == Links::Refuse {
        flags |= nix::fcntl::OFlag::O_NOFOLLOW;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits())
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(code) if links == Links::Refuse && code == nix::libc::ELOOP => FileError::Link,
            _ => FileError::Io(e),
        })?;
    let meta = file.metadata()?;
    if let Some(kind) = Kind::of(&meta) {
        return Err(FileError::NotRegular {
            kind,
            mode: meta.mode(),
        });
    }
    if on_pseudo_fs(&file) {
        return Err(FileError::Pseudo);
    }
    Ok(Opened { file, meta })
}

impl FileError {
    /// Whether the file is not there (for callers to which an absent file
    /// means "none").
    pub fn is_not_found(&self) -> bool {
        matches!(self, FileError::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Reads at most `max` bytes of a regular file; whether there was more.
pub fn read_capped(path: &Path, max: u64) -> Result<(Vec<u8>, bool), FileError> {
    Ok(open_regular(path, Links::Follow)?.read_capped(max)?)
}

/// The most of a file Lathe reads on its own (a config, `.mcp.json`, a
/// trust store, git's pointers).
pub const OWN_FILE_MAX: u64 = 1024 * 1024;

/// A file Lathe reads on its own, whole: [`read_text`] up to
/// [`OWN_FILE_MAX`].
/// A SHA-256 of `parts`, each framed by its length (no two lists of
/// parts hash alike), in hex: what a trust pins.
pub fn pin<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for part in parts {
        ctx.update(&(part.len() as u64).to_le_bytes());
        ctx.update(part);
    }
    hex(ctx)
}

/// A digest being made, finished, in hex.
pub fn hex(ctx: ring::digest::Context) -> String {
    ctx.finish()
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub fn read_own(path: &Path) -> Result<String, FileError> {
    read_text(path, OWN_FILE_MAX)
}

/// The whole of a regular file of at most `max` bytes, as UTF-8 text: a
/// larger file or one that is not text is an error, never a part.
pub fn read_text(path: &Path, max: u64) -> Result<String, FileError> {
    let opened = open_regular(path, Links::Follow)?;
    if opened.meta.len() > max {
        return Err(FileError::TooLarge { limit: max });
    }
    match opened.read_capped(max)? {
        (_, true) => Err(FileError::TooLarge { limit: max }),
        (bytes, false) => String::from_utf8(bytes).map_err(|_| FileError::NotText),
    }
}

/// The kernel's own file systems (`/proc`, `/sys`, debugfs, tracefs,
/// cgroups, …), by their magic numbers.
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

/// Whether `path` (followed) is on one of the kernel's own file systems.
pub fn path_on_pseudo_fs(path: &Path) -> bool {
    nix::sys::statfs::statfs(path).is_ok_and(|st| pseudo(&st))
}

// The magic's type is the C library's `long` or `int`, by target.
#[allow(clippy::unnecessary_cast)]
fn pseudo(st: &nix::sys::statfs::Statfs) -> bool {
    PSEUDO_FS.contains(&(st.filesystem_type().0 as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way a path can be something to wait on or read without end
    /// is refused at once, by what it is.
    #[test]
    fn only_regular_files_on_a_disk_open() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let kind = |p: &Path| match open_regular(p, Links::Follow) {
            Err(FileError::NotRegular { kind, .. }) => Some(kind),
            _ => None,
        };
        assert_eq!(kind(&fifo), Some(Kind::Fifo));
        assert_eq!(kind(Path::new("/dev/zero")), Some(Kind::Device));
        assert_eq!(kind(d.path()), Some(Kind::Directory));
        // A link to a device is what it leads to.
        std::os::unix::fs::symlink("/dev/zero", d.path().join("zero")).unwrap();
        assert_eq!(kind(&d.path().join("zero")), Some(Kind::Device));
        assert!(matches!(
            open_regular(Path::new("/proc/self/environ"), Links::Follow),
            Err(FileError::Pseudo)
        ));
        std::fs::write(d.path().join("f"), "0123456789").unwrap();
        std::os::unix::fs::symlink(d.path().join("f"), d.path().join("l")).unwrap();
        assert!(matches!(
            open_regular(&d.path().join("l"), Links::Refuse),
            Err(FileError::Link)
        ));
        assert!(open_regular(&d.path().join("l"), Links::Follow).is_ok());
    }

    #[test]
    fn reads_stop_at_their_cap() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, "0123456789").unwrap();
        let (bytes, more) = read_capped(&f, 4).unwrap();
        assert_eq!((bytes.as_slice(), more), (b"0123".as_slice(), true));
        let (bytes, more) = read_capped(&f, 10).unwrap();
        assert_eq!((bytes.len(), more), (10, false));
        assert_eq!(read_text(&f, 10).unwrap(), "0123456789");
        assert!(matches!(
            read_text(&f, 9),
            Err(FileError::TooLarge { limit: 9 })
        ));
        std::fs::write(&f, b"\xff\xfe").unwrap();
        assert!(matches!(read_text(&f, 9), Err(FileError::NotText)));
    }
}
