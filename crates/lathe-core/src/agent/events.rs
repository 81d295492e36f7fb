//! The session's events, told to the hooks set on them
//! ([`crate::policy::session_hooks`]): what each hook gets, and what the
//! agent does with what they say.

use serde_json::{Value, json};

use super::Shared;
use crate::policy::session_hooks::{EventOutcome, SessionEvent};
use crate::protocol::redact::Redact;

/// Runs the hooks of `event` whose matcher takes `subject`, with `extra`
/// beside what every hook gets (redacted, as events are).
pub(crate) async fn fire(
    shared: &Shared,
    event: SessionEvent,
    subject: &str,
    extra: Value,
) -> EventOutcome {
    let hooks: Vec<crate::policy::user_hooks::HookSpec> = shared
        .state()
        .user_hooks
        .of(event, subject)
        .into_iter()
        .cloned()
        .collect();
    if hooks.is_empty() {
        return EventOutcome::default();
    }
    let mut input = json!({
        "hook_event_name": event.claude_name(),
        "session_id": shared.settings.session_id,
        "cwd": shared.services.workspace.root(),
        "permission_mode": shared.mode(),
    });
    if let (Some(map), Value::Object(more)) = (input.as_object_mut(), extra) {
        map.extend(more);
    }
    input.redact(&shared.services.redactor);
    let refs: Vec<&crate::policy::user_hooks::HookSpec> = hooks.iter().collect();
    let said = super::dispatch::hooks::hook_runner(shared)
        .event(event, &refs, &input)
        .await;
    if let Some(reason) = &said.block {
        tracing::info!(event = event.key(), %reason, "a hook blocked");
    }
    said
}

/// The `user_prompt_submit` hooks on what the person sent (a message, or
/// one sent mid-turn): `Err` with why they held it, else what they add
/// for the model to read. An interrupt ends the wait (nothing held).
pub(crate) async fn prompt_submitted(
    shared: &Shared,
    text: &str,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<Option<String>, String> {
    let said = tokio::select! {
        said = fire(
            shared,
            SessionEvent::UserPromptSubmit,
            "",
            json!({"prompt": text}),
        ) => said,
        () = cancel.cancelled() => return Ok(None),
    };
    if let Some(reason) = said.block {
        return Err(reason);
    }
    Ok(context_note(shared, SessionEvent::UserPromptSubmit, &said))
}

/// What hooks said the model should read, as one note, labelled as
/// theirs (not the person's words) and with secrets kept out as any
/// text to the model is.
pub(crate) fn context_note(
    shared: &Shared,
    event: SessionEvent,
    said: &EventOutcome,
) -> Option<String> {
    if said.context.is_empty() {
        return None;
    }
    let mut note = format!(
        "[Context from the person's {} hooks, not their words:]\n{}",
        event.key(),
        said.context.join("\n\n")
    );
    shared.to_model(&mut note);
    Some(note)
}
