//! Configuration, in two phases: `file::ConfigFile` (every field optional)
//! from each layer, merged, then validated into a [`Config`].
//!
//! Layers, later ones winning key by key: the user's `config.toml` (see
//! `paths`), the workspace's `.lathe/config.toml`, the environment, and the
//! command-line flags. A workspace config comes with the repository, so it
//! is trusted less: it may not set a `base_url` or an `api_key` (a cloned
//! repository could send your key elsewhere) and may only make the approval
//! mode stricter. What it tried is reported as a warning and ignored.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::policy::{HookSet, Rules};
use crate::protocol::ApprovalMode;
use crate::provider::models::ModelInfo;
use crate::provider::{Effort, ProviderKind, ProviderSettings, RetryPolicy, WireApi};
use crate::secret::Secret;

pub mod claude_hooks;
pub mod file;
mod layers;
pub mod mcp;
pub mod paths;
mod settings;
mod workspace_layer;

/// Defaults every layer starts from. The modules that use these values
/// (the agent, the shell tool) take them from here.
pub mod defaults {
    /// Tool rounds per turn (seed 000).
    pub const MAX_TOOL_ITERATIONS: u32 = 20;
    /// `exec_shell` timeout, and the longest a call may ask for (seed 002).
    pub const SHELL_TIMEOUT_SECS: u64 = 30;
    pub const SHELL_MAX_TIMEOUT_SECS: u64 = 300;
    /// How many commands may run in the background at once.
    pub const MAX_BACKGROUND: usize = 4;
    /// How long a "for this conversation" approval lasts, and the most
    /// it may be configured to last: the grants' own.
    pub use crate::policy::grants::{GRANT_TTL_SECS, MAX_GRANT_TTL_SECS};
    /// How long a user hook may run.
    pub const HOOK_TIMEOUT_SECS: u64 = 10;
    /// Longest a whole model response may take.
    pub const REQUEST_TIMEOUT_SECS: u64 = 900;
    /// How full the context may get before it is compacted (percent).
    pub const COMPACT_AT: u8 = 85;
    /// MCP tool schemas past this share of the context (percent) wait
    /// behind `tool_search`.
    pub const TOOL_SEARCH_AT: u8 = 10;
    /// How many times the same call may come in a turn (or the same
    /// failure in a row) before the turn pauses (`[limits] repeat_calls`).
    pub const REPEAT_CALLS: u32 = 5;
}

pub use paths::Paths;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{}", file_error(path, *line, key.as_deref(), message))]
    File {
        path: PathBuf,
        line: Option<usize>,
        key: Option<String>,
        message: String,
    },
    #[error("cannot read config file {path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("environment variable {var}: {message}")]
    Env { var: String, message: String },
    #[error("{0}")]
    Invalid(String),
}

fn file_error(path: &Path, line: Option<usize>, key: Option<&str>, message: &str) -> String {
    let mut out = format!("config error in {}", path.display());
    if let Some(line) = line {
        out.push_str(&format!(", line {line}"));
    }
    if let Some(key) = key {
        out.push_str(&format!(", key `{key}`"));
    }
    out.push_str(": ");
    out.push_str(message.trim());
    out
}

/// What the command line asked for; `None` leaves the decision to the
/// other layers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    pub provider: Option<ProviderKind>,
    /// `--wire-api chat|responses`.
    pub wire: Option<WireApi>,
    /// `--effort LEVEL`.
    pub effort: Option<Effort>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub workspace: Option<PathBuf>,
    pub approval: Option<ApprovalMode>,
    pub max_tool_iterations: Option<u32>,
    pub sandbox: Option<crate::sandbox::Mode>,
    /// `--checkpoints on|off`.
    pub checkpoints: Option<bool>,
    /// `--max-budget-usd`: the session's cap (the person's own, so it
    /// may raise the config's).
    pub max_budget_usd: Option<f64>,
    /// `--max-turn-tokens`.
    pub max_turn_tokens: Option<u64>,
    /// No model will be asked (`lathe mcp list`): a missing key is fine.
    pub no_model: bool,
}

/// What the config says about the web tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebSettings {
    /// Hosts (`name` or `name:port`) `web_fetch` may reach whatever their
    /// address.
    pub allow_hosts: Vec<String>,
    /// Let `web_fetch` reach private and loopback addresses.
    pub allow_private: bool,
    /// A SearXNG instance for `web_search`.
    pub search_endpoint: Option<String>,
}

/// The validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub provider: ProviderKind,
    /// Empty when none is configured and the server is not the vendor's:
    /// the server is asked which it serves.
    pub model: String,
    pub base_url: String,
    pub api_key: Option<Secret>,
    /// Every key the config files hold (the other provider's too): never
    /// shown, wherever it turns up.
    pub configured_keys: Vec<Secret>,
    pub approval: ApprovalMode,
    pub max_tool_iterations: u32,
    /// The model's context window in tokens, when configured (else the
    /// known-models table says, for the model in use).
    pub context_window: Option<u64>,
    /// Compact when the context is this full (percent).
    pub compact_at: u8,
    /// Defer MCP tool schemas behind `tool_search` past this share of the
    /// context (percent; 100: never).
    pub tool_search_at: u8,
    /// Checkpoint the workspace's files for `/undo` and `/rewind`.
    pub checkpoints: bool,
    pub workspace: PathBuf,
    pub theme: String,
    /// Call the person back (a desktop notification) when Lathe waits
    /// for them and the terminal is not focused.
    pub notify: bool,
    pub shell_timeout_secs: u64,
    /// How many commands may run in the background at once.
    pub max_background: usize,
    /// The model that reviews risky calls (`[judge] model`).
    pub judge: Option<String>,
    /// How commands are confined.
    pub sandbox: crate::sandbox::Settings,
    /// `[tools.web_fetch]`, `[tools.web_search]`.
    pub web: WebSettings,
    /// `[tools.message.channels]`: webhook URLs by channel name.
    pub message_channels: std::collections::BTreeMap<String, Secret>,
    pub retry: RetryPolicy,
    /// The wire spoken to the server.
    pub wire: WireApi,
    /// `max_tokens` as configured (else the model's own where needed).
    pub max_output_tokens: Option<u32>,
    /// `reasoning_effort` (or `--effort`).
    pub effort: Option<Effort>,
    /// `[anthropic] thinking_budget`.
    pub thinking_budget: Option<u32>,
    /// `[openai] reasoning_summary`.
    pub reasoning_summary: Option<String>,
    /// `extra_body` of the provider's section.
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// `[models."NAME"]`: what the person says of models.
    pub models: std::collections::BTreeMap<String, ModelInfo>,
    pub connect_timeout: Duration,
    pub idle_timeout: Duration,
    /// Longest a whole response may take.
    pub request_timeout: Duration,
    /// How much text, reasoning and call arguments one response may hold.
    pub stream_limits: crate::provider::StreamLimits,
    /// What a session, a turn and a subagent may spend.
    pub caps: crate::protocol::budget::Caps,
    /// How many times the same call may come in a turn.
    pub repeat_calls: u32,
    /// How long a conversation grant lasts unused, and at most.
    pub grant_ttl: Duration,
    pub grant_max: Duration,
    /// `[permissions]` of the user config, then the workspace's ask and
    /// deny rules (its allow rules are ignored).
    pub rules: Rules,
    /// The user's hooks.
    pub hooks: HookSet,
    /// The workspace's hooks; they run only once the person trusts them.
    pub workspace_hooks: HookSet,
    /// MCP servers from the user config.
    pub mcp_servers: Vec<mcp::McpServer>,
    /// MCP servers from the workspace (`.mcp.json`, its config): started
    /// only once the person trusts them.
    pub workspace_mcp: Vec<mcp::McpServer>,
    pub paths: Paths,
    /// The flags it was loaded with (a resumed session loads again with
    /// its own on top).
    pub flags: Overrides,
    /// Config files that were read, in layer order.
    pub sources: Vec<PathBuf>,
    /// Things the person should know (ignored workspace settings).
    pub warnings: Vec<String>,
}

impl Config {
    /// Loads every layer. `env` reads an environment variable (injected so
    /// tests need not touch the process environment); `tools` are the
    /// built-in tools' names (the registry's, `tools::builtin::names`),
    /// which permission rules are checked against.
    pub fn load(
        overrides: &Overrides,
        env: &dyn Fn(&str) -> Option<String>,
        tools: &[&str],
    ) -> Result<Self, ConfigError> {
        let paths = Paths::discover(env("LATHE_HOME").as_deref())?;
        let workspace = resolve_workspace(overrides.workspace.as_deref())?;
        let layers::Layers {
            merged,
            rules,
            hooks,
            workspace_hooks,
            mcp_servers,
            workspace_mcp,
            sources,
            warnings,
        } = layers::read(&paths, &workspace, env, tools)?;

        let configured_keys: Vec<Secret> = [&merged.openai, &merged.anthropic]
            .into_iter()
            .flatten()
            .filter_map(|s| s.api_key.clone().and_then(Secret::new))
            .collect();
        let Endpoint {
            provider,
            section,
            base_url,
            api_key,
            model,
            wire,
        } = endpoint(overrides, &merged, &paths, env)?;
        let models = models_of(merged.models.clone().unwrap_or_default())?;
        let (retry, connect_timeout, idle_timeout, request_timeout) =
            settings::network(merged.network.clone().unwrap_or_default())?;
        let (grant_ttl, grant_max) = settings::grants(merged.approvals.as_ref())?;
        let shell = merged.shell.clone().unwrap_or_default();
        let sandbox = settings::sandbox(
            &shell,
            overrides.sandbox.or(merged.sandbox).unwrap_or_default(),
            &paths,
            env,
        )?;
        let tools = merged.tools.clone().unwrap_or_default();
        let web = settings::web(&tools)?;
        let message_channels = settings::message_channels(tools.message.clone(), env)?;
        let tool_search_at = u8::try_from(in_range(
            "[tools] search_at",
            tools.search_at.map(u64::from),
            u64::from(defaults::TOOL_SEARCH_AT),
            0..=100,
        )?)
        .unwrap_or(defaults::TOOL_SEARCH_AT);
        let compact_at = u8::try_from(in_range(
            "compact_at",
            merged.compact_at.map(u64::from),
            u64::from(defaults::COMPACT_AT),
            10..=99,
        )?)
        .unwrap_or(defaults::COMPACT_AT);
        let context_window = merged
            .context_window
            .map(|w| in_range("context_window", Some(w), w, 1024..=100_000_000))
            .transpose()?;
        let (shell_timeout_secs, max_background) = settings::shell_limits(&shell)?;
        let limits = merged.limits.clone().unwrap_or_default();
        Ok(Self {
            stream_limits: settings::stream_limits(&limits)?,
            caps: settings::caps(&limits, overrides)?,
            repeat_calls: settings::repeat_calls(&limits)?,
            judge: merged
                .judge
                .as_ref()
                .and_then(|j| j.model.as_deref())
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(str::to_string),
            max_background,
            web,
            message_channels,
            provider,
            model,
            base_url,
            api_key,
            configured_keys,
            approval: overrides
                .approval
                .or(merged.approval)
                .unwrap_or(ApprovalMode::Ask),
            max_tool_iterations: overrides
                .max_tool_iterations
                .or(merged.max_tool_iterations)
                .unwrap_or(defaults::MAX_TOOL_ITERATIONS)
                .max(1),
            context_window,
            compact_at,
            tool_search_at,
            checkpoints: overrides.checkpoints.or(merged.checkpoints).unwrap_or(true),
            workspace,
            theme: merged.theme.unwrap_or_else(|| "dark".to_string()),
            notify: merged.notify.unwrap_or(true),
            shell_timeout_secs,
            sandbox,
            retry,
            wire,
            max_output_tokens: section.max_tokens.map(|n| n.max(1)),
            effort: overrides.effort.or(section.reasoning_effort),
            thinking_budget: section.thinking_budget,
            reasoning_summary: section.reasoning_summary,
            extra_body: section.extra_body.unwrap_or_default(),
            models,
            connect_timeout,
            idle_timeout,
            request_timeout,
            grant_ttl,
            grant_max,
            rules,
            hooks,
            workspace_hooks,
            mcp_servers,
            workspace_mcp,
            paths,
            flags: overrides.clone(),
            sources,
            warnings,
        })
    }

    pub fn provider_settings(&self) -> ProviderSettings {
        ProviderSettings {
            kind: self.provider,
            wire: self.wire,
            base_url: self.base_url.clone(),
            api_key: self.api_key.clone(),
            retry: self.retry,
            max_output_tokens: self.max_output_tokens,
            effort: self.effort,
            thinking_budget: self.thinking_budget,
            reasoning_summary: self.reasoning_summary.clone(),
            extra_body: self.extra_body.clone(),
            connect_timeout: self.connect_timeout,
            idle_timeout: self.idle_timeout,
            request_timeout: self.request_timeout,
            limits: self.stream_limits,
        }
    }

    /// Values to redact from tool results.
    pub fn secrets(&self) -> Vec<String> {
        self.api_key
            .iter()
            .chain(&self.configured_keys)
            .map(|k| k.expose().to_string())
            .collect()
    }
}

/// The server the conversation goes to, as the flags, the environment
/// and the config say.
struct Endpoint {
    provider: ProviderKind,
    /// The provider's section of the config.
    section: file::ProviderSection,
    base_url: String,
    api_key: Option<Secret>,
    model: String,
    wire: WireApi,
}

/// The provider, where it is, its key, the model and the wire; a vendor's
/// own API without a key is an error that says how to give one.
fn endpoint(
    overrides: &Overrides,
    merged: &file::ConfigFile,
    paths: &Paths,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Endpoint, ConfigError> {
    let provider = overrides
        .provider
        .or(merged.provider)
        .unwrap_or(ProviderKind::OpenAi);
    let section = match provider {
        ProviderKind::OpenAi => merged.openai.clone(),
        ProviderKind::Anthropic => merged.anthropic.clone(),
    }
    .unwrap_or_default();
    let base_url = overrides
        .base_url
        .clone()
        .or_else(|| env("LATHE_BASE_URL"))
        .or_else(|| env(base_url_env(provider)))
        .or(section.base_url.clone())
        .unwrap_or_else(|| provider.default_base_url().to_string());
    let base_url = validate_base_url(&base_url)?;
    let api_key = env(provider.key_env())
        .and_then(Secret::new)
        .or_else(|| section.api_key.clone().and_then(Secret::new));
    if api_key.is_none()
        && !overrides.no_model
        && base_url.trim_end_matches('/') == provider.default_base_url()
    {
        return Err(ConfigError::Invalid(format!(
            "{} is not set. Export your API key (export {}=...), put `api_key` under [{}] in {}, \
             or point --base-url at a server that needs no key",
            provider.key_env(),
            provider.key_env(),
            provider.as_str(),
            paths.config_file.display()
        )));
    }
    // The default model is the vendor's, for the vendor's own API;
    // any other server is asked what it serves (`launch::choose_model`).
    let vendor = match provider {
        ProviderKind::OpenAi => crate::provider::is_openai_host(&base_url),
        ProviderKind::Anthropic => crate::provider::is_anthropic_host(&base_url),
    };
    let model = overrides
        .model
        .clone()
        .or(merged.model.clone())
        .or(section.model.clone())
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| {
            if vendor {
                provider.default_model().to_string()
            } else {
                String::new()
            }
        });
    let wire = wire_of(provider, overrides.wire.or(section.wire_api), &base_url)?;
    if let Some(s) = section.reasoning_summary.as_deref()
        && !matches!(s, "auto" | "concise" | "detailed" | "none")
    {
        return Err(ConfigError::Invalid(format!(
            "[{provider}] reasoning_summary `{s}`: use auto, concise, detailed or none"
        )));
    }
    if let Some(b) = section.thinking_budget
        && b != 0
        && !(1024..=200_000).contains(&b)
    {
        return Err(ConfigError::Invalid(format!(
            "[{provider}] thinking_budget {b}: use 0 (off) or 1024 to 200000 tokens"
        )));
    }
    Ok(Endpoint {
        provider,
        section,
        base_url,
        api_key,
        model,
        wire,
    })
}

fn base_url_env(provider: ProviderKind) -> &'static str {
    match provider {
        ProviderKind::OpenAi => "OPENAI_BASE_URL",
        ProviderKind::Anthropic => "ANTHROPIC_BASE_URL",
    }
}

/// The base URL in its one form (`provider::server`): the form requests
/// go to, sessions record and keys are hinted over.
fn validate_base_url(url: &str) -> Result<String, ConfigError> {
    crate::provider::server::normalize(url).map_err(|e| ConfigError::Invalid(e.to_string()))
}

fn resolve_workspace(flag: Option<&Path>) -> Result<PathBuf, ConfigError> {
    let dir = match flag {
        Some(p) => p.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|e| ConfigError::Invalid(format!("cannot read the current directory: {e}")))?,
    };
    let canonical = dir
        .canonicalize()
        .map_err(|e| ConfigError::Invalid(format!("workspace {}: {e}", dir.display())))?;
    if !canonical.is_dir() {
        return Err(ConfigError::Invalid(format!(
            "workspace {} is not a directory",
            dir.display()
        )));
    }
    Ok(canonical)
}

/// The wire a provider speaks: the one asked for, if that provider speaks
/// it, else its default for `base_url`.
fn wire_of(
    provider: ProviderKind,
    asked: Option<WireApi>,
    base_url: &str,
) -> Result<WireApi, ConfigError> {
    Ok(match (provider, asked) {
        (ProviderKind::Anthropic, None | Some(WireApi::Anthropic)) => WireApi::Anthropic,
        (ProviderKind::Anthropic, Some(w)) => {
            return Err(ConfigError::Invalid(format!(
                "wire_api `{w}` is for the openai provider; anthropic speaks its own"
            )));
        }
        (ProviderKind::OpenAi, Some(WireApi::Anthropic)) => {
            return Err(ConfigError::Invalid(
                "wire_api must be `chat` or `responses` (for Anthropic's wire, use \
                 --provider anthropic)"
                    .into(),
            ));
        }
        (ProviderKind::OpenAi, Some(w)) => w,
        (ProviderKind::OpenAi, None) => provider.default_wire(base_url),
    })
}

/// The `[models."NAME"]` sections, checked.
fn models_of(
    sections: std::collections::BTreeMap<String, file::ModelSection>,
) -> Result<std::collections::BTreeMap<String, ModelInfo>, ConfigError> {
    let mut models = std::collections::BTreeMap::new();
    for (name, m) in sections {
        if let Some(p) = &m.price {
            let all = [p.input, p.cached_input, p.cache_write, p.output];
            if all
                .iter()
                .any(|v| !v.is_finite() || *v < 0.0 || *v > 10_000.0)
            {
                return Err(ConfigError::Invalid(format!(
                    "[models.\"{name}\"] price: each price is dollars per million tokens, \
                     0 to 10000"
                )));
            }
        }
        if let Some(w) = m.context_window {
            in_range(
                &format!("[models.\"{name}\"] context_window"),
                Some(w),
                w,
                1024..=100_000_000,
            )?;
        }
        models.insert(
            name,
            ModelInfo {
                context_window: m.context_window,
                output_cap: m.max_output_tokens,
                vision: m.vision,
                reasoning: m.reasoning,
                price: m.price,
            },
        );
    }
    Ok(models)
}

/// A configured number, checked against what makes sense (a huge timeout
/// would overflow a deadline; a config the model can write must not crash
/// Lathe): out of range is an error that names the key and the range.
fn in_range(
    key: &str,
    value: Option<u64>,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, ConfigError> {
    let Some(v) = value else {
        return Ok(default);
    };
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(ConfigError::Invalid(format!(
            "{key} = {v} is out of range: use {} to {}",
            range.start(),
            range.end()
        )))
    }
}

/// A configured value with `${VAR}` replaced by the variable's value; an
/// unset variable is an error naming the key.
pub fn expand_vars(
    key: &str,
    raw: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ConfigError> {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| ConfigError::Invalid(format!("{key}: `${{` without a closing `}}`")))?;
        let inner = &after[..end];
        // `${NAME:-default}`: the default when NAME is unset or empty.
        let value = match inner.split_once(":-") {
            Some((name, default)) => env(name)
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| default.to_string()),
            None => env(inner).ok_or_else(|| {
                ConfigError::Invalid(format!("{key}: the variable {inner} is not set"))
            })?,
        };
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A configured path: absolute, or `~/…` under `HOME`.
fn expand_home(
    key: &str,
    raw: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf, ConfigError> {
    let path = if let Some(rest) = raw.strip_prefix("~/") {
        let home = env("HOME")
            .filter(|h| !h.is_empty())
            .ok_or_else(|| ConfigError::Invalid(format!("{key}: `{raw}` needs HOME to be set")))?;
        PathBuf::from(home).join(rest)
    } else {
        PathBuf::from(raw)
    };
    if !path.is_absolute() {
        return Err(ConfigError::Invalid(format!(
            "{key}: `{raw}` must be an absolute path (or start with ~/)"
        )));
    }
    Ok(path)
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
