//! A scripted mock LLM: a real HTTP server (axum, on 127.0.0.1) that speaks
//! both wire formats over SSE. `POST /v1/chat/completions` answers in the
//! OpenAI Chat Completions stream format, `POST /v1/messages` in the
//! Anthropic Messages stream format. Each request takes the next `Step` of
//! the script: a reply (text and tool calls, streamed in small pieces), an
//! HTTP error (with an optional `Retry-After`), a stream cut before its end
//! marker, an aborted connection, a stream that never ends, or raw bytes.
//! Every request is recorded for assertions.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use axum::routing::post;
use futures_util::stream::{self, StreamExt};
use serde_json::{Value, json};

/// One tool call in a scripted reply.
#[derive(Debug, Clone)]
pub struct Call {
    pub id: String,
    pub name: String,
    /// The raw argument text, sent in pieces (may be malformed on purpose).
    pub arguments: String,
}

/// A scripted assistant response.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    pub text: String,
    pub calls: Vec<Call>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// What the model thinks first: `reasoning_content` deltas (Chat),
    /// a signed thinking block (Anthropic), a reasoning item with a
    /// summary and encrypted content (Responses).
    pub reasoning: String,
    /// Input tokens read from the cache (each wire's own field).
    pub cached_tokens: u64,
}

impl Reply {
    pub fn text(text: &str) -> Self {
        Self {
            text: text.to_string(),
            input_tokens: 11,
            output_tokens: 5,
            ..Self::default()
        }
    }

    pub fn tools() -> Self {
        Self {
            input_tokens: 11,
            output_tokens: 5,
            ..Self::default()
        }
    }

    #[must_use]
    pub fn say(mut self, text: &str) -> Self {
        self.text.push_str(text);
        self
    }

    #[must_use]
    pub fn think(mut self, text: &str) -> Self {
        self.reasoning.push_str(text);
        self
    }

    #[must_use]
    pub fn cached(mut self, tokens: u64) -> Self {
        self.cached_tokens = tokens;
        self
    }

    #[must_use]
    pub fn call(self, id: &str, name: &str, args: Value) -> Self {
        self.call_raw(id, name, &args.to_string())
    }

    #[must_use]
    pub fn call_raw(mut self, id: &str, name: &str, raw: &str) -> Self {
        self.calls.push(Call {
            id: id.to_string(),
            name: name.to_string(),
            arguments: raw.to_string(),
        });
        self
    }
}

/// What one request gets.
#[derive(Debug, Clone)]
pub enum Step {
    Reply(Reply),
    /// An HTTP error with a JSON body (`{"error":{"message":..}}`).
    Status {
        status: u16,
        message: String,
        retry_after: Option<String>,
    },
    /// The first event of the reply, then a clean end with no end marker.
    Cut(Reply),
    /// The first event of the reply, then the connection is broken.
    Abort(Reply),
    /// The reply without its end, then silence until the client goes away.
    Hang(Reply),
    /// A raw SSE body.
    Raw(String),
    /// An HTTP error with this body as it is.
    RawStatus {
        status: u16,
        body: String,
        retry_after: Option<String>,
    },
    /// A 200 with one JSON body, as from a server that does not stream.
    Json(Value),
    /// The reply after a pause (a model that takes its time).
    Slow(Reply, std::time::Duration),
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: Value,
}

#[derive(Default)]
struct Script {
    steps: VecDeque<Step>,
    requests: Vec<Recorded>,
    /// `GET /v1/models` requests, apart (a client asks for the list when
    /// it pleases; the chat requests stay in order).
    listings: Vec<Recorded>,
    /// Replay the script forever instead of running out (benchmarks).
    cycle: bool,
    /// Keep no request records (benchmarks).
    forget: bool,
    /// What `GET /v1/models` lists (`None`: the route answers 404).
    models: Option<Vec<String>>,
}

type Shared = Arc<Mutex<Script>>;

pub struct MockLlm {
    pub addr: SocketAddr,
    script: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl MockLlm {
    pub async fn start(steps: Vec<Step>) -> Self {
        Self::serve(Script {
            steps: steps.into(),
            models: Some(vec![
                "mock-model".into(),
                "mock-large".into(),
                "mock-small".into(),
            ]),
            ..Script::default()
        })
        .await
    }

    /// A server that answers `steps` and lists `models` (`None`: no list).
    pub async fn with_models(steps: Vec<Step>, models: Option<Vec<String>>) -> Self {
        Self::serve(Script {
            steps: steps.into(),
            models,
            ..Script::default()
        })
        .await
    }

    /// A server that lists `models` (`None`: one with no model list).
    pub async fn listing(models: Option<Vec<String>>) -> Self {
        Self::serve(Script {
            models,
            ..Script::default()
        })
        .await
    }

    /// A server that replays `steps` in a loop and records nothing.
    pub async fn cycling(steps: Vec<Step>) -> Self {
        Self::serve(Script {
            steps: steps.into(),
            cycle: true,
            forget: true,
            ..Script::default()
        })
        .await
    }

    async fn serve(script: Script) -> Self {
        let script: Shared = Arc::new(Mutex::new(script));
        let app = Router::new()
            .route("/v1/chat/completions", post(handle))
            .route("/v1/messages", post(handle))
            .route("/v1/responses", post(handle))
            .route("/v1/models", axum::routing::get(models))
            .with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, script, task }
    }

    /// Base URL for the OpenAI format (includes `/v1`).
    pub fn openai_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Base URL for the Anthropic format (no `/v1`).
    pub fn anthropic_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn push(&self, step: Step) {
        self.script.lock().unwrap().steps.push_back(step);
    }

    /// The chat requests, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.script.lock().unwrap().requests.clone()
    }

    /// The model-list requests (`GET /v1/models`), in order.
    pub fn listings(&self) -> Vec<Recorded> {
        self.script.lock().unwrap().listings.clone()
    }

    pub fn remaining(&self) -> usize {
        self.script.lock().unwrap().steps.len()
    }
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `GET /v1/models` as OpenAI answers it (one list) or, with an
/// `anthropic-version` header, as Anthropic does (pages of two here, to
/// make a client follow `has_more` and `after_id`).
async fn models(State(script): State<Shared>, uri: Uri, headers: HeaderMap) -> Response {
    let models = {
        let mut s = script.lock().unwrap();
        s.listings.push(Recorded {
            path: uri.to_string(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
                .collect(),
            body: Value::Null,
        });
        s.models.clone()
    };
    let Some(models) = models else {
        return error_response(404, "no such route", None);
    };
    let body = if headers.contains_key("anthropic-version") {
        let after = uri.query().and_then(|q| {
            q.split('&')
                .find_map(|kv| kv.strip_prefix("after_id="))
                .map(str::to_string)
        });
        let start = after
            .and_then(|a| models.iter().position(|m| *m == a))
            .map_or(0, |i| i + 1);
        let page: Vec<&String> = models.iter().skip(start).take(2).collect();
        json!({
            "data": page.iter().map(|id| json!({
                "type": "model", "id": id, "display_name": id,
                "created_at": "2025-01-01T00:00:00Z"
            })).collect::<Vec<_>>(),
            "has_more": start + page.len() < models.len(),
            "first_id": page.first(),
            "last_id": page.last(),
        })
    } else {
        json!({
            "object": "list",
            "data": models.iter().map(|id| json!({
                "id": id, "object": "model", "created": 0, "owned_by": "mock"
            })).collect::<Vec<_>>(),
        })
    };
    Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

async fn handle(
    State(script): State<Shared>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let anthropic = uri.path().ends_with("/messages");
    let responses = uri.path().ends_with("/responses");
    let step = {
        let mut s = script.lock().unwrap();
        if !s.forget {
            s.requests.push(Recorded {
                path: uri.path().to_string(),
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
                    .collect(),
                body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            });
        }
        let step = s.steps.pop_front();
        if s.cycle
            && let Some(step) = &step
        {
            s.steps.push_back(step.clone());
        }
        step
    };
    let Some(step) = step else {
        return error_response(500, "mock script exhausted", None);
    };
    let events = |r: &Reply| {
        if anthropic {
            anthropic_events(r)
        } else if responses {
            responses_events(r)
        } else {
            openai_events(r)
        }
    };
    match step {
        Step::Reply(r) => sse(stream::iter(events(&r).into_iter().map(Ok)).boxed()),
        Step::Slow(r, pause) => {
            let all = events(&r);
            let later = stream::once(async move {
                tokio::time::sleep(pause).await;
                stream::iter(all.into_iter().map(Ok))
            })
            .flatten();
            sse(later.boxed())
        }
        Step::Status {
            status,
            message,
            retry_after,
        } => error_response(status, &message, retry_after),
        Step::Cut(r) => {
            let first = events(&r).into_iter().take(1).map(Ok);
            sse(stream::iter(first).boxed())
        }
        Step::Abort(r) => {
            let first = events(&r).into_iter().take(1).map(Ok);
            let broken = stream::iter(first).chain(stream::once(async {
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "mock abort",
                ))
            }));
            sse_fallible(broken.boxed())
        }
        Step::Hang(r) => {
            let mut all = events(&r);
            all.truncate(all.len().saturating_sub(2));
            let hanging = stream::iter(all.into_iter().map(Ok)).chain(stream::pending());
            sse(hanging.boxed())
        }
        Step::Raw(text) => sse(stream::iter([Ok(text)]).boxed()),
        Step::RawStatus {
            status,
            body,
            retry_after,
        } => {
            let mut b = Response::builder()
                .status(StatusCode::from_u16(status).unwrap())
                .header("content-type", "application/json");
            if let Some(after) = retry_after {
                b = b.header("retry-after", after);
            }
            b.body(Body::from(body)).unwrap()
        }
        Step::Json(v) => Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .body(Body::from(v.to_string()))
            .unwrap(),
    }
}

fn sse(body: futures_util::stream::BoxStream<'static, Result<String, Infallible>>) -> Response {
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(body))
        .unwrap()
}

fn sse_fallible(
    body: futures_util::stream::BoxStream<'static, Result<String, std::io::Error>>,
) -> Response {
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(body))
        .unwrap()
}

fn error_response(status: u16, message: &str, retry_after: Option<String>) -> Response {
    let mut b = Response::builder()
        .status(StatusCode::from_u16(status).unwrap())
        .header("content-type", "application/json");
    if let Some(after) = retry_after {
        b = b.header("retry-after", after);
    }
    let body = json!({"error": {"message": message, "type": "mock_error"}});
    b.body(Body::from(body.to_string())).unwrap()
}

/// Splits `s` into pieces of about `n` bytes, on character boundaries.
fn pieces(s: &str, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for ch in s.chars() {
        cur.push(ch);
        if cur.len() >= n {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn openai_chunk(delta: Value, finish: Option<&str>) -> String {
    let chunk = json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "mock",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    format!("data: {chunk}\n\n")
}

/// The reply as OpenAI Chat Completions stream events.
pub fn openai_events(r: &Reply) -> Vec<String> {
    let mut out = vec![openai_chunk(
        json!({"role": "assistant", "content": ""}),
        None,
    )];
    for p in pieces(&r.reasoning, 9) {
        out.push(openai_chunk(
            json!({"content": null, "reasoning_content": p}),
            None,
        ));
    }
    for p in pieces(&r.text, 7) {
        out.push(openai_chunk(json!({"content": p}), None));
    }
    for (i, c) in r.calls.iter().enumerate() {
        out.push(openai_chunk(
            json!({"tool_calls": [{"index": i, "id": c.id, "type": "function",
                   "function": {"name": c.name, "arguments": ""}}]}),
            None,
        ));
        for p in pieces(&c.arguments, 10) {
            out.push(openai_chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]}),
                None,
            ));
        }
    }
    let finish = if r.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    out.push(openai_chunk(json!({}), Some(finish)));
    let usage = json!({
        "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": "mock",
        "choices": [],
        "usage": {"prompt_tokens": r.input_tokens, "completion_tokens": r.output_tokens,
                  "total_tokens": r.input_tokens + r.output_tokens,
                  "prompt_tokens_details": {"cached_tokens": r.cached_tokens}},
    });
    out.push(format!("data: {usage}\n\n"));
    out.push("data: [DONE]\n\n".to_string());
    out
}

fn anthropic_event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// The reply as Anthropic Messages stream events.
pub fn anthropic_events(r: &Reply) -> Vec<String> {
    let mut out = vec![anthropic_event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": "msg_mock", "type": "message", "role": "assistant", "content": [],
            "model": "mock", "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": r.input_tokens.saturating_sub(r.cached_tokens),
                      "cache_read_input_tokens": r.cached_tokens, "output_tokens": 1}}}),
    )];
    let mut index = 0;
    if !r.reasoning.is_empty() {
        out.push(anthropic_event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ));
        for p in pieces(&r.reasoning, 9) {
            out.push(anthropic_event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "thinking_delta", "thinking": p}}),
            ));
        }
        out.push(anthropic_event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index,
                   "delta": {"type": "signature_delta", "signature": signature(&r.reasoning)}}),
        ));
        out.push(anthropic_event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    if !r.text.is_empty() {
        out.push(anthropic_event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        ));
        out.push(anthropic_event("ping", json!({"type": "ping"})));
        for p in pieces(&r.text, 7) {
            out.push(anthropic_event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}}),
            ));
        }
        out.push(anthropic_event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    for c in &r.calls {
        out.push(anthropic_event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "tool_use", "id": c.id, "name": c.name, "input": {}}}),
        ));
        for p in pieces(&c.arguments, 10) {
            out.push(anthropic_event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": p}}),
            ));
        }
        out.push(anthropic_event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    let stop = if r.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    out.push(anthropic_event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": r.output_tokens}}),
    ));
    out.push(anthropic_event(
        "message_stop",
        json!({"type": "message_stop"}),
    ));
    out
}

/// A stand-in for the server's signature of `thinking`: the same
/// thinking always signs the same.
pub fn signature(thinking: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in thinking.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("sig-{h:016x}")
}

fn responses_event(data: Value) -> String {
    let name = data["type"].as_str().unwrap_or("").to_string();
    format!("event: {name}\ndata: {data}\n\n")
}

/// The reply as OpenAI Responses stream events: a reasoning item (its
/// summary streamed, its encrypted content at its end), the message,
/// each function call, then `response.completed` with usage.
pub fn responses_events(r: &Reply) -> Vec<String> {
    let mut out = vec![responses_event(json!({"type": "response.created",
        "response": {"id": "resp_mock", "status": "in_progress", "output": []}}))];
    let mut output = Vec::new();
    let mut index = 0;
    if !r.reasoning.is_empty() {
        let id = "rs_mock";
        out.push(responses_event(
            json!({"type": "response.output_item.added",
            "output_index": index, "item": {"type": "reasoning", "id": id, "summary": []}}),
        ));
        out.push(responses_event(
            json!({"type": "response.reasoning_summary_part.added",
            "item_id": id, "output_index": index, "summary_index": 0,
            "part": {"type": "summary_text", "text": ""}}),
        ));
        for p in pieces(&r.reasoning, 9) {
            out.push(responses_event(
                json!({"type": "response.reasoning_summary_text.delta",
                "item_id": id, "output_index": index, "summary_index": 0, "delta": p}),
            ));
        }
        let item = json!({"type": "reasoning", "id": id,
            "summary": [{"type": "summary_text", "text": r.reasoning}],
            "encrypted_content": format!("enc-{}", signature(&r.reasoning))});
        out.push(responses_event(json!({"type": "response.output_item.done",
            "output_index": index, "item": item})));
        output.push(item);
        index += 1;
    }
    if !r.text.is_empty() {
        let id = "msg_mock";
        out.push(responses_event(
            json!({"type": "response.output_item.added",
            "output_index": index, "item": {"type": "message", "id": id, "role": "assistant",
            "status": "in_progress", "content": []}}),
        ));
        for p in pieces(&r.text, 7) {
            out.push(responses_event(
                json!({"type": "response.output_text.delta",
                "item_id": id, "output_index": index, "content_index": 0, "delta": p}),
            ));
        }
        let item = json!({"type": "message", "id": id, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": r.text, "annotations": []}]});
        out.push(responses_event(json!({"type": "response.output_item.done",
            "output_index": index, "item": item})));
        output.push(item);
        index += 1;
    }
    for (i, c) in r.calls.iter().enumerate() {
        let id = format!("fc_mock_{i}");
        out.push(responses_event(
            json!({"type": "response.output_item.added",
            "output_index": index, "item": {"type": "function_call", "id": id,
            "call_id": c.id, "name": c.name, "arguments": "", "status": "in_progress"}}),
        ));
        for p in pieces(&c.arguments, 10) {
            out.push(responses_event(
                json!({"type": "response.function_call_arguments.delta",
                "item_id": id, "output_index": index, "delta": p}),
            ));
        }
        out.push(responses_event(
            json!({"type": "response.function_call_arguments.done",
            "item_id": id, "output_index": index, "arguments": c.arguments}),
        ));
        let item = json!({"type": "function_call", "id": id, "call_id": c.id, "name": c.name,
            "arguments": c.arguments, "status": "completed"});
        out.push(responses_event(json!({"type": "response.output_item.done",
            "output_index": index, "item": item})));
        output.push(item);
        index += 1;
    }
    out.push(responses_event(json!({"type": "response.completed", "response": {
        "id": "resp_mock", "status": "completed", "output": output,
        "usage": {"input_tokens": r.input_tokens,
                  "input_tokens_details": {"cached_tokens": r.cached_tokens},
                  "output_tokens": r.output_tokens,
                  "output_tokens_details": {"reasoning_tokens": if r.reasoning.is_empty() { 0 } else { 3 }},
                  "total_tokens": r.input_tokens + r.output_tokens}}})));
    out
}

/// The tool results a recorded request carries, by call id, in order, as
/// `(call_id, content, is_error)`; works for both formats.
pub fn tool_results(req: &Recorded) -> Vec<(String, Value, bool)> {
    let msgs = req.body["messages"].as_array().cloned().unwrap_or_default();
    let mut out = Vec::new();
    // Only the results after the last assistant message.
    let last_assistant = msgs
        .iter()
        .rposition(|m| m["role"] == "assistant")
        .unwrap_or(0);
    // The Responses wire: `function_call_output` items after the last call.
    if let Some(input) = req.body["input"].as_array() {
        let last_call = input
            .iter()
            .rposition(|i| i["type"] == "function_call" || i["role"] == "assistant")
            .unwrap_or(0);
        for i in input[last_call..]
            .iter()
            .filter(|i| i["type"] == "function_call_output")
        {
            let content = i["output"].as_str().unwrap_or("");
            let value = serde_json::from_str(content).unwrap_or(Value::String(content.to_string()));
            let is_error = value.get("error").is_some();
            out.push((
                i["call_id"].as_str().unwrap_or("").to_string(),
                value,
                is_error,
            ));
        }
        return out;
    }
    for m in &msgs[last_assistant..] {
        if m["role"] == "tool" {
            let content = m["content"].as_str().unwrap_or("");
            out.push((
                m["tool_call_id"].as_str().unwrap_or("").to_string(),
                serde_json::from_str(content).unwrap_or(Value::String(content.to_string())),
                false,
            ));
        }
        if m["role"] == "user"
            && let Some(blocks) = m["content"].as_array()
        {
            for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
                let content = b["content"].as_str().unwrap_or("");
                out.push((
                    b["tool_use_id"].as_str().unwrap_or("").to_string(),
                    serde_json::from_str(content).unwrap_or(Value::String(content.to_string())),
                    b["is_error"] == true,
                ));
            }
        }
    }
    out
}
