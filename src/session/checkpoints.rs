//! Checkpoints: the workspace's files before and after each turn that
//! changed them, as trees in a shadow git repository under Lathe's data
//! directory (`checkpoints/<workspace>-<hash>/`), never the person's own
//! `.git`. A snapshot is `git add -A` into the shadow's index (so the
//! workspace's `.gitignore` holds, and a few build directories are left
//! out) and `git write-tree`: no commits, no hooks, no configuration
//! but the shadow's own (system and global git config are ignored, and
//! every inherited `GIT_*` variable is dropped, so nothing redirects it).
//!
//! Rewinding the files to before a turn restores exactly the paths the
//! turns since then changed, each to its content before that turn (a
//! file those turns created is removed), and refuses, naming them, when
//! any of those files changed outside Lathe after the last turn that
//! touched it. Files are written atomically, never through a link.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Left out of snapshots whatever the workspace's `.gitignore` says:
/// build output and dependencies, big and made again at will.
const EXCLUDE: &str = "node_modules/\ntarget/\n.venv/\nvenv/\n__pycache__/\n.tox/\n\
.mypy_cache/\n.pytest_cache/\n.gradle/\n.next/\n.lathe-disarmed/\n";

/// Paths per git command line.
const CHUNK: usize = 256;

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("git is needed for checkpoints and could not be run: {0}")]
    NoGit(String),
    #[error("git {0}: {1}")]
    Git(String, String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error(
        "not restored: these files changed after Lathe last changed them (outside Lathe, or by \
         hand), and would be lost: {}. Nothing was restored.",
        .0.join(", ")
    )]
    Conflict(Vec<String>),
}

/// One entry of a tree: its mode (`100644`, `100755`, `120000`) and blob.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    mode: String,
    oid: String,
}

/// The trees of one turn that changed files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnTrees {
    pub turn: u64,
    pub before: String,
    /// `None` when the turn never ended (Lathe was stopped).
    pub after: Option<String>,
}

/// What a rewind did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restored {
    /// Files written back as they were.
    pub restored: Vec<String>,
    /// Files the turns created, removed.
    pub removed: Vec<String>,
}

/// A workspace's shadow repository.
#[derive(Debug, Clone)]
pub struct Store {
    git_dir: PathBuf,
    work_tree: PathBuf,
}

impl Store {
    /// The shadow repository of `workspace` under `data_dir`, made if new.
    pub fn open(data_dir: &Path, workspace: &Path) -> Result<Self, CheckpointError> {
        let slug = crate::config::paths::workspace_slug(workspace);
        let git_dir = data_dir.join("checkpoints").join(slug);
        super::journal::private_dir(&git_dir)?;
        let store = Self {
            git_dir,
            work_tree: workspace.to_path_buf(),
        };
        if !store.git_dir.join("HEAD").exists() {
            store.git(&["init", "--quiet"], None)?;
        }
        for (key, value) in [
            ("core.autocrlf", "false"),
            ("core.safecrlf", "false"),
            ("core.fsmonitor", "false"),
            ("core.hooksPath", "/dev/null"),
            ("core.untrackedCache", "false"),
            ("core.quotePath", "false"),
            ("gc.auto", "0"),
            ("maintenance.auto", "false"),
            ("advice.addEmbeddedRepo", "false"),
        ] {
            store.git(&["config", key, value], None)?;
        }
        std::fs::create_dir_all(store.git_dir.join("info"))?;
        std::fs::write(store.git_dir.join("info").join("exclude"), EXCLUDE)?;
        Ok(store)
    }

    /// Runs git on the shadow repository, with `input` on stdin.
    fn git(&self, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, CheckpointError> {
        self.git_os(args.iter().map(OsStr::new), input)
    }

    fn git_os<'a>(
        &self,
        args: impl IntoIterator<Item = &'a OsStr>,
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, CheckpointError> {
        let mut cmd = Command::new("git");
        for (k, _) in std::env::vars_os() {
            if k.as_bytes().starts_with(b"GIT_") {
                cmd.env_remove(&k);
            }
        }
        cmd.arg("--git-dir")
            .arg(&self.git_dir)
            .arg("--work-tree")
            .arg(&self.work_tree)
            .args(args)
            .current_dir(&self.work_tree)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("LC_ALL", "C")
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| CheckpointError::NoGit(e.to_string()))?;
        if let (Some(data), Some(mut stdin)) = (input, child.stdin.take()) {
            // Written from a thread: git may fill its stdout first.
            let data = data.to_vec();
            std::thread::spawn(move || {
                let _ = stdin.write_all(&data);
            });
        }
        let out = child.wait_with_output()?;
        if !out.status.success() {
            let what = cmd
                .get_args()
                .skip(4)
                .take(2)
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ");
            return Err(CheckpointError::Git(
                what,
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
        Ok(out.stdout)
    }

    /// The workspace's files now, as a tree.
    pub fn snapshot(&self) -> Result<String, CheckpointError> {
        // --ignore-errors: an unreadable file is left out, not fatal.
        self.git(&["add", "--all", "--ignore-errors"], None)
            .or_else(|e| match e {
                // Some files could not be read: the rest are in.
                CheckpointError::Git(..) => Ok(Vec::new()),
                other => Err(other),
            })?;
        let out = self.git(&["write-tree"], None)?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// The paths that differ between two trees.
    pub fn changed(&self, from: &str, to: &str) -> Result<Vec<PathBuf>, CheckpointError> {
        if from == to {
            return Ok(Vec::new());
        }
        let out = self.git(
            &[
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--name-only",
                from,
                to,
            ],
            None,
        )?;
        Ok(out
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| PathBuf::from(OsStr::from_bytes(p)))
            .collect())
    }

    /// The entries of `paths` in `tree` (absent ones left out).
    fn entries(
        &self,
        tree: &str,
        paths: &[PathBuf],
    ) -> Result<HashMap<PathBuf, Entry>, CheckpointError> {
        let mut out = HashMap::new();
        for chunk in paths.chunks(CHUNK) {
            let mut args: Vec<&OsStr> = ["ls-tree", "-r", "-z", "--full-tree", tree, "--"]
                .into_iter()
                .map(OsStr::new)
                .collect();
            args.extend(chunk.iter().map(|p| p.as_os_str()));
            let listing = self.git_os(args, None)?;
            for line in listing.split(|b| *b == 0).filter(|l| !l.is_empty()) {
                // `<mode> <type> <oid>\t<path>`
                let Some(tab) = line.iter().position(|b| *b == b'\t') else {
                    continue;
                };
                let head = String::from_utf8_lossy(&line[..tab]);
                let mut parts = head.split(' ');
                let (Some(mode), Some(_kind), Some(oid)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                out.insert(
                    PathBuf::from(OsStr::from_bytes(&line[tab + 1..])),
                    Entry {
                        mode: mode.to_string(),
                        oid: oid.to_string(),
                    },
                );
            }
        }
        Ok(out)
    }

    /// The contents of blobs, by id.
    fn blobs(&self, oids: &[&str]) -> Result<HashMap<String, Vec<u8>>, CheckpointError> {
        let mut input = Vec::new();
        for oid in oids {
            input.extend_from_slice(oid.as_bytes());
            input.push(b'\n');
        }
        let out = self.git(&["cat-file", "--batch"], Some(&input))?;
        let mut blobs = HashMap::new();
        let mut rest = &out[..];
        while !rest.is_empty() {
            let Some(nl) = rest.iter().position(|b| *b == b'\n') else {
                break;
            };
            let header = String::from_utf8_lossy(&rest[..nl]).to_string();
            rest = &rest[nl + 1..];
            let mut parts = header.split(' ');
            let (Some(oid), Some(_), Some(size)) = (parts.next(), parts.next(), parts.next())
            else {
                break;
            };
            let size: usize = size.parse().unwrap_or(0);
            if rest.len() < size {
                break;
            }
            blobs.insert(oid.to_string(), rest[..size].to_vec());
            rest = rest.get(size + 1..).unwrap_or(&[]);
        }
        Ok(blobs)
    }

    /// Rewinds the files to before the first of `turns` (checkpointed
    /// turns in order; the turns since then follow it): every path those
    /// turns changed goes back to its content before the first, unless
    /// one of them changed after the last turn that touched it.
    pub fn rewind(&self, turns: &[TurnTrees]) -> Result<Restored, CheckpointError> {
        let Some(first) = turns.first() else {
            return Ok(Restored::default());
        };
        let now = self.snapshot()?;
        // What each turn changed, and the tree after the last turn that
        // touched each path.
        let mut last_after: HashMap<PathBuf, String> = HashMap::new();
        for (i, t) in turns.iter().enumerate() {
            let after = t
                .after
                .clone()
                .or_else(|| turns.get(i + 1).map(|n| n.before.clone()))
                .unwrap_or_else(|| now.clone());
            for p in self.changed(&t.before, &after)? {
                last_after.insert(p, after.clone());
            }
        }
        let paths: Vec<PathBuf> = last_after
            .keys()
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        // Changed since Lathe last wrote them: refuse, losing nothing.
        let now_entries = self.entries(&now, &paths)?;
        let mut by_tree: HashMap<&str, Vec<PathBuf>> = HashMap::new();
        for (p, tree) in &last_after {
            by_tree.entry(tree.as_str()).or_default().push(p.clone());
        }
        let mut conflicts = Vec::new();
        for (tree, ps) in by_tree {
            let then = self.entries(tree, &ps)?;
            for p in ps {
                if then.get(&p) != now_entries.get(&p) {
                    conflicts.push(p.display().to_string());
                }
            }
        }
        if !conflicts.is_empty() {
            conflicts.sort();
            return Err(CheckpointError::Conflict(conflicts));
        }
        self.restore(&first.before, &paths)
    }

    /// Writes `paths` as they are in `tree` (removing those it lacks).
    fn restore(&self, tree: &str, paths: &[PathBuf]) -> Result<Restored, CheckpointError> {
        let target = self.entries(tree, paths)?;
        let oids: Vec<&str> = target.values().map(|e| e.oid.as_str()).collect();
        let blobs = self.blobs(&oids)?;
        let mut done = Restored::default();
        for p in paths {
            let full = self.safe_path(p)?;
            match target.get(p) {
                Some(entry) => {
                    let data = blobs.get(&entry.oid).ok_or_else(|| {
                        CheckpointError::Git("cat-file".into(), format!("no blob {}", entry.oid))
                    })?;
                    write_entry(&full, entry, data)?;
                    done.restored.push(p.display().to_string());
                }
                None => {
                    match std::fs::symlink_metadata(&full) {
                        Ok(m) if !m.is_dir() => std::fs::remove_file(&full)?,
                        Ok(_) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(e.into()),
                    }
                    remove_empty_parents(&self.work_tree, &full);
                    done.removed.push(p.display().to_string());
                }
            }
        }
        Ok(done)
    }

    /// `rel` under the workspace, refused when a directory on the way is
    /// a link (a write would land elsewhere) or it climbs out.
    fn safe_path(&self, rel: &Path) -> Result<PathBuf, CheckpointError> {
        use std::path::Component;
        let mut at = self.work_tree.clone();
        let parts: Vec<Component<'_>> = rel.components().collect();
        for (i, c) in parts.iter().enumerate() {
            let Component::Normal(name) = c else {
                return Err(
                    std::io::Error::other(format!("refusing the path {}", rel.display())).into(),
                );
            };
            at.push(name);
            if i + 1 < parts.len()
                && std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink())
            {
                return Err(std::io::Error::other(format!(
                    "{} is under a link now; not restored through it",
                    rel.display()
                ))
                .into());
            }
        }
        Ok(at)
    }
}

/// Writes one entry: a file (atomically, with its mode) or a link.
fn write_entry(full: &Path, entry: &Entry, data: &[u8]) -> Result<(), CheckpointError> {
    use std::os::unix::fs::PermissionsExt;
    let dir = full
        .parent()
        .ok_or_else(|| std::io::Error::other("a path without a directory"))?;
    std::fs::create_dir_all(dir)?;
    if entry.mode == "120000" {
        if std::fs::symlink_metadata(full).is_ok() {
            std::fs::remove_file(full)?;
        }
        std::os::unix::fs::symlink(OsStr::from_bytes(data), full)?;
        return Ok(());
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(data)?;
    tmp.as_file().sync_data()?;
    let mode = if entry.mode == "100755" { 0o755 } else { 0o644 };
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(mode))?;
    // A directory where the file was: it is not replaced.
    if std::fs::symlink_metadata(full).is_ok_and(|m| m.is_dir()) {
        return Err(std::io::Error::other(format!(
            "{} is a directory now; not restored",
            full.display()
        ))
        .into());
    }
    tmp.persist(full).map_err(|e| e.error)?;
    Ok(())
}

/// Removes directories left empty under `root`, up from `file`.
fn remove_empty_parents(root: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixture {
        _data: tempfile::TempDir,
        ws: tempfile::TempDir,
        store: Store,
    }

    fn fixture() -> Fixture {
        let data = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let store = Store::open(data.path(), ws.path()).unwrap();
        Fixture {
            _data: data,
            ws,
            store,
        }
    }

    impl Fixture {
        fn write(&self, p: &str, text: &str) {
            let full = self.ws.path().join(p);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }

        fn read(&self, p: &str) -> Option<String> {
            std::fs::read_to_string(self.ws.path().join(p)).ok()
        }
    }

    #[test]
    fn a_turn_is_undone_writes_edits_creations_and_deletions_alike() {
        let f = fixture();
        f.write("keep.txt", "untouched\n");
        f.write("edit.txt", "one\n");
        f.write("gone.txt", "deleted by the turn\n");
        f.write(".gitignore", "ignored.log\n");
        let before = f.store.snapshot().unwrap();
        f.write("edit.txt", "two\n");
        f.write("new/dir/made.txt", "created\n");
        std::fs::remove_file(f.ws.path().join("gone.txt")).unwrap();
        f.write("ignored.log", "not tracked\n");
        let after = f.store.snapshot().unwrap();
        let done = f
            .store
            .rewind(&[TurnTrees {
                turn: 1,
                before,
                after: Some(after),
            }])
            .unwrap();
        assert_eq!(f.read("edit.txt").as_deref(), Some("one\n"));
        assert_eq!(f.read("gone.txt").as_deref(), Some("deleted by the turn\n"));
        assert_eq!(f.read("new/dir/made.txt"), None);
        assert!(!f.ws.path().join("new").exists(), "emptied directories go");
        assert_eq!(f.read("keep.txt").as_deref(), Some("untouched\n"));
        assert_eq!(f.read("ignored.log").as_deref(), Some("not tracked\n"));
        assert_eq!(done.removed, vec!["new/dir/made.txt"]);
        assert_eq!(done.restored.len(), 2);
    }

    #[test]
    fn a_file_changed_since_is_never_overwritten() {
        let f = fixture();
        f.write("a.txt", "1\n");
        f.write("b.txt", "1\n");
        let before = f.store.snapshot().unwrap();
        f.write("a.txt", "2 (Lathe)\n");
        f.write("b.txt", "2 (Lathe)\n");
        let after = f.store.snapshot().unwrap();
        f.write("a.txt", "3 (the person)\n");
        let err = f
            .store
            .rewind(&[TurnTrees {
                turn: 1,
                before,
                after: Some(after),
            }])
            .unwrap_err();
        assert!(
            matches!(&err, CheckpointError::Conflict(p) if p == &["a.txt"]),
            "{err}"
        );
        assert_eq!(f.read("a.txt").as_deref(), Some("3 (the person)\n"));
        assert_eq!(
            f.read("b.txt").as_deref(),
            Some("2 (Lathe)\n"),
            "nothing restored"
        );
    }

    #[test]
    fn rewinding_several_turns_goes_back_to_before_the_first() {
        let f = fixture();
        f.write("a.txt", "v0\n");
        let t1 = f.store.snapshot().unwrap();
        f.write("a.txt", "v1\n");
        let t1_after = f.store.snapshot().unwrap();
        // Between turns the person edits another file: it stays.
        f.write("mine.txt", "the person's\n");
        let t2 = f.store.snapshot().unwrap();
        f.write("a.txt", "v2\n");
        f.write("b.txt", "made in turn 2\n");
        // Turn 2 never ended (Lathe was stopped).
        let turns = [
            TurnTrees {
                turn: 1,
                before: t1,
                after: Some(t1_after),
            },
            TurnTrees {
                turn: 2,
                before: t2,
                after: None,
            },
        ];
        f.store.rewind(&turns).unwrap();
        assert_eq!(f.read("a.txt").as_deref(), Some("v0\n"));
        assert_eq!(f.read("b.txt"), None);
        assert_eq!(f.read("mine.txt").as_deref(), Some("the person's\n"));
    }

    #[test]
    fn links_are_restored_as_links_and_never_written_through() {
        let f = fixture();
        let outside = tempfile::tempdir().unwrap();
        f.write("d/x.txt", "inside\n");
        std::os::unix::fs::symlink("x.txt", f.ws.path().join("d/link")).unwrap();
        let before = f.store.snapshot().unwrap();
        f.write("d/x.txt", "changed\n");
        std::fs::remove_file(f.ws.path().join("d/link")).unwrap();
        let after = f.store.snapshot().unwrap();
        // The directory is swapped for a link out of the workspace.
        std::fs::rename(f.ws.path().join("d"), f.ws.path().join("d.moved")).unwrap();
        std::os::unix::fs::symlink(outside.path(), f.ws.path().join("d")).unwrap();
        let turns = [TurnTrees {
            turn: 1,
            before: before.clone(),
            after: Some(after.clone()),
        }];
        assert!(f.store.rewind(&turns).is_err());
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        // Put back, the rewind restores the link as a link.
        std::fs::remove_file(f.ws.path().join("d")).unwrap();
        std::fs::rename(f.ws.path().join("d.moved"), f.ws.path().join("d")).unwrap();
        f.store.rewind(&turns).unwrap();
        let link = std::fs::read_link(f.ws.path().join("d/link")).unwrap();
        assert_eq!(link, Path::new("x.txt"));
        assert_eq!(f.read("d/x.txt").as_deref(), Some("inside\n"));
    }

    #[test]
    fn the_persons_repository_is_never_touched() {
        let f = fixture();
        std::fs::create_dir(f.ws.path().join(".git")).unwrap();
        f.write(".git/config", "[core]\n");
        f.write("a.txt", "1\n");
        let before = f.store.snapshot().unwrap();
        let listing = f
            .store
            .git(&["ls-tree", "-r", "--name-only", &before], None)
            .unwrap();
        let names = String::from_utf8_lossy(&listing);
        assert!(!names.contains(".git/"), "{names}");
        assert_eq!(f.read(".git/config").as_deref(), Some("[core]\n"));
    }
}
