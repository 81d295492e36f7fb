//! The config's layers, read and merged: the user's file, the workspace's
//! (only what a repository may set, `workspace_layer`, with a warning
//! naming what was left out), then the environment. Rules, hooks and MCP servers are taken
//! out of each layer as they are read, with where they came from.

use std::path::{Path, PathBuf};

use super::file::{self, ConfigFile};
use super::paths::Paths;
use super::{ConfigError, defaults, in_range, mcp};
use crate::policy::{HookSet, HookSpec, RuleOrigin, Rules};

/// Every layer, merged, with what was taken out of them.
pub(super) struct Layers {
    pub(super) merged: ConfigFile,
    pub(super) rules: Rules,
    pub(super) hooks: HookSet,
    pub(super) workspace_hooks: HookSet,
    pub(super) mcp_servers: Vec<mcp::McpServer>,
    pub(super) workspace_mcp: Vec<mcp::McpServer>,
    /// The files read.
    pub(super) sources: Vec<PathBuf>,
    pub(super) warnings: Vec<String>,
}

/// Reads the user's layer, the workspace's and the environment's.
pub(super) fn read(
    paths: &Paths,
    workspace: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    tools: &[&str],
) -> Result<Layers, ConfigError> {
    let mut sources = Vec::new();
    let mut warnings = Vec::new();

    let (mut merged, user_text) = read_layer(&paths.config_file, &mut sources)?.unwrap_or_default();
    let mut rules = policy_rules(
        merged.permissions.take(),
        &paths.config_file,
        &user_text,
        RuleOrigin::User,
        tools,
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
    let (mut workspace_mcp, mcp_warnings) = mcp::mcp_json(workspace, env);
    warnings.extend(mcp_warnings);
    let mut workspace_hooks = HookSet::default();
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
            tools,
        )?);
        for h in ws
            .hooks
            .iter()
            .flat_map(file::HooksSection::entries)
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
        let ws = super::workspace_layer::allowed(ws, &merged, &ws_file, &mut warnings);
        merged.merge(ws);
    }
    merged.merge(env_layer(env)?);
    let lathe_keys: Vec<String> = [&merged.openai, &merged.anthropic]
        .into_iter()
        .flatten()
        .filter_map(|s| s.api_key.clone())
        .chain(LATHE_KEY_VARIABLES.iter().filter_map(|v| env(v)))
        .filter(|k| k.trim().len() >= 8)
        .collect();
    keep_lathe_keys_from(&mut workspace_mcp, &lathe_keys, &mut warnings);
    name_workspace_servers(&mcp_servers, &rules, &mut workspace_mcp, &mut warnings);
    Ok(Layers {
        merged,
        rules,
        hooks,
        workspace_hooks,
        mcp_servers,
        workspace_mcp,
        sources,
        warnings,
    })
}

/// The variables Lathe's own keys come from.
pub(super) const LATHE_KEY_VARIABLES: &[&str] = &["OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

/// Leaves out every workspace server that would be given one of Lathe's
/// own API keys, by name (`${OPENAI_API_KEY}`) or by value (another
/// variable that holds the same key), whatever the trust: a repository's
/// server never sees the key Lathe pays with.
fn keep_lathe_keys_from(
    servers: &mut Vec<mcp::McpServer>,
    keys: &[String],
    warnings: &mut Vec<String>,
) {
    servers.retain(|s| {
        let by_name: Vec<&str> = s
            .takes
            .iter()
            .map(String::as_str)
            .filter(|v| LATHE_KEY_VARIABLES.contains(v))
            .collect();
        let values: Vec<&str> = match &s.transport {
            mcp::McpTransport::Stdio { env, .. } => env.values().map(String::as_str).collect(),
            mcp::McpTransport::Http { url, headers } => std::iter::once(url.as_str())
                .chain(headers.values().map(String::as_str))
                .collect(),
        };
        let by_value = values
            .iter()
            .any(|v| keys.iter().any(|k| v.contains(k.trim())));
        if by_name.is_empty() && !by_value {
            return true;
        }
        let what = if by_name.is_empty() {
            "a variable that holds Lathe's API key".to_string()
        } else {
            by_name.join(", ")
        };
        warnings.push(format!(
            "the workspace's MCP server `{}` is left out: it takes {what}, and a workspace's \
             server is never given the API key Lathe uses, whatever the trust",
            s.name
        ));
        false
    });
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
    tools: &[&str],
) -> Result<Rules, ConfigError> {
    let Some(p) = section else {
        return Ok(Rules::default());
    };
    for (key, list) in [("allow", &p.allow), ("ask", &p.ask), ("deny", &p.deny)] {
        for rule in list {
            let checked = crate::policy::Rule::parse(rule, origin)
                .and_then(|r| r.unknown_tool(tools).map_or(Ok(()), Err));
            if let Err(message) = checked {
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
    let specs = |key: &str, entries: Vec<file::HookEntry>| -> Result<Vec<HookSpec>, ConfigError> {
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
    let before = specs("before_tool_call", h.before_tool_call.clone())?;
    let after = specs("after_tool_call", h.after_tool_call.clone())?;
    let mut events = std::collections::BTreeMap::new();
    for (event, entries) in h.events() {
        if !entries.is_empty() {
            events.insert(event, specs(event.key(), entries)?);
        }
    }
    Ok(HookSet {
        before,
        after,
        events,
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

fn read_layer(
    path: &Path,
    sources: &mut Vec<PathBuf>,
) -> Result<Option<(ConfigFile, String)>, ConfigError> {
    let text = match crate::fs::read_own(path) {
        Ok(t) => t,
        Err(e) if e.is_not_found() => return Ok(None),
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
