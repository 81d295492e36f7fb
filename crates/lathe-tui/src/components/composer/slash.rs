//! The slash commands: what each is called and does (the `/` popup and
//! `/help` show it), and reading one from the composer's line.

use crate::protocol::ApprovalMode;

/// The slash commands, with their help.
pub const COMMANDS: &[(&str, &str)] = &[
    ("/help", "keys and commands"),
    (
        "/clear",
        "start over: forget the conversation and its approvals",
    ),
    ("/model", "/model NAME: switch the model"),
    (
        "/approvals",
        "/approvals MODE: read-only, ask, auto-edit or full-auto",
    ),
    (
        "/effort",
        "/effort LEVEL: how hard the model thinks (none … xhigh, or default)",
    ),
    (
        "/cost",
        "what this session has cost, per model, with the cache's share",
    ),
    ("/log", "open the tool-call log (Ctrl-T)"),
    (
        "/permissions",
        "the approval mode, permission rules and live grants (revoke them here)",
    ),
    (
        "/mcp",
        "MCP servers and tools; restart [NAME], login [NAME]",
    ),
    (
        "/init",
        "/init [WHAT]: study the repository and propose an AGENTS.md (or changes to it)",
    ),
    (
        "/skills",
        "the skills found, where each came from; /NAME loads one",
    ),
    (
        "/compact",
        "summarize the older turns to free context (the transcript keeps them)",
    ),
    ("/undo", "put back the files the last turn changed"),
    ("/diff", "every change of this session to the files"),
    (
        "/ps",
        "the commands running in the background, their output; stop one",
    ),
    (
        "/agents",
        "the turn's agents: calls, tokens and cost of each, live; k stops one",
    ),
    (
        "/plan",
        "/plan WHAT: the model looks (read-only) and proposes a plan to approve",
    ),
    (
        "/copy",
        "copy the last answer (/copy N: its N-th code block)",
    ),
    (
        "/trust",
        "the workspace's hooks and MCP servers: asked again",
    ),
    (
        "/rewind",
        "go back to before a turn: its files, the conversation or both",
    ),
    (
        "/resume",
        "reopen an earlier session of this workspace (/resume ID for one)",
    ),
    (
        "/mouse",
        "the mouse to the terminal (select, copy) and back (Ctrl-S)",
    ),
    ("/quit", "exit Lathe"),
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    Help,
    Clear,
    Model(Option<String>),
    Approvals(Option<ApprovalMode>),
    Log,
    Permissions,
    Mcp,
    /// `/mcp restart [NAME]`: one server, or all of them.
    McpRestart(Option<String>),
    /// `/mcp login [NAME]`: log in to a server that asks.
    McpLogin(Option<String>),
    /// `/resume`: the picker, or the session given.
    Resume(Option<String>),
    /// `/compact`: summarize the older turns now.
    Compact,
    /// `/skills`: the skills found.
    Skills,
    /// `/init [WHAT]`: an AGENTS.md proposed (what follows is stressed).
    Init(Option<String>),
    /// `/undo`: put back the files of the last turn that changed any.
    Undo,
    /// `/trust`: the workspace's hooks and servers, asked again.
    Trust,
    /// `/diff`: every change of the session.
    Diff,
    /// `/ps`: the background commands.
    Ps,
    /// `/agents`: the turn's agents, metered.
    Agents,
    /// `/plan WHAT`: a turn in plan mode (`None`: say how).
    Plan(Option<String>),
    /// `/copy [N]`: the last answer, or its N-th code block.
    Copy(Option<usize>),
    /// `/mouse`: mouse reporting on or off (as Ctrl-S).
    Mouse,
    /// `/rewind`: choose a turn to go back to.
    Rewind,
    /// `/effort [LEVEL|default]`: how hard the model thinks (`None`: say
    /// what it is; `Some(None)`: the server's default).
    Effort(Option<Option<crate::protocol::Effort>>),
    /// `/cost`: what the session has cost.
    Cost,
    Quit,
}

/// The efforts `/effort ` offers, with what each does.
pub(super) const EFFORTS: &[(&str, &str)] = &[
    ("default", "what the config or the server chooses"),
    ("none", "no thinking (Anthropic: thinking off)"),
    ("minimal", "the least thinking the model allows"),
    ("low", "quick answers"),
    ("medium", "balanced"),
    ("high", "harder problems, slower answers"),
    ("xhigh", "the most the model offers"),
];

/// How many models `/model ` shows at once (typing narrows them).
pub(super) const MODELS_SHOWN: usize = 8;

/// The approval modes `/approvals ` offers, with what each lets run.
pub(super) const MODES: &[(&str, &str)] = &[
    (
        "read-only",
        "reads only; every change and command is refused",
    ),
    ("ask", "reads run; changes and commands ask"),
    ("auto-edit", "file changes run; commands ask"),
    ("full-auto", "everything runs (in the sandbox)"),
];

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComposerAction {
    None,
    Submit(String),
    Command(SlashCommand),
    /// A command that could not be understood, with why.
    Invalid(String),
}

/// Parses a line starting with `/`; `None` when it is not a command at all
/// (a message that merely starts with a path, like `/etc/hosts is wrong`).
pub fn parse_command(text: &str) -> Option<Result<SlashCommand, String>> {
    let text = text.trim();
    let (name, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let name = name.strip_prefix('/')?;
    if name.contains('/') {
        return None;
    }
    let arg = rest.trim();
    let arg = (!arg.is_empty()).then(|| arg.to_string());
    Some(match name {
        "help" | "?" => Ok(SlashCommand::Help),
        "clear" | "new" => Ok(SlashCommand::Clear),
        "model" => match arg {
            // `/model /model x`, `/model a b`: not a model's name.
            Some(m) if m.starts_with('/') || m.contains(char::is_whitespace) => Err(format!(
                "/model NAME: `{m}` is not a model name (one word, as the server knows it)"
            )),
            arg => Ok(SlashCommand::Model(arg)),
        },
        "approvals" | "approval" => match arg {
            None => Ok(SlashCommand::Approvals(None)),
            Some(a) => a.parse().map(|m| SlashCommand::Approvals(Some(m))),
        },
        "log" => Ok(SlashCommand::Log),
        "permissions" | "perms" => Ok(SlashCommand::Permissions),
        "mcp" => match arg.as_deref().map(|a| a.split_once(' ').unwrap_or((a, ""))) {
            None => Ok(SlashCommand::Mcp),
            Some(("restart", name)) => Ok(SlashCommand::McpRestart(
                (!name.trim().is_empty()).then(|| name.trim().to_string()),
            )),
            Some(("login", name)) => Ok(SlashCommand::McpLogin(
                (!name.trim().is_empty()).then(|| name.trim().to_string()),
            )),
            Some((other, _)) => Err(format!(
                "/mcp {other}: /mcp shows the servers, /mcp restart [NAME] restarts them, \
                 /mcp login [NAME] logs in to one that asks"
            )),
        },
        "resume" | "sessions" => Ok(SlashCommand::Resume(arg)),
        "compact" => Ok(SlashCommand::Compact),
        "skills" => Ok(SlashCommand::Skills),
        "init" => Ok(SlashCommand::Init(arg)),
        "undo" => Ok(SlashCommand::Undo),
        "trust" => Ok(SlashCommand::Trust),
        "diff" => Ok(SlashCommand::Diff),
        "plan" => Ok(SlashCommand::Plan(arg)),
        "ps" | "jobs" | "bg" => Ok(SlashCommand::Ps),
        "agents" | "meter" => Ok(SlashCommand::Agents),
        "mouse" => Ok(SlashCommand::Mouse),
        "copy" => match arg.as_deref().map(str::parse::<usize>) {
            None => Ok(SlashCommand::Copy(None)),
            Some(Ok(n)) if n > 0 => Ok(SlashCommand::Copy(Some(n))),
            Some(_) => Err("/copy N: N is the code block's number, from 1".into()),
        },
        "rewind" => Ok(SlashCommand::Rewind),
        "cost" | "usage" => Ok(SlashCommand::Cost),
        "effort" | "thinking" | "think" => match arg.as_deref() {
            None => Ok(SlashCommand::Effort(None)),
            Some("default" | "auto") => Ok(SlashCommand::Effort(Some(None))),
            Some(level) => level
                .parse()
                .map(|e| SlashCommand::Effort(Some(Some(e))))
                .map_err(|e: String| format!("/effort: {e}, or default")),
        },
        "quit" | "exit" | "q" => Ok(SlashCommand::Quit),
        other => Err(format!(
            "unknown command /{other}; try /help (start the line with a space to send it as a message)"
        )),
    })
}
