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
use super::operation::Operation;
use super::rules::{RuleKind, RuleOrigin, Rules, Subject};
use super::workspace::Workspace;

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
}

impl Guardrails {
    pub fn new(workspace: Arc<Workspace>, rules: Arc<Rules>, shell_max_timeout_secs: u64) -> Self {
        Self {
            workspace,
            rules,
            shell_max_timeout_secs,
        }
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
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
                    }),
                Operation::File(f) => rule(Subject::File(f), format!("matched {f}")),
                Operation::Net { host } => rule(Subject::Host(host), format!("matched {host}")),
                Operation::External { .. } => None,
            };
            if found.is_some() {
                return found;
            }
        }
        None
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
    use crate::policy::operation::{Access, FileOp};
    use crate::policy::shell::analyze;

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
