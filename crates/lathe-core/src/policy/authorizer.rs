//! The authorize stage: permission rules, then the approval-mode table of
//! DESIGN.md, decide per operation whether a call may run, must be
//! approved, or is refused in this mode; and the `Approver` trait, the one
//! seam between policy and people.
//!
//! Per operation: an ask rule always asks; an allow rule runs (not for a
//! complex line, a protected file or a path outside the workspace, which
//! always ask); then the table: reads and the built-in read-only commands
//! run, writes ask in `ask`, commands ask in `ask` and `auto-edit`, and so
//! on. What needs approval is a list of [`Need`]s, each with the grant that
//! would cover it when one may (never for a complex line). The TUI
//! implements `Approver` with a modal dialog; headless `lathe exec` uses
//! [`HeadlessApprover`], which has no person to ask and denies.

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::grants::GrantKey;
use super::read_only::{is_read_only, only_reads};
use super::rules::{RuleKind, Rules, Subject};
use super::shell::{knows_file_roles, lexical_join};
use super::workspace::Workspace;
use crate::protocol::operation::{Access, ExecOp, FileOp, Operation, SimpleCommand};
use crate::protocol::{ApprovalDecision, ApprovalMode, ApprovalRequest, DecisionSource, Effect};

/// Why running a command outside the sandbox asks, every time.
/// How the question a judge raised begins (its reason follows).
pub const JUDGE_REASON: &str = "the reviewing model (the judge) asked for you: ";

pub const UNSANDBOXED_REASON: &str = "outside the sandbox a command can write anywhere, use the \
     network and reach your other processes; it is approved one call at a time";

/// One part of a call that needs approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// What it does: "run `rm -v $f`", "write src/a.rs".
    pub what: String,
    /// Why it asks.
    pub reason: String,
    /// The grant that would cover it, when a conversation grant may.
    pub grant: Option<GrantKey>,
}

/// What the authorize stage decided about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assessment {
    /// Nothing needs approval.
    Auto,
    /// Never in this mode.
    Refuse(String),
    /// These parts need approval (or a grant).
    Ask(Vec<Need>),
}

/// Files that can run code later or change Lathe's own settings: writes to
/// them always ask, and no grant covers them.
pub fn is_protected(path: &str) -> bool {
    let mut parts = path.split('/');
    let first = parts.next().unwrap_or_default();
    matches!(first, ".lathe" | ".mcp.json" | ".envrc") || path.split('/').any(|p| p == ".git")
}

/// A protected workspace path named in the arguments of a program whose
/// arguments Lathe cannot tell apart (`some-tool .git/hooks/pre-commit`,
/// `cp`-like unknowns with `.gi?/config`), or a relative path when the
/// directory the command runs in is unknown. Programs whose files Lathe
/// knows (`echo`, `cp`, `find`) are judged by their file operations
/// instead, and values of pattern options (`--exclude=.git`) are not
/// paths.
fn protected_argument(c: &SimpleCommand, workspace: &Workspace, also: &[String]) -> Option<String> {
    if knows_file_roles(c.basename(), c.args()) {
        return None;
    }
    let pattern_option = |o: &str| {
        let name = o.trim_start_matches('-');
        ["exclude", "include", "ignore", "filter", "skip", "prune"]
            .iter()
            .any(|p| name.starts_with(p))
    };
    let args = c.args();
    args.iter().enumerate().find_map(|(i, a)| {
        if i > 0 {
            let prev = &args[i - 1].text;
            if prev.starts_with("--") && !prev.contains('=') && pattern_option(prev) {
                return None;
            }
        }
        let t = match a.text.split_once('=') {
            Some((opt, _)) if opt.starts_with('-') && pattern_option(opt) => return None,
            Some((_, v)) => v,
            None => a.text.as_str(),
        };
        if a.dynamic || t.is_empty() || (t.starts_with('-') && !a.text.contains('=')) {
            return None;
        }
        let Some(cwd) = c.cwd.as_deref() else {
            return (!t.starts_with('/'))
                .then(|| format!("{t} in a directory known only when it runs"));
        };
        let joined = lexical_join(cwd, t);
        let rel = match workspace.check(&joined.to_string_lossy()) {
            Ok(abs) => workspace.display_relative(&abs),
            Err(_) => return None,
        };
        protected_path(&rel, a.glob, also).then_some(rel)
    })
}

/// Whether a workspace path, or any path a glob of it may match, is
/// protected.
fn protected_path(rel: &str, glob: bool, also: &[String]) -> bool {
    const NAMES: &[&str] = &[".git", ".lathe", ".mcp.json", ".envrc"];
    let under = |f: &String| {
        rel == f
            || rel
                .strip_prefix(f.as_str())
                .is_some_and(|r| r.starts_with('/'))
    };
    // A hook's glob (`include mk/*.mk`): a file that would match it runs.
    let matches = |f: &String| {
        f.contains(['*', '?', '['])
            && globset::GlobBuilder::new(f)
                .literal_separator(true)
                .build()
                .is_ok_and(|g| g.compile_matcher().is_match(rel))
    };
    if is_protected(rel) || also.iter().any(|f| under(f) || matches(f)) {
        return true;
    }
    // Bash's globs match a leading dot only when written: only a part that
    // starts with `.` can reach `.git`.
    glob && (rel.split('/').any(|part| {
        part.starts_with('.')
            && globset::Glob::new(part)
                .is_ok_and(|g| NAMES.iter().any(|n| g.compile_matcher().is_match(n)))
    }) || globset::Glob::new(rel)
        .is_ok_and(|g| also.iter().any(|f| g.compile_matcher().is_match(f))))
}

/// A shell given literal code (`sh -c 'make'`), which the analysis
/// looked into.
fn runs_inline_shell_code(c: &SimpleCommand) -> bool {
    use super::shell::{SHELLS, Source, source_of};
    SHELLS.contains(&c.basename())
        && matches!(source_of(c.basename(), c.args()), Some(Source::Inline(Some(code))) if !code.dynamic)
}

/// The inputs of one assessment.
pub struct Assessor<'a> {
    pub mode: ApprovalMode,
    pub rules: &'a Rules,
    pub workspace: &'a Workspace,
    /// More protected files, relative to the workspace: those hooks run.
    pub protected: &'a [String],
}

impl Assessor<'_> {
    /// Decides a call of `tool` (whose coarse effect is `effect`) that
    /// will do `ops`.
    pub fn assess(&self, tool: &str, effect: Effect, ops: &[Operation]) -> Assessment {
        let mut needs = Vec::new();
        let outcome = if ops.is_empty() {
            self.call(tool, effect, &mut needs)
        } else {
            ops.iter()
                .try_for_each(|op| self.operation(tool, op, &mut needs))
        };
        match outcome {
            Err(reason) => Assessment::Refuse(reason),
            Ok(()) if needs.is_empty() => Assessment::Auto,
            Ok(()) => Assessment::Ask(needs),
        }
    }

    fn rule(&self, kind: RuleKind, tool: &str, subject: Subject<'_>) -> Option<String> {
        self.rules
            .first(kind, tool, subject)
            .map(|r| r.text.clone())
    }

    fn operation(&self, tool: &str, op: &Operation, needs: &mut Vec<Need>) -> Result<(), String> {
        match op {
            Operation::Exec(e) => self.exec(tool, e, needs),
            Operation::File(f) => self.file(tool, f, needs),
            Operation::Net { host } => self.remote(
                tool,
                Subject::Host(host),
                format!("connect to {host}"),
                GrantKey::Net { host: host.clone() },
                needs,
            ),
            Operation::External {
                trusted: true,
                server,
                tool: t,
            } if self.mode != ApprovalMode::ReadOnly
                && self.rule(RuleKind::Ask, tool, Subject::Call).is_none() =>
            {
                let _ = (server, t);
                Ok(())
            }
            Operation::External {
                server, tool: t, ..
            } => self.remote(
                tool,
                Subject::Call,
                format!("call {t} on MCP server {server}"),
                GrantKey::External {
                    server: server.clone(),
                    tool: t.clone(),
                },
                needs,
            ),
        }
    }

    fn exec(&self, tool: &str, e: &ExecOp, needs: &mut Vec<Need>) -> Result<(), String> {
        let mode = self.mode;
        let complex = e.is_complex();
        if e.unsandboxed {
            if mode == ApprovalMode::ReadOnly {
                return Err(
                    "approval mode read-only does not run commands outside the sandbox".into(),
                );
            }
            needs.push(self.unsandboxed(e));
        }
        for c in &e.commands {
            let what = format!("run `{}`", c.display());
            if let Some(rule) = self.rule(RuleKind::Ask, tool, Subject::Command(c)) {
                needs.push(Need {
                    what,
                    reason: format!("the rule `{rule}` asks every time"),
                    grant: None,
                });
                continue;
            }
            if is_read_only(c, self.workspace) {
                continue;
            }
            if complex && runs_inline_shell_code(c) {
                // `sh -c 'make'`: its commands are judged one by one, and
                // the line as written asks below.
                continue;
            }
            if mode != ApprovalMode::FullAuto && only_reads(c, self.workspace) {
                // `cat /etc/hostname`: it changes nothing; what asks is
                // the read outside, named as such.
                if e.files.iter().any(|f| f.outside) {
                    continue;
                }
                needs.push(Need {
                    what,
                    reason: "it reads outside the workspace".into(),
                    grant: None,
                });
                continue;
            }
            if let Some(path) = protected_argument(c, self.workspace, self.protected) {
                if mode == ApprovalMode::ReadOnly {
                    return Err(format!(
                        "approval mode read-only does not run `{}`, which names {path}",
                        c.display()
                    ));
                }
                needs.push(Need {
                    what,
                    reason: format!(
                        "it names {path}: a change to a protected file (.git/, .lathe/, .mcp.json, .envrc) can run code later or change Lathe's settings"
                    ),
                    grant: None,
                });
                continue;
            }
            if !complex
                && self
                    .rule(RuleKind::Allow, tool, Subject::Command(c))
                    .is_some()
            {
                continue;
            }
            match mode {
                ApprovalMode::FullAuto => {}
                ApprovalMode::ReadOnly => {
                    return Err(format!(
                        "approval mode read-only allows only read-only commands; `{}` is not one",
                        c.display()
                    ));
                }
                ApprovalMode::Ask | ApprovalMode::AutoEdit => needs.push(Need {
                    what,
                    reason: format!(
                        "approval mode {mode}: commands that may change things need approval"
                    ),
                    grant: if complex { None } else { GrantKey::command(c) },
                }),
            }
        }
        for f in &e.files {
            self.file(tool, f, needs)?;
        }
        // Output of read-only commands fed to read-only commands
        // (`echo "built on $(date +%F)"`, `comm <(sort a) <(sort b)`).
        let reads_only =
            e.only_substitutes() && e.commands.iter().all(|c| is_read_only(c, self.workspace));
        if complex && !reads_only {
            let why = e.complex.join("; ");
            match mode {
                ApprovalMode::FullAuto => {}
                ApprovalMode::ReadOnly => {
                    return Err(format!(
                        "approval mode read-only does not run lines Lathe cannot fully analyse (this line {why})"
                    ));
                }
                ApprovalMode::Ask | ApprovalMode::AutoEdit => needs.push(Need {
                    what: "run the line exactly as written".into(),
                    reason: format!(
                        "the line {why}, so Lathe cannot tell everything it will run; it is approved one call at a time"
                    ),
                    grant: None,
                }),
            }
        }
        Ok(())
    }

    /// Running a line outside the sandbox always asks: no rule, mode or
    /// grant stands in for the person, and the question names the read
    /// rules that would not hold there.
    fn unsandboxed(&self, e: &ExecOp) -> Need {
        let reads: Vec<String> = self
            .rules
            .deny
            .iter()
            .filter(|r| r.reads_by_pattern())
            .map(|r| format!("`{}`", r.text))
            .collect();
        let reason = if reads.is_empty() {
            UNSANDBOXED_REASON.to_string()
        } else {
            format!(
                "{UNSANDBOXED_REASON}; and there it can read what your rules {} deny",
                reads.join(", ")
            )
        };
        Need {
            what: format!("run `{}` outside the sandbox", e.line),
            reason,
            grant: None,
        }
    }

    fn file(&self, tool: &str, f: &FileOp, needs: &mut Vec<Need>) -> Result<(), String> {
        // A deletion is a write to the file, and says what it is.
        let what = f.to_string();
        if let Some(rule) = self.rule(RuleKind::Ask, tool, Subject::File(f)) {
            needs.push(Need {
                what,
                reason: format!("the rule `{rule}` asks every time"),
                grant: None,
            });
            return Ok(());
        }
        let write = f.access == Access::Write;
        let read_only = self.mode == ApprovalMode::ReadOnly;
        let refuse = || {
            Err(format!(
                "approval mode read-only does not allow writing {}",
                f.path
            ))
        };
        let glob = f.path.contains(['*', '?', '[']);
        if write && !f.outside && protected_path(&f.path, glob, self.protected) {
            if read_only {
                return refuse();
            }
            needs.push(Need {
                what,
                reason: format!(
                    "{} is protected: a change to it can run code later or change Lathe's settings",
                    f.path
                ),
                grant: None,
            });
            return Ok(());
        }
        // Outside the workspace only a rule that names the path allows.
        if self
            .rules
            .first(RuleKind::Allow, tool, Subject::File(f))
            .is_some_and(|r| !f.outside || r.has_pattern())
        {
            return Ok(());
        }
        if f.outside {
            // Full-auto trusts reads; a write outside the workspace asks in
            // every mode.
            if !write && self.mode == ApprovalMode::FullAuto {
                return Ok(());
            }
            if write && read_only {
                return refuse();
            }
            needs.push(Need {
                what,
                reason: "it is outside the workspace".into(),
                grant: None,
            });
            return Ok(());
        }
        // A file a command names is covered by the command's own approval.
        if !write || f.named {
            return Ok(());
        }
        match self.mode {
            ApprovalMode::ReadOnly => Err(format!(
                "approval mode read-only does not allow file changes ({})",
                f.path
            )),
            ApprovalMode::Ask => {
                needs.push(Need {
                    what,
                    reason: "approval mode ask: file changes need approval".into(),
                    grant: Some(GrantKey::FileWrite {
                        path: f.path.clone(),
                    }),
                });
                Ok(())
            }
            ApprovalMode::AutoEdit | ApprovalMode::FullAuto => Ok(()),
        }
    }

    fn remote(
        &self,
        tool: &str,
        subject: Subject<'_>,
        what: String,
        key: GrantKey,
        needs: &mut Vec<Need>,
    ) -> Result<(), String> {
        if let Some(rule) = self
            .rule(RuleKind::Ask, tool, subject)
            .or_else(|| self.rule(RuleKind::Ask, tool, Subject::Call))
        {
            needs.push(Need {
                what,
                reason: format!("the rule `{rule}` asks every time"),
                grant: None,
            });
            return Ok(());
        }
        if self.rule(RuleKind::Allow, tool, subject).is_some()
            || self.rule(RuleKind::Allow, tool, Subject::Call).is_some()
            || self.mode == ApprovalMode::FullAuto
        {
            return Ok(());
        }
        needs.push(Need {
            what,
            reason: format!(
                "approval mode {}: network and external tools need approval",
                self.mode
            ),
            grant: Some(key),
        });
        Ok(())
    }

    /// A tool that describes no operation: its effect decides.
    fn call(&self, tool: &str, effect: Effect, needs: &mut Vec<Need>) -> Result<(), String> {
        use ApprovalMode::{Ask, AutoEdit, FullAuto, ReadOnly};
        if let Some(rule) = self.rule(RuleKind::Ask, tool, Subject::Call) {
            needs.push(Need {
                what: format!("call {tool}"),
                reason: format!("the rule `{rule}` asks every time"),
                grant: None,
            });
            return Ok(());
        }
        if self.rule(RuleKind::Allow, tool, Subject::Call).is_some() {
            return Ok(());
        }
        let mode = self.mode;
        let ask = |reason: String, needs: &mut Vec<Need>| {
            needs.push(Need {
                what: format!("call {tool}"),
                reason,
                grant: Some(GrantKey::Tool {
                    name: tool.to_string(),
                }),
            });
            Ok(())
        };
        match (effect, mode) {
            (Effect::Read, _) | (Effect::Write, AutoEdit | FullAuto) | (_, FullAuto) => Ok(()),
            (Effect::Write | Effect::Exec, ReadOnly) => {
                Err(format!("approval mode read-only does not allow {tool}"))
            }
            (Effect::Write, Ask) => ask(
                "approval mode ask: file changes need approval".into(),
                needs,
            ),
            (Effect::Exec, Ask | AutoEdit) => ask(
                format!("approval mode {mode}: running commands needs approval"),
                needs,
            ),
            (Effect::Network | Effect::External, _) => ask(
                format!("approval mode {mode}: network and external tools need approval"),
                needs,
            ),
        }
    }
}

/// Decides calls that need approval.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Who decides: a person, or the approval mode on its own.
    fn source(&self) -> DecisionSource {
        DecisionSource::User
    }

    /// Returns the decision; a cancelled turn counts as a denial.
    async fn decide(
        &self,
        request: &ApprovalRequest,
        cancel: &CancellationToken,
    ) -> ApprovalDecision;
}

/// The approver of headless mode: there is no one to ask, so every call that
/// needs approval is denied with an explanation the model can act on.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeadlessApprover;

#[async_trait]
impl Approver for HeadlessApprover {
    fn source(&self) -> DecisionSource {
        DecisionSource::Policy
    }

    async fn decide(
        &self,
        request: &ApprovalRequest,
        _cancel: &CancellationToken,
    ) -> ApprovalDecision {
        // A flag is advised only where the approval mode is why it asks
        // (never "--approval full-auto" to a run in full-auto).
        let hint = match request.effect {
            _ if !request.reason.starts_with("approval mode") => {
                "a person's approval (in the terminal UI; no flag lifts this)"
            }
            Effect::Write => {
                "an allow rule in [permissions] of the config, or --approval auto-edit"
            }
            _ => "an allow rule in [permissions] of the config, or --approval full-auto",
        };
        let parts: Vec<&str> = request.needs.iter().map(|n| n.what.as_str()).collect();
        if let Some(why) = request.reason.strip_prefix(JUDGE_REASON) {
            return ApprovalDecision::Deny {
                message: Some(format!(
                    "{} was stopped by the reviewing model (the judge): {why}. Lathe runs \
                     headless, so no one can approve it: do not retry it as it is; go on \
                     without it or a safer way, and say so in your answer.",
                    request.tool
                )),
            };
        }
        ApprovalDecision::Deny {
            message: Some(format!(
                "{} needs approval ({}: {}); lathe is running headless, so there is no one to approve it. \
                 Do not retry it: continue without it, or tell the user it needs {hint}.",
                request.tool,
                parts.join(", "),
                request.reason,
            )),
        }
    }
}

#[cfg(test)]
#[path = "authorizer_tests.rs"]
mod tests;
