//! The OpenAI Responses wire format, streaming: what OpenAI's own API
//! speaks by default (its codex and pro models speak nothing else, and
//! its newest models take function tools with reasoning only here).
//!
//! Requests go to `{base_url}/responses` with `stream: true` and
//! `store: false`: nothing is kept on the server, so every request sends
//! the whole conversation, and the reasoning the model did is carried from
//! round to round as the encrypted items the server sends
//! (`include: ["reasoning.encrypted_content"]`), each sent back as it
//! came, minus its `id` (an id names a stored item, and nothing was
//! stored). The system prompt goes as `instructions`, the session id as
//! `prompt_cache_key`.
//!
//! The stream is typed events: `response.output_text.delta`,
//! `response.function_call_arguments.delta`, reasoning summaries as
//! `response.reasoning_summary_text.delta`, each output item whole in
//! `response.output_item.done`, then `response.completed`,
//! `response.incomplete` (with its reason) or `response.failed`; `error`
//! reports a failure mid-stream.

use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use reqwest::header::HeaderMap;
use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::http::{CALL_OVERHEAD, Held, HttpDriver, StreamDecoder, Wire, shorten};
use super::sse::SseEvent;
use super::{
    Carried, ChatRequest, Completion, Effort, Message, Provider, ProviderError, ProviderSettings,
    StreamObserver, ToolCall, WireApi,
};
use crate::protocol::Usage;

pub struct Responses {
    driver: HttpDriver,
    url: String,
    models_url: String,
    headers: HeaderMap,
    /// Cleared for good when the server says the model takes no
    /// `reasoning` settings.
    reasoning: AtomicBool,
    /// Cleared for good when the server cannot read the encrypted
    /// reasoning sent back (`invalid_encrypted_content`).
    readable: AtomicBool,
    options: Options,
}

/// What every request adds to the conversation.
#[derive(Debug, Clone)]
pub struct Options {
    pub max_output_tokens: Option<u32>,
    pub effort: Option<Effort>,
    /// `reasoning.summary`: `auto` unless configured (`none`: no summary).
    pub summary: Option<String>,
    pub extra_body: Map<String, Value>,
    /// Send the encrypted reasoning items back (cleared when the server
    /// says it cannot read them: another key or organization).
    pub reasoning_items: bool,
    /// The server, in its one form: only its own carried items go back.
    pub server: String,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_output_tokens: None,
            effort: None,
            summary: None,
            extra_body: Map::new(),
            reasoning_items: true,
            server: String::new(),
        }
    }
}

impl Responses {
    pub fn new(settings: ProviderSettings) -> Result<Self, ProviderError> {
        let base = settings.base_url.trim_end_matches('/');
        let url = if base.ends_with("/responses") {
            base.to_string()
        } else {
            format!("{base}/responses")
        };
        let models_url = format!("{}/models", url.strip_suffix("/responses").unwrap_or(base));
        let driver = HttpDriver::new(&settings)?;
        let server = driver.server().to_string();
        Ok(Self {
            driver,
            headers: super::openai::bearer_headers(&settings)?,
            url,
            models_url,
            reasoning: AtomicBool::new(true),
            options: Options {
                max_output_tokens: settings.max_output_tokens,
                effort: settings.effort,
                summary: settings.reasoning_summary,
                extra_body: settings.extra_body,
                reasoning_items: true,
                server,
            },
            readable: AtomicBool::new(true),
        })
    }
}

#[async_trait]
impl Provider for Responses {
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
        match self.driver.run(self, request, observer, cancel).await {
            Err(ProviderError::Http {
                status: 400,
                message,
                ..
            }) if super::http::refuses_reasoning(&message)
                && self.reasoning.swap(false, Ordering::Relaxed) =>
            {
                tracing::warn!(%message, "the model takes no reasoning settings; asking without them");
                self.driver.run(self, request, observer, cancel).await
            }
            Err(ProviderError::Http {
                status: 400,
                message,
                ..
            }) if message.contains("encrypted") && self.readable.swap(false, Ordering::Relaxed) => {
                tracing::warn!(%message, "the server cannot read the reasoning sent back; asking without it");
                self.driver.run(self, request, observer, cancel).await
            }
            other => other,
        }
    }
}

impl Wire for Responses {
    fn url(&self) -> &str {
        &self.url
    }

    fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    fn body(&self, req: &ChatRequest<'_>) -> Vec<u8> {
        let reasoning = self.reasoning.load(Ordering::Relaxed)
            && super::models::builtin(req.model).reasoning != Some(false);
        let readable = self.readable.load(Ordering::Relaxed);
        let options;
        let options = if readable {
            &self.options
        } else {
            options = Options {
                reasoning_items: false,
                ..self.options.clone()
            };
            &options
        };
        super::http::encode(
            &request_body(req, options, reasoning),
            &self.options.extra_body,
        )
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Box::<Decoder>::default()
    }

    /// A whole response, replayed as each output item done, then done.
    fn events_of_full_response(&self, body: Value) -> Vec<SseEvent> {
        let ev = |v: Value| SseEvent {
            event: String::new(),
            data: v.to_string(),
        };
        if body.get("error").is_some_and(|e| !e.is_null()) && body.get("output").is_none() {
            return vec![ev(json!({"type": "error", "error": body["error"]}))];
        }
        let mut out: Vec<SseEvent> = body
            .get("output")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, item)| {
                ev(json!({"type": "response.output_item.done", "output_index": i, "item": item}))
            })
            .collect();
        let end = match body.get("status").and_then(Value::as_str) {
            Some("incomplete") => "response.incomplete",
            Some("failed") => "response.failed",
            _ => "response.completed",
        };
        out.push(ev(json!({"type": end, "response": body})));
        out
    }
}

/// The body of a streaming Responses request, borrowing the
/// conversation. `reasoning`: the model takes reasoning settings.
pub fn request_body<'a>(req: &ChatRequest<'a>, options: &'a Options, reasoning: bool) -> Body<'a> {
    // Encrypted reasoning goes back unless the server could not read it.
    let reasoning_items = options.reasoning_items;
    let mut input = Vec::with_capacity(req.messages.len() * 2);
    for m in req.messages {
        match m {
            Message::User(text) => input.push(Item::Message {
                role: "user",
                content: vec![Part::InputText { text }],
            }),
            Message::UserImages { text, images } => input.push(Item::Message {
                role: "user",
                content: images
                    .iter()
                    .map(|i| Part::InputImage {
                        image_url: i.data_url(),
                    })
                    .chain((!text.is_empty()).then_some(Part::InputText { text }))
                    .collect(),
            }),
            Message::Assistant {
                text,
                tool_calls,
                carried,
                ..
            } => {
                // Reasoning first, as it came, then the answer and calls.
                input.extend(
                    carried
                        .iter()
                        .filter(|c| {
                            reasoning_items
                                && c.goes_to(WireApi::Responses, &options.server, req.model)
                        })
                        .map(|c| Item::Raw(&c.item)),
                );
                if !text.is_empty() {
                    input.push(Item::Message {
                        role: "assistant",
                        content: vec![Part::OutputText { text }],
                    });
                }
                input.extend(tool_calls.iter().map(|c| Item::FunctionCall {
                    call_id: &c.id,
                    name: &c.name,
                    arguments: &c.arguments,
                }));
            }
            Message::ToolResults(results) => {
                input.extend(results.iter().map(|r| Item::FunctionCallOutput {
                    call_id: &r.call_id,
                    output: &r.content,
                }));
            }
        }
    }
    let effort = req.effort.or(options.effort);
    let summary = match options.summary.as_deref() {
        Some("none") => None,
        Some(s) => Some(s),
        None => Some("auto"),
    };
    Body {
        model: req.model,
        instructions: (!req.system.is_empty()).then_some(req.system),
        input,
        tools: req
            .tools
            .iter()
            .map(|t| ToolDef {
                kind: "function",
                name: &t.name,
                description: &t.description,
                parameters: &t.parameters,
                strict: false,
            })
            .collect(),
        tool_choice: "auto",
        parallel_tool_calls: true,
        store: false,
        stream: true,
        include: if reasoning {
            vec!["reasoning.encrypted_content"]
        } else {
            Vec::new()
        },
        reasoning: reasoning.then_some(Reasoning {
            effort: effort.map(Effort::as_str),
            summary,
        }),
        max_output_tokens: options.max_output_tokens,
        prompt_cache_key: req.cache_key,
    }
}

#[derive(Serialize)]
pub struct Body<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    input: Vec<Item<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolDef<'a>>,
    tool_choice: &'static str,
    parallel_tool_calls: bool,
    store: bool,
    stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    include: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Reasoning<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
}

#[derive(Serialize)]
struct Reasoning<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    effort: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item<'a> {
    Message {
        role: &'static str,
        content: Vec<Part<'a>>,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: &'a str,
    },
    /// An item the server sent, going back as it came.
    #[serde(untagged)]
    Raw(&'a Value),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    InputText {
        text: &'a str,
    },
    OutputText {
        text: &'a str,
    },
    InputImage {
        image_url: super::image::DataUrl<'a>,
    },
}

#[derive(Serialize)]
struct ToolDef<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    strict: bool,
}

/// A function call as it streams.
#[derive(Default)]
struct Call {
    item_id: String,
    call_id: String,
    name: String,
    arguments: String,
    done: bool,
}

#[derive(Default)]
struct Decoder {
    text: String,
    /// Message items whose text came as deltas (their `done` adds none).
    streamed: std::collections::HashSet<String>,
    reasoning: String,
    /// Reasoning items whose summary came as deltas.
    reasoned: std::collections::HashSet<String>,
    carried: Vec<Carried>,
    /// The bytes of `carried` so far.
    carried_bytes: usize,
    calls: Vec<Call>,
    /// Where the call of each item id is.
    call_at: std::collections::HashMap<String, usize>,
    refusal: Option<String>,
    usage: Usage,
    stop_reason: Option<String>,
}

fn str_at<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

impl Decoder {
    fn call(&mut self, item_id: &str) -> Option<&mut Call> {
        let at = *self.call_at.get(item_id)?;
        self.calls.get_mut(at)
    }

    /// Adds a call, found by its item id from now on.
    fn add_call(&mut self, call: Call) -> usize {
        let at = self.calls.len();
        self.call_at.entry(call.item_id.clone()).or_insert(at);
        self.calls.push(call);
        at
    }

    /// A text or reasoning delta (most of a stream's events), read
    /// without building a JSON tree; false: not one, read it whole.
    fn delta(&mut self, data: &str, event: &str, obs: &mut dyn StreamObserver) -> bool {
        #[derive(serde::Deserialize)]
        struct Delta<'a> {
            #[serde(rename = "type", borrow, default)]
            kind: Option<std::borrow::Cow<'a, str>>,
            #[serde(borrow, default)]
            item_id: std::borrow::Cow<'a, str>,
            #[serde(borrow)]
            delta: std::borrow::Cow<'a, str>,
        }
        let Ok(d) = serde_json::from_str::<Delta<'_>>(data) else {
            return false;
        };
        match d.kind.as_deref().unwrap_or(event) {
            "response.output_text.delta" => self.text_piece(&d.item_id, &d.delta, obs),
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.reasoning_piece(&d.item_id, &d.delta, obs);
            }
            _ => return false,
        }
        true
    }

    fn text_piece(&mut self, item_id: &str, text: &str, obs: &mut dyn StreamObserver) {
        if text.is_empty() {
            return;
        }
        if !self.streamed.contains(item_id) {
            self.streamed.insert(item_id.to_string());
        }
        self.text.push_str(text);
        obs.text_delta(text);
    }

    fn reasoning_piece(&mut self, item_id: &str, text: &str, obs: &mut dyn StreamObserver) {
        if text.is_empty() {
            return;
        }
        if !self.reasoned.contains(item_id) {
            // A new item's summary starts a new paragraph.
            if !self.reasoning.is_empty() {
                self.reasoning.push_str("\n\n");
                obs.reasoning_delta("\n\n");
            }
            self.reasoned.insert(item_id.to_string());
        }
        self.reasoning.push_str(text);
        obs.reasoning_delta(text);
    }

    /// An output item, whole.
    fn item_done(&mut self, item: &Value, obs: &mut dyn StreamObserver) {
        let id = str_at(item, "id").to_string();
        match str_at(item, "type") {
            "message" => {
                if self.streamed.contains(&id) {
                    return;
                }
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match str_at(part, "type") {
                        "output_text" => self.text_piece(&id, str_at(part, "text"), obs),
                        "refusal" => {
                            let r = str_at(part, "refusal");
                            self.refusal.get_or_insert_with(String::new).push_str(r);
                            self.text_piece(&id, r, obs);
                        }
                        _ => {}
                    }
                }
            }
            "function_call" => {
                let arguments = item.get("arguments").map(|a| match a {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
                let call_id = str_at(item, "call_id").to_string();
                let name = str_at(item, "name").to_string();
                let call = match self.call(&id) {
                    Some(c) => c,
                    None => {
                        let at = self.add_call(Call {
                            item_id: id.clone(),
                            ..Call::default()
                        });
                        &mut self.calls[at]
                    }
                };
                if !call_id.is_empty() {
                    call.call_id = call_id;
                }
                if !name.is_empty() {
                    call.name = name;
                }
                if let Some(a) = arguments {
                    call.arguments = a;
                }
                call.done = true;
            }
            "reasoning" => {
                if !self.reasoned.contains(&id) {
                    let texts: Vec<String> = ["summary", "content"]
                        .iter()
                        .flat_map(|k| item.get(*k).and_then(Value::as_array).into_iter().flatten())
                        .map(|p| str_at(p, "text").to_string())
                        .collect();
                    for t in texts {
                        self.reasoning_piece(&id, &t, obs);
                    }
                }
                // Without its encrypted content an item names a stored
                // one, and nothing is stored: only whole items go back.
                if item
                    .get("encrypted_content")
                    .is_some_and(|c| c.as_str().is_some_and(|s| !s.is_empty()))
                    && let Value::Object(fields) = item
                {
                    let mut fields = fields.clone();
                    fields.remove("id");
                    fields.remove("status");
                    self.carried_bytes += item.to_string().len();
                    self.carried.push(Carried {
                        server: String::new(),
                        wire: WireApi::Responses,
                        call_id: None,
                        item: Value::Object(fields),
                        model: String::new(),
                    });
                }
            }
            _ => {}
        }
    }

    fn count(&mut self, response: &Value) {
        let Some(u) = response.get("usage").filter(|u| u.is_object()) else {
            return;
        };
        let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
        let input = n(u.get("input_tokens"));
        self.usage = Usage {
            input_tokens: input,
            output_tokens: n(u.get("output_tokens")),
            cache_read_tokens: n(u
                .get("input_tokens_details")
                .and_then(|d| d.get("cached_tokens")))
            .min(input),
            cache_write_tokens: 0,
            reasoning_tokens: n(u
                .get("output_tokens_details")
                .and_then(|d| d.get("reasoning_tokens"))),
            cost_usd: None,
        };
    }
}

/// What a failure event says, in words.
fn failure(err: Option<&Value>, fallback: &str) -> ProviderError {
    let err = err.filter(|e| !e.is_null());
    let code = err.map_or("", |e| str_at(e, "code"));
    let message = err.map_or("", |e| str_at(e, "message"));
    let message = match (code.is_empty(), message.is_empty()) {
        (true, true) => fallback.to_string(),
        (true, false) => message.to_string(),
        (false, true) => code.to_string(),
        (false, false) => format!("{code}: {message}"),
    };
    let retryable = matches!(
        code,
        "server_error" | "rate_limit_exceeded" | "server_is_overloaded" | "slow_down"
    );
    ProviderError::Stream { message, retryable }
}

impl StreamDecoder for Decoder {
    fn held(&self) -> Held {
        Held {
            text: self.text.len() + self.refusal.as_ref().map_or(0, String::len),
            // An item seen counts for its record too.
            reasoning: self.reasoning.len()
                + self.carried_bytes
                + (self.streamed.len() + self.reasoned.len()) * CALL_OVERHEAD,
            arguments: self
                .calls
                .iter()
                .map(|c| {
                    c.arguments.len()
                        + c.name.len()
                        + c.call_id.len()
                        + c.item_id.len()
                        + CALL_OVERHEAD
                })
                .sum(),
        }
    }

    fn event(
        &mut self,
        ev: &SseEvent,
        obs: &mut dyn StreamObserver,
    ) -> Result<bool, ProviderError> {
        let data = ev.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(false);
        }
        if self.delta(data, &ev.event, obs) {
            return Ok(false);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            ProviderError::Malformed(format!(
                "unparseable stream event ({e}): {}",
                shorten(data, 200)
            ))
        })?;
        let kind = v.get("type").and_then(Value::as_str).unwrap_or(&ev.event);
        let item_id = str_at(&v, "item_id").to_string();
        match kind {
            "response.output_text.delta" => self.text_piece(&item_id, str_at(&v, "delta"), obs),
            "response.refusal.delta" => {
                let d = str_at(&v, "delta");
                self.refusal.get_or_insert_with(String::new).push_str(d);
                self.text_piece(&item_id, d, obs);
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.reasoning_piece(&item_id, str_at(&v, "delta"), obs);
            }
            // A second part of one item's summary: a new paragraph.
            "response.reasoning_summary_part.added"
                if self.reasoned.contains(&item_id)
                    && v.get("summary_index").and_then(Value::as_u64) > Some(0) =>
            {
                self.reasoning.push_str("\n\n");
                obs.reasoning_delta("\n\n");
            }
            "response.output_item.added" => {
                if let Some(item) = v.get("item")
                    && str_at(item, "type") == "function_call"
                {
                    self.add_call(Call {
                        item_id: str_at(item, "id").to_string(),
                        call_id: str_at(item, "call_id").to_string(),
                        name: str_at(item, "name").to_string(),
                        arguments: String::new(),
                        done: false,
                    });
                }
            }
            "response.function_call_arguments.delta" => {
                let d = str_at(&v, "delta").to_string();
                if let Some(call) = self.call(&item_id)
                    && !call.done
                {
                    call.arguments.push_str(&d);
                }
            }
            "response.function_call_arguments.done" => {
                if let (Some(a), Some(call)) = (
                    v.get("arguments")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    self.call(&item_id),
                ) {
                    call.arguments = a;
                }
            }
            "response.output_item.done" => {
                if let Some(item) = v.get("item") {
                    self.item_done(item, obs);
                }
            }
            "response.completed" => {
                let response = v.get("response").cloned().unwrap_or(Value::Null);
                self.count(&response);
                return Ok(true);
            }
            "response.incomplete" => {
                let response = v.get("response").cloned().unwrap_or(Value::Null);
                self.count(&response);
                let reason = response
                    .get("incomplete_details")
                    .map(|d| str_at(d, "reason"))
                    .filter(|r| !r.is_empty())
                    .unwrap_or("max_output_tokens");
                self.stop_reason = Some(reason.to_string());
                return Ok(true);
            }
            "response.failed" => {
                let response = v.get("response").cloned().unwrap_or(Value::Null);
                return Err(failure(response.get("error"), "the response failed"));
            }
            "error" => {
                let err = v.get("error").unwrap_or(&v);
                return Err(failure(Some(err), "the server reported an error"));
            }
            _ => {}
        }
        Ok(false)
    }

    fn finish(self: Box<Self>, saw_end: bool) -> Result<Completion, ProviderError> {
        if !saw_end {
            return Err(ProviderError::Incomplete(
                "no `response.completed` event".into(),
            ));
        }
        let tool_calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(i, c)| ToolCall {
                id: if c.call_id.is_empty() {
                    format!("call_{i}_{:08x}", fastrand::u32(..))
                } else {
                    c.call_id
                },
                name: c.name,
                arguments: if c.arguments.trim().is_empty() {
                    "{}".to_string()
                } else {
                    c.arguments
                },
            })
            .collect();
        let stop_reason = self.stop_reason.or_else(|| {
            Some(if tool_calls.is_empty() {
                "completed".to_string()
            } else {
                "tool_calls".to_string()
            })
        });
        Ok(Completion {
            text: self.text,
            tool_calls,
            usage: self.usage,
            stop_reason,
            reasoning: self.reasoning,
            carried: self.carried,
            refusal: self.refusal.filter(|r| !r.trim().is_empty()),
        })
    }
}
