//! The `before_tool_call` guardrail stage, on a call's typed operations:
//! the denylist (per simple command of a shell line), the user's and the
//! workspace's deny rules, and the shell timeout cap. Workspace
//! containment of file tools happens when a tool describes its operations
//! (a path that escapes is refused there). Before-hooks run after this
//! stage, in `agent::dispatch`, and may also modify or deny.
//!
//! A verdict is `Allow`, `Modify` (the arguments were rewritten and the
//! model is told why) or `Deny` (the call never runs). Guardrail denials
//! hold in every approval mode, and no grant or allow rule lifts them.

use std::sync::Arc;

use serde_json::Value;

use super::denylist::{self, Denial};
use super::rules::{RuleKind, RuleOrigin, Rules, Subject};
use super::workspace::Workspace;
use crate::protocol::ToolKind;
use crate::protocol::operation::Operation;

/// Why the guardrail refused a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuardError {
    #[error("refused in every approval mode: {0}")]
    Denylisted(Denial),
    #[error("denied by {} rule `{rule}` ({what})", origin_word(*origin))]
    Rule {
        rule: String,
        origin: RuleOrigin,
        what: String,
    },
    #[error("denied by the before hook `{hook}`: {reason}")]
    Hook { hook: String, reason: String },
}

fn origin_word(origin: RuleOrigin) -> &'static str {
    match origin {
        RuleOrigin::User => "your",
        RuleOrigin::Workspace => "the workspace's",
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Allow,
    Modify { args: Value, note: String },
    Deny(GuardError),
}

/// The rules, built once per agent.
#[derive(Debug, Clone)]
pub struct Guardrails {
    workspace: Arc<Workspace>,
    rules: Arc<Rules>,
    shell_max_timeout_secs: u64,
    reads: ReadDenials,
}

/// Files the read deny rules cover, followed as files: a rule on
/// `private/**` also covers the file moved or linked out of it (the same
/// device and inode, as seen at the start and after every round of calls
/// that may change files), and a directory that holds a covered file.
#[derive(Debug, Clone)]
pub struct ReadDenials {
    workspace: Arc<Workspace>,
    rules: Arc<Rules>,
    /// Device and inode of every covered file seen, with its path then.
    inodes: Arc<std::sync::RwLock<std::collections::HashMap<(u64, u64), String>>>,
    /// Where the covered files are now, as the last look found them: the
    /// paths a sandboxed command sees empty (see [`Self::places`]).
    places: Arc<std::sync::RwLock<Vec<std::path::PathBuf>>>,
    /// Whether the last look saw every entry of the workspace (under
    /// [`DENIED_WALK`]); if not, what it missed may be covered.
    complete: Arc<std::sync::atomic::AtomicBool>,
    /// The covered files the last look found, relative to the workspace.
    covered: Arc<std::sync::RwLock<Vec<String>>>,
}

/// Commands that read no file's content, only names and sizes: a
/// directory they are given is not searched for covered files.
const NAMES_ONLY: &[&str] = &[
    "ls", "tree", "du", "stat", "file", "realpath", "readlink", "cd", "pwd", "test", "[", "[[",
    "dirname", "basename", "mkdir", "rmdir", "touch",
];

/// The most entries a look for covered files reads (beyond, a directory
/// counts as holding one).
const DENIED_WALK: usize = 200_000;

impl ReadDenials {
    fn new(workspace: Arc<Workspace>, rules: Arc<Rules>) -> Self {
        let me = Self {
            workspace,
            rules,
            inodes: Arc::default(),
            places: Arc::default(),
            complete: Arc::new(std::sync::atomic::AtomicBool::new(true)),
            covered: Arc::default(),
        };
        me.refresh();
        me
    }

    /// The read rules of `rules` followed in `workspace`, if any names
    /// paths (for what runs besides the model's commands: a workspace's
    /// MCP servers).
    pub fn of(workspace: Arc<Workspace>, rules: Arc<Rules>) -> Option<Self> {
        let reads = Self::new(workspace, rules);
        reads.active().then_some(reads)
    }

    /// The workspace the rules are read in.
    pub(crate) fn workspace_root(&self) -> &std::path::Path {
        self.workspace.root()
    }

    /// Whether any read deny rule names paths (else nothing is tracked).
    pub fn active(&self) -> bool {
        self.rules.deny.iter().any(|r| r.reads_by_pattern())
    }

    /// The rule that covers reading `rel` (relative to the workspace) by
    /// its path.
    pub(crate) fn rule_for(&self, rel: &str) -> Option<&super::rules::Rule> {
        let op = crate::protocol::operation::FileOp {
            path: rel.to_string(),
            access: crate::protocol::operation::Access::Read,
            outside: false,
            named: false,
            deletes: false,
        };
        self.rules
            .first(RuleKind::Deny, "read_file", Subject::File(&op))
    }

    /// Notes the covered files as they are now (at the start, after
    /// every round of calls that may change files, and before a command
    /// runs): by their path, or as a file seen covered before.
    pub fn refresh(&self) {
        if !self.active() {
            return;
        }
        use std::os::unix::fs::MetadataExt;
        let root = self.workspace.root();
        let known = self.inodes.read().map(|i| i.clone()).unwrap_or_default();
        let known_inos: std::collections::HashSet<u64> =
            known.keys().map(|(_, ino)| *ino).collect();
        let mut found = Vec::new();
        let mut tally = Tally::default();
        let walk = ignore::WalkBuilder::new(root)
            .standard_filters(false)
            .hidden(false)
            .follow_links(false)
            .filter_entry(|e| e.file_name() != ".git")
            .build();
        let mut complete = true;
        for (n, entry) in walk.flatten().enumerate() {
            if n >= DENIED_WALK {
                complete = false;
                break;
            }
            if entry.depth() == 0 {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(root) else {
                continue;
            };
            let rel = rel.to_string_lossy().into_owned();
            let kind = entry.file_type();
            let file = kind.is_some_and(|t| t.is_file());
            // The device and inode asked of the file system only for a
            // file the rules name, or whose inode (as the directory lists
            // it) is one seen covered: a stat per file would cost the
            // most of the walk.
            let by_rule = file && self.rule_for(&rel).is_some();
            let seen = file && entry.ino().is_some_and(|ino| known_inos.contains(&ino));
            let id = (by_rule || seen)
                .then(|| entry.metadata().ok().map(|m| (m.dev(), m.ino())))
                .flatten();
            let covered = by_rule || id.is_some_and(|i| known.contains_key(&i));
            if covered && let Some(id) = id {
                found.push((id, rel.clone()));
            }
            // A link the rules name, or a link to a directory they cover
            // (`vault -> /elsewhere` under `vault/**`): covered where it
            // leads.
            let link = kind.is_some_and(|t| t.is_symlink())
                && (self.rule_for(&rel).is_some() || self.rule_for(&format!("{rel}/x")).is_some());
            if !kind.is_some_and(|t| t.is_dir()) {
                tally.add(entry.path(), root, covered || link);
            }
        }
        self.complete
            .store(complete, std::sync::atomic::Ordering::Relaxed);
        let places = tally.places(root);
        if let Ok(mut covered) = self.covered.write() {
            *covered = found.iter().map(|(_, rel)| rel.clone()).collect();
        }
        if let Ok(mut inodes) = self.inodes.write() {
            inodes.extend(found);
        }
        if let Ok(mut p) = self.places.write() {
            *p = places;
        }
    }

    /// What a sandboxed process is not to see, looked for now: the
    /// covered files (see [`Self::places`]), and unless it runs git alone
    /// (`git_only`), git's object store, which holds every version of
    /// every file and which only git, whose commands the rules judge by
    /// what they print, may reach (not `python3 -c "zlib…"`). An error
    /// when the look could not see the whole workspace.
    pub async fn sandbox_covers(&self, git_only: bool) -> Result<Vec<std::path::PathBuf>, String> {
        let reads = self.clone();
        tokio::task::spawn_blocking(move || {
            reads.refresh();
            if let Some(why) = reads.incomplete() {
                return Err(why);
            }
            let mut places = reads.places();
            places.extend(reads.absolute_places());
            if !git_only {
                places.extend(object_stores(reads.workspace.root()));
            }
            // A link covered is covered where it leads too (Landlock
            // judges a path as resolved), never a directory that holds the
            // workspace.
            let root = reads.workspace.root();
            let resolved: Vec<std::path::PathBuf> = places
                .iter()
                .filter(|p| p.is_symlink())
                .filter_map(|p| p.canonicalize().ok())
                .filter(|p| !root.starts_with(p))
                .collect();
            places.extend(resolved);
            Ok(places)
        })
        .await
        .map_err(|e| e.to_string())?
    }

    /// What the rules that name absolute paths cover (`/srv/keys/**`,
    /// `~/notes/plan.md`): the file, or the directory whose whole tree
    /// the rule names. A pattern in the middle (`/etc/*.key`) is not
    /// followed into the sandbox; the analysis of commands still holds
    /// it.
    fn absolute_places(&self) -> Vec<std::path::PathBuf> {
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        self.rules
            .deny
            .iter()
            .filter(|r| r.reads_by_pattern())
            .filter_map(|r| {
                let inner = r.text.split_once('(')?.1.strip_suffix(')')?;
                let path = match inner.strip_prefix("~/") {
                    Some(rest) => home.as_ref()?.join(rest),
                    None if inner.starts_with('/') => std::path::PathBuf::from(inner),
                    None => return None,
                };
                let text = path.to_string_lossy().into_owned();
                let literal = |t: &str| !t.contains(['*', '?', '[', '{']);
                if literal(&text) {
                    return Some(path);
                }
                let dir = text.strip_suffix("/**")?;
                literal(dir).then(|| std::path::PathBuf::from(dir))
            })
            .filter(|p| p.symlink_metadata().is_ok() && !self.workspace.root().starts_with(p))
            .collect()
    }

    /// What the sandbox's warden judges a command's opens by: the patterns
    /// of the read rules that name workspace paths, relative to it.
    pub fn sandbox_watch(&self) -> Option<crate::sandbox::ReadWatch> {
        let globs: Vec<String> = self
            .rules
            .deny
            .iter()
            .filter(|r| r.reads_by_pattern())
            .filter_map(|r| {
                let inner = r.text.split_once('(')?.1.strip_suffix(')')?;
                let inner = inner.strip_prefix("./").unwrap_or(inner);
                (!inner.starts_with('/') && !inner.starts_with("~/")).then(|| inner.to_string())
            })
            .collect();
        (!globs.is_empty()).then(|| crate::sandbox::ReadWatch {
            root: self.workspace.root().to_path_buf(),
            globs,
        })
    }

    /// The covered files the last [`Self::refresh`] found, absolute.
    pub fn covered_files(&self) -> Vec<std::path::PathBuf> {
        let root = self.workspace.root();
        self.covered
            .read()
            .map(|c| c.iter().map(|rel| root.join(rel)).collect())
            .unwrap_or_default()
    }

    /// Whether the last look saw the whole workspace: if not, a command
    /// may not run (what it missed may be covered), and this says why.
    pub fn incomplete(&self) -> Option<String> {
        (self.active() && !self.complete.load(std::sync::atomic::Ordering::Relaxed)).then(|| {
            format!(
                "the workspace holds more than {DENIED_WALK} files and directories, too many \
                 to find every file your read rules cover before a command runs; with read \
                 rules in force no command runs here (the file tools still work)"
            )
        })
    }

    /// The paths (absolute) a sandboxed command is to find empty, as the
    /// last [`Self::refresh`] found them: each covered file, or the
    /// topmost directory that holds covered files only. What a read rule
    /// covers stays covered for every program, not only for the ones the
    /// analysis of a command line understands (`python3 -c "open(…)"`).
    pub fn places(&self) -> Vec<std::path::PathBuf> {
        if !self.active() {
            return Vec::new();
        }
        self.places.read().map(|p| p.clone()).unwrap_or_default()
    }

    /// Why reading `abs` (a file or directory of the workspace) is
    /// denied: it is a covered file under another name, or a directory
    /// that holds one; `None` when it may be read.
    pub fn denied(&self, abs: &std::path::Path) -> Option<String> {
        if !self.active() {
            return None;
        }
        use std::os::unix::fs::MetadataExt;
        // A pattern (`cat */plan.md`): every file it can name.
        let text = abs.to_string_lossy();
        if text.contains(['*', '?', '[']) {
            return self.denied_pattern(&text);
        }
        // Followed: a link is read as what it leads to.
        let meta = std::fs::metadata(abs).ok()?;
        if meta.is_file() {
            let inodes = self.inodes.read().ok()?;
            return inodes
                .get(&(meta.dev(), meta.ino()))
                .map(|was| format!("it is {was} under another name"));
        }
        if !meta.is_dir() {
            return None;
        }
        let root = self.workspace.root();
        let inodes = self.inodes.read().ok()?;
        let walk = ignore::WalkBuilder::new(abs)
            .standard_filters(false)
            .hidden(false)
            .follow_links(false)
            .filter_entry(|e| e.file_name() != ".git")
            .build();
        for (n, entry) in walk.flatten().enumerate() {
            if n >= DENIED_WALK {
                return Some(format!(
                    "{} holds too many files to check against your read rules",
                    self.workspace.display_relative(abs)
                ));
            }
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let rel = entry
                .path()
                .strip_prefix(root)
                .map(|r| r.to_string_lossy().into_owned())
                .unwrap_or_default();
            let covered = self.rule_for(&rel).is_some()
                || entry
                    .metadata()
                    .is_ok_and(|m| inodes.contains_key(&(m.dev(), m.ino())));
            if covered {
                return Some(format!("it holds {rel}"));
            }
        }
        None
    }
}

impl ReadDenials {
    /// Whether the file at `abs` (in the workspace) is covered, by its
    /// path or as the file it is.
    pub fn covers(&self, abs: &std::path::Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        if !self.active() {
            return false;
        }
        let by_path = abs
            .strip_prefix(self.workspace.root())
            .is_ok_and(|rel| self.rule_for(&rel.to_string_lossy()).is_some());
        by_path
            || std::fs::metadata(abs).is_ok_and(|m| {
                self.inodes
                    .read()
                    .is_ok_and(|i| i.contains_key(&(m.dev(), m.ino())))
            })
    }

    /// Why a shell pattern may name a covered file (or a directory that
    /// holds one).
    fn denied_pattern(&self, pattern: &str) -> Option<String> {
        // Walked from the directory before the first wildcard.
        let cut = pattern.find(['*', '?', '[']).unwrap_or(pattern.len());
        let base = std::path::Path::new(&pattern[..cut]);
        let base = if pattern[..cut].ends_with('/') {
            base.to_path_buf()
        } else {
            base.parent().map(std::path::Path::to_path_buf)?
        };
        let matcher = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .ok()?
            .compile_matcher();
        let walk = ignore::WalkBuilder::new(&base)
            .standard_filters(false)
            .hidden(false)
            .follow_links(false)
            .filter_entry(|e| e.file_name() != ".git")
            .build();
        for (n, entry) in walk.flatten().enumerate() {
            if n >= DENIED_WALK {
                return Some(format!("{pattern} names too many files to check"));
            }
            if entry.depth() == 0 || !matcher.is_match(entry.path()) {
                continue;
            }
            if let Some(why) = self.denied(entry.path()) {
                return Some(format!(
                    "it names {}: {why}",
                    self.workspace.display_relative(entry.path())
                ));
            }
            if let Ok(rel) = entry.path().strip_prefix(self.workspace.root())
                && self.rule_for(&rel.to_string_lossy()).is_some()
            {
                return Some(format!("it names {}", rel.display()));
            }
        }
        None
    }
}

/// The object stores of the workspace's repository: `.git/objects`, or
/// for a `.git` file (a worktree, a submodule) the one its `gitdir` and
/// `commondir` lead to.
fn object_stores(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let dot = root.join(".git");
    let gitdir = if dot.is_dir() {
        dot
    } else {
        let Ok(text) = crate::fs::read_own(&dot) else {
            return Vec::new();
        };
        let Some(dir) = text.lines().next().and_then(|l| l.strip_prefix("gitdir: ")) else {
            return Vec::new();
        };
        root.join(dir.trim())
    };
    let mut stores = vec![gitdir.join("objects")];
    if let Ok(common) = crate::fs::read_own(&gitdir.join("commondir")) {
        stores.push(gitdir.join(common.trim()).join("objects"));
    }
    stores.retain(|s| s.is_dir());
    stores
}

/// The most covered files hidden one by one from a command.
const FILE_COVERS: usize = 256;

/// What a walk of the workspace found under each directory: how many
/// entries, and how many of them covered files, to hide a directory of
/// covered files whole rather than file by file.
#[derive(Default)]
struct Tally {
    /// Per directory (beneath the root): entries beneath it that are not
    /// directories, and how many of those are covered files.
    dirs: std::collections::HashMap<std::path::PathBuf, (usize, usize)>,
    /// The covered files, in the order found.
    files: Vec<std::path::PathBuf>,
}

impl Tally {
    fn add(&mut self, path: &std::path::Path, root: &std::path::Path, covered: bool) {
        if covered {
            self.files.push(path.to_path_buf());
        }
        for dir in path
            .ancestors()
            .skip(1)
            .take_while(|d| *d != root && d.starts_with(root))
        {
            let counts = self.dirs.entry(dir.to_path_buf()).or_default();
            counts.0 += 1;
            counts.1 += usize::from(covered);
        }
    }

    /// The covered files; past [`FILE_COVERS`] of them, the topmost
    /// directories with covered files only beneath them, and the covered
    /// files outside those. A file covered is one git cannot stage as
    /// deleted (`git add -A` in a command stops at it), which an empty
    /// directory in place of its own would let it do; so directories
    /// only when files would be too many mounts.
    fn places(self, root: &std::path::Path) -> Vec<std::path::PathBuf> {
        if self.files.len() <= FILE_COVERS {
            return self.files;
        }
        let whole = |d: &std::path::Path| self.dirs.get(d).is_some_and(|(n, c)| n == c);
        let mut places: Vec<std::path::PathBuf> = self
            .files
            .iter()
            .map(|file| {
                file.ancestors()
                    .skip(1)
                    .take_while(|d| *d != root && d.starts_with(root))
                    .filter(|d| whole(d))
                    .last()
                    .unwrap_or(file)
                    .to_path_buf()
            })
            .collect();
        places.sort();
        places.dedup();
        places
    }
}

impl Guardrails {
    pub fn new(workspace: Arc<Workspace>, rules: Arc<Rules>, shell_max_timeout_secs: u64) -> Self {
        let reads = ReadDenials::new(workspace.clone(), rules.clone());
        Self {
            workspace,
            rules,
            shell_max_timeout_secs,
            reads,
        }
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The read deny rules, followed as files (for the search tools,
    /// which leave covered files out, and for a refresh after a round).
    pub fn reads(&self) -> &ReadDenials {
        &self.reads
    }

    /// Judges a call of `tool` with `args` that will do `ops`.
    pub fn check(&self, tool: &str, kind: ToolKind, args: &Value, ops: &[Operation]) -> Verdict {
        if let Some(e) = self.deny(tool, kind, ops) {
            return Verdict::Deny(e);
        }
        if ops.iter().any(|op| matches!(op, Operation::Exec(_))) {
            return self.cap_timeout(args);
        }
        Verdict::Allow
    }

    fn deny(&self, tool: &str, kind: ToolKind, ops: &[Operation]) -> Option<GuardError> {
        let rule = |subject: Subject<'_>, what: String| {
            self.rules
                .first(RuleKind::Deny, tool, subject)
                .map(|r| GuardError::Rule {
                    rule: r.text.clone(),
                    origin: r.origin,
                    what,
                })
        };
        if let Some(e) = rule(Subject::Call, format!("every {tool} call")) {
            return Some(e);
        }
        for op in ops {
            let found = match op {
                Operation::Exec(e) => denylist::check(e, &self.workspace)
                    .map(GuardError::Denylisted)
                    .or_else(|| {
                        e.commands.iter().find_map(|c| {
                            rule(Subject::Command(c), format!("matched `{}`", c.display()))
                        })
                    })
                    .or_else(|| {
                        e.files
                            .iter()
                            .find_map(|f| rule(Subject::File(f), format!("matched {f}")))
                    })
                    .or_else(|| self.git_variables(&e.commands))
                    .or_else(|| e.commands.iter().find_map(|c| self.git_content(c)))
                    .or_else(|| {
                        // A directory is read for what it holds unless every
                        // command naming it only lists names (`ls`, `tree`).
                        e.files.iter().find_map(|f| {
                            let names_it = |c: &&crate::protocol::operation::SimpleCommand| {
                                c.argv.iter().skip(1).any(|w| {
                                    let t = w.text.trim_end_matches('/');
                                    t == f.path
                                        || t.strip_prefix("./") == Some(f.path.as_str())
                                        || self.workspace.root().join(t)
                                            == self.workspace.root().join(&f.path)
                                })
                            };
                            let dirs = !e
                                .commands
                                .iter()
                                .filter(names_it)
                                .all(|c| NAMES_ONLY.contains(&c.basename()))
                                || !e.commands.iter().any(|c| names_it(&c));
                            // In a sandbox that hides covered files, `grep -r`
                            // and `find .` over their directory run, and find
                            // them not there.
                            self.followed(f, dirs && !e.reads_hidden)
                        })
                    }),
                // The search tools leave covered files out themselves;
                // a listing shows names only.
                Operation::File(f) => {
                    rule(Subject::File(f), format!("matched {f}")).or_else(|| {
                        self.followed(f, !matches!(kind, ToolKind::Search | ToolKind::List))
                    })
                }
                Operation::Net { host } => rule(Subject::Host(host), format!("matched {host}")),
                Operation::External { .. } => None,
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// A `GIT_` variable set on a line that runs git (see
    /// [`super::git_reads`]).
    fn git_variables(
        &self,
        commands: &[crate::protocol::operation::SimpleCommand],
    ) -> Option<GuardError> {
        let why = super::git_reads::line_sets_git_variables(commands, &self.reads)?;
        self.read_rule_error(format!("the line {why}"))
    }

    /// The denial, by the first read rule that names paths, of `what`.
    fn read_rule_error(&self, what: String) -> Option<GuardError> {
        let rule = self.rules.deny.iter().find(|r| r.reads_by_pattern())?;
        Some(GuardError::Rule {
            rule: rule.text.clone(),
            origin: rule.origin,
            what,
        })
    }

    /// git prints what files held, from its object store, which no cover
    /// reaches (see [`super::git_reads`]).
    fn git_content(&self, c: &crate::protocol::operation::SimpleCommand) -> Option<GuardError> {
        let why = super::git_reads::judge(c, &self.reads)?;
        self.read_rule_error(format!("`{}` {why}", c.display()))
    }

    /// A read the deny rules cover as a file rather than by its path: a
    /// covered file moved or linked elsewhere, or (`dirs`) a directory
    /// that holds one.
    fn followed(&self, f: &crate::protocol::operation::FileOp, dirs: bool) -> Option<GuardError> {
        if f.access != crate::protocol::operation::Access::Read || f.outside || !self.reads.active()
        {
            return None;
        }
        let abs = self.workspace.root().join(&f.path);
        if !dirs && abs.is_dir() {
            return None;
        }
        let why = self.reads.denied(&abs)?;
        self.read_rule_error(format!("{f}: {why}"))
    }

    fn cap_timeout(&self, args: &Value) -> Verdict {
        let max = self.shell_max_timeout_secs;
        match args.get("timeout").and_then(Value::as_f64) {
            Some(t) if t > max as f64 => {
                let mut args = args.clone();
                args["timeout"] = Value::from(max);
                Verdict::Modify {
                    args,
                    note: format!("timeout {t}s exceeds the maximum; clamped to {max}s"),
                }
            }
            _ => Verdict::Allow,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::policy::shell::analyze;
    use crate::protocol::operation::{Access, FileOp};

    fn rails(deny: &[&str]) -> (tempfile::TempDir, Guardrails) {
        let d = tempfile::tempdir().unwrap();
        let ws = Arc::new(Workspace::new(d.path()).unwrap());
        let deny: Vec<String> = deny.iter().map(|s| s.to_string()).collect();
        let rules = Rules::parse(&[], &[], &deny, RuleOrigin::User).unwrap();
        (d, Guardrails::new(ws, Arc::new(rules), 300))
    }

    fn exec(g: &Guardrails, line: &str) -> Vec<Operation> {
        vec![Operation::Exec(analyze(line, &g.workspace))]
    }

    #[test]
    fn denylisted_commands_are_denied_and_long_timeouts_clamped() {
        let (_d, g) = rails(&[]);
        let ops = exec(&g, "echo ok && su''do ls");
        let v = g.check(
            "exec_shell",
            ToolKind::Shell,
            &json!({"command": "x"}),
            &ops,
        );
        assert!(
            matches!(v, Verdict::Deny(GuardError::Denylisted(_))),
            "{v:?}"
        );
        let ops = exec(&g, "ls");
        match g.check(
            "exec_shell",
            ToolKind::Shell,
            &json!({"command": "ls", "timeout": 900}),
            &ops,
        ) {
            Verdict::Modify { args, note } => {
                assert_eq!(args["timeout"], 300);
                assert!(note.contains("clamped to 300s"), "{note}");
            }
            v => panic!("expected modify, got {v:?}"),
        }
    }

    #[test]
    fn deny_rules_name_the_rule_and_what_matched() {
        let (_d, g) = rails(&["exec_shell(git push*)", "read_file(.env)"]);
        let ops = exec(&g, "git add . && git push --force");
        let Verdict::Deny(e) = g.check("exec_shell", ToolKind::Shell, &json!({}), &ops) else {
            panic!("expected a denial")
        };
        let text = e.to_string();
        assert!(
            text.contains("git push*") && text.contains("git push --force"),
            "{text}"
        );
        let read = vec![Operation::File(FileOp {
            path: ".env".into(),
            access: Access::Read,
            outside: false,
            named: false,
            deletes: false,
        })];
        assert!(matches!(
            g.check("read_file", ToolKind::Read, &json!({}), &read),
            Verdict::Deny(_)
        ));
        let ops = exec(&g, "cat < .env");
        assert!(matches!(
            g.check("exec_shell", ToolKind::Shell, &json!({}), &ops),
            Verdict::Deny(_)
        ));
    }

    #[test]
    fn ordinary_calls_are_allowed() {
        let (_d, g) = rails(&["exec_shell(rm -rf *)"]);
        let ops = exec(&g, "grep -rn shutdown src/ && cargo test graceful_shutdown");
        assert_eq!(
            g.check("exec_shell", ToolKind::Shell, &json!({"timeout": 5}), &ops),
            Verdict::Allow
        );
    }

    /// A few covered files are hidden one by one (git cannot stage them
    /// as deleted); many, by their topmost directory of covered files
    /// only.
    #[test]
    fn covered_places_are_files_and_past_a_limit_directories() {
        let (d, g) = rails(&["read_file(private/**)", "read_file(**/*.env)"]);
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("private/deep")).unwrap();
        std::fs::create_dir(root.join("mixed")).unwrap();
        std::fs::write(root.join("private/deep/a.txt"), "a").unwrap();
        std::fs::write(root.join("mixed/s.env"), "s").unwrap();
        std::fs::write(root.join("mixed/open.txt"), "o").unwrap();
        g.reads().refresh();
        assert_eq!(
            g.reads().places(),
            vec![root.join("mixed/s.env"), root.join("private/deep/a.txt")]
        );
        for n in 0..FILE_COVERS {
            std::fs::write(root.join(format!("private/deep/{n}.txt")), "x").unwrap();
        }
        std::fs::write(root.join("private/top.txt"), "t").unwrap();
        g.reads().refresh();
        assert_eq!(
            g.reads().places(),
            vec![root.join("mixed/s.env"), root.join("private")]
        );
        // A file moved out is followed by what it is.
        std::fs::rename(root.join("mixed/s.env"), root.join("moved.txt")).unwrap();
        g.reads().refresh();
        assert!(g.reads().places().contains(&root.join("moved.txt")));
    }

    /// git reaches every version of a covered file through its object
    /// store: every way of printing one is refused, what prints no
    /// content runs, and what Lathe does not know is refused.
    #[test]
    fn git_cannot_print_a_covered_file_any_way() {
        let (d, g) = rails(&["read_file(private/**)"]);
        std::fs::create_dir(d.path().join("private")).unwrap();
        std::fs::write(d.path().join("private/plan.md"), "p").unwrap();
        std::fs::write(d.path().join("notes.md"), "n").unwrap();
        g.reads().refresh();
        let denied = [
            "git show HEAD:private/plan.md",
            "git show HEAD:./private/plan.md",
            "git show HEAD:private//plan.md",
            "git show HEAD:notes.md/../private/plan.md",
            "git show :0:private/plan.md",
            "git show HEAD~1:private",
            "git --no-pager show HEAD:private/plan.md",
            "git show --stat -p HEAD",
            "git show --stat --patch",
            "git show -s -p",
            "git show 1a2b3c4d",
            "git show 1a2b3c4d -- notes.md",
            "git diff 1a2b3c4 5d6e7f8",
            "git diff -- ':(icase)PRIVATE'",
            "git diff -- ':!notes.md'",
            "git diff -- 'priv*'",
            "git diff -- .",
            "git diff -- private",
            "git log -p -1",
            "git log -pW -1 -- private",
            "git log -S secret",
            "git log -Gsecret --oneline",
            "git log --follow -p -- notes.md/../private/plan.md",
            "git log -L1,5:private/plan.md",
            "git -c alias.x=show x HEAD:notes.md",
            "git -c diff.external=cat diff -- notes.md",
            "git -C private show HEAD:plan.md",
            "git --git-dir=.git show HEAD",
            "git x HEAD",
            "git cat-file -p 1a2b3c4",
            "git cat-file blob HEAD:notes.md",
            "git unpack-file 1a2b3c4",
            "git fast-export --all",
            "git bundle create b.bundle HEAD",
            "git archive HEAD",
            "git archive HEAD -- private",
            "git update-index --cacheinfo 100644,1a2b3c4,p.md",
            "git read-tree HEAD",
            "git checkout-index -a",
            "git hash-object private/plan.md",
            "git notes show",
            "git tag t 1a2b3c4",
            "git add -p",
            "git add private/plan.md",
            "git commit -p",
            "git stash show -p",
            "git stash show",
            "git restore --patch",
            "git grep secret",
            "git grep -f private/plan.md -- notes.md",
            "git grep secret -- private",
            "git blame private/plan.md",
            "git config --file=private/plan.md --list",
            "GIT_EXTERNAL_DIFF=cat git diff -- notes.md",
            "git show $REV",
            "git format-patch -1",
            "echo HEAD | xargs git show",
            // A second look: options the first list lacked, colons inside
            // braces, variables exported before, copies of the repository.
            "git log -U1",
            "git log --unified=0",
            "git log --dd",
            "git log --remerge-diff",
            "git log --check",
            "git show --stat -U1 HEAD~1",
            "git show 'HEAD^{/:*}:private/plan.md'",
            "git show 'HEAD@{9999-01-01 0:0}:private/plan.md'",
            "git grep -h -e SECRET 'HEAD^{/:*}:private' -- plan.md",
            "git config --blob='HEAD^{/:*}:private/plan.md' -l",
            "export GIT_ICASE_PATHSPECS=1; git log -p -- PRIVATE",
            "GIT_DIR=.git; export GIT_DIR; git show HEAD",
            "git clone -q .git /tmp/c1",
            "git worktree add /tmp/wt",
            "git submodule add ./ sub",
            // A third look: objects by id to every other command.
            "git config --blob=b83ac08 -l",
            "git config --blob b83ac08c0ffee --list",
            "git config --blob=HEAD:notes.md -l",
            "git grep -h -e S 0091d12 -- plan.md",
            "git grep -h -e S b83ac08 -- notes.md",
            "git archive 0091d1242fc75bab68b713b7a71423d21a7a3f73 -- plan.md",
            "git restore --source=0091d12 -- plan.md",
            "git checkout 0091d12 -- plan.md",
            "git tag t 1a2b3c4",
            "git branch b 1a2b3c4",
        ];
        for line in denied {
            let v = g.check(
                "exec_shell",
                ToolKind::Shell,
                &json!({"command": line}),
                &exec(&g, line),
            );
            assert!(matches!(v, Verdict::Deny(_)), "{line}: {v:?}");
        }
        let allowed = [
            "git status --short",
            "git log --oneline",
            "git log -5 --stat",
            "git log -p -- notes.md",
            "git log -S word -- notes.md",
            "git show --stat HEAD",
            "git show -s HEAD~2",
            "git show HEAD -- notes.md",
            "git show HEAD:notes.md",
            "git diff -- notes.md",
            "git diff --name-only",
            "git diff --stat HEAD~1",
            "git blame notes.md",
            "git grep word -- notes.md",
            "git branch -a",
            "git add notes.md",
            "git commit -m 'a message'",
            "git ls-files",
            "git rev-parse HEAD",
            "git --no-pager log --oneline",
            "git log -5 --format=%H --author=me --since=2.weeks",
            "git log -n 3 --graph --decorate --all",
            "git diff --cached --stat",
            "git log --oneline 1a2b3c4",
            "git rev-list --objects --all",
            "git ls-tree -r HEAD",
            "git reset --soft 1a2b3c4",
        ];
        for line in allowed {
            let v = g.check(
                "exec_shell",
                ToolKind::Shell,
                &json!({"command": line}),
                &exec(&g, line),
            );
            assert!(!matches!(v, Verdict::Deny(_)), "{line}: {v:?}");
        }
    }
}
