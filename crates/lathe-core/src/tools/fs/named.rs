//! Files a person or a repository names for Lathe to read on its own
//! (`exec --image`, `@path` in a message, a workspace's commands, the
//! person's own commands): one safe open. The name is followed to where
//! the file really is, and that place must lie within the root it was
//! named under (the workspace, or the person's own config directory), so
//! a link in a repository cannot hand Lathe a file of the person's home
//! (`shot.png -> ~/.config/gh/hosts.yml`). The file is then opened once,
//! without following a link, checked through its own descriptor (regular,
//! not the kernel's, under the cap) and compared with what the name leads
//! to: a name swapped for a link between the look and the open is
//! refused, never read.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Why a named file is not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamedError {
    #[error("{0}: no such file")]
    Missing(String),
    #[error("{shown}: it leads outside {root} (to {real}); only files there are read")]
    Outside {
        shown: String,
        root: String,
        real: String,
    },
    #[error("{0}: not a regular file")]
    NotRegular(String),
    #[error("{0}: a file of the kernel's (/proc, /sys), not one on disk")]
    Pseudo(String),
    #[error("{shown}: larger than {cap} bytes")]
    TooLarge { shown: String, cap: u64 },
    #[error("{0}: it changed while it was opened (a link put in its place); not read")]
    Swapped(String),
    #[error("{shown}: {message}")]
    Io { shown: String, message: String },
}

/// A file read through [`read_within`]: where it really is, and its bytes.
#[derive(Debug, Clone)]
pub struct Named {
    pub real: PathBuf,
    pub bytes: Vec<u8>,
}

/// Where `path` really is, if that is within `root` (both followed to
/// the end); `shown` names it in errors.
pub fn locate(path: &Path, root: &Path, shown: &str) -> Result<PathBuf, NamedError> {
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => NamedError::Missing(shown.to_string()),
        _ => NamedError::Io {
            shown: shown.to_string(),
            message: e.to_string(),
        },
    };
    let root = root.canonicalize().map_err(io)?;
    let real = path.canonicalize().map_err(io)?;
    if !real.starts_with(&root) {
        return Err(NamedError::Outside {
            shown: shown.to_string(),
            root: root.display().to_string(),
            real: real.display().to_string(),
        });
    }
    Ok(real)
}

/// Reads the file `path` names, at most `cap` bytes (a larger one is
/// refused), if it really is a regular file within `root` (see the
/// module's notes).
pub fn read_within(path: &Path, root: &Path, shown: &str, cap: u64) -> Result<Named, NamedError> {
    match read_head_within(path, root, shown, cap)? {
        (_, true) => Err(NamedError::TooLarge {
            shown: shown.to_string(),
            cap,
        }),
        (named, false) => Ok(named),
    }
}

/// As [`read_within`], but a larger file gives its first `cap` bytes, and
/// whether there was more.
pub fn read_head_within(
    path: &Path,
    root: &Path,
    shown: &str,
    cap: u64,
) -> Result<(Named, bool), NamedError> {
    let real = locate(path, root, shown)?;
    let io = |e: std::io::Error| NamedError::Io {
        shown: shown.to_string(),
        message: e.to_string(),
    };
    // The real place has no link on its way: opened so, a link put in at
    // its end since is refused; the comparison below catches one put in
    // further up.
    let opened = crate::fs::open_regular(&real, crate::fs::Links::Refuse).map_err(|e| match e {
        crate::fs::FileError::Link => NamedError::Swapped(shown.to_string()),
        crate::fs::FileError::NotRegular { .. } => NamedError::NotRegular(shown.to_string()),
        crate::fs::FileError::Pseudo => NamedError::Pseudo(shown.to_string()),
        other => NamedError::Io {
            shown: shown.to_string(),
            message: other.to_string(),
        },
    })?;
    let meta = &opened.meta;
    let now = std::fs::metadata(&real).map_err(io)?;
    if (now.dev(), now.ino()) != (meta.dev(), meta.ino()) {
        return Err(NamedError::Swapped(shown.to_string()));
    }
    let (bytes, more) = opened.read_capped(cap).map_err(io)?;
    Ok((Named { real, bytes }, more))
}

/// The root a file named at `path` (absolute, as the person gave it) is
/// read within: the workspace, when the name lies in it (so a link there
/// cannot lead out), else the file's own place (the person named a file
/// of theirs).
pub fn root_for(path: &Path, workspace: &Path) -> PathBuf {
    if lexical(path).starts_with(workspace) {
        return workspace.to_path_buf();
    }
    PathBuf::from("/")
}

/// `path` with `.` and `..` taken as written (no link followed).
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn links_out_of_the_root_are_refused_and_files_in_it_read() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("hosts.yml"), "oauth_token: gho_x\n").unwrap();
        std::fs::write(ws.path().join("a.md"), "hello\n").unwrap();
        std::fs::create_dir(ws.path().join("sub")).unwrap();
        symlink(home.path().join("hosts.yml"), ws.path().join("deploy.md")).unwrap();
        symlink(home.path(), ws.path().join("sub/home")).unwrap();
        symlink("a.md", ws.path().join("alias.md")).unwrap();
        let read = |p: &str| read_within(&ws.path().join(p), ws.path(), p, 1024);
        assert_eq!(read("a.md").unwrap().bytes, b"hello\n");
        // A link that stays inside reads its target.
        assert_eq!(read("alias.md").unwrap().bytes, b"hello\n");
        for out in ["deploy.md", "sub/home/hosts.yml", "../x"] {
            let e = read(out).unwrap_err();
            assert!(
                matches!(e, NamedError::Outside { .. } | NamedError::Missing(_)),
                "{out}: {e}"
            );
        }
        assert!(matches!(read("sub"), Err(NamedError::NotRegular(_))));
        assert!(matches!(read("none.md"), Err(NamedError::Missing(_))));
        std::fs::write(ws.path().join("big.md"), vec![b'x'; 2048]).unwrap();
        assert!(matches!(read("big.md"), Err(NamedError::TooLarge { .. })));
        nix::unistd::mkfifo(
            &ws.path().join("pipe.md"),
            nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
        )
        .unwrap();
        assert!(matches!(read("pipe.md"), Err(NamedError::NotRegular(_))));
    }
}
