//! The config file as written: every field optional, unknown keys refused.
//! Parsing reports the file, the line and the dotted key of a mistake.

use std::path::Path;

use serde::Deserialize;

use super::ConfigError;
use crate::protocol::ApprovalMode;
use crate::provider::ProviderKind;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub approval: Option<ApprovalMode>,
    pub max_tool_iterations: Option<u32>,
    /// The model's context window in tokens (else the known-models table).
    pub context_window: Option<u64>,
    /// How full the context may get, in percent, before older turns are
    /// summarized.
    pub compact_at: Option<u8>,
    /// Checkpoint the workspace's files for `/undo` and `/rewind`.
    pub checkpoints: Option<bool>,
    pub theme: Option<String>,
    /// A desktop notification when Lathe waits for the person while the
    /// terminal is not focused.
    pub notify: Option<bool>,
    /// How commands are confined.
    pub sandbox: Option<crate::sandbox::Mode>,
    pub openai: Option<ProviderSection>,
    pub anthropic: Option<ProviderSection>,
    pub shell: Option<ShellSection>,
    pub network: Option<NetworkSection>,
    /// What one response, a turn or a session may use.
    pub limits: Option<LimitsSection>,
    pub approvals: Option<ApprovalsSection>,
    /// A model that reviews risky calls that would run without asking.
    pub judge: Option<JudgeSection>,
    pub permissions: Option<PermissionsSection>,
    pub hooks: Option<HooksSection>,
    /// Settings of the built-in tools (user config only: a workspace
    /// could point them at hosts of its choosing).
    pub tools: Option<ToolsSection>,
    /// `[models."NAME"]`.
    pub models: Option<std::collections::BTreeMap<String, ModelSection>>,
    /// `[mcp_servers.NAME]`.
    pub mcp_servers: Option<std::collections::BTreeMap<String, super::mcp::ServerEntry>>,
}

/// `[judge]`: the reviewing model (on the same server).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeSection {
    pub model: Option<String>,
}

/// `[tools.*]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsSection {
    /// Past this share of the context (percent), the MCP servers' tool
    /// schemas wait behind `tool_search` (0: always; 100: never).
    pub search_at: Option<u8>,
    pub web_fetch: Option<WebFetchSection>,
    pub web_search: Option<WebSearchSection>,
    pub message: Option<MessageSection>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebFetchSection {
    /// Hosts (`name` or `name:port`) reachable whatever their address.
    pub allow_hosts: Option<Vec<String>>,
    /// Loopback and private addresses reachable.
    pub allow_private: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSearchSection {
    /// A SearXNG instance (`https://searx.example`).
    pub endpoint: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageSection {
    /// Webhook channels by name.
    #[serde(default)]
    pub channels: std::collections::BTreeMap<String, ChannelEntry>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelEntry {
    /// Where to POST `{"text": …}`; `${VAR}` is taken from the environment.
    pub url: String,
}

/// `[permissions]`: `tool(pattern)` rules.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionsSection {
    #[serde(default, deserialize_with = "rule_list")]
    pub allow: Vec<String>,
    #[serde(default, deserialize_with = "rule_list")]
    pub ask: Vec<String>,
    #[serde(default, deserialize_with = "rule_list")]
    pub deny: Vec<String>,
}

/// A list of rules; one rule alone is a list of one.
fn rule_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(
        untagged,
        expecting = "a list of rules, as in [\"exec_shell(cargo test*)\"]"
    )]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(rule) => vec![rule],
        OneOrMany::Many(rules) => rules,
    })
}

/// `[[hooks.before_tool_call]]`, `[[hooks.after_tool_call]]`, and the
/// session's events (`[[hooks.session_start]]`, …).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksSection {
    #[serde(default)]
    pub before_tool_call: Vec<HookEntry>,
    #[serde(default)]
    pub after_tool_call: Vec<HookEntry>,
    #[serde(default)]
    pub session_start: Vec<HookEntry>,
    #[serde(default)]
    pub user_prompt_submit: Vec<HookEntry>,
    #[serde(default)]
    pub notification: Vec<HookEntry>,
    #[serde(default)]
    pub stop: Vec<HookEntry>,
    #[serde(default)]
    pub subagent_stop: Vec<HookEntry>,
    #[serde(default)]
    pub pre_compact: Vec<HookEntry>,
    #[serde(default)]
    pub session_end: Vec<HookEntry>,
}

impl HooksSection {
    /// The hooks of the session's events, each with its event.
    pub fn events(self) -> [(crate::policy::session_hooks::SessionEvent, Vec<HookEntry>); 7] {
        use crate::policy::session_hooks::SessionEvent as E;
        [
            (E::SessionStart, self.session_start),
            (E::UserPromptSubmit, self.user_prompt_submit),
            (E::Notification, self.notification),
            (E::Stop, self.stop),
            (E::SubagentStop, self.subagent_stop),
            (E::PreCompact, self.pre_compact),
            (E::SessionEnd, self.session_end),
        ]
    }

    /// Every hook entry, whatever its event.
    pub fn entries(&self) -> impl Iterator<Item = &HookEntry> {
        self.before_tool_call
            .iter()
            .chain(&self.after_tool_call)
            .chain(&self.session_start)
            .chain(&self.user_prompt_submit)
            .chain(&self.notification)
            .chain(&self.stop)
            .chain(&self.subagent_stop)
            .chain(&self.pre_compact)
            .chain(&self.session_end)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookEntry {
    /// Tool names separated by `|`, globs allowed; every tool by default.
    #[serde(rename = "match")]
    pub matcher: Option<String>,
    pub command: String,
    pub timeout_secs: Option<u64>,
    /// `false` runs the hook outside the sandbox (still contained); a
    /// person's own hooks only.
    pub sandbox: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSection {
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    pub model: Option<String>,
    /// Cap on output tokens per response (Anthropic requires one: the
    /// model's own cap, at most 32,000, by default).
    pub max_tokens: Option<u32>,
    /// `[openai]`: `chat` or `responses` (default: `responses` on
    /// OpenAI's own API, `chat` elsewhere).
    pub wire_api: Option<crate::provider::WireApi>,
    /// How hard a reasoning model thinks: none, minimal, low, medium,
    /// high, xhigh.
    pub reasoning_effort: Option<crate::provider::Effort>,
    /// `[openai]` on Responses: `auto` (default), `concise`, `detailed`
    /// or `none`.
    pub reasoning_summary: Option<String>,
    /// `[anthropic]`: extended thinking with this budget of tokens (at
    /// least 1,024); 0 turns it off.
    pub thinking_budget: Option<u32>,
    /// Fields added to every request body as they are, for a server's
    /// own switches (`extra_body = { thinking = { type = "enabled" } }`).
    pub extra_body: Option<serde_json::Map<String, serde_json::Value>>,
}

/// `[models."NAME"]`: what Lathe should know of a model (each field
/// wins over what the server says and the built-in table).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    pub context_window: Option<u64>,
    pub max_output_tokens: Option<u64>,
    pub vision: Option<bool>,
    pub reasoning: Option<bool>,
    /// US dollars per million tokens.
    pub price: Option<crate::provider::models::Price>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellSection {
    pub timeout_secs: Option<u64>,
    /// How many commands may run in the background at once.
    pub max_background: Option<u64>,
    /// Let sandboxed commands use the network.
    pub network: Option<bool>,
    /// More directories sandboxed commands may write beneath.
    pub writable_roots: Option<Vec<String>>,
    /// Variables commands may see although their names look secret.
    pub env_allow: Option<Vec<String>>,
    /// More files and directories commands may not read (besides the
    /// credential stores hidden by default). Layers add to each other.
    pub hidden_paths: Option<Vec<String>>,
    /// Credential stores hidden by default that commands may read after
    /// all (e.g. `~/.npmrc` for a private registry).
    pub visible_paths: Option<Vec<String>>,
    /// Namespaces of its own for each command (user, PID, network,
    /// mounts); `false` leaves Landlock alone.
    pub namespaces: Option<bool>,
    /// Sockets outside the writable roots commands may connect to:
    /// paths, and abstract names written `@name`.
    pub allow_sockets: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkSection {
    pub max_retries: Option<u32>,
    pub retry_base_ms: Option<u64>,
    pub connect_timeout_secs: Option<u64>,
    pub idle_timeout_secs: Option<u64>,
    pub request_timeout_secs: Option<u64>,
}

/// `[limits]`: how much one response may hold of each kind (MiB), what
/// a session, a turn and a subagent may spend, and how often the same
/// call may come in a turn.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsSection {
    pub response_text_mib: Option<u64>,
    pub response_reasoning_mib: Option<u64>,
    pub response_arguments_mib: Option<u64>,
    pub session_usd: Option<f64>,
    pub turn_usd: Option<f64>,
    pub turn_tokens: Option<u64>,
    pub task_usd: Option<f64>,
    pub task_tokens: Option<u64>,
    pub repeat_calls: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalsSection {
    /// How long a conversation grant lasts unused.
    pub grant_ttl_secs: Option<u64>,
    /// How long a conversation grant lasts at most, however much it is used.
    pub grant_max_secs: Option<u64>,
}

impl ConfigFile {
    /// Parses `text`, read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let error = |line, key: Option<String>, message: String| ConfigError::File {
            path: path.to_path_buf(),
            line,
            key,
            message,
        };
        let de = toml::Deserializer::parse(text)
            .map_err(|e| error(line_of(text, e.span()), None, e.message().to_string()))?;
        serde_path_to_error::deserialize(de).map_err(|e| {
            let key = e.path().to_string();
            let inner = e.into_inner();
            let key = (key != ".").then_some(key);
            error(
                line_of(text, inner.span()),
                key,
                inner.message().to_string(),
            )
        })
    }

    /// Overlays `other` on `self`: every key `other` sets wins.
    pub fn merge(&mut self, other: ConfigFile) {
        fn section<T>(mine: &mut Option<T>, theirs: Option<T>, merge: impl FnOnce(&mut T, T)) {
            match (mine.as_mut(), theirs) {
                (Some(m), Some(t)) => merge(m, t),
                (None, Some(t)) => *mine = Some(t),
                (_, None) => {}
            }
        }
        macro_rules! take {
            ($dst:expr, $src:expr, $($f:ident),+) => { $( if $src.$f.is_some() { $dst.$f = $src.$f; } )+ };
        }
        take!(
            self,
            other,
            provider,
            model,
            approval,
            max_tool_iterations,
            context_window,
            compact_at,
            checkpoints,
            theme,
            notify,
            sandbox,
            tools,
            mcp_servers
        );
        section(&mut self.models, other.models, |m, t| m.extend(t));
        for (mine, theirs) in [
            (&mut self.openai, other.openai),
            (&mut self.anthropic, other.anthropic),
        ] {
            section(mine, theirs, |m, t| {
                take!(
                    m,
                    t,
                    base_url,
                    api_key,
                    model,
                    max_tokens,
                    wire_api,
                    reasoning_effort,
                    reasoning_summary,
                    thinking_budget,
                    extra_body
                );
            });
        }
        section(&mut self.shell, other.shell, |m, mut t| {
            // Hiding adds up: a later layer cannot unhide by replacing.
            if let (Some(mine), Some(theirs)) = (m.hidden_paths.as_mut(), t.hidden_paths.take()) {
                mine.extend(theirs);
            }
            take!(
                m,
                t,
                timeout_secs,
                max_background,
                network,
                writable_roots,
                env_allow,
                hidden_paths,
                visible_paths,
                namespaces,
                allow_sockets
            );
        });
        section(&mut self.network, other.network, |m, t| {
            take!(
                m,
                t,
                max_retries,
                retry_base_ms,
                connect_timeout_secs,
                idle_timeout_secs,
                request_timeout_secs
            );
        });
        section(&mut self.approvals, other.approvals, |m, t| {
            take!(m, t, grant_ttl_secs, grant_max_secs);
        });
        section(&mut self.limits, other.limits, |m, t| {
            take!(
                m,
                t,
                response_text_mib,
                response_reasoning_mib,
                response_arguments_mib,
                session_usd,
                turn_usd,
                turn_tokens,
                task_usd,
                task_tokens,
                repeat_calls
            );
        });
        section(&mut self.judge, other.judge, |m, t| {
            take!(m, t, model);
        });
        // Rules and hooks add up across layers.
        section(&mut self.permissions, other.permissions, |m, t| {
            m.allow.extend(t.allow);
            m.ask.extend(t.ask);
            m.deny.extend(t.deny);
        });
        section(&mut self.hooks, other.hooks, |m, t| {
            m.before_tool_call.extend(t.before_tool_call);
            m.after_tool_call.extend(t.after_tool_call);
            m.session_start.extend(t.session_start);
            m.user_prompt_submit.extend(t.user_prompt_submit);
            m.notification.extend(t.notification);
            m.stop.extend(t.stop);
            m.subagent_stop.extend(t.subagent_stop);
            m.pre_compact.extend(t.pre_compact);
            m.session_end.extend(t.session_end);
        });
    }
}

/// The 1-based line of byte offset `span.start` in `text`.
fn line_of(text: &str, span: Option<std::ops::Range<usize>>) -> Option<usize> {
    let start = span?.start.min(text.len());
    Some(
        text.as_bytes()[..start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ConfigFile, ConfigError> {
        ConfigFile::parse(Path::new("/home/u/.config/lathe/config.toml"), text)
    }

    #[test]
    fn a_full_file_parses() {
        let c = parse(
            r#"
provider = "anthropic"
model = "claude-x"
approval = "auto-edit"
max_tool_iterations = 7
[anthropic]
max_tokens = 4096
[shell]
timeout_secs = 60
[network]
max_retries = 2
"#,
        )
        .unwrap();
        assert_eq!(c.provider, Some(ProviderKind::Anthropic));
        assert_eq!(c.approval, Some(ApprovalMode::AutoEdit));
        assert_eq!(c.anthropic.unwrap().max_tokens, Some(4096));
        assert_eq!(c.network.unwrap().max_retries, Some(2));
    }

    #[test]
    fn a_wrong_type_names_the_file_line_and_key() {
        let err = parse("model = \"m\"\n\n[shell]\ntimeout_secs = \"long\"\n").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("/home/u/.config/lathe/config.toml"), "{text}");
        assert!(text.contains("line 4"), "{text}");
        assert!(text.contains("`shell.timeout_secs`"), "{text}");
    }

    #[test]
    fn an_unknown_key_and_a_bad_enum_are_named() {
        let text = parse("modle = \"x\"\n").unwrap_err().to_string();
        assert!(text.contains("line 1") && text.contains("modle"), "{text}");
        let text = parse("approval = \"sometimes\"\n").unwrap_err().to_string();
        assert!(
            text.contains("`approval`") && text.contains("sometimes"),
            "{text}"
        );
        assert!(text.contains("full-auto"), "{text}");
    }

    #[test]
    fn a_syntax_error_names_the_line() {
        let text = parse("model = \"x\"\nprovider = \n")
            .unwrap_err()
            .to_string();
        assert!(text.contains("line 2"), "{text}");
    }

    #[test]
    fn later_layers_win_key_by_key() {
        let mut base =
            parse("model = \"a\"\n[openai]\nbase_url = \"u1\"\nmodel = \"m1\"\n").unwrap();
        base.merge(parse("[openai]\nmodel = \"m2\"\n").unwrap());
        let openai = base.openai.unwrap();
        assert_eq!(openai.base_url.as_deref(), Some("u1"));
        assert_eq!(openai.model.as_deref(), Some("m2"));
        assert_eq!(base.model.as_deref(), Some("a"));
    }
}
