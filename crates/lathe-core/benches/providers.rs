//! The model side: what a streamed delta costs on the wire (reasoning
//! against text, through a real provider reading a real SSE body over
//! loopback), what building a request body costs on each wire, and what
//! a 40-round tool session on Claude is billed for its input under
//! Anthropic's cache rules (printed; `tests/caching.rs` holds the bounds).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/cache_sim.rs"]
mod cache_sim;
use lathe_test_support::mock_llm;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lathe_core::policy::Workspace;
use lathe_core::provider::{
    self, ChatRequest, Message, NoopObserver, ProviderKind, ProviderSettings, WireApi,
};
use lathe_core::tools::{BuiltinSettings, ToolRegistry};
use mock_llm::{MockLlm, Step};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const DELTAS: usize = 2_000;

/// A Chat Completions stream of `DELTAS` pieces of text, or of reasoning
/// (`reasoning_content`, as DeepSeek sends it).
fn chat_stream(reasoning: bool) -> String {
    let mut out = String::new();
    for i in 0..DELTAS {
        let piece = format!("word{i} ");
        // As DeepSeek sends them: each chunk has both fields, one null.
        let delta = if reasoning {
            json!({"content": null, "reasoning_content": piece})
        } else {
            json!({"content": piece, "reasoning_content": null})
        };
        let chunk = json!({"id": "c", "object": "chat.completion.chunk", "created": 0,
            "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]});
        out.push_str(&format!("data: {chunk}\n\n"));
    }
    out.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n");
    out.push_str("data: [DONE]\n\n");
    out
}

fn deltas(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("stream_deltas");
    group.throughput(Throughput::Elements(DELTAS as u64));
    for reasoning in [false, true] {
        let mock = rt.block_on(MockLlm::cycling(vec![Step::Raw(chat_stream(reasoning))]));
        let p = provider::build(ProviderSettings::new(
            ProviderKind::OpenAi,
            mock.openai_url(),
        ))
        .unwrap();
        let messages = [Message::User("hi".into())];
        let name = if reasoning { "reasoning" } else { "text" };
        group.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(p.complete(
                    ChatRequest::new("m", "", &messages, &[]),
                    &mut NoopObserver,
                    &CancellationToken::new(),
                ))
                .unwrap()
            });
        });
    }
    group.finish();
}

fn bodies(c: &mut Criterion) {
    let ws = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(ws.path()).unwrap();
    let system = lathe_core::agent::prompt::build(&workspace);
    let tools = ToolRegistry::with_defaults(&BuiltinSettings::default())
        .unwrap()
        .schemas();
    let session = cache_sim::session(200);
    let messages = session.last().unwrap();
    let mut group = c.benchmark_group("request_body_400_messages");
    for wire in [WireApi::Chat, WireApi::Responses, WireApi::Anthropic] {
        group.bench_function(wire.as_str(), |b| {
            b.iter(|| {
                let req = ChatRequest::new("m", &system, messages, &tools);
                let v = match wire {
                    WireApi::Chat => serde_json::to_vec(&provider::openai::request_body(
                        &req,
                        &provider::openai::BodyOptions::default(),
                        true,
                    )),
                    WireApi::Responses => serde_json::to_vec(&provider::responses::request_body(
                        &req,
                        &provider::responses::Options::default(),
                        true,
                    )),
                    WireApi::Anthropic => serde_json::to_vec(&provider::anthropic::request_body(
                        &req,
                        &provider::anthropic::Options::default(),
                    )),
                };
                v.unwrap().len()
            });
        });
    }
    group.finish();
    // The billed input of a 40-round session, printed once.
    let body = |req: &ChatRequest<'_>| -> Value {
        serde_json::to_value(provider::anthropic::request_body(
            req,
            &provider::anthropic::Options::default(),
        ))
        .unwrap()
    };
    let requests = cache_sim::session(40);
    let (lathe, ideal, first) = cache_sim::bill_session(&requests, &system, &tools, body);
    let padding = "x".repeat(23_000usize.saturating_sub(first as usize) * 4);
    let (cc, _, _) =
        cache_sim::bill_session(&requests, &format!("{system}\n{padding}"), &tools, body);
    eprintln!(
        "billed input, 40-round tool session on Claude: {:.2}x the ideal, {:.2}x Claude \
         Code's (first request {first} tokens against 23,000)",
        lathe / ideal,
        lathe / cc
    );
}

criterion_group!(benches, deltas, bodies);
criterion_main!(benches);
