//! Providers: streaming chat completions from an LLM over HTTP + SSE.
//!
//! `openai` speaks the Chat Completions wire format (OpenAI and every
//! compatible server: Ollama, llama.cpp, vLLM, LM Studio, OpenRouter);
//! `anthropic` speaks the Messages format. Both share `http`, which owns the
//! client, the retry policy (exponential backoff with jitter on connect
//! errors, 429 honouring `Retry-After`, 5xx and streams cut before their end
//! marker) and `sse`, the event-stream parser. The agent sees only
//! [`Provider`]: a request in, text deltas out through a [`StreamObserver`],
//! a [`Completion`] at the end.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use crate::protocol::Effort;
use crate::protocol::{StopReason, Usage};
use crate::secret::Secret;

pub mod anthropic;
pub mod http;
pub mod image;
pub mod models;
pub mod openai;
pub mod responses;
pub mod server;
pub mod sse;

#[cfg(test)]
mod decoder_props;

pub use http::RetryPolicy;

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSchema {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// A tool call the model made. `arguments` is the raw JSON text it sent.
/// The session record keeps it as it is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A tool result on its way back to the model (and in the session
/// record, as it went).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolOutput {
    pub call_id: String,
    pub content: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// The wire a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireApi {
    /// OpenAI Chat Completions, and every compatible server.
    Chat,
    /// OpenAI Responses.
    Responses,
    /// Anthropic Messages.
    Anthropic,
}

impl WireApi {
    pub fn as_str(self) -> &'static str {
        match self {
            WireApi::Chat => "chat",
            WireApi::Responses => "responses",
            WireApi::Anthropic => "anthropic",
        }
    }
}

impl std::fmt::Display for WireApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A piece of a response that must go back to the server as it came, on
/// every later request of the conversation: Anthropic's thinking blocks
/// with their signatures, Responses reasoning items with their encrypted
/// content, DeepSeek's `reasoning_content`, Gemini's thought signatures.
/// Each wire writes back only its own items, where its server wants them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Carried {
    pub wire: WireApi,
    /// The tool call the item belongs to (Chat: its fields go into that
    /// call); none: the message's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// Chat: fields of the assistant message (or of the call); Anthropic:
    /// a content block; Responses: an input item.
    pub item: Value,
    /// The model that sent it: another model (after `/model`) gets none
    /// of it (signatures and encrypted reasoning are the sender's own).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// The server that sent it, in its one form (`server::normalize`):
    /// another server (`--continue --base-url B`) gets none of it, and an
    /// item that does not say (kept before it was tagged) goes nowhere.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub server: String,
}

impl Carried {
    /// Whether this item goes back on `wire` to `server` for `model`.
    pub fn goes_to(&self, wire: WireApi, server: &str, model: &str) -> bool {
        self.wire == wire
            && !self.server.is_empty()
            && self.server == server
            && (self.model.is_empty() || self.model == model)
    }
}

/// One message of the conversation, in a wire-neutral form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    User(String),
    /// The person's message with the images that go with it.
    UserImages {
        text: String,
        images: Vec<image::Image>,
    },
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
        /// What the model thought, as readable text (may be empty where
        /// the server keeps it encrypted).
        reasoning: String,
        /// Items to send back verbatim, in the order they came.
        carried: Vec<Carried>,
    },
    /// The results of one assistant message's tool calls, in call order.
    ToolResults(Vec<ToolOutput>),
}

impl Message {
    /// An assistant message of plain text and calls, nothing carried.
    pub fn assistant(text: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant {
            text: text.into(),
            tool_calls,
            reasoning: String::new(),
            carried: Vec::new(),
        }
    }
}

/// Everything one request sends. Borrowed, so the conversation is never
/// copied to build it.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    pub model: &'a str,
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSchema],
    /// How hard to think; `None`: the server's default.
    pub effort: Option<Effort>,
    /// Lets the server route requests of one conversation to the same
    /// cache (OpenAI's `prompt_cache_key`): the session id.
    pub cache_key: Option<&'a str>,
}

impl<'a> ChatRequest<'a> {
    /// A request with the server's defaults for effort and caching.
    pub fn new(
        model: &'a str,
        system: &'a str,
        messages: &'a [Message],
        tools: &'a [ToolSchema],
    ) -> Self {
        Self {
            model,
            system,
            messages,
            tools,
            effort: None,
            cache_key: None,
        }
    }
}

/// What one response amounted to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    /// Why the model stopped, in the server's own word.
    pub stop_reason: Option<String>,
    /// What the model thought, as readable text.
    pub reasoning: String,
    /// What must go back verbatim with this message.
    pub carried: Vec<Carried>,
    /// A refusal the server sent apart from the text (OpenAI's
    /// `delta.refusal`).
    pub refusal: Option<String>,
}

impl Completion {
    /// Why the model stopped, the same words whatever the wire.
    pub fn stop(&self) -> StopReason {
        if self.refusal.is_some() {
            return StopReason::Refusal;
        }
        match self.stop_reason.as_deref().map(StopReason::from_wire) {
            // Some servers say `stop` with calls (Gemini): calls are calls.
            Some(StopReason::EndTurn) | None if !self.tool_calls.is_empty() => StopReason::ToolUse,
            Some(r) => r,
            None => StopReason::EndTurn,
        }
    }

    /// The message this response adds to the conversation.
    pub fn message(&self) -> Message {
        Message::Assistant {
            text: self.text.clone(),
            tool_calls: self.tool_calls.clone(),
            reasoning: self.reasoning.clone(),
            carried: self.carried.clone(),
        }
    }
}

/// A retry about to happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryNotice {
    /// 1 for the first retry.
    pub attempt: u32,
    pub max_retries: u32,
    pub delay: Duration,
    pub reason: String,
}

/// Receives a response as it streams.
pub trait StreamObserver: Send {
    fn text_delta(&mut self, text: &str);
    /// A piece of what the model thinks before it answers.
    fn reasoning_delta(&mut self, text: &str);
    /// The attempt failed and will be retried; text streamed since the
    /// start of this response is void.
    fn retrying(&mut self, notice: &RetryNotice);
}

/// An observer for a request whose stream is no one's to read as it
/// comes (a compaction's summary, the judge's verdict, a subagent's
/// answer): only a retry is noted, in the log, named by `0`.
pub(crate) struct Quiet(pub(crate) &'static str);

impl StreamObserver for Quiet {
    fn text_delta(&mut self, _text: &str) {}
    fn reasoning_delta(&mut self, _text: &str) {}
    fn retrying(&mut self, notice: &RetryNotice) {
        tracing::info!(reason = %notice.reason, "{} request retried", self.0);
    }
}

/// An observer that ignores everything.
#[cfg(any(test, feature = "internals"))]
pub struct NoopObserver;

#[cfg(any(test, feature = "internals"))]
impl StreamObserver for NoopObserver {
    fn text_delta(&mut self, _text: &str) {}
    fn reasoning_delta(&mut self, _text: &str) {}
    fn retrying(&mut self, _notice: &RetryNotice) {}
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("could not reach {url}: {detail}")]
    Connect { url: String, detail: String },
    /// A server on this machine refused the connection: nothing listens
    /// there, and waiting will not change that.
    #[error("nothing answers at {url} (connection refused): is the server at {origin} running?")]
    Refused { url: String, origin: String },
    #[error("HTTP {status} from {url}: {message}")]
    Http {
        status: u16,
        url: String,
        message: String,
        retry_after: Option<Duration>,
    },
    #[error("the response stream ended before its end marker ({0})")]
    Incomplete(String),
    #[error("the server reported an error mid-stream: {message}")]
    Stream { message: String, retryable: bool },
    #[error("malformed response: {0}")]
    Malformed(String),
    /// One response gathered more of one kind than a response may hold
    /// (a server that streams without end): cut off, never retried.
    #[error(
        "the response's {what} passed {limit_mib} MiB, the most one response may hold \
         ([limits] {key}); it was cut off there"
    )]
    TooLarge {
        what: &'static str,
        key: &'static str,
        limit_mib: usize,
    },
    #[error("request cancelled")]
    Cancelled,
    #[error("{last} (gave up after {attempts} attempts)")]
    Exhausted {
        attempts: u32,
        last: Box<ProviderError>,
    },
}

impl From<sse::SseError> for ProviderError {
    fn from(e: sse::SseError) -> Self {
        ProviderError::Malformed(e.0)
    }
}

impl ProviderError {
    /// The error with every occurrence of `secret` (the API key, quoted
    /// back by a server's 401 or error page) hidden.
    #[must_use]
    pub fn scrubbed(self, secret: &str) -> Self {
        if secret.len() < 8 {
            return self;
        }
        let hide = |s: String| {
            if s.contains(secret) {
                s.replace(secret, "[REDACTED]")
            } else {
                s
            }
        };
        match self {
            ProviderError::Connect { url, detail } => ProviderError::Connect {
                url,
                detail: hide(detail),
            },
            ProviderError::Http {
                status,
                url,
                message,
                retry_after,
            } => ProviderError::Http {
                status,
                url,
                message: hide(message),
                retry_after,
            },
            ProviderError::Incomplete(m) => ProviderError::Incomplete(hide(m)),
            ProviderError::Stream { message, retryable } => ProviderError::Stream {
                message: hide(message),
                retryable,
            },
            ProviderError::Malformed(m) => ProviderError::Malformed(hide(m)),
            ProviderError::Exhausted { attempts, last } => ProviderError::Exhausted {
                attempts,
                last: Box::new(last.scrubbed(secret)),
            },
            other => other,
        }
    }

    /// Whether the server refused the request as too long for the
    /// model's context (OpenAI's `context_length_exceeded`, Anthropic's
    /// "prompt is too long", llama.cpp, vLLM and Ollama's wordings).
    pub fn is_context_overflow(&self) -> bool {
        const SIGNS: &[&str] = &[
            "context_length_exceeded",
            "context length",
            "maximum model length",
            "max_model_len",
            "context window",
            "maximum context",
            "prompt is too long",
            "prompt too long",
            "too many tokens",
            "exceeds the context",
            "exceed context",
            "input is too long",
            "reduce the length",
        ];
        match self {
            ProviderError::Http {
                status, message, ..
            } if matches!(status, 400 | 413 | 422) => {
                let m = message.to_ascii_lowercase();
                *status == 413 || SIGNS.iter().any(|s| m.contains(s))
            }
            ProviderError::Stream { message, .. } => {
                let m = message.to_ascii_lowercase();
                SIGNS.iter().any(|s| m.contains(s))
            }
            ProviderError::Exhausted { last, .. } => last.is_context_overflow(),
            _ => false,
        }
    }

    /// Whether trying again might help.
    pub fn is_retryable(&self) -> bool {
        match self {
            ProviderError::Connect { .. } | ProviderError::Incomplete(_) => true,
            ProviderError::Http { status, .. } => {
                *status == 408 || *status == 409 || *status == 429 || *status >= 500
            }
            ProviderError::Stream { retryable, .. } => *retryable,
            _ => false,
        }
    }
}

/// Streams chat completions.
#[async_trait]
pub trait Provider: Send + Sync {
    /// `openai` or `anthropic`.
    fn name(&self) -> &str;
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        observer: &mut dyn StreamObserver,
        cancel: &CancellationToken,
    ) -> Result<Completion, ProviderError>;
    /// The models the server lists (`/v1/models`), sorted; `None` when it
    /// lists none.
    async fn models(&self) -> Result<Option<Vec<String>>, ProviderError> {
        Ok(None)
    }
    /// What the server says of `model`: its context window, output cap,
    /// prices, whether it sees images or thinks (OpenRouter's and vLLM's
    /// `/models`, llama.cpp's `/props`, Ollama's `/api/show`). Nothing
    /// when it says nothing; never an error worth stopping for.
    async fn model_info(&self, _model: &str) -> models::ModelInfo {
        models::ModelInfo::default()
    }
}

/// Which wire format to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    OpenAi,
    Anthropic,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
        }
    }

    pub fn default_model(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "gpt-5.1",
            ProviderKind::Anthropic => "claude-sonnet-4-5",
        }
    }

    /// The wire to speak to `base_url` when none is configured: OpenAI's
    /// own API speaks Responses (its newest models need it), every other
    /// OpenAI-style server Chat Completions.
    pub fn default_wire(self, base_url: &str) -> WireApi {
        match self {
            ProviderKind::Anthropic => WireApi::Anthropic,
            ProviderKind::OpenAi if is_openai_host(base_url) => WireApi::Responses,
            ProviderKind::OpenAi => WireApi::Chat,
        }
    }

    /// The environment variable that holds this provider's key.
    pub fn key_env(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "OPENAI_API_KEY",
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
        }
    }
}

impl std::str::FromStr for ProviderKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai" | "openai-compatible" => Ok(ProviderKind::OpenAi),
            "anthropic" => Ok(ProviderKind::Anthropic),
            _ => Err(format!(
                "unknown provider `{s}` (expected `openai` or `anthropic`)"
            )),
        }
    }
}

impl std::fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether `base_url` is Anthropic's own API.
pub fn is_anthropic_host(base_url: &str) -> bool {
    reqwest::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .is_some_and(|h| h == "api.anthropic.com")
}

/// Whether `base_url` is OpenAI's own API.
pub fn is_openai_host(base_url: &str) -> bool {
    reqwest::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .is_some_and(|h| h == "api.openai.com")
}

/// What it takes to build a provider.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    pub kind: ProviderKind,
    /// The wire spoken: Anthropic's for `anthropic`, Chat Completions or
    /// Responses for `openai`.
    pub wire: WireApi,
    pub base_url: String,
    pub api_key: Option<Secret>,
    pub retry: RetryPolicy,
    /// Cap on output tokens per response; `None`: the model's own cap
    /// where the wire requires one (Anthropic), else the server's default.
    pub max_output_tokens: Option<u32>,
    /// Effort when a request does not name one (config's
    /// `reasoning_effort`).
    pub effort: Option<Effort>,
    /// Anthropic: the thinking budget in tokens (`None`: from the effort,
    /// else thinking off).
    pub thinking_budget: Option<u32>,
    /// Responses: `reasoning.summary` (`auto`, `concise`, `detailed`;
    /// `none` sends none).
    pub reasoning_summary: Option<String>,
    /// Fields added to every request body as they are (a server's own
    /// switches, e.g. DeepSeek's `thinking`).
    pub extra_body: serde_json::Map<String, Value>,
    pub connect_timeout: Duration,
    /// Longest silence tolerated while a response streams.
    pub idle_timeout: Duration,
    /// Longest a whole response may take, however it trickles.
    pub request_timeout: Duration,
    /// How much text, reasoning and call arguments one response may hold.
    pub limits: StreamLimits,
}

/// How much of each kind one response may gather, in bytes: a server
/// that streams text, reasoning or a call's arguments without end is cut
/// off there, with a clear error, instead of growing memory until Lathe
/// is killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    pub text: usize,
    pub reasoning: usize,
    pub arguments: usize,
}

impl StreamLimits {
    pub const MIB: usize = 1024 * 1024;
}

impl Default for StreamLimits {
    fn default() -> Self {
        Self {
            text: 8 * Self::MIB,
            reasoning: 16 * Self::MIB,
            arguments: 8 * Self::MIB,
        }
    }
}

impl ProviderSettings {
    pub fn new(kind: ProviderKind, base_url: impl Into<String>) -> Self {
        let base_url = base_url.into();
        Self {
            kind,
            wire: kind.default_wire(&base_url),
            base_url,
            api_key: None,
            retry: RetryPolicy::default(),
            max_output_tokens: None,
            effort: None,
            thinking_budget: None,
            reasoning_summary: None,
            extra_body: serde_json::Map::new(),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            request_timeout: Duration::from_secs(900),
            limits: StreamLimits::default(),
        }
    }
}

/// Builds the provider `settings` describe.
pub fn build(settings: ProviderSettings) -> Result<Arc<dyn Provider>, ProviderError> {
    Ok(match (settings.kind, settings.wire) {
        (ProviderKind::Anthropic, _) | (_, WireApi::Anthropic) => {
            Arc::new(anthropic::Anthropic::new(settings)?)
        }
        (ProviderKind::OpenAi, WireApi::Responses) => {
            Arc::new(responses::Responses::new(settings)?)
        }
        (ProviderKind::OpenAi, WireApi::Chat) => Arc::new(openai::OpenAi::new(settings)?),
    })
}
