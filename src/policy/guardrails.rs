//! The `before_tool_call` guardrail stage: workspace containment for every
//! path a call names, the shell denylist, and the shell timeout cap.
//!
//! A verdict is `Allow`, `Modify` (the arguments were rewritten and the
//! model is told why) or `Deny` (the call never runs). Guardrail denials hold
//! in every approval mode. The guardrail sees a call only through
//! [`CallFacts`]; it knows nothing of tool implementations.

use std::sync::Arc;

use serde_json::Value;

use super::shell_rules;
use super::workspace::{PathError, Workspace};

/// What the guardrail needs to know about one call.
#[derive(Debug, Clone)]
pub struct CallFacts<'a> {
    pub tool: &'a str,
    pub args: &'a Value,
    /// Every file-system path the call names.
    pub paths: Vec<String>,
    /// The shell command the call runs, if any; such calls take an optional
    /// `timeout` argument in seconds.
    pub command: Option<String>,
}

/// Why the guardrail refused a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuardError {
    #[error("{0}")]
    Path(PathError),
    #[error("command matches the denylist pattern `{pattern}` ({reason})")]
    Denylisted {
        pattern: &'static str,
        reason: &'static str,
    },
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
    shell_max_timeout_secs: u64,
}

impl Guardrails {
    pub fn new(workspace: Arc<Workspace>, shell_max_timeout_secs: u64) -> Self {
        Self {
            workspace,
            shell_max_timeout_secs,
        }
    }

    pub fn check(&self, call: &CallFacts<'_>) -> Verdict {
        for path in &call.paths {
            if let Err(e) = self.workspace.check(path) {
                return Verdict::Deny(GuardError::Path(e));
            }
        }
        let Some(command) = &call.command else {
            return Verdict::Allow;
        };
        if let Some(d) = shell_rules::denied(command) {
            return Verdict::Deny(GuardError::Denylisted {
                pattern: d.pattern,
                reason: d.reason,
            });
        }
        self.cap_timeout(call.args)
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

    fn rails() -> (tempfile::TempDir, Guardrails) {
        let d = tempfile::tempdir().unwrap();
        let ws = Arc::new(Workspace::new(d.path()).unwrap());
        (d, Guardrails::new(ws, 300))
    }

    #[test]
    fn paths_outside_the_workspace_are_denied() {
        let (_d, g) = rails();
        let args = json!({"path": "../x"});
        let v = g.check(&CallFacts {
            tool: "read_file",
            args: &args,
            paths: vec!["../x".into()],
            command: None,
        });
        assert!(matches!(v, Verdict::Deny(GuardError::Path(_))), "{v:?}");
    }

    #[test]
    fn denylisted_commands_are_denied_and_long_timeouts_clamped() {
        let (_d, g) = rails();
        let args = json!({"command": "sudo ls"});
        let facts = CallFacts {
            tool: "exec_shell",
            args: &args,
            paths: vec![],
            command: Some("sudo ls".into()),
        };
        assert!(matches!(
            g.check(&facts),
            Verdict::Deny(GuardError::Denylisted { .. })
        ));

        let args = json!({"command": "ls", "timeout": 900});
        let facts = CallFacts {
            command: Some("ls".into()),
            args: &args,
            ..facts
        };
        match g.check(&facts) {
            Verdict::Modify { args, note } => {
                assert_eq!(args["timeout"], 300);
                assert!(note.contains("clamped to 300s"), "{note}");
            }
            v => panic!("expected modify, got {v:?}"),
        }
    }

    #[test]
    fn ordinary_calls_are_allowed() {
        let (_d, g) = rails();
        let args = json!({"command": "ls", "timeout": 5});
        let v = g.check(&CallFacts {
            tool: "exec_shell",
            args: &args,
            paths: vec!["src/new.rs".into()],
            command: Some("ls".into()),
        });
        assert_eq!(v, Verdict::Allow);
    }
}
