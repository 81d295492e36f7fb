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
    shared.planning()
        && unconfined
        && !(shared.before_hooks(name).is_empty() && shared.after_hooks(name).is_empty())
}
