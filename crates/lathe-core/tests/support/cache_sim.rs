//! Anthropic's prompt cache, as its docs describe it, applied to the
//! bodies Lathe really sends: what a tool session is billed for its input.
//!
//! A request is its blocks in cache order (each tool, the system prompt,
//! each content block of each message). A block with `cache_control` is
//! a breakpoint. The cache holds the prefixes earlier requests wrote at
//! their breakpoints (for five minutes: a session here is faster). A
//! request reads the longest cached prefix that ends at one of its
//! breakpoints or at one of the 20 blocks before each, writes the rest up
//! to its last breakpoint (1.25× the input price), and pays the input
//! price for what follows; prefixes under 1,024 tokens are not cached.
//! Tokens are estimated at 4 bytes each, for the request and the ideal
//! alike.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use lathe_core::provider::{ChatRequest, Message, ToolCall, ToolOutput, ToolSchema};
use serde_json::Value;

/// The shortest prefix Anthropic caches.
const MIN_CACHED: u64 = 1_024;
/// How far before a breakpoint a cached prefix is still found.
const LOOKBACK: usize = 20;

/// What one request is billed, in tokens and in input-price units.
#[derive(Debug, Default, Clone, Copy)]
pub struct Billed {
    pub total: u64,
    pub read: u64,
    pub written: u64,
    /// `fresh + 1.25 × written + 0.1 × read`.
    pub units: f64,
}

/// One request as blocks: tokens, breakpoint, and the hash of the prefix
/// that ends with it.
fn blocks(body: &Value) -> Vec<(u64, bool, u64)> {
    let mut raw: Vec<Value> = Vec::new();
    raw.extend(body["tools"].as_array().cloned().unwrap_or_default());
    raw.extend(body["system"].as_array().cloned().unwrap_or_default());
    for m in body["messages"].as_array().cloned().unwrap_or_default() {
        match &m["content"] {
            Value::Array(parts) => raw.extend(parts.iter().cloned()),
            other => raw.push(other.clone()),
        }
    }
    let mut h = DefaultHasher::new();
    raw.into_iter()
        .map(|mut b| {
            let breakpoint = b.get("cache_control").is_some();
            if let Value::Object(o) = &mut b {
                o.remove("cache_control");
            }
            let text = b.to_string();
            text.hash(&mut h);
            ((text.len() as u64).div_ceil(4), breakpoint, h.finish())
        })
        .collect()
}

/// The cache across a session's requests.
#[derive(Default)]
pub struct Cache {
    prefixes: HashSet<u64>,
}

impl Cache {
    pub fn bill(&mut self, body: &Value) -> Billed {
        let blocks = blocks(body);
        let mut upto = Vec::with_capacity(blocks.len());
        let mut acc = 0;
        for (tokens, _, _) in &blocks {
            acc += tokens;
            upto.push(acc);
        }
        let breakpoints: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].1).collect();
        let mut read = 0;
        for &b in &breakpoints {
            for p in (b.saturating_sub(LOOKBACK)..=b).rev() {
                if self.prefixes.contains(&blocks[p].2) {
                    read = read.max(upto[p]);
                    break;
                }
            }
        }
        let mut written = 0;
        if let Some(&last) = breakpoints.last()
            && upto[last] >= MIN_CACHED
        {
            written = upto[last].saturating_sub(read);
            for &b in &breakpoints {
                if upto[b] >= MIN_CACHED {
                    self.prefixes.insert(blocks[b].2);
                }
            }
        }
        let total = acc;
        let fresh = total - read - written;
        Billed {
            total,
            read,
            written,
            units: fresh as f64 + 1.25 * written as f64 + 0.1 * read as f64,
        }
    }
}

/// The ideal for the same requests: every token written once, when it is
/// first sent, and read from the cache ever after.
pub fn ideal(totals: &[u64]) -> f64 {
    let mut before = 0;
    totals
        .iter()
        .map(|&t| {
            let new = t.saturating_sub(before);
            let units = 1.25 * new as f64 + 0.1 * before.min(t) as f64;
            before = t;
            units
        })
        .sum()
}

/// A scripted tool session of `rounds` rounds: each round the model says
/// a line and reads a file, whose content (about 800 tokens) comes back.
pub fn session(rounds: usize) -> Vec<Vec<Message>> {
    let mut messages = vec![Message::User(
        "find why the integration tests fail and fix it".into(),
    )];
    let mut requests = vec![messages.clone()];
    for k in 0..rounds {
        messages.push(Message::assistant(
            format!("Let me look at module {k} next."),
            vec![ToolCall {
                id: format!("toolu_{k:04}"),
                name: "read_file".into(),
                arguments: format!("{{\"path\":\"src/module_{k}.rs\"}}"),
            }],
        ));
        let line =
            format!("fn handler_{k}(req: Request) -> Result<Response, Error> {{ todo!() }}\n");
        messages.push(Message::ToolResults(vec![ToolOutput {
            call_id: format!("toolu_{k:04}"),
            content: serde_json::json!({ "content": line.repeat(45) }).to_string(),
            is_error: false,
        }]));
        requests.push(messages.clone());
    }
    requests
}

/// Bills `requests` with `system` and `tools`, as Lathe's Anthropic wire
/// writes them: (billed units, the ideal, the first request's tokens).
pub fn bill_session(
    requests: &[Vec<Message>],
    system: &str,
    tools: &[ToolSchema],
    body: impl Fn(&ChatRequest<'_>) -> Value,
) -> (f64, f64, u64) {
    let mut cache = Cache::default();
    let mut units = 0.0;
    let mut totals = Vec::new();
    for messages in requests {
        let b = body(&ChatRequest::new(
            "claude-sonnet-4-5",
            system,
            messages,
            tools,
        ));
        let billed = cache.bill(&b);
        units += billed.units;
        totals.push(billed.total);
    }
    (units, ideal(&totals), totals[0])
}
