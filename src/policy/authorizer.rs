//! The authorize stage's rules: the approval-mode table of DESIGN.md, and the
//! `Approver` trait, the one seam between policy and people.
//!
//! The TUI implements `Approver` with a modal dialog (through the agent's
//! channel approver); headless `lathe exec` uses [`HeadlessApprover`], which
//! has no person to ask and denies, telling the model why.

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::protocol::{ApprovalDecision, ApprovalMode, DecisionSource, Effect};

/// Whether a call may run as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// Run without asking.
    Auto,
    /// Run only if a grant covers it or a person approves.
    Ask { reason: String },
    /// Never run in this mode.
    Refuse { reason: String },
}

/// The approval-mode table (DESIGN.md). Calls outside the workspace never
/// reach this stage: the guardrail refuses them in every mode.
pub fn requirement(mode: ApprovalMode, effect: Effect) -> Requirement {
    use ApprovalMode::{Ask, AutoEdit, FullAuto, ReadOnly};
    match (effect, mode) {
        (Effect::Read, _) => Requirement::Auto,
        (Effect::Write, ReadOnly) => Requirement::Refuse {
            reason: "approval mode read-only does not allow file changes".into(),
        },
        (Effect::Write, Ask) => Requirement::Ask {
            reason: "approval mode ask: file changes need approval".into(),
        },
        (Effect::Write, AutoEdit | FullAuto) => Requirement::Auto,
        (Effect::Exec, ReadOnly) => Requirement::Refuse {
            reason: "approval mode read-only does not allow running commands".into(),
        },
        (Effect::Exec, Ask | AutoEdit) => Requirement::Ask {
            reason: format!("approval mode {mode}: running commands needs approval"),
        },
        (Effect::Network | Effect::External, FullAuto) | (Effect::Exec, FullAuto) => {
            Requirement::Auto
        }
        (Effect::Network | Effect::External, _) => Requirement::Ask {
            reason: format!("approval mode {mode}: network and external tools need approval"),
        },
    }
}

/// One call waiting for a decision.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    pub call_id: String,
    pub tool: String,
    pub arguments: Value,
    pub effect: Effect,
    pub scope: String,
    pub reason: String,
    /// For file changes: the unified diff the call would apply.
    pub diff: Option<String>,
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
        let hint = match request.effect {
            Effect::Write => "--approval auto-edit or --approval full-auto",
            _ => "--approval full-auto",
        };
        ApprovalDecision::Deny {
            message: Some(format!(
                "{}; lathe is running headless, so there is no one to approve `{}`. \
                 Do not retry it: continue without it, or tell the user to rerun with {hint}.",
                request.reason, request.tool
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_matches_the_design() {
        use ApprovalMode::*;
        use Effect::*;
        let auto = |m, e| requirement(m, e) == Requirement::Auto;
        let ask = |m, e| matches!(requirement(m, e), Requirement::Ask { .. });
        let refuse = |m, e| matches!(requirement(m, e), Requirement::Refuse { .. });
        for m in ApprovalMode::ALL {
            assert!(auto(m, Read));
        }
        assert!(refuse(ReadOnly, Write) && refuse(ReadOnly, Exec) && ask(ReadOnly, Network));
        assert!(ask(Ask, Write) && ask(Ask, Exec) && ask(Ask, Network));
        assert!(auto(AutoEdit, Write) && ask(AutoEdit, Exec) && ask(AutoEdit, Network));
        assert!(auto(FullAuto, Write) && auto(FullAuto, Exec) && auto(FullAuto, Network));
        assert!(auto(FullAuto, External) && ask(AutoEdit, External));
    }

    #[tokio::test]
    async fn headless_denies_and_says_how_to_allow() {
        let req = ApprovalRequest {
            call_id: "c".into(),
            tool: "write_file".into(),
            arguments: Value::Null,
            effect: Effect::Write,
            scope: "a.txt".into(),
            reason: "approval mode ask: file changes need approval".into(),
            diff: None,
        };
        let d = HeadlessApprover
            .decide(&req, &CancellationToken::new())
            .await;
        let ApprovalDecision::Deny { message: Some(m) } = d else {
            panic!("expected a denial with a message")
        };
        assert!(
            m.contains("headless") && m.contains("--approval auto-edit"),
            "{m}"
        );
    }
}
