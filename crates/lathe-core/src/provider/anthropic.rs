//! The Anthropic Messages wire format, streaming.
//!
//! Requests go to `{base_url}/v1/messages` with `stream: true` and
//! `max_tokens`. Text arrives in `text_delta`s; each tool call is a
//! `tool_use` content block whose input arrives as `input_json_delta`
//! pieces; thinking as `thinking` blocks (`thinking_delta`s, then a
//! `signature_delta`) or opaque `redacted_thinking` blocks. Tool results
//! go back as `tool_result` blocks (with `is_error`) in one user message,
//! and thinking blocks go back unmodified, ahead of the calls they led to
//! (the server answers 400 otherwise). The end marker is the
//! `message_stop` event; `error` events report overloads, which are
//! retried.
//!
//! Caching: a request marks four cache breakpoints: the tools, the
//! system prompt, the newest message and the one that was newest a round
//! ago, so every round of a tool loop reads the whole history from the
//! cache and writes only what it adds. Usage in `message_start` is
//! updated by `message_delta`, whose counts are cumulative.

use async_trait::async_trait;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::http::{CALL_OVERHEAD, Held, HttpDriver, StreamDecoder, Wire, sensitive, shorten};
use super::sse::SseEvent;
use super::{
    Carried, ChatRequest, Completion, Message, Provider, ProviderError, ProviderSettings,
    StreamObserver, ToolCall, WireApi,
};
use crate::protocol::Usage;

const API_VERSION: &str = "2023-06-01";

/// Thinking between tool calls (interleaved thinking), a beta flag of
/// Anthropic's API.
const BETA: &str = "interleaved-thinking-2025-05-14";

pub struct Anthropic {
    driver: HttpDriver,
    url: String,
    /// `{base_url}/v1/models`.
    models_url: String,
    headers: HeaderMap,
    options: Options,
}

/// What every request of this provider asks for, beside the conversation.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `max_tokens`; `None`: the model's known cap (at most 32,000), else
    /// 8,192.
    pub max_tokens: Option<u32>,
    /// The thinking budget; `None`: from the request's effort, else off.
    pub thinking_budget: Option<u32>,
    pub effort: Option<super::Effort>,
    pub extra_body: Map<String, Value>,
    /// The server, in its one form: only its own carried items go back.
    pub server: String,
}

impl Anthropic {
    pub fn new(settings: ProviderSettings) -> Result<Self, ProviderError> {
        let base = settings.base_url.trim_end_matches('/');
        let url = if base.ends_with("/v1/messages") {
            base.to_string()
        } else if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        };
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        // Anthropic's own API thinks between tool calls with it; servers
        // that copy its wire are not sent flags they may not know.
        if super::is_anthropic_host(&settings.base_url) {
            headers.insert(
                HeaderName::from_static("anthropic-beta"),
                HeaderValue::from_static(BETA),
            );
        }
        if let Some(key) = &settings.api_key {
            let value = sensitive(key.expose()).ok_or_else(|| {
                ProviderError::Malformed(
                    "the API key contains characters a header cannot carry".into(),
                )
            })?;
            headers.insert(HeaderName::from_static("x-api-key"), value);
        }
        let models_url = format!(
            "{}/models?limit=1000",
            url.strip_suffix("/messages").unwrap_or(base)
        );
        let driver = HttpDriver::new(&settings)?;
        let server = driver.server().to_string();
        Ok(Self {
            driver,
            url,
            models_url,
            headers,
            options: Options {
                max_tokens: settings.max_output_tokens,
                thinking_budget: settings.thinking_budget,
                effort: settings.effort,
                extra_body: settings.extra_body,
                server,
            },
        })
    }
}

#[async_trait]
impl Provider for Anthropic {
    fn name(&self) -> &str {
        "anthropic"
    }

    async fn models(&self) -> Result<Option<Vec<String>>, ProviderError> {
        self.driver
            .list_models(&self.models_url, &self.headers)
            .await
    }

    async fn complete(
        &self,
        request: ChatRequest<'_>,
        observer: &mut dyn StreamObserver,
        cancel: &CancellationToken,
    ) -> Result<Completion, ProviderError> {
        self.driver.run(self, request, observer, cancel).await
    }
}

impl Wire for Anthropic {
    fn url(&self) -> &str {
        &self.url
    }

    fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    fn body(&self, req: &ChatRequest<'_>) -> Vec<u8> {
        super::http::encode(&request_body(req, &self.options), &self.options.extra_body)
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Box::<Decoder>::default()
    }

    /// A whole message, replayed as the events that would have streamed it.
    fn events_of_full_response(&self, body: Value) -> Vec<SseEvent> {
        let ev = |v: Value| SseEvent {
            event: String::new(),
            data: v.to_string(),
        };
        if body.get("type").and_then(Value::as_str) == Some("error") {
            return vec![ev(body)];
        }
        let usage = body.get("usage").cloned().unwrap_or(Value::Null);
        let mut out = vec![ev(
            json!({"type": "message_start", "message": {"usage": usage}}),
        )];
        let blocks = body
            .get("content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (index, block) in blocks.into_iter().enumerate() {
            out.push(ev(
                json!({"type": "content_block_start", "index": index, "content_block": block}),
            ));
            out.push(ev(json!({"type": "content_block_stop", "index": index})));
        }
        out.push(ev(json!({
            "type": "message_delta",
            "delta": {
                "stop_reason": body.get("stop_reason"),
                "stop_details": body.get("stop_details"),
            },
            "usage": usage,
        })));
        out.push(ev(json!({"type": "message_stop"})));
        out
    }
}

/// The output cap and thinking budget of a request: the cap configured,
/// else the model's own (at most 32,000), else 8,192; the budget below it
/// (with room for the answer), neither past what the model allows.
fn limits(model: &str, configured: Option<u32>, budget: Option<u32>) -> (u32, Option<u32>) {
    let most = super::models::output_cap(model).map(|c| u32::try_from(c).unwrap_or(u32::MAX));
    let cap = configured
        .unwrap_or_else(|| most.map_or(8_192, |c| c.min(32_000)))
        .max(1);
    let Some(budget) = budget else {
        return (cap, None);
    };
    // The answer needs room after the thinking.
    const ROOM: u32 = 4_096;
    let cap = if cap < budget.saturating_add(ROOM) {
        budget.saturating_add(ROOM)
    } else {
        cap
    };
    match most {
        // The model allows less than asked: the thinking gives way.
        Some(m) if cap > m => {
            let budget = m.saturating_sub(ROOM);
            (m, (budget >= 1_024).then_some(budget))
        }
        _ => (cap, Some(budget)),
    }
}

/// The body of a streaming Messages request, borrowing the conversation.
pub fn request_body<'a>(req: &ChatRequest<'a>, options: &'a Options) -> Body<'a> {
    // An effort asked for now (`/effort`, `--effort`) wins over the
    // configured budget, which wins over the configured effort.
    let budget = match req.effort {
        Some(e) => e.thinking_budget(),
        None => options
            .thinking_budget
            .or_else(|| options.effort.and_then(super::Effort::thinking_budget)),
    }
    .filter(|b| *b >= 1_024);
    let (max_tokens, budget) = limits(req.model, options.max_tokens, budget);
    let mut messages = Vec::with_capacity(req.messages.len());
    for m in req.messages {
        match m {
            Message::User(text) => messages.push(Msg {
                role: "user",
                content: vec![Part::Text {
                    text,
                    cache_control: None,
                }],
            }),
            Message::UserImages { text, images } => messages.push(Msg {
                role: "user",
                content: images
                    .iter()
                    .map(|i| Part::Image {
                        source: ImageSource {
                            kind: "base64",
                            media_type: &i.media_type,
                            data: &i.data,
                        },
                        cache_control: None,
                    })
                    .chain((!text.is_empty()).then_some(Part::Text {
                        text,
                        cache_control: None,
                    }))
                    .collect(),
            }),
            Message::Assistant {
                text,
                tool_calls,
                carried,
                ..
            } => {
                messages.extend(assistant(
                    (&options.server, req.model),
                    text,
                    tool_calls,
                    carried,
                ));
            }
            Message::ToolResults(results) => messages.push(Msg {
                role: "user",
                content: results
                    .iter()
                    .map(|r| Part::ToolResult {
                        tool_use_id: &r.call_id,
                        content: &r.content,
                        is_error: r.is_error,
                        cache_control: None,
                    })
                    .collect(),
            }),
        }
    }
    // The rolling breakpoints: the newest message, and the newest of the
    // request before (two messages back in a tool loop), so this round
    // reads what the last one wrote.
    let n = messages.len();
    let mut marked = 0;
    for at in [n.checked_sub(1), n.checked_sub(3)].into_iter().flatten() {
        if marked < 2
            && let Some(last) = messages[at].content.last_mut()
            && last.mark()
        {
            marked += 1;
        }
    }
    let mut tools: Vec<ToolDef<'a>> = req
        .tools
        .iter()
        .map(|t| ToolDef {
            name: &t.name,
            description: &t.description,
            input_schema: &t.parameters,
            cache_control: None,
        })
        .collect();
    if let Some(last) = tools.last_mut() {
        last.cache_control = Some(EPHEMERAL);
    }
    Body {
        model: req.model,
        max_tokens,
        messages,
        stream: true,
        system: (!req.system.is_empty()).then_some([SystemBlock {
            kind: "text",
            text: req.system,
            cache_control: EPHEMERAL,
        }]),
        tools,
        thinking: budget.map(|budget_tokens| Thinking {
            kind: "enabled",
            budget_tokens,
        }),
    }
}

/// A response in the history: its thinking first, then the text, then each
/// call after the thinking that came just before it; nothing when empty.
fn assistant<'a>(
    (server, model): (&str, &str),
    text: &'a str,
    tool_calls: &'a [crate::provider::ToolCall],
    carried: &'a [crate::provider::Carried],
) -> Option<Msg<'a>> {
    let mut blocks = Vec::with_capacity(tool_calls.len() + 2);
    // Thinking first, then the text, then each call after
    // the thinking that came just before it.
    let ours = |blocks: &mut Vec<Part<'a>>, call: Option<&str>| {
        blocks.extend(
            carried
                .iter()
                .filter(|c| {
                    c.goes_to(WireApi::Anthropic, server, model) && c.call_id.as_deref() == call
                })
                .map(|c| Part::Raw(&c.item)),
        );
    };
    ours(&mut blocks, None);
    if !text.is_empty() {
        blocks.push(Part::Text {
            text,
            cache_control: None,
        });
    }
    for c in tool_calls {
        ours(&mut blocks, Some(&c.id));
        blocks.push(Part::ToolUse {
            id: &c.id,
            name: &c.name,
            input: object_input(&c.arguments),
        });
    }
    (!blocks.is_empty()).then_some(Msg {
        role: "assistant",
        content: blocks,
    })
}

/// `input` must be a JSON object; the model's text is passed through as it
/// is when it is one, and malformed arguments (already reported to the
/// model as an error) go back as `{}`.
fn object_input(arguments: &str) -> Input<'_> {
    match serde_json::from_str::<&RawValue>(arguments) {
        Ok(raw) if raw.get().starts_with('{') => Input::Raw(raw),
        _ => Input::Empty(serde_json::Map::new()),
    }
}

#[derive(Serialize)]
#[serde(untagged)]
enum Input<'a> {
    Raw(&'a RawValue),
    Empty(serde_json::Map<String, Value>),
}

#[derive(Serialize)]
pub struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    messages: Vec<Msg<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<[SystemBlock<'a>; 1]>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolDef<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
}

#[derive(Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u32,
}

#[derive(Serialize)]
struct Msg<'a> {
    role: &'static str,
    content: Vec<Part<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Image {
        source: ImageSource<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Input<'a>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// A block the server sent, going back as it came.
    #[serde(untagged)]
    Raw(&'a Value),
}

impl Part<'_> {
    /// Puts a cache breakpoint on this block; `false` for a block that
    /// cannot take one here (thinking, a call).
    fn mark(&mut self) -> bool {
        match self {
            Part::Text { cache_control, .. }
            | Part::Image { cache_control, .. }
            | Part::ToolResult { cache_control, .. } => {
                *cache_control = Some(EPHEMERAL);
                true
            }
            Part::ToolUse { .. } | Part::Raw(_) => false,
        }
    }
}

#[derive(Serialize)]
struct ImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
}

#[derive(Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    cache_control: CacheControl,
}

#[derive(Serialize, Clone, Copy)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

#[derive(Serialize)]
struct ToolDef<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

enum Block {
    Text,
    Tool {
        id: String,
        name: String,
        json: String,
        initial: Value,
    },
    /// Thinking, with its text and signature as they stream.
    Thinking {
        thinking: String,
        signature: String,
    },
    /// Opaque thinking, sent back as it came.
    Redacted(Value),
    Other,
}

#[derive(Default)]
struct Decoder {
    text: String,
    reasoning: String,
    /// Blocks by index, in the order they came.
    blocks: Vec<(u64, Block)>,
    /// The bytes of the blocks as they began.
    started_bytes: usize,
    usage: Usage,
    stop_reason: Option<String>,
    /// Why the server refused, when it says.
    refusal: Option<String>,
}

fn u64_at(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

impl Decoder {
    fn block(&mut self, index: u64) -> Option<&mut Block> {
        self.blocks
            .iter_mut()
            .rev()
            .find(|(i, _)| *i == index)
            .map(|(_, b)| b)
    }

    /// Counts from `message_start`, or the cumulative ones of a
    /// `message_delta` (each field it has replaces the one before).
    /// A content block begins: text, a tool call, thinking (signed or
    /// redacted), or a kind it keeps no more of.
    fn block_start(&mut self, index: u64, block: Value, obs: &mut dyn StreamObserver) {
        let str_of = |k: &str| {
            block
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        self.started_bytes += block.to_string().len();
        let b = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = block.get("text").and_then(Value::as_str)
                    && !t.is_empty()
                {
                    self.text.push_str(t);
                    obs.text_delta(t);
                }
                Block::Text
            }
            Some("tool_use") => Block::Tool {
                id: str_of("id"),
                name: str_of("name"),
                json: String::new(),
                initial: block.get("input").cloned().unwrap_or(Value::Null),
            },
            Some("thinking") => {
                let thinking = str_of("thinking");
                if !thinking.is_empty() {
                    self.reasoning.push_str(&thinking);
                    obs.reasoning_delta(&thinking);
                }
                Block::Thinking {
                    thinking,
                    signature: str_of("signature"),
                }
            }
            Some("redacted_thinking") => Block::Redacted(block),
            _ => Block::Other,
        };
        self.blocks.push((index, b));
    }

    /// More of a block: text, a call's JSON, thinking or its signature.
    fn block_delta(&mut self, index: u64, delta: &Value, obs: &mut dyn StreamObserver) {
        let piece = |k: &str| delta.get(k).and_then(Value::as_str);
        match delta.get("type").and_then(Value::as_str) {
            Some("text_delta") => {
                if let Some(t) = piece("text") {
                    self.text.push_str(t);
                    obs.text_delta(t);
                }
            }
            Some("input_json_delta") => {
                if let (Some(p), Some(Block::Tool { json, .. })) =
                    (piece("partial_json"), self.block(index))
                {
                    json.push_str(p);
                }
            }
            Some("thinking_delta") => {
                if let Some(t) = piece("thinking") {
                    if let Some(Block::Thinking { thinking, .. }) = self.block(index) {
                        thinking.push_str(t);
                    }
                    self.reasoning.push_str(t);
                    obs.reasoning_delta(t);
                }
            }
            Some("signature_delta") => {
                if let (Some(p), Some(Block::Thinking { signature, .. })) =
                    (piece("signature"), self.block(index))
                {
                    signature.push_str(p);
                }
            }
            // citation deltas and types added later.
            _ => {}
        }
    }

    fn count(&mut self, u: &Value) {
        let field = |k: &str| u.get(k).and_then(Value::as_u64);
        let fresh = field("input_tokens");
        let write = field("cache_creation_input_tokens");
        let read = field("cache_read_input_tokens");
        if fresh.is_some() || write.is_some() || read.is_some() {
            let uncached = fresh.unwrap_or_else(|| self.usage.uncached_input());
            let write = write.unwrap_or(self.usage.cache_write_tokens);
            let read = read.unwrap_or(self.usage.cache_read_tokens);
            self.usage.input_tokens = uncached.saturating_add(write).saturating_add(read);
            self.usage.cache_write_tokens = write;
            self.usage.cache_read_tokens = read;
        }
        if let Some(out) = field("output_tokens") {
            self.usage.output_tokens = out;
        }
        if let Some(t) = u
            .get("output_tokens_details")
            .and_then(|d| d.get("thinking_tokens"))
            .and_then(Value::as_u64)
        {
            self.usage.reasoning_tokens = t;
        }
    }
}

impl StreamDecoder for Decoder {
    fn held(&self) -> Held {
        // Each block counts as it began (its name, id, redacted data)
        // besides what streamed into it.
        let mut held = Held {
            text: self.text.len() + self.refusal.as_ref().map_or(0, String::len),
            reasoning: self.reasoning.len(),
            arguments: self.started_bytes + self.blocks.len() * CALL_OVERHEAD,
        };
        for (_, block) in &self.blocks {
            match block {
                Block::Tool { json, .. } => held.arguments += json.len(),
                Block::Thinking { signature, .. } => held.reasoning += signature.len(),
                Block::Text | Block::Redacted(_) | Block::Other => {}
            }
        }
        held
    }

    fn event(
        &mut self,
        ev: &SseEvent,
        obs: &mut dyn StreamObserver,
    ) -> Result<bool, ProviderError> {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(false);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::Malformed(format!(
                "unparseable stream event ({e}): {}",
                shorten(data, 200)
            ))
        })?;
        let kind = v.get("type").and_then(Value::as_str).unwrap_or(&ev.event);
        let index = u64_at(&v, "index");
        match kind {
            "message_start" => {
                if let Some(u) = v.get("message").and_then(|m| m.get("usage")) {
                    self.count(u);
                }
            }
            "content_block_start" => {
                let block = v.get("content_block").cloned().unwrap_or(Value::Null);
                self.block_start(index, block, obs);
            }
            "content_block_delta" => {
                self.block_delta(index, v.get("delta").unwrap_or(&Value::Null), obs);
            }
            "message_delta" => {
                let delta = v.get("delta");
                if let Some(r) = delta
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.stop_reason = Some(r.to_string());
                    if r == "refusal" {
                        let why = delta
                            .and_then(|d| d.get("stop_details"))
                            .and_then(|d| d.get("explanation"))
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        self.refusal = Some(why.to_string());
                    }
                }
                if let Some(u) = v.get("usage") {
                    self.count(u);
                }
            }
            "message_stop" => return Ok(true),
            "error" => {
                let err = v.get("error").cloned().unwrap_or(Value::Null);
                let etype = err.get("type").and_then(Value::as_str).unwrap_or("error");
                let msg = err.get("message").and_then(Value::as_str).unwrap_or("");
                let retryable =
                    matches!(etype, "overloaded_error" | "api_error" | "rate_limit_error");
                return Err(ProviderError::Stream {
                    message: format!("{etype}: {msg}"),
                    retryable,
                });
            }
            // ping, content_block_stop, and types added later.
            _ => {}
        }
        Ok(false)
    }

    fn finish(self: Box<Self>, saw_end: bool) -> Result<Completion, ProviderError> {
        if !saw_end {
            return Err(ProviderError::Incomplete("no `message_stop` event".into()));
        }
        let mut tool_calls = Vec::new();
        let mut carried = Vec::new();
        // Thinking goes back before the call that followed it.
        let mut waiting: Vec<Value> = Vec::new();
        for (_, b) in self.blocks {
            match b {
                Block::Tool {
                    id,
                    name,
                    json,
                    initial,
                } => {
                    let arguments = if json.trim().is_empty() {
                        if initial.is_object() {
                            initial.to_string()
                        } else {
                            "{}".to_string()
                        }
                    } else {
                        json
                    };
                    let call_id = (!tool_calls.is_empty()).then(|| id.clone());
                    carried.extend(waiting.drain(..).map(|item| Carried {
                        server: String::new(),
                        wire: WireApi::Anthropic,
                        call_id: call_id.clone(),
                        item,
                        model: String::new(),
                    }));
                    tool_calls.push(ToolCall {
                        id,
                        name,
                        arguments,
                    });
                }
                Block::Thinking {
                    thinking,
                    signature,
                } => waiting.push(json!({
                    "type": "thinking",
                    "thinking": thinking,
                    "signature": signature,
                })),
                Block::Redacted(block) => waiting.push(block),
                Block::Text | Block::Other => {}
            }
        }
        // Thinking with no call after it leads the message.
        carried.extend(waiting.into_iter().map(|item| Carried {
            server: String::new(),
            wire: WireApi::Anthropic,
            call_id: None,
            item,
            model: String::new(),
        }));
        Ok(Completion {
            text: self.text,
            tool_calls,
            usage: self.usage,
            stop_reason: self.stop_reason,
            reasoning: self.reasoning,
            carried,
            refusal: self.refusal,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{NoopObserver, ToolOutput};

    fn feed(events: &[&str]) -> Result<Completion, ProviderError> {
        let mut d: Box<dyn StreamDecoder> = Box::<Decoder>::default();
        let mut end = false;
        for e in events {
            let ev = SseEvent {
                event: String::new(),
                data: (*e).to_string(),
            };
            if d.event(&ev, &mut NoopObserver)? {
                end = true;
                break;
            }
        }
        d.finish(end)
    }

    #[test]
    fn text_and_tool_use_blocks_assemble_from_deltas() {
        let c = feed(&[
            r#"{"type":"message_start","message":{"usage":{"input_tokens":20,"cache_read_input_tokens":5,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Reading."}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"a.txt\"}"}}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"list_directory","input":{}}}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":33}}"#,
            r#"{"type":"message_stop"}"#,
        ])
        .unwrap();
        assert_eq!(c.text, "Reading.");
        assert_eq!(c.tool_calls[0].arguments, r#"{"path":"a.txt"}"#);
        assert_eq!(c.tool_calls[1].arguments, "{}");
        assert_eq!(
            c.usage,
            Usage {
                input_tokens: 25,
                output_tokens: 33,
                cache_read_tokens: 5,
                ..Default::default()
            }
        );
        assert_eq!(c.stop_reason.as_deref(), Some("tool_use"));
    }

    #[test]
    fn a_non_streamed_message_is_understood() {
        let body = json!({
            "type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": [
                {"type": "text", "text": "Let me read it."},
                {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}}
            ],
            "usage": {"input_tokens": 9, "output_tokens": 4}
        });
        let wire = Anthropic::new(ProviderSettings::new(
            crate::provider::ProviderKind::Anthropic,
            "http://x",
        ))
        .unwrap();
        let mut d = wire.decoder();
        let mut end = false;
        for ev in wire.events_of_full_response(body) {
            end = d.event(&ev, &mut NoopObserver).unwrap();
        }
        assert!(end);
        let c = d.finish(true).unwrap();
        assert_eq!(c.text, "Let me read it.");
        assert_eq!(c.tool_calls[0].arguments, r#"{"path":"a"}"#);
        assert_eq!(
            c.usage,
            Usage {
                input_tokens: 9,
                output_tokens: 4,
                ..Default::default()
            }
        );
    }

    #[test]
    fn no_message_stop_is_incomplete_and_overload_is_retryable() {
        assert!(matches!(
            feed(&[r#"{"type":"message_start","message":{}}"#]),
            Err(ProviderError::Incomplete(_))
        ));
        let e = feed(&[
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ])
        .unwrap_err();
        assert!(e.is_retryable());
        assert!(e.to_string().contains("overloaded_error: Overloaded"));
    }

    /// However much thinking is asked for, the request stays within what
    /// the model allows, with room for the answer after the thinking.
    #[test]
    fn thinking_budgets_fit_the_model() {
        assert_eq!(limits("claude-sonnet-4-5", None, None), (32_000, None));
        assert_eq!(
            limits("claude-sonnet-4-5", None, Some(10_000)),
            (32_000, Some(10_000))
        );
        // xhigh on a 64k model: the budget gives way.
        let (cap, budget) = limits("claude-sonnet-4-5", None, Some(63_999));
        assert_eq!(cap, 64_000);
        assert_eq!(budget, Some(64_000 - 4_096));
        // high on opus 4.1 (32k).
        let (cap, budget) = limits("claude-opus-4-1", None, Some(32_000));
        assert!(
            cap <= 32_000 && budget.unwrap() + 1_024 <= cap,
            "{cap} {budget:?}"
        );
        // An unknown model: the cap grows past the budget.
        assert_eq!(
            limits("kimi", Some(8_192), Some(10_000)),
            (14_096, Some(10_000))
        );
    }

    #[test]
    fn request_body_uses_the_native_shapes() {
        let messages = vec![
            Message::User("hi".into()),
            Message::assistant(
                "ok",
                vec![ToolCall {
                    id: "t1".into(),
                    name: "read_file".into(),
                    arguments: "not json".into(),
                }],
            ),
            Message::ToolResults(vec![ToolOutput {
                call_id: "t1".into(),
                content: r#"{"error":"invalid arguments"}"#.into(),
                is_error: true,
            }]),
        ];
        let body = serde_json::to_value(request_body(
            &ChatRequest {
                effort: None,
                cache_key: None,
                model: "claude",
                system: "sys",
                messages: &messages,
                tools: &[],
            },
            &Options {
                max_tokens: Some(1024),
                ..Options::default()
            },
        ))
        .unwrap();
        assert_eq!(body["max_tokens"], 1024);
        assert_eq!(body["system"][0]["text"], "sys");
        assert_eq!(body["messages"][1]["content"][1]["type"], "tool_use");
        assert_eq!(body["messages"][1]["content"][1]["input"], json!({}));
        let result = &body["messages"][2]["content"][0];
        assert_eq!(result["type"], "tool_result");
        assert_eq!(result["tool_use_id"], "t1");
        assert_eq!(result["is_error"], true);
        assert!(body.get("tools").is_none());
    }
}
