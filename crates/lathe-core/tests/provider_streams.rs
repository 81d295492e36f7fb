//! Real server streams, replayed: each file of `../shared/provider-streams`
//! (recorded from the live services, or quoted from the vendors' docs and
//! bug reports) is served byte for byte by a real HTTP server, and the
//! real provider client reads it. What each must amount to: its text, its
//! reasoning (shown and kept to send back), its calls, its stop reason,
//! its usage, or the error it is.
//!
//! The streams are test data of the steering repository, read where they
//! are; a checkout without them fails here rather than skipping.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mock_llm;

use std::path::PathBuf;
use std::time::Duration;

use lathe_core::protocol::StopReason;
use lathe_core::provider::{
    self, ChatRequest, Completion, Message, ProviderError, ProviderKind, ProviderSettings,
    RetryNotice, RetryPolicy, StreamObserver, WireApi,
};
use mock_llm::{MockLlm, Step};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn streams_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/provider-streams")
}

fn fixture(name: &str) -> String {
    let path = streams_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "the provider streams are missing ({}: {e}); they live in the steering \
             repository's shared/ folder, beside this checkout",
            path.display()
        )
    })
}

#[derive(Default)]
struct Seen {
    text: String,
    reasoning: String,
    text_deltas: usize,
    reasoning_deltas: usize,
    /// Reasoning that came after text had begun.
    reasoning_after_text: bool,
    retries: u32,
    /// The server it came from, in its one form.
    server: String,
}

impl StreamObserver for Seen {
    fn text_delta(&mut self, text: &str) {
        self.text.push_str(text);
        self.text_deltas += 1;
    }

    fn reasoning_delta(&mut self, text: &str) {
        if !self.text.is_empty() {
            self.reasoning_after_text = true;
        }
        self.reasoning.push_str(text);
        self.reasoning_deltas += 1;
    }

    fn retrying(&mut self, _notice: &RetryNotice) {
        self.retries += 1;
    }
}

/// Serves `name` as the answer to one request and reads it with the
/// provider of `wire` (no retries, so an error is the stream's own).
async fn replay(name: &str) -> (Result<Completion, ProviderError>, Seen) {
    let wire = if name.starts_with("anthropic-") && !name.contains("openai-compat") {
        WireApi::Anthropic
    } else {
        WireApi::Chat
    };
    replay_as(name, wire).await
}

async fn replay_as(name: &str, wire: WireApi) -> (Result<Completion, ProviderError>, Seen) {
    let mock = MockLlm::start(vec![Step::Raw(fixture(name))]).await;
    let (kind, url) = match wire {
        WireApi::Anthropic => (ProviderKind::Anthropic, mock.anthropic_url()),
        _ => (ProviderKind::OpenAi, mock.openai_url()),
    };
    let mut settings = ProviderSettings::new(kind, url.clone());
    settings.wire = wire;
    settings.retry = RetryPolicy {
        max_retries: 0,
        ..RetryPolicy::default()
    };
    let p = provider::build(settings).unwrap();
    let messages = [Message::User("read notes.txt".into())];
    let mut seen = Seen {
        server: lathe_core::provider::server::normalize(&url).unwrap(),
        ..Seen::default()
    };
    let result = p
        .complete(
            ChatRequest::new("m", "sys", &messages, &[]),
            &mut seen,
            &CancellationToken::new(),
        )
        .await;
    (result, seen)
}

fn ok(r: (Result<Completion, ProviderError>, Seen)) -> (Completion, Seen) {
    match r {
        (Ok(c), seen) => (c, seen),
        (Err(e), _) => panic!("the stream should read: {e}"),
    }
}

fn args(c: &Completion, i: usize) -> Value {
    serde_json::from_str(&c.tool_calls[i].arguments).unwrap_or_else(|e| {
        panic!(
            "call {i} arguments are not JSON ({e}): {}",
            c.tool_calls[i].arguments
        )
    })
}

/// The fields of what goes back with the message (Chat wire).
fn carried_fields(c: &Completion) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    for item in c.carried.iter().filter(|i| i.call_id.is_none()) {
        if let Value::Object(m) = &item.item {
            out.extend(m.clone());
        }
    }
    out
}

#[test]
fn every_stream_in_the_folder_is_replayed_here() {
    let me = include_str!("provider_streams.rs");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(streams_dir()).expect("the provider streams folder") {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let stream =
            (name.ends_with(".sse") || name.ends_with(".json")) && !name.ends_with(".source.json");
        if stream && !me.contains(&format!("\"{name}\"")) {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "streams no test replays: {missing:?}");
}

// ---- OpenAI Chat Completions and compatible servers ----

#[tokio::test]
async fn openai_text_streams_and_counts_usage() {
    for name in [
        "openai-gpt4o-text.sse",
        "openai-gpt41nano-text.sse",
        "mistral-small-text.sse",
    ] {
        let (c, seen) = ok(replay(name).await);
        assert!(!c.text.is_empty(), "{name}");
        assert_eq!(seen.text, c.text, "{name}: every piece was streamed");
        assert!(seen.text_deltas > 1, "{name}: streamed, not at the end");
        assert_eq!(c.stop(), StopReason::EndTurn, "{name}");
        assert!(c.tool_calls.is_empty());
    }
    let (c, _) = ok(replay("openai-gpt41nano-text.sse").await);
    assert!(c.usage.input_tokens > 0 && c.usage.output_tokens > 0);
}

#[tokio::test]
async fn a_length_stop_says_the_answer_was_cut() {
    let (c, _) = ok(replay("openai-gpt4o-length.sse").await);
    assert_eq!(c.stop(), StopReason::MaxTokens);
    assert_eq!(c.stop_reason.as_deref(), Some("length"));
}

#[tokio::test]
async fn a_refusal_is_a_refusal_not_an_answer() {
    let (c, seen) = ok(replay("openai-gpt4o-refusal.sse").await);
    assert_eq!(c.stop(), StopReason::Refusal);
    let refusal = c.refusal.clone().unwrap();
    assert!(refusal.contains("sorry"), "{refusal}");
    assert_eq!(c.text, refusal, "the refusal is what is shown");
    assert_eq!(seen.text, refusal);
}

#[tokio::test]
async fn parallel_calls_and_documented_null_fields() {
    let (c, _) = ok(replay("openai-gpt4o-parallel-tools.sse").await);
    assert!(c.tool_calls.len() >= 2, "{:?}", c.tool_calls);
    for i in 0..c.tool_calls.len() {
        assert!(args(&c, i).is_object());
        assert!(!c.tool_calls[i].id.is_empty());
    }
    assert_ne!(c.tool_calls[0].id, c.tool_calls[1].id);
    assert_eq!(c.stop(), StopReason::ToolUse);
    let (c, _) = ok(replay("openai-docs-tool-call-nulls.sse").await);
    assert!(!c.tool_calls.is_empty());
    for i in 0..c.tool_calls.len() {
        assert!(args(&c, i).is_object(), "{:?}", c.tool_calls[i]);
        assert!(!c.tool_calls[i].name.is_empty());
    }
}

#[tokio::test]
async fn compatible_servers_tool_calls_in_their_shapes() {
    for (name, tool, key) in [
        ("groq-llama33-tool-call.sse", None, None),
        (
            "xai-grok3mini-tool-call.sse",
            Some("read_file"),
            Some("path"),
        ),
        (
            "mistral-small-tool-call.sse",
            Some("read_file"),
            Some("path"),
        ),
        (
            "qwen3max-dashscope-tool-call.sse",
            Some("read_file"),
            Some("path"),
        ),
        (
            "glm-incremental-tool-call.sse",
            Some("grep"),
            Some("pattern"),
        ),
        (
            "anthropic-openai-compat-tool-call.sse",
            Some("read_file"),
            Some("path"),
        ),
    ] {
        let (c, _) = ok(replay(name).await);
        assert_eq!(c.tool_calls.len(), 1, "{name}: {:?}", c.tool_calls);
        if let Some(tool) = tool {
            assert_eq!(
                c.tool_calls[0].name, tool,
                "{name}: the name is not doubled"
            );
        }
        let a = args(&c, 0);
        if let Some(key) = key {
            assert!(a.get(key).is_some(), "{name}: {a}");
        }
        assert_eq!(c.stop(), StopReason::ToolUse, "{name}");
    }
    let (c, _) = ok(replay("anthropic-openai-compat-tool-call.sse").await);
    assert_eq!(args(&c, 0), json!({"path": "a.txt"}));
    let (c, _) = ok(replay("glm-incremental-tool-call.sse").await);
    assert_eq!(c.usage.cache_read_tokens, 128);
}

#[tokio::test]
async fn parallel_calls_that_share_an_index_stay_apart() {
    let (c, _) = ok(replay("gemini-openai-compat-parallel-same-index.sse").await);
    assert_eq!(c.tool_calls.len(), 2, "{:?}", c.tool_calls);
    assert_eq!(args(&c, 0), json!({"path": "notes.txt"}));
    assert_eq!(args(&c, 1), json!({"path": "src/main.rs"}));
    assert_ne!(c.tool_calls[0].id, c.tool_calls[1].id);
}

#[tokio::test]
async fn gemini_thought_signatures_stay_with_their_calls() {
    let (c, seen) = ok(replay("gemini-openai-compat-tool-calls.sse").await);
    assert_eq!(c.tool_calls.len(), 2);
    assert_eq!(
        c.stop(),
        StopReason::ToolUse,
        "calls, although it says stop"
    );
    let first = &c.tool_calls[0].id;
    let sig: Vec<_> = c
        .carried
        .iter()
        .filter(|i| i.call_id.as_deref() == Some(first))
        .collect();
    assert_eq!(sig.len(), 1, "{:?}", c.carried);
    assert_eq!(
        sig[0].item["extra_content"]["google"]["thought_signature"],
        "<Signature A>"
    );
    // Written back on the call it came with, in the next request.
    let body = chat_body_after(&c, &seen.server);
    let calls = &body["messages"][2]["tool_calls"];
    assert_eq!(
        calls[0]["extra_content"]["google"]["thought_signature"],
        "<Signature A>"
    );
    assert!(calls[1].get("extra_content").is_none());
}

#[tokio::test]
async fn arguments_sent_as_an_object_are_that_object() {
    let (c, _) = ok(replay("litellm-ollama-args-object.sse").await);
    assert_eq!(c.tool_calls.len(), 1);
    assert_eq!(args(&c, 0), json!({"path": "notes.txt"}));
    assert_eq!(c.stop(), StopReason::ToolUse);
}

#[tokio::test]
async fn content_filter_results_on_every_chunk_are_read_past() {
    let (c, _) = ok(replay("azure-gpt5nano-prompt-filter.sse").await);
    assert!(c.text.contains("Capital"), "{}", c.text);
    assert_eq!(c.usage.reasoning_tokens, 64);
    assert_eq!(c.stop(), StopReason::EndTurn);
}

// ---- Reasoning on the Chat wire ----

/// The body the Chat wire sends after `c`: the exchange, then a result.
fn chat_body_after(c: &Completion, server: &str) -> Value {
    let results = c
        .tool_calls
        .iter()
        .map(|call| lathe_core::provider::ToolOutput {
            call_id: call.id.clone(),
            content: "{\"content\":\"x\"}".into(),
            is_error: false,
        })
        .collect();
    let messages = vec![
        Message::User("read notes.txt".into()),
        c.message(),
        Message::ToolResults(results),
    ];
    let options = lathe_core::provider::openai::BodyOptions {
        server: server.to_string(),
        ..Default::default()
    };
    serde_json::to_value(lathe_core::provider::openai::request_body(
        &ChatRequest::new("m", "sys", &messages, &[]),
        &options,
        true,
    ))
    .unwrap()
}

#[tokio::test]
async fn deepseek_reasoning_streams_and_goes_back_with_its_calls() {
    let (c, seen) = ok(replay("deepseek-reasoner-tool-call.sse").await);
    assert!(!c.reasoning.is_empty());
    assert_eq!(seen.reasoning, c.reasoning);
    assert!(seen.reasoning_deltas > 5, "streamed as it came");
    assert_eq!(c.tool_calls.len(), 1);
    assert_eq!(c.usage.cache_read_tokens, 320);
    // DeepSeek answers 400 unless the reasoning comes back with the calls.
    let body = chat_body_after(&c, &seen.server);
    let assistant = &body["messages"][2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["reasoning_content"], c.reasoning.as_str());
    assert!(assistant["tool_calls"].is_array());
}

#[tokio::test]
async fn reasoning_of_a_plain_answer_does_not_go_back() {
    let (c, seen) = ok(replay("deepseek-reasoner-text.sse").await);
    assert!(!c.reasoning.is_empty() && !c.text.is_empty());
    assert!(!seen.reasoning_after_text);
    assert!(c.usage.cache_read_tokens > 0 || c.usage.input_tokens > 0);
    let messages = vec![Message::User("q".into()), c.message()];
    let options = lathe_core::provider::openai::BodyOptions {
        server: seen.server.clone(),
        ..Default::default()
    };
    let body = serde_json::to_value(lathe_core::provider::openai::request_body(
        &ChatRequest::new("m", "sys", &messages, &[]),
        &options,
        true,
    ))
    .unwrap();
    assert!(
        body["messages"][2].get("reasoning_content").is_none(),
        "{}",
        body["messages"][2]
    );
}

#[tokio::test]
async fn the_reasoning_field_of_vllm_ollama_groq_is_shown() {
    let (c, seen) = ok(replay("groq-qwen3-reasoning-field.sse").await);
    assert!(seen.reasoning_deltas > 100, "{}", seen.reasoning_deltas);
    assert!(c.reasoning.starts_with("Okay"));
    assert!(!c.text.is_empty());
    assert!(c.usage.reasoning_tokens > 0);
    let (c, seen) = ok(replay("ollama-gptoss-reasoning-tool-call.sse").await);
    assert_eq!(c.reasoning, "The user wants notes.txt. I will read it.");
    assert_eq!(c.tool_calls.len(), 1);
    // Ollama takes `reasoning` back on the call's message (gpt-oss needs it).
    let body = chat_body_after(&c, &seen.server);
    assert_eq!(body["messages"][2]["reasoning"], c.reasoning.as_str());
}

#[tokio::test]
async fn openrouter_comments_reasoning_details_and_cost() {
    let (c, seen) = ok(replay("openrouter-comments-reasoning-usage.sse").await);
    assert_eq!(c.text, "The notes list three open tasks.");
    assert_eq!(seen.reasoning, "The user asks for a summary.", "shown once");
    assert_eq!(c.usage.cache_read_tokens, 1000);
    assert_eq!(c.usage.reasoning_tokens, 12);
    assert_eq!(c.usage.cost_usd, Some(0.0021));
    let details = &carried_fields(&c)["reasoning_details"];
    assert_eq!(details.as_array().unwrap().len(), 1, "{details}");
    assert_eq!(details[0]["text"], "The user asks for a summary.");
    assert_eq!(
        details[0]["signature"],
        "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
    );
}

#[tokio::test]
async fn mistral_thinking_parts_are_reasoning_and_text_parts_text() {
    let (c, seen) = ok(replay("mistral-magistral-content-parts.sse").await);
    assert_eq!(c.text, "2 + 2 = 4");
    assert!(seen.reasoning.starts_with("The user is asking"));
    assert!(!c.reasoning.contains("2 + 2 = 4"));
}

// ---- Errors mid-stream ----

#[tokio::test]
async fn errors_mid_stream_are_errors_in_every_shape() {
    for name in [
        "vllm-midstream-error-flat.sse",
        "vllm-midstream-error-wrapped.sse",
    ] {
        let (r, seen) = replay(name).await;
        let e = r.expect_err(name);
        assert!(
            e.to_string().contains("maximum model length"),
            "{name}: {e}"
        );
        assert!(!e.is_retryable(), "{name}: a 400 is not tried again");
        assert!(e.is_context_overflow(), "{name}: compaction can help");
        assert_eq!(seen.text, "Reading the file");
    }
    let (r, _) = replay("openrouter-midstream-error.sse").await;
    let e = r.unwrap_err();
    assert!(e.to_string().contains("Provider disconnected"), "{e}");
    assert!(e.is_retryable());
    let (r, _) = replay("anthropic-docs-overloaded-midstream.sse").await;
    let e = r.unwrap_err();
    assert!(e.to_string().contains("overloaded"), "{e}");
    assert!(e.is_retryable());
}

#[tokio::test]
async fn a_rate_limit_quotes_the_server_and_is_retried() {
    let body = fixture("openai-429-rate-limit.json");
    let mock = MockLlm::start(vec![
        Step::RawStatus {
            status: 429,
            body: body.clone(),
            retry_after: Some("0".into()),
        },
        Step::Raw(fixture("openai-gpt4o-text.sse")),
    ])
    .await;
    let mut settings = ProviderSettings::new(ProviderKind::OpenAi, mock.openai_url());
    settings.retry.base_delay = Duration::from_millis(5);
    let p = provider::build(settings).unwrap();
    let messages = [Message::User("hi".into())];
    let mut seen = Seen::default();
    let c = p
        .complete(
            ChatRequest::new("gpt-4o", "", &messages, &[]),
            &mut seen,
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(seen.retries, 1);
    assert!(!c.text.is_empty());
    // Given up on, the server's words are the error.
    let mock = MockLlm::start(vec![Step::RawStatus {
        status: 429,
        body,
        retry_after: None,
    }])
    .await;
    let mut settings = ProviderSettings::new(ProviderKind::OpenAi, mock.openai_url());
    settings.retry.max_retries = 0;
    let p = provider::build(settings).unwrap();
    let e = p
        .complete(
            ChatRequest::new("gpt-4o", "", &messages, &[]),
            &mut Seen::default(),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("Rate limit"), "{e}");
}

// ---- Anthropic Messages ----

#[tokio::test]
async fn anthropic_text_streams() {
    for name in [
        "anthropic-docs-basic.sse",
        "anthropic-sonnet45-text.sse",
        "anthropic-fallback-unknown-block.sse",
    ] {
        let (c, seen) = ok(replay(name).await);
        assert!(!c.text.is_empty(), "{name}");
        assert_eq!(seen.text, c.text);
        assert_eq!(c.stop(), StopReason::EndTurn, "{name}");
        assert!(c.carried.is_empty(), "{name}: nothing unknown goes back");
    }
}

#[tokio::test]
async fn anthropic_tool_use_in_every_recorded_shape() {
    let (c, _) = ok(replay("anthropic-docs-tool-use.sse").await);
    assert_eq!(c.tool_calls.len(), 1);
    assert!(args(&c, 0).is_object());
    assert_eq!(c.stop(), StopReason::ToolUse);
    let (c, _) = ok(replay("anthropic-sonnet45-tool-no-args.sse").await);
    assert_eq!(c.tool_calls.len(), 1);
    assert_eq!(args(&c, 0), json!({}));
    let (c, _) = ok(replay("anthropic-sparse-fields-tool-use.sse").await);
    assert_eq!(c.tool_calls.len(), 1);
    assert!(args(&c, 0).is_object());
}

#[tokio::test]
async fn anthropic_max_tokens_and_refusal_are_stop_reasons() {
    let (c, _) = ok(replay("anthropic-max-tokens.sse").await);
    assert_eq!(c.stop(), StopReason::MaxTokens);
    let (c, _) = ok(replay("anthropic-refusal.sse").await);
    assert_eq!(c.stop(), StopReason::Refusal);
    assert!(
        c.refusal.as_deref().is_some_and(|r| r.contains("cyber")),
        "the explanation is kept: {:?}",
        c.refusal
    );
}

#[tokio::test]
async fn anthropic_cumulative_usage_counts_cache_reads_and_writes() {
    let (c, _) = ok(replay("anthropic-sonnet5-cache-usage.sse").await);
    // The last message_delta's counts are the totals.
    assert_eq!(c.usage.cache_read_tokens, 6289);
    assert_eq!(c.usage.cache_write_tokens, 3337);
    assert_eq!(c.usage.input_tokens, 6 + 3337 + 6289);
    assert_eq!(c.usage.output_tokens, 198);
    assert!(c.carried.is_empty(), "server tool blocks are not sent back");
}

/// The Anthropic body that follows `c` (with a result for each call).
fn anthropic_body_after(c: &Completion, server: &str) -> Value {
    let results = c
        .tool_calls
        .iter()
        .map(|call| lathe_core::provider::ToolOutput {
            call_id: call.id.clone(),
            content: "{}".into(),
            is_error: false,
        })
        .collect();
    let messages = vec![
        Message::User("read notes.txt".into()),
        c.message(),
        Message::ToolResults(results),
    ];
    let options = lathe_core::provider::anthropic::Options {
        server: server.to_string(),
        ..Default::default()
    };
    serde_json::to_value(lathe_core::provider::anthropic::request_body(
        &ChatRequest::new("claude-sonnet-4-5", "sys", &messages, &[]),
        &options,
    ))
    .unwrap()
}

#[tokio::test]
async fn anthropic_thinking_goes_back_signed_and_ahead_of_the_call() {
    let (c, seen) = ok(replay("anthropic-thinking-tool-use.sse").await);
    assert_eq!(
        seen.reasoning,
        "The user wants the notes. I should read notes.txt with the read_file tool."
    );
    assert_eq!(c.tool_calls.len(), 1);
    let body = anthropic_body_after(&c, &seen.server);
    let blocks = body["messages"][1]["content"].as_array().unwrap();
    assert_eq!(blocks[0]["type"], "thinking");
    assert_eq!(blocks[0]["thinking"], seen.reasoning.as_str());
    assert!(
        blocks[0]["signature"]
            .as_str()
            .unwrap()
            .starts_with("ErUBCkYIARgCIkACJWxzySUOJzOlZ8WF")
    );
    assert_eq!(blocks[1]["type"], "tool_use");
    assert_eq!(blocks[1]["input"], json!({"path": "notes.txt"}));
}

#[tokio::test]
async fn anthropic_redacted_thinking_goes_back_verbatim() {
    let (c, seen) = ok(replay("anthropic-redacted-thinking-tool-use.sse").await);
    assert!(seen.reasoning.is_empty(), "nothing readable in it");
    let body = anthropic_body_after(&c, &seen.server);
    let blocks = body["messages"][1]["content"].as_array().unwrap();
    assert_eq!(blocks[0]["type"], "redacted_thinking");
    assert!(
        blocks[0]["data"]
            .as_str()
            .unwrap()
            .starts_with("EmwKAhgBEgy3va3pzix")
    );
    assert_eq!(blocks[1]["type"], "tool_use");
}

#[tokio::test]
async fn anthropic_documented_and_recorded_thinking_streams() {
    let (c, seen) = ok(replay("anthropic-docs-thinking.sse").await);
    assert!(!seen.reasoning.is_empty() && !c.text.is_empty());
    assert_eq!(c.carried.len(), 1);
    assert!(
        c.carried[0].item["signature"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    let (c, seen) = ok(replay("anthropic-sonnet45-thinking-multibyte.sse").await);
    assert!(!seen.reasoning.is_empty());
    assert!(c.text.contains('×'), "multi-byte text survives");
    assert!(!seen.reasoning_after_text);
}

/// Reasoning that must go back verbatim (Anthropic's signed thinking,
/// DeepSeek's `reasoning_content`) goes back to the server that sent it
/// and to no other: not to another server on the same wire and model
/// (`--continue --base-url B`), and not when its record does not say
/// which server sent it (kept before items were tagged).
#[tokio::test]
async fn carried_reasoning_goes_back_only_to_its_own_server() {
    let (c, seen) = ok(replay("anthropic-thinking-tool-use.sse").await);
    assert!(c.carried.iter().all(|i| i.server == seen.server));
    let blocks = |body: &Value| body["messages"][1]["content"].clone();
    assert_eq!(
        blocks(&anthropic_body_after(&c, &seen.server))[0]["type"],
        "thinking"
    );
    for other in [
        "http://127.0.0.1:1",
        "https://api.anthropic.com",
        &format!("{}/x", seen.server),
    ] {
        let body = anthropic_body_after(&c, other);
        assert!(
            !body.to_string().contains("signature"),
            "{other}: {}",
            blocks(&body)
        );
    }
    let mut untagged = c.clone();
    untagged.carried.iter_mut().for_each(|i| i.server.clear());
    let body = anthropic_body_after(&untagged, &seen.server);
    assert!(!body.to_string().contains("signature"), "{}", blocks(&body));

    let (c, seen) = ok(replay("deepseek-reasoner-tool-call.sse").await);
    let body = chat_body_after(&c, "https://api.deepseek.com/v1");
    assert!(body["messages"][2].get("reasoning_content").is_none());
    let body = chat_body_after(&c, &seen.server);
    assert!(body["messages"][2].get("reasoning_content").is_some());
}

/// A server that streams without end (text, reasoning or a call's
/// arguments) is cut off at the response's limit with a clear error, on
/// every wire, and is not asked again.
#[tokio::test]
async fn endless_deltas_are_cut_off_at_the_limit() {
    use lathe_core::provider::StreamLimits;
    let piece = "x".repeat(1000);
    let sse = |events: Vec<Value>| -> String {
        events
            .iter()
            .map(|e| match e["type"].as_str() {
                Some(t) => format!("event: {t}\ndata: {e}\n\n"),
                None => format!("data: {e}\n\n"),
            })
            .collect()
    };
    let chat = |delta: Value| {
        let mut events = vec![];
        for _ in 0..1500 {
            events.push(json!({"choices": [{"index": 0, "delta": delta.clone()}]}));
        }
        sse(events)
    };
    let anthropic = |start: Value, delta: Value| {
        let mut events = vec![
            json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "model": "m", "content": [], "usage": {"input_tokens": 1, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": start}),
        ];
        for _ in 0..1500 {
            events.push(json!({"type": "content_block_delta", "index": 0, "delta": delta.clone()}));
        }
        sse(events)
    };
    let responses = |delta_type: &str| {
        let mut events = vec![
            json!({"type": "response.output_item.added", "output_index": 0,
            "item": {"type": "function_call", "id": "fc1", "call_id": "c1", "name": "read_file", "arguments": ""}}),
        ];
        for _ in 0..1500 {
            events.push(
                json!({"type": delta_type, "item_id": "fc1", "output_index": 0, "content_index": 0,
                "summary_index": 0, "delta": piece}),
            );
        }
        sse(events)
    };
    // A name streamed without end (two pieces in turn, so it grows), calls
    // without number, and reasoning details without number.
    let chat_events = |n: usize, delta: &dyn Fn(usize) -> Value| -> String {
        (0..n)
            .map(|i| {
                format!(
                    "data: {}\n\n",
                    json!({"choices": [{"index": 0, "delta": delta(i)}]})
                )
            })
            .collect()
    };
    let names = chat_events(1500, &|i| {
        let name = if i % 2 == 0 { "A" } else { "B" }.repeat(1000);
        json!({"tool_calls": [{"index": 0, "function": {"name": name}}]})
    });
    let many = chat_events(
        1500,
        &|i| json!({"tool_calls": [{"index": i, "id": format!("c{i}"), "function": {"name": "x".repeat(900)}}]}),
    );
    let details = chat_events(
        3000,
        &|i| json!({"reasoning_details": [{"type": "reasoning.text", "index": i, "text": "x"}]}),
    );
    let cases = [
        ("chat names", WireApi::Chat, names, "arguments"),
        ("chat calls", WireApi::Chat, many, "arguments"),
        ("chat details", WireApi::Chat, details, "reasoning"),
        (
            "chat text",
            WireApi::Chat,
            chat(json!({"content": piece})),
            "text",
        ),
        (
            "chat reasoning",
            WireApi::Chat,
            chat(json!({"reasoning_content": piece})),
            "reasoning",
        ),
        (
            "chat arguments",
            WireApi::Chat,
            chat(
                json!({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": piece}}]}),
            ),
            "arguments",
        ),
        (
            "anthropic text",
            WireApi::Anthropic,
            anthropic(
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": piece}),
            ),
            "text",
        ),
        (
            "anthropic thinking",
            WireApi::Anthropic,
            anthropic(
                json!({"type": "thinking", "thinking": "", "signature": ""}),
                json!({"type": "signature_delta", "signature": piece}),
            ),
            "reasoning",
        ),
        (
            "anthropic arguments",
            WireApi::Anthropic,
            anthropic(
                json!({"type": "tool_use", "id": "t1", "name": "read_file", "input": {}}),
                json!({"type": "input_json_delta", "partial_json": piece}),
            ),
            "arguments",
        ),
        (
            "responses text",
            WireApi::Responses,
            responses("response.output_text.delta"),
            "text",
        ),
        (
            "responses reasoning",
            WireApi::Responses,
            responses("response.reasoning_summary_text.delta"),
            "reasoning",
        ),
        (
            "responses arguments",
            WireApi::Responses,
            responses("response.function_call_arguments.delta"),
            "arguments",
        ),
    ];
    for (name, wire, body, what) in cases {
        let mock = MockLlm::start(vec![
            Step::Raw(body),
            Step::Reply(crate::mock_llm::Reply::text("again")),
        ])
        .await;
        let (kind, url) = match wire {
            WireApi::Anthropic => (ProviderKind::Anthropic, mock.anthropic_url()),
            _ => (ProviderKind::OpenAi, mock.openai_url()),
        };
        let mut settings = ProviderSettings::new(kind, url);
        settings.wire = wire;
        settings.limits = StreamLimits {
            text: StreamLimits::MIB,
            reasoning: StreamLimits::MIB,
            arguments: StreamLimits::MIB,
        };
        let p = provider::build(settings).unwrap();
        let messages = [Message::User("go".into())];
        let err = p
            .complete(
                ChatRequest::new("m", "sys", &messages, &[]),
                &mut Seen::default(),
                &CancellationToken::new(),
            )
            .await
            .expect_err(name);
        let shown = err.to_string();
        assert!(
            matches!(err, ProviderError::TooLarge { .. })
                && shown.contains(what)
                && shown.contains("1 MiB"),
            "{name}: {shown}"
        );
        assert_eq!(mock.requests().len(), 1, "{name}: asked again");
    }
}
