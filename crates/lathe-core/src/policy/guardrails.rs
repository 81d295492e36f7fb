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
        };
        me.refresh();
        me
    }

    /// Whether any read deny rule names paths (else nothing is tracked).
    pub fn active(&self) -> bool {
        self.rules
            .deny
            .iter()
            .any(|r| r.has_pattern() && matches!(r.tool.as_str(), "read_file" | "list_directory"))
    }

    /// The rule that covers reading `rel` (relative to the workspace) by
    /// its path.
    pub(crate) fn rule_for(&self, rel: &str) -> Option<&super::rules::Rule> {
        let op = crate::protocol::operation::FileOp {
            path: rel.to_string(),
            access: crate::protocol::operation::Access::Read,
            outside: false,
            named: false,
        };
        self.rules
            .first(RuleKind::Deny, "read_file", Subject::File(&op))
    }

    /// Notes the covered files as they are now (at the start, and after
    /// every round of calls that may change files).
    pub fn refresh(&self) {
        if !self.active() {
            return;
        }
        use std::os::unix::fs::MetadataExt;
        let root = self.workspace.root();
        let mut found = Vec::new();
        let walk = ignore::WalkBuilder::new(root)
            .standard_filters(false)
            .hidden(false)
            .follow_links(false)
            .filter_entry(|e| e.file_name() != ".git")
            .build();
        for entry in walk.flatten().take(DENIED_WALK) {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(root) else {
                continue;
            };
            let rel = rel.to_string_lossy().into_owned();
            if self.rule_for(&rel).is_some()
                && let Ok(m) = entry.metadata()
            {
                found.push(((m.dev(), m.ino()), rel));
            }
        }
        if let Ok(mut inodes) = self.inodes.write() {
            inodes.extend(found);
        }
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
    pub fn check(&self, tool: &str, args: &Value, ops: &[Operation]) -> Verdict {
        if let Some(e) = self.deny(tool, ops) {
            return Verdict::Deny(e);
        }
        if ops.iter().any(|op| matches!(op, Operation::Exec(_))) {
            return self.cap_timeout(args);
        }
        Verdict::Allow
    }

    fn deny(&self, tool: &str, ops: &[Operation]) -> Option<GuardError> {
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
                            self.followed(f, dirs)
                        })
                    }),
                // The search tools leave covered files out themselves;
                // a listing shows names only.
                Operation::File(f) => {
                    rule(Subject::File(f), format!("matched {f}")).or_else(|| {
                        self.followed(f, !matches!(tool, "grep" | "glob" | "list_directory"))
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

    /// git prints what files held (`show REV:PATH`, `diff`, `log -p`,
    /// `grep`, `cat-file`, `blame`, `archive`): with a read deny rule in
    /// force, such a command runs only when its pathspecs (after `--`)
    /// name nothing covered; a `REV:PATH` is judged as PATH.
    fn git_content(&self, c: &crate::protocol::operation::SimpleCommand) -> Option<GuardError> {
        if c.basename() != "git" || !self.reads.active() {
            return None;
        }
        let sub = c.subcommand.as_deref()?;
        let args: Vec<&str> = c.argv.iter().skip(1).map(|w| w.text.as_str()).collect();
        let has = |flags: &[&str]| {
            args.iter()
                .any(|a| flags.iter().any(|f| *a == *f || a.starts_with(&format!("{f}="))))
        };
        let names_only = has(&[
            "--stat",
            "--name-only",
            "--name-status",
            "--shortstat",
            "--numstat",
            "--summary",
            "--quiet",
            "--exit-code",
        ]);
        let patches = has(&["-p", "-u", "--patch", "-L", "--cc", "-c", "--full-diff"])
            || args.iter().any(|a| a.starts_with("-L"));
        let prints = match sub {
            "show" | "diff" | "diff-tree" | "diff-index" | "diff-files" => !names_only,
            "log" | "whatchanged" | "reflog" | "stash" => patches,
            "cat-file" | "grep" | "blame" | "annotate" | "archive" | "format-patch" | "bundle"
            | "fast-export" | "range-diff" => true,
            _ => false,
        };
        if !prints {
            return None;
        }
        let rule = self
            .rules
            .deny
            .iter()
            .find(|r| r.has_pattern() && matches!(r.tool.as_str(), "read_file" | "list_directory"))?;
        let denied = |why: String| {
            Some(GuardError::Rule {
                rule: rule.text.clone(),
                origin: rule.origin,
                what: format!("`git {sub}` {why}"),
            })
        };
        // `REV:PATH` and `:PATH` name a file of a commit or the index.
        for a in &args {
            if let Some((_, path)) = a.split_once(':')
                && !a.starts_with('-')
                && !path.is_empty()
                && self.reads.rule_for(path.trim_start_matches("./")).is_some()
            {
                return denied(format!("prints {path}, which your rules deny reading"));
            }
        }
        let Some(dash) = args.iter().position(|a| *a == "--") else {
            return denied(
                "can print any file the repository holds; name the paths it may show after \
                 `--` (none your read rules cover)"
                    .into(),
            );
        };
        let root = self.workspace.root();
        let cwd = c.cwd.as_deref().unwrap_or(root);
        for spec in &args[dash + 1..] {
            let abs = cwd.join(spec);
            let rel = abs
                .strip_prefix(root)
                .map(|r| r.to_string_lossy().into_owned())
                .unwrap_or_default();
            let covered = abs.strip_prefix(root).is_err()
                || self.reads.rule_for(&rel).is_some()
                || self.reads.denied(&abs).is_some()
                || spec.contains(['*', '?', '[']);
            if covered {
                return denied(format!("may print what {spec} holds, which your rules deny reading"));
            }
        }
        None
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
        let rule = self.rules.deny.iter().find(|r| {
            r.has_pattern() && matches!(r.tool.as_str(), "read_file" | "list_directory")
        })?;
        Some(GuardError::Rule {
            rule: rule.text.clone(),
            origin: rule.origin,
            what: format!("{f}: {why}"),
        })
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
        let v = g.check("exec_shell", &json!({"command": "x"}), &ops);
        assert!(
            matches!(v, Verdict::Deny(GuardError::Denylisted(_))),
            "{v:?}"
        );
        let ops = exec(&g, "ls");
        match g.check(
            "exec_shell",
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
        let Verdict::Deny(e) = g.check("exec_shell", &json!({}), &ops) else {
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
        })];
        assert!(matches!(
            g.check("read_file", &json!({}), &read),
            Verdict::Deny(_)
        ));
        let ops = exec(&g, "cat < .env");
        assert!(matches!(
            g.check("exec_shell", &json!({}), &ops),
            Verdict::Deny(_)
        ));
    }

    #[test]
    fn ordinary_calls_are_allowed() {
        let (_d, g) = rails(&["exec_shell(rm -rf *)"]);
        let ops = exec(&g, "grep -rn shutdown src/ && cargo test graceful_shutdown");
        assert_eq!(
            g.check("exec_shell", &json!({"timeout": 5}), &ops),
            Verdict::Allow
        );
    }
}
