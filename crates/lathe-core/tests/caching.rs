//! What a long tool session on Claude is billed for its input, under
//! Anthropic's documented cache rules (`support/cache_sim.rs`), for the
//! bodies Lathe really sends: its system prompt, its tools, its four
//! breakpoints. The same figures are printed by `cargo bench --bench
//! providers`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cache_sim;

use lathe_core::policy::Workspace;
use lathe_core::provider::ChatRequest;
use lathe_core::provider::anthropic::{Options, request_body};
use lathe_core::tools::{BuiltinSettings, ToolRegistry};
use serde_json::Value;

fn lathe_body(req: &ChatRequest<'_>) -> Value {
    serde_json::to_value(request_body(req, &Options::default())).unwrap()
}

/// Only the system prompt marked, as Lathe sent it before.
fn system_only(req: &ChatRequest<'_>) -> Value {
    let mut v = lathe_body(req);
    for key in ["tools", "messages"] {
        strip(&mut v[key]);
    }
    v
}

fn strip(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("cache_control");
            m.values_mut().for_each(strip);
        }
        Value::Array(a) => a.iter_mut().for_each(strip),
        _ => {}
    }
}

#[test]
fn a_forty_round_tool_session_reads_its_history_from_the_cache() {
    let ws = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(ws.path()).unwrap();
    let system = lathe_core::agent::prompt::build(&workspace);
    let tools = ToolRegistry::with_defaults(&BuiltinSettings::default())
        .unwrap()
        .schemas();
    let requests = cache_sim::session(40);
    let (lathe, ideal, first) = cache_sim::bill_session(&requests, &system, &tools, lathe_body);
    // Claude Code on the same script: its first request is about 23k
    // tokens (system prompt and tools), cached the same way.
    let padding = "x".repeat((23_000usize.saturating_sub(first as usize)) * 4);
    let cc_system = format!("{system}\n{padding}");
    let (claude_code, _, cc_first) =
        cache_sim::bill_session(&requests, &cc_system, &tools, lathe_body);
    let (before, _, _) = cache_sim::bill_session(&requests, &system, &tools, system_only);
    eprintln!(
        "40 rounds: first request {first} tokens (Claude Code {cc_first}); billed input \
         {lathe:.0} units = {:.2}x the ideal, {:.2}x Claude Code's; system prompt only marked: \
         {:.2}x the ideal",
        lathe / ideal,
        lathe / claude_code,
        before / ideal
    );
    assert!(lathe <= 1.1 * ideal, "{lathe} vs ideal {ideal}");
    assert!(
        lathe <= 0.6 * claude_code,
        "{lathe} vs Claude Code {claude_code}"
    );
    assert!(
        before > 3.0 * ideal,
        "the old way was far off: {before} vs {ideal}"
    );
}

/// Each request of a session begins with the bytes of the one before, on
/// the OpenAI wires (whose servers cache prefixes on their own): nothing
/// sent earlier is written again differently.
#[test]
fn the_openai_wires_keep_the_prefix_byte_stable() {
    let tools = ToolRegistry::with_defaults(&BuiltinSettings::default())
        .unwrap()
        .schemas();
    let requests = cache_sim::session(8);
    for (wire, after) in [("chat", "],\"stream\":"), ("responses", "],\"tools\":")] {
        let texts: Vec<String> = requests
            .iter()
            .map(|messages| {
                let mut req = ChatRequest::new("gpt-5.1", "be brief", messages, &tools);
                req.cache_key = Some("session-1");
                match wire {
                    "chat" => serde_json::to_string(&lathe_core::provider::openai::request_body(
                        &req,
                        &lathe_core::provider::openai::BodyOptions::default(),
                        true,
                    )),
                    _ => serde_json::to_string(&lathe_core::provider::responses::request_body(
                        &req,
                        &lathe_core::provider::responses::Options::default(),
                        true,
                    )),
                }
                .unwrap()
            })
            .collect();
        for w in texts.windows(2) {
            // Up to the end of the earlier list of messages.
            let end = w[0].find(after).unwrap();
            assert!(end > 100, "{wire}: {}", &w[0][..end.min(200)]);
            assert!(
                w[1].starts_with(&w[0][..end]),
                "{wire}: the later request rewrites the earlier one"
            );
        }
    }
}
