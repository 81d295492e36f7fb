//! The OpenAI Chat Completions wire format, streaming.
//!
//! Requests go to `{base_url}/chat/completions` with `stream: true` and
//! `stream_options.include_usage`. Text arrives as `delta.content`; tool
//! calls as `delta.tool_calls[]` entries keyed by `index`, whose `arguments`
//! arrive in pieces and are appended. Tool results go back as `tool` role
//! messages with their `tool_call_id`. The end marker is `data: [DONE]`; a
//! stream that closes cleanly after a `finish_reason` is accepted too, since
//! some compatible servers never send the marker.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::http::{HttpDriver, StreamDecoder, Wire, sensitive, shorten};
use super::sse::SseEvent;
use super::{
    ChatRequest, Completion, Message, Provider, ProviderError, ProviderSettings, StreamObserver,
    ToolCall,
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
}

impl OpenAi {
    pub fn new(settings: ProviderSettings) -> Result<Self, ProviderError> {
        let base = settings.base_url.trim_end_matches('/');
        let url = if base.ends_with("/chat/completions") {
            base.to_string()
        } else {
            format!("{base}/chat/completions")
        };
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Some(key) = &settings.api_key {
            let value = sensitive(&format!("Bearer {}", key.expose())).ok_or_else(|| {
                ProviderError::Malformed(
                    "the API key contains characters a header cannot carry".into(),
                )
            })?;
            headers.insert(AUTHORIZATION, value);
        }
        let models_url = format!(
            "{}/models",
            url.strip_suffix("/chat/completions").unwrap_or(base)
        );
        Ok(Self {
            driver: HttpDriver::new(&settings)?,
            url,
            models_url,
            headers,
            include_usage: AtomicBool::new(true),
        })
    }
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

    async fn complete(
        &self,
        request: ChatRequest<'_>,
        observer: &mut dyn StreamObserver,
        cancel: &CancellationToken,
    ) -> Result<Completion, ProviderError> {
        match self.driver.run(self, request, observer, cancel).await {
            // A few strict servers refuse `stream_options`; go on without usage.
            Err(ProviderError::Http {
                status: 400 | 422,
                message,
                ..
            }) if message.contains("stream_options")
                && self.include_usage.swap(false, Ordering::Relaxed) =>
            {
                tracing::warn!(%message, "server rejected stream_options; retrying without usage reporting");
                self.driver.run(self, request, observer, cancel).await
            }
            other => other,
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
        let mut body = request_body(req);
        if !self.include_usage.load(Ordering::Relaxed) {
            body.stream_options = None;
        }
        serde_json::to_vec(&body).unwrap_or_default()
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
/// pass over the history.
pub fn request_body<'a>(req: &ChatRequest<'a>) -> Body<'a> {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        messages.push(Msg::System {
            content: req.system,
        });
    }
    for m in req.messages {
        match m {
            Message::User(text) => messages.push(Msg::User { content: text }),
            Message::Assistant { text, tool_calls } => messages.push(Msg::Assistant {
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
                    })
                    .collect(),
            }),
            Message::ToolResults(results) => {
                messages.extend(results.iter().map(|r| Msg::Tool {
                    tool_call_id: &r.call_id,
                    content: &r.content,
                }));
            }
        }
    }
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
    Assistant {
        /// `null` when the message is only tool calls.
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<CallDef<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

#[derive(Serialize)]
struct CallDef<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FnCall<'a>,
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
}

#[derive(Default)]
struct Decoder {
    text: String,
    calls: BTreeMap<u64, PartialCall>,
    usage: Usage,
    finish_reason: Option<String>,
}

impl Decoder {
    /// Which call a `tool_calls` delta belongs to. Servers that omit
    /// `index` (some send each call whole) are keyed by id: a new id is a
    /// new call, no id continues the last one.
    fn call_index(&self, index: Option<u64>, id: Option<&str>) -> u64 {
        if let Some(i) = index {
            return i;
        }
        let last = self.calls.keys().next_back().copied();
        match (id, last) {
            (Some(id), _) => self
                .calls
                .iter()
                .find(|(_, c)| c.id == id)
                .map_or_else(|| last.map_or(0, |l| l + 1), |(i, _)| *i),
            (None, Some(l)) => l,
            (None, None) => 0,
        }
    }
}

impl StreamDecoder for Decoder {
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
        if let Some(err) = chunk.get("error") {
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| err.to_string(), str::to_string);
            let code = err.get("code").and_then(Value::as_str).unwrap_or("");
            let retryable = matches!(code, "server_error" | "rate_limit_exceeded" | "overloaded");
            return Err(ProviderError::Stream { message, retryable });
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Usage {
                input_tokens: u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
                output_tokens: u
                    .get("completion_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
            };
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        for choice in choices.into_iter().flatten() {
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(reason.to_string());
            }
            let Some(delta) = choice.get("delta") else {
                continue;
            };
            if let Some(text) = delta.get("content").and_then(Value::as_str)
                && !text.is_empty()
            {
                self.text.push_str(text);
                obs.text_delta(text);
            }
            let calls = delta.get("tool_calls").and_then(Value::as_array);
            for tc in calls.into_iter().flatten() {
                let id = tc
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty());
                let index = self.call_index(tc.get("index").and_then(Value::as_u64), id);
                let entry = self.calls.entry(index).or_default();
                if let Some(id) = id
                    && entry.id.is_empty()
                {
                    entry.id = id.to_string();
                }
                if let Some(f) = tc.get("function") {
                    if let Some(name) = f.get("name").and_then(Value::as_str)
                        && !entry.name.ends_with(name)
                    {
                        entry.name.push_str(name);
                    }
                    if let Some(args) = f.get("arguments").and_then(Value::as_str) {
                        entry.arguments.push_str(args);
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
        // A call with no name is kept: the model is told no such tool
        // exists, rather than its turn ending in silence.
        let tool_calls = self
            .calls
            .into_iter()
            .map(|(index, c)| ToolCall {
                id: if c.id.is_empty() {
                    format!("call_{index}_{:08x}", fastrand::u32(..))
                } else {
                    c.id
                },
                name: c.name,
                arguments: if c.arguments.trim().is_empty() {
                    "{}".to_string()
                } else {
                    c.arguments
                },
            })
            .collect();
        Ok(Completion {
            text: self.text,
            tool_calls,
            usage: self.usage,
            stop_reason: self.finish_reason,
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
                output_tokens: 7
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
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"a"}"#.into(),
                }],
            },
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
        let body = serde_json::to_value(request_body(&ChatRequest {
            model: "m",
            system: "sys",
            messages: &messages,
            tools: &tools,
        }))
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
