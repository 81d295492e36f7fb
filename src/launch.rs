//! Wiring shared by both front ends: from a validated `Config` to a running
//! agent (workspace, built-in tools, provider, system prompt, secret
//! redaction, session journal). Headless mode passes the headless approver;
//! the TUI answers approvals itself through `Op::Decide`.

use std::sync::Arc;

use crate::agent::{Agent, AgentConfig, AgentHandle, prompt};
use crate::config::Config;
use crate::policy::{Approver, Redactor, Workspace};
use crate::session::Journal;
use crate::tools::{BuiltinSettings, ToolRegistry};

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("workspace {path}: {source}")]
    Workspace {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Setup(String),
}

/// A running agent, and what the front end should tell the person.
pub struct Launched {
    pub handle: AgentHandle,
    pub session_id: String,
    /// Problems that do not stop the session (no journal).
    pub warnings: Vec<String>,
}

/// Starts the agent `config` describes; `approver` decides approvals, or
/// `None` to have them answered with `Op::Decide`.
pub fn spawn_agent(
    config: &Config,
    approver: Option<Arc<dyn Approver>>,
) -> Result<Launched, LaunchError> {
    let workspace =
        Arc::new(
            Workspace::new(&config.workspace).map_err(|source| LaunchError::Workspace {
                path: config.workspace.display().to_string(),
                source,
            })?,
        );
    let settings = BuiltinSettings {
        shell_timeout_secs: config.shell_timeout_secs,
        ..BuiltinSettings::default()
    };
    let registry =
        ToolRegistry::with_defaults(&settings).map_err(|e| LaunchError::Setup(e.to_string()))?;
    let provider = crate::provider::build(config.provider_settings())
        .map_err(|e| LaunchError::Setup(e.to_string()))?;
    let mut agent_config = AgentConfig::new(&config.model, prompt::build(workspace.root()));
    agent_config.approval = config.approval;
    agent_config.max_tool_iterations = config.max_tool_iterations;
    agent_config.grant_ttl = config.grant_ttl;
    let session_id = agent_config.session_id.clone();
    let mut agent = Agent::new(agent_config, provider, Arc::new(registry), workspace)
        .with_hook(Arc::new(Redactor::new(config.secrets())));
    if let Some(a) = approver {
        agent = agent.with_approver(a);
    }
    let mut warnings = Vec::new();
    match Journal::create(&config.paths.sessions_dir, &session_id) {
        Ok(j) => agent = agent.with_journal(j),
        Err(e) => {
            tracing::warn!(error = %e, "session journal unavailable");
            warnings.push(format!("session journal unavailable: {e}"));
        }
    }
    Ok(Launched {
        handle: agent.spawn(),
        session_id,
        warnings,
    })
}
