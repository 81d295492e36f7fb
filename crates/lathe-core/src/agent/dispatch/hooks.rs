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
        "tool_input": with_claude_names(args, shared.services.workspace.root()),
        "operations": ops,
    });
    input.redact(&shared.services.redactor);
    input
}

/// A call's arguments with the names Claude Code's hooks read beside
/// Lathe's (a script written for it finds `file_path`, absolute, and
/// `old_string`/`new_string`); nothing of Lathe's is changed.
fn with_claude_names(args: &Value, root: &std::path::Path) -> Value {
    let mut out = args.clone();
    let Some(map) = out.as_object_mut() else {
        return out;
    };
    if let Some(path) = map.get("path").and_then(Value::as_str)
        && !map.contains_key("file_path")
    {
        let full = root.join(path).display().to_string();
        map.insert("file_path".into(), Value::String(full));
    }
    for (lathe, claude) in [("old_text", "old_string"), ("new_text", "new_string")] {
        if let Some(v) = map.get(lathe).cloned()
            && !map.contains_key(claude)
        {
            map.insert(claude.into(), v);
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_names_come_beside_lathes() {
        let root = std::path::Path::new("/ws");
        let v = with_claude_names(
            &json!({"path": "src/a.rs", "old_text": "a", "new_text": "b"}),
            root,
        );
        assert_eq!(v["path"], "src/a.rs");
        assert_eq!(v["file_path"], "/ws/src/a.rs");
        assert_eq!(v["old_string"], "a");
        assert_eq!(v["new_string"], "b");
        // A call that already says them keeps its own; not an object, as is.
        let v = with_claude_names(&json!({"path": "a", "file_path": "x"}), root);
        assert_eq!(v["file_path"], "x");
        assert_eq!(with_claude_names(&json!("s"), root), json!("s"));
        assert_eq!(
            with_claude_names(&json!({"command": "ls"}), root),
            json!({"command": "ls"})
        );
    }
}
