//! Hooks on the session's events beside a tool call's: `session_start`,
//! `user_prompt_submit`, `notification`, `stop`, `subagent_stop`,
//! `pre_compact` and `session_end`, in the shapes Claude Code documents
//! for the same events, so a person's hook scripts work unchanged.
//!
//! Each gets one JSON object on stdin (`hook_event_name` as Claude Code
//! names it, `session_id`, `cwd`, `permission_mode`, and what the event
//! has: `source`, `prompt`, `message`, `stop_hook_active`, `trigger`,
//! `reason`). What it says back:
//! - exit 2: block, with stderr as the reason (where the event can be
//!   blocked: a prompt, the end of a turn or of a subagent, a compaction);
//! - exit 0 with a JSON object: `decision: "block"` and `reason`;
//!   `continue: false` and `stopReason` (a block too);
//!   `hookSpecificOutput.additionalContext`, what the model reads;
//! - exit 0 with plain text: what the model reads, for `session_start`
//!   and `user_prompt_submit`;
//! - any other exit, a crash or a timeout: nothing (the session goes on,
//!   as in Claude Code), logged.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::user_hooks::{HookRunner, HookSpec, is_block, reason_from};

/// An event of the session a hook may be set on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionEvent {
    SessionStart,
    UserPromptSubmit,
    Notification,
    Stop,
    SubagentStop,
    PreCompact,
    SessionEnd,
}

impl SessionEvent {
    pub const ALL: [SessionEvent; 7] = [
        SessionEvent::SessionStart,
        SessionEvent::UserPromptSubmit,
        SessionEvent::Notification,
        SessionEvent::Stop,
        SessionEvent::SubagentStop,
        SessionEvent::PreCompact,
        SessionEvent::SessionEnd,
    ];

    /// Its key in the config (`[[hooks.session_start]]`).
    pub fn key(self) -> &'static str {
        match self {
            SessionEvent::SessionStart => "session_start",
            SessionEvent::UserPromptSubmit => "user_prompt_submit",
            SessionEvent::Notification => "notification",
            SessionEvent::Stop => "stop",
            SessionEvent::SubagentStop => "subagent_stop",
            SessionEvent::PreCompact => "pre_compact",
            SessionEvent::SessionEnd => "session_end",
        }
    }

    /// Its name in Claude Code (`hook_event_name`).
    pub fn claude_name(self) -> &'static str {
        match self {
            SessionEvent::SessionStart => "SessionStart",
            SessionEvent::UserPromptSubmit => "UserPromptSubmit",
            SessionEvent::Notification => "Notification",
            SessionEvent::Stop => "Stop",
            SessionEvent::SubagentStop => "SubagentStop",
            SessionEvent::PreCompact => "PreCompact",
            SessionEvent::SessionEnd => "SessionEnd",
        }
    }

    /// The event Claude Code's name names.
    pub fn from_claude(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.claude_name() == name)
    }

    /// Whether a hook may stop what the event is about.
    pub fn can_block(self) -> bool {
        matches!(
            self,
            SessionEvent::UserPromptSubmit
                | SessionEvent::Stop
                | SessionEvent::SubagentStop
                | SessionEvent::PreCompact
        )
    }

    /// Whether plain text on stdout is context for the model.
    fn text_is_context(self) -> bool {
        matches!(
            self,
            SessionEvent::SessionStart | SessionEvent::UserPromptSubmit
        )
    }
}

/// What the hooks of one event said, together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventOutcome {
    /// Why what the event is about must not go on (the first hook that
    /// said so).
    pub block: Option<String>,
    /// What the model is to read, each hook's in order.
    pub context: Vec<String>,
}

/// The most a hook's context or reason may be (as Claude Code caps it).
const MAX_SAID: usize = 10_000;

impl HookRunner<'_> {
    /// Runs `hooks` of `event` on `input`, one after the other (their
    /// order is the config's), and gathers what they said.
    pub async fn event(
        &self,
        event: SessionEvent,
        hooks: &[&HookSpec],
        input: &Value,
    ) -> EventOutcome {
        let mut out = EventOutcome::default();
        for hook in hooks {
            let said = self.one(event, hook, input).await;
            if out.block.is_none() {
                out.block = said.block;
            }
            out.context.extend(said.context);
        }
        out
    }

    async fn one(&self, event: SessionEvent, hook: &HookSpec, input: &Value) -> EventOutcome {
        let ran = match self.run(hook, input).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(hook = %hook.command, event = event.key(), error = %e, "a hook failed; the session goes on");
                return EventOutcome::default();
            }
        };
        match ran.code {
            Some(2) if event.can_block() => EventOutcome {
                block: Some(reason_from(&ran.stderr, "a hook blocked it")),
                context: Vec::new(),
            },
            Some(0) => said(event, &ran.stdout),
            code => {
                tracing::warn!(hook = %hook.command, event = event.key(), ?code, stderr = %ran.stderr.trim(), "a hook failed; the session goes on");
                EventOutcome::default()
            }
        }
    }
}

/// What a hook that exited 0 printed, read.
fn said(event: SessionEvent, stdout: &str) -> EventOutcome {
    let out = stdout.trim();
    let cut = |s: &str| crate::protocol::text::shorten(s, MAX_SAID);
    let mut said = EventOutcome::default();
    if out.is_empty() {
        return said;
    }
    let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(out) else {
        if event.text_is_context() {
            said.context.push(cut(out));
        }
        return said;
    };
    let text = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    if event.can_block() {
        if is_block(&v) {
            said.block = Some(cut(
                &text("reason").unwrap_or_else(|| "a hook blocked it".into())
            ));
        } else if v.get("continue") == Some(&Value::Bool(false)) {
            said.block = Some(cut(
                &text("stopReason").unwrap_or_else(|| "a hook stopped it".into())
            ));
        }
    }
    if let Some(context) = v
        .pointer("/hookSpecificOutput/additionalContext")
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
    {
        said.context.push(cut(context));
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn what_a_hook_prints_is_read_as_claude_code_reads_it() {
        let block = said(
            SessionEvent::Stop,
            r#"{"decision": "block", "reason": "tests still fail"}"#,
        );
        assert_eq!(block.block.as_deref(), Some("tests still fail"));
        let stop = said(
            SessionEvent::UserPromptSubmit,
            r#"{"continue": false, "stopReason": "no prompts after six"}"#,
        );
        assert_eq!(stop.block.as_deref(), Some("no prompts after six"));
        let context = said(
            SessionEvent::UserPromptSubmit,
            r#"{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "branch: main"}}"#,
        );
        assert_eq!(context.context, ["branch: main"]);
        assert_eq!(
            said(SessionEvent::SessionStart, "today: Monday\n").context,
            ["today: Monday"]
        );
        // Plain text is context only where Claude Code takes it so; a
        // block only where the event can be blocked.
        assert!(said(SessionEvent::Stop, "done").context.is_empty());
        assert!(
            said(SessionEvent::SessionEnd, r#"{"decision":"block"}"#)
                .block
                .is_none()
        );
        assert_eq!(
            SessionEvent::from_claude("PreCompact"),
            Some(SessionEvent::PreCompact)
        );
    }

    proptest! {
        /// Whatever a hook prints, it is read or ignored, never a panic,
        /// and what it says is bounded.
        #[test]
        fn any_output_is_read_safely(out in ".{0,400}", event in 0usize..7) {
            let e = SessionEvent::ALL[event];
            let s = said(e, &out);
            prop_assert!(s.context.iter().all(|c| c.len() <= MAX_SAID + 8));
            prop_assert!(s.block.is_none() || e.can_block());
        }
    }
}
