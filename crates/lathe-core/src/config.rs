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

use crate::policy::{HookSet, HookSpec, RuleOrigin, Rules};
use crate::protocol::ApprovalMode;
use crate::provider::models::ModelInfo;
use crate::provider::{Effort, ProviderKind, ProviderSettings, RetryPolicy, WireApi};
use crate::secret::Secret;

pub mod file;
pub mod mcp;
pub mod paths;

/// Defaults every layer starts from. The modules that use these values
/// (the agent, the shell tool) take them from here.
pub mod defaults {
    /// Tool rounds per turn (seed 000).
    pub const MAX_TOOL_ITERATIONS: u32 = 20;
    /// `exec_shell` timeout, and the longest a call may ask for (seed 002).
    pub const SHELL_TIMEOUT_SECS: u64 = 30;
    pub const SHELL_MAX_TIMEOUT_SECS: u64 = 300;
    /// How long a "for this conversation" approval lasts, and the most
    /// it may be configured to last: the grants' own.
    pub use crate::policy::grants::{GRANT_TTL_SECS, MAX_GRANT_TTL_SECS};
    /// How long a user hook may run.
    pub const HOOK_TIMEOUT_SECS: u64 = 10;
    /// Longest a whole model response may take.
    pub const REQUEST_TIMEOUT_SECS: u64 = 900;
    /// How full the context may get before it is compacted (percent).
    pub const COMPACT_AT: u8 = 85;
}

pub use file::ConfigFile;
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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
    /// Checkpoint the workspace's files for `/undo` and `/rewind`.
    pub checkpoints: bool,
    pub workspace: PathBuf,
    pub theme: String,
    pub shell_timeout_secs: u64,
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
    pub grant_ttl: Duration,
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
    /// tests need not touch the process environment).
    pub fn load(
        overrides: &Overrides,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let paths = Paths::discover(env("LATHE_HOME").as_deref())?;
        let workspace = resolve_workspace(overrides.workspace.as_deref())?;
        let mut sources = Vec::new();
        let mut warnings = Vec::new();

        let (mut merged, user_text) =
            read_layer(&paths.config_file, &mut sources)?.unwrap_or_default();
        let mut rules = policy_rules(
            merged.permissions.take(),
            &paths.config_file,
            &user_text,
            RuleOrigin::User,
        )?;
        let hooks = hook_set(
            merged.hooks.take(),
            &paths.config_file,
            &user_text,
            RuleOrigin::User,
        )?;
        let (mcp_servers, mcp_warnings) = mcp::servers(
            merged.mcp_servers.take().unwrap_or_default(),
            RuleOrigin::User,
            &paths.config_file.display().to_string(),
            env,
        );
        warnings.extend(mcp_warnings);
        let (mut workspace_mcp, mcp_warnings) = mcp::mcp_json(&workspace, env);
        warnings.extend(mcp_warnings);
        let mut workspace_hooks = HookSet::default();
        let user_approval = merged.approval.unwrap_or(ApprovalMode::Ask);
        let user_sandbox = merged.sandbox.unwrap_or_default();
        let ws_file = workspace.join(".lathe").join("config.toml");
        if let Some((mut ws, ws_text)) = read_layer(&ws_file, &mut sources)? {
            let mut perms = ws.permissions.take();
            if let Some(p) = perms.as_mut() {
                for rule in std::mem::take(&mut p.allow) {
                    warnings.push(format!(
                        "{}: ignored allow rule `{rule}`; a workspace config may only add ask and deny rules",
                        ws_file.display()
                    ));
                }
            }
            rules.extend(policy_rules(
                perms,
                &ws_file,
                &ws_text,
                RuleOrigin::Workspace,
            )?);
            for h in ws
                .hooks
                .iter()
                .flat_map(|h| h.before_tool_call.iter().chain(&h.after_tool_call))
                .filter(|h| h.sandbox == Some(false))
            {
                warnings.push(format!(
                    "{}: ignored sandbox = false on the hook `{}`; a workspace's hooks \
                     always run in the sandbox",
                    ws_file.display(),
                    crate::protocol::visible::command(&h.command)
                ));
            }
            workspace_hooks = hook_set(ws.hooks.take(), &ws_file, &ws_text, RuleOrigin::Workspace)?;
            let (servers, mcp_warnings) = mcp::servers(
                ws.mcp_servers.take().unwrap_or_default(),
                RuleOrigin::Workspace,
                &ws_file.display().to_string(),
                env,
            );
            workspace_mcp.extend(servers);
            warnings.extend(mcp_warnings);
            merged.merge(restrict_workspace_layer(
                ws,
                &ws_file,
                user_approval,
                user_sandbox,
                &mut warnings,
            ));
        }
        merged.merge(env_layer(env)?);
        name_workspace_servers(&mcp_servers, &rules, &mut workspace_mcp, &mut warnings);

        let configured_keys: Vec<Secret> = [&merged.openai, &merged.anthropic]
            .into_iter()
            .flatten()
            .filter_map(|s| s.api_key.clone().and_then(Secret::new))
            .collect();
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
            .or(section.base_url)
            .unwrap_or_else(|| provider.default_base_url().to_string());
        let base_url = validate_base_url(&base_url)?;
        let api_key = env(provider.key_env())
            .and_then(Secret::new)
            .or_else(|| section.api_key.and_then(Secret::new));
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
            .or(merged.model)
            .or(section.model)
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
        let models = models_of(merged.models.clone().unwrap_or_default())?;
        let network = merged.network.unwrap_or_default();
        let defaults = RetryPolicy::default();
        let retry = RetryPolicy {
            max_retries: u32::try_from(in_range(
                "[network] max_retries",
                network.max_retries.map(u64::from),
                u64::from(defaults.max_retries),
                0..=20,
            )?)
            .unwrap_or(defaults.max_retries),
            base_delay: Duration::from_millis(in_range(
                "[network] retry_base_ms",
                network.retry_base_ms,
                u64::try_from(defaults.base_delay.as_millis()).unwrap_or(500),
                1..=60_000,
            )?),
            ..defaults
        };
        let connect_timeout = Duration::from_secs(in_range(
            "[network] connect_timeout_secs",
            network.connect_timeout_secs,
            10,
            1..=300,
        )?);
        let idle_timeout = Duration::from_secs(in_range(
            "[network] idle_timeout_secs",
            network.idle_timeout_secs,
            300,
            1..=3600,
        )?);
        let request_timeout = Duration::from_secs(in_range(
            "[network] request_timeout_secs",
            network.request_timeout_secs,
            defaults::REQUEST_TIMEOUT_SECS,
            10..=7200,
        )?);
        let grant_ttl = Duration::from_secs(in_range(
            "[approvals] grant_ttl_secs",
            merged.approvals.as_ref().and_then(|a| a.grant_ttl_secs),
            defaults::GRANT_TTL_SECS,
            1..=defaults::MAX_GRANT_TTL_SECS,
        )?);
        let shell = merged.shell.clone().unwrap_or_default();
        let expand_all = |key: &str, list: Option<&Vec<String>>| {
            list.into_iter()
                .flatten()
                .map(|r| expand_home(key, r, env))
                .collect::<Result<Vec<_>, _>>()
        };
        let visible = expand_all("[shell] visible_paths", shell.visible_paths.as_ref())?;
        // Lathe's own config (with its keys) and data, the credential
        // stores a command has no business reading, and what the config
        // adds; minus what it shows.
        let mut hidden: Vec<PathBuf> = paths
            .config_file
            .parent()
            .into_iter()
            .map(Path::to_path_buf)
            .chain([paths.data_dir.clone()])
            .collect();
        if let Some(home) = env("HOME").filter(|h| h.starts_with('/')) {
            hidden.extend(
                crate::sandbox::CREDENTIAL_STORES
                    .iter()
                    .map(|p| Path::new(&home).join(p))
                    .filter(|p| !visible.contains(p)),
            );
        }
        hidden.extend(expand_all(
            "[shell] hidden_paths",
            shell.hidden_paths.as_ref(),
        )?);
        let sandbox = crate::sandbox::Settings {
            mode: overrides.sandbox.or(merged.sandbox).unwrap_or_default(),
            network: shell.network.unwrap_or(false),
            writable_roots: expand_all("[shell] writable_roots", shell.writable_roots.as_ref())?,
            helper: None,
            env_allow: shell.env_allow.clone().unwrap_or_default(),
            hidden,
            namespaces: shell.namespaces.unwrap_or(true),
            protected: Vec::new(),
            private_tmp: None,
            allow_sockets: {
                let mut out = Vec::new();
                for entry in shell.allow_sockets.iter().flatten() {
                    if entry.starts_with('@') {
                        // An abstract name, exactly as written.
                        out.push(entry.clone());
                        continue;
                    }
                    let path = expand_home("[shell] allow_sockets", entry, env)?;
                    if !path.is_absolute() {
                        return Err(ConfigError::Invalid(format!(
                            "[shell] allow_sockets: `{entry}` is neither an absolute path nor \
                             an abstract name (@name)"
                        )));
                    }
                    // Where it really is, too: that is what the warden
                    // compares.
                    if let Some(real) = path
                        .parent()
                        .and_then(|d| d.canonicalize().ok())
                        .zip(path.file_name())
                        .map(|(d, n)| d.join(n))
                    {
                        out.push(real.display().to_string());
                    }
                    out.push(path.display().to_string());
                }
                out.sort();
                out.dedup();
                out
            },
            basic_env: false,
        };
        let tools = merged.tools.clone().unwrap_or_default();
        let fetch = tools.web_fetch.unwrap_or_default();
        let web = WebSettings {
            allow_hosts: fetch.allow_hosts.unwrap_or_default(),
            allow_private: fetch.allow_private.unwrap_or(false),
            search_endpoint: match tools.web_search.and_then(|s| s.endpoint) {
                Some(url) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                    return Err(ConfigError::Invalid(format!(
                        "[tools.web_search] endpoint `{url}` must be an http:// or https:// URL"
                    )));
                }
                other => other,
            },
        };
        let mut message_channels = std::collections::BTreeMap::new();
        for (name, channel) in tools.message.map(|m| m.channels).unwrap_or_default() {
            let key = format!("[tools.message.channels.{name}] url");
            if name == "terminal" {
                return Err(ConfigError::Invalid(format!(
                    "{key}: `terminal` is the built-in channel; name a webhook otherwise"
                )));
            }
            let url = expand_vars(&key, &channel.url, env)?;
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(ConfigError::Invalid(format!(
                    "{key} must be an http:// or https:// URL"
                )));
            }
            if let Some(secret) = Secret::new(url) {
                message_channels.insert(name, secret);
            }
        }
        let compact_at = u8::try_from(in_range(
            "compact_at",
            merged.compact_at.map(u64::from),
            u64::from(defaults::COMPACT_AT),
            10..=99,
        )?)
        .unwrap_or(defaults::COMPACT_AT);
        let context_window = match merged.context_window {
            Some(w) => Some(in_range("context_window", Some(w), w, 1024..=100_000_000)?),
            None => None,
        };
        let shell_timeout_secs = in_range(
            "[shell] timeout_secs",
            shell.timeout_secs,
            defaults::SHELL_TIMEOUT_SECS,
            1..=defaults::SHELL_MAX_TIMEOUT_SECS,
        )?;
        Ok(Self {
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
            checkpoints: overrides.checkpoints.or(merged.checkpoints).unwrap_or(true),
            workspace,
            theme: merged.theme.unwrap_or_else(|| "dark".to_string()),
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

fn base_url_env(provider: ProviderKind) -> &'static str {
    match provider {
        ProviderKind::OpenAi => "OPENAI_BASE_URL",
        ProviderKind::Anthropic => "ANTHROPIC_BASE_URL",
    }
}

fn validate_base_url(url: &str) -> Result<String, ConfigError> {
    let url = url.trim();
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| ConfigError::Invalid(format!("base URL `{url}` is not a valid URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ConfigError::Invalid(format!(
            "base URL `{url}` must start with http:// or https://"
        )));
    }
    Ok(url.trim_end_matches('/').to_string())
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

/// The 1-based line of the first occurrence of `needle` in `text`.
fn line_containing(text: &str, needle: &str) -> Option<usize> {
    let at = text.find(needle)?;
    Some(text[..at].matches('\n').count() + 1)
}

/// The line of the string `value` in the list `key` of `[section]`: the
/// first quoted `value` after the key's own line, so that a comment or an
/// earlier list holding the same words does not count.
fn line_of_listed(text: &str, section: &str, key: &str, value: &str) -> Option<usize> {
    let header = format!("[{section}]");
    let mut in_section = false;
    let mut after_key = false;
    for (n, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with('[') && !code.starts_with("[[") && !after_key {
            in_section = code.starts_with(&header);
            continue;
        }
        if !in_section || code.starts_with('#') {
            continue;
        }
        if !after_key {
            let Some((k, rest)) = code.split_once('=') else {
                continue;
            };
            if k.trim() != key {
                continue;
            }
            after_key = true;
            if quotes(rest, value) {
                return Some(n + 1);
            }
            continue;
        }
        if quotes(code, value) {
            return Some(n + 1);
        }
    }
    line_containing(text, value)
}

/// Whether `code` holds `value` as a TOML string.
fn quotes(code: &str, value: &str) -> bool {
    let basic = toml_basic_string(value);
    code.contains(&basic) || code.contains(&format!("'{value}'"))
}

/// `value` written as a TOML basic string.
fn toml_basic_string(value: &str) -> String {
    let mut out = String::from("\"");
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Parses one file's `[permissions]`, naming the file, line and key of a
/// rule that does not parse.
fn policy_rules(
    section: Option<file::PermissionsSection>,
    path: &Path,
    text: &str,
    origin: RuleOrigin,
) -> Result<Rules, ConfigError> {
    let Some(p) = section else {
        return Ok(Rules::default());
    };
    for (key, list) in [("allow", &p.allow), ("ask", &p.ask), ("deny", &p.deny)] {
        for rule in list {
            if let Err(message) = crate::policy::Rule::parse(rule, origin) {
                return Err(ConfigError::File {
                    path: path.to_path_buf(),
                    line: line_of_listed(text, "permissions", key, rule),
                    key: Some(format!("permissions.{key}")),
                    message,
                });
            }
        }
    }
    Rules::parse(&p.allow, &p.ask, &p.deny, origin).map_err(ConfigError::Invalid)
}

fn hook_set(
    section: Option<file::HooksSection>,
    path: &Path,
    text: &str,
    origin: RuleOrigin,
) -> Result<HookSet, ConfigError> {
    let Some(h) = section else {
        return Ok(HookSet::default());
    };
    let specs = |key: &str, entries: Vec<file::HookEntry>| {
        entries
            .into_iter()
            .map(|e| {
                if e.command.trim().is_empty() {
                    return Err(ConfigError::File {
                        path: path.to_path_buf(),
                        line: line_containing(text, key),
                        key: Some(format!("hooks.{key}.command")),
                        message: "the command is empty".into(),
                    });
                }
                Ok(HookSpec {
                    matcher: e.matcher.unwrap_or_else(|| "*".into()),
                    command: e.command,
                    timeout_secs: in_range(
                        &format!("hooks.{key}.timeout_secs"),
                        e.timeout_secs,
                        defaults::HOOK_TIMEOUT_SECS,
                        1..=600,
                    )?,
                    origin,
                    files: Vec::new(),
                    // A workspace cannot let its hooks out.
                    unconfined: origin == RuleOrigin::User && e.sandbox == Some(false),
                })
            })
            .collect::<Result<Vec<_>, _>>()
    };
    Ok(HookSet {
        before: specs("before_tool_call", h.before_tool_call)?,
        after: specs("after_tool_call", h.after_tool_call)?,
    })
}

/// Names the workspace's MCP servers so that none passes for one of the
/// person's (`mcp_servers`) or takes what their allow rules grant one,
/// configured now or not (such a server is renamed `ws-NAME`); and warns
/// of rules naming a server that is not configured.
fn name_workspace_servers(
    mcp_servers: &[mcp::McpServer],
    rules: &Rules,
    workspace_mcp: &mut [mcp::McpServer],
    warnings: &mut Vec<String>,
) {
    // A workspace server never passes for one of the person's: one
    // with the same name (or twice the same name) is renamed.
    let mut taken: std::collections::BTreeSet<String> =
        mcp_servers.iter().map(|s| s.name.clone()).collect();
    // Nor does it take what your allow rules grant a server of yours,
    // be that server configured now or not.
    let allowed: std::collections::BTreeSet<String> = rules
        .allow
        .iter()
        .filter(|r| r.origin == RuleOrigin::User)
        .filter_map(|r| r.server())
        .map(str::to_string)
        .collect();
    for server in workspace_mcp.iter_mut() {
        if !allowed.contains(&server.name) && taken.insert(server.name.clone()) {
            continue;
        }
        let base: String = format!("ws-{}", server.name).chars().take(29).collect();
        let mut renamed = base.clone();
        let mut n = 2;
        while allowed.contains(&renamed) || !taken.insert(renamed.clone()) {
            renamed = format!("{base}-{n}");
            n += 1;
        }
        warnings.push(format!(
            "the workspace's MCP server `{}` has the name of another server (or of one \
             your allow rules name); it is called `{renamed}` here, so its tools are \
             `{renamed}__…` and your rules for the other do not cover it",
            server.name
        ));
        server.name = renamed;
    }
    // A rule about a server that is not configured covers nothing:
    // most likely a typo, which in a deny rule protects nothing.
    for rule in rules.allow.iter().chain(&rules.ask).chain(&rules.deny) {
        if let Some(server) = rule.server()
            && !taken.contains(server)
        {
            let known = if taken.is_empty() {
                "no MCP server is configured".to_string()
            } else {
                format!(
                    "the servers are {}",
                    taken.iter().cloned().collect::<Vec<_>>().join(", ")
                )
            };
            warnings.push(format!(
                "the rule `{}` names the MCP server `{server}`, which is not configured \
                 ({known}); it covers nothing",
                rule.text
            ));
        }
    }
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

/// The most of a file Lathe reads on its own (a config, `.mcp.json`).
pub const MAX_OWN_FILE: u64 = 1024 * 1024;

/// Reads a file Lathe reads on its own, as AGENTS.md is read: a regular
/// file only (opened without waiting, so a FIFO cannot hang the start; a
/// link to a device is refused), at most [`MAX_OWN_FILE`], UTF-8.
pub fn read_own_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || crate::tools::fs::regular::on_pseudo_fs(&file) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    if meta.len() > MAX_OWN_FILE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {} KiB", MAX_OWN_FILE / 1024),
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_OWN_FILE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_OWN_FILE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {} KiB", MAX_OWN_FILE / 1024),
        ));
    }
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}

fn read_layer(
    path: &Path,
    sources: &mut Vec<PathBuf>,
) -> Result<Option<(ConfigFile, String)>, ConfigError> {
    let text = match read_own_file(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                message: e.to_string(),
            });
        }
    };
    sources.push(path.to_path_buf());
    ConfigFile::parse(path, &text).map(|c| Some((c, text)))
}

/// Drops what a workspace config may not set, with a warning for each.
fn restrict_workspace_layer(
    mut ws: ConfigFile,
    path: &Path,
    user_approval: ApprovalMode,
    user_sandbox: crate::sandbox::Mode,
    warnings: &mut Vec<String>,
) -> ConfigFile {
    let shown = path.display();
    if let Some(p) = ws.provider.take() {
        warnings.push(format!(
            "{shown}: ignored provider = \"{}\"; a workspace config may not choose where your API key is sent",
            p.as_str()
        ));
    }
    for (name, section) in [("openai", &mut ws.openai), ("anthropic", &mut ws.anthropic)] {
        if let Some(s) = section.as_mut() {
            if s.base_url.take().is_some() {
                warnings.push(format!(
                    "{shown}: ignored [{name}].base_url; a workspace config may not redirect API requests"
                ));
            }
            if s.api_key.take().is_some() {
                warnings.push(format!(
                    "{shown}: ignored [{name}].api_key; keep keys in your user config or the environment"
                ));
            }
            if s.extra_body.take().is_some() {
                warnings.push(format!(
                    "{shown}: ignored [{name}].extra_body; a workspace config may not add to what \
                     is sent to your provider"
                ));
            }
            // What a model thinks, and over which wire, is paid for by you.
            for (key, set) in [
                ("wire_api", s.wire_api.take().is_some()),
                ("reasoning_effort", s.reasoning_effort.take().is_some()),
                ("reasoning_summary", s.reasoning_summary.take().is_some()),
                ("thinking_budget", s.thinking_budget.take().is_some()),
                ("max_tokens", s.max_tokens.take().is_some()),
            ] {
                if set {
                    warnings.push(format!(
                        "{shown}: ignored [{name}].{key}; a workspace config may not choose how \
                         much the model thinks or how it is asked (it is your spending)"
                    ));
                }
            }
        }
    }
    if ws.checkpoints == Some(false) {
        ws.checkpoints = None;
        warnings.push(format!(
            "{shown}: ignored checkpoints = false; a workspace config may not turn off undo"
        ));
    }
    if ws.models.take().is_some() {
        warnings.push(format!(
            "{shown}: ignored [models]; a workspace config may not set prices or limits"
        ));
    }
    if ws.tools.take().is_some() {
        warnings.push(format!(
            "{shown}: ignored [tools]; a workspace config may not choose where the web and \
             message tools send requests"
        ));
    }
    if let Some(shell) = ws.shell.as_mut() {
        for (key, set) in [
            ("network", shell.network.take().is_some()),
            ("writable_roots", shell.writable_roots.take().is_some()),
            ("env_allow", shell.env_allow.take().is_some()),
            ("visible_paths", shell.visible_paths.take().is_some()),
            ("namespaces", shell.namespaces.take().is_some()),
            ("allow_sockets", shell.allow_sockets.take().is_some()),
        ] {
            if set {
                warnings.push(format!(
                    "{shown}: ignored [shell].{key}; a workspace config may not loosen the sandbox"
                ));
            }
        }
    }
    if let Some(mode) = ws.sandbox
        && mode.strictness() < user_sandbox.strictness()
    {
        warnings.push(format!(
            "{shown}: ignored sandbox = \"{mode}\"; a workspace config may only make the sandbox stricter than \"{user_sandbox}\""
        ));
        ws.sandbox = None;
    }
    if let Some(mode) = ws.approval
        && mode.rank() > user_approval.rank()
    {
        warnings.push(format!(
            "{shown}: ignored approval = \"{mode}\"; a workspace config may only make approvals stricter than \"{user_approval}\""
        ));
        ws.approval = None;
    }
    ws
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

/// The environment layer: LATHE_PROVIDER, LATHE_MODEL, LATHE_APPROVAL,
/// LATHE_MAX_TOOL_ITERATIONS.
fn env_layer(env: &dyn Fn(&str) -> Option<String>) -> Result<ConfigFile, ConfigError> {
    let bad = |var: &str, message: String| ConfigError::Env {
        var: var.to_string(),
        message,
    };
    let mut layer = ConfigFile::default();
    if let Some(v) = env("LATHE_PROVIDER").filter(|v| !v.trim().is_empty()) {
        layer.provider = Some(v.parse().map_err(|m| bad("LATHE_PROVIDER", m))?);
    }
    if let Some(v) = env("LATHE_MODEL").filter(|v| !v.trim().is_empty()) {
        layer.model = Some(v.trim().to_string());
    }
    if let Some(v) = env("LATHE_SANDBOX").filter(|v| !v.trim().is_empty()) {
        layer.sandbox = Some(v.parse().map_err(|m| bad("LATHE_SANDBOX", m))?);
    }
    if let Some(v) = env("LATHE_APPROVAL").filter(|v| !v.trim().is_empty()) {
        layer.approval = Some(v.parse().map_err(|m| bad("LATHE_APPROVAL", m))?);
    }
    if let Some(v) = env("LATHE_CONTEXT_WINDOW").filter(|v| !v.trim().is_empty()) {
        layer.context_window = Some(v.trim().parse().map_err(|e| {
            bad(
                "LATHE_CONTEXT_WINDOW",
                format!("`{v}` is not a whole number of tokens: {e}"),
            )
        })?);
    }
    if let Some(v) = env("LATHE_MAX_TOOL_ITERATIONS").filter(|v| !v.trim().is_empty()) {
        layer.max_tool_iterations = Some(v.trim().parse().map_err(|e| {
            bad(
                "LATHE_MAX_TOOL_ITERATIONS",
                format!("`{v}` is not a whole number: {e}"),
            )
        })?);
    }
    Ok(layer)
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
