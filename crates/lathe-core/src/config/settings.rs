//! Settings the config derives from its sections, each checked: the
//! network's timeouts and retries, the sandbox, the web tools and the
//! message tool's webhooks.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::file;
use super::paths::Paths;
use super::{ConfigError, WebSettings, defaults, expand_home, expand_vars, in_range};
use crate::provider::RetryPolicy;
use crate::secret::Secret;

/// The shell's default timeout, and how many commands may run in the
/// background at once.
pub(super) fn shell_limits(shell: &file::ShellSection) -> Result<(u64, usize), ConfigError> {
    let timeout = in_range(
        "[shell] timeout_secs",
        shell.timeout_secs,
        defaults::SHELL_TIMEOUT_SECS,
        1..=defaults::SHELL_MAX_TIMEOUT_SECS,
    )?;
    let background = usize::try_from(in_range(
        "[shell] max_background",
        shell.max_background,
        defaults::MAX_BACKGROUND as u64,
        1..=16,
    )?)
    .unwrap_or(defaults::MAX_BACKGROUND);
    Ok((timeout, background))
}

/// How requests retry, and how long they wait to connect, between bytes
/// and in all.
pub(super) fn network(
    network: file::NetworkSection,
) -> Result<(RetryPolicy, Duration, Duration, Duration), ConfigError> {
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
    Ok((retry, connect_timeout, idle_timeout, request_timeout))
}

/// The sandbox commands run in: what they may write, what is hidden from
/// them (Lathe's own config and data, the credential stores, what the
/// config adds, minus what it shows), the network and the sockets.
pub(super) fn sandbox(
    shell: &file::ShellSection,
    mode: crate::sandbox::Mode,
    paths: &Paths,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<crate::sandbox::Settings, ConfigError> {
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
        mode,
        network: shell.network.unwrap_or(false),
        writable_roots: expand_all("[shell] writable_roots", shell.writable_roots.as_ref())?,
        helper: None,
        env_allow: shell.env_allow.clone().unwrap_or_default(),
        hidden,
        namespaces: shell.namespaces.unwrap_or(true),
        protected: Vec::new(),
        private_tmp: None,
        allow_sockets: allow_sockets(shell.allow_sockets.iter().flatten(), env)?,
        served: None,
        basic_env: false,
        shown: Vec::new(),
    };
    Ok(sandbox)
}

/// The sockets a command may reach: abstract names and ports of this
/// machine (`localhost:PORT`) as written, paths with `~` expanded, and
/// where each really is (what the warden compares).
fn allow_sockets<'a>(
    entries: impl Iterator<Item = &'a String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<String>, ConfigError> {
    let mut out = Vec::new();
    for entry in entries {
        if entry.starts_with('@') {
            // An abstract name, exactly as written.
            out.push(entry.clone());
            continue;
        }
        if let Some(port) = entry.strip_prefix("localhost:") {
            let port: u16 = port.parse().ok().filter(|p| *p != 0).ok_or_else(|| {
                ConfigError::Invalid(format!(
                    "[shell] allow_sockets: `{entry}` names no port (localhost:PORT, 1-65535)"
                ))
            })?;
            out.push(format!("localhost:{port}"));
            continue;
        }
        let path = expand_home("[shell] allow_sockets", entry, env)?;
        if !path.is_absolute() {
            return Err(ConfigError::Invalid(format!(
                "[shell] allow_sockets: `{entry}` is neither an absolute path, \
                 an abstract name (@name) nor a port of this machine (localhost:PORT)"
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
    Ok(out)
}

/// `web_fetch` and `web_search`.
pub(super) fn web(tools: &file::ToolsSection) -> Result<WebSettings, ConfigError> {
    let fetch = tools.web_fetch.clone().unwrap_or_default();
    Ok(WebSettings {
        allow_hosts: fetch.allow_hosts.unwrap_or_default(),
        allow_private: fetch.allow_private.unwrap_or(false),
        search_endpoint: match tools.web_search.as_ref().and_then(|s| s.endpoint.clone()) {
            Some(url) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                return Err(ConfigError::Invalid(format!(
                    "[tools.web_search] endpoint `{url}` must be an http:// or https:// URL"
                )));
            }
            other => other,
        },
    })
}

/// The `message` tool's webhooks, by channel name (secrets: a webhook's
/// URL is its key).
pub(super) fn message_channels(
    section: Option<file::MessageSection>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<std::collections::BTreeMap<String, Secret>, ConfigError> {
    let mut message_channels = std::collections::BTreeMap::new();
    for (name, channel) in section.map(|m| m.channels).unwrap_or_default() {
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
    Ok(message_channels)
}

/// `[limits]`: how much one response may hold of each kind, in MiB (1 to
/// 1024 each).
pub(super) fn stream_limits(
    limits: &super::file::LimitsSection,
) -> Result<crate::provider::StreamLimits, ConfigError> {
    use crate::provider::StreamLimits;
    let default = StreamLimits::default();
    let mib = |key: &str, value: Option<u64>, default: usize| -> Result<usize, ConfigError> {
        let default = u64::try_from(default / StreamLimits::MIB).unwrap_or(1);
        let n = in_range(&format!("[limits] {key}"), value, default, 1..=1024)?;
        Ok(usize::try_from(n).unwrap_or(1) * StreamLimits::MIB)
    };
    Ok(StreamLimits {
        text: mib("response_text_mib", limits.response_text_mib, default.text)?,
        reasoning: mib(
            "response_reasoning_mib",
            limits.response_reasoning_mib,
            default.reasoning,
        )?,
        arguments: mib(
            "response_arguments_mib",
            limits.response_arguments_mib,
            default.arguments,
        )?,
    })
}

/// `[limits]`: what a session, a turn and a subagent may spend (dollars
/// above 0, tokens at least 1), the flags over them.
pub(super) fn caps(
    limits: &super::file::LimitsSection,
    flags: &super::Overrides,
) -> Result<crate::protocol::budget::Caps, ConfigError> {
    let usd = |key: &str, v: Option<f64>| match v {
        Some(n) if !(n.is_finite() && n > 0.0) => Err(ConfigError::Invalid(format!(
            "{key} = {n}: a cap is a number of dollars above 0"
        ))),
        v => Ok(v),
    };
    let tokens = |key: &str, v: Option<u64>| match v {
        Some(0) => Err(ConfigError::Invalid(format!(
            "{key} = 0: a cap is at least 1 token"
        ))),
        v => Ok(v),
    };
    let caps = crate::protocol::budget::Caps {
        session_usd: usd("--max-budget-usd", flags.max_budget_usd)?.map_or_else(
            || usd("[limits] session_usd", limits.session_usd),
            |f| Ok(Some(f)),
        )?,
        turn_usd: usd("[limits] turn_usd", limits.turn_usd)?,
        turn_tokens: tokens("--max-turn-tokens", flags.max_turn_tokens)?.map_or_else(
            || tokens("[limits] turn_tokens", limits.turn_tokens),
            |t| Ok(Some(t)),
        )?,
        task_usd: usd("[limits] task_usd", limits.task_usd)?,
        task_tokens: tokens("[limits] task_tokens", limits.task_tokens)?,
    };
    Ok(caps)
}

/// `[approvals]`: how long a conversation grant lasts unused, and at most
/// (each 1 s to the grants' own longest).
pub(super) fn grants(
    approvals: Option<&file::ApprovalsSection>,
) -> Result<(Duration, Duration), ConfigError> {
    let secs = |key: &str, value: Option<u64>, default: u64| {
        in_range(
            &format!("[approvals] {key}"),
            value,
            default,
            1..=defaults::MAX_GRANT_TTL_SECS,
        )
        .map(Duration::from_secs)
    };
    Ok((
        secs(
            "grant_ttl_secs",
            approvals.and_then(|a| a.grant_ttl_secs),
            defaults::GRANT_TTL_SECS,
        )?,
        secs(
            "grant_max_secs",
            approvals.and_then(|a| a.grant_max_secs),
            defaults::MAX_GRANT_TTL_SECS,
        )?,
    ))
}

/// `[limits] repeat_calls`: how many times the same call may come in a
/// turn, or the same failure in a row (2 to 1000).
pub(super) fn repeat_calls(limits: &file::LimitsSection) -> Result<u32, ConfigError> {
    let n = in_range(
        "[limits] repeat_calls",
        limits.repeat_calls.map(u64::from),
        u64::from(defaults::REPEAT_CALLS),
        2..=1000,
    )?;
    Ok(u32::try_from(n).unwrap_or(defaults::REPEAT_CALLS))
}
