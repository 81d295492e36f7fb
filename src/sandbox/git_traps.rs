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

/// The most directory entries looked at after one command.
const MAX_ENTRIES: usize = 400_000;

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
            "the command left a git repository at {} that would run a program when git runs \
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
}

/// Looks for git directories a command running under `policy` since
/// `since` left armed, and disarms them. Only `workspace-write` lets a
/// command write anything such.
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
    let mut found = BTreeSet::new();
    out.incomplete = !walk(&policy.cwd, &policy.protected, &mut found);
    // Git looks for a repository in the directories above, too.
    for dir in policy.cwd.ancestors().skip(1) {
        let dot_git = dir.join(".git");
        if dot_git.symlink_metadata().is_ok() && within(&dot_git, &policy.writable) {
            found.insert(dot_git);
        }
    }
    for entry in found {
        if let Some(trap) = inspect(&entry, since, &policy.writable) {
            out.traps.push(trap);
        }
    }
    out
}

fn within(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|r| path.starts_with(r))
}

/// Collects every `.git` entry and every directory shaped like a git
/// directory (`HEAD`, `objects/`, `refs/`) under `root`, symbolic links
/// not followed, the protected paths (read-only to commands) skipped.
/// False when it stopped at [`MAX_ENTRIES`].
fn walk(root: &Path, skip: &[PathBuf], found: &mut BTreeSet<PathBuf>) -> bool {
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let (mut head, mut objects, mut refs) = (None, false, false);
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return false;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let path = entry.path();
            match name.to_str() {
                Some(".git") if !skip.contains(&path) => {
                    found.insert(path.clone());
                }
                Some("HEAD") if kind.is_file() => head = Some(path.clone()),
                Some("objects") => objects = kind.is_dir(),
                Some("refs") => refs = kind.is_dir(),
                _ => {}
            }
            if kind.is_dir() && !skip.contains(&path) {
                stack.push(path);
            }
        }
        if objects && refs && head.is_some_and(|h| is_head(&h)) {
            found.insert(dir);
        }
    }
    true
}

/// Whether a file reads as git's `HEAD`: a symbolic ref or an object id.
fn is_head(path: &Path) -> bool {
    let Some(text) = read_small(path) else {
        return false;
    };
    let text = text.trim_end();
    text.starts_with("ref: refs/")
        || (matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The git directory an entry stands for: itself, or where a `.git`
/// file or link points.
fn git_dir_of(entry: &Path) -> Option<PathBuf> {
    let meta = entry.symlink_metadata().ok()?;
    if meta.file_type().is_symlink() {
        return entry.canonicalize().ok().filter(|p| p.is_dir());
    }
    if meta.is_dir() {
        return Some(entry.to_path_buf());
    }
    let text = read_small(entry)?;
    let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let base = entry.parent()?;
    Some(base.join(target)).filter(|p| p.is_dir())
}

/// A small file's text (a git config is small; a huge one is suspect
/// anyway and reads as unsafe).
fn read_small(path: &Path) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(1 << 20).read_to_string(&mut text).ok()?;
    Some(text)
}

fn changed_since(path: &Path, since: SystemTime) -> bool {
    let Ok(meta) = path.symlink_metadata() else {
        return false;
    };
    // The change time: a command can set a file's modification time
    // back, not this.
    let secs = u64::try_from(meta.ctime()).unwrap_or(0);
    let nanos = u32::try_from(meta.ctime_nsec()).unwrap_or(0);
    UNIX_EPOCH + Duration::new(secs, nanos) >= since
}

/// Checks one `.git` entry (or bare git directory): if it, or what makes
/// git run programs in it, changed since `since` and could run one, it
/// is disarmed.
fn inspect(entry: &Path, since: SystemTime, writable: &[PathBuf]) -> Option<Trap> {
    let git_dir = git_dir_of(entry)?;
    let mut dirs = vec![git_dir.clone()];
    // A linked worktree's git directory shares the configuration of the
    // one `commondir` names.
    if let Some(common) = read_small(&git_dir.join("commondir")) {
        let common = git_dir.join(common.trim());
        if common.is_dir() {
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
            if path.symlink_metadata().is_err() {
                continue;
            }
            let found = match read_small(&path) {
                Some(text) => unsafe_keys(&text),
                None => vec![format!("{name} that is not a readable file")],
            };
            if !found.is_empty() {
                reasons.extend(found);
                arms.push(path);
            }
        }
        let hooks = dir.join("hooks");
        let hook_names: Vec<String> = match hooks.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => vec!["hooks linked elsewhere".into()],
            Ok(_) => std::fs::read_dir(&hooks)
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| !n.ends_with(".sample"))
                .map(|n| format!("hook {n}"))
                .collect(),
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
    let disarmed = disarm(&arms, writable);
    Some(Trap {
        git_dir,
        reasons,
        disarmed,
    })
}

/// Moves each of `arms` aside, next to where it was. Only inside the
/// writable roots: what a command could not write, it did not plant (a
/// link may point anywhere).
fn disarm(arms: &[PathBuf], writable: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut moved = Vec::new();
    for arm in arms {
        let parent = arm
            .parent()
            .and_then(|p| p.canonicalize().ok())
            .ok_or_else(|| format!("{} has no parent", arm.display()))?;
        if !within(&parent, writable) {
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
/// hold data only. What cannot be parsed counts as unsafe.
pub fn unsafe_keys(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut subsection: Option<String> = None;
    let mut lines = text.lines();
    while let Some(raw) = lines.next() {
        let mut line = raw.trim_start().to_string();
        // A value continued on the next line.
        while line.ends_with('\\') && !line.ends_with("\\\\") {
            line.pop();
            match lines.next() {
                Some(next) => line.push_str(next),
                None => break,
            }
        }
        let mut rest = line.as_str();
        if rest.starts_with('[') {
            let Some(end) = rest.find(']') else {
                out.push("an unreadable section header".into());
                continue;
            };
            let header = &rest[1..end];
            rest = rest[end + 1..].trim_start();
            match header.split_once(|c: char| c.is_whitespace()) {
                Some((name, sub)) => {
                    section = name.to_ascii_lowercase();
                    subsection = Some(sub.trim().trim_matches('"').to_string());
                }
                None => match header.split_once('.') {
                    Some((name, sub)) => {
                        section = name.to_ascii_lowercase();
                        subsection = Some(sub.to_ascii_lowercase());
                    }
                    None => {
                        section = header.to_ascii_lowercase();
                        subsection = None;
                    }
                },
            }
        }
        if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
            continue;
        }
        let (key, value) = match rest.split_once('=') {
            Some((k, v)) => (k.trim().to_ascii_lowercase(), v.trim()),
            None => (rest.trim().to_ascii_lowercase(), "true"),
        };
        let value = value.trim_matches('"');
        if !data_only(&section, subsection.as_deref(), &key, value) {
            let name = match &subsection {
                Some(sub) => format!("{section}.{sub}.{key}"),
                None => format!("{section}.{key}"),
            };
            out.push(name);
        }
    }
    out.dedup();
    out
}

/// Whether `section.subsection.key = value` only holds data.
fn data_only(section: &str, sub: Option<&str>, key: &str, value: &str) -> bool {
    let bool_value = matches!(
        value.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0" | ""
    );
    match (section, sub) {
        ("core", None) => match key {
            "fsmonitor" => bool_value,
            "repositoryformatversion"
            | "filemode"
            | "bare"
            | "logallrefupdates"
            | "ignorecase"
            | "precomposeunicode"
            | "symlinks"
            | "autocrlf"
            | "eol"
            | "safecrlf"
            | "quotepath"
            | "compression"
            | "loosecompression"
            | "bigfilethreshold"
            | "sharedrepository"
            | "abbrev"
            | "checkstat"
            | "trustctime"
            | "untrackedcache"
            | "splitindex"
            | "preloadindex"
            | "multipackindex"
            | "commitgraph"
            | "fsync"
            | "fsyncmethod"
            | "packedgitlimit"
            | "packedgitwindowsize"
            | "deltabasecachelimit"
            | "whitespace"
            | "notesref"
            | "warnambiguousrefs"
            | "protecthfs"
            | "protectntfs"
            | "sparsecheckout"
            | "sparsecheckoutcone"
            | "filesreflocktimeout"
            | "packedrefstimeout"
            | "checkroundtripencoding" => true,
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
        ("filter", Some("lfs")) => match key {
            "clean" | "smudge" | "process" => value.starts_with("git-lfs "),
            "required" => bool_value,
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                "an unreadable section header",
            ),
        ] {
            let found = unsafe_keys(text);
            assert!(found.iter().any(|k| k == key), "{text:?}: {found:?}");
        }
        assert!(unsafe_keys("[core]\n\tfsmonitor = true\n").is_empty());
    }
}
