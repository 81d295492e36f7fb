//! MCP servers as configured: `[mcp_servers.NAME]` in a config file, and
//! the workspace's `.mcp.json` (`{"mcpServers": {NAME: {...}}}`, as
//! Claude Code and others write it). A server runs a program over stdio
//! (`command`, `args`, `env`) or is reached over streamable HTTP (`url`,
//! `headers`); `${VAR}` in `env`, `url` and `headers` comes from the
//! environment. A workspace's servers (from `.mcp.json` or its
//! `.lathe/config.toml`) start only once the person trusts them, as they
//! are written: each carries a digest of its entry.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ConfigError, expand_vars};
use crate::policy::RuleOrigin;

pub const DEFAULT_CALL_TIMEOUT_SECS: u64 = 60;
pub const DEFAULT_STARTUP_TIMEOUT_SECS: u64 = 10;

/// One MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServer {
    pub name: String,
    pub transport: McpTransport,
    /// Longest a call may take without progress.
    pub timeout_secs: u64,
    /// Longest the handshake and first tool list may take.
    pub startup_timeout_secs: u64,
    /// Its calls need no approval (but in read-only mode).
    pub trusted: bool,
    pub origin: RuleOrigin,
    /// SHA-256 of the entry as written (the trust pins it).
    pub digest: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum McpTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl McpServer {
    /// What it runs or reaches, in one line for the person.
    pub fn describe(&self) -> String {
        match &self.transport {
            McpTransport::Stdio { command, args, .. } => {
                let mut line = command.clone();
                for a in args {
                    line.push(' ');
                    line.push_str(a);
                }
                format!("{}: {line}", self.name)
            }
            McpTransport::Http { url, .. } => format!("{}: {url}", self.name),
        }
    }

    /// The values that must never be shown (header values, secret-looking
    /// environment values).
    pub fn secrets(&self) -> Vec<String> {
        match &self.transport {
            McpTransport::Stdio { env, .. } => env
                .iter()
                .filter(|(k, v)| {
                    crate::sandbox::holds_secret_value(k) || crate::sandbox::has_url_password(v)
                })
                .map(|(_, v)| v.clone())
                .collect(),
            McpTransport::Http { headers, url } => {
                let mut out: Vec<String> = headers.values().cloned().collect();
                // `Bearer xyz`: the token alone too.
                out.extend(
                    headers
                        .values()
                        .filter_map(|v| v.split_once(' ').map(|(_, t)| t.to_string())),
                );
                if crate::sandbox::has_url_password(url) {
                    out.push(url.clone());
                }
                out
            }
        }
    }
}

/// `[mcp_servers.NAME]` as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerEntry {
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// `.mcp.json`'s `"type"`: `stdio`, `http`, `streamable-http`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub timeout_secs: Option<u64>,
    pub startup_timeout_secs: Option<u64>,
    pub trusted: Option<bool>,
    /// `false` leaves the server out.
    pub enabled: Option<bool>,
}

/// A server name as tools are named after it: letters, digits, `-` and
/// `_`, no `__` (which separates server and tool).
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > 32
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        || name.contains("__")
    {
        return Err(format!(
            "MCP server name `{name}`: use 1-32 letters, digits, `-` or `_` (no `__`)"
        ));
    }
    Ok(())
}

/// The servers of one source, in name order; `where_` names it in errors.
pub fn servers(
    entries: BTreeMap<String, ServerEntry>,
    origin: RuleOrigin,
    where_: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<McpServer>, ConfigError> {
    let mut out = Vec::new();
    for (name, entry) in entries {
        if entry.enabled == Some(false) {
            continue;
        }
        let bad = |message: String| ConfigError::Invalid(format!("{where_}: {message}"));
        check_name(&name).map_err(bad)?;
        let key = |k: &str| format!("{where_}: mcp_servers.{name}.{k}");
        let digest = {
            let raw = serde_json::to_vec(&entry).unwrap_or_default();
            let d = ring::digest::digest(&ring::digest::SHA256, &raw);
            d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
        };
        let kind =
            entry
                .kind
                .as_deref()
                .unwrap_or(if entry.url.is_some() { "http" } else { "stdio" });
        let transport = match (kind, &entry.command, &entry.url) {
            ("stdio", Some(command), None) if !command.trim().is_empty() => {
                let mut env_out = BTreeMap::new();
                for (k, v) in &entry.env {
                    env_out.insert(k.clone(), expand_vars(&key("env"), v, env)?);
                }
                McpTransport::Stdio {
                    command: command.clone(),
                    args: entry.args.clone(),
                    env: env_out,
                }
            }
            ("http" | "streamable-http" | "streamable_http", None, Some(url)) => {
                let url = expand_vars(&key("url"), url, env)?;
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(bad(format!(
                        "mcp_servers.{name}.url must be an http:// or https:// URL"
                    )));
                }
                let mut headers = BTreeMap::new();
                for (k, v) in &entry.headers {
                    headers.insert(k.clone(), expand_vars(&key("headers"), v, env)?);
                }
                McpTransport::Http { url, headers }
            }
            ("sse", _, _) => {
                return Err(bad(format!(
                    "mcp_servers.{name}: the old SSE transport is not supported; use the \
                     server's streamable HTTP endpoint (type \"http\")"
                )));
            }
            _ => {
                return Err(bad(format!(
                    "mcp_servers.{name}: give either `command` (stdio) or `url` (http)"
                )));
            }
        };
        let range = |k: &str, v: Option<u64>, default: u64| -> Result<u64, ConfigError> {
            match v {
                None => Ok(default),
                Some(v) if (1..=3600).contains(&v) => Ok(v),
                Some(v) => Err(bad(format!(
                    "mcp_servers.{name}.{k} = {v} is out of range: use 1 to 3600"
                ))),
            }
        };
        let timeout_secs = range(
            "timeout_secs",
            entry.timeout_secs,
            DEFAULT_CALL_TIMEOUT_SECS,
        )?;
        let startup_timeout_secs = range(
            "startup_timeout_secs",
            entry.startup_timeout_secs,
            DEFAULT_STARTUP_TIMEOUT_SECS,
        )?;
        out.push(McpServer {
            name,
            transport,
            timeout_secs,
            startup_timeout_secs,
            // A workspace cannot trust its own servers.
            trusted: origin == RuleOrigin::User && entry.trusted == Some(true),
            origin,
            digest,
        });
    }
    Ok(out)
}

/// The servers of a workspace's `.mcp.json`, if it has one.
pub fn mcp_json(
    workspace: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<McpServer>, ConfigError> {
    let path = workspace.join(".mcp.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(ConfigError::Invalid(format!(
                "{}: cannot read it: {e}",
                path.display()
            )));
        }
    };
    let shown = path.display().to_string();
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| ConfigError::Invalid(format!("{shown}: not JSON: {e}")))?;
    let Some(servers_value) = value.get("mcpServers") else {
        return Ok(Vec::new());
    };
    let entries: BTreeMap<String, ServerEntry> = serde_json::from_value(servers_value.clone())
        .map_err(|e| ConfigError::Invalid(format!("{shown}: mcpServers: {e}")))?;
    servers(entries, RuleOrigin::Workspace, &shown, env)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(k: &str) -> Option<String> {
        (k == "TOKEN").then(|| "t0k3n-value".to_string())
    }

    #[test]
    fn entries_become_servers_with_variables_expanded() {
        let mut entries = BTreeMap::new();
        entries.insert(
            "everything".to_string(),
            ServerEntry {
                command: Some("npx".into()),
                args: vec![
                    "-y".into(),
                    "@modelcontextprotocol/server-everything".into(),
                ],
                env: [("API_TOKEN".to_string(), "${TOKEN}".to_string())].into(),
                ..ServerEntry::default()
            },
        );
        entries.insert(
            "remote".to_string(),
            ServerEntry {
                url: Some("http://127.0.0.1:3001/mcp".into()),
                headers: [("Authorization".to_string(), "Bearer ${TOKEN}".to_string())].into(),
                trusted: Some(true),
                ..ServerEntry::default()
            },
        );
        let s = servers(entries.clone(), RuleOrigin::User, "config", &env).unwrap();
        assert_eq!(s.len(), 2);
        assert!(
            matches!(&s[0].transport, McpTransport::Stdio { env, .. } if env["API_TOKEN"] == "t0k3n-value")
        );
        assert!(s[1].trusted);
        assert!(s[1].secrets().contains(&"t0k3n-value".to_string()));
        // A workspace cannot trust its own.
        let w = servers(entries, RuleOrigin::Workspace, ".mcp.json", &env).unwrap();
        assert!(!w[1].trusted);
    }

    #[test]
    fn bad_entries_are_clear_errors() {
        for (name, entry, says) in [
            (
                "a__b",
                ServerEntry {
                    command: Some("x".into()),
                    ..ServerEntry::default()
                },
                "no `__`",
            ),
            ("x", ServerEntry::default(), "either `command`"),
            (
                "x",
                ServerEntry {
                    url: Some("ftp://h".into()),
                    ..ServerEntry::default()
                },
                "http://",
            ),
            (
                "x",
                ServerEntry {
                    url: Some("http://h".into()),
                    kind: Some("sse".into()),
                    ..ServerEntry::default()
                },
                "SSE",
            ),
            (
                "x",
                ServerEntry {
                    command: Some("x".into()),
                    env: [("A".into(), "${NOPE}".into())].into(),
                    ..ServerEntry::default()
                },
                "NOPE is not set",
            ),
        ] {
            let err = servers(
                [(name.to_string(), entry)].into(),
                RuleOrigin::User,
                "f",
                &env,
            )
            .unwrap_err()
            .to_string();
            assert!(err.contains(says), "{err}");
        }
    }
}
