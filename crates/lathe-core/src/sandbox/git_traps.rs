//! Git repositories a sandboxed command set up to run a program later.
//!
//! The workspace's own `.git` is read-only to commands, but a command may
//! create a repository (`git init sub`, `mkdir .git` where there was
//! none, a `.git` file pointing into the temp directory) or change a
//! nested one, and give it a `core.fsmonitor`, a pager, an alias, a
//! filter or a hook. Nothing runs then; it runs when the person (or
//! their editor, or their shell prompt) next runs git there, outside any
//! sandbox. No ruleset can forbid a name, so after each command Lathe
//! looks: every git directory under the workspace (and a `.git` in the
//! writable directories above it) that the command created or changed
//! has its configuration checked against the keys that only hold data,
//! and its hooks looked at. One that could run a program is disarmed:
//! its `config` and `hooks` are moved aside (`*.lathe-disarmed`), which
//! loses nothing, and the person and the model are told.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{Mode, Policy};

/// A git directory that would run a program, and what was done about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trap {
    /// The git directory.
    pub git_dir: PathBuf,
    /// What in it runs a program (`core.fsmonitor`, `hook pre-commit`).
    pub reasons: Vec<String>,
    /// What was moved aside, or why it could not be.
    pub disarmed: Result<Vec<PathBuf>, String>,
}

impl Trap {
    /// One sentence for the person and the model.
    pub fn describe(&self, workspace: &Path) -> String {
        let shown = |p: &Path| {
            p.strip_prefix(workspace)
                .map_or_else(|_| p.display().to_string(), |r| r.display().to_string())
        };
        let what = format!(
            "there is now a git repository at {} that would run a program when git runs \
             there ({})",
            shown(&self.git_dir),
            self.reasons.join(", ")
        );
        match &self.disarmed {
            Ok(moved) => format!(
                "{what}; Lathe disarmed it by moving aside {} (inspect, and move back only \
                 what you trust)",
                moved
                    .iter()
                    .map(|p| shown(p))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            Err(why) => format!("{what}; it could not be disarmed: {why}. Do not run git there"),
        }
    }
}

/// What a sweep found: the traps, and whether it could look everywhere.
#[derive(Debug, Default)]
pub struct Sweep {
    pub traps: Vec<Trap>,
    /// The workspace was too big to look through completely.
    pub incomplete: bool,
    /// Directories the command had made unreadable, readable again.
    pub repaired: Vec<PathBuf>,
    /// Directories that could not be looked into.
    pub unreadable: Vec<PathBuf>,
    /// Protected names the command created at the top of the workspace
    /// (`.lathe`, `.mcp.json`, `.envrc`): they did not exist, so nothing
    /// held them read-only.
    pub created: Vec<PathBuf>,
}

/// Looks for git directories a command running under `policy` since
/// `since` left armed, and disarms them. Only `workspace-write` lets a
/// command write anything such. Everything a command could write is
/// looked through: the workspace, the session's temporary directory (or
/// the system's, for its `.git` at the top) and the other writable
/// roots, and the directories above the workspace that are writable.
pub fn sweep(policy: &Policy, since: SystemTime) -> Sweep {
    let mut out = Sweep::default();
    if policy.mode != Mode::WorkspaceWrite {
        return out;
    }
    // Timestamps come from a coarse clock (a tick, at most 10 ms): a
    // change right after the start may carry a time a little before it.
    let since = since
        .checked_sub(Duration::from_millis(50))
        .unwrap_or(UNIX_EPOCH);
    let protected: Vec<PathBuf> = policy
        .protected
        .iter()
        .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
        .collect();
    let mut walk = Walk {
        writable: &policy.writable,
        protected: &protected,
        found: BTreeSet::new(),
        visited: BTreeSet::new(),
        seen: 0,
        repaired: Vec::new(),
        unreadable: Vec::new(),
    };
    let shared_tmp = std::env::temp_dir();
    let mut complete = walk.tree(&policy.cwd);
    for root in &policy.writable {
        // The system's temp directory and `/dev/shm` are the other
        // programs' too: only a `.git` at their top is looked for there
        // (a session's own temp directory is looked through whole).
        if *root == shared_tmp || root == Path::new("/dev/shm") {
            walk.entry(&root.join(".git"));
        } else {
            complete &= walk.tree(root);
        }
    }
    out.incomplete = !complete;
    for name in [".lathe", ".mcp.json", ".envrc"] {
        let path = policy.cwd.join(name);
        if path.symlink_metadata().is_ok() && !policy.protected.contains(&path) {
            out.created.push(path);
        }
    }
    // Git looks for a repository in the directories above, too.
    for dir in policy.cwd.ancestors().skip(1) {
        walk.entry(&dir.join(".git"));
    }
    out.repaired = std::mem::take(&mut walk.repaired);
    out.unreadable = std::mem::take(&mut walk.unreadable);
    let mut inspected = BTreeSet::new();
    for entry in std::mem::take(&mut walk.found) {
        let Some(git_dir) = git_dir_of(&entry) else {
            continue;
        };
        let real = git_dir.canonicalize().unwrap_or_else(|_| git_dir.clone());
        // A read-only repository (the workspace's own) cannot have been
        // armed by a command; one already looked at is done.
        if walk.is_protected(&real) || !inspected.insert(real.clone()) {
            continue;
        }
        if let Some(trap) = inspect(&entry, &real, since, &policy.writable, &protected) {
            out.traps.push(trap);
        }
    }
    out
}

/// After a file tool wrote `written` in `workspace`: if it lies in a git
/// directory (or one shaped so, or beside a `.git`) other than the
/// protected ones, that directory is checked as a command's would be,
/// changed or not (a few writes can assemble a bare repository).
pub fn check_written(workspace: &Path, written: &Path) -> Vec<Trap> {
    let protected: Vec<PathBuf> = super::protected_paths(workspace)
        .into_iter()
        .map(|p| p.canonicalize().unwrap_or(p))
        .collect();
    let writable = [workspace.to_path_buf()];
    let mut traps = Vec::new();
    let mut seen = BTreeSet::new();
    for dir in written.ancestors().skip(1) {
        if !dir.starts_with(workspace) {
            break;
        }
        let mut candidates = Vec::new();
        if dir.join(".git").symlink_metadata().is_ok() {
            candidates.push(dir.join(".git"));
        }
        // An object store and refs without a HEAD: the common directory
        // another git directory's `commondir` may name (a worktree's), whose
        // config git reads all the same.
        if is_git_shaped(dir) || dir.join("objects").is_dir() && dir.join("refs").is_dir() {
            candidates.push(dir.to_path_buf());
        }
        for entry in candidates {
            let Some(git_dir) = git_dir_of(&entry) else {
                continue;
            };
            let real = git_dir.canonicalize().unwrap_or(git_dir);
            if protected.iter().any(|p| real.starts_with(p)) || !seen.insert(real.clone()) {
                continue;
            }
            traps.extend(inspect(&entry, &real, UNIX_EPOCH, &writable, &protected));
        }
        if dir == workspace {
            break;
        }
    }
    traps
}

/// Whether git would take `dir` for a git directory.
fn is_git_shaped(dir: &Path) -> bool {
    let head = dir.join("HEAD");
    (dir.join("objects").is_dir() && dir.join("refs").is_dir() || dir.join("commondir").is_file())
        && head.symlink_metadata().is_ok_and(|m| !m.is_dir())
        && is_head(&head)
}

fn within(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|r| path.starts_with(r))
}

/// The most directory entries looked at after one command.
const MAX_ENTRIES: usize = 1_000_000;

struct Walk<'a> {
    writable: &'a [PathBuf],
    protected: &'a [PathBuf],
    /// `.git` entries and bare-looking git directories.
    found: BTreeSet<PathBuf>,
    /// Directories looked through, as they really are.
    visited: BTreeSet<PathBuf>,
    seen: usize,
    /// Directories whose read permission was given back to look inside.
    repaired: Vec<PathBuf>,
    /// Directories that could not be looked into at all.
    unreadable: Vec<PathBuf>,
}

impl Walk<'_> {
    fn is_protected(&self, real: &Path) -> bool {
        self.protected.iter().any(|p| real.starts_with(p))
    }

    /// A `.git` (of any kind) at `path`, if there is one a command could
    /// have made.
    fn entry(&mut self, path: &Path) {
        if path.symlink_metadata().is_ok()
            && path.parent().is_some_and(|p| within(p, self.writable))
        {
            self.found.insert(path.to_path_buf());
        }
    }

    /// Collects every `.git` entry and every directory shaped like a git
    /// directory (`HEAD`, `objects/`, `refs/`) under `root`. A link to a
    /// directory is followed when it leads into a writable root (git
    /// follows it when the person `cd`s through it); the protected paths
    /// are skipped. False when it stopped at [`MAX_ENTRIES`].
    fn tree(&mut self, root: &Path) -> bool {
        // Each directory with where it really is: a child of a real
        // directory is real unless it is a link, and links are resolved.
        let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let mut stack = vec![(root.to_path_buf(), real_root)];
        while let Some((dir, real)) = stack.pop() {
            if self.is_protected(&real) || !self.visited.insert(real.clone()) {
                continue;
            }
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    // Git needs only to pass through a directory; looking
                    // needs to read it. A command may have taken that away
                    // to hide what is inside: it is given back.
                    match readable_again(&dir).and_then(|()| std::fs::read_dir(&dir).ok()) {
                        Some(entries) => {
                            self.repaired.push(dir.clone());
                            entries
                        }
                        None => {
                            self.unreadable.push(dir.clone());
                            continue;
                        }
                    }
                }
                Err(_) => continue,
            };
            let (mut head, mut objects, mut refs, mut common) = (None, false, false, false);
            for entry in entries.flatten() {
                self.seen += 1;
                if self.seen > MAX_ENTRIES {
                    return false;
                }
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let path = entry.path();
                match entry.file_name().to_str() {
                    Some(".git") => {
                        self.found.insert(path.clone());
                    }
                    Some("HEAD") if !kind.is_dir() => head = Some(path.clone()),
                    Some("objects") => objects = true,
                    Some("refs") => refs = true,
                    Some("commondir") => common = true,
                    _ => {}
                }
                if kind.is_dir() {
                    let real_child = real.join(entry.file_name());
                    stack.push((path, real_child));
                } else if kind.is_symlink()
                    && let Ok(target) = path.canonicalize()
                    && target.is_dir()
                    && within(&target, self.writable)
                {
                    stack.push((target.clone(), target));
                }
            }
            // As git recognises a git directory: a valid HEAD, and the
            // object store and refs here or in the one `commondir` names.
            if ((objects && refs) || common) && head.is_some_and(|h| is_head(&h)) {
                self.found.insert(dir);
            }
        }
        true
    }
}

/// Adds the owner's read and search permission to a directory Lathe owns.
fn readable_again(dir: &Path) -> Option<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = dir.symlink_metadata().ok()?;
    if !meta.is_dir() || meta.uid() != nix::unistd::geteuid().as_raw() {
        return None;
    }
    let mode = meta.permissions().mode() | 0o500;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).ok()
}

/// A small regular file, read without blocking (a FIFO or a device in
/// its place is not read), at most 1 MiB of it.
struct Small {
    text: String,
    /// The file was larger and was cut.
    cut: bool,
}

const SMALL: u64 = 1 << 20;

fn read_small(path: &Path) -> Option<Small> {
    let (bytes, cut) = crate::fs::read_capped(path, SMALL).ok()?;
    Some(Small {
        text: String::from_utf8_lossy(&bytes).into_owned(),
        cut,
    })
}

/// Whether a file reads as git's `HEAD`: a symbolic ref or an object id
/// (a link `HEAD -> refs/heads/main`, as old git made, counts too).
fn is_head(path: &Path) -> bool {
    if let Ok(target) = std::fs::read_link(path) {
        return target.starts_with("refs/");
    }
    let Some(small) = read_small(path) else {
        return false;
    };
    // As git validates it: `ref:`, blanks, `refs/…`; or an object id at
    // the start, whatever follows.
    let text = small.text.as_str();
    if let Some(rest) = text.strip_prefix("ref:") {
        return rest.trim_start().starts_with("refs/");
    }
    text.len() >= 40 && text.as_bytes()[..40].iter().all(u8::is_ascii_hexdigit)
}

/// A file's text as git reads it: up to a NUL, without the line breaks
/// at its end.
fn git_text(small: &Small) -> &str {
    let text = small.text.split('\0').next().unwrap_or("");
    text.trim_end_matches(['\n', '\r'])
}

/// The git directory an entry stands for: itself, or where a `.git`
/// file or link points (read as git reads it: `gitdir: ` and the path,
/// only the line break taken off the end).
fn git_dir_of(entry: &Path) -> Option<PathBuf> {
    let meta = entry.metadata().ok()?;
    if meta.is_dir() {
        return Some(entry.to_path_buf());
    }
    let small = read_small(entry)?;
    let target = git_text(&small).strip_prefix("gitdir: ")?;
    let base = entry.parent()?;
    Some(base.join(target)).filter(|p| p.is_dir())
}

/// Whether `path` (or, for a link, where it leads) changed since `since`.
/// The change time: a command can set a file's modification time back,
/// not this.
fn changed_since(path: &Path, since: SystemTime) -> bool {
    let ctime = |m: std::fs::Metadata| {
        let secs = u64::try_from(m.ctime()).unwrap_or(0);
        let nanos = u32::try_from(m.ctime_nsec()).unwrap_or(0);
        UNIX_EPOCH + Duration::new(secs, nanos.min(999_999_999))
    };
    path.symlink_metadata().is_ok_and(|m| ctime(m) >= since)
        || path.metadata().is_ok_and(|m| ctime(m) >= since)
}

/// Checks one `.git` entry (or bare git directory) and the directory it
/// stands for (`real`): if it, or what makes git run programs in it,
/// changed since `since` and could run one, it is disarmed.
fn inspect(
    entry: &Path,
    real: &Path,
    since: SystemTime,
    writable: &[PathBuf],
    protected: &[PathBuf],
) -> Option<Trap> {
    let mut dirs = vec![real.to_path_buf()];
    // A linked worktree's git directory shares the configuration of the
    // one `commondir` names.
    if let Some(common) = read_small(&real.join("commondir")) {
        let common = real.join(git_text(&common));
        if let Ok(common) = common.canonicalize()
            && common.is_dir()
            && !protected.iter().any(|p| common.starts_with(p))
        {
            dirs.push(common);
        }
    }
    let watched = |d: &Path| {
        let mut paths = vec![
            d.to_path_buf(),
            d.join("config"),
            d.join("config.worktree"),
            d.join("commondir"),
            d.join("hooks"),
        ];
        if let Ok(hooks) = std::fs::read_dir(d.join("hooks")) {
            paths.extend(hooks.flatten().map(|e| e.path()));
        }
        paths
    };
    let changed = changed_since(entry, since)
        || dirs
            .iter()
            .flat_map(|d| watched(d))
            .any(|p| changed_since(&p, since));
    if !changed {
        return None;
    }
    let mut reasons = Vec::new();
    let mut arms = Vec::new();
    for dir in &dirs {
        for name in ["config", "config.worktree"] {
            let path = dir.join(name);
            let Ok(meta) = path.symlink_metadata() else {
                continue;
            };
            let found = if meta.file_type().is_symlink() {
                vec![format!("{name} linked elsewhere")]
            } else {
                match read_small(&path) {
                    Some(small) if small.cut => vec![format!("{name} over 1 MiB")],
                    Some(small) => unsafe_keys(&small.text),
                    None => vec![format!("{name} that is not a regular file")],
                }
            };
            if !found.is_empty() {
                reasons.extend(found);
                arms.push(path);
            }
        }
        let hooks = dir.join("hooks");
        let hook_names: Vec<String> = match hooks.symlink_metadata() {
            Ok(m) if !m.is_dir() => vec!["hooks that are not a directory".into()],
            Ok(_) => match std::fs::read_dir(&hooks) {
                Ok(list) => list
                    .flatten()
                    .filter_map(|e| e.file_name().to_str().map(str::to_string))
                    .filter(|n| !n.ends_with(".sample"))
                    .map(|n| format!("hook {n}"))
                    .collect(),
                Err(_) => vec!["hooks that cannot be listed".into()],
            },
            Err(_) => Vec::new(),
        };
        if !hook_names.is_empty() {
            reasons.extend(hook_names);
            arms.push(hooks);
        }
    }
    if reasons.is_empty() {
        return None;
    }
    reasons.dedup();
    let disarmed = disarm(&arms, writable, protected);
    Some(Trap {
        git_dir: entry.to_path_buf(),
        reasons,
        disarmed,
    })
}

/// Moves each of `arms` aside, next to where it was. Only inside the
/// writable roots and outside the protected paths, as they really are:
/// what a command could not write, it did not plant (a link may point
/// anywhere), and Lathe may write where the command could not.
fn disarm(
    arms: &[PathBuf],
    writable: &[PathBuf],
    protected: &[PathBuf],
) -> Result<Vec<PathBuf>, String> {
    let mut moved = Vec::new();
    for arm in arms {
        let parent = arm
            .parent()
            .and_then(|p| p.canonicalize().ok())
            .ok_or_else(|| format!("{} has no parent", arm.display()))?;
        if !within(&parent, writable) || protected.iter().any(|p| parent.starts_with(p)) {
            return Err(format!(
                "{} is outside the directories commands may write",
                parent.display()
            ));
        }
        let name = arm
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut to = parent.join(format!("{name}.lathe-disarmed"));
        let mut n = 2;
        while to.symlink_metadata().is_ok() {
            to = parent.join(format!("{name}.lathe-disarmed-{n}"));
            n += 1;
        }
        std::fs::rename(parent.join(&name), &to)
            .map_err(|e| format!("cannot move {}: {e}", arm.display()))?;
        moved.push(to);
    }
    Ok(moved)
}

/// The keys of a git configuration that could make git run a program,
/// or read configuration from elsewhere: everything but the keys known to
/// hold data only. What cannot be read as git reads it counts as unsafe.
pub fn unsafe_keys(text: &str) -> Vec<String> {
    // Git stops reading a name at a NUL; no reader can agree with it on
    // what follows.
    if text.contains('\0') {
        return vec!["a configuration with a NUL byte".to_string()];
    }
    let entries = match super::git_config::parse(text) {
        Ok(e) => e,
        Err(e) => return vec![format!("a configuration git may read otherwise ({e})")],
    };
    let mut out: Vec<String> = entries
        .iter()
        .filter(|e| {
            !data_only(
                &e.section,
                e.subsection.as_deref(),
                &e.key,
                e.value.as_deref().unwrap_or("true"),
            )
        })
        .map(super::git_config::Entry::name)
        .collect();
    out.dedup();
    out
}

/// What in the configuration of the repository `dir` is in (its own
/// `.git`, or an enclosing one) git's reading commands would run: an
/// fsmonitor, an external diff or textconv, a clean or smudge filter (run
/// by `status`), a pager, a signature program, and includes (which may
/// bring any of those). Empty when none, or when there is no repository.
pub fn reader_traps(dir: &Path) -> Vec<String> {
    let Some(git_dir) = dir
        .ancestors()
        .map(|d| d.join(".git"))
        .find(|g| g.symlink_metadata().is_ok())
        .and_then(|g| git_dir_of(&g))
    else {
        return Vec::new();
    };
    let Some(small) = read_small(&git_dir.join("config")) else {
        return Vec::new();
    };
    if small.cut || small.text.contains('\0') {
        return vec!["a configuration too large or odd to read".into()];
    }
    let entries = match super::git_config::parse(&small.text) {
        Ok(e) => e,
        Err(e) => return vec![format!("a configuration git may read otherwise ({e})")],
    };
    let off = |v: Option<&str>| {
        v.is_some_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "" | "false" | "no" | "off" | "0"
            )
        })
    };
    entries
        .iter()
        .filter(|e| {
            let sub = e.subsection.is_some();
            match (e.section.as_str(), e.key.as_str()) {
                ("core", "fsmonitor") => !off(e.value.as_deref()),
                ("core", "pager") | ("pager", _) => true,
                ("diff", "external") => true,
                ("diff", "textconv" | "command") => sub,
                ("filter", "clean" | "smudge" | "process") => sub,
                ("gpg", "program") => true,
                ("include" | "includeif", "path") => true,
                _ => false,
            }
        })
        .map(super::git_config::Entry::name)
        .collect()
}

/// The workspace files the workspace's own repository runs, or reads
/// configuration from, when the person uses git: its `core.hooksPath`
/// (husky, lefthook; with husky's `_` directory, the scripts beside it),
/// files its config includes, and, while it has hooks, the hook
/// managers' configuration (`.pre-commit-config.yaml`, `lefthook.yml`, …).
/// They are protected as `.git` is.
pub fn repo_code_paths(workspace: &Path) -> Vec<PathBuf> {
    // The git directory, also where a `.git` file names it
    // (`git init --separate-git-dir`): inside the workspace, it is a
    // file tool's to change unless protected here.
    let dot_git = workspace.join(".git");
    let git_dir = git_dir_of(&dot_git).unwrap_or_else(|| dot_git.clone());
    let mut out = Vec::new();
    if git_dir != dot_git
        && let Ok(real) = git_dir.canonicalize()
        && real.starts_with(workspace)
        && real != workspace
    {
        out.push(real);
    }
    let Some(text) = read_small(&git_dir.join("config")).map(|s| s.text) else {
        return out;
    };
    let entries = super::git_config::parse(&text).unwrap_or_default();
    let inside = |p: PathBuf| {
        let p = p.canonicalize().unwrap_or(p);
        (p.starts_with(workspace) && p != workspace && !p.starts_with(&git_dir)).then_some(p)
    };
    let mut hooks_path = false;
    for e in &entries {
        let Some(value) = e.value.as_deref() else {
            continue;
        };
        if e.section == "core" && e.subsection.is_none() && e.key == "hookspath" {
            hooks_path = true;
            if let Some(p) = inside(workspace.join(value.trim())) {
                if p.file_name().is_some_and(|n| n == "_")
                    && let Some(parent) = p.parent().filter(|d| *d != workspace)
                {
                    out.push(parent.to_path_buf());
                }
                out.push(p);
            }
        }
        if matches!(e.section.as_str(), "include" | "includeif") && e.key == "path" {
            out.extend(inside(git_dir.join(value.trim())));
        }
    }
    let has_hooks = hooks_path
        || std::fs::read_dir(git_dir.join("hooks")).is_ok_and(|list| {
            list.flatten()
                .any(|e| !e.file_name().to_string_lossy().ends_with(".sample"))
        });
    if has_hooks {
        // Lefthook reads any of these (its docs' list of config files).
        let lefthook = ["lefthook", ".lefthook", ".config/lefthook"]
            .into_iter()
            .flat_map(|base| [base.to_string(), format!("{base}-local")])
            .flat_map(|base| {
                ["yml", "yaml", "toml", "json", "jsonc"].map(|ext| format!("{base}.{ext}"))
            });
        let others = [
            ".pre-commit-config.yaml",
            ".pre-commit-config.yml",
            ".overcommit.yml",
            ".husky",
            ".githooks",
        ]
        .map(str::to_string);
        for name in others.into_iter().chain(lefthook) {
            // Whether or not it is there yet: a file written (or moved)
            // there later runs at the next commit all the same.
            out.push(workspace.join(name));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `core` settings that are data: none names a program git runs.
const CORE_DATA_KEYS: &[&str] = &[
    "repositoryformatversion",
    "filemode",
    "bare",
    "logallrefupdates",
    "ignorecase",
    "precomposeunicode",
    "symlinks",
    "autocrlf",
    "eol",
    "safecrlf",
    "quotepath",
    "compression",
    "loosecompression",
    "bigfilethreshold",
    "sharedrepository",
    "abbrev",
    "checkstat",
    "trustctime",
    "untrackedcache",
    "splitindex",
    "preloadindex",
    "multipackindex",
    "commitgraph",
    "fsync",
    "fsyncmethod",
    "packedgitlimit",
    "packedgitwindowsize",
    "deltabasecachelimit",
    "whitespace",
    "notesref",
    "warnambiguousrefs",
    "protecthfs",
    "protectntfs",
    "sparsecheckout",
    "sparsecheckoutcone",
    "filesreflocktimeout",
    "packedrefstimeout",
    "checkroundtripencoding",
];

/// Whether `section.subsection.key = value` only holds data.
fn data_only(section: &str, sub: Option<&str>, key: &str, value: &str) -> bool {
    let bool_value = matches!(
        value.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0" | ""
    );
    match (section, sub) {
        ("core", None) => match key {
            "fsmonitor" => bool_value,
            k if CORE_DATA_KEYS.contains(&k) => true,
            _ => false,
        },
        ("extensions", None) => true,
        ("remote", Some(_)) => matches!(
            key,
            "url"
                | "pushurl"
                | "fetch"
                | "push"
                | "mirror"
                | "tagopt"
                | "prune"
                | "prunetags"
                | "promisor"
                | "partialclonefilter"
                | "skipdefaultupdate"
                | "skipfetchall"
        ),
        ("branch", Some(_)) => matches!(
            key,
            "remote" | "merge" | "rebase" | "pushremote" | "description"
        ),
        ("submodule", Some(_)) => match key {
            "update" => !value.trim_start().starts_with('!'),
            "url"
            | "path"
            | "active"
            | "branch"
            | "fetchrecursesubmodules"
            | "ignore"
            | "shallow" => true,
            _ => false,
        },
        ("user", None) => matches!(key, "name" | "email" | "signingkey" | "useconfigonly"),
        ("init", None) => key == "defaultbranch",
        ("pull", None) => matches!(key, "rebase" | "ff" | "twohead" | "octopus"),
        ("push", None) => matches!(
            key,
            "default" | "autosetupremote" | "followtags" | "recursesubmodules"
        ),
        ("fetch", None) => matches!(
            key,
            "prune" | "prunetags" | "recursesubmodules" | "parallel" | "writecommitgraph"
        ),
        ("merge", None) => matches!(
            key,
            "ff" | "conflictstyle" | "log" | "renames" | "stat" | "autostash"
        ),
        ("rebase", None) => matches!(
            key,
            "autosquash" | "autostash" | "updaterefs" | "stat" | "abbreviatecommands"
        ),
        ("diff", None) => matches!(
            key,
            "renames"
                | "algorithm"
                | "mnemonicprefix"
                | "noprefix"
                | "colormoved"
                | "indentheuristic"
                | "context"
                | "interhunkcontext"
                | "submodule"
                | "ignoresubmodules"
                | "statgraphwidth"
                | "relative"
        ),
        ("status", None) => matches!(
            key,
            "showuntrackedfiles"
                | "short"
                | "branch"
                | "submodulesummary"
                | "relativepaths"
                | "aheadbehind"
                | "renames"
                | "showstash"
        ),
        ("gc", None)
        | ("pack", None)
        | ("index", None)
        | ("color", _)
        | ("advice", None)
        | ("rerere", None)
        | ("feature", None)
        | ("maintenance", _)
        | ("column", None) => true,
        ("commit", None) => matches!(key, "gpgsign" | "verbose" | "status" | "cleanup"),
        ("tag", None) => matches!(key, "gpgsign" | "sort"),
        ("log", None) => matches!(
            key,
            "date" | "decorate" | "abbrevcommit" | "follow" | "showroot" | "showsignature"
        ),
        ("lfs", None) => matches!(key, "repositoryformatversion" | "url" | "locksverify"),
        // Exactly what `git lfs install` writes.
        ("filter", Some("lfs")) => match key {
            "clean" => value == "git-lfs clean -- %f",
            "smudge" => value == "git-lfs smudge -- %f",
            "process" => value == "git-lfs filter-process",
            "required" => bool_value,
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What file tools must not change freely: a git directory a `.git`
    /// file names inside the workspace, and the hook managers' configs
    /// whether they exist yet or not.
    #[test]
    fn a_separate_git_dir_and_hook_configs_to_come_are_protected() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".repo/hooks")).unwrap();
        std::fs::write(root.join(".repo/config"), "[core]\n\tbare = false\n").unwrap();
        std::fs::write(root.join(".repo/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
        std::fs::write(root.join(".git"), "gitdir: .repo\n").unwrap();
        let paths = repo_code_paths(&root);
        assert!(paths.contains(&root.join(".repo")), "{paths:?}");
        for name in [
            ".pre-commit-config.yaml",
            ".lefthook-local.yml",
            "lefthook-local.toml",
            "lefthook.json",
            ".config/lefthook.yml",
        ] {
            assert!(paths.contains(&root.join(name)), "{name}: {paths:?}");
        }
    }

    #[test]
    fn a_fresh_repository_is_data_only() {
        let init = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\
                    \tlogallrefupdates = true\n[remote \"origin\"]\n\turl = https://x/y.git\n\
                    \tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\
                    \tremote = origin\n\tmerge = refs/heads/main\n[user]\n\tname = A\n\
                    [filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n\trequired = true\n";
        assert_eq!(unsafe_keys(init), Vec::<String>::new());
    }

    #[test]
    fn keys_that_run_programs_are_found_however_written() {
        for (text, key) in [
            ("[core]\n\tfsmonitor = ./evil.sh\n", "core.fsmonitor"),
            ("[CORE]\n  FsMonitor = \"evil\"\n", "core.fsmonitor"),
            ("[core] pager = evil\n", "core.pager"),
            ("[core]\n\thooksPath = /tmp/h\n", "core.hookspath"),
            ("[core]\n\tsshCommand = evil\n", "core.sshcommand"),
            ("[alias]\n\tst = !evil\n", "alias.st"),
            ("[diff \"x\"]\n\ttextconv = evil\n", "diff.x.textconv"),
            ("[filter \"x\"]\n\tsmudge = evil\n", "filter.x.smudge"),
            ("[filter \"lfs\"]\n\tsmudge = evil\n", "filter.lfs.smudge"),
            ("[include]\n\tpath = /tmp/c\n", "include.path"),
            (
                "[includeIf \"gitdir:/\"]\n\tpath = /tmp/c\n",
                "includeif.gitdir:/.path",
            ),
            (
                "[submodule \"s\"]\n\tupdate = !evil\n",
                "submodule.s.update",
            ),
            (
                "[remote \"o\"]\n\tuploadpack = evil\n",
                "remote.o.uploadpack",
            ),
            ("[core.x]\n\tfoo = 1\n", "core.x.foo"),
            ("[core]\n\teditor = \\\nevil\n", "core.editor"),
            (
                "[core\n\tfsmonitor = evil\n",
                "a configuration git may read otherwise (line 2: a bad section header)",
            ),
        ] {
            let found = unsafe_keys(text);
            assert!(found.iter().any(|k| k == key), "{text:?}: {found:?}");
        }
        assert!(unsafe_keys("[core]\n\tfsmonitor = true\n").is_empty());
    }
}
