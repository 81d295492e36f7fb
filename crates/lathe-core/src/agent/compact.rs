//! Context that never runs out: how full the model's context is, and
//! compaction, which folds the older part of the conversation into one
//! summary the model writes, keeping the recent part verbatim.
//!
//! Fullness is the last response's usage (input and output: what the
//! next request starts from) plus an estimate (4 bytes a token) of what
//! was added since. Compaction runs before a request when the context
//! is `compact_at` percent full of a known window, when the server says
//! the conversation is too long (then the request is tried once more),
//! and on `/compact`. It never splits a tool call from its results: it
//! cuts only before a message of the person or of the model. The part
//! kept verbatim is at most 30 % of the window; the part summarized is
//! sent as a plain transcript (long tool outputs cut), without tools, so
//! any provider takes it. A summary that would not free at least 5 % is
//! refused, so compaction never loops.

use tokio_util::sync::CancellationToken;

use super::{Conversation, Shared};
use crate::protocol::AgentEvent;
use crate::provider::{ChatRequest, Message, Quiet};
use crate::session::history::{Item, apply_compaction};

/// The share of the window (percent) kept verbatim.
const KEEP_SHARE: u64 = 30;
/// The most of one tool output the summarizer reads.
const TOOL_OUTPUT_CHARS: usize = 2_000;
/// The share of the window (percent) the summarizer's input may take.
const TRANSCRIPT_SHARE: u64 = 60;
/// Without a known window: the most the summarizer reads (characters).
const TRANSCRIPT_CHARS: usize = 400_000;

const SUMMARY_PROMPT: &str = "You are compacting the history of a pair-programming session \
between a person and a coding assistant, so the assistant can go on with less context. \
Write a summary the assistant will read instead of the conversation. Keep: the person's goals \
and every instruction or preference they gave (quote them where the wording matters); \
decisions made and why; the files read, created or changed, and what state they are in; \
commands run and what they showed; errors met and what was tried; what is done and what \
remains to do, as a list. Keep names, paths, identifiers and numbers exact. Leave out \
greetings and anything that no longer matters. If the transcript starts with an earlier \
summary, fold it in. Write plain text, at most about 1,500 words. Do not call tools.";

/// Where the context stands after the last response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ContextCount {
    /// Tokens the last request and its answer took, as the provider said.
    pub(crate) tokens: u64,
    /// How many messages those tokens cover.
    pub(crate) counted: usize,
    /// What the system prompt and tool schemas take (the provider's count
    /// less the estimate of the messages).
    pub(crate) overhead: u64,
}

/// About how many tokens `messages` take (4 bytes a token).
pub(crate) fn estimate(messages: &[Message]) -> u64 {
    let bytes: usize = messages
        .iter()
        .map(|m| match m {
            Message::User(t) => t.len() + 16,
            // An image costs about its pixels / 750 tokens (Anthropic's
            // rule; OpenAI's tiles come to about the same).
            Message::UserImages { text, images } => {
                text.len()
                    + 16
                    + images
                        .iter()
                        .map(|i| {
                            let pixels = u64::from(i.width) * u64::from(i.height);
                            usize::try_from(pixels / 750 * 4).unwrap_or(usize::MAX)
                        })
                        .sum::<usize>()
            }
            Message::Assistant {
                text,
                tool_calls,
                reasoning,
                carried,
            } => {
                // Reasoning that goes back is read again (encrypted
                // items are about as long as the text they hold).
                let carried = if carried.is_empty() {
                    0
                } else {
                    reasoning.len().max(512)
                };
                text.len()
                    + 16
                    + carried
                    + tool_calls
                        .iter()
                        .map(|c| c.name.len() + c.arguments.len() + c.id.len() + 16)
                        .sum::<usize>()
            }
            Message::ToolResults(rs) => rs
                .iter()
                .map(|r| r.content.len() + r.call_id.len() + 16)
                .sum(),
        })
        .sum();
    u64::try_from(bytes / 4).unwrap_or(u64::MAX)
}

impl Conversation {
    /// Adds `note` to what the model reads first with the next message.
    pub(crate) fn add_note(&mut self, note: String) {
        self.note = Some(match self.note.take() {
            Some(n) => format!("{n}\n\n{note}"),
            None => note,
        });
    }

    /// Tokens the conversation takes now.
    pub(crate) fn context_tokens(&self) -> u64 {
        let since = self.context.counted.min(self.messages.len());
        if self.context.tokens == 0 {
            return self.context.overhead + estimate(&self.messages);
        }
        self.context.tokens + estimate(&self.messages[since..])
    }

    /// Takes in a response's usage, once its message is the last of the
    /// history.
    pub(crate) fn counted(&mut self, usage: crate::protocol::Usage) {
        self.counted_upto(usage, self.messages.len());
    }

    /// Takes in a response's usage once its message and then the results
    /// of its calls are in the history (the results are estimated).
    pub(crate) fn counted_before_results(&mut self, usage: crate::protocol::Usage) {
        self.counted_upto(usage, self.messages.len().saturating_sub(1));
    }

    fn counted_upto(&mut self, usage: crate::protocol::Usage, n: usize) {
        let n = n.min(self.messages.len());
        let tokens = usage.input_tokens + usage.output_tokens;
        if tokens == 0 {
            // A server that reports no usage: estimates only.
            self.context = ContextCount {
                counted: n,
                tokens: 0,
                overhead: self.context.overhead,
            };
            return;
        }
        self.context = ContextCount {
            tokens,
            counted: n,
            overhead: tokens.saturating_sub(estimate(&self.messages[..n])),
        };
    }
}

/// The model's window: configured, else known for the model in use.
pub(crate) fn window(shared: &Shared) -> Option<u64> {
    shared
        .settings
        .context_window
        .or_else(|| shared.model_info(&shared.model()).context_window)
}

/// How many bytes the MCP servers' tool schemas may take before they wait
/// behind `tool_search`: `[tools] search_at` percent of the window (about
/// four bytes a token; 128k tokens where the window is not known); none
/// at 100.
pub(crate) fn tool_search_budget(shared: &Shared) -> Option<usize> {
    let percent = u64::from(shared.settings.tool_search_at);
    (percent < 100).then(|| {
        let window = window(shared).unwrap_or(128_000);
        usize::try_from(window.saturating_mul(4).saturating_mul(percent) / 100)
            .unwrap_or(usize::MAX)
    })
}

/// Tells the front end how full the context is.
pub(crate) fn report(shared: &Shared, conv: &Conversation) {
    let tokens = conv.context_tokens();
    shared.state().context_tokens = tokens;
    shared.services.emitter.emit(AgentEvent::ContextUpdated {
        tokens,
        window: window(shared),
    });
}

/// Whether the context is full enough to compact before the next request.
pub(crate) fn due(shared: &Shared, conv: &Conversation) -> bool {
    window(shared).is_some_and(|w| {
        conv.context_tokens().saturating_mul(100)
            >= w.saturating_mul(u64::from(shared.settings.compact_at))
    })
}

/// Why a compaction did not happen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CompactError {
    #[error("there is nothing old enough to summarize")]
    Nothing,
    #[error("the summary request failed: {0}")]
    Provider(String),
    #[error("the model wrote an empty summary")]
    Empty,
    #[error("the summary would free too little context ({before} → {after} tokens)")]
    TooLittle { before: u64, after: u64 },
    #[error("interrupted")]
    Interrupted,
    #[error("a hook blocked it: {0}")]
    Blocked(String),
}

/// Where to cut: the first message kept verbatim. Cuts fall only before
/// a message of the person or the model's (never between a call and its
/// results); the kept part stays within `budget` tokens, and at least one
/// message is summarized.
fn split_point(messages: &[Message], budget: u64) -> Option<usize> {
    let mut kept = 0u64;
    let mut best = None;
    for i in (1..messages.len()).rev() {
        kept += estimate(std::slice::from_ref(&messages[i]));
        if kept > budget {
            break;
        }
        if !matches!(messages[i], Message::ToolResults(_)) {
            best = Some(i);
        }
    }
    // Too big to keep even the last exchange: keep only what must stay
    // together at the end (the last message, and its call if it holds
    // results).
    best.or_else(|| {
        let last = messages.len().checked_sub(1)?;
        let cut = match messages[last] {
            Message::ToolResults(_) => last.checked_sub(1)?,
            _ => last,
        };
        (cut > 0).then_some(cut)
    })
}

/// The part to summarize as a plain transcript, within `max_chars`
/// (its start dropped first, but an earlier summary it opens with).
fn transcript(messages: &[Message], max_chars: usize) -> String {
    let cut = |s: &str, max: usize| {
        if s.len() <= max {
            return s.to_string();
        }
        let kept = crate::protocol::text::cut(s, max);
        format!("{kept}\n[… {} more bytes cut]", s.len() - kept.len())
    };
    let mut parts: Vec<String> = messages
        .iter()
        .map(|m| match m {
            Message::User(t) => format!("PERSON:\n{t}"),
            Message::UserImages { text, images } => {
                let shown: Vec<String> = images.iter().map(|i| i.label()).collect();
                format!("PERSON:\n{text}\n{}", shown.join(" "))
            }
            Message::Assistant {
                text, tool_calls, ..
            } => {
                let mut out = format!("ASSISTANT:\n{text}");
                for c in tool_calls {
                    out.push_str(&format!(
                        "\n[calls {} with {}]",
                        c.name,
                        cut(&c.arguments, TOOL_OUTPUT_CHARS)
                    ));
                }
                out
            }
            Message::ToolResults(rs) => rs
                .iter()
                .map(|r| {
                    format!(
                        "TOOL RESULT{}:\n{}",
                        if r.is_error { " (error)" } else { "" },
                        cut(&r.content, TOOL_OUTPUT_CHARS)
                    )
                })
                .collect::<Vec<_>>()
                .join("\n\n"),
        })
        .collect();
    let total = |p: &[String]| p.iter().map(|s| s.len() + 2).sum::<usize>();
    let keep_first = parts
        .first()
        .is_some_and(|p| p.contains(crate::session::history::SUMMARY_HEADING));
    let mut dropped = 0usize;
    while total(&parts) > max_chars && parts.len() > 1 {
        parts.remove(usize::from(keep_first));
        dropped += 1;
    }
    if dropped > 0 {
        let at = usize::from(keep_first);
        parts.insert(at, format!("[{dropped} older messages left out]"));
    }
    let mut text = parts.join("\n\n");
    if text.len() > max_chars {
        text = cut(&text, max_chars);
    }
    format!("The conversation so far:\n\n{text}\n\nWrite the summary now.")
}

/// Compacts the conversation; `reason` is `auto`, `overflow` or `asked`.
pub(crate) async fn compact(
    shared: &Shared,
    conv: &mut Conversation,
    turn_id: Option<u64>,
    reason: &str,
    cancel: &CancellationToken,
) -> Result<(), CompactError> {
    // A `pre_compact` hook may hold it (`manual` when asked, else `auto`).
    let trigger = if reason == "asked" { "manual" } else { "auto" };
    let said = super::events::fire(
        shared,
        crate::policy::session_hooks::SessionEvent::PreCompact,
        trigger,
        serde_json::json!({"trigger": trigger, "custom_instructions": ""}),
    )
    .await;
    if let Some(reason) = said.block {
        return Err(CompactError::Blocked(reason));
    }
    // A server's count may fall short (or be missing): the estimate of
    // what is sent now is the floor.
    let before = conv
        .context_tokens()
        .max(conv.context.overhead + estimate(&conv.messages));
    let window = window(shared);
    let budget = window.unwrap_or(before).saturating_mul(KEEP_SHARE) / 100;
    let split = split_point(&conv.messages, budget).ok_or(CompactError::Nothing)?;
    let max_chars = window.map_or(TRANSCRIPT_CHARS, |w| {
        usize::try_from(w.saturating_mul(TRANSCRIPT_SHARE) / 100 * 4).unwrap_or(usize::MAX)
    });
    let input = [Message::User(transcript(
        &conv.messages[..split],
        max_chars,
    ))];
    let model = shared.model();
    let mut request = ChatRequest::new(&model, SUMMARY_PROMPT, &input, &[]);
    request.effort = shared.effort();
    let completion = match shared
        .services
        .provider
        .complete(request, &mut Quiet("compaction"), cancel)
        .await
    {
        Ok(c) => c,
        Err(crate::provider::ProviderError::Cancelled) => return Err(CompactError::Interrupted),
        Err(e) => return Err(CompactError::Provider(e.to_string())),
    };
    let mut usage = completion.usage;
    if usage.cost_usd.is_none() {
        usage.cost_usd = shared.price(&model).map(|p| p.cost(&usage));
    }
    conv.usage.add(usage);
    shared
        .spend(super::budget::By::COMPACTION, &model, usage)
        .await;
    let summary = completion.text.trim();
    if summary.is_empty() {
        return Err(CompactError::Empty);
    }
    let kept = conv.messages.len() - split;
    let mut next = conv.messages.clone();
    apply_compaction(&mut next, summary, kept);
    let after = conv.context.overhead + estimate(&next);
    if after.saturating_mul(100) > before.saturating_mul(95) {
        return Err(CompactError::TooLittle { before, after });
    }
    shared
        .record(Item::Compacted {
            summary: summary.to_string(),
            kept,
            reason: reason.to_string(),
        })
        .await;
    conv.messages = next;
    conv.context = ContextCount {
        tokens: 0,
        counted: 0,
        overhead: conv.context.overhead,
    };
    tracing::info!(
        reason,
        before,
        after,
        summarized = split,
        kept,
        "context compacted"
    );
    shared.services.emitter.emit(AgentEvent::ContextCompacted {
        turn_id,
        reason: reason.to_string(),
        before_tokens: before,
        after_tokens: after,
        summarized: split,
        kept,
    });
    report(shared, conv);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{ToolCall, ToolOutput};

    fn user(t: &str) -> Message {
        Message::User(t.into())
    }

    fn call(id: &str, args: &str) -> Message {
        Message::assistant(
            String::new(),
            vec![ToolCall {
                id: id.into(),
                name: "read_file".into(),
                arguments: args.into(),
            }],
        )
    }

    fn result(id: &str, content: &str) -> Message {
        Message::ToolResults(vec![ToolOutput {
            call_id: id.into(),
            content: content.into(),
            is_error: false,
        }])
    }

    #[test]
    fn the_cut_never_separates_a_call_from_its_results() {
        let big = "x".repeat(4000);
        let messages = vec![
            user("start"),
            call("a", "{}"),
            result("a", &big),
            call("b", "{}"),
            result("b", &big),
            Message::assistant("done", vec![]),
        ];
        for budget in [0, 10, 1000, 1100, 2100, 100_000] {
            let Some(at) = split_point(&messages, budget) else {
                continue;
            };
            assert!(at > 0, "something is summarized");
            assert!(
                !matches!(messages[at], Message::ToolResults(_)),
                "budget {budget}: cut at {at} splits a call from its results"
            );
        }
        assert_eq!(
            split_point(&messages, 1100),
            Some(3),
            "keeps the last call whole"
        );
        assert_eq!(split_point(&[user("only")], 10), None);
    }

    #[test]
    fn the_transcript_keeps_the_earlier_summary_and_cuts_long_outputs() {
        let messages = vec![
            user(&format!(
                "{}\n\nthe old summary",
                crate::session::history::SUMMARY_HEADING
            )),
            call("a", "{\"path\":\"src/lib.rs\"}"),
            result("a", &"y".repeat(10_000)),
            user("middle"),
            user("last"),
        ];
        let t = transcript(&messages, 100_000);
        assert!(t.contains("the old summary") && t.contains("src/lib.rs"));
        assert!(
            t.contains("more bytes cut") && t.len() < 4_000,
            "{}",
            t.len()
        );
        let small = transcript(&messages, 700);
        assert!(small.contains("the old summary"), "{small}");
        assert!(small.contains("older messages left out"), "{small}");
        assert!(small.contains("last"), "{small}");
    }

    #[test]
    fn usage_then_estimates_count_the_context() {
        let mut conv = Conversation {
            messages: vec![user("hi")],
            ..Conversation::default()
        };
        conv.messages.push(Message::assistant("hello", vec![]));
        conv.counted(crate::protocol::Usage {
            input_tokens: 1000,
            output_tokens: 10,
            ..Default::default()
        });
        assert_eq!(conv.context_tokens(), 1010);
        conv.messages.push(user(&"z".repeat(4000)));
        assert!(conv.context_tokens() >= 2010, "{}", conv.context_tokens());
        assert!(conv.context.overhead > 900, "the system prompt and tools");
    }
}
