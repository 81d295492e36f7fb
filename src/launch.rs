//! Wiring shared by both front ends: from a validated `Config` to a running
//! agent (workspace, built-in tools, provider, system prompt, permission
//! rules, hooks, secret redaction, session journal). Headless mode passes
//! the headless approver; the TUI answers approvals itself through
//! `Op::Decide`.
//!
//! A workspace's hooks run only once the person trusts them: the trust is
//! remembered per workspace, for those hooks exactly, in
//! `trusted-hooks.json` in Lathe's data directory (a changed hook asks
//! again), so a cloned repository cannot run programs on open.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::agent::{Agent, AgentConfig, AgentHandle, prompt};
use crate::config::Config;
use crate::policy::{Approver, HookSet, Redactor, Workspace};
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
    /// The workspace's hooks that wait for the person's trust, one line
    /// each (`Op::TrustWorkspaceHooks` starts them).
    pub untrusted_hooks: Vec<String>,
}

/// Starts the agent `config` describes; `approver` decides approvals, or
/// `None` to have them answered with `Op::Decide`. `trust_workspace_hooks`
/// runs the workspace's hooks even if they were never trusted.
pub fn spawn_agent(
    config: &Config,
    approver: Option<Arc<dyn Approver>>,
    trust_workspace_hooks: bool,
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
    agent_config.rules = config.rules.clone();
    agent_config.hooks = config.hooks.clone();
    agent_config.hook_env_remove = settings.shell_env_remove.clone();
    let mut warnings = Vec::new();
    let mut untrusted_hooks = Vec::new();
    if !config.workspace_hooks.is_empty() {
        if trust_workspace_hooks || hooks_trusted(config) {
            agent_config.hooks.extend(config.workspace_hooks.clone());
        } else {
            untrusted_hooks = config.workspace_hooks.describe();
            agent_config.pending_hooks = config.workspace_hooks.clone();
        }
    }
    let session_id = agent_config.session_id.clone();
    let mut agent = Agent::new(agent_config, provider, Arc::new(registry), workspace)
        .with_redactor(Redactor::new(config.secrets()));
    if let Some(a) = approver {
        agent = agent.with_approver(a);
    }
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
        untrusted_hooks,
    })
}

/// Trusted hooks, by workspace.
#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustStore {
    workspaces: BTreeMap<PathBuf, HookSet>,
}

fn trust_file(config: &Config) -> PathBuf {
    config.paths.data_dir.join("trusted-hooks.json")
}

fn read_store(path: &Path) -> TrustStore {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            tracing::warn!(path = %path.display(), error = %e, "unreadable trust store; trusting nothing");
            TrustStore::default()
        }),
        Err(_) => TrustStore::default(),
    }
}

/// Whether the person trusted this workspace's hooks, exactly as they are.
fn hooks_trusted(config: &Config) -> bool {
    read_store(&trust_file(config))
        .workspaces
        .get(&config.workspace)
        .is_some_and(|h| *h == config.workspace_hooks)
}

/// Remembers that the person trusts this workspace's hooks as they are.
pub fn remember_workspace_hooks(config: &Config) -> Result<(), String> {
    use std::io::Write;
    let path = trust_file(config);
    let mut store = read_store(&path);
    store
        .workspaces
        .insert(config.workspace.clone(), config.workspace_hooks.clone());
    let dir = path
        .parent()
        .ok_or_else(|| format!("{} has no parent directory", path.display()))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let body = serde_json::to_vec_pretty(&store).map_err(|e| e.to_string())?;
    let mut tmp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    tmp.write_all(&body)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    tmp.persist(&path)
        .map_err(|e| format!("{}: {}", path.display(), e.error))?;
    Ok(())
}
