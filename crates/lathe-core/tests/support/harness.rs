//! The agent harness shared by the library-level integration tests: a
//! real provider talking to the scripted mock LLM, a real workspace, and
//! helpers to run turns and read their events.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use lathe_core::agent::{Agent, AgentConfig, AgentHandle};
use lathe_core::policy::{HeadlessApprover, HookSet, Redactor, Rules, Workspace};
use lathe_core::protocol::{AgentEvent, ApprovalDecision, ApprovalMode, ErrorKind, Op, ToolStatus};
use lathe_core::provider::{self, ProviderKind, ProviderSettings, RetryPolicy};
use lathe_core::session::Journal;
use lathe_core::tools::{BuiltinSettings, ToolRegistry};
use serde_json::Value;

use super::mock_llm::{MockLlm, Reply, Step};

pub const KINDS: [ProviderKind; 2] = [ProviderKind::OpenAi, ProviderKind::Anthropic];
pub const KEY: &str = "test-key-0123456789abcdef";

pub fn settings(kind: ProviderKind, mock: &MockLlm) -> ProviderSettings {
    let url = match kind {
        ProviderKind::OpenAi => mock.openai_url(),
        ProviderKind::Anthropic => mock.anthropic_url(),
    };
    let mut s = ProviderSettings::new(kind, url);
    s.api_key = lathe_core::secret::Secret::new(KEY);
    s.retry = RetryPolicy {
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        ..RetryPolicy::default()
    };
    s
}

pub struct Setup {
    pub kind: ProviderKind,
    pub mode: ApprovalMode,
    pub max_iterations: u32,
    pub interactive: bool,
    pub registry: Option<ToolRegistry>,
    pub journal_dir: Option<std::path::PathBuf>,
    pub rules: Rules,
    pub hooks: HookSet,
    /// Lathe's data directory: the session is recorded under it and the
    /// files checkpointed (undo and rewind work).
    pub data_dir: Option<std::path::PathBuf>,
    /// The session to go on with (with `data_dir`).
    pub resume: Option<String>,
    /// The system prompt Lathe builds for the workspace (its AGENTS.md
    /// included) rather than a fixed line.
    pub real_prompt: bool,
    /// The judge's model (`[judge] model`).
    pub judge: Option<String>,
}

impl Setup {
    pub fn new(kind: ProviderKind) -> Self {
        Self {
            kind,
            mode: ApprovalMode::FullAuto,
            max_iterations: 20,
            interactive: false,
            registry: None,
            journal_dir: None,
            rules: Rules::default(),
            hooks: HookSet::default(),
            data_dir: None,
            resume: None,
            real_prompt: false,
            judge: None,
        }
    }

    pub fn mode(mut self, mode: ApprovalMode) -> Self {
        self.mode = mode;
        self
    }

    pub fn spawn(self, mock: &MockLlm, ws: &Path) -> AgentHandle {
        let workspace = Arc::new(Workspace::new(ws).unwrap());
        let registry = self
            .registry
            .unwrap_or_else(|| ToolRegistry::with_defaults(&builtin_settings()).unwrap());
        let system = if self.real_prompt {
            lathe_core::agent::prompt::build(&workspace)
        } else {
            "You are a test.".to_string()
        };
        let mut cfg = AgentConfig::new("mock-model", system);
        cfg.approval = self.mode;
        cfg.max_tool_iterations = self.max_iterations;
        cfg.rules = self.rules;
        cfg.hooks = self.hooks;
        cfg.hook_sandbox = Some(builtin_settings().sandbox);
        cfg.checkpoints = self.data_dir.clone();
        cfg.judge = self.judge.clone();
        if let Some(id) = &self.resume {
            cfg.session_id = id.clone();
        }
        let provider = provider::build(settings(self.kind, mock)).unwrap();
        let mut agent = Agent::new(cfg.clone(), provider, Arc::new(registry), workspace)
            .with_redactor(Redactor::new([KEY.to_string()]));
        if !self.interactive {
            agent = agent.with_approver(Arc::new(HeadlessApprover));
        }
        if let Some(data) = &self.data_dir {
            let sessions = data.join("sessions");
            let resumed = self.resume.as_ref().map(|id| {
                let records = lathe_core::session::history::read(
                    &lathe_core::session::history::history_path(&sessions, id),
                )
                .unwrap();
                lathe_core::session::history::rebuild(&records, &Redactor::new([KEY.to_string()]))
            });
            let recorder = lathe_core::session::history::Recorder::open(
                &sessions,
                &cfg.session_id,
                Arc::new(Redactor::new([KEY.to_string()])),
            )
            .unwrap();
            agent = agent.with_history(recorder, resumed);
        }
        if let Some(dir) = self.journal_dir {
            agent = agent.with_journal(Journal::create(&dir, &cfg.session_id).unwrap());
        }
        agent.spawn()
    }
}

/// Sends `prompt` and collects events up to the end of the turn.
pub async fn turn(handle: &mut AgentHandle, prompt: &str) -> Vec<AgentEvent> {
    handle
        .ops
        .send(Op::UserInput {
            text: prompt.into(),
        })
        .await
        .unwrap();
    collect_turn(handle).await
}

pub async fn collect_turn(handle: &mut AgentHandle) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let ev = tokio::time::timeout_at(deadline, handle.events.recv())
            .await
            .expect("turn did not end in time")
            .expect("agent stopped");
        let end = ev.ends_turn();
        events.push(ev);
        if end {
            return events;
        }
    }
}

pub async fn run(
    setup: Setup,
    steps: Vec<Step>,
    ws: &Path,
    prompt: &str,
) -> (Vec<AgentEvent>, MockLlm) {
    let mock = MockLlm::start(steps).await;
    let mut handle = setup.spawn(&mock, ws);
    let events = turn(&mut handle, prompt).await;
    (events, mock)
}

/// One call, then a closing text answer; returns the call's outcome too.
pub async fn run_one(
    setup: Setup,
    ws: &Path,
    tool: &str,
    args: Value,
) -> (
    (ToolStatus, Value, lathe_core::protocol::ResultMetadata),
    Vec<AgentEvent>,
) {
    let steps = vec![
        Step::Reply(Reply::tools().call("c1", tool, args)),
        Step::Reply(Reply::text("done")),
    ];
    let (events, _mock) = run(setup, steps, ws, "go").await;
    (result_of(&events, "c1"), events)
}

pub fn finished(
    events: &[AgentEvent],
) -> Vec<(
    String,
    ToolStatus,
    Value,
    lathe_core::protocol::ResultMetadata,
)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallFinished {
                tool,
                status,
                content,
                metadata,
                ..
            } => Some((tool.clone(), *status, content.clone(), metadata.clone())),
            _ => None,
        })
        .collect()
}

/// The outcome of one call (concurrent calls finish in any order).
pub fn result_of(
    events: &[AgentEvent],
    id: &str,
) -> (ToolStatus, Value, lathe_core::protocol::ResultMetadata) {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolCallFinished {
                call_id,
                status,
                content,
                metadata,
                ..
            } if call_id == id => Some((*status, content.clone(), metadata.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id}"))
}

pub fn final_text(events: &[AgentEvent]) -> Option<String> {
    events.iter().find_map(|e| match e {
        AgentEvent::TurnCompleted { text, .. } => Some(text.clone()),
        _ => None,
    })
}

pub fn turn_error(events: &[AgentEvent]) -> Option<(ErrorKind, String)> {
    events.iter().find_map(|e| match e {
        AgentEvent::Error { kind, message, .. } => Some((*kind, message.clone())),
        _ => None,
    })
}

pub fn error_text(content: &Value) -> String {
    content["error"].as_str().unwrap_or_default().to_string()
}

/// Runs one prompt, answering each approval request with `decide`.
pub async fn drive(
    handle: &mut AgentHandle,
    prompt: &str,
    mut decide: impl FnMut(&AgentEvent) -> ApprovalDecision,
) -> Vec<AgentEvent> {
    handle
        .ops
        .send(Op::UserInput {
            text: prompt.into(),
        })
        .await
        .unwrap();
    let mut events = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), handle.events.recv())
            .await
            .unwrap()
            .unwrap();
        if let AgentEvent::ApprovalRequested(lathe_core::protocol::ApprovalRequest {
            call_id,
            ..
        }) = &ev
        {
            let decision = decide(&ev);
            handle
                .ops
                .send(Op::Decide {
                    call_id: call_id.clone(),
                    decision,
                })
                .await
                .unwrap();
        }
        let end = ev.ends_turn();
        events.push(ev);
        if end {
            return events;
        }
    }
}

pub fn asked(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ApprovalRequested(lathe_core::protocol::ApprovalRequest {
                needs, ..
            }) => Some(
                needs
                    .iter()
                    .map(|n| n.what.clone())
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            _ => None,
        })
        .collect()
}

/// The built-in tools as the binary configures them, with the sandbox
/// helper being the `lathe` binary cargo built for these tests. Their
/// scratch directories are kept under cargo's `target/tmp` (the system's
/// temporary directory stays clean).
pub fn builtin_settings() -> BuiltinSettings {
    let mut settings = BuiltinSettings::default();
    settings.sandbox.helper = Some(env!("CARGO_BIN_EXE_lathe-sandbox-helper").into());
    settings.memory_dir = Some(
        tempfile::Builder::new()
            .prefix("lathe-test-memory-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap()
            .keep(),
    );
    // The session's own directories, as the binary gives them.
    let own = tempfile::Builder::new()
        .prefix("lathe-test-tmp-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
        .keep();
    for sub in ["tmp", "served"] {
        std::fs::create_dir(own.join(sub)).unwrap();
    }
    settings.sandbox.private_tmp = Some(own.join("tmp"));
    settings.sandbox.served = Some(own.join("served"));
    settings
}
