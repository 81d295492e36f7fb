//! The only contract between Lathe's core and its front ends.
//!
//! `Op` goes into the agent task (user input, interrupt, approval decisions,
//! shutdown); `AgentEvent` comes out. One event type serves three consumers:
//! the TUI, the headless printer (`lathe exec --json` writes each event as one
//! JSON line) and the session journal. Nothing here knows about terminals,
//! HTTP or the file system.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod budget;
pub mod change;
mod event;
pub mod humanize;
pub mod operation;
pub mod plan_and_questions;
pub mod redact;
pub mod summary;
pub mod text;
pub mod visible;

pub use event::AgentEvent;
pub use plan_and_questions::{AskedQuestion, JobInfo, PlanStep, StepStatus};
pub use summary::Summary;

use crate::operation::Operation;
use crate::redact::{Redact, Scrub};

/// A live conversation grant, for display.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantInfo {
    pub id: u64,
    pub covers: String,
    /// Time left unless it is used again.
    pub expires_in_secs: u64,
    /// How long it lasts unused (each use starts this again).
    #[serde(default)]
    pub idle_secs: u64,
}

/// A call that was denied: by the approval mode or the person (`needed`
/// says what asked for approval), or by a rule or a guardrail (`reason`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Denial {
    pub call_id: String,
    pub tool: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needed: Vec<String>,
    pub reason: String,
}

/// Paths and commands are text from outside.
impl Redact for Denial {
    fn redact(&mut self, s: &dyn Scrub) {
        self.needed.redact(s);
        self.reason.redact(s);
    }
}

/// A file a message mentions (`@path`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// As mentioned, or relative to the workspace once resolved.
    pub path: String,
    /// Bytes attached (0 when not attached).
    pub bytes: usize,
    pub attached: bool,
    /// What the person should know: "its first 100 KiB", "outside the
    /// workspace"…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The `tool_progress` stream of a `message` to the `terminal` channel: a
/// front end raises a desktop notification with its text.
pub const NOTIFY_STREAM: &str = "notify";

/// How much the agent may do without asking (DESIGN.md, "Approval modes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    ReadOnly,
    Ask,
    AutoEdit,
    FullAuto,
}

impl ApprovalMode {
    pub const ALL: [ApprovalMode; 4] = [
        ApprovalMode::ReadOnly,
        ApprovalMode::Ask,
        ApprovalMode::AutoEdit,
        ApprovalMode::FullAuto,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::ReadOnly => "read-only",
            ApprovalMode::Ask => "ask",
            ApprovalMode::AutoEdit => "auto-edit",
            ApprovalMode::FullAuto => "full-auto",
        }
    }

    /// Rank by permissiveness: `read-only` < `ask` < `auto-edit` < `full-auto`.
    pub fn rank(self) -> u8 {
        match self {
            ApprovalMode::ReadOnly => 0,
            ApprovalMode::Ask => 1,
            ApprovalMode::AutoEdit => 2,
            ApprovalMode::FullAuto => 3,
        }
    }
}

impl fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ApprovalMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase().replace('_', "-");
        Self::ALL
            .into_iter()
            .find(|m| m.as_str() == wanted)
            .ok_or_else(|| {
                format!(
                    "unknown approval mode `{s}` (expected one of: read-only, ask, auto-edit, full-auto)"
                )
            })
    }
}

/// What kind of work a tool does, as front ends, policy and subagents read
/// it (never by its name): a read of one file, a listing, a search, a
/// command (run, read or stopped), a file change, the web, a question to
/// the person, the model's plan, a subagent's job, or something else (a
/// memory note, a message, any MCP tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    Read,
    List,
    Search,
    Shell,
    Edit,
    Web,
    Ask,
    Plan,
    Task,
    Other,
}

/// What a tool does to the world; with the approval mode it decides whether
/// a call needs approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    Read,
    Write,
    Exec,
    Network,
    External,
}

/// A person's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this one call.
    ApproveOnce,
    /// Run it, and grant the same operation for the rest of the conversation.
    ApproveForConversation,
    /// Run this one call with only these hunks (0-based, in the order of
    /// the request's `change`) of its file change; none is a denial.
    ApproveHunks { hunks: Vec<usize> },
    /// Write this content instead of the proposed one (the person edited
    /// the change); the model is told.
    ApproveEdited { content: String },
    /// Do not run it; `message`, when given, tells the model what to do instead.
    Deny { message: Option<String> },
}

/// Input to the agent task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// Start a turn with this prompt (queued if a turn is running).
    UserInput { text: String },
    /// List the commands running in the background, with their last
    /// lines (answered with `jobs`).
    ListJobs,
    /// Stop a command running in the background (answered with `jobs`).
    KillJob { handle: String },
    /// Stop the subagent of the `task` call `task` and everything under
    /// it (its requests, calls and background commands); its model is
    /// told the person stopped it. The turn goes on.
    StopAgent { task: String },
    /// Start a turn in plan mode: the model has only the read-only tools
    /// (nothing may change, whatever the approval mode) and is told to
    /// propose a plan (`update_plan`) for the person to approve.
    Plan { text: String },
    /// Cancel the running turn and its running tools.
    Interrupt,
    /// Answer an `approval_requested` event.
    Decide {
        call_id: String,
        decision: ApprovalDecision,
    },
    /// Change the approval mode for the following calls.
    SetApprovalMode { mode: ApprovalMode },
    /// Change the model for the following requests.
    SetModel { model: String },
    /// Change how hard the model thinks (`None`: the server's default).
    SetEffort {
        #[serde(default)]
        effort: Option<Effort>,
    },
    /// Report what the conversation has cost, per model (answered with
    /// a `cost` event).
    ReportCost,
    /// Images (files the person named) for the next turn's message.
    AttachImages { paths: Vec<PathBuf> },
    /// Ask the provider which models it serves (answered with a `models`
    /// event).
    ListModels,
    /// Forget the conversation and every grant.
    Clear,
    /// Report the mode, the permission rules and the live grants
    /// (answered with a `permissions` event).
    ListPermissions,
    /// Revoke one conversation grant (answered with a `permissions` event).
    RevokeGrant { id: u64 },
    /// The person trusts the workspace's hooks: run them from now on.
    TrustWorkspaceHooks,
    /// Start the workspace's MCP servers (the person trusts them).
    TrustWorkspaceMcp,
    /// Offer the workspace's skills (the person trusts them).
    TrustWorkspaceSkills,
    /// Offer the workspace's subagent types (the person trusts them).
    TrustWorkspaceAgents,
    /// Undo (`files`) and/or forget (`conversation`) what happened since
    /// turn `turn` began; no turn: the last turn that changed files
    /// (`/undo`). Answered with a `rewound` event. Only while no turn runs
    /// (sent during one, it waits for the turn's end).
    Rewind {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn: Option<u64>,
        files: bool,
        conversation: bool,
        /// Only say what it would do (`rewound` with `preview`): the
        /// files it would put back and remove, those it cannot, and those
        /// changed since, which stop it.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        preview: bool,
    },
    /// List the turns a rewind can go back to (answered with `turns`).
    ListTurns,
    /// Every change of the session to the workspace's files, as one diff
    /// against the files before the session changed them (answered with
    /// `session_diff`).
    SessionDiff,
    /// Restart one MCP server (by name), or every one: its process ends
    /// and it starts again, its failures forgotten.
    RestartMcp { server: Option<String> },
    /// Log in to an MCP server that asks (`/mcp login NAME`): its status
    /// says where to open the login, then how it went.
    McpLogin { server: String },
    /// Summarize the older turns now (`/compact`), while no turn runs.
    Compact,
    /// Answer a `tool_limit_reached` question: go on for more rounds, or
    /// end the turn.
    ContinueTurn { turn_id: u64, go_on: bool },
    /// Answer a `question_asked` event (`ask_user`); `None`: no answer,
    /// the model decides itself.
    Answer {
        call_id: String,
        #[serde(default)]
        answer: Option<String>,
    },
    /// A message for the running turn: it goes to the model with its next
    /// request (marked as sent while it worked), or, if the turn ends
    /// first, starts the next turn. With no turn running, a `user_input`.
    Steer { text: String },
    /// Stop the agent task.
    Shutdown,
}

/// Token counts as reported by the provider, and what they cost.
///
/// `input_tokens` is every input token of the request, those read from
/// and written to the server's prompt cache included; `output_tokens`
/// every output token, reasoning included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache (billed at a discount).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub cache_read_tokens: u64,
    /// Input tokens written to the prompt cache (Anthropic bills them
    /// above the input price).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub cache_write_tokens: u64,
    /// Output tokens the model spent thinking.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub reasoning_tokens: u64,
    /// What these tokens cost in US dollars, when the model's prices are
    /// known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

/// Dollars kept to a billionth: sums of prices stay readable in JSON
/// (`0.0003738`, not `0.00037380000000000003`).
pub fn round_usd(usd: f64) -> f64 {
    (usd * 1e9).round() / 1e9
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        // A server's numbers are not trusted to be sane.
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(other.cache_write_tokens);
        self.reasoning_tokens = self.reasoning_tokens.saturating_add(other.reasoning_tokens);
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (Some(a), Some(b)) => Some(round_usd(a + b)),
            (a, b) => a.or(b),
        };
    }

    /// Input tokens billed at the full input price.
    pub fn uncached_input(&self) -> u64 {
        self.input_tokens
            .saturating_sub(self.cache_read_tokens)
            .saturating_sub(self.cache_write_tokens)
    }

    /// The share of input tokens read from the cache (0 to 1).
    pub fn cache_hit_share(&self) -> f64 {
        if self.input_tokens == 0 {
            0.0
        } else {
            self.cache_read_tokens as f64 / self.input_tokens as f64
        }
    }
}

/// How hard a reasoning model thinks (`reasoning_effort`, `/effort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    /// No thinking where the server allows it (`none`; Anthropic: off).
    None,
    Minimal,
    Low,
    Medium,
    High,
    /// The most the model offers (`xhigh` on OpenAI's newest models).
    Xhigh,
}

impl Effort {
    pub const ALL: [Effort; 6] = [
        Effort::None,
        Effort::Minimal,
        Effort::Low,
        Effort::Medium,
        Effort::High,
        Effort::Xhigh,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Effort::None => "none",
            Effort::Minimal => "minimal",
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
            Effort::Xhigh => "xhigh",
        }
    }

    /// Anthropic's thinking budget for this effort, in tokens (`None`:
    /// thinking off).
    pub fn thinking_budget(self) -> Option<u32> {
        match self {
            Effort::None => None,
            Effort::Minimal => Some(1_024),
            Effort::Low => Some(4_000),
            Effort::Medium => Some(10_000),
            Effort::High => Some(32_000),
            Effort::Xhigh => Some(63_999),
        }
    }
}

impl std::str::FromStr for Effort {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let w = s.trim().to_ascii_lowercase();
        let w = match w.as_str() {
            "off" => "none",
            "max" | "x-high" | "extra-high" => "xhigh",
            "med" => "medium",
            other => other,
        };
        Self::ALL
            .into_iter()
            .find(|e| e.as_str() == w)
            .ok_or_else(|| {
                format!(
                    "unknown effort `{s}` (expected one of: none, minimal, low, medium, high, xhigh)"
                )
            })
    }
}

impl std::fmt::Display for Effort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why the model stopped, the same words whatever the wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its answer.
    #[default]
    EndTurn,
    /// It asked for tools.
    ToolUse,
    /// It was cut at the output token limit: the answer is incomplete.
    MaxTokens,
    /// It refused (OpenAI's `refusal`, Anthropic's `stop_reason: "refusal"`).
    Refusal,
    /// A content filter stopped it.
    ContentFilter,
    /// The server paused a long turn (Anthropic's `pause_turn`): sending
    /// the conversation again lets it go on.
    PauseTurn,
    /// Lathe stopped the turn between steps: a budget cap was reached
    /// (`budget_reached` says which).
    Budget,
    /// Lathe stopped the turn: the model repeated a call, or got the same
    /// failure again and again (`loop_detected` says which).
    Loop,
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl StopReason {
    /// The reason a server's own word names (`finish_reason`,
    /// `stop_reason`, `incomplete_details.reason`).
    pub fn from_wire(word: &str) -> Self {
        match word {
            "tool_calls" | "tool_use" | "function_call" => StopReason::ToolUse,
            "length" | "max_tokens" | "max_output_tokens" | "model_context_window_exceeded" => {
                StopReason::MaxTokens
            }
            "content_filter" | "content_filtered" | "safety" | "recitation" => {
                StopReason::ContentFilter
            }
            "refusal" => StopReason::Refusal,
            "pause_turn" => StopReason::PauseTurn,
            _ => StopReason::EndTurn,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::Refusal => "refusal",
            StopReason::ContentFilter => "content_filter",
            StopReason::PauseTurn => "pause_turn",
            StopReason::Budget => "budget",
            StopReason::Loop => "loop",
        }
    }

    /// What a person is told when a turn ends this way; `None` for a
    /// plain end.
    pub fn notice(self) -> Option<&'static str> {
        match self {
            StopReason::MaxTokens => Some(
                "the answer was cut at the output token limit: ask the model to continue, or \
                 raise max_tokens",
            ),
            StopReason::Refusal => Some("the model refused to answer this request"),
            StopReason::ContentFilter => {
                Some("the server's content filter stopped the answer; it is incomplete")
            }
            StopReason::PauseTurn => Some("the server paused the turn; send a message to go on"),
            StopReason::Budget => Some("stopped between steps: a budget cap was reached"),
            StopReason::Loop => Some("stopped: the model repeated the same call"),
            StopReason::EndTurn | StopReason::ToolUse => None,
        }
    }
}

/// The outcome of one tool call as the model and the person see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Ok,
    Error,
    Denied,
}

/// Facts about a tool result, beside its content.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultMetadata {
    /// Size of the full serialized result before truncation.
    pub bytes: usize,
    /// Whether what the model sees was cut (by the pipeline or by the tool).
    pub truncated: bool,
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    /// How many secrets were hidden from what the model sees.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub redactions: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One normalized tool result: the same shape for every tool, built-in or MCP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub call_id: String,
    pub status: ToolStatus,
    pub content: Value,
    pub metadata: ResultMetadata,
}

impl ToolResult {
    /// The text the model receives: the content serialized as JSON.
    pub fn model_text(&self) -> String {
        self.content.to_string()
    }

    pub fn is_error(&self) -> bool {
        self.status != ToolStatus::Ok
    }
}

/// What the guardrail stage decided about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GuardrailOutcome {
    Allow,
    Modify,
    Deny,
}

/// One part of a call that needs approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalNeed {
    /// What it does: "run `rm -v x`", "write src/a.rs".
    pub what: String,
    pub reason: String,
}

/// What "approve for this conversation" would grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantOffer {
    /// Each operation the grant covers, as the person should read it.
    pub covers: Vec<String>,
    pub ttl_secs: u64,
}

/// The permission rules in force, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleLists {
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
}

/// How an approval was settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionSource {
    /// A person answered the dialog.
    User,
    /// An earlier grant covered the call.
    Grant,
    /// The approval mode decided without a person (headless `ask`).
    Policy,
}

/// Why a turn ended without an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Provider,
    MaxIterations,
    Interrupted,
    Internal,
    /// A hook (`user_prompt_submit`) blocked the message.
    Blocked,
    /// A command the message was could not be carried out (an MCP
    /// prompt's arguments missing, its server's error): nothing was sent.
    Command,
}

/// What an MCP server is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpState {
    /// Connecting, or restarting.
    Starting,
    Ready,
    /// Did not start, or died; tried again (with backoff) when next used.
    Failed,
    /// Waiting for the person to trust the workspace's servers.
    Untrusted,
    /// The server asks for a login (`lathe mcp login NAME`, or `/mcp
    /// login NAME`); not tried again until one is made.
    NeedsLogin,
    /// A login is under way: the message says where to open it.
    LoggingIn,
}

impl McpState {
    pub fn as_str(self) -> &'static str {
        match self {
            McpState::Starting => "starting",
            McpState::Ready => "ready",
            McpState::Failed => "failed",
            McpState::Untrusted => "untrusted",
            McpState::NeedsLogin => "needs login",
            McpState::LoggingIn => "logging in",
        }
    }
}

/// What one model used in a conversation (`cost`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelUsage {
    pub model: String,
    pub usage: Usage,
}

/// A turn a rewind can go back to (`turns`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnInfo {
    pub turn_id: u64,
    /// The person's message (its start).
    pub prompt: String,
    /// Files it changed can be restored to before it.
    pub files: bool,
    /// The conversation can be rewound to before it.
    pub conversation: bool,
}

/// One MCP server as `mcp_server_status`, `/mcp` and `lathe mcp list`
/// show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpStatus {
    pub server: String,
    pub state: McpState,
    /// Its tools, as the model calls them (`server__tool`).
    #[serde(default)]
    pub tools: Vec<String>,
    /// What it runs or reaches.
    pub endpoint: String,
    /// Why it failed, or what it is waiting for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Its prompts, which the person sends as `/server:prompt ARGS`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<McpPrompt>,
    /// Its resources, which the person mentions as `@server:uri`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<McpResource>,
}

/// A prompt an MCP server offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpPrompt {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Its arguments, in order: what `/server:prompt` takes after it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<McpPromptArgument>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpPromptArgument {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default)]
    pub required: bool,
}

/// A resource an MCP server offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpResource {
    pub uri: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// A call that needs approval, as the person is asked about it: built
/// once by the pipeline, sent as `approval_requested`, answered with
/// `Op::Decide`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    pub call_id: String,
    pub tool: String,
    pub arguments: Value,
    pub effect: Effect,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operations: Vec<Operation>,
    /// The parts that need approval (a chain's other parts are covered).
    pub needs: Vec<ApprovalNeed>,
    /// Every reason, in one sentence.
    pub reason: String,
    /// What "approve for this conversation" grants; absent when no grant
    /// may cover this call (a complex line, a protected file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<GrantOffer>,
    /// For file changes: the unified diff the call would apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// The same change as data: its file, the hash of the content it was
    /// computed from, and its hunks (the diff's `@@` sections, in order),
    /// which `approve_hunks` picks from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<Box<change::FileChange>>,
    /// Where the call is among the calls the model made at once (`[2,
    /// 3]`: the second of three), when it made several: more questions
    /// may follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<[u32; 2]>,
}

/// The call's arguments, what it does, why it asks, what `a` would grant
/// and the diff: paths are text from outside too (a file may be named
/// after a key). What is written (and opened by `E`) is the file's own
/// text, kept out of events.
impl Redact for ApprovalRequest {
    fn redact(&mut self, s: &dyn Scrub) {
        self.arguments.redact(s);
        self.operations.redact(s);
        for need in &mut self.needs {
            need.what.redact(s);
            need.reason.redact(s);
        }
        self.reason.redact(s);
        if let Some(grant) = &mut self.grant {
            grant.covers.redact(s);
        }
        self.diff.redact(s);
        self.change.redact(s);
    }
}

/// What the model is given of a tool's outcome.
impl Redact for ToolResult {
    fn redact(&mut self, s: &dyn Scrub) {
        self.content.redact(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_mode_round_trips_through_text() {
        for mode in ApprovalMode::ALL {
            assert_eq!(mode.as_str().parse::<ApprovalMode>(), Ok(mode));
        }
        assert_eq!(
            "Full_Auto".parse::<ApprovalMode>(),
            Ok(ApprovalMode::FullAuto)
        );
        let err = "sometimes".parse::<ApprovalMode>().unwrap_err();
        assert!(
            err.contains("read-only, ask, auto-edit, full-auto"),
            "{err}"
        );
    }

    #[test]
    fn events_serialize_with_a_snake_case_type_tag() {
        let ev = AgentEvent::ToolCallFinished {
            call_id: "c1".into(),
            tool: "read_file".into(),
            status: ToolStatus::Ok,
            exit_code: None,
            content: serde_json::json!({"content": "x"}),
            metadata: ResultMetadata::default(),
            diff: None,
            change: None,
            summary: Some(Summary::Lines {
                start: 1,
                end: 3,
                total: 9,
            }),
        };
        let v = serde_json::to_value(&ev).unwrap();
        assert_eq!(v["type"], "tool_call_finished");
        assert_eq!(v["summary"]["kind"], "lines");
        assert_eq!(v["summary"]["total"], 9);
        assert_eq!(v["call_id"], "c1");
        assert_eq!(v["status"], "ok");
        assert_eq!(ev.kind(), "tool_call_finished");
        let back: AgentEvent = serde_json::from_value(v).unwrap();
        assert_eq!(back, ev);
    }

    #[test]
    fn approval_decided_carries_a_flat_decision() {
        let ev = AgentEvent::ApprovalDecided {
            call_id: "c".into(),
            tool: "write_file".into(),
            decision: ApprovalDecision::Deny {
                message: Some("no".into()),
            },
            source: DecisionSource::User,
        };
        let v = serde_json::to_value(&ev).unwrap();
        assert_eq!(v["type"], "approval_decided");
        assert_eq!(v["decision"], "deny");
        assert_eq!(v["message"], "no");
        assert_eq!(v["source"], "user");
        assert_eq!(serde_json::from_value::<AgentEvent>(v).unwrap(), ev);
    }

    #[test]
    fn decisions_serialize_with_a_decision_tag() {
        let d = ApprovalDecision::Deny {
            message: Some("use git mv".into()),
        };
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["decision"], "deny");
        assert_eq!(v["message"], "use git mv");
    }
}
