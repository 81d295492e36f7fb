//! The ignored files and directories (the workspace's `.gitignore`, the
//! build directories checkpoints leave out): no checkpoint holds them, so
//! what a call deletes or changes among them is named, never lost
//! silently.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{CheckpointError, Store};

/// The most entries looked at (a tree ignoring files one by one).
const MOST: usize = 2_000;
/// The most children of one directory looked at.
const MOST_CHILDREN: usize = 10_000;

/// How an ignored entry stands: its kind, size and change time, and for
/// a directory how many entries it holds and their latest change (one
/// level down).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    dir: bool,
    len: u64,
    mtime: (i64, i64),
    children: Option<(usize, (i64, i64))>,
}

/// The ignored entries of a workspace at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ignored(BTreeMap<String, Stamp>);

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let children = meta.is_dir().then(|| {
        let mut count = 0;
        let mut latest = (0, 0);
        for entry in std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .flatten()
            .take(MOST_CHILDREN)
        {
            count += 1;
            if let Ok(m) = entry.metadata() {
                latest = latest.max((m.mtime(), m.mtime_nsec()));
            }
        }
        (count, latest)
    });
    Some(Stamp {
        dir: meta.is_dir(),
        len: if meta.is_dir() { 0 } else { meta.len() },
        mtime: (meta.mtime(), meta.mtime_nsec()),
        children,
    })
}

impl Ignored {
    /// What of these is gone or changed in `after` (`node_modules/
    /// deleted`, `dist/ changed`).
    pub fn lost(&self, after: &Ignored) -> Vec<String> {
        self.0
            .iter()
            .filter_map(|(path, was)| match after.0.get(path) {
                Some(now) if now == was => None,
                Some(_) => Some(format!("{path} changed")),
                None => Some(format!("{path} deleted")),
            })
            .collect()
    }
}

impl Store {
    /// The ignored files and directories now (a directory ignored whole
    /// is one entry).
    pub fn ignored(&self) -> Result<Ignored, CheckpointError> {
        let listed = self.git(
            &[
                "ls-files",
                "-z",
                "--others",
                "--ignored",
                "--exclude-standard",
                "--directory",
            ],
            None,
        )?;
        let mut out = BTreeMap::new();
        for rel in listed
            .split(|b| *b == 0)
            .filter(|r| !r.is_empty())
            .take(MOST)
        {
            let path = self.work_tree.join(OsStr::from_bytes(rel));
            if let Some(s) = stamp(&path) {
                out.insert(String::from_utf8_lossy(rel).into_owned(), s);
            }
        }
        Ok(Ignored(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ignored_directory_deleted_or_changed_is_named() {
        let ws = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join(".gitignore"), "build/\n*.log\n").unwrap();
        std::fs::create_dir_all(ws.path().join("build/out")).unwrap();
        std::fs::write(ws.path().join("build/out/app"), "binary").unwrap();
        std::fs::write(ws.path().join("run.log"), "x").unwrap();
        std::fs::write(ws.path().join("kept.txt"), "tracked").unwrap();
        let store = Store::open(data.path(), ws.path()).unwrap();
        let before = store.ignored().unwrap();
        assert_eq!(before.lost(&store.ignored().unwrap()), Vec::<String>::new());
        std::fs::remove_dir_all(ws.path().join("build")).unwrap();
        std::fs::write(ws.path().join("run.log"), "longer now").unwrap();
        std::fs::write(ws.path().join("kept.txt"), "checkpointed: not named").unwrap();
        let lost = before.lost(&store.ignored().unwrap());
        assert_eq!(lost, ["build/ deleted", "run.log changed"]);
    }
}
