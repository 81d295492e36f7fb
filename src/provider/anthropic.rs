//! The Anthropic Messages wire format, streaming.
//!
//! Requests go to `{base_url}/v1/messages` with `stream: true`, the system
//! prompt as a cached text block, and `max_tokens`. Text arrives in
//! `text_delta`s; each tool call is a `tool_use` content block whose input
//! arrives as `input_json_delta` pieces. Tool results go back as
//! `tool_result` blocks (with `is_error`) in one user message. The end
//! marker is the `message_stop` event; `error` events report overloads,
//! which are retried.

use std::collections::BTreeMap;

use async_trait::async_trait;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::http::{HttpDriver, StreamDecoder, Wire, sensitive, shorten};
use super::sse::SseEvent;
use super::{
    ChatRequest, Completion, Message, Provider, ProviderError, ProviderSettings, StreamObserver,
    ToolCall,
};
use crate::protocol::Usage;

const API_VERSION: &str = "2023-06-01";

pub struct Anthropic {
    driver: HttpDriver,
    url: String,
    /// `{base_url}/v1/models`.
    models_url: String,
    headers: HeaderMap,
    max_tokens: u32,
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
        Ok(Self {
            driver: HttpDriver::new(&settings)?,
            url,
            models_url,
            headers,
            max_tokens: settings.max_output_tokens.max(1),
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
        serde_json::to_vec(&request_body(req, self.max_tokens)).unwrap_or_default()
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
        }
        out.push(ev(json!({
            "type": "message_delta",
            "delta": {"stop_reason": body.get("stop_reason")},
            "usage": usage,
        })));
        out.push(ev(json!({"type": "message_stop"})));
        out
    }
}

/// The body of a streaming Messages request, borrowing the conversation.
pub fn request_body<'a>(req: &ChatRequest<'a>, max_tokens: u32) -> Body<'a> {
    let mut messages = Vec::with_capacity(req.messages.len());
    for m in req.messages {
        match m {
            Message::User(text) => messages.push(Msg {
                role: "user",
                content: Content::Text(text),
            }),
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::with_capacity(tool_calls.len() + 1);
                if !text.is_empty() {
                    blocks.push(Part::Text { text });
                }
                blocks.extend(tool_calls.iter().map(|c| Part::ToolUse {
                    id: &c.id,
                    name: &c.name,
                    input: object_input(&c.arguments),
                }));
                if !blocks.is_empty() {
                    messages.push(Msg {
                        role: "assistant",
                        content: Content::Blocks(blocks),
                    });
                }
            }
            Message::ToolResults(results) => messages.push(Msg {
                role: "user",
                content: Content::Blocks(
                    results
                        .iter()
                        .map(|r| Part::ToolResult {
                            tool_use_id: &r.call_id,
                            content: &r.content,
                            is_error: r.is_error,
                        })
                        .collect(),
                ),
            }),
        }
    }
    Body {
        model: req.model,
        max_tokens,
        messages,
        stream: true,
        system: (!req.system.is_empty()).then_some([SystemBlock {
            kind: "text",
            text: req.system,
            cache_control: CacheControl { kind: "ephemeral" },
        }]),
        tools: req
            .tools
            .iter()
            .map(|t| ToolDef {
                name: &t.name,
                description: &t.description,
                input_schema: &t.parameters,
            })
            .collect(),
    }
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
}

#[derive(Serialize)]
struct Msg<'a> {
    role: &'static str,
    content: Content<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(&'a str),
    Blocks(Vec<Part<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text {
        text: &'a str,
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
    },
}

#[derive(Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    cache_control: CacheControl,
}

#[derive(Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct ToolDef<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

enum Block {
    Text,
    Tool {
        id: String,
        name: String,
        json: String,
        initial: Value,
    },
    Other,
}

#[derive(Default)]
struct Decoder {
    text: String,
    blocks: BTreeMap<u64, Block>,
    usage: Usage,
    stop_reason: Option<String>,
}

fn u64_at(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

impl StreamDecoder for Decoder {
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
                    self.usage.input_tokens = u64_at(u, "input_tokens")
                        + u64_at(u, "cache_creation_input_tokens")
                        + u64_at(u, "cache_read_input_tokens");
                    self.usage.output_tokens = u64_at(u, "output_tokens");
                }
            }
            "content_block_start" => {
                let block = v.get("content_block").cloned().unwrap_or(Value::Null);
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
                        id: block
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        name: block
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        json: String::new(),
                        initial: block.get("input").cloned().unwrap_or(Value::Null),
                    },
                    _ => Block::Other,
                };
                self.blocks.insert(index, b);
            }
            "content_block_delta" => {
                let delta = v.get("delta").cloned().unwrap_or(Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        if let Some(t) = delta.get("text").and_then(Value::as_str) {
                            self.text.push_str(t);
                            obs.text_delta(t);
                        }
                    }
                    Some("input_json_delta") => {
                        if let (Some(Block::Tool { json, .. }), Some(p)) = (
                            self.blocks.get_mut(&index),
                            delta.get("partial_json").and_then(Value::as_str),
                        ) {
                            json.push_str(p);
                        }
                    }
                    // thinking, signature and citation deltas are not shown.
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(r) = v
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.stop_reason = Some(r.to_string());
                }
                if let Some(u) = v.get("usage") {
                    let out = u64_at(u, "output_tokens");
                    if out > 0 {
                        self.usage.output_tokens = out;
                    }
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
        let tool_calls = self
            .blocks
            .into_values()
            .filter_map(|b| match b {
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
                    Some(ToolCall {
                        id,
                        name,
                        arguments,
                    })
                }
                Block::Text | Block::Other => None,
            })
            .collect();
        Ok(Completion {
            text: self.text,
            tool_calls,
            usage: self.usage,
            stop_reason: self.stop_reason,
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
                output_tokens: 33
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
                output_tokens: 4
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

    #[test]
    fn request_body_uses_the_native_shapes() {
        let messages = vec![
            Message::User("hi".into()),
            Message::Assistant {
                text: "ok".into(),
                tool_calls: vec![ToolCall {
                    id: "t1".into(),
                    name: "read_file".into(),
                    arguments: "not json".into(),
                }],
            },
            Message::ToolResults(vec![ToolOutput {
                call_id: "t1".into(),
                content: r#"{"error":"invalid arguments"}"#.into(),
                is_error: true,
            }]),
        ];
        let body = serde_json::to_value(request_body(
            &ChatRequest {
                model: "claude",
                system: "sys",
                messages: &messages,
                tools: &[],
            },
            1024,
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
