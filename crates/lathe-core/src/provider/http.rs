//! The HTTP side shared by both providers: one `reqwest` client, the retry
//! loop, and the streaming read that feeds SSE events to a wire decoder.
//!
//! Retries (4 by default) cover connect errors, 408/409/429/5xx, errors a
//! server reports mid-stream as transient, and a stream that ends before
//! its end marker. The delay doubles from `base_delay` with jitter, capped at
//! `max_delay`; a `Retry-After` (or `retry-after-ms`) header wins when the
//! server sends one. The request body is serialized once and reused. The
//! final error quotes what the server said.

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::sse::{SseEvent, SseParser};
use super::{
    ChatRequest, Completion, ProviderError, ProviderSettings, RetryNotice, StreamLimits,
    StreamObserver,
};

/// How persistently to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub max_retries: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// A `Retry-After` longer than this is not waited for; the error is final.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The delay before retry number `attempt` (0-based): exponential, with
    /// "equal jitter" (between half and all of the exponential step).
    pub fn backoff(&self, attempt: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(attempt.min(20)))
            .min(self.max_delay);
        let half = exp / 2;
        half + half.mul_f64(fastrand::f64())
    }
}

/// Turns SSE events into a completion; one per attempt.
pub(crate) trait StreamDecoder: Send {
    /// Handles one event; `Ok(true)` once the end marker has arrived.
    fn event(&mut self, ev: &SseEvent, obs: &mut dyn StreamObserver)
    -> Result<bool, ProviderError>;
    /// How much it holds so far, per kind.
    fn held(&self) -> Held;
    /// Ends the response; `saw_end` tells whether the end marker arrived.
    fn finish(self: Box<Self>, saw_end: bool) -> Result<Completion, ProviderError>;
}

/// What one tool call counts for besides its text (its slot, its
/// record): calls without number grow memory too.
pub(crate) const CALL_OVERHEAD: usize = 64;

/// What a decoder holds of one response, in bytes: its text, its
/// reasoning (readable, signed or encrypted) and its calls' arguments.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Held {
    pub text: usize,
    pub reasoning: usize,
    pub arguments: usize,
}

impl Held {
    /// The first kind past its limit, as an error.
    fn check(self, limits: &StreamLimits) -> Result<(), ProviderError> {
        let past = |what, key, held: usize, limit: usize| {
            (held > limit).then_some(ProviderError::TooLarge {
                what,
                key,
                limit_mib: limit.div_ceil(StreamLimits::MIB),
            })
        };
        match past("text", "response_text_mib", self.text, limits.text)
            .or_else(|| {
                past(
                    "reasoning",
                    "response_reasoning_mib",
                    self.reasoning,
                    limits.reasoning,
                )
            })
            .or_else(|| {
                past(
                    "tool-call arguments",
                    "response_arguments_mib",
                    self.arguments,
                    limits.arguments,
                )
            }) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// A wire format: where to post, with which headers and body, and how to
/// decode the stream.
pub(crate) trait Wire: Send + Sync {
    fn url(&self) -> &str;
    fn headers(&self) -> &HeaderMap;
    fn body(&self, req: &ChatRequest<'_>) -> Vec<u8>;
    fn decoder(&self) -> Box<dyn StreamDecoder>;
    /// The events a stream would have carried, for a server that answered
    /// with one JSON body instead of streaming.
    fn events_of_full_response(&self, body: Value) -> Vec<SseEvent>;
}

pub(crate) struct HttpDriver {
    pub(super) client: reqwest::Client,
    retry: RetryPolicy,
    request_timeout: Duration,
    /// The key, hidden from every error before it is logged or told.
    pub(super) key: Option<crate::secret::Secret>,
    /// The server, in its one form: what carried items are tagged with.
    server: String,
    limits: StreamLimits,
}

impl HttpDriver {
    pub(crate) fn new(settings: &ProviderSettings) -> Result<Self, ProviderError> {
        // reqwest is built without a default crypto provider; ring is ours.
        // Installing twice is harmless (the second call reports the first).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            // A redirect would carry the key (Anthropic's x-api-key survives
            // reqwest's cross-host stripping) and the conversation to
            // another host: none is followed.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("lathe/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(settings.connect_timeout)
            .read_timeout(settings.idle_timeout);
        if is_loopback(&settings.base_url) {
            // A proxy from HTTP(S)_PROXY cannot reach this machine's servers.
            builder = builder.no_proxy();
            if settings.base_url.starts_with("http://") {
                // Plain HTTP to this machine, no proxy, no redirect
                // followed: no TLS connection is ever made, so the
                // system's certificates are not read (2 ms of every start).
                builder = builder.tls_certs_only(std::iter::empty());
            }
        }
        let client = builder.build().map_err(|e| ProviderError::Connect {
            url: settings.base_url.clone(),
            detail: format!("could not build the HTTP client: {}", chain(&e)),
        })?;
        Ok(Self {
            client,
            retry: settings.retry,
            request_timeout: settings.request_timeout,
            key: settings.api_key.clone(),
            server: super::server::normalize(&settings.base_url)
                .unwrap_or_else(|_| settings.base_url.clone()),
            limits: settings.limits,
        })
    }

    /// The server requests go to, in its one form.
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    pub(crate) async fn run(
        &self,
        wire: &dyn Wire,
        req: ChatRequest<'_>,
        obs: &mut dyn StreamObserver,
        cancel: &CancellationToken,
    ) -> Result<Completion, ProviderError> {
        let body = Bytes::from(wire.body(&req));
        let mut attempt = 0u32;
        loop {
            let result = tokio::select! {
                r = tokio::time::timeout(self.request_timeout, self.attempt(wire, body.clone(), obs)) => {
                    r.unwrap_or_else(|_| Err(ProviderError::Stream {
                        message: format!(
                            "no complete answer within {} s ([network] request_timeout_secs)",
                            self.request_timeout.as_secs()
                        ),
                        retryable: false,
                    }))
                }
                () = cancel.cancelled() => return Err(ProviderError::Cancelled),
            };
            let err = match result {
                Ok(mut c) => {
                    // What must go back verbatim goes back only here.
                    for item in &mut c.carried {
                        item.server.clone_from(&self.server);
                    }
                    return Ok(c);
                }
                Err(e) => match &self.key {
                    Some(k) => e.scrubbed(k.expose()),
                    None => e,
                },
            };
            let delay = match self.delay_for(&err, attempt) {
                Some(d) => d,
                None if attempt == 0 => return Err(err),
                None => {
                    return Err(ProviderError::Exhausted {
                        attempts: attempt + 1,
                        last: Box::new(err),
                    });
                }
            };
            attempt += 1;
            tracing::warn!(attempt, delay_ms = delay.as_millis() as u64, error = %err, "provider request failed; retrying");
            obs.retrying(&RetryNotice {
                attempt,
                max_retries: self.retry.max_retries,
                delay,
                reason: err.to_string(),
            });
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = cancel.cancelled() => return Err(ProviderError::Cancelled),
            }
        }
    }

    /// The delay before the next attempt, or `None` if there is none.
    fn delay_for(&self, err: &ProviderError, attempt: u32) -> Option<Duration> {
        if !err.is_retryable() || attempt >= self.retry.max_retries {
            return None;
        }
        if let ProviderError::Http {
            retry_after: Some(after),
            ..
        } = err
        {
            return (*after <= self.retry.max_retry_after).then_some(*after);
        }
        Some(self.retry.backoff(attempt))
    }

    async fn attempt(
        &self,
        wire: &dyn Wire,
        body: Bytes,
        obs: &mut dyn StreamObserver,
    ) -> Result<Completion, ProviderError> {
        let url = wire.url();
        let resp = self
            .client
            .post(url)
            .headers(wire.headers().clone())
            .body(body)
            .send()
            .await
            .map_err(|e| connect_error(url, &e))?;
        let status = resp.status();
        if status.is_redirection() {
            let location = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("nowhere")
                .chars()
                .filter(|c| !c.is_control())
                .take(300)
                .collect::<String>();
            return Err(ProviderError::Http {
                status: status.as_u16(),
                url: url.to_string(),
                message: format!(
                    "the server redirects to {location}; Lathe follows no redirects, so the \
                     API key and the conversation go only to the configured host (set \
                     base_url to the new address if you trust it)"
                ),
                retry_after: None,
            });
        }
        if !status.is_success() {
            let retry_after = retry_after(resp.headers());
            let bytes = read_capped(resp, MAX_ERROR_BODY).await.unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes);
            let mut message = server_message(status, &text);
            if let Some(hint) = missing_v1(status, url) {
                message.push_str(&hint);
            }
            return Err(ProviderError::Http {
                status: status.as_u16(),
                url: url.to_string(),
                message,
                retry_after,
            });
        }
        let mut decoder = wire.decoder();
        let is_json = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("application/json"));
        if is_json {
            let bytes = read_capped(resp, MAX_BODY)
                .await
                .map_err(ProviderError::Incomplete)?;
            if bytes.len() > MAX_BODY {
                return Err(ProviderError::Malformed(format!(
                    "the response is larger than {} MiB",
                    MAX_BODY >> 20
                )));
            }
            let body: Value = serde_json::from_slice(&bytes).map_err(|e| {
                ProviderError::Malformed(format!(
                    "unparseable JSON response ({e}): {}",
                    shorten(&String::from_utf8_lossy(&bytes), 200)
                ))
            })?;
            for ev in wire.events_of_full_response(body) {
                let end = decoder.event(&ev, obs)?;
                decoder.held().check(&self.limits)?;
                if end {
                    return decoder.finish(true);
                }
            }
            return decoder.finish(true);
        }
        let mut parser = SseParser::new();
        let mut stream = resp.bytes_stream();
        // Each event is decoded as it is read: memory follows one event,
        // not the hundreds a large chunk can hold.
        let limits = &self.limits;
        let mut each = |ev: &SseEvent| -> Result<bool, ProviderError> {
            let end = decoder.event(ev, obs)?;
            decoder.held().check(limits)?;
            Ok(end)
        };
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| ProviderError::Incomplete(chain(&e)))?;
            if parser.feed_each(&chunk, &mut each)? {
                return decoder.finish(true);
            }
        }
        if parser.finish_each(&mut each)? {
            return decoder.finish(true);
        }
        decoder.finish(false)
    }
}

/// Why a request did not reach the server. A server on this machine that
/// refuses the connection is not running: said at once, not retried.
pub(super) fn connect_error(url: &str, e: &reqwest::Error) -> ProviderError {
    let detail = chain(e);
    if is_loopback(url) && detail.to_ascii_lowercase().contains("connection refused") {
        let origin = reqwest::Url::parse(url)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_else(|_| url.to_string());
        return ProviderError::Refused {
            url: url.to_string(),
            origin,
        };
    }
    ProviderError::Connect {
        url: url.to_string(),
        detail,
    }
}

/// Whether a 400 says the server does not take the reasoning fields (or
/// settings) it was sent: they are left out and the request goes again.
pub(crate) fn refuses_reasoning(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    (m.contains("reasoning") || m.contains("extra_content"))
        && [
            "unsupported",
            "not supported",
            "not permitted",
            "not available",
            "unknown",
            "unrecognized",
            "extra",
        ]
        .iter()
        .any(|w| m.contains(w))
}

/// A request body as bytes, with the config's `extra_body` fields put in
/// (each replacing the field of that name, so no key is sent twice).
pub(crate) fn encode(
    body: &impl serde::Serialize,
    extra: &serde_json::Map<String, Value>,
) -> Vec<u8> {
    if extra.is_empty() {
        return serde_json::to_vec(body).unwrap_or_default();
    }
    let mut v = serde_json::to_value(body).unwrap_or(Value::Null);
    if let Value::Object(fields) = &mut v {
        for (k, x) in extra {
            fields.insert(k.clone(), x.clone());
        }
    }
    serde_json::to_vec(&v).unwrap_or_default()
}

/// The most of a JSON response body read; past it the response is refused.
const MAX_BODY: usize = 64 * 1024 * 1024;
/// The most of an error body read (its message is all that is used).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Reads a body up to `max` bytes (and one chunk past it, so a caller can
/// tell it was longer).
pub(super) async fn read_capped(resp: reqwest::Response, max: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| chain(&e))?;
        out.extend_from_slice(&chunk);
        if out.len() > max {
            break;
        }
    }
    Ok(out)
}

/// Whether `url` points at this machine (a local model server).
pub fn is_loopback(url: &str) -> bool {
    let Ok(u) = reqwest::Url::parse(url) else {
        return false;
    };
    let host = u.host_str().unwrap_or("").trim_matches(['[', ']']);
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// An error with its sources, which is where reqwest puts the useful part
/// ("tcp connect error: Connection refused"); the wrappers that only repeat
/// the URL are left out.
fn chain(err: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current = Some(err);
    while let Some(e) = current {
        let text = e.to_string();
        let wrapper =
            text.starts_with("error sending request") || text.starts_with("client error (");
        if !wrapper && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        current = e.source();
    }
    if parts.is_empty() {
        err.to_string()
    } else {
        parts.join(": ")
    }
}

/// `retry-after-ms` (OpenAI), else `Retry-After` in seconds or as an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    // Any number a server sends is taken, clamped: 1e300 is "too long".
    let secs = |s: f64| {
        (!s.is_nan() && s >= 0.0).then(|| Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX))
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && let Some(d) = secs(ms / 1000.0)
    {
        return Some(d);
    }
    let v = text("retry-after")?;
    if let Ok(s) = v.parse::<f64>() {
        return secs(s);
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// The message a server put in an error body (OpenAI, Anthropic, Ollama
/// shapes), else the body itself, shortened.
pub(crate) fn server_message(status: reqwest::StatusCode, body: &str) -> String {
    let reason = status.canonical_reason().unwrap_or("");
    let from_json = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        let err = v.get("error")?;
        match err {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => {
                let msg = o.get("message").and_then(Value::as_str)?;
                Some(match o.get("type").and_then(Value::as_str) {
                    Some(t) => format!("{t}: {msg}"),
                    None => msg.to_string(),
                })
            }
            _ => None,
        }
    });
    let detail = from_json.unwrap_or_else(|| shorten(body.trim(), 500));
    match (reason.is_empty(), detail.is_empty()) {
        (_, true) => reason.to_string(),
        (true, false) => detail,
        (false, false) => format!("{reason}: {detail}"),
    }
}

pub(crate) use crate::protocol::text::shorten;

/// A header value that never shows up in debug output or logs.
pub(crate) fn sensitive(value: &str) -> Option<HeaderValue> {
    let mut v = HeaderValue::from_str(value).ok()?;
    v.set_sensitive(true);
    Some(v)
}

/// A 404 from an OpenAI-style endpoint whose URL lacks `/v1` (Ollama at
/// `http://127.0.0.1:11434`): the way on.
fn missing_v1(status: reqwest::StatusCode, url: &str) -> Option<String> {
    if status != reqwest::StatusCode::NOT_FOUND || url.contains("/v1/") {
        return None;
    }
    let base = ["/chat/completions", "/responses"]
        .iter()
        .find_map(|end| url.strip_suffix(end))?;
    Some(format!(
        " (OpenAI-style servers answer under /v1: try --base-url {base}/v1)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A base URL without `/v1` that the server answers with 404 says
    /// how to go on; one with it, or another status, says nothing more.
    #[test]
    fn a_missing_v1_is_pointed_out() {
        let nf = reqwest::StatusCode::NOT_FOUND;
        assert_eq!(
            missing_v1(nf, "http://127.0.0.1:11434/chat/completions").as_deref(),
            Some(
                " (OpenAI-style servers answer under /v1: try --base-url http://127.0.0.1:11434/v1)"
            )
        );
        assert!(missing_v1(nf, "http://127.0.0.1:11434/v1/chat/completions").is_none());
        assert!(
            missing_v1(
                reqwest::StatusCode::BAD_GATEWAY,
                "http://h/chat/completions"
            )
            .is_none()
        );
        assert!(missing_v1(nf, "https://api.anthropic.com/v1/messages").is_none());
    }

    /// Nothing listens on a port of this machine: the error says so at
    /// once (no retries), and asks whether the server runs.
    #[tokio::test]
    async fn a_refused_local_server_fails_at_once() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/v1");
        let mut settings = ProviderSettings::new(super::super::ProviderKind::OpenAi, url.clone());
        settings.retry.base_delay = Duration::from_secs(5);
        let p = super::super::build(settings).unwrap();
        let messages = [super::super::Message::User("hi".into())];
        let started = std::time::Instant::now();
        let e = p
            .complete(
                ChatRequest::new("m", "", &messages, &[]),
                &mut super::super::NoopObserver,
                &CancellationToken::new(),
            )
            .await
            .unwrap_err();
        assert!(matches!(e, ProviderError::Refused { .. }), "{e:?}");
        assert!(
            e.to_string().contains(&format!(
                "is the server at http://127.0.0.1:{port} running?"
            )),
            "{e}"
        );
        assert!(started.elapsed() < Duration::from_secs(4), "no retries");
    }

    /// A server is asked of a model only its own way: llama.cpp (its
    /// listing says `llamacpp`) its `/props`, Ollama (`library`) its
    /// `/api/show`, another (vLLM) neither; one that does not say, both.
    #[tokio::test]
    async fn a_server_is_asked_of_its_model_its_own_way() {
        use std::sync::{Arc, Mutex};
        for (owner, asked) in [
            (Some("llamacpp"), vec!["/v1/models", "/props"]),
            (Some("library"), vec!["/v1/models", "/api/show"]),
            (Some("vllm"), vec!["/v1/models"]),
            (None, vec!["/v1/models", "/props", "/api/show"]),
        ] {
            let hits = Arc::new(Mutex::new(Vec::<String>::new()));
            let seen = hits.clone();
            let listing = serde_json::json!({"object": "list", "data": [match owner {
                Some(o) => serde_json::json!({"id": "m", "object": "model", "owned_by": o}),
                None => serde_json::json!({"id": "m", "object": "model"}),
            }]});
            let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
                let seen = seen.clone();
                let listing = listing.clone();
                async move {
                    let path = uri.path().to_string();
                    seen.lock().unwrap().push(path.clone());
                    match path.as_str() {
                        "/v1/models" => (axum::http::StatusCode::OK, listing.to_string()),
                        // llama.cpp's answer, where it is asked: no size.
                        "/props" if owner == Some("llamacpp") => {
                            (axum::http::StatusCode::OK, "{}".to_string())
                        }
                        _ => (axum::http::StatusCode::NOT_FOUND, String::new()),
                    }
                }
            });
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move { axum::serve(listener, app).await });
            let settings = ProviderSettings::new(
                super::super::ProviderKind::OpenAi,
                format!("http://{addr}/v1"),
            );
            let p = super::super::build(settings).unwrap();
            let _ = p.model_info("m").await;
            assert_eq!(*hits.lock().unwrap(), asked, "{owner:?}");
        }
    }

    /// `extra_body` goes into the body, a field it names replacing
    /// Lathe's own (no key twice).
    #[test]
    fn extra_body_fields_replace_rather_than_repeat() {
        let extra: serde_json::Map<String, Value> =
            serde_json::from_str(r#"{"thinking": {"type": "enabled"}, "max_tokens": 5}"#).unwrap();
        let body = serde_json::json!({"model": "m", "max_tokens": 100});
        let text = String::from_utf8(encode(&body, &extra)).unwrap();
        assert_eq!(text.matches("max_tokens").count(), 1, "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["max_tokens"], 5);
        assert_eq!(v["thinking"]["type"], "enabled");
        assert_eq!(
            encode(&body, &serde_json::Map::new()),
            serde_json::to_vec(&body).unwrap()
        );
    }

    #[test]
    fn loopback_urls_are_recognised() {
        assert!(is_loopback("http://127.0.0.1:8080/v1"));
        assert!(is_loopback("http://localhost:11434/v1"));
        assert!(is_loopback("http://[::1]:8000"));
        assert!(!is_loopback("https://api.openai.com/v1"));
    }

    #[test]
    fn backoff_grows_exponentially_with_jitter_and_a_cap() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
            ..RetryPolicy::default()
        };
        for _ in 0..50 {
            let d0 = p.backoff(0);
            assert!(d0 >= Duration::from_millis(50) && d0 <= Duration::from_millis(100));
            let d2 = p.backoff(2);
            assert!(d2 >= Duration::from_millis(200) && d2 <= Duration::from_millis(400));
            assert!(p.backoff(30) <= Duration::from_secs(1));
        }
    }

    #[test]
    fn retry_after_reads_seconds_milliseconds_and_dates() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("1e300"));
        assert_eq!(retry_after(&h), Some(Duration::MAX));
        h.insert("retry-after-ms", HeaderValue::from_static("1e300"));
        assert_eq!(retry_after(&h), Some(Duration::MAX));
        h.insert("retry-after-ms", HeaderValue::from_static("inf"));
        assert_eq!(retry_after(&h), Some(Duration::MAX));
        h.remove("retry-after-ms");
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn server_messages_are_quoted() {
        use reqwest::StatusCode;
        let openai =
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#;
        assert_eq!(
            server_message(StatusCode::UNAUTHORIZED, openai),
            "Unauthorized: invalid_request_error: Incorrect API key provided"
        );
        let anthropic =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(
            server_message(StatusCode::from_u16(529).unwrap(), anthropic),
            "overloaded_error: Overloaded"
        );
        assert_eq!(
            server_message(StatusCode::NOT_FOUND, r#"{"error":"model 'x' not found"}"#),
            "Not Found: model 'x' not found"
        );
        assert_eq!(
            server_message(StatusCode::BAD_GATEWAY, "<html>bad gateway</html>"),
            "Bad Gateway: <html>bad gateway</html>"
        );
        assert_eq!(
            server_message(StatusCode::SERVICE_UNAVAILABLE, ""),
            "Service Unavailable"
        );
    }

    #[test]
    fn retryable_errors_are_the_transient_ones() {
        let http = |status| ProviderError::Http {
            status,
            url: String::new(),
            message: String::new(),
            retry_after: None,
        };
        assert!(http(429).is_retryable() && http(500).is_retryable() && http(503).is_retryable());
        assert!(
            !http(400).is_retryable() && !http(401).is_retryable() && !http(404).is_retryable()
        );
        assert!(ProviderError::Incomplete(String::new()).is_retryable());
        assert!(!ProviderError::Malformed(String::new()).is_retryable());
    }
}
