//! What the dispatcher tells a call's hooks, and how it runs them.

use serde_json::{Value, json};

use super::Shared;
use crate::policy::user_hooks::HookRunner;
use crate::protocol::operation::Operation;
use crate::protocol::redact::Redact;
use crate::provider::ToolCall;

/// What a call looks like to a hook: an event given to a program, so
/// redacted as events are.
pub(super) fn hook_input(
    shared: &Shared,
    event: &str,
    call: &ToolCall,
    tool: &str,
    args: &Value,
    ops: &[Operation],
) -> Value {
    let mut input = json!({
        "hook_event_name": event,
        "session_id": shared.settings.session_id,
        "cwd": shared.services.workspace.root(),
        "approval_mode": shared.mode(),
        "tool_name": tool,
        "tool_use_id": call.id,
        "tool_input": args,
        "operations": ops,
    });
    input.redact(&shared.services.redactor);
    input
}

pub(crate) fn hook_runner(shared: &Shared) -> HookRunner<'_> {
    HookRunner {
        workspace: shared.services.workspace.root(),
        env_remove: &shared.settings.hook_env_remove,
        sandbox: shared.settings.hook_sandbox.as_ref(),
        reads: Some(shared.services.guardrails.reads()),
        looks_only: shared.looks_only(),
    }
}

/// A plan writes nothing, through a hook neither: without a sandbox to
/// run them read-only, a call that hooks would see is refused.
pub(super) fn hooks_would_write_while_planning(shared: &Shared, name: &str) -> bool {
    let unconfined = shared
        .settings
        .hook_sandbox
        .as_ref()
        .is_none_or(|s| s.mode == crate::sandbox::Mode::Off);
    shared.looks_only()
        && unconfined
        && !(shared.before_hooks(name).is_empty() && shared.after_hooks(name).is_empty())
}

/// The decision on `request`; a person asked is told through the
/// `notification` hooks meanwhile (the answer does not wait for them).
pub(super) async fn decide_telling(
    shared: &Shared,
    request: &crate::protocol::ApprovalRequest,
    source: crate::protocol::DecisionSource,
    cancel: &tokio_util::sync::CancellationToken,
) -> crate::protocol::ApprovalDecision {
    let decide = shared.services.approver.decide(request, cancel);
    if source != crate::protocol::DecisionSource::User {
        return decide.await;
    }
    let notify = crate::agent::events::fire(
        shared,
        crate::policy::session_hooks::SessionEvent::Notification,
        "permission_prompt",
        serde_json::json!({
            "message": format!("Lathe needs your permission to use {}", request.tool),
            "notification_type": "permission_prompt",
        }),
    );
    tokio::pin!(decide, notify);
    let mut told = false;
    loop {
        tokio::select! {
            d = &mut decide => break d,
            _ = &mut notify, if !told => told = true,
        }
    }
}
