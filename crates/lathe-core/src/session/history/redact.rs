//! What the session record keeps passes the secret matcher: every text
//! of an item (the person's and the model's words, reasoning, what goes
//! back to the server verbatim, tool results, error bodies) is redacted
//! as it is written, and again as it is read, so a record written before
//! redaction reached it sends no key back either.
//!
//! Left as they are: ids, hashes, numbers, grants (operations, never
//! free text) and images (their bytes are not text).

use crate::protocol::redact::{Redact, Scrub};
use crate::provider::{Carried, ToolCall};

use super::Item;

/// Redacts `item`; `shown`: an answer and reasoning redacted as they
/// streamed are kept as they are (going over them again would only cost).
pub(super) fn redact_item(item: &mut Item, s: &dyn Scrub, shown: bool) {
    let kept = match item {
        Item::Assistant {
            text, reasoning, ..
        } if shown => Some((std::mem::take(text), std::mem::take(reasoning))),
        _ => None,
    };
    item.redact(s);
    if let (
        Some((t, r)),
        Item::Assistant {
            text, reasoning, ..
        },
    ) = (kept, item)
    {
        (*text, *reasoning) = (t, r);
    }
}

impl Redact for Item {
    fn redact(&mut self, s: &dyn Scrub) {
        match self {
            Item::Session {
                workspace,
                model,
                base_url,
                ..
            } => {
                workspace.redact(s);
                model.redact(s);
                base_url.redact(s);
            }
            Item::Model { model } => model.redact(s),
            Item::Spent(spent) => {
                spent.redact(s);
                spent.model.redact(s);
            }
            Item::Steer { text, .. } => text.redact(s),
            Item::User { text, note, .. } => {
                text.redact(s);
                note.redact(s);
            }
            Item::Assistant {
                text,
                tool_calls,
                reasoning,
                carried,
                model,
                ..
            } => {
                text.redact(s);
                tool_calls.iter_mut().for_each(|c| redact_call(c, s));
                reasoning.redact(s);
                carried.iter_mut().for_each(|c| redact_carried(c, s));
                model.redact(s);
            }
            Item::ToolOutput(output) => output.content.redact(s),
            Item::TurnAborted { reason, .. } => reason.redact(s),
            Item::Compacted {
                summary, reason, ..
            } => {
                summary.redact(s);
                reason.redact(s);
            }
            Item::Rewind {
                restored, removed, ..
            } => {
                restored.redact(s);
                removed.redact(s);
            }
            Item::Effort { .. }
            | Item::Request { .. }
            | Item::Refused { .. }
            | Item::Approved { .. }
            | Item::TurnEnd { .. }
            | Item::Clear
            | Item::Grant { .. }
            | Item::Revoke { .. }
            | Item::Checkpoint { .. } => {}
        }
    }
}

/// A call's arguments are redacted as the JSON they are (a match never
/// spans two fields, so they stay JSON); arguments that are not JSON, as
/// text.
fn redact_call(call: &mut ToolCall, s: &dyn Scrub) {
    if s.scrub(&call.arguments).is_none() {
        return;
    }
    match serde_json::from_str::<serde_json::Value>(&call.arguments) {
        Ok(mut value) => {
            value.redact(s);
            call.arguments = value.to_string();
        }
        Err(_) => call.arguments.redact(s),
    }
}

/// A carried item is JSON too: its strings are redacted (a signature or
/// encrypted content that spells a key is spoiled, as it should be).
fn redact_carried(carried: &mut Carried, s: &dyn Scrub) {
    carried.item.redact(s);
}

/// A short one-way hint of `key` as sent to `base_url`: enough to tell
/// whether the key in use now is the one a session used there, nothing
/// to find the key by.
pub fn key_hint(base_url: &str, key: &str) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    ctx.update(b"lathe key hint\0");
    ctx.update(base_url.as_bytes());
    ctx.update(b"\0");
    ctx.update(key.as_bytes());
    ctx.finish()
        .as_ref()
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}
