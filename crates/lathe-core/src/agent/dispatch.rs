//! The tool-call pipeline (DESIGN.md): every call, built-in or MCP,
//! sequential or parallel, passes resolve ▸ parse ▸ validate ▸ guardrail ▸
//! authorize ▸ execute ▸ after-hooks ▸ normalize, in that order, and every
//! stage's outcome is an event. The guardrail and authorize stages judge
//! the call's typed operations (`policy::operation`); before-hooks run in
//! the guardrail stage and may change the arguments, which are then
//! validated and judged again. Failures are data: each becomes a
//! `ToolResult` the model sees. Consecutive read-only calls run
//! concurrently; results keep the order the model asked for. Once the turn
//! is interrupted no further call starts.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use futures_util::FutureExt;
use futures_util::future::join_all;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Shared;
use crate::policy::user_hooks::{AfterOutcome, BeforeOutcome};
use crate::policy::{
    Assessment, Assessor, GrantKey, GuardError, Need, Operation, UNSANDBOXED_REASON, Verdict,
};
use crate::protocol::change::FileChange;
use crate::protocol::{
    AgentEvent, ApprovalDecision, ApprovalNeed, ApprovalRequest, DecisionSource, Effect,
    GrantOffer, GuardrailOutcome, ToolResult, ToolStatus,
};
use crate::provider::{ToolCall, ToolOutput};
use crate::session::history::Item;
use crate::tools::{Prepared, ProgressSink, RegisteredTool, ToolContext, ToolError, ToolRegistry};

mod editor;
pub(crate) mod hooks;
mod normalize;

use editor::change_of;
use hooks::{hook_input, hook_runner, hooks_would_write_while_planning};
use normalize::normalize;

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
    parent: Option<&str>,
    cancel: &CancellationToken,
) -> Vec<ToolOutput> {
    // The tools as they are now: one that goes away during the batch is
    // still found here, and fails as its server does.
    let snapshot = shared.services.tools.snapshot();
    let registry = &snapshot.registry;
    // Each call resolved and parsed once; every stage works on this.
    let calls: Vec<Call<'_>> = calls.iter().map(|c| Call::new(registry, c)).collect();
    let changes_files = calls.iter().any(|c| {
        c.tool
            .as_ref()
            .is_ok_and(|t| super::undo::may_change_files(t.tool.effect()))
    });
    // Where each call is in the round, for the questions it may ask (a
    // subagent's calls are not the round's).
    if calls.len() > 1 && parent.is_none() {
        let total = u32::try_from(calls.len()).unwrap_or(u32::MAX);
        let mut state = shared.state();
        let round = &mut state.round;
        round.clear();
        for (n, c) in calls.iter().enumerate() {
            round.insert(
                c.call.id.clone(),
                [u32::try_from(n + 1).unwrap_or(u32::MAX), total],
            );
        }
    }
    let mut results = Vec::with_capacity(calls.len());
    let mut i = 0;
    while i < calls.len() {
        let batch_end = calls[i..]
            .iter()
            .position(|c| !c.is_read_only())
            .map_or(calls.len(), |p| i + p);
        if batch_end > i {
            let batch = calls[i..batch_end]
                .iter()
                .map(|c| dispatch_one(shared, turn_id, c, parent, cancel));
            results.extend(join_all(batch).await);
            i = batch_end;
        } else {
            results.push(dispatch_one(shared, turn_id, &calls[i], parent, cancel).await);
            i += 1;
        }
    }
    if parent.is_none() {
        shared.state().round.clear();
    }
    if changes_files && let Some(c) = &shared.services.checkpoints {
        c.after_round(shared).await;
    }
    // The files the read rules cover, as this round left them: one moved
    // or linked out of its place later is still known.
    if changes_files && shared.services.guardrails.reads().active() {
        let reads = shared.services.guardrails.reads().clone();
        let _ = tokio::task::spawn_blocking(move || reads.refresh()).await;
    }
    results
}

/// One call of the model's, resolved (1) and parsed (2) once: every stage
/// after works on this.
struct Call<'r> {
    call: &'r ToolCall,
    tool: Result<&'r RegisteredTool, ToolError>,
    args: Result<Value, ToolError>,
}

impl<'r> Call<'r> {
    fn new(registry: &'r ToolRegistry, call: &'r ToolCall) -> Self {
        Self {
            call,
            tool: registry.resolve(&call.name),
            args: parse_arguments(&call.arguments),
        }
    }

    /// The tool's own name (`server__tool`), or the name as the model
    /// wrote it when no tool has it.
    fn name(&self) -> String {
        self.tool
            .as_ref()
            .map_or_else(|_| self.call.name.clone(), |t| t.name().to_string())
    }

    /// Unknown tools count as read-only: they fail at once, touching
    /// nothing.
    fn is_read_only(&self) -> bool {
        self.tool
            .as_ref()
            .map_or(true, |t| t.tool.effect() == Effect::Read)
    }
}

async fn dispatch_one(
    shared: &Shared,
    turn_id: u64,
    resolved: &Call<'_>,
    parent: Option<&str>,
    cancel: &CancellationToken,
) -> ToolOutput {
    let call = resolved.call;
    // `duration_ms` counts from here, or from the start of execution when
    // the call got that far (time spent waiting for approval is not the
    // tool's).
    let mut started = Instant::now();
    let tool_name = resolved.name();
    let parsed = &resolved.args;
    shared.services.emitter.emit(AgentEvent::ToolCallStarted {
        turn_id,
        call_id: call.id.clone(),
        tool: tool_name.clone(),
        arguments: parsed
            .as_ref()
            .map_or_else(|_| Value::String(call.arguments.clone()), Clone::clone),
        effect: resolved.tool.as_ref().ok().map(|t| t.tool.effect()),
        kind: resolved.tool.as_ref().ok().map(|t| t.tool.kind()),
        parent: parent.map(str::to_string),
    });
    let mut written = None;
    let outcome = if cancel.is_cancelled() {
        Outcome::Failed(ToolError::Cancelled(
            "not run: the user interrupted the turn before this call started".into(),
        ))
    } else {
        match (&resolved.tool, parsed) {
            (Err(e), _) | (Ok(_), Err(e)) => Outcome::Failed(e.clone()),
            // A plan turn calls only what looks, whatever was offered or
            // the rules allow: it changes nothing by construction.
            (Ok(tool), Ok(_)) if shared.planning() && !tool.tool.offered_when_planning() => {
                Outcome::Denied(ToolError::PermissionDenied(format!(
                    "this turn only plans: {} is not among the tools a plan may use (they \
                     only look; commands run in a read-only sandbox). Propose the change in \
                     your plan instead",
                    tool.name()
                )))
            }
            // `/init` studies: commands only look (exec_shell runs
            // read-only), and nothing else may run a program.
            (Ok(tool), Ok(_))
                if shared.looks_only()
                    && tool.tool.effect() == crate::protocol::Effect::Exec
                    && !tool.tool.offered_when_planning() =>
            {
                Outcome::Denied(ToolError::PermissionDenied(format!(
                    "this turn only looks: {} cannot run here (exec_shell runs commands in a \
                     read-only sandbox)",
                    tool.name()
                )))
            }
            (Ok(tool), Ok(args)) => {
                run_stages(
                    shared,
                    call,
                    tool,
                    args.clone(),
                    cancel,
                    &mut started,
                    &mut written,
                )
                .await
            }
        }
    };
    // A result that holds what a program printed may hold what a read
    // rule covers, though it came to be covered only while it ran.
    // So may a file any tool reads while a background command runs (it
    // may have copied a covered file that came to be since).
    if resolved
        .tool
        .as_ref()
        .is_ok_and(|t| t.tool.prints_unchecked())
        || shared.services.jobs.any_running()
    {
        shared.look_at_covered().await;
    }
    let (result, text) = normalize(shared, &call.id, outcome, started);
    let output = ToolOutput {
        call_id: result.call_id.clone(),
        content: text,
        is_error: result.status != ToolStatus::Ok,
    };
    shared.record(Item::ToolOutput(output.clone())).await;
    if let Some(kind) = &result.metadata.error_kind {
        tracing::info!(tool = %tool_name, call_id = %call.id, error_kind = %kind, "tool call failed");
    }
    note_denial(shared, &call.id, &tool_name, &result);
    let change = written.filter(|_| result.status == ToolStatus::Ok);
    let exit_code = result
        .content
        .get("exit_code")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok());
    // What it found or did, as its tool reads its own result.
    let summary = match &resolved.tool {
        Ok(tool) if result.status == ToolStatus::Ok => tool.tool.summary(&result.content),
        _ => None,
    };
    shared.services.emitter.emit(AgentEvent::ToolCallFinished {
        call_id: call.id.clone(),
        tool: tool_name,
        status: result.status,
        exit_code,
        content: result.content,
        metadata: result.metadata,
        diff: change.as_ref().map(FileChange::unified),
        change: change.map(Box::new),
        summary,
    });
    output
}

/// A denied call is kept for the turn's end (`turn_completed.denied`),
/// with what it needed approval for, if it asked.
fn note_denial(shared: &Shared, call_id: &str, tool: &str, result: &ToolResult) {
    let needed = shared.state().asked.remove(call_id).unwrap_or_default();
    if result.status != ToolStatus::Denied {
        return;
    }
    let reason = result
        .content
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or("denied")
        .to_string();
    shared.state().denied.push(crate::protocol::Denial {
        call_id: call_id.to_string(),
        tool: tool.to_string(),
        needed,
        reason,
    });
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
    written: &mut Option<FileChange>,
) -> Outcome {
    // 3. validate
    if let Err(e) = tool.validate(&args) {
        return Outcome::Failed(e);
    }
    // 4. guardrail, then before-hooks
    let (args, ops, note) = match guard(shared, call, tool, args, cancel).await {
        Ok(judged) => judged,
        Err(outcome) => return outcome,
    };
    // 5. authorize
    let exact = match authorize(shared, call, tool, &args, &ops, cancel, None).await {
        Ok(Some(exact)) => Some(exact),
        // Allowed without asking: a file change is still computed once
        // and written as computed (and shown once written).
        Ok(None) => match change_of(shared, tool, &args).await {
            Ok(change) => change.map(|change| {
                let include = vec![true; change.hunks.len()];
                Exact {
                    change,
                    include,
                    edited: None,
                }
            }),
            Err(e) => return Outcome::Failed(e),
        },
        Err(outcome) => return outcome,
    };
    let shown = exact.as_ref().map(|e| e.change.keeping(&e.include));
    if cancel.is_cancelled() {
        return Outcome::Failed(ToolError::Cancelled(
            "not run: the user interrupted the turn before it started".into(),
        ));
    }
    // 6. execute (what is about to run is on record first: a session
    // resumed after a kill never runs it again; the files are
    // checkpointed before the turn's first change)
    let checkpoints = shared
        .services
        .checkpoints
        .as_ref()
        .filter(|_| super::undo::may_change_files(tool.tool.effect()));
    let mut ignored = None;
    if let Some(c) = checkpoints {
        c.before_change(shared, &call.id, tool.name()).await;
        ignored = c.ignored_now().await;
    }
    shared
        .record_now(Item::Approved {
            call_id: call.id.clone(),
        })
        .await;
    *started = Instant::now();
    let Args {
        json: args,
        call: prepared,
    } = args;
    let result = execute(shared, call, tool, prepared, exact, cancel).await;
    if let (Some(c), Some(before)) = (checkpoints, ignored) {
        c.tell_ignored_lost(shared, before, &call.id, tool.name())
            .await;
    }
    if result.is_ok() {
        *written = shown;
    }
    // 6b. a run the sandbox stopped may go again outside it, when the
    // person says so
    let (args, ops, result) = match &result {
        Ok(value) => match tool.tool.unsandboxed_retry(&args, value) {
            Some(retry) if shared.services.approver.source() == DecisionSource::User => {
                escalate(shared, call, tool, retry, cancel, started)
                    .await
                    .unwrap_or_else(|declined| (args, ops, Ok(with_note(result, &declined))))
            }
            _ => (args, ops, result),
        },
        Err(_) => (args, ops, result),
    };
    // 7. after-hooks
    after_hooks(shared, call, tool, &args, &ops, result, note).await
}

/// A call the sandbox stopped, run again outside it: judged afresh (the
/// guardrail and the before-hooks see the unsandboxed arguments) and
/// asked of the person, whatever the mode, rules or grants. `Err` says
/// why it did not run again.
async fn escalate(
    shared: &Shared,
    call: &ToolCall,
    tool: &RegisteredTool,
    retry: Value,
    cancel: &CancellationToken,
    started: &mut Instant,
) -> Result<(Value, Vec<Operation>, Result<Value, ToolError>), String> {
    if cancel.is_cancelled() {
        return Err("the turn was interrupted".into());
    }
    let (args, ops, _) = guard(shared, call, tool, retry, cancel)
        .await
        .map_err(|_| "running it outside the sandbox was refused".to_string())?;
    let why = Need {
        what: "run it again outside the sandbox".into(),
        reason: format!(
            "it failed, and the sandbox may be why (see its output); {UNSANDBOXED_REASON}"
        ),
        grant: None,
    };
    if authorize(shared, call, tool, &args, &ops, cancel, Some(why))
        .await
        .is_err()
    {
        return Err("the person chose not to run it outside the sandbox".into());
    }
    *started = Instant::now();
    let Args {
        json: args,
        call: prepared,
    } = args;
    let result = execute(shared, call, tool, prepared, None, cancel).await;
    let result = result.map(|mut v| {
        if let Some(obj) = v.as_object_mut() {
            obj.insert(
                "note".into(),
                Value::from(
                    "the sandboxed run failed; the person approved running it again outside \
                     the sandbox, and this is that run",
                ),
            );
        }
        v
    });
    Ok((args, ops, result))
}

/// `result`, with `note` added to the value.
fn with_note(result: Result<Value, ToolError>, note: &str) -> Value {
    let mut value = result.unwrap_or_default();
    if let Some(obj) = value.as_object_mut() {
        obj.insert("note".into(), Value::from(note));
    }
    value
}

type Judged<'t> = (Args<'t>, Vec<Operation>, Option<String>);

/// A call's arguments: as JSON (what hooks, the log, the record and the
/// person see) and as its tool read them, once, for every stage from the
/// guardrail to the run. Changed arguments (a guardrail's cap, a hook's
/// change, a run outside the sandbox) are read anew.
struct Args<'t> {
    json: Value,
    call: Box<dyn Prepared + 't>,
}

/// Stage 4: what the call will do, judged by the guardrail (denylist,
/// deny rules, caps) and then by the before-hooks, which may change the
/// arguments (judged again) or deny.
async fn guard<'t>(
    shared: &Shared,
    call: &ToolCall,
    tool: &'t RegisteredTool,
    mut args: Value,
    cancel: &CancellationToken,
) -> Result<Judged<'t>, Outcome> {
    let name = tool.name();
    let verdict = |outcome, reason: Option<String>, ops: &[Operation]| {
        shared.services.emitter.emit(AgentEvent::GuardrailVerdict {
            call_id: call.id.clone(),
            tool: name.to_string(),
            verdict: outcome,
            reason,
            operations: ops.to_vec(),
        });
    };
    let deny = |e: ToolError, ops: &[Operation]| {
        verdict(GuardrailOutcome::Deny, Some(e.to_string()), ops);
        Outcome::Denied(e)
    };
    let mut notes: Vec<String> = Vec::new();
    let mut prepared = tool.tool.prepare(&args).map_err(|e| deny(e, &[]))?;
    let mut ops = prepared
        .operations(&shared.services.workspace)
        .map_err(|e| deny(e, &[]))?;
    // A guardrail's cap or a hook changed the arguments since they were
    // read: read again (once) what will run.
    let mut changed_since = false;
    match shared
        .services
        .guardrails
        .check(name, tool.tool.kind(), &args, &ops)
    {
        Verdict::Allow => {}
        Verdict::Modify {
            args: changed,
            note,
        } => {
            args = changed;
            changed_since = true;
            notes.push(note);
        }
        Verdict::Deny(e) => return Err(deny(guard_error(e), &ops)),
    }
    if hooks_would_write_while_planning(shared, name) {
        return Err(deny(
            ToolError::PermissionDenied(
                "this turn only plans, and your hooks for this tool cannot run without \
                 writing (the sandbox is off): propose it in your plan instead"
                    .into(),
            ),
            &ops,
        ));
    }
    for hook in shared.before_hooks(name) {
        let input = hook_input(shared, "before_tool_call", call, name, &args, &ops);
        match hook_runner(shared).before(&hook, &input).await {
            BeforeOutcome::Allow => {}
            BeforeOutcome::Deny(reason) => {
                let e = GuardError::Hook {
                    hook: hook.command.clone(),
                    reason,
                };
                return Err(deny(guard_error(e), &ops));
            }
            BeforeOutcome::Modify(changed) => {
                if let Err(e) = tool.validate(&changed) {
                    let e = ToolError::PermissionDenied(format!(
                        "the before hook `{}` changed the arguments into ones the tool refuses: {e}",
                        hook.command
                    ));
                    return Err(deny(e, &ops));
                }
                ops = tool
                    .tool
                    .prepare(&changed)
                    .and_then(|c| c.operations(&shared.services.workspace))
                    .map_err(|e| deny(e, &ops))?;
                changed_since = true;
                match shared
                    .services
                    .guardrails
                    .check(name, tool.tool.kind(), &changed, &ops)
                {
                    Verdict::Deny(e) => return Err(deny(guard_error(e), &ops)),
                    Verdict::Modify { args: capped, note } => {
                        args = capped;
                        notes.push(note);
                    }
                    Verdict::Allow => args = changed,
                }
                notes.push(format!(
                    "the before hook `{}` changed the arguments",
                    hook.command
                ));
            }
        }
        if cancel.is_cancelled() {
            return Err(Outcome::Failed(ToolError::Cancelled(
                "not run: the user interrupted the turn".into(),
            )));
        }
    }
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    let outcome = if note.is_some() {
        GuardrailOutcome::Modify
    } else {
        GuardrailOutcome::Allow
    };
    verdict(outcome, note.clone(), &ops);
    // What was judged is what runs: read again only if a guardrail or a
    // hook changed it.
    if changed_since {
        prepared = tool.tool.prepare(&args).map_err(|e| deny(e, &ops))?;
    }
    Ok((
        Args {
            json: args,
            call: prepared,
        },
        ops,
        note,
    ))
}

fn guard_error(e: GuardError) -> ToolError {
    let hint = match &e {
        GuardError::Denylisted(_) => {
            " Do not retry it in another form; find another way or ask the user."
        }
        GuardError::Rule { .. } => {
            " The user's permission rules forbid it; do not retry it in another form."
        }
        GuardError::Hook { .. } => "",
    };
    ToolError::PermissionDenied(format!("{e}.{hint}"))
}

/// Stage 5: rules and the approval mode per operation, grants, then the
/// approver for what is left.
async fn authorize(
    shared: &Shared,
    call: &ToolCall,
    tool: &RegisteredTool,
    args: &Args<'_>,
    ops: &[Operation],
    cancel: &CancellationToken,
    first: Option<Need>,
) -> Result<Option<Exact>, Outcome> {
    let name = tool.name();
    let effect = tool.tool.effect();
    // Planning, no allow rule lets anything past the read-only table.
    let looking;
    let rules = if shared.planning() {
        looking = shared.services.guardrails.rules().without_allow();
        &looking
    } else {
        shared.services.guardrails.rules()
    };
    let assessor = Assessor {
        mode: shared.mode(),
        rules,
        workspace: &shared.services.workspace,
        protected: &shared.settings.protected_files,
    };
    let needs = match assessor.assess(name, effect, ops) {
        Assessment::Auto if first.is_none() => {
            match super::judge::question(shared, call, tool, &args.json, ops, cancel).await {
                None => return Ok(None),
                Some(need) => vec![need],
            }
        }
        Assessment::Auto => Vec::new(),
        Assessment::Refuse(reason) => {
            return Err(Outcome::Denied(ToolError::PermissionDenied(reason)));
        }
        Assessment::Ask(needs) => needs,
    };
    let decided = |decision: ApprovalDecision, source| {
        shared.services.emitter.emit(AgentEvent::ApprovalDecided {
            call_id: call.id.clone(),
            tool: name.to_string(),
            decision,
            source,
        });
    };
    let uncovered = super::approval::uncovered(shared, first, needs);
    if uncovered.is_empty() {
        decided(
            ApprovalDecision::ApproveForConversation,
            DecisionSource::Grant,
        );
        return Ok(None);
    }
    // A call that would fail anyway (an edit whose text is not there) fails
    // now, without bothering the person.
    let change = change_of(shared, tool, args)
        .await
        .map_err(Outcome::Failed)?;
    // A write that changes nothing asks nothing: the writer says so.
    if let Some(c) = &change
        && c.kind == crate::protocol::change::ChangeKind::Modify
        && c.hunks.is_empty()
    {
        return Ok(Some(Exact {
            change: c.clone(),
            include: Vec::new(),
            edited: None,
        }));
    }
    let diff = match &change {
        Some(c) => Some(c.unified()),
        None => args
            .call
            .preview(&shared.services.workspace)
            .map_err(Outcome::Failed)?,
    };
    // What a conversation grant would cover, kept here: the person is
    // shown it in words.
    let grant: Option<Vec<GrantKey>> = uncovered.iter().map(|n| n.grant.clone()).collect();
    let mut reasons: Vec<&str> = uncovered.iter().map(|n| n.reason.as_str()).collect();
    reasons.dedup();
    let round = shared.state().round.get(&call.id).copied();
    let request = ApprovalRequest {
        call_id: call.id.clone(),
        tool: name.to_string(),
        arguments: args.json.clone(),
        effect,
        operations: ops.to_vec(),
        needs: uncovered
            .iter()
            .map(|n| ApprovalNeed {
                what: n.what.clone(),
                reason: n.reason.clone(),
            })
            .collect(),
        reason: reasons.join("; "),
        grant: grant.as_ref().map(|keys| GrantOffer {
            covers: keys.iter().map(GrantKey::describe).collect(),
            ttl_secs: shared.services.authz.ttl().as_secs(),
        }),
        diff,
        change: change.clone().map(Box::new),
        round,
    };
    shared.state().asked.insert(
        call.id.clone(),
        request.needs.iter().map(|n| n.what.clone()).collect(),
    );
    shared
        .services
        .emitter
        .emit(AgentEvent::ApprovalRequested(request.clone()));
    let source = shared.services.approver.source();
    let decision = hooks::decide_telling(shared, &request, source, cancel).await;
    decided(decision.clone(), source);
    apply(shared, decision, source, change, grant.as_deref(), cancel).await
}

/// What the person decided, applied: what is written (the whole change,
/// the hunks kept, their own version), a grant recorded, or why not.
async fn apply(
    shared: &Shared,
    decision: ApprovalDecision,
    source: DecisionSource,
    change: Option<FileChange>,
    grant: Option<&[GrantKey]>,
    cancel: &CancellationToken,
) -> Result<Option<Exact>, Outcome> {
    // What was shown is what is written: the whole change, or the hunks
    // kept.
    let all = |c: FileChange| {
        let n = c.hunks.len();
        Exact {
            change: c,
            include: vec![true; n],
            edited: None,
        }
    };
    match decision {
        ApprovalDecision::ApproveOnce => Ok(change.map(all)),
        ApprovalDecision::ApproveEdited { content } => {
            Ok(change.map(|c| edited(c, &content)).transpose()?)
        }
        ApprovalDecision::ApproveHunks { hunks } => {
            let Some(change) = change else {
                return Ok(None);
            };
            let include: Vec<bool> = (0..change.hunks.len())
                .map(|i| hunks.contains(&i))
                .collect();
            // A move has no hunks: approving it moves the file.
            if !include.contains(&true) && !change.hunks.is_empty() {
                return Err(Outcome::Denied(ToolError::PermissionDenied(
                    "the user left out every hunk of this change; nothing was written".into(),
                )));
            }
            Ok(Some(Exact {
                change,
                include,
                edited: None,
            }))
        }
        ApprovalDecision::ApproveForConversation => {
            // A call no grant may cover is approved this once.
            if let Some(keys) = grant {
                shared.services.authz.grant(keys);
                let expires = std::time::SystemTime::now() + shared.services.authz.ttl();
                shared
                    .record(Item::Grant {
                        keys: keys.to_vec(),
                        expires_ms: crate::session::history::epoch_ms(expires),
                    })
                    .await;
            }
            Ok(change.map(all))
        }
        // An interrupt while the question was open is no one's denial.
        ApprovalDecision::Deny { .. } if cancel.is_cancelled() => {
            Err(Outcome::Failed(ToolError::Cancelled(
                "not run: the user interrupted the turn while it waited for approval".into(),
            )))
        }
        ApprovalDecision::Deny { message } => {
            let text = match (source, message) {
                (DecisionSource::User, Some(m)) => {
                    format!("the user denied this call and said: {m}")
                }
                (DecisionSource::User, None) => "the user denied this call".to_string(),
                (_, Some(m)) => m,
                (_, None) => "approval was not given".to_string(),
            };
            Err(Outcome::Denied(ToolError::PermissionDenied(text)))
        }
    }
}

/// The person's own version of `change` (`E` in the dialog), with what
/// they changed for the model to learn from (cut if long).
fn edited(change: FileChange, content: &str) -> Result<Exact, Outcome> {
    if !change.editable() {
        return Err(Outcome::Failed(ToolError::InvalidArgs(
            "a deletion or a move has no content to edit; nothing was done".into(),
        )));
    }
    // What the person changed in the model's proposal, for the
    // model to learn from (cut if long).
    let theirs = FileChange::new(
        &change.path,
        change.file().to_path_buf(),
        Some(&change.new_text()),
        content,
    )
    .unified();
    let theirs = if theirs.len() > EDIT_DIFF_MAX {
        format!(
            "{}\n… (cut)",
            crate::protocol::text::cut(&theirs, EDIT_DIFF_MAX)
        )
    } else {
        theirs
    };
    let change = change.with_new(content);
    let include = vec![true; change.hunks.len()];
    Ok(Exact {
        change,
        include,
        edited: Some(theirs),
    })
}

/// A file change approved as shown: the hunks to write.
struct Exact {
    change: FileChange,
    include: Vec<bool>,
    /// The person edited the proposal: what is written is theirs, and
    /// how it differs from the model's (a unified diff, proposal → theirs).
    edited: Option<String>,
}

/// The most of the person's edit the model is shown as a diff.
const EDIT_DIFF_MAX: usize = 16 * 1024;

async fn execute(
    shared: &Shared,
    call: &ToolCall,
    tool: &RegisteredTool,
    args: Box<dyn Prepared + '_>,
    exact: Option<Exact>,
    cancel: &CancellationToken,
) -> Result<Value, ToolError> {
    let emitter = shared.services.emitter.clone();
    let call_id = call.id.clone();
    let name = tool.name().to_string();
    let ctx = ToolContext {
        workspace: shared.services.workspace.clone(),
        cancel: cancel.child_token(),
        progress: ProgressSink::new(move |p| {
            emitter.emit(AgentEvent::ToolProgress {
                call_id: call_id.clone(),
                tool: name.clone(),
                stream: p.stream,
                text: p.text,
            });
        }),
        redactor: shared.services.redactor.clone(),
        read_denials: Some(shared.services.guardrails.reads().clone()).filter(|r| r.active()),
        call_id: call.id.clone(),
        together: Some(shared.services.desk.clone()),
        jobs: Some(shared.services.jobs.clone()),
        looks_only: shared.looks_only(),
    };
    let work = async {
        match &exact {
            Some(e) => {
                let mut v =
                    crate::tools::change::apply(tool.name(), &e.change, &e.include, &ctx).await?;
                if let Some(theirs) = &e.edited {
                    v["edited_by_user"] = json!(true);
                    v["note"] = json!(
                        "the person edited your change before it was written: the file holds \
                         their version, not yours (edit_diff: your proposal → what was \
                         written); read it again before changing it further"
                    );
                    v["edit_diff"] = json!(theirs);
                }
                Ok(v)
            }
            None => args.execute(&ctx).await,
        }
    };
    let run = AssertUnwindSafe(work).catch_unwind();
    // A question's time is the person's: only an interrupt ends it.
    let limit = if tool.tool.waits_for_person() {
        std::time::Duration::MAX
    } else {
        shared.settings.tool_timeout
    };
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

/// Stage 7: the user's after-hooks see the result, error or not, and may
/// replace or withhold it (they are shown it redacted, as an event).
async fn after_hooks(
    shared: &Shared,
    call: &ToolCall,
    tool: &RegisteredTool,
    args: &Value,
    ops: &[Operation],
    result: Result<Value, ToolError>,
    note: Option<String>,
) -> Outcome {
    let name = tool.name();
    let mut result = result;
    for hook in shared.after_hooks(name) {
        let mut input = hook_input(shared, "after_tool_call", call, name, args, ops);
        let (response, status) = match &result {
            Ok(v) => (v.clone(), "ok"),
            Err(e) => (json!({ "error": e.model_message() }), "error"),
        };
        input["tool_response"] =
            crate::protocol::redact::redacted(response, &shared.services.redactor);
        input["status"] = Value::from(status);
        match hook_runner(shared).after(&hook, &input).await {
            AfterOutcome::Keep => {}
            AfterOutcome::Replace(v) => match &result {
                Ok(_) => result = Ok(v),
                Err(_) => {
                    tracing::debug!(hook = %hook.command, "an after hook cannot turn an error into a result; ignored")
                }
            },
            AfterOutcome::Withhold(reason) => {
                result = Err(ToolError::PermissionDenied(format!(
                    "the result was withheld by the after hook `{}`: {reason}",
                    hook.command
                )));
            }
        }
    }
    match result {
        Ok(value) => Outcome::Ran { value, note },
        Err(e) => Outcome::Failed(e),
    }
}
