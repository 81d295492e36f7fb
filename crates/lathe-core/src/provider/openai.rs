//! The OpenAI Chat Completions wire format, streaming.
//!
//! Requests go to `{base_url}/chat/completions` with `stream: true` and
//! `stream_options.include_usage`. Text arrives as `delta.content` (a
//! string, or Mistral's array of typed parts); reasoning as
//! `delta.reasoning_content` (DeepSeek, llama.cpp, xAI), `delta.reasoning`
//! (vLLM, Ollama, Groq, OpenRouter) or `reasoning_details` (OpenRouter);
//! a refusal as `delta.refusal`; tool calls as `delta.tool_calls[]`
//! entries keyed by `index`, whose `arguments` arrive in pieces (or whole,
//! as a JSON object, from some proxies) and are appended. Tool results go
//! back as `tool` role messages with their `tool_call_id`. The end marker
//! is `data: [DONE]`; a stream that closes cleanly after a `finish_reason`
//! is accepted too, since some compatible servers never send the marker.
//!
//! What a thinking model must get back goes back with the assistant
//! message that carried tool calls: its `reasoning_content` or
//! `reasoning` (DeepSeek answers 400 without it), OpenRouter's
//! `reasoning_details`, and Gemini's thought signatures on their calls
//! (`extra_content`). A server that refuses those fields is asked again
//! without them, and never sent them again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::http::{CALL_OVERHEAD, Held, HttpDriver, StreamDecoder, Wire, sensitive, shorten};
use super::sse::SseEvent;
use super::{
    Carried, ChatRequest, Completion, Effort, Message, Provider, ProviderError, ProviderSettings,
    StreamObserver, ToolCall, WireApi,
};
use crate::protocol::Usage;

pub struct OpenAi {
    driver: HttpDriver,
    url: String,
    /// `{base_url}/models`.
    models_url: String,
    headers: HeaderMap,
    /// Cleared for good when the server rejects `stream_options`.
    include_usage: AtomicBool,
    /// Cleared for good when the server refuses reasoning fields on
    /// assistant messages (Groq does).
    carry_reasoning: AtomicBool,
    options: BodyOptions,
}

/// What every request of this provider adds to the conversation.
#[derive(Debug, Clone, Default)]
pub struct BodyOptions {
    /// The output cap, and the name the server knows it by
    /// (`max_completion_tokens` on OpenAI's API, `max_tokens` elsewhere).
    pub max_tokens: Option<(&'static str, u32)>,
    pub effort: Option<Effort>,
    /// Send `prompt_cache_key` (OpenAI's own API; other servers may
    /// refuse fields they do not know).
    pub cache_key: bool,
    pub extra_body: Map<String, Value>,
    /// The server, in its one form: only its own carried items go back.
    pub server: String,
}

impl OpenAi {
    pub fn new(settings: ProviderSettings) -> Result<Self, ProviderError> {
        let base = settings.base_url.trim_end_matches('/');
        let url = if base.ends_with("/chat/completions") {
            base.to_string()
        } else {
            format!("{base}/chat/completions")
        };
        let headers = bearer_headers(&settings)?;
        let models_url = format!(
            "{}/models",
            url.strip_suffix("/chat/completions").unwrap_or(base)
        );
        let official = super::is_openai_host(&settings.base_url);
        let groq = reqwest::Url::parse(&settings.base_url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
            .is_some_and(|h| h == "groq.com" || h.ends_with(".groq.com"));
        let driver = HttpDriver::new(&settings)?;
        let server = driver.server().to_string();
        Ok(Self {
            driver,
            url,
            models_url,
            headers,
            include_usage: AtomicBool::new(true),
            carry_reasoning: AtomicBool::new(!groq),
            options: BodyOptions {
                max_tokens: settings.max_output_tokens.map(|n| {
                    (
                        if official {
                            "max_completion_tokens"
                        } else {
                            "max_tokens"
                        },
                        n,
                    )
                }),
                effort: settings.effort,
                cache_key: official,
                extra_body: settings.extra_body,
                server,
            },
        })
    }
}

/// `Content-Type`, `Accept` and the bearer key, as OpenAI-style servers
/// take them.
pub(crate) fn bearer_headers(settings: &ProviderSettings) -> Result<HeaderMap, ProviderError> {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    if let Some(key) = &settings.api_key {
        let value = sensitive(&format!("Bearer {}", key.expose())).ok_or_else(|| {
            ProviderError::Malformed("the API key contains characters a header cannot carry".into())
        })?;
        headers.insert(AUTHORIZATION, value);
    }
    Ok(headers)
}

#[async_trait]
impl Provider for OpenAi {
    fn name(&self) -> &str {
        "openai"
    }

    async fn models(&self) -> Result<Option<Vec<String>>, ProviderError> {
        self.driver
            .list_models(&self.models_url, &self.headers)
            .await
    }

    async fn model_info(&self, model: &str) -> super::models::ModelInfo {
        self.driver
            .openai_style_model_info(&self.models_url, &self.headers, model)
            .await
    }

    async fn complete(
        &self,
        request: ChatRequest<'_>,
        observer: &mut dyn StreamObserver,
        cancel: &CancellationToken,
    ) -> Result<Completion, ProviderError> {
        let mut tries = 0;
        loop {
            tries += 1;
            match self.driver.run(self, request, observer, cancel).await {
                // A few strict servers refuse `stream_options`; go on without usage.
                Err(ProviderError::Http {
                    status: 400 | 422,
                    message,
                    ..
                }) if tries < 3
                    && message.contains("stream_options")
                    && self.include_usage.swap(false, Ordering::Relaxed) =>
                {
                    tracing::warn!(%message, "server rejected stream_options; retrying without usage reporting");
                }
                // Reasoning fields sent back: left out from now on.
                Err(ProviderError::Http {
                    status: 400 | 422,
                    message,
                    ..
                }) if tries < 3
                    && super::http::refuses_reasoning(&message)
                    && self.carry_reasoning.swap(false, Ordering::Relaxed) =>
                {
                    tracing::warn!(%message, "server refused reasoning fields; retrying without them");
                }
                other => return other,
            }
        }
    }
}

impl Wire for OpenAi {
    fn url(&self) -> &str {
        &self.url
    }

    fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    fn body(&self, req: &ChatRequest<'_>) -> Vec<u8> {
        let mut body = request_body(
            req,
            &self.options,
            self.carry_reasoning.load(Ordering::Relaxed),
        );
        if !self.include_usage.load(Ordering::Relaxed) {
            body.stream_options = None;
        }
        super::http::encode(&body, &self.options.extra_body)
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Box::<Decoder>::default()
    }

    /// A whole completion reads like one chunk whose `delta` is the message.
    fn events_of_full_response(&self, mut body: Value) -> Vec<SseEvent> {
        if let Some(choices) = body.get_mut("choices").and_then(Value::as_array_mut) {
            for choice in choices {
                if let Some(message) = choice.get_mut("message").map(Value::take) {
                    choice["delta"] = message;
                }
            }
        }
        let data = |d: String| SseEvent {
            event: String::new(),
            data: d,
        };
        vec![data(body.to_string()), data("[DONE]".into())]
    }
}

/// The body of a streaming Chat Completions request. It borrows the
/// conversation, so building it copies nothing; serializing it is the only
/// pass over the history. `carry` sends back what thinking models need.
pub fn request_body<'a>(req: &ChatRequest<'a>, options: &'a BodyOptions, carry: bool) -> Body<'a> {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        messages.push(Msg::System {
            content: req.system,
        });
    }
    for m in req.messages {
        match m {
            Message::User(text) => messages.push(Msg::User { content: text }),
            Message::UserImages { text, images } => messages.push(Msg::UserParts {
                content: images
                    .iter()
                    .map(|i| ChatPart::ImageUrl {
                        image_url: ImageUrl { url: i.data_url() },
                    })
                    .chain((!text.is_empty()).then_some(ChatPart::Text { text }))
                    .collect(),
            }),
            Message::Assistant {
                text,
                tool_calls,
                carried,
                ..
            } => {
                let ours = |call: Option<&str>| {
                    carried
                        .iter()
                        .filter(move |c| {
                            c.goes_to(WireApi::Chat, &options.server, req.model)
                                && c.call_id.as_deref() == call
                                && carry
                        })
                        .collect::<Vec<&Carried>>()
                };
                messages.push(Msg::Assistant {
                    content: (!text.is_empty() || tool_calls.is_empty()).then_some(text.as_str()),
                    tool_calls: tool_calls
                        .iter()
                        .map(|c| CallDef {
                            id: &c.id,
                            kind: "function",
                            function: FnCall {
                                name: &c.name,
                                arguments: &c.arguments,
                            },
                            extra: Fields(ours(Some(&c.id))),
                        })
                        .collect(),
                    // Reasoning goes back with the calls it led to (a
                    // plain answer's is not wanted, and some servers
                    // refuse it there).
                    extra: Fields(if tool_calls.is_empty() {
                        Vec::new()
                    } else {
                        ours(None)
                    }),
                });
            }
            Message::ToolResults(results) => {
                messages.extend(results.iter().map(|r| Msg::Tool {
                    tool_call_id: &r.call_id,
                    content: &r.content,
                }));
            }
        }
    }
    let (cap_name, cap) = match options.max_tokens {
        Some((name, n)) => (Some(name), Some(n)),
        None => (None, None),
    };
    Body {
        model: req.model,
        messages,
        stream: true,
        stream_options: Some(StreamOptions {
            include_usage: true,
        }),
        tools: req
            .tools
            .iter()
            .map(|t| ToolDef {
                kind: "function",
                function: FnDef {
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.parameters,
                },
            })
            .collect(),
        // A model known not to reason refuses the field (OpenAI's 4.x).
        reasoning_effort: req
            .effort
            .or(options.effort)
            .filter(|_| super::models::builtin(req.model).reasoning != Some(false))
            .map(Effort::as_str),
        prompt_cache_key: req.cache_key.filter(|_| options.cache_key),
        cap: Cap {
            name: cap_name,
            value: cap,
        },
    }
}

#[derive(Serialize)]
pub struct Body<'a> {
    model: &'a str,
    messages: Vec<Msg<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolDef<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(flatten)]
    cap: Cap,
}

/// The output cap under the name the server knows it by.
struct Cap {
    name: Option<&'static str>,
    value: Option<u32>,
}

impl Serialize for Cap {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        if let (Some(name), Some(value)) = (self.name, self.value) {
            map.serialize_entry(name, &value)?;
        }
        map.end()
    }
}

/// The fields of carried items, merged into the object they belong to.
struct Fields<'a>(Vec<&'a Carried>);

impl Serialize for Fields<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for c in &self.0 {
            if let Value::Object(fields) = &c.item {
                for (k, v) in fields {
                    map.serialize_entry(k, v)?;
                }
            }
        }
        map.end()
    }
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum Msg<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    /// A user message with images: typed parts.
    #[serde(rename = "user")]
    UserParts {
        content: Vec<ChatPart<'a>>,
    },
    Assistant {
        /// `null` when the message is only tool calls.
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<CallDef<'a>>,
        #[serde(flatten)]
        extra: Fields<'a>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ChatPart<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: ImageUrl<'a> },
}

#[derive(Serialize)]
struct ImageUrl<'a> {
    url: super::image::DataUrl<'a>,
}

#[derive(Serialize)]
struct CallDef<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FnCall<'a>,
    #[serde(flatten)]
    extra: Fields<'a>,
}

#[derive(Serialize)]
struct FnCall<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct ToolDef<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: FnDef<'a>,
}

#[derive(Serialize)]
struct FnDef<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    /// Fields to send back with the call (Gemini's `extra_content`).
    extra: Map<String, Value>,
}

/// What one `reasoning_details` entry kept apart counts for besides its
/// text (it is a JSON object of its own).
const DETAIL_OVERHEAD: usize = 1024;

/// Which reasoning field a server streams (the one it takes back).
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum ReasoningField {
    #[default]
    None,
    ReasoningContent,
    Reasoning,
}

#[derive(Default)]
struct Decoder {
    text: String,
    reasoning: String,
    field: ReasoningField,
    /// OpenRouter's `reasoning_details`, merged by their index.
    details: Vec<Value>,
    /// The bytes of `reasoning_details` pieces so far (and what each
    /// detail kept apart costs besides).
    detail_bytes: usize,
    /// Where the detail of each index and type is (the last one).
    detail_at: HashMap<(u64, Option<String>), usize>,
    /// Where the call of each id is.
    by_id: HashMap<String, usize>,
    /// The bytes of the calls' extra fields so far.
    extra_bytes: usize,
    refusal: Option<String>,
    calls: Vec<PartialCall>,
    /// The call each `index` is streaming now.
    by_index: HashMap<u64, usize>,
    usage: Usage,
    finish_reason: Option<String>,
}

impl Decoder {
    /// Which call a `tool_calls` delta belongs to. A delta with an id that
    /// differs from the call at its index starts a new call (Gemini sends
    /// parallel calls all at `index: 0`); servers that omit `index` (some
    /// send each call whole) are keyed by id: a new id is a new call, no id
    /// continues the last one.
    fn call_slot(&mut self, index: Option<u64>, id: Option<&str>) -> usize {
        let new = |calls: &mut Vec<PartialCall>| {
            calls.push(PartialCall::default());
            calls.len() - 1
        };
        match (index, id) {
            (Some(i), id) => {
                let current = self.by_index.get(&i).copied();
                let slot = match (current, id) {
                    (Some(s), Some(id))
                        if !self.calls[s].id.is_empty() && self.calls[s].id != id =>
                    {
                        new(&mut self.calls)
                    }
                    (Some(s), _) => s,
                    (None, _) => new(&mut self.calls),
                };
                self.by_index.insert(i, slot);
                slot
            }
            (None, Some(id)) => match self.by_id.get(id) {
                Some(s) => *s,
                None => {
                    let s = new(&mut self.calls);
                    self.by_id.insert(id.to_string(), s);
                    s
                }
            },
            (None, None) if !self.calls.is_empty() => self.calls.len() - 1,
            (None, None) => new(&mut self.calls),
        }
    }

    fn reasoning_piece(&mut self, text: &str, field: ReasoningField, obs: &mut dyn StreamObserver) {
        if text.is_empty() {
            return;
        }
        if self.field == ReasoningField::None {
            self.field = field;
        }
        self.reasoning.push_str(text);
        obs.reasoning_delta(text);
    }

    /// OpenRouter's `reasoning_details`: each piece is merged into the
    /// detail of its `index` (text and signature appended), so the whole
    /// goes back as the provider sent it.
    fn detail_pieces(&mut self, pieces: &[Value]) {
        for piece in pieces {
            let Some(obj) = piece.as_object() else {
                continue;
            };
            self.detail_bytes += piece.to_string().len();
            let index = obj.get("index").and_then(Value::as_u64);
            let kind = obj.get("type").and_then(Value::as_str).map(str::to_string);
            let key = index.map(|i| (i, kind));
            let same = key
                .as_ref()
                .and_then(|k| self.detail_at.get(k).copied())
                .and_then(|at| self.details.get_mut(at));
            match same.and_then(Value::as_object_mut) {
                Some(d) => {
                    for (k, v) in obj {
                        match (d.get_mut(k), v) {
                            (Some(Value::String(have)), Value::String(more))
                                if matches!(
                                    k.as_str(),
                                    "text" | "summary" | "data" | "signature"
                                ) =>
                            {
                                have.push_str(more);
                            }
                            (Some(_), Value::Null) => {}
                            _ => {
                                d.insert(k.clone(), v.clone());
                            }
                        }
                    }
                }
                None => {
                    // A detail kept apart costs more than its text.
                    self.detail_bytes += DETAIL_OVERHEAD;
                    if let Some(k) = key {
                        self.detail_at.insert(k, self.details.len());
                    }
                    self.details.push(piece.clone());
                }
            }
        }
    }

    fn content(&mut self, content: &Value, obs: &mut dyn StreamObserver) {
        match content {
            Value::String(text) if !text.is_empty() => {
                self.text.push_str(text);
                obs.text_delta(text);
            }
            // Mistral: typed parts, `text` and `thinking` (itself parts).
            Value::Array(parts) => {
                for part in parts {
                    match part.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            if let Some(t) = part.get("text").and_then(Value::as_str)
                                && !t.is_empty()
                            {
                                self.text.push_str(t);
                                obs.text_delta(t);
                            }
                        }
                        Some("thinking") => {
                            let texts: Vec<&str> = match part.get("thinking") {
                                Some(Value::String(t)) => vec![t.as_str()],
                                Some(Value::Array(inner)) => inner
                                    .iter()
                                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                                    .collect(),
                                _ => Vec::new(),
                            };
                            for t in texts {
                                if !t.is_empty() {
                                    self.reasoning.push_str(t);
                                    obs.reasoning_delta(t);
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

/// The error a chunk reports, in any of the shapes servers use:
/// `{"error": {...}}` (OpenAI, OpenRouter, SGLang, newer vLLM),
/// `{"error": "..."}`, and vLLM's flat `{"object": "error", "message"}`.
fn chunk_error(chunk: &Value) -> Option<ProviderError> {
    let (message, code) = match chunk.get("error") {
        Some(Value::Object(err)) => (
            err.get("message")
                .and_then(Value::as_str)
                .map_or_else(|| Value::Object(err.clone()).to_string(), str::to_string),
            err.get("code").cloned().unwrap_or(Value::Null),
        ),
        Some(Value::String(m)) => (m.clone(), Value::Null),
        Some(Value::Null) | None => {
            if chunk.get("object").and_then(Value::as_str) != Some("error") {
                return None;
            }
            (
                chunk
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the server reported an error")
                    .to_string(),
                chunk.get("code").cloned().unwrap_or(Value::Null),
            )
        }
        Some(other) => (other.to_string(), Value::Null),
    };
    let retryable = match &code {
        Value::String(c) => matches!(
            c.as_str(),
            "server_error" | "rate_limit_exceeded" | "overloaded" | "internal_error"
        ),
        Value::Number(n) => n.as_u64().is_some_and(|n| n == 429 || n >= 500),
        _ => false,
    };
    Some(ProviderError::Stream { message, retryable })
}

/// Token counts in any of the shapes OpenAI-style servers report them.
fn usage_of(u: &Value) -> Usage {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let input = n(u.get("prompt_tokens"));
    let cached = n(u
        .get("prompt_tokens_details")
        .and_then(|d| d.get("cached_tokens")))
    .max(n(u.get("prompt_cache_hit_tokens")));
    Usage {
        input_tokens: input,
        output_tokens: n(u.get("completion_tokens")),
        cache_read_tokens: cached.min(input),
        cache_write_tokens: 0,
        reasoning_tokens: n(u
            .get("completion_tokens_details")
            .and_then(|d| d.get("reasoning_tokens"))),
        // OpenRouter says what the request cost.
        cost_usd: u
            .get("cost")
            .and_then(Value::as_f64)
            .filter(|c| c.is_finite() && *c >= 0.0),
    }
}

impl StreamDecoder for Decoder {
    fn held(&self) -> Held {
        Held {
            text: self.text.len() + self.refusal.as_ref().map_or(0, String::len),
            reasoning: self.reasoning.len() + self.detail_bytes,
            // A call's name, id and extra fields count with its arguments,
            // and each call itself: a name streamed without end, or calls
            // without number, are as endless as arguments.
            arguments: self
                .calls
                .iter()
                .map(|c| c.arguments.len() + c.name.len() + c.id.len() + CALL_OVERHEAD)
                .sum::<usize>()
                + self.extra_bytes,
        }
    }

    fn event(
        &mut self,
        ev: &SseEvent,
        obs: &mut dyn StreamObserver,
    ) -> Result<bool, ProviderError> {
        let data = ev.data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::Malformed(format!(
                "unparseable stream chunk ({e}): {}",
                shorten(data, 200)
            ))
        })?;
        if let Some(err) = chunk_error(&chunk) {
            return Err(err);
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = usage_of(u);
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        for choice in choices.into_iter().flatten() {
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                if reason == "error" {
                    return Err(ProviderError::Stream {
                        message: "the server ended the answer with an error".into(),
                        retryable: true,
                    });
                }
                self.finish_reason = Some(reason.to_string());
            }
            let Some(delta) = choice.get("delta") else {
                continue;
            };
            // Reasoning: one field per server; OpenRouter sends the same
            // text twice (`reasoning` and `reasoning_details`).
            let rc = delta.get("reasoning_content").and_then(Value::as_str);
            let r = delta.get("reasoning").and_then(Value::as_str);
            match (rc, r) {
                (Some(t), _) if !t.is_empty() => {
                    self.reasoning_piece(t, ReasoningField::ReasoningContent, obs);
                }
                (_, Some(t)) if !t.is_empty() => {
                    self.reasoning_piece(t, ReasoningField::Reasoning, obs);
                }
                _ => {}
            }
            if let Some(details) = delta.get("reasoning_details").and_then(Value::as_array) {
                if rc.is_none_or(str::is_empty) && r.is_none_or(str::is_empty) {
                    for d in details {
                        for key in ["text", "summary"] {
                            if let Some(t) = d.get(key).and_then(Value::as_str)
                                && !t.is_empty()
                            {
                                self.reasoning.push_str(t);
                                obs.reasoning_delta(t);
                            }
                        }
                    }
                }
                self.detail_pieces(details);
            }
            if let Some(content) = delta.get("content") {
                self.content(content, obs);
            }
            if let Some(refusal) = delta.get("refusal").and_then(Value::as_str) {
                let have = self.refusal.get_or_insert_with(String::new);
                have.push_str(refusal);
                if !refusal.is_empty() {
                    obs.text_delta(refusal);
                }
            }
            let calls = delta.get("tool_calls").and_then(Value::as_array);
            for tc in calls.into_iter().flatten() {
                let id = tc
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty());
                let slot = self.call_slot(tc.get("index").and_then(Value::as_u64), id);
                if let Some(id) = id
                    && self.calls[slot].id.is_empty()
                {
                    self.calls[slot].id = id.to_string();
                    self.by_id.entry(id.to_string()).or_insert(slot);
                }
                let entry = &mut self.calls[slot];
                if let Some(extra) = tc.get("extra_content").filter(|v| !v.is_null()) {
                    self.extra_bytes += extra.to_string().len();
                    entry.extra.insert("extra_content".into(), extra.clone());
                }
                if let Some(f) = tc.get("function") {
                    if let Some(name) = f.get("name").and_then(Value::as_str)
                        && !entry.name.ends_with(name)
                    {
                        entry.name.push_str(name);
                    }
                    match f.get("arguments") {
                        Some(Value::String(args)) => entry.arguments.push_str(args),
                        // A proxy that sends the arguments as a JSON object
                        // (LiteLLM before Ollama): that object is them.
                        Some(v @ (Value::Object(_) | Value::Array(_))) => {
                            entry.arguments.push_str(&v.to_string());
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(false)
    }

    fn finish(self: Box<Self>, saw_end: bool) -> Result<Completion, ProviderError> {
        if !saw_end && self.finish_reason.is_none() {
            return Err(ProviderError::Incomplete(
                "no `data: [DONE]` and no finish_reason".into(),
            ));
        }
        let mut carried = Vec::new();
        let field = match self.field {
            ReasoningField::ReasoningContent => Some("reasoning_content"),
            ReasoningField::Reasoning => Some("reasoning"),
            ReasoningField::None => None,
        };
        let mut fields = Map::new();
        if let Some(field) = field
            && !self.reasoning.is_empty()
        {
            fields.insert(field.into(), Value::String(self.reasoning.clone()));
        }
        if !self.details.is_empty() {
            fields.insert("reasoning_details".into(), Value::Array(self.details));
        }
        if !fields.is_empty() {
            carried.push(Carried {
                server: String::new(),
                wire: WireApi::Chat,
                call_id: None,
                item: Value::Object(fields),
                model: String::new(),
            });
        }
        // A call with no name is kept: the model is told no such tool
        // exists, rather than its turn ending in silence.
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (index, c) in self.calls.into_iter().enumerate() {
            let id = if c.id.is_empty() {
                format!("call_{index}_{:08x}", fastrand::u32(..))
            } else {
                c.id
            };
            if !c.extra.is_empty() {
                carried.push(Carried {
                    server: String::new(),
                    wire: WireApi::Chat,
                    call_id: Some(id.clone()),
                    item: Value::Object(c.extra),
                    model: String::new(),
                });
            }
            tool_calls.push(ToolCall {
                id,
                name: c.name,
                arguments: if c.arguments.trim().is_empty() {
                    "{}".to_string()
                } else {
                    c.arguments
                },
            });
        }
        let mut text = self.text;
        if text.trim().is_empty()
            && let Some(r) = &self.refusal
        {
            text = r.clone();
        }
        Ok(Completion {
            text,
            tool_calls,
            usage: self.usage,
            stop_reason: self.finish_reason,
            reasoning: self.reasoning,
            carried,
            refusal: self.refusal.filter(|r| !r.trim().is_empty()),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::provider::{NoopObserver, ToolOutput, ToolSchema};

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
    fn text_and_parallel_tool_calls_assemble_from_deltas() {
        let c = feed(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Let me "}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"look."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"list_directory","arguments":"{\"pa"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"th\":\".\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19}}"#,
            "[DONE]",
        ])
        .unwrap();
        assert_eq!(c.text, "Let me look.");
        assert_eq!(c.tool_calls.len(), 2);
        assert_eq!(c.tool_calls[0].id, "call_a");
        assert_eq!(c.tool_calls[0].arguments, r#"{"path":"a"}"#);
        assert_eq!(c.tool_calls[1].name, "list_directory");
        assert_eq!(c.tool_calls[1].arguments, r#"{"path":"."}"#);
        assert_eq!(
            c.usage,
            Usage {
                input_tokens: 12,
                output_tokens: 7,
                ..Default::default()
            }
        );
        assert_eq!(c.stop_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn a_non_streamed_completion_is_understood() {
        let body = serde_json::json!({
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Reading.",
                "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}]}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4}
        });
        let wire = OpenAi::new(ProviderSettings::new(
            crate::provider::ProviderKind::OpenAi,
            "http://x/v1",
        ))
        .unwrap();
        let mut d = wire.decoder();
        let mut end = false;
        for ev in wire.events_of_full_response(body) {
            end = d.event(&ev, &mut NoopObserver).unwrap();
        }
        assert!(end);
        let c = d.finish(true).unwrap();
        assert_eq!(c.text, "Reading.");
        assert_eq!(c.tool_calls[0].arguments, r#"{"path":"a"}"#);
        assert_eq!(c.usage.output_tokens, 4);
    }

    #[test]
    fn calls_without_an_index_are_keyed_by_id() {
        let c = feed(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"x\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"th\":\"y\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        ])
        .unwrap();
        assert_eq!(c.tool_calls.len(), 2);
        assert_eq!(c.tool_calls[0].arguments, r#"{"path":"x"}"#);
        assert_eq!(c.tool_calls[1].id, "b");
        assert_eq!(c.tool_calls[1].arguments, r#"{"path":"y"}"#);
    }

    #[test]
    fn a_cut_stream_is_incomplete_and_a_finished_one_without_done_is_fine() {
        let cut = feed(&[r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#]);
        assert!(matches!(cut, Err(ProviderError::Incomplete(_))));
        let ok =
            feed(&[r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}"#]);
        assert_eq!(ok.unwrap().text, "Hi");
    }

    #[test]
    fn garbage_and_in_stream_errors_are_reported() {
        assert!(matches!(
            feed(&["{not json"]),
            Err(ProviderError::Malformed(_))
        ));
        let e = feed(&[r#"{"error":{"message":"boom","code":"server_error"}}"#]).unwrap_err();
        assert!(e.is_retryable());
        assert!(e.to_string().contains("boom"));
    }

    #[test]
    fn request_body_uses_the_native_shapes() {
        let messages = vec![
            Message::User("hi".into()),
            Message::assistant(
                String::new(),
                vec![ToolCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"a"}"#.into(),
                }],
            ),
            Message::ToolResults(vec![ToolOutput {
                call_id: "c1".into(),
                content: r#"{"content":"x"}"#.into(),
                is_error: false,
            }]),
        ];
        let tools = vec![ToolSchema {
            name: "read_file".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        }];
        let body = serde_json::to_value(request_body(
            &ChatRequest {
                effort: None,
                cache_key: None,
                model: "m",
                system: "sys",
                messages: &messages,
                tools: &tools,
            },
            &BodyOptions::default(),
            true,
        ))
        .unwrap();
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["messages"][2]["content"], Value::Null);
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            r#"{"path":"a"}"#
        );
        assert_eq!(body["messages"][3]["role"], "tool");
        assert_eq!(body["messages"][3]["tool_call_id"], "c1");
        assert_eq!(body["tools"][0]["function"]["name"], "read_file");
    }
}
