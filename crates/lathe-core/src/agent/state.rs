//! A conversation's three parts: the handles it works through
//! ([`Services`]), what is fixed for it ([`Settings`]), and what it
//! changes as it goes ([`State`], behind the one lock of
//! [`super::Shared::state`]). A function that takes one part says what it
//! reads and changes.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::policy::{Approver, AuthorizationManager, Guardrails, HookSet, Redactor, Workspace};
use crate::protocol::{ApprovalMode, Denial, Effort};
use crate::provider::Provider;
use crate::provider::models::ModelInfo;
use crate::tools::Toolset;

use super::{desk, undo};

/// The handles a conversation works through (each shared, or safe to use
/// from many tasks at once).
pub(crate) struct Services {
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) tools: Toolset,
    pub(crate) mcp: Option<Arc<crate::mcp::Manager>>,
    /// The skills offered (and the workspace's waiting for trust).
    pub(crate) skills: Option<Arc<crate::skills::Catalog>>,
    /// The subagent types `task` offers (and the workspace's waiting for
    /// trust).
    pub(crate) agent_types: Option<Arc<crate::agents::Registry>>,
    /// The conversation's durable record.
    pub(crate) history: Option<crate::session::history::Recorder>,
    pub(crate) workspace: Arc<Workspace>,
    pub(crate) guardrails: Guardrails,
    pub(crate) authz: AuthorizationManager,
    pub(crate) approver: Arc<dyn Approver>,
    pub(crate) emitter: super::Emitter,
    /// Hides secrets at the two boundaries: [`super::Shared::to_model`]
    /// and the emitter.
    pub(crate) redactor: Redactor,
    /// The text of the files the read rules cover, kept from the model.
    pub(crate) withheld: Arc<crate::policy::withheld::Withheld>,
    /// Checkpoints of the workspace's files, for undo and rewind.
    pub(crate) checkpoints: Option<undo::Checkpoints>,
    /// The model's questions, its plan, the person's messages mid-turn.
    pub(crate) desk: Arc<desk::Desk>,
    /// The commands running in the background.
    pub(crate) jobs: Arc<crate::tools::jobs::Jobs>,
    /// The subagents running (what `Op::StopAgent` stops).
    pub(crate) subagents: Arc<super::subagents::Subagents>,
    /// Held so the directory lives as long as the agent.
    pub(crate) _scratch: Option<Arc<tempfile::TempDir>>,
}

/// What is fixed for the conversation.
pub(crate) struct Settings {
    pub(crate) system_prompt: String,
    pub(crate) max_tool_iterations: u32,
    pub(crate) tool_timeout: Duration,
    pub(crate) session_id: String,
    pub(crate) hook_env_remove: Vec<String>,
    pub(crate) hook_sandbox: Option<crate::sandbox::Settings>,
    /// The workspace files hooks run: writes to them always ask.
    pub(crate) protected_files: Vec<String>,
    pub(crate) context_window: Option<u64>,
    pub(crate) compact_at: u8,
    pub(crate) tool_search_at: u8,
    /// What the config says of models.
    pub(crate) configured_models: BTreeMap<String, ModelInfo>,
    /// The judge's model, when one reviews risky calls.
    pub(crate) judge: Option<String>,
    /// The caps as configured (what a raise adds to).
    pub(crate) caps: crate::protocol::budget::Caps,
    /// How many times the same call may come in a turn.
    pub(crate) repeat_calls: u32,
}

/// What the conversation changes as it goes.
pub(crate) struct State {
    pub(crate) model: String,
    pub(crate) mode: ApprovalMode,
    /// `/effort`: `None` leaves it to the config and the server.
    pub(crate) effort: Option<Effort>,
    /// A turn in plan mode runs: read-only tools, read-only mode.
    pub(crate) planning: bool,
    /// An `/init` turn runs: its commands in a read-only sandbox.
    pub(crate) studying: bool,
    pub(crate) user_hooks: HookSet,
    /// The workspace's hooks, until the person trusts them.
    pub(crate) pending_hooks: HookSet,
    /// Each call of the round running: its place and the round's size.
    pub(crate) round: HashMap<String, [u32; 2]>,
    /// The turn waiting to hear whether to go on past its tool rounds.
    pub(crate) limit_answer: Option<(u64, tokio::sync::oneshot::Sender<bool>)>,
    /// What the server said of its models, as asked.
    pub(crate) server_models: HashMap<String, ModelInfo>,
    /// Images for the next turn (`Op::AttachImages`).
    pub(crate) images: Vec<PathBuf>,
    /// How full the context was at the last report (tokens).
    pub(crate) context_tokens: u64,
    /// What each model used, this turn's spending, and the caps.
    pub(crate) budget: super::budget::Budget,
    /// What each call waiting for approval needed, by call id.
    pub(crate) asked: HashMap<String, Vec<String>>,
    /// The calls of this turn that were denied (for `turn_completed`).
    pub(crate) denied: Vec<Denial>,
}

impl Settings {
    /// The conversation's settings from its config; `hooks_path` is the
    /// workspace's own code the hooks may run.
    pub(crate) fn new(
        cfg: &super::AgentConfig,
        system_prompt: String,
        hooks_path: Vec<String>,
    ) -> Self {
        Settings {
            system_prompt,
            max_tool_iterations: cfg.max_tool_iterations.max(1),
            tool_timeout: cfg.tool_timeout,
            session_id: cfg.session_id.clone(),
            hook_env_remove: cfg.hook_env_remove.clone(),
            hook_sandbox: cfg.hook_sandbox.clone(),
            protected_files: {
                let mut files = cfg.hooks.files();
                files.extend(cfg.pending_hooks.files());
                files.extend(hooks_path);
                files.extend(cfg.protected.iter().cloned());
                files.sort();
                files.dedup();
                files
            },
            context_window: cfg.context_window,
            compact_at: cfg.compact_at,
            tool_search_at: cfg.tool_search_at,
            configured_models: cfg.models.clone(),
            judge: cfg.judge.clone(),
            caps: cfg.caps,
            repeat_calls: cfg.repeat_calls.max(2),
        }
    }
}

impl State {
    /// The state a conversation starts in; `spent` is what a resumed
    /// session had used.
    pub(crate) fn new(
        cfg: &super::AgentConfig,
        spent: &[crate::protocol::budget::AgentSpend],
    ) -> Self {
        State {
            model: cfg.model.clone(),
            mode: cfg.approval,
            effort: None,
            planning: false,
            studying: false,
            user_hooks: cfg.hooks.clone(),
            pending_hooks: cfg.pending_hooks.clone(),
            round: HashMap::new(),
            limit_answer: None,
            server_models: HashMap::new(),
            images: Vec::new(),
            context_tokens: 0,
            budget: super::budget::Budget::new(spent, cfg.caps),
            asked: HashMap::new(),
            denied: Vec::new(),
        }
    }
}
