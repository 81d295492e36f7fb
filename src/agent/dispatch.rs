//! The tool-call pipeline (DESIGN.md): every call, built-in or MCP,
//! sequential or parallel, passes resolve ▸ parse ▸ validate ▸ guardrail ▸
//! authorize ▸ execute ▸ after-hooks ▸ normalize, in that order, and every
//! stage's outcome is an event. Failures are data: each becomes a
//! `ToolResult` the model sees. Consecutive read-only calls run
//! concurrently; results keep the order the model asked for.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use futures_util::FutureExt;
use futures_util::future::join_all;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Shared;
use crate::policy::authorizer::requirement;
use crate::policy::shell_rules::program_name;
use crate::policy::{
    ApprovalRequest, CallFacts, GrantKind, GuardError, HookOutcome, Requirement, Verdict,
};
use crate::protocol::{
    AgentEvent, ApprovalDecision, DecisionSource, Effect, GuardrailOutcome, ResultMetadata,
    ToolResult, ToolStatus,
};
use crate::provider::{ToolCall, ToolOutput};
use crate::tools::truncate::{MAX_TOOL_RESULT_BYTES, truncate_sized};
use crate::tools::{ProgressSink, RegisteredTool, Targets, ToolContext, ToolError};

/// How a call ended before normalization.
enum Outcome {
    Ran { value: Value, note: Option<String> },
    Failed(ToolError),
    Denied(ToolError),
}

/// Runs `calls` through the pipeline; results come back in call order.
pub(crate) async fn run_calls(
    shared: &Shared,
    turn_id: u64,
    calls: &[ToolCall],
    cancel: &CancellationToken,
) -> Vec<ToolOutput> {
    let mut results = Vec::with_capacity(calls.len());
    let mut i = 0;
    while i < calls.len() {
        let batch_end = calls[i..]
            .iter()
            .position(|c| !is_read_only(shared, c))
            .map_or(calls.len(), |p| i + p);
        if batch_end > i {
            let batch = calls[i..batch_end]
                .iter()
                .map(|c| dispatch_one(shared, turn_id, c, cancel));
            results.extend(join_all(batch).await);
            i = batch_end;
        } else {
            results.push(dispatch_one(shared, turn_id, &calls[i], cancel).await);
            i += 1;
        }
    }
    results
}

/// Unknown tools count as read-only: they fail at once, touching nothing.
fn is_read_only(shared: &Shared, call: &ToolCall) -> bool {
    shared
        .registry
        .resolve(&call.name)
        .map_or(true, |t| t.tool.effect() == Effect::Read)
}

async fn dispatch_one(
    shared: &Shared,
    turn_id: u64,
    call: &ToolCall,
    cancel: &CancellationToken,
) -> ToolOutput {
    // `duration_ms` counts from here, or from the start of execution when
    // the call got that far (time spent waiting for approval is not the
    // tool's).
    let mut started = Instant::now();
    // 1. resolve
    let resolved = shared.registry.resolve(&call.name);
    let tool_name = resolved
        .as_ref()
        .map_or_else(|_| call.name.clone(), |t| t.name().to_string());
    // 2. parse
    let parsed = parse_arguments(&call.arguments);
    shared.emitter.emit(AgentEvent::ToolCallStarted {
        turn_id,
        call_id: call.id.clone(),
        tool: tool_name.clone(),
        arguments: parsed
            .as_ref()
            .map_or_else(|_| Value::String(call.arguments.clone()), Clone::clone),
        effect: resolved.as_ref().ok().map(|t| t.tool.effect()),
    });
    let outcome = match (resolved, parsed) {
        (Err(e), _) | (Ok(_), Err(e)) => Outcome::Failed(e),
        (Ok(tool), Ok(args)) => run_stages(shared, call, tool, args, cancel, &mut started).await,
    };
    let (result, text) = normalize(&call.id, outcome, started);
    if let Some(kind) = &result.metadata.error_kind {
        tracing::info!(tool = %tool_name, call_id = %call.id, error_kind = %kind, "tool call failed");
    }
    let output = ToolOutput {
        call_id: result.call_id,
        content: text,
        is_error: result.status != ToolStatus::Ok,
    };
    shared.emitter.emit(AgentEvent::ToolCallFinished {
        call_id: call.id.clone(),
        tool: tool_name,
        status: result.status,
        content: result.content,
        metadata: result.metadata,
    });
    output
}

fn parse_arguments(raw: &str) -> Result<Value, ToolError> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_str(raw).map_err(|e| {
        ToolError::InvalidArgs(format!(
            "arguments are not valid JSON ({e}): {}",
            crate::provider::http::shorten(raw, 200)
        ))
    })
}

/// Stages 3 to 7 for a resolved tool with parsed arguments.
async fn run_stages(
    shared: &Shared,
    call: &ToolCall,
    tool: &RegisteredTool,
    args: Value,
    cancel: &CancellationToken,
    started: &mut Instant,
) -> Outcome {
    // 3. validate
    if let Err(e) = tool.validate(&args) {
        return Outcome::Failed(e);
    }
    // 4. guardrail
    let targets = tool.tool.targets(&args);
    let (args, note) = match guardrail(shared, call, tool, &args, &targets) {
        Ok(modified) => modified.unwrap_or((args, None)),
        Err(e) => return Outcome::Denied(e),
    };
    // 5. authorize
    if let Err(outcome) = authorize(shared, call, tool, &args, &targets, cancel).await {
        return outcome;
    }
    // 6. execute
    *started = Instant::now();
    let mut value = match execute(shared, call, tool, args, cancel).await {
        Ok(v) => v,
        Err(e) => return Outcome::Failed(e),
    };
    // 7. after-hooks
    for hook in &shared.hooks {
        if let HookOutcome::Reject { reason } = hook.after_tool_call(tool.name(), &mut value) {
            return Outcome::Failed(ToolError::PermissionDenied(format!(
                "the result was withheld by the `{}` hook: {reason}",
                hook.name()
            )));
        }
    }
    Outcome::Ran { value, note }
}

type Modified = Option<(Value, Option<String>)>;

fn guardrail(
    shared: &Shared,
    call: &ToolCall,
    tool: &RegisteredTool,
    args: &Value,
    targets: &Targets,
) -> Result<Modified, ToolError> {
    let verdict = shared.guardrails.check(&CallFacts {
        tool: tool.name(),
        args,
        paths: targets.paths.clone(),
        command: targets.command.clone(),
    });
    let (outcome, reason, result) = match verdict {
        Verdict::Allow => (GuardrailOutcome::Allow, None, Ok(None)),
        Verdict::Modify { args, note } => (
            GuardrailOutcome::Modify,
            Some(note.clone()),
            Ok(Some((args, Some(note)))),
        ),
        Verdict::Deny(e) => {
            let err = match &e {
                GuardError::Path(p) => ToolError::from_path(p.clone()),
                GuardError::Denylisted { .. } => ToolError::PermissionDenied(e.to_string()),
            };
            (GuardrailOutcome::Deny, Some(err.to_string()), Err(err))
        }
    };
    shared.emitter.emit(AgentEvent::GuardrailVerdict {
        call_id: call.id.clone(),
        tool: tool.name().to_string(),
        verdict: outcome,
        reason,
    });
    result
}

/// The operation a grant covers: the path for file tools, the program for
/// shell commands, the tool itself otherwise.
fn scope(shared: &Shared, targets: &Targets) -> String {
    if let Some(cmd) = &targets.command {
        return program_name(cmd);
    }
    match targets.paths.first() {
        Some(p) => shared
            .workspace
            .check(p)
            .map_or_else(|_| p.clone(), |abs| shared.workspace.display_relative(&abs)),
        None => "*".to_string(),
    }
}

async fn authorize(
    shared: &Shared,
    call: &ToolCall,
    tool: &RegisteredTool,
    args: &Value,
    targets: &Targets,
    cancel: &CancellationToken,
) -> Result<(), Outcome> {
    let effect = tool.tool.effect();
    let reason = match requirement(shared.mode(), effect) {
        Requirement::Auto => return Ok(()),
        Requirement::Refuse { reason } => {
            return Err(Outcome::Denied(ToolError::PermissionDenied(reason)));
        }
        Requirement::Ask { reason } => reason,
    };
    let name = tool.name();
    let scope = scope(shared, targets);
    let decided = |decision: ApprovalDecision, source| {
        shared.emitter.emit(AgentEvent::ApprovalDecided {
            call_id: call.id.clone(),
            tool: name.to_string(),
            decision,
            source,
        });
    };
    if shared.authz.authorize(name, &scope) {
        decided(
            ApprovalDecision::ApproveForConversation,
            DecisionSource::Grant,
        );
        return Ok(());
    }
    // A call that would fail anyway (an edit whose text is not there) fails
    // now, without bothering the person.
    let diff = tool
        .tool
        .preview(args, &shared.workspace)
        .map_err(Outcome::Failed)?;
    let request = ApprovalRequest {
        call_id: call.id.clone(),
        tool: name.to_string(),
        arguments: args.clone(),
        effect,
        scope: scope.clone(),
        reason,
        diff,
    };
    shared.emitter.emit(AgentEvent::ApprovalRequested {
        call_id: request.call_id.clone(),
        tool: request.tool.clone(),
        arguments: request.arguments.clone(),
        effect,
        scope: scope.clone(),
        reason: request.reason.clone(),
        diff: request.diff.clone(),
    });
    let source = shared.approver.source();
    let decision = shared.approver.decide(&request, cancel).await;
    decided(decision.clone(), source);
    let kind = match decision {
        ApprovalDecision::ApproveOnce => GrantKind::Once,
        ApprovalDecision::ApproveForConversation => GrantKind::Conversation,
        ApprovalDecision::Deny { message } => {
            let text = match (source, message) {
                (DecisionSource::User, Some(m)) => {
                    format!("the user denied this call and said: {m}")
                }
                (DecisionSource::User, None) => "the user denied this call".to_string(),
                (_, Some(m)) => m,
                (_, None) => "approval was not given".to_string(),
            };
            return Err(Outcome::Denied(ToolError::PermissionDenied(text)));
        }
    };
    shared.authz.grant(name, &scope, kind);
    // Use the grant just given (a `once` grant is spent here).
    shared.authz.authorize(name, &scope);
    Ok(())
}

async fn execute(
    shared: &Shared,
    call: &ToolCall,
    tool: &RegisteredTool,
    args: Value,
    cancel: &CancellationToken,
) -> Result<Value, ToolError> {
    let emitter = shared.emitter.clone();
    let call_id = call.id.clone();
    let name = tool.name().to_string();
    let ctx = ToolContext {
        call_id: call.id.clone(),
        workspace: shared.workspace.clone(),
        cancel: cancel.child_token(),
        progress: ProgressSink::new(move |p| {
            emitter.emit(AgentEvent::ToolProgress {
                call_id: call_id.clone(),
                tool: name.clone(),
                stream: p.stream,
                text: p.text,
            });
        }),
    };
    let run = AssertUnwindSafe(tool.tool.execute(args, &ctx)).catch_unwind();
    let limit = shared.tool_timeout;
    let result = tokio::select! {
        r = tokio::time::timeout(limit, run) => r,
        // A tool that ignores its token is abandoned when the turn is cancelled.
        () = async { cancel.cancelled().await; tokio::time::sleep(std::time::Duration::from_secs(5)).await } => {
            return Err(ToolError::Cancelled("interrupted by the user".into()));
        }
    };
    match result {
        Err(_) => Err(ToolError::Timeout {
            secs: limit.as_secs(),
            detail: format!("{} did not finish within {}s", tool.name(), limit.as_secs()),
        }),
        Ok(Err(panic)) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            tracing::error!(tool = %tool.name(), call_id = %call.id, panic = %what, "tool panicked");
            Err(ToolError::Internal(format!(
                "{} panicked: {what}",
                tool.name()
            )))
        }
        Ok(Ok(r)) => {
            if let Err(ToolError::Internal(detail)) = &r {
                tracing::error!(tool = %tool.name(), call_id = %call.id, %detail, "tool internal error");
            }
            r
        }
    }
}

/// Stage 8: one result shape, cut to what the model may see; also returns
/// the text the model receives. The result is serialized once (twice when
/// it has to be cut).
fn normalize(call_id: &str, outcome: Outcome, started: Instant) -> (ToolResult, String) {
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (status, mut value, note, error_kind) = match outcome {
        Outcome::Ran { value, note } => (ToolStatus::Ok, value, note, None),
        Outcome::Failed(e) => (
            ToolStatus::Error,
            json!({ "error": e.model_message() }),
            None,
            Some(e.kind().to_string()),
        ),
        Outcome::Denied(e) => (
            ToolStatus::Denied,
            json!({ "error": e.model_message() }),
            None,
            Some(e.kind().to_string()),
        ),
    };
    let tool_cut = value.get("truncated").and_then(Value::as_bool) == Some(true);
    if let Some(note) = note {
        match value.as_object_mut() {
            Some(map) => {
                map.insert("guardrail_note".into(), Value::String(note));
            }
            None => value = json!({ "result": value, "guardrail_note": note }),
        }
    }
    let mut text = serde_json::to_string(&value).unwrap_or_default();
    let cut = truncate_sized(value, text.len(), MAX_TOOL_RESULT_BYTES);
    if cut.truncated {
        text = serde_json::to_string(&cut.value).unwrap_or_default();
    }
    let result = ToolResult {
        call_id: call_id.to_string(),
        status,
        content: cut.value,
        metadata: ResultMetadata {
            bytes: cut.original_bytes,
            truncated: cut.truncated || tool_cut,
            duration_ms,
            mime: None,
            error_kind,
        },
    };
    (result, text)
}
