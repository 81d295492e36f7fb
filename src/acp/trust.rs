//! What of the workspace's own waits for the person's trust in an editor
//! (its hooks, MCP servers, skills, subagent types and commands), as the
//! terminal UI asks at its start: here `/trust` shows it all and asks,
//! and the first prompt says that something waits.

use crate::config::Config;
use crate::launch::{self, Launched};
use crate::protocol::Op;
use lathe_core::front::commands::{Custom, load};

/// What waits, how to remember the person's yes, and what it starts.
pub struct Waiting {
    /// Everything that waits, as the person should judge it.
    pub text: String,
    /// What the engine is told on a yes.
    pub ops: Vec<Op>,
    /// The workspace's commands a yes offers.
    pub commands: Vec<Custom>,
    remember: Box<dyn Fn() -> Result<(), String> + Send>,
}

impl Waiting {
    /// The person said yes: remembered (pinned as it is now); what it
    /// starts and offers. On an error it still waits, to be asked again.
    pub fn remember(self) -> Result<(Vec<Op>, Vec<Custom>), (Self, String)> {
        match (self.remember)() {
            Ok(()) => Ok((self.ops, self.commands)),
            Err(e) => Err((self, e)),
        }
    }
}

/// The person's commands, and the workspace's when trusted before; then
/// the workspace's that wait, and their digest.
pub fn commands(config: &Config, reserved: &[&str]) -> (Vec<Custom>, Vec<Custom>, String) {
    let mut own = config
        .paths
        .config_file
        .parent()
        .map(|d| load(&d.join("commands"), reserved))
        .map(|(c, left_out)| {
            for w in left_out {
                tracing::warn!("{w}");
            }
            c
        })
        .unwrap_or_default();
    let (ws, left_out) = load(&config.workspace.join(".lathe").join("commands"), reserved);
    for w in left_out {
        tracing::warn!("{w}");
    }
    let digest = launch::commands_digest(
        &ws.iter()
            .map(|c| (c.name.clone(), c.body.clone()))
            .collect::<Vec<_>>(),
    );
    if ws.is_empty() || launch::commands_trusted(config, &digest) {
        for c in ws {
            if !own.iter().any(|m| m.name == c.name) {
                own.push(c);
            }
        }
        return (own, Vec::new(), digest);
    }
    (own, ws, digest)
}

/// What of the workspace waits, if anything.
pub fn waiting(
    config: &Config,
    launched: &Launched,
    commands: Vec<Custom>,
    commands_digest: String,
) -> Option<Waiting> {
    let hooks = launched.untrusted_hooks.clone();
    let servers = launched.untrusted_mcp.clone();
    let skills = launched.skills.untrusted.clone();
    let agents = launched.agents.untrusted.clone();
    if hooks.is_empty()
        && servers.is_empty()
        && skills.is_empty()
        && agents.is_empty()
        && commands.is_empty()
    {
        return None;
    }
    let mut text = String::from(
        "The workspace brings its own; none of it runs or is offered until you trust it \
         (as it is now: a change asks again).\n",
    );
    let mut ops = Vec::new();
    let mut section = |title: &str, items: Vec<String>, op: Option<Op>| {
        if items.is_empty() {
            return;
        }
        text.push_str(&format!("\n{title}:\n"));
        for i in items {
            text.push_str(&format!("- {}\n", crate::protocol::visible::command(&i)));
        }
        ops.extend(op);
    };
    section("Hooks", hooks.describe(), Some(Op::TrustWorkspaceHooks));
    section(
        "MCP servers",
        servers.iter().map(|s| s.describe()).collect(),
        Some(Op::TrustWorkspaceMcp),
    );
    section(
        "Skills",
        skills
            .iter()
            .map(|s| format!("{}: {}", s.name, s.description))
            .collect(),
        Some(Op::TrustWorkspaceSkills),
    );
    section(
        "Subagent types",
        agents
            .iter()
            .map(|a| a.file.display().to_string())
            .collect(),
        Some(Op::TrustWorkspaceAgents),
    );
    section(
        "Commands",
        commands
            .iter()
            .map(|c| format!("{}: {}", c.name, c.about))
            .collect(),
        None,
    );
    let config = config.clone();
    let (skills_digest, agents_digest) = (
        launched.skills.digest.clone(),
        launched.agents.digest.clone(),
    );
    let has_commands = !commands.is_empty();
    Some(Waiting {
        text,
        ops,
        commands,
        remember: Box::new(move || {
            if !agents.is_empty() {
                launch::remember_workspace_agents(&config, &agents_digest)?;
            }
            if !skills.is_empty() {
                launch::remember_workspace_skills(&config, &skills_digest)?;
            }
            if !hooks.is_empty() {
                launch::remember_workspace_hooks(&config, &hooks)?;
            }
            if !servers.is_empty() {
                launch::remember_workspace_mcp(&config, &servers)?;
            }
            if has_commands {
                launch::remember_workspace_commands(&config, &commands_digest)?;
            }
            Ok(())
        }),
    })
}
