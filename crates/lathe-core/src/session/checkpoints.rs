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
/// Names a source directory may also have (`src/target/`) only at the
/// top.
const EXCLUDE: &str = "node_modules/\n/target/\n.venv/\n/venv/\n__pycache__/\n.tox/\n\
.mypy_cache/\n.pytest_cache/\n.gradle/\n.next/\n.lathe-disarmed/\n";

/// Content as it is on disk: no line-ending conversion, filter or
/// encoding of the workspace's `.gitattributes` (a restore writes what
/// was read).
const ATTRIBUTES: &str = "* -text -eol -filter -ident -working-tree-encoding\n";

/// The mode of a nested repository's entry (a commit, not content).
const GITLINK: &str = "160000";

/// Paths per git command line.
const CHUNK: usize = 256;

/// The longest one git command of a checkpoint may take (the first
/// snapshot of a very large tree stays well within it).
const GIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

mod ignored;
mod pipes;
use pipes::{drain, drain_then};

pub use ignored::Ignored;

/// Files larger than this are not kept (never read): a 6 GB sparse file
/// took each checkpointed round 34 s. `/undo` leaves them alone and says so.
pub const LARGE_FILE: u64 = 16 * 1024 * 1024;

/// The workspace's files at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub tree: String,
    /// Files over [`LARGE_FILE`], not kept (relative to the workspace).
    pub large: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("git is needed for checkpoints and could not be run: {0}")]
    NoGit(String),
    #[error("git {0}: {1}")]
    Git(String, String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error(
        "git did not finish within {0} s (a FIFO or device where a .gitignore should be?): \
         checkpoints are off for this session"
    )]
    Timeout(u64),
    #[error(
        "these files changed after Lathe last changed them (outside Lathe, or by hand) and \
         would be lost: {}",
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
    /// Changed, but not put back: in a nested git repository, or too
    /// large to keep.
    pub skipped: Vec<String>,
}

/// What a rewind would do (`/undo` shows it first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preview {
    pub put_back: Restored,
    /// Changed after Lathe last changed them: the rewind refuses.
    pub changed_since: Vec<String>,
}

/// A rewind worked out: the tree to go back to, the paths to write back
/// or remove, those left alone, those changed since.
struct Plan {
    tree: String,
    restore: Vec<PathBuf>,
    skipped: Vec<String>,
    conflicts: Vec<String>,
}

/// A workspace's shadow repository.
#[derive(Debug, Clone)]
pub struct Store {
    git_dir: PathBuf,
    work_tree: PathBuf,
    /// This process's index: two Lathes on one workspace never share one
    /// (nor its lock).
    index: PathBuf,
    /// The longest one git command may take.
    timeout: std::time::Duration,
}

impl Store {
    /// The shadow repository of `workspace` under `data_dir`, made if new.
    pub fn open(data_dir: &Path, workspace: &Path) -> Result<Self, CheckpointError> {
        let slug = crate::config::paths::workspace_slug(workspace);
        let git_dir = data_dir.join("checkpoints").join(slug);
        super::journal::private_dir(&git_dir)?;
        let index = git_dir.join(format!("index-{}", std::process::id()));
        let store = Self {
            git_dir,
            work_tree: workspace.to_path_buf(),
            index,
            timeout: GIT_TIMEOUT,
        };
        if !store.git_dir.join("HEAD").exists() {
            store.git(&["init", "--quiet"], None)?;
        }
        for (key, value) in [
            ("core.autocrlf", "false"),
            ("core.safecrlf", "false"),
            ("core.fsmonitor", "false"),
            ("core.hooksPath", "/dev/null"),
            // Directories whose time has not changed are not read again
            // for new files: a warm checkpoint of a large tree reads only
            // what changed.
            ("core.untrackedCache", "true"),
            ("core.quotePath", "false"),
            ("gc.auto", "0"),
            ("maintenance.auto", "false"),
            ("advice.addEmbeddedRepo", "false"),
        ] {
            store.git(&["config", key, value], None)?;
        }
        std::fs::create_dir_all(store.git_dir.join("info"))?;
        std::fs::write(store.git_dir.join("info").join("exclude"), EXCLUDE)?;
        std::fs::write(store.git_dir.join("info").join("attributes"), ATTRIBUTES)?;
        store.own_index();
        Ok(store)
    }

    /// Starts this process's index from the last one saved (so the first
    /// snapshot need not read every file again), and removes those of
    /// processes that are gone.
    fn own_index(&self) {
        if let Ok(entries) = std::fs::read_dir(&self.git_dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Some(pid) = name
                    .strip_prefix("index-")
                    .map(|r| r.trim_end_matches(".lock"))
                else {
                    continue;
                };
                let mine = pid == std::process::id().to_string();
                if mine || !Path::new("/proc").join(pid).exists() {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        let _ = std::fs::copy(self.git_dir.join("index"), &self.index);
    }

    /// Saves this process's index for the next one to start from.
    fn share_index(&self) {
        let tmp = self
            .git_dir
            .join(format!("index.{}.tmp", std::process::id()));
        if std::fs::copy(&self.index, &tmp).is_ok() {
            let _ = std::fs::rename(&tmp, self.git_dir.join("index"));
        }
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
        self.git_os_env(args, input, &[])
    }

    fn git_os_env<'a>(
        &self,
        args: impl IntoIterator<Item = &'a OsStr>,
        input: Option<&[u8]>,
        env: &[(&str, &str)],
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
            .env("GIT_INDEX_FILE", &self.index)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("LC_ALL", "C")
            .envs(env.iter().copied())
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
        // Read from threads, while this one keeps time: git blocks for
        // good on a FIFO put where a `.gitignore` should be.
        let (closed, stdout_closed) = std::sync::mpsc::channel();
        let stdout = drain_then(child.stdout.take(), closed);
        let stderr = drain(child.stderr.take());
        let deadline = std::time::Instant::now() + self.timeout;
        // Git closes its output as it exits: waited for at once, not
        // polled for (polling cost a checkpoint up to 5 ms a command).
        let _ = stdout_closed.recv_timeout(self.timeout);
        // Then looked at often at first, then less.
        let mut pause = std::time::Duration::from_micros(50);
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if std::time::Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(CheckpointError::Timeout(self.timeout.as_secs()));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_millis(5));
        };
        let out = std::process::Output {
            status,
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        };
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
        self.snapshot_noting().map(|s| s.tree)
    }

    /// The workspace's files now, as a tree, and the files too large to
    /// keep. A file over [`LARGE_FILE`] is never read: its entry is a
    /// marker (a gitlink, as a nested repository's is) that names its
    /// size, inode and time, so a rewind leaves it alone and a change to
    /// it still shows.
    pub fn snapshot_noting(&self) -> Result<Snapshot, CheckpointError> {
        use std::os::unix::fs::MetadataExt;
        // What `git add` would read: new files and those changed since
        // the index last saw them (stat only).
        let listed = self.git(
            &[
                "ls-files",
                "-z",
                "--others",
                "--modified",
                "--deleted",
                "--exclude-standard",
            ],
            None,
        )?;
        let mut large: Vec<(String, String)> = Vec::new();
        let changed: Vec<&[u8]> = listed
            .split(|b| *b == 0)
            .filter(|r| !r.is_empty())
            .collect();
        for &rel in &changed {
            let path = self.work_tree.join(OsStr::from_bytes(rel));
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_file() && meta.len() > LARGE_FILE {
                let stamp = format!(
                    "lathe large file {} {} {} {}",
                    meta.len(),
                    meta.ino(),
                    meta.mtime(),
                    meta.mtime_nsec()
                );
                let digest = ring::digest::digest(&ring::digest::SHA256, stamp.as_bytes());
                let oid: String = digest.as_ref()[..20]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                large.push((String::from_utf8_lossy(rel).into_owned(), oid));
            }
        }
        self.add(&changed, &large)?;
        if !large.is_empty() {
            let mut info = Vec::new();
            for (rel, oid) in &large {
                info.extend_from_slice(format!("{GITLINK} {oid}\t").as_bytes());
                info.extend_from_slice(rel.as_bytes());
                info.push(0);
            }
            self.git(&["update-index", "-z", "--index-info"], Some(&info))?;
        }
        let out = self.git(&["write-tree"], None)?;
        self.share_index();
        Ok(Snapshot {
            tree: String::from_utf8_lossy(&out).trim().to_string(),
            large: large.into_iter().map(|(rel, _)| rel).collect(),
        })
    }

    /// Brings the index up to the files `changed` (new, modified or gone,
    /// as `ls-files` listed them), but the `large` ones. A few are named
    /// (nothing else is read again); many (the first checkpoint of a
    /// tree), the whole tree is added. `--ignore-errors`: an unreadable
    /// file is left out, not fatal.
    fn add(&self, changed: &[&[u8]], large: &[(String, String)]) -> Result<(), CheckpointError> {
        /// Past this many, one walk of the tree is cheaper than naming them.
        const NAMED: usize = 1_000;
        if changed.is_empty() {
            return Ok(());
        }
        let some_failed = |e| match e {
            // Some files could not be read: the rest are in.
            CheckpointError::Git(..) => Ok(()),
            other => Err(other),
        };
        // Files alone (a nested repository's directory, `dir/`, goes the
        // long way: it is recorded as what it is).
        if changed.len() <= NAMED && !changed.iter().any(|r| r.ends_with(b"/")) {
            let mut names = Vec::new();
            for &rel in changed {
                if large.iter().any(|(l, _)| l.as_bytes() == rel) {
                    continue;
                }
                names.extend_from_slice(rel);
                names.push(0);
            }
            if names.is_empty() {
                return Ok(());
            }
            // Plumbing: the named files hashed or dropped, no walk. One
            // that cannot be read fails it all: then the long way.
            let named = self.git(
                &[
                    "update-index",
                    "--add",
                    "--remove",
                    "--replace",
                    "-z",
                    "--stdin",
                ],
                Some(&names),
            );
            if named.is_ok() {
                return Ok(());
            }
        }
        // The large files are left out by name (pathspec magic, for this
        // command only).
        let mut args: Vec<std::ffi::OsString> = ["add", "--all", "--ignore-errors", "--", "."]
            .iter()
            .map(std::ffi::OsString::from)
            .collect();
        for (rel, _) in large {
            args.push(format!(":(exclude,literal){rel}").into());
        }
        self.git_magic(&args).map(drop).or_else(some_failed)
    }

    /// `git` with pathspec magic on (`:(exclude)`): only for arguments
    /// Lathe writes itself.
    fn git_magic(&self, args: &[std::ffi::OsString]) -> Result<Vec<u8>, CheckpointError> {
        self.git_os_env(
            args.iter().map(std::ffi::OsString::as_os_str),
            None,
            &[("GIT_LITERAL_PATHSPECS", "0")],
        )
    }

    /// Everything that differs between two trees, as a unified diff, at
    /// most `limit` bytes of it (cut at a line; `true` when cut).
    pub fn patch(
        &self,
        from: &str,
        to: &str,
        limit: usize,
    ) -> Result<(String, bool), CheckpointError> {
        if from == to {
            return Ok((String::new(), false));
        }
        let out = self.git(
            &[
                "diff-tree",
                "-p",
                "-r",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "-M",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                from,
                to,
            ],
            None,
        )?;
        let text = String::from_utf8_lossy(&out);
        if text.len() <= limit {
            return Ok((text.into_owned(), false));
        }
        let cut = crate::protocol::text::cut(&text, limit);
        let end = cut.rfind('\n').map_or(0, |i| i + 1);
        Ok((text[..end].to_string(), true))
    }

    /// Every file that differs between two trees, as a change: edited,
    /// created, deleted, or moved (a deleted file whose exact content
    /// turns up under a new name). Binary files, links, nested
    /// repositories and files too large to keep are left out; at most
    /// `limit` bytes of old and new text are looked at.
    pub fn changes(
        &self,
        from: &str,
        to: &str,
        limit: usize,
    ) -> Result<(Vec<crate::protocol::change::FileChange>, bool), CheckpointError> {
        use crate::protocol::change::FileChange;
        let paths = self.changed(from, to)?;
        if paths.is_empty() {
            return Ok((Vec::new(), false));
        }
        let (old, new) = (self.entries(from, &paths)?, self.entries(to, &paths)?);
        let regular = |e: &&Entry| e.mode.starts_with("100");
        let oids: Vec<&str> = old
            .values()
            .chain(new.values())
            .filter(regular)
            .map(|e| e.oid.as_str())
            .collect();
        let blobs = self.blobs(&oids)?;
        let text = |e: Option<&Entry>| -> Option<Option<&str>> {
            match e {
                None => Some(None),
                Some(e) if regular(&e) => blobs
                    .get(&e.oid)
                    .and_then(|b| std::str::from_utf8(b).ok())
                    .map(Some),
                Some(_) => None,
            }
        };
        let shown = |p: &Path| p.to_string_lossy().into_owned();
        // Moves: a file gone and the same content come under one new name.
        let gone: Vec<&PathBuf> = paths
            .iter()
            .filter(|p| old.contains_key(*p) && !new.contains_key(*p))
            .collect();
        let mut moved: HashMap<&PathBuf, &PathBuf> = HashMap::new();
        for p in paths
            .iter()
            .filter(|p| new.contains_key(*p) && !old.contains_key(*p))
        {
            if let Some(from) = gone.iter().find(|g| {
                !moved.values().any(|m| m == *g)
                    && old[**g].oid == new[p].oid
                    && regular(&&old[**g])
            }) {
                moved.insert(p, from);
            }
        }
        let mut out = Vec::new();
        let mut size = 0usize;
        for p in &paths {
            if moved.values().any(|m| *m == p) {
                continue;
            }
            let (Some(before), Some(after)) = (text(old.get(p)), text(new.get(p))) else {
                continue;
            };
            size += before.map_or(0, str::len) + after.map_or(0, str::len);
            if size > limit {
                return Ok((out, true));
            }
            let file = self.work_tree.join(p);
            let change = match (moved.get(p), before, after) {
                (Some(from), _, Some(text)) => FileChange::rename(
                    &shown(from),
                    self.work_tree.join(from),
                    &shown(p),
                    file,
                    text,
                ),
                (None, Some(old), None) => FileChange::delete(&shown(p), file, old),
                (None, old, Some(new)) => FileChange::new(&shown(p), file, old, new),
                _ => continue,
            };
            out.push(change);
        }
        Ok((out, false))
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

    /// Rewinds the files to before the first of `turns`: the segments of
    /// work to undo (each round of calls of each turn, with the trees
    /// before and after it), in order. Every path a segment changed goes
    /// back to its content before the first, unless the path was changed
    /// by anyone else: between segments (its content at a segment's start
    /// is not what the segment before that touched it left, or what it
    /// was at the start), or since the last segment that touched it.
    /// A segment with no tree after it (Lathe was stopped during it)
    /// counts as changing nothing: what it changed stays, and a path it
    /// changed that an earlier segment touched is refused. Nested git
    /// repositories are left alone (`skipped`). Nothing is written unless
    /// everything can be.
    pub fn rewind(&self, turns: &[TurnTrees]) -> Result<Restored, CheckpointError> {
        let Some(plan) = self.plan(turns)? else {
            return Ok(Restored::default());
        };
        if !plan.conflicts.is_empty() {
            return Err(CheckpointError::Conflict(plan.conflicts));
        }
        let mut done = self.restore(&plan.tree, &plan.restore)?;
        done.skipped = plan.skipped;
        Ok(done)
    }

    /// What [`Self::rewind`] of `turns` would do, doing nothing: the
    /// files it would write back and remove, those it leaves alone, and
    /// those changed since (which stop it).
    pub fn preview(&self, turns: &[TurnTrees]) -> Result<Preview, CheckpointError> {
        let Some(plan) = self.plan(turns)? else {
            return Ok(Preview::default());
        };
        let target = self.entries(&plan.tree, &plan.restore)?;
        let (restored, removed): (Vec<&PathBuf>, Vec<&PathBuf>) =
            plan.restore.iter().partition(|p| target.contains_key(*p));
        let shown = |v: Vec<&PathBuf>| v.iter().map(|p| p.display().to_string()).collect();
        Ok(Preview {
            put_back: Restored {
                restored: shown(restored),
                removed: shown(removed),
                skipped: plan.skipped,
            },
            changed_since: plan.conflicts,
        })
    }

    /// The paths a rewind of `turns` touches, as the files were before
    /// the first (`None`: nothing changed).
    fn plan(&self, turns: &[TurnTrees]) -> Result<Option<Plan>, CheckpointError> {
        let Some(first) = turns.first() else {
            return Ok(None);
        };
        let now = self.snapshot()?;
        // The segments that changed something, and what.
        let mut segments: Vec<(&str, &str, Vec<PathBuf>)> = Vec::new();
        for t in turns {
            let after = t.after.as_deref().unwrap_or(&t.before);
            let changed = self.changed(&t.before, after)?;
            if !changed.is_empty() {
                segments.push((&t.before, after, changed));
            }
        }
        let paths: Vec<PathBuf> = segments
            .iter()
            .flat_map(|(_, _, c)| c.iter().cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if paths.is_empty() {
            return Ok(None);
        }
        let mut cache: HashMap<String, HashMap<PathBuf, Entry>> = HashMap::new();
        let mut at = |tree: &str| -> Result<HashMap<PathBuf, Entry>, CheckpointError> {
            if let Some(e) = cache.get(tree) {
                return Ok(e.clone());
            }
            let e = self.entries(tree, &paths)?;
            cache.insert(tree.to_string(), e.clone());
            Ok(e)
        };
        let start = at(&first.before)?;
        // What each path should hold now, by what the segments left.
        let mut expected: HashMap<PathBuf, Option<Entry>> = paths
            .iter()
            .map(|p| (p.clone(), start.get(p).cloned()))
            .collect();
        let mut conflicts = BTreeSet::new();
        let mut skipped = BTreeSet::new();
        for (before, after, changed) in &segments {
            let b = at(before)?;
            let a = at(after)?;
            for p in changed {
                if [b.get(p), a.get(p), start.get(p)]
                    .into_iter()
                    .flatten()
                    .any(|e| e.mode == GITLINK)
                {
                    skipped.insert(p.clone());
                    continue;
                }
                if expected.get(p).map(Option::as_ref) != Some(b.get(p)) {
                    conflicts.insert(p.display().to_string());
                }
                expected.insert(p.clone(), a.get(p).cloned());
            }
        }
        let current = at(&now)?;
        for p in &paths {
            if !skipped.contains(p) && expected.get(p).map(Option::as_ref) != Some(current.get(p)) {
                conflicts.insert(p.display().to_string());
            }
        }
        Ok(Some(Plan {
            tree: first.before.clone(),
            restore: paths.into_iter().filter(|p| !skipped.contains(p)).collect(),
            skipped: skipped.iter().map(|p| p.display().to_string()).collect(),
            conflicts: conflicts.into_iter().collect(),
        }))
    }

    /// Writes `paths` as they are in `tree` (removing those it lacks).
    fn restore(&self, tree: &str, paths: &[PathBuf]) -> Result<Restored, CheckpointError> {
        let target = self.entries(tree, paths)?;
        let oids: Vec<&str> = target.values().map(|e| e.oid.as_str()).collect();
        let blobs = self.blobs(&oids)?;
        let at = |p: &Path, e: std::io::Error| -> CheckpointError {
            std::io::Error::new(e.kind(), format!("{}: {e}", p.display())).into()
        };
        // Everything is checked before anything is written.
        let removals: BTreeSet<&Path> = paths
            .iter()
            .filter(|p| !target.contains_key(*p))
            .map(PathBuf::as_path)
            .collect();
        for p in &removals {
            self.safe_path(p)?;
        }
        for (p, entry) in &target {
            if !blobs.contains_key(&entry.oid) {
                return Err(CheckpointError::Git(
                    "cat-file".into(),
                    format!("{}: no content {}", p.display(), entry.oid),
                ));
            }
            self.check_writable(p, &removals)?;
        }
        let mut done = Restored::default();
        // What the turns made goes first: a link or a file may stand
        // where a directory has to be again.
        for p in paths.iter().filter(|p| removals.contains(p.as_path())) {
            let full = self.safe_path(p)?;
            match std::fs::symlink_metadata(&full) {
                Ok(m) if !m.is_dir() => std::fs::remove_file(&full).map_err(|e| at(p, e))?,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(at(p, e)),
            }
            remove_empty_parents(&self.work_tree, &full);
            done.removed.push(p.display().to_string());
        }
        for p in paths {
            let Some(entry) = target.get(p) else {
                continue;
            };
            let full = self.safe_path(p)?;
            let data = blobs.get(&entry.oid).map_or(&[][..], Vec::as_slice);
            write_entry(&full, entry, data).map_err(|e| match e {
                CheckpointError::Io(e) => at(p, e),
                other => other,
            })?;
            done.restored.push(p.display().to_string());
        }
        Ok(done)
    }

    /// Whether `rel` can be written as a file once `removals` are gone:
    /// every directory on the way is one (or goes), and a directory in
    /// its place holds nothing but what goes.
    fn check_writable(
        &self,
        rel: &Path,
        removals: &BTreeSet<&Path>,
    ) -> Result<(), CheckpointError> {
        let refuse = |why: String| -> CheckpointError {
            std::io::Error::other(format!("{} cannot be put back: {why}", rel.display())).into()
        };
        let mut prefix = PathBuf::new();
        let parts: Vec<_> = rel.components().collect();
        for (i, c) in parts.iter().enumerate() {
            prefix.push(c);
            let full = self.work_tree.join(&prefix);
            let Ok(meta) = std::fs::symlink_metadata(&full) else {
                break;
            };
            let last = i + 1 == parts.len();
            if !last && !meta.is_dir() && !removals.contains(prefix.as_path()) {
                return Err(refuse(format!(
                    "{} is not a directory now",
                    prefix.display()
                )));
            }
            if last && meta.is_dir() && !emptied(&full, &prefix, removals, &mut 0) {
                return Err(refuse(
                    "a directory with other files stands in its place".into(),
                ));
            }
        }
        Ok(())
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
    // A file that is there keeps its permissions (git knows only whether
    // a file is executable): a private key stays private.
    let exec = entry.mode == "100755";
    let mode = match std::fs::symlink_metadata(full) {
        Ok(m) if m.is_file() => {
            let old = m.permissions().mode() & 0o7777;
            if exec { old | 0o111 } else { old & !0o111 }
        }
        _ if exec => 0o755,
        _ => 0o644,
    };
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

/// Reads a pipe to its end on a thread of its own.
/// Whether every file under the directory `full` (`rel` in the
/// workspace) is among `removals` (a bounded look).
fn emptied(full: &Path, rel: &Path, removals: &BTreeSet<&Path>, seen: &mut usize) -> bool {
    let Ok(entries) = std::fs::read_dir(full) else {
        return false;
    };
    for e in entries {
        *seen += 1;
        if *seen > 10_000 {
            return false;
        }
        let Ok(e) = e else {
            return false;
        };
        let name = rel.join(e.file_name());
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        let gone = if is_dir {
            emptied(&e.path(), &name, removals, seen)
        } else {
            removals.contains(name.as_path())
        };
        if !gone {
            return false;
        }
    }
    true
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

    /// A warm checkpoint names only what changed to git (no walk of the
    /// tree): a directory that became a file and a file that became a
    /// directory are recorded, and put back, as they were.
    #[test]
    fn a_warm_checkpoint_records_files_and_directories_trading_places() {
        let f = fixture();
        f.write("d/a.txt", "in a directory\n");
        f.write("f", "a file\n");
        f.write("other.txt", "unchanged\n");
        let before = f.store.snapshot().unwrap();
        std::fs::remove_dir_all(f.ws.path().join("d")).unwrap();
        f.write("d", "now a file\n");
        std::fs::remove_file(f.ws.path().join("f")).unwrap();
        f.write("f/b.txt", "now in a directory\n");
        let after = f.store.snapshot().unwrap();
        assert_ne!(before, after);
        let changed = f.store.changed(&before, &after).unwrap();
        assert_eq!(changed.len(), 4, "{changed:?}");
        f.store
            .rewind(&[TurnTrees {
                turn: 1,
                before,
                after: Some(after),
            }])
            .unwrap();
        assert_eq!(f.read("d/a.txt").as_deref(), Some("in a directory\n"));
        assert_eq!(f.read("f").as_deref(), Some("a file\n"));
        assert_eq!(f.read("other.txt").as_deref(), Some("unchanged\n"));
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
        let t2_after = f.store.snapshot().unwrap();
        let turns = [
            TurnTrees {
                turn: 1,
                before: t1.clone(),
                after: Some(t1_after.clone()),
            },
            TurnTrees {
                turn: 2,
                before: t2.clone(),
                after: None,
            },
        ];
        // Turn 2 never ended (Lathe was stopped): what it did is not
        // known, so a.txt, which it changed after turn 1, is refused.
        let err = f.store.rewind(&turns).unwrap_err();
        assert!(
            matches!(&err, CheckpointError::Conflict(p) if p == &["a.txt"]),
            "{err}"
        );
        assert_eq!(f.read("a.txt").as_deref(), Some("v2\n"));
        // Known, both turns go back.
        let turns = [
            TurnTrees {
                turn: 1,
                before: t1,
                after: Some(t1_after),
            },
            TurnTrees {
                turn: 2,
                before: t2,
                after: Some(t2_after),
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

    fn seg(turn: u64, before: &str, after: Option<&str>) -> TurnTrees {
        TurnTrees {
            turn,
            before: before.into(),
            after: after.map(str::to_string),
        }
    }

    /// A round Lathe was stopped in counts as changing nothing: what the
    /// person did afterwards is neither reverted nor deleted.
    #[test]
    fn a_round_cut_off_never_takes_the_persons_later_work_for_its_own() {
        let f = fixture();
        f.write("a.txt", "A\n");
        f.write("b.txt", "B\n");
        let before = f.store.snapshot().unwrap();
        f.write("a.txt", "A2 (Lathe, then killed)\n");
        f.write("b.txt", "B (the person)\n");
        f.write("mine.txt", "the person's\n");
        let done = f.store.rewind(&[seg(1, &before, None)]).unwrap();
        assert_eq!(done, Restored::default());
        assert_eq!(f.read("b.txt").as_deref(), Some("B (the person)\n"));
        assert_eq!(f.read("mine.txt").as_deref(), Some("the person's\n"));
    }

    /// Between two rounds of a turn the person edits a file: undoing the
    /// turn puts back what the rounds changed and leaves that file alone;
    /// if a later round changed it too, the undo refuses it.
    #[test]
    fn edits_between_rounds_are_the_persons() {
        let f = fixture();
        f.write("a.txt", "A\n");
        f.write("b.txt", "B\n");
        let r1 = f.store.snapshot().unwrap();
        f.write("a.txt", "A1\n");
        let r1_after = f.store.snapshot().unwrap();
        f.write("b.txt", "B (the person, between rounds)\n");
        f.write("notes.md", "the person's\n");
        let r2 = f.store.snapshot().unwrap();
        f.write("a.txt", "A2\n");
        let r2_after = f.store.snapshot().unwrap();
        let rounds = [seg(1, &r1, Some(&r1_after)), seg(1, &r2, Some(&r2_after))];
        f.store.rewind(&rounds).unwrap();
        assert_eq!(f.read("a.txt").as_deref(), Some("A\n"));
        assert_eq!(
            f.read("b.txt").as_deref(),
            Some("B (the person, between rounds)\n")
        );
        assert_eq!(f.read("notes.md").as_deref(), Some("the person's\n"));
        // A round that changed what the person edited before it: refused.
        let f = fixture();
        f.write("a.txt", "A\n");
        let r1 = f.store.snapshot().unwrap();
        f.write("a.txt", "A1\n");
        let r1_after = f.store.snapshot().unwrap();
        f.write("a.txt", "A1 + the person's line\n");
        let r2 = f.store.snapshot().unwrap();
        f.write("a.txt", "A2\n");
        let r2_after = f.store.snapshot().unwrap();
        let err = f
            .store
            .rewind(&[seg(1, &r1, Some(&r1_after)), seg(1, &r2, Some(&r2_after))])
            .unwrap_err();
        assert!(
            matches!(&err, CheckpointError::Conflict(p) if p == &["a.txt"]),
            "{err}"
        );
        assert_eq!(f.read("a.txt").as_deref(), Some("A2\n"));
    }

    /// A link the turn replaced with a directory comes back, and nothing
    /// is written at all when one path cannot be put back.
    #[test]
    fn type_changes_are_put_back_or_nothing_is() {
        let f = fixture();
        f.write("a.txt", "A\n");
        f.write("real/r.txt", "r\n");
        std::os::unix::fs::symlink("real", f.ws.path().join("d")).unwrap();
        let before = f.store.snapshot().unwrap();
        f.write("a.txt", "A2\n");
        std::fs::remove_file(f.ws.path().join("d")).unwrap();
        f.write("d/n.txt", "new\n");
        let after = f.store.snapshot().unwrap();
        f.store.rewind(&[seg(1, &before, Some(&after))]).unwrap();
        assert_eq!(f.read("a.txt").as_deref(), Some("A\n"));
        let link = std::fs::read_link(f.ws.path().join("d")).unwrap();
        assert_eq!(link, Path::new("real"));
        assert_eq!(f.read("real/r.txt").as_deref(), Some("r\n"));
        // A file whose place a directory of the person's takes now.
        let f = fixture();
        f.write("a.txt", "A\n");
        f.write("x", "x\n");
        let before = f.store.snapshot().unwrap();
        f.write("a.txt", "A2\n");
        std::fs::remove_file(f.ws.path().join("x")).unwrap();
        let after = f.store.snapshot().unwrap();
        f.write("x/kept.txt", "the person's\n");
        let err = f
            .store
            .rewind(&[seg(1, &before, Some(&after))])
            .unwrap_err();
        assert!(err.to_string().contains('x'), "{err}");
        assert_eq!(f.read("a.txt").as_deref(), Some("A2\n"), "all or nothing");
        assert_eq!(f.read("x/kept.txt").as_deref(), Some("the person's\n"));
    }

    /// Bytes come back as they were (no line-ending conversion), and a
    /// file keeps its permissions.
    #[test]
    fn bytes_and_permissions_come_back_as_they_were() {
        use std::os::unix::fs::PermissionsExt;
        let f = fixture();
        f.write(".gitattributes", "* text=auto\n");
        f.write("crlf.txt", "line1\r\nline2\r\n");
        f.write("secret.key", "k\n");
        let key = f.ws.path().join("secret.key");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        let before = f.store.snapshot().unwrap();
        f.write("crlf.txt", "changed\n");
        f.write("secret.key", "other\n");
        let after = f.store.snapshot().unwrap();
        f.store.rewind(&[seg(1, &before, Some(&after))]).unwrap();
        assert_eq!(
            std::fs::read(f.ws.path().join("crlf.txt")).unwrap(),
            b"line1\r\nline2\r\n"
        );
        let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    /// A nested repository's files are its own: skipped, said, and never
    /// in the way of the rest.
    #[test]
    fn a_nested_repository_is_skipped_not_in_the_way() {
        let f = fixture();
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .args(args)
                .current_dir(f.ws.path().join("sub"))
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@t")
                .output()
                .unwrap()
                .status
                .success();
            assert!(ok, "git {args:?}");
        };
        f.write("top.txt", "T\n");
        f.write("sub/s.txt", "S\n");
        git(&["init", "-q"]);
        git(&["add", "-A"]);
        git(&["commit", "-qm", "one"]);
        let before = f.store.snapshot().unwrap();
        f.write("top.txt", "T2\n");
        f.write("sub/s.txt", "S2\n");
        git(&["commit", "-qam", "two"]);
        let after = f.store.snapshot().unwrap();
        let done = f.store.rewind(&[seg(1, &before, Some(&after))]).unwrap();
        assert_eq!(f.read("top.txt").as_deref(), Some("T\n"));
        assert_eq!(done.skipped, vec!["sub"]);
        assert_eq!(f.read("sub/s.txt").as_deref(), Some("S2\n"));
    }

    /// A 6 GB sparse file took each checkpointed round 34 s: a file over
    /// the limit is never read, never stored, and a rewind leaves it
    /// alone (one that grew past the limit in the turn too), saying so.
    #[test]
    fn large_files_are_never_read_or_put_back() {
        let f = fixture();
        f.write("small.txt", "a\n");
        let huge = f.ws.path().join("huge.img");
        std::fs::File::create(&huge)
            .unwrap()
            .set_len(6 * 1024 * 1024 * 1024)
            .unwrap();
        let before = f.store.snapshot_noting().unwrap();
        assert_eq!(before.large, ["huge.img"]);
        // Nothing of it was stored: the shadow repository stays small.
        let stored: u64 = walk_size(&f.store.git_dir);
        assert!(stored < 4 * 1024 * 1024, "{stored} bytes stored");
        // A file that grows past the limit in the turn.
        f.write("grows.log", "short\n");
        let before = f.store.snapshot_noting().unwrap();
        f.write("small.txt", "b\n");
        std::fs::OpenOptions::new()
            .append(true)
            .open(f.ws.path().join("grows.log"))
            .unwrap()
            .set_len(LARGE_FILE + 1)
            .unwrap();
        std::fs::File::options()
            .write(true)
            .open(&huge)
            .unwrap()
            .set_len(7 * 1024 * 1024 * 1024)
            .unwrap();
        let after = f.store.snapshot_noting().unwrap();
        assert_eq!(after.large, ["grows.log", "huge.img"]);
        let done = f
            .store
            .rewind(&[seg(1, &before.tree, Some(&after.tree))])
            .unwrap();
        assert_eq!(f.read("small.txt").as_deref(), Some("a\n"));
        assert_eq!(done.skipped, ["grows.log", "huge.img"]);
        assert_eq!(
            std::fs::metadata(f.ws.path().join("grows.log"))
                .unwrap()
                .len(),
            LARGE_FILE + 1,
            "the grown file is the person's now: left alone"
        );
        assert_eq!(
            std::fs::metadata(&huge).unwrap().len(),
            7 * 1024 * 1024 * 1024
        );
    }

    /// git blocks for good on a FIFO where a `.gitignore` should be: the
    /// checkpoint gives up in time instead of holding the round.
    #[test]
    fn a_fifo_in_place_of_a_gitignore_stops_the_checkpoint_not_lathe() {
        let mut f = fixture();
        f.write("d/a.txt", "a\n");
        nix::unistd::mkfifo(
            &f.ws.path().join("d/.gitignore"),
            nix::sys::stat::Mode::S_IRWXU,
        )
        .unwrap();
        f.store.timeout = std::time::Duration::from_secs(1);
        let started = std::time::Instant::now();
        let e = f.store.snapshot().unwrap_err();
        assert!(matches!(e, CheckpointError::Timeout(1)), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
    }

    fn walk_size(dir: &Path) -> u64 {
        std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .map(|e| match e.file_type() {
                        Ok(t) if t.is_dir() => walk_size(&e.path()),
                        _ => e.metadata().map_or(0, |m| m.len()),
                    })
                    .sum()
            })
            .unwrap_or(0)
    }
}
