//! `task`: a subagent. The model hands a self-contained job to a
//! conversation of its own (its own context: the job's prompt and what
//! it finds), on the same provider and model, through the same pipeline,
//! grants, approvals and sandbox as every call. Its calls are events
//! that name the `task` call they were made for (`parent`), so the
//! transcript and the log nest them; its final answer is the tool's
//! result; its tokens count in the session's cost. Caps: one level (a
//! subagent has no `task`), a few at once, a bounded number of rounds;
//! an interrupt stops it with the turn.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Shared;
use crate::protocol::{AgentEvent, Usage};
use crate::provider::{ChatRequest, Message, Quiet, ToolCall, ToolOutput};
use crate::tools::ToolError;
use crate::tools::spec::TaskJob;

/// Subagents running at once (more wait their turn).
pub(crate) const MAX_CONCURRENT: usize = 3;
/// Rounds of calls a subagent may make before it must answer.
pub(crate) const MAX_ROUNDS: u32 = 12;
/// What the subagent is told before its job.
const SUBAGENT: &str = "You are a subagent: another model handed you the job below and \
     reads only your final answer, not your tool calls. Do the job with the tools you have, \
     then answer with what you found or did, completely but briefly (paths, line numbers, \
     names). Do not ask questions: no one answers.";

/// The tools the subagent has: those the job names (never one a subagent
/// may not use: `Tool::subagent_may_use`), or every one that only looks.
fn offered(
    shared: &Shared,
    job: &TaskJob,
) -> Result<(Vec<crate::provider::ToolSchema>, Vec<String>), ToolError> {
    let tools = shared.services.tools.snapshot();
    let names: Vec<String> = match &job.tools {
        Some(asked) => {
            let mut names = Vec::new();
            for name in asked {
                let t = tools.registry.resolve(name).map_err(|_| {
                    ToolError::InvalidArgs(format!("`tools` names {name:?}, which is no tool"))
                })?;
                // A plan's subagent only looks, as the plan does.
                if shared.planning() && !t.tool.offered_when_planning() {
                    return Err(ToolError::PermissionDenied(format!(
                        "this turn only plans: a subagent cannot have {}, which does not only \
                         look",
                        t.name()
                    )));
                }
                if !t.tool.subagent_may_use() {
                    return Err(ToolError::InvalidArgs(format!(
                        "a subagent cannot have {}: it has no subagents, questions or plan of \
                         its own",
                        t.name()
                    )));
                }
                names.push(t.name().to_string());
            }
            names
        }
        None => tools
            .schemas
            .iter()
            .filter(|s| {
                tools
                    .registry
                    .resolve(&s.name)
                    .is_ok_and(|t| t.tool.only_looks() && t.tool.subagent_may_use())
            })
            .map(|s| s.name.clone())
            .collect(),
    };
    let schemas = tools
        .schemas
        .iter()
        .filter(|s| names.contains(&s.name))
        .cloned()
        .collect();
    Ok((schemas, names))
}

/// Runs `job` for the `task` call `parent` of turn `turn_id`: a person
/// may stop it alone (`Op::StopAgent`), and its model is then told so.
pub(crate) async fn run(
    shared: &Shared,
    turn_id: u64,
    parent: &str,
    job: TaskJob,
    cancel: &CancellationToken,
) -> Result<Value, ToolError> {
    let running = shared.services.subagents.start(parent, cancel);
    match work(shared, turn_id, parent, job, &running.cancel).await {
        Err(ToolError::Cancelled(_)) if running.stopped_by_person() => {
            Err(ToolError::ExecutionFailed(
                "the person stopped this subagent, and everything it ran; do not start it \
                 again unless they ask: go on with what you know"
                    .into(),
            ))
        }
        other => other,
    }
}

/// The job with its subagent type (`agent`), whose `tools` narrow what
/// the job asked for (or stand for it when it asked for none).
fn of_type(
    shared: &Shared,
    mut job: TaskJob,
) -> Result<(TaskJob, Option<crate::agents::AgentType>), ToolError> {
    let Some(name) = job.agent.clone() else {
        return Ok((job, None));
    };
    let kind = shared
        .services
        .agent_types
        .as_ref()
        .and_then(|r| r.get(&name))
        .ok_or_else(|| ToolError::InvalidArgs(format!("no subagent type is called {name:?}")))?;
    if let Some(own) = &kind.tools {
        job.tools = Some(match job.tools.take() {
            Some(asked) => {
                let both: Vec<String> = asked.iter().filter(|t| own.contains(t)).cloned().collect();
                if both.is_empty() && !asked.is_empty() {
                    return Err(ToolError::InvalidArgs(format!(
                        "the `{name}` subagent may use none of the tools asked for ({}); it may \
                         use: {}",
                        asked.join(", "),
                        own.join(", ")
                    )));
                }
                both
            }
            None => own.clone(),
        });
    }
    Ok((job, Some(kind)))
}

/// Why a subagent stopped at a cap, with the last it said.
fn stopped_at_cap(
    standing: crate::protocol::budget::Standing,
    calls_made: usize,
    said: &str,
) -> ToolError {
    let said = match said.trim() {
        "" => String::new(),
        s => format!("; the last it said: {s}"),
    };
    ToolError::ExecutionFailed(format!(
        "the subagent was stopped before its next request: {standing} (after {calls_made} \
         calls){said}"
    ))
}

/// A `subagent_stop` hook may hold a subagent's end once, with a reason
/// it reads: its answer and the reason go into its conversation.
async fn held(
    shared: &Shared,
    kind: Option<&crate::agents::AgentType>,
    completion: &crate::provider::Completion,
    messages: &mut Vec<Message>,
) -> bool {
    let said = super::events::fire(
        shared,
        crate::policy::session_hooks::SessionEvent::SubagentStop,
        kind.map_or("", |k| k.name.as_str()),
        json!({
            "stop_hook_active": false,
            "agent_type": kind.map(|k| k.name.clone()),
            "last_assistant_message": completion.text,
        }),
    )
    .await;
    let Some(reason) = said.block else {
        return false;
    };
    messages.push(completion.message());
    let mut text = format!("A stop hook says the work is not done: {reason}");
    shared.to_model(&mut text);
    messages.push(Message::User(text));
    true
}

/// About the tokens the system prompt and the tools take in a request.
fn overhead(system: &str, schemas: &[crate::provider::ToolSchema]) -> u64 {
    let tools: usize = schemas
        .iter()
        .map(|s| s.name.len() + s.description.len() + s.parameters.to_string().len())
        .sum();
    u64::try_from((system.len() + tools) / 4).unwrap_or(u64::MAX)
}

/// The subagent's own cap it reached (`usage` spent, `next` reckoned),
/// else the turn's or the session's.
fn over_cap(
    shared: &Shared,
    usage: &Usage,
    next: &Usage,
) -> Option<crate::protocol::budget::Standing> {
    let state = shared.state();
    state
        .budget
        .caps
        .task_standings(usage, next)
        .into_iter()
        .find(crate::protocol::budget::Standing::reached)
        .or_else(|| state.budget.reached(next))
}

/// The subagent's model, effort and system prompt: its type's, or the
/// conversation's.
fn setup(
    shared: &Shared,
    kind: Option<&crate::agents::AgentType>,
) -> (String, Option<crate::protocol::Effort>, String) {
    let model = kind
        .and_then(|k| k.model.clone())
        .unwrap_or_else(|| shared.model());
    let effort = kind.and_then(|k| k.effort).or(shared.effort());
    let system = match kind {
        None => format!("{}\n\n{SUBAGENT}", shared.settings.system_prompt),
        Some(k) => format!(
            "{}\n\n{SUBAGENT}\n\nYou are the `{}` subagent. Its instructions:\n\n{}",
            shared.settings.system_prompt,
            k.name,
            k.prompt.trim()
        ),
    };
    (model, effort, system)
}

async fn work(
    shared: &Shared,
    turn_id: u64,
    parent: &str,
    job: TaskJob,
    cancel: &CancellationToken,
) -> Result<Value, ToolError> {
    let (job, kind) = of_type(shared, job)?;
    let (model, effort, system) = setup(shared, kind.as_ref());
    let (schemas, names) = offered(shared, &job)?;
    let mut prompt = format!("{}\n\n{}", job.description, job.prompt);
    shared.to_model(&mut prompt);
    let mut messages = vec![Message::User(prompt)];
    let mut usage = Usage::default();
    let mut calls_made = 0usize;
    let mut said = String::new();
    let mut repeats = super::repeats::Repeats::default();
    // What the system prompt and the tools take in each request, and what
    // the last request sent and got back (the prefix the next one sends
    // again).
    let overhead = overhead(&system, &schemas);
    let mut seen = 0u64;
    let mut stop_held = false;
    for round in 0..=MAX_ROUNDS {
        // Its own caps, and the turn's and the session's (which the
        // turn is then stopped by, before its next request, as this one
        // is before a request whose input alone would pass a cap).
        let next = super::budget::next_request(
            overhead.saturating_add(super::compact::estimate(&messages)),
            seen,
            shared.price(&model),
        );
        if let Some(standing) = over_cap(shared, &usage, &next) {
            return Err(stopped_at_cap(standing, calls_made, &said));
        }
        let request = ChatRequest {
            model: &model,
            system: &system,
            messages: &messages,
            tools: if round == MAX_ROUNDS { &[] } else { &schemas },
            effort,
            cache_key: Some(parent),
        };
        let mut completion = match shared
            .services
            .provider
            .complete(request, &mut Quiet("subagent"), cancel)
            .await
        {
            Ok(c) => c,
            Err(crate::provider::ProviderError::Cancelled) => {
                return Err(ToolError::Cancelled("the subagent was interrupted".into()));
            }
            Err(e) => {
                return Err(ToolError::ExecutionFailed(format!(
                    "the subagent's request failed: {e}"
                )));
            }
        };
        if completion.usage.cost_usd.is_none() {
            completion.usage.cost_usd = shared.price(&model).map(|p| p.cost(&completion.usage));
        }
        usage.add(completion.usage);
        seen = completion
            .usage
            .input_tokens
            .saturating_add(completion.usage.output_tokens);
        shared
            .spend(
                super::budget::By::task(parent, &job.description),
                &model,
                completion.usage,
            )
            .await;
        shared.services.emitter.emit(AgentEvent::UsageUpdated {
            task: Some(parent.to_string()),
            turn_id,
            last: completion.usage,
            total: usage,
            model: model.clone(),
        });
        if !completion.text.trim().is_empty() {
            said.clone_from(&completion.text);
        }
        if completion.tool_calls.is_empty() {
            if !stop_held
                && round < MAX_ROUNDS
                && held(shared, kind.as_ref(), &completion, &mut messages).await
            {
                stop_held = true;
                continue;
            }
            return Ok(json!({
                "answer": completion.text,
                "rounds": round,
                "calls": calls_made,
                "usage": usage,
            }));
        }
        // The server's ids go back to it as they came (a server refuses
        // an id it did not issue, or one over 40 characters); the ids the
        // transcript and the log know the calls by are Lathe's own, under
        // the task's, as they share the turn's.
        completion.tool_calls = super::turn::unique_ids(std::mem::take(&mut completion.tool_calls));
        let calls = completion.tool_calls.clone();
        // The same call again and again: the subagent stops, and its
        // model is told why.
        if let Some(r) = repeats.before(&calls, shared.settings.repeat_calls) {
            shared.services.emitter.emit(AgentEvent::LoopDetected {
                turn_id,
                tool: r.tool.clone(),
                arguments: r.arguments,
                count: r.count,
                failing: false,
                task: Some(parent.to_string()),
            });
            return Err(ToolError::ExecutionFailed(format!(
                "the subagent was stopped: it made the same {} call {} times (after {calls_made} \
                 calls)",
                r.tool, r.count
            )));
        }
        calls_made += calls.len();
        let outputs = run_round(shared, turn_id, parent, &names, &calls, cancel).await;
        messages.push(completion.message());
        messages.push(Message::ToolResults(outputs));
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled("the subagent was interrupted".into()));
        }
    }
    Err(ToolError::ExecutionFailed(format!(
        "the subagent made calls for {MAX_ROUNDS} rounds without answering"
    )))
}

/// A round of the subagent's calls: those of tools it has go through the
/// pipeline (under ids qualified by the task's); any other is refused,
/// the model told why. The outputs carry the server's ids.
async fn run_round(
    shared: &Shared,
    turn_id: u64,
    parent: &str,
    names: &[String],
    calls: &[ToolCall],
    cancel: &CancellationToken,
) -> Vec<ToolOutput> {
    let qualified = |id: &str| format!("{parent}-{id}");
    let tools = shared.services.tools.snapshot();
    let (allowed, refused): (Vec<&ToolCall>, Vec<&ToolCall>) = calls.iter().partition(|c| {
        tools
            .registry
            .resolve(&c.name)
            .is_ok_and(|t| names.iter().any(|n| n == t.name()))
    });
    let allowed: Vec<ToolCall> = allowed
        .into_iter()
        .map(|c| ToolCall {
            id: qualified(&c.id),
            ..c.clone()
        })
        .collect();
    let mut ran = super::dispatch::run_calls(shared, turn_id, &allowed, Some(parent), cancel).await;
    let mut out = Vec::with_capacity(calls.len());
    for c in calls {
        if refused.iter().any(|r| r.id == c.id) {
            out.push(ToolOutput {
                call_id: c.id.clone(),
                content: json!({"error": format!(
                    "{} is not among your tools here; use those you have",
                    c.name
                )})
                .to_string(),
                is_error: true,
            });
        } else if let Some(i) = ran.iter().position(|o| o.call_id == qualified(&c.id)) {
            let mut output = ran.remove(i);
            output.call_id.clone_from(&c.id);
            out.push(output);
        }
    }
    out
}
