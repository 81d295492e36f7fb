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

use crate::protocol::Usage;
use crate::secret::Secret;

pub mod anthropic;
pub mod http;
pub mod models;
pub mod openai;
pub mod sse;

pub use http::RetryPolicy;

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSchema {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// A tool call the model made. `arguments` is the raw JSON text it sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A tool result on its way back to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
}

/// One message of the conversation, in a wire-neutral form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    User(String),
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    /// The results of one assistant message's tool calls, in call order.
    ToolResults(Vec<ToolOutput>),
}

/// Everything one request sends. Borrowed, so the conversation is never
/// copied to build it.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    pub model: &'a str,
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSchema],
}

/// What one response amounted to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub stop_reason: Option<String>,
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
    /// The attempt failed and will be retried; text streamed since the
    /// start of this response is void.
    fn retrying(&mut self, notice: &RetryNotice);
}

/// An observer that ignores everything.
pub struct NoopObserver;

impl StreamObserver for NoopObserver {
    fn text_delta(&mut self, _text: &str) {}
    fn retrying(&mut self, _notice: &RetryNotice) {}
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("could not reach {url}: {detail}")]
    Connect { url: String, detail: String },
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
    #[error("request cancelled")]
    Cancelled,
    #[error("{last} (gave up after {attempts} attempts)")]
    Exhausted {
        attempts: u32,
        last: Box<ProviderError>,
    },
}

impl ProviderError {
    /// Whether the server refused the request as too long for the
    /// model's context (OpenAI's `context_length_exceeded`, Anthropic's
    /// "prompt is too long", llama.cpp, vLLM and Ollama's wordings).
    pub fn is_context_overflow(&self) -> bool {
        const SIGNS: &[&str] = &[
            "context_length_exceeded",
            "context length",
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
            ProviderKind::OpenAi => "gpt-4.1",
            ProviderKind::Anthropic => "claude-sonnet-4-5",
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

/// What it takes to build a provider.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    pub kind: ProviderKind,
    pub base_url: String,
    pub api_key: Option<Secret>,
    pub retry: RetryPolicy,
    /// Anthropic requires a cap on output tokens.
    pub max_output_tokens: u32,
    pub connect_timeout: Duration,
    /// Longest silence tolerated while a response streams.
    pub idle_timeout: Duration,
    /// Longest a whole response may take, however it trickles.
    pub request_timeout: Duration,
}

impl ProviderSettings {
    pub fn new(kind: ProviderKind, base_url: impl Into<String>) -> Self {
        Self {
            kind,
            base_url: base_url.into(),
            api_key: None,
            retry: RetryPolicy::default(),
            max_output_tokens: 8192,
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            request_timeout: Duration::from_secs(900),
        }
    }
}

/// Builds the provider `settings` describe.
pub fn build(settings: ProviderSettings) -> Result<Arc<dyn Provider>, ProviderError> {
    Ok(match settings.kind {
        ProviderKind::OpenAi => Arc::new(openai::OpenAi::new(settings)?),
        ProviderKind::Anthropic => Arc::new(anthropic::Anthropic::new(settings)?),
    })
}
