//! The command line: `lathe` (the terminal UI) and `lathe exec` (headless),
//! sharing the provider, model, workspace and approval flags. Parsed with
//! clap; a usage error exits with status 2.

use std::path::PathBuf;

use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand};

use crate::config::Overrides;
use crate::protocol::ApprovalMode;
use crate::provider::{Effort, ProviderKind, WireApi};

/// Lathe: pair-program with an LLM in your terminal.
#[derive(Debug, Parser)]
#[command(name = "lathe", version, about, long_about = None)]
#[command(after_help = "Run `lathe exec --help` for the headless mode. \
Configuration: $LATHE_HOME/config.toml (or the platform config dir), then .lathe/config.toml in the workspace, \
then LATHE_* environment variables, then flags. Keys: OPENAI_API_KEY, ANTHROPIC_API_KEY.")]
pub struct Cli {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Reopen the newest session of this workspace, with its transcript.
    #[arg(long = "continue", short = 'c')]
    pub continue_: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one prompt headless: the final answer goes to stdout, progress to stderr.
    Exec(ExecArgs),
    /// MCP servers: `lathe mcp list` starts each, and prints its state and tools.
    Mcp(McpArgs),
    /// Serve an editor over the Agent Client Protocol on stdin/stdout
    /// (Zed, JetBrains, Neovim, Emacs): see docs/editors.md.
    Acp,
    /// Hooks: `lathe hooks import` brings Claude Code's into your config.
    Hooks(HooksArgs),
    /// Reopen a session in the terminal UI: the one given, or choose from a list.
    Resume {
        /// The session (see `lathe sessions`); without it, a list to choose from.
        #[arg(value_name = "ID")]
        id: Option<String>,
    },
    /// This workspace's sessions, newest first (`lathe resume ID` reopens one).
    Sessions {
        /// One JSON object per session, per line.
        #[arg(long)]
        json: bool,
        /// Every workspace's sessions.
        #[arg(long)]
        all: bool,
    },
}

#[derive(Debug, Args)]
pub struct HooksArgs {
    #[command(subcommand)]
    pub command: HooksCommand,
}

#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Read the hooks of a Claude Code settings file into your config,
    /// shown as a diff to approve first.
    Import {
        /// The settings file (default: ~/.claude/settings.json).
        #[arg(long, value_name = "FILE")]
        from: Option<std::path::PathBuf>,
        /// Write without asking (the diff is still printed).
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(subcommand)]
    pub command: McpCommand,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Start every configured server, then print each with its state and tools.
    List {
        /// One JSON object per server, per line.
        #[arg(long)]
        json: bool,
        /// Start the workspace's servers too, even if you never trusted them.
        #[arg(long)]
        trust_workspace_mcp: bool,
        /// The variables of your environment the workspace's servers may
        /// take (`${VAR}` in .mcp.json), comma-separated; a server that
        /// takes another does not start. Lathe's own API keys are never given.
        #[arg(
            long,
            value_name = "VAR,...",
            value_delimiter = ',',
            requires = "trust_workspace_mcp"
        )]
        trust_workspace_mcp_env: Vec<String>,
    },
    /// Log in to an HTTP server that asks for it (OAuth): opens the login
    /// page with $BROWSER or xdg-open, prints its URL, and keeps the token
    /// (mode 0600) under Lathe's data directory.
    Login {
        /// The server, as named in the config or .mcp.json.
        name: String,
    },
    /// Forget the login to a server.
    Logout {
        /// The server, as named in the config or .mcp.json.
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Print every event as one JSON object per line on stdout.
    #[arg(long)]
    pub json: bool,
    /// Run the hooks of the workspace's .lathe/config.toml for this run,
    /// even if you never trusted them.
    #[arg(long)]
    pub trust_workspace_hooks: bool,
    /// Start the MCP servers of the workspace's .mcp.json (and
    /// .lathe/config.toml) for this run, even if you never trusted them.
    #[arg(long)]
    pub trust_workspace_mcp: bool,
    /// The variables of your environment the workspace's servers may take
    /// (`${VAR}` in .mcp.json), comma-separated; a server that takes
    /// another does not start. Lathe's own API keys are never given.
    #[arg(
        long,
        value_name = "VAR,...",
        value_delimiter = ',',
        requires = "trust_workspace_mcp"
    )]
    pub trust_workspace_mcp_env: Vec<String>,
    /// Offer the skills of the workspace's .agents/skills, .lathe/skills
    /// and .claude/skills for this run, even if you never trusted them.
    #[arg(long)]
    pub trust_workspace_skills: bool,
    /// Offer the subagent types of the workspace's .lathe/agents and
    /// .claude/agents for this run, even if you never trusted them.
    #[arg(long)]
    pub trust_workspace_agents: bool,
    /// Go on with the newest session of this workspace.
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_: bool,
    /// Go on with session ID (see `lathe sessions`).
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
    /// An image to send with the prompt (PNG, JPEG, GIF or WebP); repeat for more.
    #[arg(long = "image", value_name = "FILE")]
    pub images: Vec<PathBuf>,
    /// Exit with status N when any call of the turn was denied (by the
    /// approval mode, a rule or a guardrail), for CI.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(1..=125))]
    pub deny_exit_code: Option<i32>,
    /// Plan only: the model looks with the read-only tools and proposes a
    /// plan (a `plan_updated` event); nothing changes, whatever the
    /// approval mode.
    #[arg(long)]
    pub plan: bool,
    /// The prompt; `-` (or nothing, with stdin not a terminal) reads it from stdin.
    #[arg(value_name = "PROMPT")]
    pub prompt: Option<String>,
}

/// Flags shared by every mode; they may come before or after the subcommand.
#[derive(Debug, Clone, Default, Args)]
pub struct CommonArgs {
    /// Wire format of the model server.
    #[arg(long, global = true, value_name = "NAME", value_parser = provider_kind())]
    pub provider: Option<ProviderKind>,
    /// Server URL; OpenAI-style URLs include /v1 (http://127.0.0.1:8080/v1), Anthropic ones do not.
    #[arg(long, global = true, value_name = "URL")]
    pub base_url: Option<String>,
    /// Model name, as the server knows it.
    #[arg(long, short = 'm', global = true, value_name = "NAME")]
    pub model: Option<String>,
    /// The OpenAI wire: responses (default on OpenAI's API) or chat (default elsewhere).
    #[arg(long, global = true, value_name = "WIRE", value_parser = wire_api)]
    pub wire_api: Option<WireApi>,
    /// How hard a reasoning model thinks: none, minimal, low, medium, high or xhigh.
    #[arg(long, global = true, value_name = "LEVEL", value_parser = effort())]
    pub effort: Option<Effort>,
    /// Workspace directory (default: the current directory).
    #[arg(long, short = 'C', global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// What may run without asking.
    #[arg(long, short = 'a', global = true, value_name = "MODE", value_parser = approval_mode())]
    pub approval: Option<ApprovalMode>,
    /// Tool rounds per turn before the turn fails (at least 1).
    #[arg(long, global = true, value_name = "N")]
    pub max_tool_iterations: Option<u32>,
    /// How commands are confined: workspace-write (default), read-only or off.
    #[arg(long, global = true, value_name = "MODE", value_parser = sandbox_mode())]
    pub sandbox: Option<crate::sandbox::Mode>,
    /// Checkpoint files before each turn changes them, for /undo and /rewind: on (default) or off (CI).
    #[arg(long, global = true, value_name = "on|off", value_parser = on_off)]
    pub checkpoints: Option<bool>,
    /// Stop when the session has cost this many US dollars (models with known prices).
    #[arg(long, global = true, value_name = "USD")]
    pub max_budget_usd: Option<f64>,
    /// Stop a turn when it has used this many tokens, its subagents' included.
    #[arg(long, global = true, value_name = "N")]
    pub max_turn_tokens: Option<u64>,
}

/// `chat` or `responses`.
fn wire_api(value: &str) -> Result<WireApi, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "chat" | "chat-completions" | "completions" => Ok(WireApi::Chat),
        "responses" => Ok(WireApi::Responses),
        other => Err(format!("`{other}`: use chat or responses")),
    }
}

/// `on` or `off`.
fn on_off(value: &str) -> Result<bool, String> {
    match value {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        other => Err(format!("`{other}`: use on or off")),
    }
}

impl CommonArgs {
    pub fn overrides(&self) -> Overrides {
        Overrides {
            provider: self.provider,
            wire: self.wire_api,
            effort: self.effort,
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            workspace: self.workspace.clone(),
            approval: self.approval,
            max_tool_iterations: self.max_tool_iterations,
            sandbox: self.sandbox,
            checkpoints: self.checkpoints,
            max_budget_usd: self.max_budget_usd,
            max_turn_tokens: self.max_turn_tokens,
            no_model: false,
        }
    }
}

/// The names a value may take, each with its help, parsed by `FromStr`:
/// the types are the core's, so clap's `ValueEnum` cannot be derived or
/// implemented for them here.
fn choices<T>(
    values: impl IntoIterator<Item = (&'static str, &'static str)>,
) -> impl clap::builder::TypedValueParser<Value = T>
where
    T: std::str::FromStr<Err = String> + Clone + Send + Sync + 'static,
{
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(
        values
            .into_iter()
            .map(|(name, help)| {
                let v = PossibleValue::new(name);
                if help.is_empty() { v } else { v.help(help) }
            })
            .collect::<Vec<_>>(),
    )
    .try_map(|s| s.parse::<T>())
}

fn sandbox_mode() -> impl clap::builder::TypedValueParser<Value = crate::sandbox::Mode> {
    use crate::sandbox::Mode;
    choices([Mode::WorkspaceWrite, Mode::ReadOnly, Mode::Off].map(|m| (m.as_str(), "")))
}

fn approval_mode() -> impl clap::builder::TypedValueParser<Value = ApprovalMode> {
    choices(ApprovalMode::ALL.map(|m| {
        let help = match m {
            ApprovalMode::ReadOnly => "reads only; no edits, no commands",
            ApprovalMode::Ask => "ask before edits and commands (headless: deny them)",
            ApprovalMode::AutoEdit => "edit files freely; ask before commands",
            ApprovalMode::FullAuto => "edit and run commands without asking",
        };
        (m.as_str(), help)
    }))
}

fn effort() -> impl clap::builder::TypedValueParser<Value = Effort> {
    choices(Effort::ALL.map(|e| (e.as_str(), "")))
}

fn provider_kind() -> impl clap::builder::TypedValueParser<Value = ProviderKind> {
    choices([
        (
            ProviderKind::OpenAi.as_str(),
            "OpenAI Chat Completions and compatible servers",
        ),
        (ProviderKind::Anthropic.as_str(), "Anthropic Messages"),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn shared_flags_work_before_and_after_exec() {
        let cli = Cli::try_parse_from([
            "lathe",
            "--model",
            "m1",
            "exec",
            "--json",
            "-a",
            "full-auto",
            "-C",
            "/tmp",
            "do it",
        ])
        .unwrap();
        assert_eq!(cli.common.model.as_deref(), Some("m1"));
        assert_eq!(cli.common.approval, Some(ApprovalMode::FullAuto));
        let Some(Command::Exec(exec)) = cli.command else {
            panic!("expected exec")
        };
        assert!(exec.json);
        assert_eq!(exec.prompt.as_deref(), Some("do it"));
    }

    #[test]
    fn bad_values_are_usage_errors() {
        let err = Cli::try_parse_from(["lathe", "exec", "--approval", "yolo", "x"]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        let err = Cli::try_parse_from(["lathe", "exec", "--provider", "gemini", "x"]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
    }
}
