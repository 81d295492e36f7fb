//! What a tool is: the `Tool` trait, the context a call runs with, and the
//! error a call can end in.
//!
//! A tool knows nothing of approvals or of the model: it declares its name,
//! description, JSON-Schema parameters and effect, describes what a call
//! will do as typed operations (so guardrails, rules, grants and the
//! dialog can judge it), and executes with a context carrying the
//! workspace, a cancellation token and a progress sink.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::policy::{PathError, Workspace};
use crate::protocol::Effect;
use crate::protocol::operation::{Access, FileOp, Operation};

/// How a tool call failed. Every variant but `Internal` goes back to the
/// model verbatim, so it can recover.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("tool not found: {0}")]
    NotFound(String),
    #[error("invalid arguments: {0}")]
    InvalidArgs(String),
    #[error("execution failed: {0}")]
    ExecutionFailed(String),
    #[error("permission denied: {0}")]
    PermissionDenied(String),
    #[error("file not found: {0}")]
    FileNotFound(String),
    #[error("invalid path: {0}")]
    InvalidPath(String),
    #[error("timeout: {detail}")]
    Timeout { secs: u64, detail: String },
    #[error("cancelled: {0}")]
    Cancelled(String),
    /// A broken invariant or a panic: logged in full, shown to the model
    /// only as a short generic message.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ToolError {
    /// A stable snake_case name, for `metadata.error_kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolError::NotFound(_) => "not_found",
            ToolError::InvalidArgs(_) => "invalid_args",
            ToolError::ExecutionFailed(_) => "execution_failed",
            ToolError::PermissionDenied(_) => "permission_denied",
            ToolError::FileNotFound(_) => "file_not_found",
            ToolError::InvalidPath(_) => "invalid_path",
            ToolError::Timeout { .. } => "timeout",
            ToolError::Cancelled(_) => "cancelled",
            ToolError::Internal(_) => "internal",
        }
    }

    /// The text the model sees.
    pub fn model_message(&self) -> String {
        match self {
            ToolError::Internal(_) => {
                "internal error: the tool failed unexpectedly; the details are in Lathe's log"
                    .to_string()
            }
            other => other.to_string(),
        }
    }

    /// The same error with `note` added to its message (internal errors
    /// keep theirs: the model never sees it).
    pub fn with_note(self, note: &str) -> Self {
        let add = |m: String| format!("{m}; {note}");
        match self {
            ToolError::NotFound(m) => ToolError::NotFound(add(m)),
            ToolError::InvalidArgs(m) => ToolError::InvalidArgs(add(m)),
            ToolError::ExecutionFailed(m) => ToolError::ExecutionFailed(add(m)),
            ToolError::PermissionDenied(m) => ToolError::PermissionDenied(add(m)),
            ToolError::FileNotFound(m) => ToolError::FileNotFound(add(m)),
            ToolError::InvalidPath(m) => ToolError::InvalidPath(add(m)),
            ToolError::Timeout { secs, detail } => ToolError::Timeout {
                secs,
                detail: add(detail),
            },
            ToolError::Cancelled(m) => ToolError::Cancelled(add(m)),
            ToolError::Internal(m) => ToolError::Internal(m),
        }
    }

    /// Maps a workspace refusal to the error the model sees.
    pub fn from_path(err: PathError) -> Self {
        match err {
            PathError::NotFound(p) => ToolError::FileNotFound(p),
            other => ToolError::InvalidPath(other.to_string()),
        }
    }

    /// Maps an I/O error on `path` to the closest variant.
    pub fn from_io(path: &str, err: &std::io::Error) -> Self {
        use std::io::ErrorKind;
        match err.kind() {
            ErrorKind::NotFound => ToolError::FileNotFound(path.to_string()),
            ErrorKind::PermissionDenied => ToolError::PermissionDenied(format!("{path}: {err}")),
            _ => ToolError::ExecutionFailed(format!("{path}: {err}")),
        }
    }
}

/// The file operation on `path`, resolved inside `workspace`; a path that
/// escapes it is refused here, before anything runs.
pub fn file_operation(
    workspace: &Workspace,
    path: &str,
    access: Access,
) -> Result<Operation, ToolError> {
    let abs = match access {
        // A skill in use is read where it lives (shown whole, never
        // written).
        Access::Read => workspace
            .resolve_readable(path)
            .or_else(|_| workspace.check(path)),
        _ => workspace.check(path),
    }
    .map_err(ToolError::from_path)?;
    Ok(Operation::File(FileOp {
        path: workspace.display_relative(&abs),
        access,
        outside: false,
        named: false,
        deletes: false,
    }))
}

/// One progress update from a running tool (a line of shell output, an MCP
/// progress notification).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub stream: String,
    pub text: String,
}

/// Where a running tool reports progress. Cheap to clone; never blocks.
#[derive(Clone)]
pub struct ProgressSink(Option<Arc<dyn Fn(Progress) + Send + Sync>>);

impl ProgressSink {
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(f)))
    }

    /// A sink that drops everything.
    #[cfg(any(test, feature = "internals"))]
    pub fn none() -> Self {
        Self(None)
    }

    pub fn emit(&self, stream: &str, text: impl Into<String>) {
        if let Some(f) = &self.0 {
            f(Progress {
                stream: stream.to_string(),
                text: text.into(),
            });
        }
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "ProgressSink(..)"
        } else {
            "ProgressSink(none)"
        })
    }
}

/// What one call runs with.
#[derive(Debug, Clone)]
pub struct ToolContext {
    pub workspace: Arc<Workspace>,
    pub cancel: CancellationToken,
    pub progress: ProgressSink,
    /// Hides secrets in what a tool keeps or sends beyond the
    /// conversation (memory, messages); results are redacted anyway.
    pub redactor: crate::policy::Redactor,
    /// The files the read deny rules cover, which the search tools leave
    /// out (`None`: no rule).
    pub read_denials: Option<crate::policy::guardrails::ReadDenials>,
    /// The model's id of this call.
    pub call_id: String,
    /// The conversation the call runs in, for the tools that work with
    /// the person (`ask_user`, `update_plan`); `None` outside one.
    pub together: Option<Arc<dyn Together>>,
    /// The conversation's background commands; `None` outside one.
    pub jobs: Option<Arc<crate::tools::jobs::Jobs>>,
    /// The turn only looks (plan mode): commands run in a read-only
    /// sandbox, never in the background or outside the sandbox.
    pub looks_only: bool,
}

/// How a question to the person ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// What the person chose or wrote.
    Answer(String),
    /// The person let the model decide (Esc).
    Declined,
    /// No one can be asked: a headless run.
    NoOne,
}

/// A job for a subagent (`task`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskJob {
    /// A few words: what the person sees.
    pub description: String,
    /// The whole job, self-contained.
    pub prompt: String,
    /// The tools it may use (`None`: those that only look).
    pub tools: Option<Vec<String>>,
    /// The subagent type (`agents::AgentType`) to run.
    pub agent: Option<String>,
}

/// What a call may ask of the conversation it runs in. The agent
/// implements it; the tools that use it know nothing of front ends.
#[async_trait]
pub trait Together: Send + Sync + fmt::Debug {
    /// Asks the person, and waits (questions are asked one at a time);
    /// an interrupted turn ends the wait with `Declined`.
    async fn ask(
        &self,
        call_id: &str,
        question: &str,
        choices: &[String],
        cancel: &CancellationToken,
    ) -> Asked;
    /// Asks the person for `from` (an MCP server, Lathe itself): as
    /// [`Together::ask`], but no answer declines rather than leaving it to
    /// the model.
    async fn ask_from(
        &self,
        from: &str,
        call_id: &str,
        question: &str,
        choices: &[String],
        cancel: &CancellationToken,
    ) -> Asked {
        let _ = from;
        self.ask(call_id, question, choices, cancel).await
    }
    /// Runs a subagent on `job` for the `task` call `call_id`: its final
    /// answer, or why there is none.
    async fn task(
        &self,
        call_id: &str,
        job: TaskJob,
        cancel: &CancellationToken,
    ) -> Result<Value, ToolError>;
    /// The plan, whole, as it stands now.
    fn plan(
        &self,
        call_id: &str,
        steps: Vec<crate::protocol::PlanStep>,
        explanation: Option<String>,
    );
}

impl ToolContext {
    /// A context for calling a tool outside the agent (tests, benchmarks).
    #[cfg(any(test, feature = "internals"))]
    pub fn standalone(workspace: Arc<Workspace>) -> Self {
        Self {
            workspace,
            cancel: CancellationToken::new(),
            progress: ProgressSink::none(),
            redactor: crate::policy::Redactor::default(),
            read_denials: None,
            call_id: String::new(),
            together: None,
            jobs: None,
            looks_only: false,
        }
    }
}

/// A tool the model can call.
#[async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    /// A JSON-Schema object describing the arguments.
    fn parameters(&self) -> Value;
    /// What kind of work it does (what front ends and subagents read,
    /// never the name). MCP tools and anything unclassified: `Other`.
    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Other
    }
    fn effect(&self) -> Effect;
    /// What a call with these (validated) arguments will do. An error
    /// refuses the call (a path outside the workspace). No operations
    /// means the tool's effect alone decides.
    fn operations(
        &self,
        _args: &Value,
        _workspace: &Workspace,
    ) -> Result<Vec<Operation>, ToolError> {
        Ok(Vec::new())
    }
    /// What a call would change, as a unified diff, for the person asked
    /// to approve it. An error means the call would fail anyway; it is
    /// reported without asking.
    fn preview(&self, args: &Value, workspace: &Workspace) -> Result<Option<String>, ToolError> {
        Ok(self.change(args, workspace)?.map(|c| c.unified()))
    }
    /// What a call would change in a file, as hunks: approved, in whole or
    /// in part, exactly that is written (and only to the file as it was
    /// read). `None`: no such change (the call runs as it is).
    fn change(
        &self,
        _args: &Value,
        _workspace: &Workspace,
    ) -> Result<Option<crate::protocol::change::FileChange>, ToolError> {
        Ok(None)
    }
    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError>;
    /// What a successful call's `result` found or did, for a front end's
    /// one line (the keys every tool shares, unless the tool says more).
    fn summary(&self, result: &Value) -> Option<crate::protocol::Summary> {
        crate::protocol::Summary::generic(result)
    }
    /// The call with these (validated) arguments, read once for every
    /// stage of the pipeline. A typed tool reads them into its type here
    /// (an error is the call's: arguments the type cannot take); a tool
    /// that works on JSON (an MCP server's) keeps them as they are.
    fn prepare<'t>(&'t self, args: &Value) -> Result<Box<dyn Prepared + 't>, ToolError> {
        Ok(Box::new(AsJson {
            tool: self,
            args: args.clone(),
        }))
    }
    /// Whether the tool only looks (reads, searches, asks, plans): what
    /// plan mode and subagents are given. Read-effect tools that act
    /// (stopping a command, sending a message) say no.
    fn only_looks(&self) -> bool {
        self.effect() == Effect::Read
    }
    /// Whether its result holds what a program printed (a command, a
    /// server, a page), which no read rule looked at as it was read: the
    /// text of what the rules cover is then kept out of it.
    fn prints_unchecked(&self) -> bool {
        prints_unchecked(self.effect())
    }
    /// Whether a plan turn (`/plan`, `exec --plan`) may call it: what only
    /// looks, and what can be made to only look (`exec_shell`, run in a
    /// read-only sandbox while planning). A plan turn refuses every other
    /// call, whatever the rules allow.
    fn offered_when_planning(&self) -> bool {
        self.only_looks()
    }
    /// Whether a call removes a file outright (what the judge counts as
    /// risky in itself).
    fn deletes_files(&self) -> bool {
        false
    }
    /// Whether its schema may wait behind `tool_search` when there are
    /// many tools (a server's tool, unless the server is `always_load`).
    fn deferrable(&self) -> bool {
        false
    }
    /// Whether a subagent may be given it: not a subagent of its own (one
    /// level), nor a question to the person or a plan of its own (the
    /// model that sent it asks and plans).
    fn subagent_may_use(&self) -> bool {
        subagent_may_use(self.kind())
    }
    /// Whether a call waits on the person (a question): its time is
    /// theirs, so the tool timeout does not bound it (an interrupt does).
    fn waits_for_person(&self) -> bool {
        false
    }
    /// When `result` says the sandbox stopped this (sandboxed) call: the
    /// arguments that run it again outside the sandbox, which the person
    /// may approve (every time; never the model alone).
    fn unsandboxed_retry(&self, _args: &Value, _result: &Value) -> Option<Value> {
        None
    }
}

/// Whether a tool of `effect` returns what a program printed, unread by
/// the read rules (the default of [`Tool::prints_unchecked`]).
pub(crate) fn prints_unchecked(effect: Effect) -> bool {
    matches!(effect, Effect::Exec | Effect::Network | Effect::External)
}

/// Whether a subagent may be given a tool of `kind` (the default of
/// [`Tool::subagent_may_use`]).
pub(crate) fn subagent_may_use(kind: crate::protocol::ToolKind) -> bool {
    use crate::protocol::ToolKind;
    !matches!(kind, ToolKind::Task | ToolKind::Ask | ToolKind::Plan)
}

/// A call ready to run: its tool and its arguments, read once. What the
/// pipeline holds from the guardrail to the run.
#[async_trait]
pub trait Prepared: Send + Sync {
    /// See [`Tool::operations`].
    fn operations(&self, workspace: &Workspace) -> Result<Vec<Operation>, ToolError>;
    /// See [`Tool::change`].
    fn change(
        &self,
        workspace: &Workspace,
    ) -> Result<Option<crate::protocol::change::FileChange>, ToolError>;
    /// See [`Tool::preview`].
    fn preview(&self, workspace: &Workspace) -> Result<Option<String>, ToolError>;
    /// Runs it (once).
    async fn execute(self: Box<Self>, ctx: &ToolContext) -> Result<Value, ToolError>;
}

/// A call of a tool that works on JSON.
struct AsJson<'t, T: Tool + ?Sized> {
    tool: &'t T,
    args: Value,
}

#[async_trait]
impl<T: Tool + ?Sized> Prepared for AsJson<'_, T> {
    fn operations(&self, workspace: &Workspace) -> Result<Vec<Operation>, ToolError> {
        self.tool.operations(&self.args, workspace)
    }

    fn change(
        &self,
        workspace: &Workspace,
    ) -> Result<Option<crate::protocol::change::FileChange>, ToolError> {
        self.tool.change(&self.args, workspace)
    }

    fn preview(&self, workspace: &Workspace) -> Result<Option<String>, ToolError> {
        self.tool.preview(&self.args, workspace)
    }

    async fn execute(self: Box<Self>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let AsJson { tool, args } = *self;
        tool.execute(args, ctx).await
    }
}
