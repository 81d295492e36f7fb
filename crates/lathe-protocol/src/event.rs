//! What the agent tells a front end: [`AgentEvent`], one JSON object
//! with a `type` tag per event (`--json` prints them as they come), and
//! which of their texts come from outside Lathe (for redaction).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::operation::Operation;
use crate::redact::{Redact, Scrub};
use crate::{
    ApprovalDecision, ApprovalMode, ApprovalRequest, AskedQuestion, Attachment, DecisionSource,
    Denial, Effect, ErrorKind, GrantInfo, GuardrailOutcome, JobInfo, McpStatus, ModelUsage,
    PlanStep, ResultMetadata, RuleLists, StopReason, ToolStatus, TurnInfo, Usage, change,
};

/// Output of the agent task. Serialized as one JSON object with a `type` tag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    SessionStarted {
        session_id: String,
        version: String,
        provider: String,
        model: String,
        workspace: PathBuf,
        approval: ApprovalMode,
        tools: Vec<String>,
    },
    TurnStarted {
        turn_id: u64,
        prompt: String,
    },
    AssistantDelta {
        turn_id: u64,
        text: String,
    },
    AssistantMessage {
        turn_id: u64,
        text: String,
    },
    /// What the model thinks before it answers, as it streams (reasoning
    /// models; summaries where the server sends only those).
    ReasoningDelta {
        turn_id: u64,
        text: String,
    },
    /// What the model thought in one response, whole (after its deltas).
    ReasoningMessage {
        turn_id: u64,
        text: String,
    },
    /// The provider call failed in a way worth retrying; streamed text since
    /// the last `assistant_message` is discarded.
    ProviderRetry {
        turn_id: u64,
        attempt: u32,
        max_retries: u32,
        delay_ms: u64,
        reason: String,
    },
    UsageUpdated {
        turn_id: u64,
        /// This response.
        last: Usage,
        /// The whole conversation (for a subagent's response: the
        /// subagent's so far).
        total: Usage,
        /// The `task` call whose subagent this response was for.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task: Option<String>,
        /// The model that answered (what `last` is priced for).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        model: String,
    },
    /// How full the model's context is: after each response, a
    /// compaction, a model change, a resume.
    ContextUpdated {
        /// Tokens the conversation takes (the last request's input and
        /// output, plus an estimate of what was added since).
        tokens: u64,
        /// The model's window, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<u64>,
    },
    /// Older turns were summarized into one message to free context.
    ContextCompacted {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn_id: Option<u64>,
        /// `auto` (the context was nearly full), `overflow` (the server
        /// said it was too long) or `asked` (`/compact`).
        reason: String,
        /// Estimated tokens before and after.
        before_tokens: u64,
        after_tokens: u64,
        /// Messages folded into the summary, and kept as they were.
        summarized: usize,
        kept: usize,
    },
    /// The turn used its tool rounds: go on (`Op::ContinueTurn`) or stop.
    /// Only front ends that answer approvals get it; headless, the turn
    /// fails with `max_iterations`.
    ToolLimitReached {
        turn_id: u64,
        /// Rounds used so far this turn.
        rounds: u32,
        /// Rounds another yes allows.
        more: u32,
    },
    /// A budget cap was reached: the turn stops before its next request
    /// (never in the middle of a call). A front end that answers
    /// approvals is asked to raise the cap to `raise_to` and go on
    /// (`Op::ContinueTurn`); headless, the turn ends with `stop_reason:
    /// "budget"`.
    BudgetReached {
        turn_id: u64,
        cap: crate::budget::Cap,
        /// What was spent against it (dollars, or tokens).
        spent: f64,
        limit: f64,
        /// What the next request's input was reckoned to add (absent
        /// when the cap was reached by what was spent).
        #[serde(default, skip_serializing_if = "crate::budget::is_zero")]
        next: f64,
        /// What a yes raises it to.
        raise_to: f64,
    },
    /// The model made the same call (tool and arguments) `count` times in
    /// the turn, or got the same failure from it `count` times in a row
    /// (`failing`): the turn pauses before it runs again. A front end
    /// that answers approvals is asked whether to let it go on
    /// (`Op::ContinueTurn`); headless, the turn ends with `stop_reason:
    /// "loop"`. `task` names the subagent's `task` call when it was a
    /// subagent's (which then stops, its model told why).
    LoopDetected {
        turn_id: u64,
        tool: String,
        arguments: Value,
        count: u32,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        failing: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task: Option<String>,
    },
    ToolCallStarted {
        turn_id: u64,
        call_id: String,
        /// The resolved tool name, or the requested one when it resolves to nothing.
        tool: String,
        /// The arguments as parsed, or the raw string when they are not JSON.
        arguments: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        effect: Option<Effect>,
        /// What kind of work the tool does (`None` for a name that
        /// resolves to no tool, and in records written before it was said).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<crate::ToolKind>,
        /// The `task` call this call was made for, by a subagent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent: Option<String>,
    },
    ToolProgress {
        call_id: String,
        tool: String,
        stream: String,
        text: String,
    },
    GuardrailVerdict {
        call_id: String,
        tool: String,
        verdict: GuardrailOutcome,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// What the call will do, as the guardrail judged it.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        operations: Vec<Operation>,
    },
    /// A call waits for the person (or the approval mode) to decide.
    ApprovalRequested(ApprovalRequest),
    ApprovalDecided {
        call_id: String,
        tool: String,
        /// Flattened: `"decision": "deny", "message": "…"`.
        #[serde(flatten)]
        decision: ApprovalDecision,
        source: DecisionSource,
    },
    ToolCallFinished {
        call_id: String,
        tool: String,
        status: ToolStatus,
        content: Value,
        metadata: ResultMetadata,
        /// How a command exited (a failing test run is `status: ok`, as
        /// the call itself worked, and `exit_code` 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// For a file change that was written: what was written, as a
        /// unified diff (the hunks kept, when some were left out).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<String>,
        /// The same, as data (what the terminal UI draws).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        change: Option<Box<change::FileChange>>,
        /// What a successful call found or did, as its tool says
        /// (`exited`, `matches`, `lines`, …): what a front end shows in
        /// one line without reading `content`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<crate::Summary>,
    },
    /// An MCP server started, failed, came back or changed its tools.
    McpServerStatus(McpStatus),
    /// The files the message's `@path` mentions: attached to it (whole or
    /// cut), or why not (outside the workspace, not found, not text…).
    Attachments {
        turn_id: u64,
        files: Vec<Attachment>,
    },
    /// The answer to `Op::ListModels`: the models the provider lists
    /// (`None`: it lists none), or why they could not be had.
    Models {
        models: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The answer to `Op::ReportCost`: what each model of the
    /// conversation used and cost, and the whole.
    Cost {
        models: Vec<ModelUsage>,
        total: Usage,
        /// The same, by agent and model.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        by_agent: Vec<crate::budget::AgentSpend>,
    },
    /// The answer to `Op::ListTurns`, oldest first.
    Turns {
        turns: Vec<TurnInfo>,
    },
    /// The answer to `Op::SessionDiff`: a unified diff (empty when nothing
    /// changed), cut at 2 MiB (`cut`), or why there is none.
    SessionDiff {
        diff: String,
        /// The same changes as data, file by file (what the terminal UI
        /// draws); a move is a rename, a binary file is left out.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        changes: Vec<change::FileChange>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        cut: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The answer to `Op::Rewind`: what was restored (paths relative to
    /// the workspace), or why nothing was.
    Rewound {
        /// The turn rewound to before (0 when none could be).
        turn_id: u64,
        files: bool,
        conversation: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        restored: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        removed: Vec<String>,
        /// Changed, but not put back (in a nested git repository, or a
        /// file too large to keep).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<String>,
        /// Only what it would do (`Op::Rewind` with `preview`): nothing
        /// was written.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        preview: bool,
        /// Files changed after Lathe last changed them (outside Lathe):
        /// the rewind refuses rather than overwrite them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        changed_since: Vec<String>,
        /// What the turns did that no checkpoint holds: files too large to
        /// keep, ignored directories a command deleted or changed.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        not_kept: Vec<String>,
        /// That turn's message, for the person to edit and send again.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The answer to `Op::ListPermissions` and `Op::RevokeGrant`.
    Permissions {
        approval: ApprovalMode,
        rules: RuleLists,
        grants: Vec<GrantInfo>,
        /// The hooks that run, as `event match: command`.
        hooks: Vec<String>,
    },
    TurnCompleted {
        turn_id: u64,
        text: String,
        iterations: u32,
        /// This turn's tokens and cost (every request of it).
        usage: Usage,
        /// Why the model stopped: `end_turn`, or `max_tokens` (the answer
        /// is cut), `refusal`, `content_filter`, `pause_turn`.
        #[serde(default)]
        stop_reason: StopReason,
        /// The model in use, as the usage is counted for it.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        model: String,
        /// The calls of the turn that were denied: what the answer could
        /// not do (a script reads this, not the model's words).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        denied: Vec<Denial>,
        /// What the model asked the person this turn, and the answers
        /// (headless: none; the model was told to decide and say what it
        /// assumed).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        questions: Vec<AskedQuestion>,
        /// What the turn spent, by agent (`main`, each `task`, the
        /// `judge`, `compaction`) and model: `usage` is the main agent's.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        by_agent: Vec<crate::budget::AgentSpend>,
    },
    /// The model asks the person (`ask_user`), or another does (`from`: an
    /// MCP server's form, Lathe for a prompt's argument); answered with
    /// `Op::Answer`.
    QuestionAsked {
        turn_id: u64,
        call_id: String,
        question: String,
        /// Answers to choose from (the person may also write their own).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        choices: Vec<String>,
        /// Who asks, when not the model ("MCP server NAME", "Lathe"): no
        /// answer then declines, rather than leaving it to the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
    },
    /// The model's plan, whole, as it stands now (`update_plan`).
    PlanUpdated {
        turn_id: u64,
        call_id: String,
        steps: Vec<PlanStep>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        explanation: Option<String>,
    },
    /// A message the person sent while the turn ran went to the model
    /// with this request.
    SteeringDelivered {
        turn_id: u64,
        text: String,
    },
    /// The judge reviewed a risky call that would have run without
    /// asking: `allowed`, or (escalated) the person is asked, headless the
    /// call is denied.
    Judged {
        call_id: String,
        model: String,
        allowed: bool,
        /// Why Lathe had the call reviewed.
        flagged: String,
        /// The judge's reason.
        reason: String,
        /// What asking the judge cost.
        usage: Usage,
    },
    /// The commands running in the background (and those that ended
    /// since the last list): sent when one starts or ends, and for
    /// `Op::ListJobs`.
    Jobs {
        jobs: Vec<JobInfo>,
    },
    Error {
        #[serde(skip_serializing_if = "Option::is_none")]
        turn_id: Option<u64>,
        kind: ErrorKind,
        message: String,
    },
}

impl AgentEvent {
    /// The event's `type` tag, as it appears in JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentEvent::SessionStarted { .. } => "session_started",
            AgentEvent::TurnStarted { .. } => "turn_started",
            AgentEvent::AssistantDelta { .. } => "assistant_delta",
            AgentEvent::AssistantMessage { .. } => "assistant_message",
            AgentEvent::ReasoningDelta { .. } => "reasoning_delta",
            AgentEvent::ReasoningMessage { .. } => "reasoning_message",
            AgentEvent::ProviderRetry { .. } => "provider_retry",
            AgentEvent::UsageUpdated { .. } => "usage_updated",
            AgentEvent::ContextUpdated { .. } => "context_updated",
            AgentEvent::ContextCompacted { .. } => "context_compacted",
            AgentEvent::ToolLimitReached { .. } => "tool_limit_reached",
            AgentEvent::BudgetReached { .. } => "budget_reached",
            AgentEvent::LoopDetected { .. } => "loop_detected",
            AgentEvent::ToolCallStarted { .. } => "tool_call_started",
            AgentEvent::ToolProgress { .. } => "tool_progress",
            AgentEvent::GuardrailVerdict { .. } => "guardrail_verdict",
            AgentEvent::ApprovalRequested { .. } => "approval_requested",
            AgentEvent::ApprovalDecided { .. } => "approval_decided",
            AgentEvent::ToolCallFinished { .. } => "tool_call_finished",
            AgentEvent::Permissions { .. } => "permissions",
            AgentEvent::McpServerStatus(_) => "mcp_server_status",
            AgentEvent::Models { .. } => "models",
            AgentEvent::Attachments { .. } => "attachments",
            AgentEvent::Turns { .. } => "turns",
            AgentEvent::Cost { .. } => "cost",
            AgentEvent::SessionDiff { .. } => "session_diff",
            AgentEvent::Rewound { .. } => "rewound",
            AgentEvent::TurnCompleted { .. } => "turn_completed",
            AgentEvent::QuestionAsked { .. } => "question_asked",
            AgentEvent::PlanUpdated { .. } => "plan_updated",
            AgentEvent::SteeringDelivered { .. } => "steering_delivered",
            AgentEvent::Jobs { .. } => "jobs",
            AgentEvent::Judged { .. } => "judged",
            AgentEvent::Error { .. } => "error",
        }
    }

    /// Whether this event ends a turn.
    pub fn ends_turn(&self) -> bool {
        matches!(
            self,
            AgentEvent::TurnCompleted { .. }
                | AgentEvent::Error {
                    turn_id: Some(_),
                    ..
                }
        )
    }
}

/// Whatever text an event carries from outside Lathe (the model, tools,
/// servers, files, the person).
impl Redact for AgentEvent {
    fn redact(&mut self, s: &dyn Scrub) {
        match self {
            AgentEvent::TurnStarted { prompt: t, .. }
            | AgentEvent::AssistantDelta { text: t, .. }
            | AgentEvent::ReasoningDelta { text: t, .. }
            | AgentEvent::ReasoningMessage { text: t, .. }
            | AgentEvent::AssistantMessage { text: t, .. }
            | AgentEvent::ToolProgress { text: t, .. }
            | AgentEvent::ProviderRetry { reason: t, .. }
            | AgentEvent::Error { message: t, .. } => t.redact(s),
            AgentEvent::TurnCompleted {
                text,
                denied,
                questions,
                by_agent,
                ..
            } => {
                text.redact(s);
                denied.redact(s);
                questions.redact(s);
                by_agent.redact(s);
            }
            AgentEvent::Cost { by_agent, .. } => by_agent.redact(s),
            AgentEvent::QuestionAsked {
                question,
                choices,
                from,
                ..
            } => {
                question.redact(s);
                choices.redact(s);
                from.redact(s);
            }
            AgentEvent::PlanUpdated {
                steps, explanation, ..
            } => {
                steps.redact(s);
                explanation.redact(s);
            }
            AgentEvent::SteeringDelivered { text, .. } => text.redact(s),
            AgentEvent::Jobs { jobs } => jobs.redact(s),
            AgentEvent::Judged {
                flagged, reason, ..
            } => {
                flagged.redact(s);
                reason.redact(s);
            }
            AgentEvent::ToolCallStarted { arguments, .. }
            | AgentEvent::LoopDetected { arguments, .. } => arguments.redact(s),
            AgentEvent::GuardrailVerdict {
                reason, operations, ..
            } => {
                reason.redact(s);
                operations.redact(s);
            }
            AgentEvent::ApprovalRequested(request) => request.redact(s),
            AgentEvent::ApprovalDecided { decision, .. } => match decision {
                ApprovalDecision::ApproveEdited { content } => content.redact(s),
                ApprovalDecision::Deny { message } => message.redact(s),
                ApprovalDecision::ApproveOnce
                | ApprovalDecision::ApproveForConversation
                | ApprovalDecision::ApproveHunks { .. } => {}
            },
            // The content is a `ToolResult`'s, which passed the model's
            // boundary on its way to the model: not redacted twice. What
            // was written (the diff) came from the model's arguments.
            AgentEvent::ToolCallFinished {
                diff,
                change,
                summary,
                ..
            } => {
                diff.redact(s);
                change.redact(s);
                summary.redact(s);
            }
            AgentEvent::SessionDiff {
                diff,
                changes,
                error,
                ..
            } => {
                diff.redact(s);
                changes.redact(s);
                error.redact(s);
            }
            AgentEvent::Attachments { files, .. } => {
                for f in files {
                    f.path.redact(s);
                    f.note.redact(s);
                }
            }
            AgentEvent::Models { models, error } => {
                models.redact(s);
                error.redact(s);
            }
            AgentEvent::Turns { turns } => {
                for t in turns {
                    t.prompt.redact(s);
                }
            }
            AgentEvent::Rewound { prompt, error, .. } => {
                prompt.redact(s);
                error.redact(s);
            }
            AgentEvent::McpServerStatus(status) => {
                status.endpoint.redact(s);
                status.message.redact(s);
            }
            AgentEvent::Permissions { grants, .. } => {
                for g in grants {
                    g.covers.redact(s);
                }
            }
            AgentEvent::SessionStarted { .. }
            | AgentEvent::UsageUpdated { .. }
            | AgentEvent::ContextUpdated { .. }
            | AgentEvent::ContextCompacted { .. }
            | AgentEvent::ToolLimitReached { .. }
            | AgentEvent::BudgetReached { .. } => {}
        }
    }
}
