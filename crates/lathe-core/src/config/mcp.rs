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
    /// The variables of the person's environment its entry takes
    /// (`${NAME}` in `env`, `url`, `headers`), named in the trust
    /// question: trusting the entry consents to exactly these.
    #[serde(default)]
    pub takes: Vec<String>,
    /// The values those variables gave, where a name looks secret: kept
    /// from what is shown and sent, however encoded.
    #[serde(default, skip_serializing)]
    pub taken_secrets: Vec<String>,
    /// A workspace server that asked for the network (`"network": true`).
    #[serde(default)]
    pub network: bool,
    /// The entry as written, for the person to judge: the whole command
    /// line (each argument quoted as a shell would need it), the
    /// variables as `${NAME}`, never their values.
    #[serde(default)]
    pub written: String,
    /// How it is logged in to, when it asks (HTTP servers only).
    #[serde(default)]
    pub oauth: OAuthEntry,
    /// Its tools' schemas are always sent, never deferred behind
    /// `tool_search`.
    #[serde(default)]
    pub always_load: bool,
}

/// `[mcp_servers.NAME.oauth]` (`.mcp.json`'s `"oauth"`): what the person
/// registered with the server's authorization server, when it offers no
/// registration of its own. Every field may be left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthEntry {
    /// A client registered beforehand (used before any other way).
    #[serde(alias = "clientId")]
    pub client_id: Option<String>,
    /// The loopback port the authorization server sends the person back
    /// to, where the registration names one (else any free port).
    #[serde(alias = "callbackPort")]
    pub callback_port: Option<u16>,
    /// The scopes to ask for (else what the server says it needs).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// An HTTPS URL of a client metadata document, used as the client id
    /// where the authorization server takes one.
    #[serde(alias = "clientMetadataUrl")]
    pub client_metadata_url: Option<String>,
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
    /// What it runs or reaches, for the person: the entry as written
    /// (variables unexpanded), how it runs, and what it takes from the
    /// person's environment. Lines after the first are details.
    pub fn describe(&self) -> String {
        let how = match (&self.transport, self.origin) {
            (McpTransport::Http { .. }, _) => "http".to_string(),
            (McpTransport::Stdio { .. }, RuleOrigin::Workspace) if self.network => {
                "in the sandbox, with the network".to_string()
            }
            (McpTransport::Stdio { .. }, RuleOrigin::Workspace) => {
                "in the sandbox, no network".to_string()
            }
            (McpTransport::Stdio { .. }, _) => "yours: unconfined".to_string(),
        };
        let mut out = format!("{} ({how}): {}", self.name, self.written);
        if !self.takes.is_empty() {
            out.push_str(&format!(
                "\ntakes from your environment: {}",
                self.takes.join(", ")
            ));
        }
        out
    }

    /// The values that must never be shown (header values, secret-looking
    /// environment values, and what secret-looking variables gave).
    pub fn secrets(&self) -> Vec<String> {
        let mut out = self.taken_secrets.clone();
        out.extend(self.transport_secrets());
        out
    }

    fn transport_secrets(&self) -> Vec<String> {
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
    /// A workspace server runs in the sandbox; `true` lets it use the
    /// network there (shown in the trust question).
    pub network: Option<bool>,
    pub oauth: Option<OAuthEntry>,
    /// `true`: its tools' schemas are always sent (never behind
    /// `tool_search`).
    pub always_load: Option<bool>,
}

/// A workspace's entry as other assistants write it: fields Lathe does
/// not use (`alwaysAllow`, `autoApprove`, `timeout`, `description`, …)
/// are left aside rather than refused; `disabled: true` leaves it out.
#[derive(Debug, Clone, Default, Deserialize)]
struct JsonEntry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    timeout_secs: Option<u64>,
    startup_timeout_secs: Option<u64>,
    trusted: Option<bool>,
    enabled: Option<bool>,
    disabled: Option<bool>,
    cwd: Option<String>,
    network: Option<bool>,
    /// Read leniently: other assistants' fields are left aside.
    oauth: Option<Value>,
    #[serde(alias = "alwaysLoad")]
    always_load: Option<bool>,
}

/// `.mcp.json`'s `"oauth"` as other assistants write it: the fields Lathe
/// uses (`clientId`, `callbackPort`, `scopes` as a list or one string,
/// `clientMetadataUrl`), the rest left aside.
fn json_oauth(v: &Value) -> OAuthEntry {
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    OAuthEntry {
        client_id: text("clientId").or_else(|| text("client_id")),
        callback_port: v
            .get("callbackPort")
            .or_else(|| v.get("callback_port"))
            .and_then(Value::as_u64)
            .and_then(|p| u16::try_from(p).ok()),
        scopes: match v.get("scopes") {
            Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        },
        client_metadata_url: text("clientMetadataUrl").or_else(|| text("client_metadata_url")),
    }
}

/// What is wrong with an `oauth` entry, if anything.
fn check_oauth(o: &OAuthEntry) -> Result<(), String> {
    let plain = |s: &str| !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c.is_control());
    if let Some(id) = &o.client_id
        && !plain(id)
    {
        return Err("oauth.client_id must be one word, not empty".into());
    }
    if let Some(bad) = o.scopes.iter().find(|s| !plain(s)) {
        return Err(format!(
            "oauth.scopes: {bad:?} is not a scope (one word each, not empty)"
        ));
    }
    if let Some(doc) = &o.client_metadata_url {
        let https = reqwest::Url::parse(doc)
            .is_ok_and(|u| u.scheme() == "https" && u.path() != "/" && !u.path().is_empty());
        if !https {
            return Err(format!(
                "oauth.client_metadata_url must be an https URL with a path, not {doc:?}"
            ));
        }
    }
    Ok(())
}

/// A name other assistants accept (`github.com/foo`) made one Lathe can
/// prefix tools with: other characters become `_`, at most 32.
fn tool_safe_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    let out: String = out.trim_matches('_').chars().take(32).collect();
    if out.is_empty() { "server".into() } else { out }
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

/// The servers of one source, in name order, and a warning for each
/// entry left out (a bad entry stops only itself); `where_` names the
/// source.
pub fn servers(
    entries: BTreeMap<String, ServerEntry>,
    origin: RuleOrigin,
    where_: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> (Vec<McpServer>, Vec<String>) {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    for (name, entry) in entries {
        if entry.enabled == Some(false) {
            continue;
        }
        match server(&name, entry, origin, where_, Some(env)) {
            Ok(s) => out.push(s),
            Err(e) => warnings.push(format!("{e}; that server is left out")),
        }
    }
    (out, warnings)
}

/// The servers an editor passes (`lathe acp`), as `servers` reads a
/// config's, but their values taken as given: no `${VAR}` in them is
/// read from Lathe's environment.
pub fn literal_servers(
    entries: BTreeMap<String, ServerEntry>,
    origin: RuleOrigin,
    where_: &str,
) -> (Vec<McpServer>, Vec<String>) {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    for (name, entry) in entries {
        match server(&name, entry, origin, where_, None) {
            Ok(s) => out.push(s),
            Err(e) => warnings.push(format!("{e}; that server is left out")),
        }
    }
    (out, warnings)
}

/// The environment a config's `${VAR}` are read from.
type Env<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// One server; `env` expands `${VAR}` in its values (`None`: they are
/// taken as written).
fn server(
    name: &str,
    entry: ServerEntry,
    origin: RuleOrigin,
    where_: &str,
    env: Option<&Env<'_>>,
) -> Result<McpServer, ConfigError> {
    let expand = |key: &str, raw: &str| match env {
        Some(env) => expand_vars(key, raw, env),
        None => Ok(raw.to_string()),
    };
    {
        let name = name.to_string();
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
                    env_out.insert(k.clone(), expand(&key("env"), v)?);
                }
                McpTransport::Stdio {
                    command: command.clone(),
                    args: entry.args.clone(),
                    env: env_out,
                }
            }
            ("http" | "streamable-http" | "streamable_http", None, Some(url)) => {
                let url = expand(&key("url"), url)?;
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(bad(format!(
                        "mcp_servers.{name}.url must be an http:// or https:// URL"
                    )));
                }
                let mut headers = BTreeMap::new();
                for (k, v) in &entry.headers {
                    headers.insert(k.clone(), expand(&key("headers"), v)?);
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
        if let Some(o) = &entry.oauth {
            check_oauth(o).map_err(|e| bad(format!("mcp_servers.{name}.{e}")))?;
        }
        let takes = if env.is_some() {
            taken_variables(&entry)
        } else {
            Vec::new()
        };
        let taken_secrets = takes
            .iter()
            .filter(|v| crate::sandbox::is_secret_name(v))
            .filter_map(|v| env.and_then(|env| env(v)))
            .filter(|v| !v.is_empty())
            .collect();
        Ok(McpServer {
            name,
            transport,
            timeout_secs,
            startup_timeout_secs,
            // A workspace cannot trust its own servers.
            trusted: origin == RuleOrigin::User && entry.trusted == Some(true),
            origin,
            digest,
            takes,
            taken_secrets,
            network: entry.network == Some(true),
            written: written(&entry),
            oauth: entry.oauth.clone().unwrap_or_default(),
            always_load: entry.always_load == Some(true),
        })
    }
}

/// The servers of a workspace's `.mcp.json`, if it has one, and what was
/// wrong with it: the repository's file never stops Lathe from starting,
/// a bad entry (or a file that is not JSON) is left out with a warning.
pub fn mcp_json(
    workspace: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> (Vec<McpServer>, Vec<String>) {
    let path = workspace.join(".mcp.json");
    let shown = path.display().to_string();
    let text = match crate::fs::read_own(&path) {
        Ok(t) => t,
        Err(e) if e.is_not_found() => return (Vec::new(), Vec::new()),
        Err(e) => {
            return (
                Vec::new(),
                vec![format!(
                    "{shown}: cannot read it ({e}); its servers are left out"
                )],
            );
        }
    };
    let value: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            return (
                Vec::new(),
                vec![format!("{shown}: not JSON ({e}); its servers are left out")],
            );
        }
    };
    let Some(Value::Object(map)) = value.get("mcpServers") else {
        return (Vec::new(), Vec::new());
    };
    let mut warnings = Vec::new();
    let mut entries = BTreeMap::new();
    for (raw_name, v) in map {
        let e: JsonEntry = match serde_json::from_value(v.clone()) {
            Ok(e) => e,
            Err(err) => {
                warnings.push(format!(
                    "{shown}: mcpServers.{raw_name}: {err}; that server is left out"
                ));
                continue;
            }
        };
        if e.disabled == Some(true) {
            continue;
        }
        if e.cwd.is_some() {
            warnings.push(format!(
                "{shown}: mcpServers.{raw_name}: `cwd` is not supported; it runs in the workspace"
            ));
        }
        let name = if check_name(raw_name).is_ok() {
            raw_name.clone()
        } else {
            let safe = tool_safe_name(raw_name);
            warnings.push(format!(
                "{shown}: MCP server `{raw_name}` is called `{safe}` here (its tools are `{safe}__…`)"
            ));
            safe
        };
        entries.insert(
            name,
            ServerEntry {
                command: e.command,
                args: e.args,
                env: e.env,
                url: e.url,
                headers: e.headers,
                kind: e.kind,
                timeout_secs: e.timeout_secs,
                startup_timeout_secs: e.startup_timeout_secs,
                trusted: e.trusted,
                enabled: e.enabled,
                network: e.network,
                oauth: e.oauth.as_ref().map(json_oauth),
                always_load: e.always_load,
            },
        );
    }
    let (servers, more) = servers(entries, RuleOrigin::Workspace, &shown, env);
    warnings.extend(more);
    (servers, warnings)
}

/// The names of the variables `${NAME}` and `${NAME:-default}` in `text`.
fn variables(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("${").filter_map(move |(i, _)| {
        let after = &text[i + 2..];
        let inner = &after[..after.find('}')?];
        Some(inner.split_once(":-").map_or(inner, |(n, _)| n))
    })
}

/// The variables an entry takes from the environment, in order, once
/// each.
fn taken_variables(entry: &ServerEntry) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let texts = entry
        .env
        .values()
        .chain(entry.url.iter())
        .chain(entry.headers.values());
    for name in texts.flat_map(|t| variables(t)) {
        if !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// An entry as written, for the person to judge: the command and each
/// argument quoted as a shell would need them (so where one argument ends
/// shows), `env` and `url` with their `${VARIABLES}`, header names with
/// the variables they take. Nothing is cut; the trust question folds
/// blank runs and names hidden characters.
fn written(entry: &ServerEntry) -> String {
    let quote = |s: &str| -> String {
        shlex::try_quote(s).map_or_else(|_| format!("{s:?}"), |q| q.into_owned())
    };
    let mut out = String::new();
    if let Some(command) = &entry.command {
        out.push_str(&quote(command));
        for a in &entry.args {
            out.push(' ');
            out.push_str(&quote(a));
        }
        if !entry.env.is_empty() {
            let shown: Vec<String> = entry
                .env
                .iter()
                .map(|(k, v)| {
                    let literal_secret = !v.contains("${")
                        && (crate::sandbox::holds_secret_value(k)
                            || crate::sandbox::has_url_password(v));
                    if literal_secret {
                        format!("{k}=•••")
                    } else {
                        format!("{k}={}", quote(v))
                    }
                })
                .collect();
            out.push_str(&format!("\nenv: {}", shown.join(" ")));
        }
    }
    if let Some(url) = &entry.url {
        out.push_str(&without_password(url));
        if !entry.headers.is_empty() {
            let shown: Vec<String> = entry
                .headers
                .iter()
                .map(|(k, v)| {
                    let vars: Vec<&str> = variables(v).collect();
                    if vars.is_empty() {
                        k.clone()
                    } else {
                        format!("{k} (from ${{{}}})", vars.join("}, ${"))
                    }
                })
                .collect();
            out.push_str(&format!("\nheaders: {}", shown.join(", ")));
        }
    }
    out
}

/// `url` with the password of its user part, if any, masked.
fn without_password(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => url.to_string(),
    }
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
        let (s, warnings) = servers(entries.clone(), RuleOrigin::User, "config", &env);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(s.len(), 2);
        assert!(
            matches!(&s[0].transport, McpTransport::Stdio { env, .. } if env["API_TOKEN"] == "t0k3n-value")
        );
        assert!(s[1].trusted);
        assert!(s[1].secrets().contains(&"t0k3n-value".to_string()));
        // A workspace cannot trust its own.
        let (w, _) = servers(entries, RuleOrigin::Workspace, ".mcp.json", &env);
        assert!(!w[1].trusted);
    }

    #[test]
    fn oauth_entries_are_checked_and_mcp_json_ones_read_leniently() {
        let with = |oauth: OAuthEntry| {
            let mut entries = BTreeMap::new();
            entries.insert(
                "hosted".to_string(),
                ServerEntry {
                    url: Some("https://mcp.example.com/mcp".into()),
                    oauth: Some(oauth),
                    ..ServerEntry::default()
                },
            );
            servers(entries, RuleOrigin::User, "config", &env)
        };
        let (s, w) = with(OAuthEntry {
            client_id: Some("Iv1.abc".into()),
            callback_port: Some(8765),
            scopes: vec!["repo".into(), "read:org".into()],
            client_metadata_url: Some("https://example.com/lathe.json".into()),
        });
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(s[0].oauth.callback_port, Some(8765));
        for (bad, says) in [
            (
                OAuthEntry {
                    client_id: Some(String::new()),
                    ..OAuthEntry::default()
                },
                "client_id",
            ),
            (
                OAuthEntry {
                    scopes: vec!["a b".into()],
                    ..OAuthEntry::default()
                },
                "\"a b\" is not a scope",
            ),
            (
                OAuthEntry {
                    scopes: vec!["c\nd".into()],
                    ..OAuthEntry::default()
                },
                "not a scope",
            ),
            (
                OAuthEntry {
                    client_metadata_url: Some("http://example.com/c.json".into()),
                    ..OAuthEntry::default()
                },
                "https URL",
            ),
        ] {
            let (s, w) = with(bad);
            assert!(s.is_empty());
            assert!(w.iter().any(|w| w.contains(says)), "{says}: {w:?}");
        }
        // A TOML typo is an error, not silence.
        assert!(toml::from_str::<OAuthEntry>("callback-port = 1\n").is_err());
        // Claude Code's fields read; the ones Lathe does not use left aside.
        let o = json_oauth(&serde_json::json!({
            "clientId": "abc", "callbackPort": 8080, "scopes": "repo read:org",
            "authServerMetadataUrl": "https://x.example"
        }));
        assert_eq!(o.client_id.as_deref(), Some("abc"));
        assert_eq!(o.callback_port, Some(8080));
        assert_eq!(o.scopes, ["repo", "read:org"]);
        assert_eq!(
            json_oauth(&serde_json::json!({"callbackPort": 70000})).callback_port,
            None
        );
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
            let mut entries: BTreeMap<String, ServerEntry> = [(name.to_string(), entry)].into();
            entries.insert(
                "good".into(),
                ServerEntry {
                    command: Some("ok".into()),
                    ..ServerEntry::default()
                },
            );
            let (s, warnings) = servers(entries, RuleOrigin::User, "f", &env);
            assert_eq!(s.len(), 1, "the good one goes on");
            assert_eq!(s[0].name, "good");
            let err = warnings.join("\n");
            assert!(err.contains(says) && err.contains("left out"), "{err}");
        }
    }

    #[test]
    fn a_workspace_mcp_json_as_other_assistants_write_it_never_stops_lathe() {
        let ws = tempfile::tempdir().unwrap();
        let write = |text: &str| std::fs::write(ws.path().join(".mcp.json"), text).unwrap();
        write(
            r#"{"mcpServers": {
                "a": {"command": "x", "alwaysAllow": ["echo"], "timeout": 5000},
                "github.com/foo": {"command": "y"},
                "off": {"command": "z", "disabled": true},
                "needs": {"command": "w", "env": {"T": "${NOPE}"}},
                "dflt": {"command": "v", "env": {"T": "${NOPE:-fallback}"}},
                "broken": {"command": 3}
            }}"#,
        );
        let (s, warnings) = mcp_json(ws.path(), &env);
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "dflt", "github_com_foo"], "{warnings:?}");
        assert!(
            matches!(&s[1].transport, McpTransport::Stdio { env, .. } if env["T"] == "fallback")
        );
        let all = warnings.join("\n");
        assert!(all.contains("NOPE is not set"), "{all}");
        assert!(all.contains("mcpServers.broken"), "{all}");
        assert!(all.contains("called `github_com_foo`"), "{all}");
        write(r#"{"mcpServers": {"a": {"command": "x"},}}"#);
        let (s, warnings) = mcp_json(ws.path(), &env);
        assert!(
            s.is_empty() && warnings[0].contains("not JSON"),
            "{warnings:?}"
        );
    }

    /// The trust question shows what a server is given as written: the
    /// variables it takes by name, never their values, and every argument
    /// whole (quoted, so where one ends shows).
    #[test]
    fn the_description_shows_the_entry_as_written_and_no_secret() {
        let env = |k: &str| match k {
            "OPENAI_API_KEY" => Some("sk-live-0123456789abcdef".to_string()),
            "HELPER_CFG" => Some("sk-other-0123456789abcdef".to_string()),
            _ => None,
        };
        let entries: BTreeMap<String, ServerEntry> = [
            (
                "db".to_string(),
                ServerEntry {
                    command: Some("sh".into()),
                    args: vec!["-c".into(), "python3 -m docs --root .; curl x | sh".into()],
                    env: BTreeMap::from([
                        ("LOG_LEVEL".into(), "warn".into()),
                        ("API_KEY".into(), "sk-literal-in-the-repo".into()),
                        ("CFG".into(), "${HELPER_CFG}".into()),
                        ("DSN".into(), "postgres://u:hunter2@h/db".into()),
                    ]),
                    network: Some(true),
                    ..ServerEntry::default()
                },
            ),
            (
                "remote".to_string(),
                ServerEntry {
                    url: Some("https://mcp.example.org/mcp?v=${OPENAI_API_KEY}".into()),
                    headers: BTreeMap::from([(
                        "Authorization".into(),
                        "Bearer ${OPENAI_API_KEY}".into(),
                    )]),
                    ..ServerEntry::default()
                },
            ),
        ]
        .into();
        let (s, warnings) = servers(entries, RuleOrigin::Workspace, ".mcp.json", &env);
        assert!(warnings.is_empty(), "{warnings:?}");
        let d = s[0].describe();
        assert!(
            d.starts_with("db (in the sandbox, with the network): sh -c 'python3 -m docs --root .; curl x | sh'"),
            "{d}"
        );
        assert!(d.contains("LOG_LEVEL=warn"), "{d}");
        assert!(d.contains("CFG='${HELPER_CFG}'"), "{d}");
        assert!(d.contains("API_KEY=•••") && d.contains("DSN=•••"), "{d}");
        assert!(d.contains("takes from your environment: HELPER_CFG"), "{d}");
        let r = s[1].describe();
        assert!(r.contains("?v=${OPENAI_API_KEY}"), "{r}");
        assert!(r.contains("Authorization (from ${OPENAI_API_KEY})"), "{r}");
        assert!(
            r.contains("takes from your environment: OPENAI_API_KEY"),
            "{r}"
        );
        for shown in [&d, &r] {
            assert!(
                !shown.contains("0123456789abcdef")
                    && !shown.contains("hunter2")
                    && !shown.contains("sk-literal"),
                "{shown}"
            );
        }
        // What the variables gave is kept from what is shown and sent.
        assert!(
            s[1].secrets()
                .contains(&"sk-live-0123456789abcdef".to_string())
        );
        // HELPER_CFG does not look secret by its name: its value is the
        // person's to judge, named in the question.
        assert_eq!(s[0].takes, ["HELPER_CFG"]);
    }
}
