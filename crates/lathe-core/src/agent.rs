//! The agent: a conversation driven on its own tokio task.
//!
//! It works as a queue pair: `Op`s go in through a bounded channel,
//! `AgentEvent`s come out (and go to the session journal). `turn` runs the
//! loop of one user turn (request, stream, dispatch the tool calls, repeat
//! until the model answers in text or the iteration limit is hit);
//! `dispatch` runs each call through the pipeline of DESIGN.md; `approval`
//! routes `Op::Decide` answers to the calls waiting for them; `prompt`
//! builds the system prompt. While a turn runs, the task still reads ops, so
//! an interrupt or an approval decision is handled at once.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::policy::{
    Approver, AuthorizationManager, Guardrails, HookSet, HookSpec, Redactor, Rules, Workspace,
};
use crate::protocol::redact::Redact;
use crate::protocol::{AgentEvent, ApprovalMode, McpStatus, Op, RuleLists, Usage};
use crate::provider::{Message, Provider};
use crate::session::Journal;
use crate::tools::{ToolRegistry, ToolSource, Toolset};

pub(crate) use state::{Services, Settings, State};

mod approval;
mod budget;
mod compact;
mod desk;
mod dispatch;
mod events;
mod init;
mod judge;
mod mentions;
pub mod prompt;
mod repeats;
mod serve;
mod state;
mod subagents;
mod task;
mod turn;

/// What the model is told before the person's message in plan mode.
#[cfg(test)]
pub(crate) fn plan_mode_note() -> &'static str {
    turn::PLAN_MODE
}
mod undo;

pub use approval::PendingApprovals;

pub use crate::config::defaults::MAX_TOOL_ITERATIONS as DEFAULT_MAX_TOOL_ITERATIONS;
/// How many ops may wait before a sender waits.
const OP_QUEUE: usize = 64;

/// Settings of one agent.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub session_id: String,
    pub model: String,
    pub approval: ApprovalMode,
    /// Tool rounds per turn; clamped to at least 1.
    pub max_tool_iterations: u32,
    pub system_prompt: String,
    /// How long a conversation grant lasts unused, and at most.
    pub grant_ttl: Duration,
    pub grant_max: Duration,
    pub shell_max_timeout_secs: u64,
    /// Outer limit on any one tool call (tools may have tighter ones).
    pub tool_timeout: Duration,
    /// The `[permissions]` rules, user's then workspace's.
    pub rules: Rules,
    /// Hooks that run.
    pub hooks: HookSet,
    /// The workspace's hooks, waiting for the person's trust
    /// (`Op::TrustWorkspaceHooks`).
    pub pending_hooks: HookSet,
    /// Environment variables hooks never see (API keys).
    pub hook_env_remove: Vec<String>,
    /// More workspace paths (files or directories) whose writes always
    /// ask: the person's own skills and agents when the workspace holds
    /// them (a home directory opened as the workspace).
    pub protected: Vec<String>,
    /// Hooks run through the sandbox's warden (contained; a workspace's
    /// hooks also confined as commands are). `None`: directly, in a
    /// process group of their own.
    pub hook_sandbox: Option<crate::sandbox::Settings>,
    /// The session's temporary directory for commands, removed when the
    /// agent ends.
    pub scratch: Option<Arc<tempfile::TempDir>>,
    /// The model's context window, when configured (else the
    /// known-models table's, for the model in use).
    pub context_window: Option<u64>,
    /// Compact when the context is this full (percent).
    pub compact_at: u8,
    /// Defer MCP tool schemas behind `tool_search` past this share of the
    /// context (percent; 100: never).
    pub tool_search_at: u8,
    /// Lathe's data directory, where the checkpoints that `/undo` and
    /// `/rewind` restore files from are kept; `None`: no checkpoints.
    pub checkpoints: Option<std::path::PathBuf>,
    /// What the config says of models (`[models."NAME"]`).
    pub models: std::collections::BTreeMap<String, crate::provider::models::ModelInfo>,
    /// How many commands may run in the background at once.
    pub max_background: usize,
    /// The model that reviews risky calls that would run without asking
    /// (`[judge] model`); `None`: no judge.
    pub judge: Option<String>,
    /// What a session, a turn and a subagent may spend.
    pub caps: crate::protocol::budget::Caps,
    /// How many times the same call may come in a turn.
    pub repeat_calls: u32,
}

impl AgentConfig {
    pub fn new(model: impl Into<String>, system_prompt: impl Into<String>) -> Self {
        Self {
            session_id: uuid::Uuid::now_v7().to_string(),
            model: model.into(),
            approval: ApprovalMode::Ask,
            max_tool_iterations: DEFAULT_MAX_TOOL_ITERATIONS,
            system_prompt: system_prompt.into(),
            grant_ttl: crate::policy::grants::DEFAULT_GRANT_TTL,
            grant_max: crate::policy::grants::MAX_GRANT_TTL,
            shell_max_timeout_secs: crate::tools::builtin::MAX_SHELL_TIMEOUT_SECS,
            tool_timeout: Duration::from_secs(600),
            rules: Rules::default(),
            hooks: HookSet::default(),
            pending_hooks: HookSet::default(),
            hook_env_remove: Vec::new(),
            protected: Vec::new(),
            hook_sandbox: None,
            scratch: None,
            context_window: None,
            compact_at: crate::config::defaults::COMPACT_AT,
            tool_search_at: crate::config::defaults::TOOL_SEARCH_AT,
            checkpoints: None,
            models: std::collections::BTreeMap::new(),
            max_background: crate::tools::jobs::DEFAULT_MAX,
            judge: None,
            caps: crate::protocol::budget::Caps::default(),
            repeat_calls: crate::config::defaults::REPEAT_CALLS,
        }
    }
}

/// The front end's side of the queue pair.
pub struct AgentHandle {
    pub ops: mpsc::Sender<Op>,
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    pub task: JoinHandle<()>,
}

/// Sends events to the front end and the journal.
#[derive(Clone)]
pub(crate) struct Emitter {
    tx: mpsc::UnboundedSender<AgentEvent>,
    journal: Option<Arc<Mutex<Journal>>>,
    /// Every event leaves redacted: the UI, `--json`, text output, the
    /// journal and the log all read events.
    redactor: Redactor,
}

impl Emitter {
    pub(crate) fn emit(&self, mut event: AgentEvent) {
        // The boundary of what leaves as an event.
        event.redact(&self.redactor);
        self.emit_redacted(event);
    }

    /// The redactor every event passes.
    pub(crate) fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// An event redacted already (streamed text, which
    /// `policy::redactor::stream` redacts in the context of what follows
    /// each delta).
    pub(crate) fn emit_redacted(&self, event: AgentEvent) {
        // Deltas are not journaled (the message repeats them): skip the lock.
        if let Some(j) = self.journal.as_ref().filter(|_| {
            !matches!(
                event,
                AgentEvent::AssistantDelta { .. } | AgentEvent::ReasoningDelta { .. }
            )
        }) {
            j.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .record(&event);
        }
        // A front end that went away is not the agent's problem.
        let _ = self.tx.send(event);
    }
}

/// What every task of one conversation shares, in three parts: the
/// handles it works through, the settings fixed for the conversation,
/// and the state it changes as it goes, behind one lock
/// ([`Shared::state`]).
pub(crate) struct Shared {
    pub(crate) services: Services,
    pub(crate) settings: Settings,
    state: Mutex<State>,
}

/// A matcher that remembers whether it hid anything.
struct Seen<'a> {
    scrub: &'a dyn crate::protocol::redact::Scrub,
    hid: std::cell::Cell<bool>,
}

impl crate::protocol::redact::Scrub for Seen<'_> {
    fn scrub(&self, text: &str) -> Option<String> {
        let clean = self.scrub.scrub(text);
        if clean.is_some() {
            self.hid.set(true);
        }
        clean
    }
}

impl Shared {
    /// The conversation's changing state. Taken briefly, never across an
    /// await and never twice at once (one lock: a second `state()` while
    /// the first guard lives would wait forever).
    pub(crate) fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The boundary of what goes to the model, and so into the record the
    /// conversation is rebuilt from: the person's message with what it
    /// attaches, each tool's result (errors included), what a failed turn
    /// says. (The instructions files in the system prompt pass it at
    /// spawn.) Returns whether a secret was hidden.
    pub(crate) fn to_model(&self, payload: &mut impl Redact) -> bool {
        let seen = Seen {
            scrub: &self.services.redactor,
            hid: std::cell::Cell::new(false),
        };
        payload.redact(&seen);
        // What the read rules cover, however it got into the text.
        let withheld = Seen {
            scrub: &*self.services.withheld,
            hid: std::cell::Cell::new(false),
        };
        payload.redact(&withheld);
        seen.hid.get() || withheld.hid.get()
    }

    /// Looks again at what the read rules cover, and at what those files
    /// hold (before a result that holds what a program printed goes to
    /// the model).
    pub(crate) async fn look_at_covered(&self) {
        let reads = self.services.guardrails.reads().clone();
        if !reads.active() {
            return;
        }
        let withheld = self.services.withheld.clone();
        let _ = tokio::task::spawn_blocking(move || {
            reads.refresh();
            withheld.update(&reads.covered_files());
        })
        .await;
    }

    /// Records `item` in the conversation's history (queued).
    pub(crate) async fn record(&self, item: crate::session::history::Item) {
        if let Some(h) = &self.services.history {
            h.append(item).await;
        }
    }

    /// Records a response whose answer and reasoning are as they were
    /// shown (redacted as they streamed).
    pub(crate) async fn record_shown(&self, item: crate::session::history::Item) {
        if let Some(h) = &self.services.history {
            h.append_shown(item).await;
        }
    }

    /// Records `item` before returning: an intent, before its step.
    pub(crate) async fn record_now(&self, item: crate::session::history::Item) {
        if let Some(h) = &self.services.history {
            h.append_now(item).await;
        }
    }

    /// Makes the history durable (a turn's end).
    pub(crate) async fn sync_history(&self) {
        if let Some(h) = &self.services.history {
            h.sync().await;
        }
    }

    pub(crate) fn model(&self) -> String {
        self.state().model.clone()
    }

    pub(crate) fn effort(&self) -> Option<crate::protocol::Effort> {
        self.state().effort
    }

    /// What is known of `model`: the config first, then what the server
    /// said, then the built-in table. Open-weight models have no built-in
    /// price (they are served locally as often as not).
    pub(crate) fn model_info(&self, model: &str) -> crate::provider::models::ModelInfo {
        let configured = self
            .settings
            .configured_models
            .get(model)
            .copied()
            .unwrap_or_default();
        let server = self
            .state()
            .server_models
            .get(model)
            .copied()
            .unwrap_or_default();
        configured
            .or(server)
            .or(crate::provider::models::builtin(model))
    }

    /// What `model`'s tokens cost, when known.
    pub(crate) fn price(&self, model: &str) -> Option<crate::provider::models::Price> {
        self.model_info(model).price
    }

    /// The images given for the next turn (`lathe exec --image`).
    pub(crate) fn take_images(&self) -> Vec<std::path::PathBuf> {
        std::mem::take(&mut self.state().images)
    }

    /// Adds what `model` used for `by` to the session's spending; what
    /// the main agent spent is in its responses' record, any other's is
    /// recorded here (a resumed session's `/cost` and caps count it).
    pub(crate) async fn spend(&self, by: budget::By<'_>, model: &str, usage: Usage) {
        let spent = by.spent(model, usage);
        self.state().budget.spend(spent.clone());
        if by.agent != crate::protocol::budget::Agent::Main {
            self.record(crate::session::history::Item::Spent(spent))
                .await;
        }
    }

    /// The `cost` event: each model's use, and the whole.
    fn cost(&self) -> AgentEvent {
        let state = self.state();
        let spent = &state.budget.spent;
        let mut total = Usage::default();
        let models = spent
            .iter()
            .map(|(model, usage)| {
                total.add(*usage);
                crate::protocol::ModelUsage {
                    model: model.clone(),
                    usage: *usage,
                }
            })
            .collect();
        AgentEvent::Cost {
            models,
            total,
            by_agent: state.budget.by_agent.clone(),
        }
    }

    /// Asks the server what it knows of `model` (its window, prices…),
    /// once per model, in the background; the context meter is told
    /// again when the window changes.
    pub(crate) fn learn_model(self: &Arc<Self>, model: String) {
        let asked = self.state().server_models.contains_key(&model);
        if asked || model.is_empty() {
            return;
        }
        let shared = Arc::clone(self);
        tokio::spawn(async move {
            let before = compact::window(&shared);
            let info = shared.services.provider.model_info(&model).await;
            shared.state().server_models.insert(model, info);
            let after = compact::window(&shared);
            if after != before {
                let tokens = shared.state().context_tokens;
                shared.services.emitter.emit(AgentEvent::ContextUpdated {
                    tokens,
                    window: after,
                });
            }
        });
    }

    /// Whether the turn running plans: it only looks.
    pub(crate) fn planning(&self) -> bool {
        self.state().planning
    }

    /// Whether this turn's commands and hooks only look (a plan, or
    /// `/init` studying the repository).
    pub(crate) fn looks_only(&self) -> bool {
        let state = self.state();
        state.planning || state.studying
    }

    /// The approval mode calls are judged by: read-only while a turn
    /// plans.
    pub(crate) fn mode(&self) -> ApprovalMode {
        let state = self.state();
        if state.planning {
            return ApprovalMode::ReadOnly;
        }
        state.mode
    }

    /// The approval mode the person chose.
    pub(crate) fn chosen_mode(&self) -> ApprovalMode {
        self.state().mode
    }

    fn set_model(&self, model: String) {
        self.state().model = model;
    }

    /// Waits for the front end to say whether turn `turn_id` goes on
    /// past its tool rounds; `false` if the turn is interrupted first.
    pub(crate) async fn ask_to_go_on(&self, turn_id: u64, cancel: &CancellationToken) -> bool {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.state().limit_answer = Some((turn_id, tx));
        let answer = tokio::select! {
            a = rx => a.unwrap_or(false),
            () = cancel.cancelled() => false,
        };
        self.state().limit_answer.take();
        answer
    }

    /// The front end's answer to `tool_limit_reached` (for that turn only).
    fn answer_limit(&self, turn_id: u64, go_on: bool) {
        let waiting = {
            let mut state = self.state();
            let slot = &mut state.limit_answer;
            if slot.as_ref().is_some_and(|(t, _)| *t == turn_id) {
                slot.take()
            } else {
                None
            }
        };
        if let Some((_, tx)) = waiting {
            let _ = tx.send(go_on);
        }
    }

    fn set_mode(&self, mode: ApprovalMode) {
        self.state().mode = mode;
    }

    /// The before hooks that match `tool`, in order.
    pub(crate) fn before_hooks(&self, tool: &str) -> Vec<HookSpec> {
        self.state()
            .user_hooks
            .before
            .iter()
            .filter(|h| h.matches(tool))
            .cloned()
            .collect()
    }

    /// The after hooks that match `tool`, in order.
    pub(crate) fn after_hooks(&self, tool: &str) -> Vec<HookSpec> {
        self.state()
            .user_hooks
            .after
            .iter()
            .filter(|h| h.matches(tool))
            .cloned()
            .collect()
    }

    /// The workspace's hooks start running.
    /// The workspace's subagent types, trusted now: `task` offers them.
    fn trust_workspace_agents(&self) {
        let Some(types) = &self.services.agent_types else {
            return;
        };
        if types.trust_pending() {
            let offered = types
                .all()
                .into_iter()
                .map(|a| (a.name, a.description))
                .collect();
            self.services
                .tools
                .replace_builtin(Arc::new(crate::tools::builtin::Task::new(offered)));
        }
    }

    fn trust_workspace_hooks(&self) {
        let mut state = self.state();
        let pending = std::mem::take(&mut state.pending_hooks);
        state.user_hooks.extend(pending);
    }

    /// The `permissions` event: mode, rules, live grants, hooks.
    fn permissions(&self) -> AgentEvent {
        let rules = self.services.guardrails.rules();
        let texts = |list: &[crate::policy::Rule]| {
            list.iter()
                .map(|r| match r.origin {
                    crate::policy::RuleOrigin::User => r.text.clone(),
                    crate::policy::RuleOrigin::Workspace => format!("{} (workspace)", r.text),
                })
                .collect()
        };
        AgentEvent::Permissions {
            approval: self.chosen_mode(),
            rules: RuleLists {
                allow: texts(&rules.allow),
                ask: texts(&rules.ask),
                deny: texts(&rules.deny),
            },
            grants: self.services.authz.list(),
            hooks: {
                let label = |h: &HookSpec| match h.origin {
                    crate::policy::RuleOrigin::User => String::new(),
                    crate::policy::RuleOrigin::Workspace => " (workspace, trusted)".into(),
                };
                let state = self.state();
                let (hooks, pending) = (&state.user_hooks, &state.pending_hooks);
                let line = |event: &str, h: &HookSpec, tail: &str| {
                    format!("{event} {}: {}{tail}", h.matcher, h.command)
                };
                hooks
                    .before
                    .iter()
                    .map(|h| line("before_tool_call", h, &label(h)))
                    .chain(
                        hooks
                            .after
                            .iter()
                            .map(|h| line("after_tool_call", h, &label(h))),
                    )
                    .chain(
                        pending
                            .before
                            .iter()
                            .map(|h| line("before_tool_call", h, " (workspace, off: not trusted)")),
                    )
                    .chain(
                        pending
                            .after
                            .iter()
                            .map(|h| line("after_tool_call", h, " (workspace, off: not trusted)")),
                    )
                    .collect()
            },
        }
    }

    /// Ops answered the same way whether or not a turn runs.
    fn common_op(self: &Arc<Self>, op: &Op) -> bool {
        match op {
            Op::SetApprovalMode { mode } => self.set_mode(*mode),
            Op::SetModel { model } => {
                self.set_model(model.clone());
                self.learn_model(model.clone());
                // A resumed session goes on with the model chosen last.
                if let Some(h) = &self.services.history {
                    h.append_detached(crate::session::history::Item::Model {
                        model: model.clone(),
                    });
                }
            }
            Op::ReportCost => self.services.emitter.emit(self.cost()),
            Op::AttachImages { paths } => self.state().images.extend(paths.iter().cloned()),
            Op::SetEffort { effort } => {
                self.state().effort = *effort;
                // A resumed session thinks as hard as it was told last.
                if let Some(h) = &self.services.history {
                    h.append_detached(crate::session::history::Item::Effort { effort: *effort });
                }
            }
            Op::ListModels => {
                let provider = self.services.provider.clone();
                let emitter = self.services.emitter.clone();
                tokio::spawn(async move {
                    let event = match provider.models().await {
                        Ok(models) => AgentEvent::Models {
                            models,
                            error: None,
                        },
                        Err(e) => AgentEvent::Models {
                            models: None,
                            error: Some(e.to_string()),
                        },
                    };
                    emitter.emit(event);
                });
            }
            Op::ListPermissions => self.services.emitter.emit(self.permissions()),
            Op::ListJobs => self.services.emitter.emit(AgentEvent::Jobs {
                jobs: self.services.jobs.list(),
            }),
            Op::StopAgent { task } => {
                if !self.services.subagents.stop(task) {
                    tracing::debug!(%task, "stop of no running subagent");
                }
            }
            Op::KillJob { handle } => {
                let jobs = self.services.jobs.clone();
                match jobs.get(handle) {
                    Ok(job) => {
                        tokio::spawn(async move {
                            job.stop().await;
                            jobs.changed();
                        });
                    }
                    Err(e) => tracing::debug!(error = %e, "kill of no such job"),
                }
            }
            Op::RevokeGrant { id } => {
                if let (Some(key), Some(h)) =
                    (self.services.authz.revoke(*id), &self.services.history)
                {
                    h.append_detached(crate::session::history::Item::Revoke { key: Box::new(key) });
                }
                self.services.emitter.emit(self.permissions());
            }
            Op::TrustWorkspaceHooks => self.trust_workspace_hooks(),
            Op::TrustWorkspaceSkills => {
                if let Some(s) = &self.services.skills {
                    s.trust_pending();
                }
            }
            Op::TrustWorkspaceAgents => self.trust_workspace_agents(),
            Op::TrustWorkspaceMcp => {
                if let Some(m) = &self.services.mcp {
                    m.start_held();
                }
            }
            Op::RestartMcp { server } => {
                // The front end checked the name; a stale one is logged.
                if let Some(Err(e)) = self
                    .services
                    .mcp
                    .as_ref()
                    .map(|m| m.restart(server.as_deref()))
                {
                    tracing::warn!(error = %e, "MCP restart");
                }
            }
            Op::McpLogin { server } => {
                if let Some(Err(e)) = self.services.mcp.as_ref().map(|m| m.login(server)) {
                    tracing::warn!(error = %e, "MCP login");
                }
            }
            _ => return false,
        }
        true
    }
}

/// One conversation's history and totals.
#[derive(Debug, Default)]
pub(crate) struct Conversation {
    pub(crate) messages: Vec<Message>,
    pub(crate) usage: Usage,
    pub(crate) turns: u64,
    /// How the last turn ended, when not well, for the model to read
    /// before the next message (a resumed session).
    pub(crate) note: Option<String>,
    /// How full the model's context is.
    pub(crate) context: compact::ContextCount,
    /// Each turn of the conversation with the person's message: what a
    /// rewind can go back to.
    pub(crate) prompts: Vec<(u64, String)>,
}

impl Conversation {
    /// The conversation a session record was rebuilt into. A record is a
    /// file, which anything may have written: the grants it holds are not
    /// restored (the person grants again).
    fn resumed(r: crate::session::history::Rebuilt) -> Self {
        if !r.grants.is_empty() {
            tracing::info!(
                grants = r.grants.len(),
                "grants of the resumed session are not restored"
            );
        }
        Conversation {
            messages: r.messages,
            usage: r.usage,
            turns: r.turns,
            note: r.aborted,
            prompts: r.prompts,
            ..Conversation::default()
        }
    }
}

/// An agent, ready to spawn.
pub struct Agent {
    config: AgentConfig,
    provider: Arc<dyn Provider>,
    registry: Arc<ToolRegistry>,
    sources: Vec<Arc<dyn ToolSource>>,
    mcp: Option<Arc<crate::mcp::Manager>>,
    skills: Option<Arc<crate::skills::Catalog>>,
    agent_types: Option<Arc<crate::agents::Registry>>,
    history: Option<crate::session::history::Recorder>,
    resumed: Option<crate::session::history::Rebuilt>,
    workspace: Arc<Workspace>,
    approver: Option<Arc<dyn Approver>>,
    redactor: Redactor,
    journal: Option<Journal>,
}

impl Agent {
    pub fn new(
        config: AgentConfig,
        provider: Arc<dyn Provider>,
        registry: Arc<ToolRegistry>,
        workspace: Arc<Workspace>,
    ) -> Self {
        Self {
            config,
            provider,
            registry,
            sources: Vec::new(),
            mcp: None,
            skills: None,
            agent_types: None,
            history: None,
            resumed: None,
            workspace,
            approver: None,
            redactor: Redactor::default(),
            journal: None,
        }
    }

    /// MCP servers: their tools join the registry as they come and go,
    /// their states become `mcp_server_status` events, and they stop with
    /// the agent.
    #[must_use]
    pub fn with_mcp(mut self, manager: Arc<crate::mcp::Manager>) -> Self {
        self.sources.push(manager.clone());
        self.mcp = Some(manager);
        self
    }

    /// Offers `types` of subagents to `task` (`agent: NAME`).
    #[must_use]
    pub fn with_agent_types(mut self, types: Arc<crate::agents::Registry>) -> Self {
        self.agent_types = Some(types);
        self
    }

    /// Offers `skills` (the `skill` tool, `/NAME`).
    #[must_use]
    pub fn with_skills(mut self, skills: Arc<crate::skills::Catalog>) -> Self {
        self.sources.push(skills.clone());
        self.skills = Some(skills);
        self
    }

    /// Records the conversation in `recorder`; `resumed` is the
    /// conversation so far, rebuilt from it.
    #[must_use]
    pub fn with_history(
        mut self,
        recorder: crate::session::history::Recorder,
        resumed: Option<crate::session::history::Rebuilt>,
    ) -> Self {
        self.history = Some(recorder);
        self.resumed = resumed;
        self
    }

    /// Decides approvals with `approver` (headless mode). Without one, each
    /// approval is an `approval_requested` event answered by `Op::Decide`.
    #[must_use]
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Hides the secrets `redactor` knows at both boundaries: what goes
    /// to the model and what leaves as an event.
    #[must_use]
    pub fn with_redactor(mut self, redactor: Redactor) -> Self {
        self.redactor = redactor;
        self
    }

    #[must_use]
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.journal = Some(journal);
        self
    }

    /// Starts the agent task.
    pub fn spawn(self) -> AgentHandle {
        let (op_tx, op_rx) = mpsc::channel(OP_QUEUE);
        let (ev_tx, ev_rx) = mpsc::unbounded_channel();
        let pending = Arc::new(PendingApprovals::default());
        let approver = self
            .approver
            .unwrap_or_else(|| Arc::new(approval::ChannelApprover::new(pending.clone())));
        let emitter = Emitter {
            tx: ev_tx,
            journal: self.journal.map(|j| Arc::new(Mutex::new(j))),
            redactor: self.redactor.clone(),
        };
        let cfg = self.config;
        // Hooks the repository keeps in the workspace run at the person's
        // next commit.
        let hooks_path: Vec<String> = crate::sandbox::repo_code_paths(self.workspace.root())
            .iter()
            .map(|p| self.workspace.display_relative(p))
            .collect();
        let checkpoints = cfg.checkpoints.clone().map(|dir| {
            let turns = self
                .resumed
                .as_ref()
                .map(|r| r.checkpoints.clone())
                .unwrap_or_default();
            let start = self.resumed.as_ref().and_then(|r| r.start_tree.clone());
            undo::Checkpoints::new(dir, self.workspace.root().to_path_buf(), turns, start)
        });
        let emitter_for_jobs = emitter.clone();
        let desk = Arc::new(desk::Desk::new(
            emitter.clone(),
            approver.source() == crate::protocol::DecisionSource::User,
        ));
        // The instructions files in it go to the model.
        let system_prompt =
            crate::protocol::redact::redacted(cfg.system_prompt.clone(), &self.redactor);
        let shared = Arc::new(Shared {
            services: Services {
                provider: self.provider,
                tools: Toolset::new((*self.registry).clone(), self.sources),
                mcp: self.mcp.clone(),
                skills: self.skills.clone(),
                agent_types: self.agent_types.clone(),
                history: self.history.clone(),
                guardrails: Guardrails::new(
                    self.workspace.clone(),
                    Arc::new(cfg.rules.clone()),
                    cfg.shell_max_timeout_secs,
                ),
                workspace: self.workspace,
                authz: AuthorizationManager::new(cfg.grant_ttl, cfg.grant_max),
                approver,
                emitter,
                redactor: self.redactor,
                withheld: Arc::default(),
                checkpoints,
                desk,
                jobs: {
                    let jobs = Arc::new(crate::tools::jobs::Jobs::new(cfg.max_background));
                    let emitter = emitter_for_jobs;
                    jobs.on_change(move |jobs| emitter.emit(AgentEvent::Jobs { jobs }));
                    jobs
                },
                subagents: Arc::default(),
                _scratch: cfg.scratch.clone(),
            },
            settings: Settings::new(&cfg, system_prompt, hooks_path),
            state: Mutex::new(State::new(
                &cfg,
                self.resumed
                    .as_ref()
                    .map_or(&[][..], |r| r.by_agent.as_slice()),
            )),
        });
        shared.services.desk.attach(Arc::downgrade(&shared));
        shared.services.emitter.emit(AgentEvent::SessionStarted {
            session_id: cfg.session_id.clone(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            provider: shared.services.provider.name().to_string(),
            model: cfg.model.clone(),
            workspace: shared.services.workspace.root().to_path_buf(),
            approval: cfg.approval,
            tools: shared.services.tools.snapshot().registry.names(),
        });
        if let Some(manager) = &self.mcp {
            forward_mcp_status(manager.clone(), shared.services.emitter.clone());
        }
        let conversation = self.resumed.map(Conversation::resumed).unwrap_or_default();
        shared.learn_model(cfg.model.clone());
        if !conversation.messages.is_empty() {
            compact::report(&shared, &conversation);
        }
        let task = tokio::spawn(serve::run(shared, pending, op_rx, conversation));
        AgentHandle {
            ops: op_tx,
            events: ev_rx,
            task,
        }
    }
}

/// Turns MCP server states into events, those so far first. Ends when
/// the manager does.
fn forward_mcp_status(manager: Arc<crate::mcp::Manager>, emitter: Emitter) {
    let mut rx = manager.subscribe();
    let now = manager.statuses();
    drop(manager);
    tokio::spawn(async move {
        // A state already in the snapshot may also be on its way as an
        // event: each server's news is told once.
        let mut told: HashMap<String, McpStatus> = HashMap::new();
        let mut tell = |s: McpStatus| {
            if told.get(&s.server) != Some(&s) {
                told.insert(s.server.clone(), s.clone());
                emitter.emit(AgentEvent::McpServerStatus(s));
            }
        };
        for s in now {
            tell(s);
        }
        loop {
            match rx.recv().await {
                Ok(s) => tell(s),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    });
}
