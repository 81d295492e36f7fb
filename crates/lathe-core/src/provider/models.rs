//! What Lathe knows of a model: its context window (input and output
//! together), its output cap, whether it takes images and thinks, and
//! what its tokens cost.
//!
//! Three sources, the first that knows winning field by field: the
//! config (`[models."NAME"]`), what the server says of its models
//! (OpenRouter's `/models` context and pricing, vLLM's `max_model_len`,
//! llama.cpp's `/props`, Ollama's `/api/show`), and the built-in table
//! below. An unknown model has no known window: the context meter then
//! shows tokens only, and compaction waits for the server to say the
//! conversation is too long.
//!
//! Asking a server (its model list, and what it says of one model) is
//! here too, on the HTTP driver of the wires.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ProviderError;
use super::http::{self, HttpDriver};

/// Prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    /// Input read from the prompt cache.
    pub cached_input: f64,
    /// Input written to the prompt cache (Anthropic's 5-minute cache).
    pub cache_write: f64,
    pub output: f64,
}

impl Price {
    /// What `usage` costs at these prices.
    pub fn cost(&self, usage: &crate::protocol::Usage) -> f64 {
        let m = |tokens: u64, per_million: f64| tokens as f64 * per_million / 1_000_000.0;
        let cost = m(usage.uncached_input(), self.input)
            + m(usage.cache_read_tokens, self.cached_input)
            + m(usage.cache_write_tokens, self.cache_write)
            + m(usage.output_tokens, self.output);
        crate::protocol::round_usd(cost)
    }

    /// A price from input and output alone, caching at the usual
    /// discounts (reads 0.1x, writes 1.25x).
    const fn anthropic(input: f64, output: f64) -> Self {
        Self {
            input,
            cached_input: input / 10.0,
            cache_write: input * 1.25,
            output,
        }
    }

    /// OpenAI-style: cached input at `cached`, writes free.
    const fn cached(input: f64, cached: f64, output: f64) -> Self {
        Self {
            input,
            cached_input: cached,
            cache_write: input,
            output,
        }
    }
}

/// What is known of one model; `None`: not known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// Input and output tokens together.
    pub context_window: Option<u64>,
    /// The most output tokens one response may have.
    pub output_cap: Option<u64>,
    /// Takes images.
    pub vision: Option<bool>,
    /// Thinks before it answers (reasoning effort applies).
    pub reasoning: Option<bool>,
    pub price: Option<Price>,
}

impl ModelInfo {
    /// Fills what `self` does not know from `other`.
    #[must_use]
    pub fn or(self, other: ModelInfo) -> ModelInfo {
        ModelInfo {
            context_window: self.context_window.or(other.context_window),
            output_cap: self.output_cap.or(other.output_cap),
            vision: self.vision.or(other.vision),
            reasoning: self.reasoning.or(other.reasoning),
            price: self.price.or(other.price),
        }
    }
}

struct Entry {
    prefix: &'static str,
    window: u64,
    output: u64,
    vision: bool,
    reasoning: bool,
    price: Option<Price>,
}

const fn e(
    prefix: &'static str,
    window: u64,
    output: u64,
    vision: bool,
    reasoning: bool,
    price: Option<Price>,
) -> Entry {
    Entry {
        prefix,
        window,
        output,
        vision,
        reasoning,
        price,
    }
}

/// Known models, most specific prefix first. Kept current with the
/// vendors' model pages; prices per million tokens.
const TABLE: &[Entry] = &[
    // Anthropic.
    e(
        "claude-sonnet-5",
        1_000_000,
        64_000,
        true,
        true,
        Some(Price::anthropic(3.0, 15.0)),
    ),
    e(
        "claude-opus-4-6",
        1_000_000,
        128_000,
        true,
        true,
        Some(Price::anthropic(5.0, 25.0)),
    ),
    e(
        "claude-opus-4-5",
        200_000,
        64_000,
        true,
        true,
        Some(Price::anthropic(5.0, 25.0)),
    ),
    e(
        "claude-opus-4-1",
        200_000,
        32_000,
        true,
        true,
        Some(Price::anthropic(15.0, 75.0)),
    ),
    e(
        "claude-opus-4",
        200_000,
        32_000,
        true,
        true,
        Some(Price::anthropic(15.0, 75.0)),
    ),
    e(
        "claude-sonnet-4",
        200_000,
        64_000,
        true,
        true,
        Some(Price::anthropic(3.0, 15.0)),
    ),
    e(
        "claude-haiku-4",
        200_000,
        64_000,
        true,
        true,
        Some(Price::anthropic(1.0, 5.0)),
    ),
    e(
        "claude-3-7-sonnet",
        200_000,
        64_000,
        true,
        true,
        Some(Price::anthropic(3.0, 15.0)),
    ),
    e(
        "claude-3-5-haiku",
        200_000,
        8_192,
        true,
        false,
        Some(Price::anthropic(0.8, 4.0)),
    ),
    e(
        "claude-3-5-sonnet",
        200_000,
        8_192,
        true,
        false,
        Some(Price::anthropic(3.0, 15.0)),
    ),
    e("claude-", 200_000, 8_192, true, false, None),
    // OpenAI.
    e(
        "gpt-5-pro",
        400_000,
        272_000,
        true,
        true,
        Some(Price::cached(15.0, 15.0, 120.0)),
    ),
    e(
        "gpt-5.2-pro",
        400_000,
        128_000,
        true,
        true,
        Some(Price::cached(21.0, 21.0, 168.0)),
    ),
    e(
        "gpt-5.2",
        400_000,
        128_000,
        true,
        true,
        Some(Price::cached(1.75, 0.175, 14.0)),
    ),
    e(
        "gpt-5.1-codex-mini",
        400_000,
        128_000,
        true,
        true,
        Some(Price::cached(0.25, 0.025, 2.0)),
    ),
    e(
        "gpt-5-mini",
        400_000,
        128_000,
        true,
        true,
        Some(Price::cached(0.25, 0.025, 2.0)),
    ),
    e(
        "gpt-5-nano",
        400_000,
        128_000,
        true,
        true,
        Some(Price::cached(0.05, 0.005, 0.4)),
    ),
    e(
        "gpt-5",
        400_000,
        128_000,
        true,
        true,
        Some(Price::cached(1.25, 0.125, 10.0)),
    ),
    e(
        "gpt-4.1-nano",
        1_047_576,
        32_768,
        true,
        false,
        Some(Price::cached(0.1, 0.025, 0.4)),
    ),
    e(
        "gpt-4.1-mini",
        1_047_576,
        32_768,
        true,
        false,
        Some(Price::cached(0.4, 0.1, 1.6)),
    ),
    e(
        "gpt-4.1",
        1_047_576,
        32_768,
        true,
        false,
        Some(Price::cached(2.0, 0.5, 8.0)),
    ),
    e(
        "gpt-4o-mini",
        128_000,
        16_384,
        true,
        false,
        Some(Price::cached(0.15, 0.075, 0.6)),
    ),
    e(
        "gpt-4o",
        128_000,
        16_384,
        true,
        false,
        Some(Price::cached(2.5, 1.25, 10.0)),
    ),
    e("gpt-4-turbo", 128_000, 4_096, true, false, None),
    e("gpt-4-32k", 32_768, 4_096, false, false, None),
    e("gpt-4", 8_192, 4_096, false, false, None),
    e("gpt-3.5-turbo", 16_385, 4_096, false, false, None),
    e("gpt-oss", 131_072, 131_072, false, true, None),
    e("o1-mini", 128_000, 65_536, false, true, None),
    e("o1", 200_000, 100_000, true, true, None),
    e(
        "o3-mini",
        200_000,
        100_000,
        false,
        true,
        Some(Price::cached(1.1, 0.55, 4.4)),
    ),
    e(
        "o3",
        200_000,
        100_000,
        true,
        true,
        Some(Price::cached(2.0, 0.5, 8.0)),
    ),
    e(
        "o4-mini",
        200_000,
        100_000,
        true,
        true,
        Some(Price::cached(1.1, 0.275, 4.4)),
    ),
    e(
        "codex-mini",
        200_000,
        100_000,
        true,
        true,
        Some(Price::cached(1.5, 0.375, 6.0)),
    ),
    // DeepSeek (cache hits at a tenth).
    e(
        "deepseek-v4",
        1_000_000,
        64_000,
        false,
        true,
        Some(Price::cached(0.28, 0.028, 0.42)),
    ),
    e(
        "deepseek-reasoner",
        128_000,
        64_000,
        false,
        true,
        Some(Price::cached(0.28, 0.028, 0.42)),
    ),
    e(
        "deepseek-chat",
        128_000,
        8_192,
        false,
        false,
        Some(Price::cached(0.28, 0.028, 0.42)),
    ),
    e("deepseek-r1", 128_000, 32_768, false, true, None),
    e("deepseek", 128_000, 8_192, false, false, None),
    // Google.
    e(
        "gemini-3",
        1_048_576,
        65_536,
        true,
        true,
        Some(Price::cached(2.0, 0.2, 12.0)),
    ),
    e(
        "gemini-2.5-pro",
        1_048_576,
        65_536,
        true,
        true,
        Some(Price::cached(1.25, 0.125, 10.0)),
    ),
    e(
        "gemini-2.5-flash",
        1_048_576,
        65_536,
        true,
        true,
        Some(Price::cached(0.3, 0.03, 2.5)),
    ),
    // Open-weight families (served locally too: no built-in price).
    e("qwen3-coder", 262_144, 65_536, false, false, None),
    e("qwen3-max", 262_144, 65_536, false, false, None),
    e("qwen3-vl", 262_144, 32_768, true, true, None),
    e("qwen3", 40_960, 32_768, false, true, None),
    e("qwq", 131_072, 32_768, false, true, None),
    e("kimi-k2", 262_144, 16_384, false, false, None),
    e("glm-4.6", 202_752, 131_072, false, true, None),
    e("grok-4", 256_000, 64_000, true, true, None),
    e("grok-3-mini", 131_072, 16_384, false, true, None),
    e("magistral", 40_960, 40_960, false, true, None),
    e("mistral-small", 131_072, 32_768, true, false, None),
    e("devstral", 131_072, 32_768, false, false, None),
];

/// The name without a provider prefix (`openai/gpt-4o`,
/// `anthropic/claude-…`, `ollama_chat/qwen3:8b`), lower-cased.
fn bare(model: &str) -> String {
    let m = model.trim().to_ascii_lowercase();
    m.rsplit('/').next().unwrap_or(&m).to_string()
}

fn entry(model: &str) -> Option<&'static Entry> {
    let m = bare(model);
    TABLE.iter().find(|e| m.starts_with(e.prefix))
}

/// What the built-in table knows of `model`.
pub fn builtin(model: &str) -> ModelInfo {
    entry(model).map_or_else(ModelInfo::default, |e| ModelInfo {
        context_window: Some(e.window),
        output_cap: Some(e.output),
        vision: Some(e.vision),
        reasoning: Some(e.reasoning),
        price: e.price,
    })
}

/// What a `/models` entry says of its model: OpenRouter's
/// `context_length`, `top_provider.max_completion_tokens`, `pricing`
/// (dollars per token, as strings) and `architecture.input_modalities`;
/// vLLM's `max_model_len`; LM Studio's `max_context_length`.
pub fn from_listing(entry: &Value) -> ModelInfo {
    let num = |v: Option<&Value>| {
        v.and_then(|v| match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        })
        .filter(|n| n.is_finite() && *n >= 0.0)
    };
    let count = |v: Option<&Value>| num(v).map(|n| n as u64).filter(|n| *n > 0);
    let window = [
        "context_length",
        "max_model_len",
        "max_context_length",
        "context_window",
    ]
    .iter()
    .find_map(|k| count(entry.get(*k)));
    let pricing = entry.get("pricing");
    let per_million = |k: &str| num(pricing.and_then(|p| p.get(k))).map(|p| p * 1_000_000.0);
    let price = match (per_million("prompt"), per_million("completion")) {
        (Some(input), Some(output)) => Some(Price {
            input,
            output,
            cached_input: per_million("input_cache_read").unwrap_or(input),
            cache_write: per_million("input_cache_write").unwrap_or(input),
        }),
        _ => None,
    };
    let modalities = entry
        .pointer("/architecture/input_modalities")
        .and_then(Value::as_array);
    ModelInfo {
        context_window: window,
        output_cap: count(entry.pointer("/top_provider/max_completion_tokens")),
        vision: modalities.map(|m| m.iter().any(|x| x == "image")),
        reasoning: entry
            .get("supported_parameters")
            .and_then(Value::as_array)
            .map(|p| p.iter().any(|x| x == "reasoning")),
        price,
    }
}

/// What Ollama's `/api/show` says: `model_info.<arch>.context_length`
/// and its capabilities (`vision`, `thinking`).
pub fn from_ollama_show(show: &Value) -> ModelInfo {
    let window = show
        .get("model_info")
        .and_then(Value::as_object)
        .and_then(|m| {
            m.iter()
                .find(|(k, _)| k.ends_with(".context_length"))
                .and_then(|(_, v)| v.as_u64())
        })
        .filter(|n| *n > 0);
    let caps = show.get("capabilities").and_then(Value::as_array);
    ModelInfo {
        context_window: window,
        vision: caps.map(|c| c.iter().any(|x| x == "vision")),
        reasoning: caps.map(|c| c.iter().any(|x| x == "thinking")),
        ..ModelInfo::default()
    }
}

/// The context window of `model`, if the table knows it.
/// Asking a server of its models: the list, and what it says of one.
impl HttpDriver {
    /// The models a server lists at `url` (`GET`, `{"data": [{"id": …}]}`
    /// as OpenAI, Anthropic, Ollama, llama.cpp and vLLM answer), following
    /// Anthropic's pages (`has_more`, `last_id`); `None` when the server
    /// has no such list (404, 405, 501).
    pub(crate) async fn list_models(
        &self,
        url: &str,
        headers: &HeaderMap,
    ) -> Result<Option<Vec<String>>, ProviderError> {
        // However the server trickles, the list comes within this or not
        // at all (`/model` then takes any name, said to be unchecked).
        const WHOLE: Duration = Duration::from_secs(30);
        tokio::time::timeout(WHOLE, self.list_models_now(url, headers))
            .await
            .unwrap_or_else(|_| {
                Err(ProviderError::Connect {
                    url: url.to_string(),
                    detail: format!("the model list took over {} s", WHOLE.as_secs()),
                })
            })
            .map_err(|e| match &self.key {
                Some(k) => e.scrubbed(k.expose()),
                None => e,
            })
    }

    /// What an OpenAI-style server at `models_url` says of `model`;
    /// nothing for OpenAI's own, whose list holds names only.
    pub(crate) async fn openai_style_model_info(
        &self,
        models_url: &str,
        headers: &HeaderMap,
        model: &str,
    ) -> ModelInfo {
        if super::is_openai_host(models_url) {
            return ModelInfo::default();
        }
        let root = server_root(models_url);
        self.model_details(models_url, root, headers, model).await
    }

    /// What an OpenAI-style server says of `model` (see
    /// [`super::Provider::model_info`]): its `/models` entry, else
    /// llama.cpp's `/props`, else Ollama's `/api/show`. `root` is the
    /// server without its `/v1`.
    pub(crate) async fn model_details(
        &self,
        models_url: &str,
        root: &str,
        headers: &HeaderMap,
        model: &str,
    ) -> ModelInfo {
        const EACH: Duration = Duration::from_secs(5);
        let mut headers = headers.clone();
        headers.remove(reqwest::header::CONTENT_TYPE);
        headers.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("application/json"),
        );
        let get = |url: String, body: Option<Value>| {
            let req = match &body {
                Some(b) => self
                    .client
                    .post(url)
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(b.to_string()),
                None => self.client.get(url),
            }
            .headers(headers.clone());
            async move {
                let resp = tokio::time::timeout(EACH, req.send()).await.ok()?.ok()?;
                if !resp.status().is_success() {
                    return None;
                }
                let bytes = tokio::time::timeout(EACH, http::read_capped(resp, 4 << 20))
                    .await
                    .ok()?
                    .ok()?;
                serde_json::from_slice::<Value>(&bytes).ok()
            }
        };
        let mut info = ModelInfo::default();
        // Who serves it, as its listing says (`llamacpp`, Ollama's
        // `library`): a server that says is asked only its own way.
        let mut owner: Option<String> = None;
        if let Some(list) = get(models_url.to_string(), None).await
            && let Some(entry) = list.get("data").and_then(Value::as_array).and_then(|d| {
                d.iter()
                    .find(|m| m.get("id").and_then(Value::as_str) == Some(model))
            })
        {
            info = from_listing(entry);
            owner = entry
                .get("owned_by")
                .and_then(Value::as_str)
                .map(str::to_ascii_lowercase);
        }
        let asks = |ours: &[&str]| owner.as_deref().is_none_or(|o| ours.contains(&o));
        if info.context_window.is_none()
            && asks(&["llamacpp", "llama.cpp"])
            && let Some(props) = get(format!("{root}/props"), None).await
        {
            info.context_window = props
                .pointer("/default_generation_settings/n_ctx")
                .and_then(Value::as_u64)
                .filter(|n| *n > 0);
        }
        if info.context_window.is_none()
            && asks(&["library", "ollama"])
            && let Some(show) = get(
                format!("{root}/api/show"),
                Some(serde_json::json!({ "model": model })),
            )
            .await
        {
            info = info.or(from_ollama_show(&show));
        }
        info
    }

    async fn list_models_now(
        &self,
        url: &str,
        headers: &HeaderMap,
    ) -> Result<Option<Vec<String>>, ProviderError> {
        const MAX_BODY: usize = 4 * 1024 * 1024;
        // More than anyone picks from; the rest is not kept.
        const MAX_MODELS: usize = 5_000;
        const MAX_PAGES: usize = 20;
        let mut headers = headers.clone();
        headers.remove(reqwest::header::CONTENT_TYPE);
        headers.insert(
            reqwest::header::ACCEPT,
            reqwest::header::HeaderValue::from_static("application/json"),
        );
        let mut models = Vec::new();
        let mut after: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut page_url = reqwest::Url::parse(url)
                .map_err(|e| ProviderError::Malformed(format!("{url} is not a URL: {e}")))?;
            if let Some(a) = &after {
                page_url.query_pairs_mut().append_pair("after_id", a);
            }
            let request = self.client.get(page_url).headers(headers.clone());
            let connect = |e: reqwest::Error| http::connect_error(url, &e);
            let mut resp = tokio::time::timeout(Duration::from_secs(20), request.send())
                .await
                .map_err(|_| ProviderError::Connect {
                    url: url.to_string(),
                    detail: "no answer within 20 s".into(),
                })?
                .map_err(connect)?;
            let status = resp.status().as_u16();
            if matches!(status, 404 | 405 | 501) {
                return Ok(None);
            }
            let mut body = Vec::new();
            while let Some(chunk) = resp.chunk().await.map_err(connect)? {
                body.extend_from_slice(&chunk);
                if body.len() > MAX_BODY {
                    return Err(ProviderError::Malformed(format!(
                        "the model list from {url} is larger than 4 MiB"
                    )));
                }
            }
            if !(200..300).contains(&status) {
                return Err(ProviderError::Http {
                    status,
                    url: url.to_string(),
                    message: http::shorten(&String::from_utf8_lossy(&body), 300),
                    retry_after: None,
                });
            }
            let v: Value = serde_json::from_slice(&body).map_err(|e| {
                ProviderError::Malformed(format!("the model list from {url} is not JSON: {e}"))
            })?;
            let page = v
                .get("data")
                .or_else(|| v.get("models"))
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    ProviderError::Malformed(format!("the model list from {url} has no `data`"))
                })?;
            models.extend(page.iter().filter_map(|m| {
                m.get("id")
                    .or_else(|| m.get("name"))
                    .and_then(Value::as_str)
                    // A name is one printable word, nothing hidden in it
                    // (two names must not look the same).
                    .filter(|id| {
                        !id.is_empty()
                            && id.len() <= 200
                            && !id.chars().any(|c| c.is_control() || c.is_whitespace())
                            && crate::protocol::visible::first_hidden(id).is_none()
                    })
                    .map(str::to_string)
            }));
            if models.len() >= MAX_MODELS {
                models.truncate(MAX_MODELS);
                break;
            }
            match (v.get("has_more").and_then(Value::as_bool), v.get("last_id")) {
                (Some(true), Some(Value::String(last))) if after.as_ref() != Some(last) => {
                    after = Some(last.clone());
                }
                _ => break,
            }
        }
        models.sort();
        models.dedup();
        Ok(Some(models))
    }
}

/// The server's root, from its `/models` URL: without `/models` and the
/// `/v1` before it (where llama.cpp's `/props` and Ollama's `/api/show`
/// are).
fn server_root(models_url: &str) -> &str {
    let base = models_url.strip_suffix("/models").unwrap_or(models_url);
    base.strip_suffix("/v1").unwrap_or(base)
}

#[cfg(test)]
fn context_window(model: &str) -> Option<u64> {
    entry(model).map(|e| e.window)
}

/// The output cap of `model`, if the table knows it.
pub fn output_cap(model: &str) -> Option<u64> {
    entry(model).map(|e| e.output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Usage;

    #[test]
    fn known_models_have_windows_and_others_none() {
        assert_eq!(context_window("claude-sonnet-4-5-20250929"), Some(200_000));
        assert_eq!(context_window("claude-sonnet-5"), Some(1_000_000));
        assert_eq!(context_window("claude-opus-4-6"), Some(1_000_000));
        assert_eq!(context_window("gpt-4o-mini"), Some(128_000));
        assert_eq!(context_window("openai/gpt-4.1"), Some(1_047_576));
        assert_eq!(context_window("gpt-4-0613"), Some(8_192));
        assert_eq!(context_window("gpt-4-turbo-preview"), Some(128_000));
        assert_eq!(context_window("o3-mini"), Some(200_000));
        assert_eq!(context_window("gpt-5.1-codex"), Some(400_000));
        assert_eq!(context_window("gemini-3-pro-preview"), Some(1_048_576));
        assert_eq!(context_window("ollama_chat/qwen3:8b"), Some(40_960));
        assert_eq!(context_window("qwen2.5-coder:32b"), None);
        assert_eq!(context_window("mock-model"), None);
    }

    #[test]
    fn more_specific_names_win() {
        assert_eq!(
            builtin("gpt-5-mini").price.map(|p| p.input),
            Some(0.25),
            "not gpt-5's price"
        );
        assert_eq!(builtin("claude-opus-4-1-20250805").output_cap, Some(32_000));
        assert_eq!(builtin("deepseek-reasoner").reasoning, Some(true));
        assert_eq!(builtin("deepseek-chat").vision, Some(false));
    }

    #[test]
    fn servers_say_what_they_know() {
        let openrouter = serde_json::json!({
            "id": "anthropic/claude-sonnet-4.5", "context_length": 1000000,
            "architecture": {"input_modalities": ["text", "image"]},
            "pricing": {"prompt": "0.000003", "completion": "0.000015",
                        "input_cache_read": "0.0000003", "input_cache_write": "0.00000375"},
            "top_provider": {"max_completion_tokens": 64000},
            "supported_parameters": ["tools", "reasoning"]
        });
        let i = from_listing(&openrouter);
        assert_eq!(i.context_window, Some(1_000_000));
        assert_eq!(i.output_cap, Some(64_000));
        assert_eq!(i.vision, Some(true));
        assert_eq!(i.reasoning, Some(true));
        let p = i.price.unwrap();
        assert!((p.input - 3.0).abs() < 1e-9 && (p.cached_input - 0.3).abs() < 1e-9);
        let vllm = serde_json::json!({"id": "Qwen/Qwen3-32B", "max_model_len": 40960});
        assert_eq!(from_listing(&vllm).context_window, Some(40_960));
        assert_eq!(from_listing(&vllm).price, None);
        let hostile = serde_json::json!({"context_length": -5, "pricing": {"prompt": "NaN", "completion": "x"}});
        assert_eq!(from_listing(&hostile), ModelInfo::default());
        let ollama = serde_json::json!({
            "model_info": {"qwen3.context_length": 40960, "general.architecture": "qwen3"},
            "capabilities": ["completion", "tools", "thinking"]
        });
        let i = from_ollama_show(&ollama);
        assert_eq!(i.context_window, Some(40_960));
        assert_eq!((i.vision, i.reasoning), (Some(false), Some(true)));
    }

    #[test]
    fn cost_prices_each_kind_of_token() {
        let p = Price::anthropic(3.0, 15.0);
        let u = Usage {
            input_tokens: 1_000_000 + 2_000_000 + 4_000_000,
            cache_read_tokens: 2_000_000,
            cache_write_tokens: 4_000_000,
            output_tokens: 1_000_000,
            ..Usage::default()
        };
        // 1M fresh at 3, 2M read at 0.3, 4M written at 3.75, 1M out at 15.
        let want = 3.0 + 0.6 + 15.0 + 15.0;
        assert!((p.cost(&u) - want).abs() < 1e-9, "{}", p.cost(&u));
    }
}
