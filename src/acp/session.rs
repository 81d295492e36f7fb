//! One ACP session: a Lathe agent, and the task that turns its events
//! into `session/update`s, asks the editor what the person decides, and
//! answers the prompt when the turn ends. Nothing here holds the
//! connection's dispatch loop: the editor's answers and a cancel are read
//! while a turn runs.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    self as acp, ClientCapabilities, ContentBlock, CreateElicitationRequest, ElicitationAction,
    ElicitationFormMode, ElicitationSchema, ElicitationSessionScope, PermissionOption,
    PermissionOptionKind, PromptResponse, RequestPermissionOutcome, RequestPermissionRequest,
    SessionNotification, SessionUpdate, ToolCall, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use tokio::sync::mpsc;

use super::map;
use crate::protocol::{AgentEvent, ApprovalMode, ErrorKind, Op};

/// The longest Lathe waits for the person's answer in the editor: a
/// client that never shows the question must not hold the turn for good.
const ANSWER_WAIT: Duration = Duration::from_secs(15 * 60);
/// How often streamed command output is sent on (it is gathered between).
const OUTPUT_EVERY: Duration = Duration::from_millis(100);

/// What the session's agent is doing for the editor.
#[derive(Default)]
pub struct Turn {
    /// The prompt being answered.
    pub prompt: Option<Responder<PromptResponse>>,
    /// `session/cancel` came for it: it ends `cancelled`, however.
    pub cancelled: bool,
    /// A command the person typed waits for its answer.
    pub command: Option<Command>,
    /// The prompt is answered here, not by a turn (`/trust`): a cancel
    /// ends it at once.
    pub own: bool,
    /// Counts the prompts: a task answers only the prompt it was for.
    pub prompt_no: u64,
    /// Commands cancelled before the engine answered them: their answers,
    /// when they come, are dropped (never taken for a later prompt's).
    pub discard: Vec<Command>,
}

impl Command {
    /// Whether `ev` is the engine's answer to this command.
    pub fn answered_by(self, ev: &AgentEvent) -> bool {
        match (self, ev) {
            (Command::Cost, AgentEvent::Cost { .. })
            | (Command::Diff, AgentEvent::SessionDiff { .. })
            | (Command::Compact, AgentEvent::ContextCompacted { .. }) => true,
            (Command::UndoPreview, AgentEvent::Rewound { preview, error, .. }) => {
                *preview || error.is_some()
            }
            (Command::Undo, AgentEvent::Rewound { preview, .. }) => !*preview,
            _ => false,
        }
    }
}

/// A slash command whose answer is an event, not a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Cost,
    Compact,
    Diff,
    /// `/undo`: first what it would do, asked.
    UndoPreview,
    Undo,
}

/// What the session's tasks share.
#[derive(Clone)]
pub struct Link {
    pub cx: ConnectionTo<Client>,
    pub session_id: String,
    pub workspace: PathBuf,
    pub ops: mpsc::Sender<Op>,
    pub turn: Arc<Mutex<Turn>>,
    pub caps: Arc<ClientCapabilities>,
    /// The commands offered beside Lathe's own.
    pub offered: Arc<Mutex<super::commands::Offered>>,
    /// Counts the cancels: a question asked before one is abandoned, and
    /// an answer that comes after it does nothing (the call it was for
    /// is gone; a later call may have its id).
    pub epoch: Arc<tokio::sync::watch::Sender<u64>>,
    /// What to tell the person with the next prompt (an MCP server that
    /// failed or asks for a login while none ran).
    pub notes: Arc<Mutex<Vec<String>>>,
}

impl Link {
    /// Sends an update; a client gone is noticed where requests fail.
    pub fn update(&self, update: SessionUpdate) {
        let _ = self
            .cx
            .send_notification(SessionNotification::new(self.session_id.clone(), update));
    }

    /// Tells the editor every command the session offers now.
    pub fn offer_commands(&self) {
        let list = self
            .offered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .list();
        self.update(SessionUpdate::AvailableCommandsUpdate(
            acp::AvailableCommandsUpdate::new(list),
        ));
    }

    /// Which prompt the session is at.
    pub fn prompt_gen(&self) -> u64 {
        self.turn().prompt_no
    }

    /// Ends the prompt `prompt_no`, if it is still the one waiting.
    pub fn end_for(&self, prompt_no: u64, reason: acp::StopReason) {
        if self.prompt_gen() == prompt_no {
            self.end(reason);
        }
    }

    /// Which cancel the session is at.
    pub fn epoch(&self) -> u64 {
        *self.epoch.borrow()
    }

    /// Whether the turn's question may be asked now, and at which epoch
    /// (`None`: the turn was cancelled, its questions are not asked).
    pub fn asking(&self) -> Option<u64> {
        (!self.turn().cancelled).then(|| self.epoch())
    }

    /// Abandons every question asked so far.
    pub fn abandon_questions(&self) {
        self.epoch.send_modify(|e| *e += 1);
    }

    /// Waits for `answer`, unless the questions are abandoned first.
    async fn unless_abandoned<T>(&self, answer: impl std::future::Future<Output = T>) -> Option<T> {
        let start = self.epoch();
        let mut changed = self.epoch.subscribe();
        let abandoned = async move {
            while changed.changed().await.is_ok() {
                if *changed.borrow() != start {
                    return;
                }
            }
            std::future::pending::<()>().await;
        };
        tokio::select! {
            a = answer => Some(a),
            () = abandoned => None,
        }
    }

    pub fn say(&self, text: impl Into<String>) {
        self.update(SessionUpdate::AgentMessageChunk(map::chunk(text)));
    }

    fn turn(&self) -> std::sync::MutexGuard<'_, Turn> {
        self.turn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Answers the prompt (if one waits): `cancelled` when the person
    /// cancelled it, whatever else ended it.
    pub fn end(&self, reason: acp::StopReason) {
        let (responder, cancelled) = {
            let mut t = self.turn();
            t.command = None;
            t.own = false;
            let cancelled = std::mem::take(&mut t.cancelled);
            (t.prompt.take(), cancelled)
        };
        if let Some(r) = responder {
            let reason = if cancelled {
                acp::StopReason::Cancelled
            } else {
                reason
            };
            let _ = r.respond(PromptResponse::new(reason));
        }
    }

    /// Fails the prompt (if one waits) with Lathe's words.
    fn fail(&self, message: &str) {
        let (responder, cancelled) = {
            let mut t = self.turn();
            t.command = None;
            t.own = false;
            (t.prompt.take(), std::mem::take(&mut t.cancelled))
        };
        if let Some(r) = responder {
            let _ = if cancelled {
                r.respond(PromptResponse::new(acp::StopReason::Cancelled))
            } else {
                r.respond_with_error(super::internal(message))
            };
        }
    }

    fn can_elicit_text(&self) -> bool {
        self.caps
            .elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some())
    }

    /// Asks the person through the editor; `None`: no answer (cancelled,
    /// timed out, the client gone or failing).
    pub async fn ask(
        &self,
        call: ToolCallUpdate,
        options: Vec<PermissionOption>,
    ) -> Option<String> {
        let req = RequestPermissionRequest::new(self.session_id.clone(), call, options);
        let answer = tokio::time::timeout(ANSWER_WAIT, self.cx.send_request(req).block_task());
        let answer = self.unless_abandoned(answer).await?;
        match answer {
            Ok(Ok(r)) => match r.outcome {
                RequestPermissionOutcome::Selected(s) => Some(s.option_id.0.to_string()),
                _ => None,
            },
            Ok(Err(e)) => {
                tracing::warn!("the editor did not answer a permission request: {e}");
                None
            }
            Err(_) => {
                tracing::warn!("no answer from the editor in {ANSWER_WAIT:?}: taken as no");
                None
            }
        }
    }

    /// Asks the person for words (the editor's form), when it can.
    pub async fn ask_text(&self, call_id: Option<&str>, message: &str) -> Option<String> {
        if !self.can_elicit_text() {
            return None;
        }
        let schema: ElicitationSchema = serde_json::from_value(serde_json::json!({
            "type": "object",
            "properties": {"answer": {"type": "string", "title": "Answer"}},
            "required": ["answer"]
        }))
        .ok()?;
        let mut scope = ElicitationSessionScope::new(self.session_id.clone());
        scope.tool_call_id = call_id.map(|c| acp::ToolCallId::new(c.to_string()));
        let req = CreateElicitationRequest::new(
            acp::ElicitationMode::Form(ElicitationFormMode::new(scope, schema)),
            message.to_string(),
        );
        let answer = tokio::time::timeout(ANSWER_WAIT, self.cx.send_request(req).block_task());
        let answer = self.unless_abandoned(answer).await?;
        match answer {
            Ok(Ok(r)) => match r.action {
                ElicitationAction::Accept(a) => a
                    .content
                    .and_then(|c| c.get("answer").cloned())
                    .and_then(|v| serde_json::to_value(v).ok())
                    .and_then(|v| v.as_str().map(str::to_string))
                    .filter(|s| !s.trim().is_empty()),
                _ => None,
            },
            Ok(Err(e)) => {
                tracing::warn!("the editor's form failed: {e}");
                None
            }
            Err(_) => None,
        }
    }

    /// A yes-or-no question of Lathe's own, shown as a call of its own
    /// (completed on yes, failed on no or no answer).
    pub async fn confirm(
        &self,
        title: &str,
        kind: acp::ToolKind,
        text: String,
        yes: &str,
        no: &str,
    ) -> bool {
        let id = format!("lathe-{}", uuid_ish());
        let title = map::short(title, 200);
        let content = vec![acp::ToolCallContent::from(map::text(text))];
        self.update(SessionUpdate::ToolCall(
            ToolCall::new(id.clone(), title.clone())
                .kind(kind)
                .status(ToolCallStatus::Pending)
                .content(content.clone()),
        ));
        let options = vec![
            PermissionOption::new("yes", yes.to_string(), PermissionOptionKind::AllowOnce),
            PermissionOption::new("no", no.to_string(), PermissionOptionKind::RejectOnce),
        ];
        let chosen = self
            .ask(
                // The question whole in the request too: an editor may
                // show only what the request carries.
                ToolCallUpdate::new(
                    id.clone(),
                    ToolCallUpdateFields::new().title(title).content(content),
                ),
                options,
            )
            .await
            .as_deref()
            == Some("yes");
        self.update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id,
            ToolCallUpdateFields::new().status(if chosen {
                ToolCallStatus::Completed
            } else {
                ToolCallStatus::Failed
            }),
        )));
        chosen
    }

    pub async fn op(&self, op: Op) {
        let _ = self.ops.send(op).await;
    }
}

/// Output of running calls, gathered between sends.
#[derive(Default)]
struct Printed {
    by_call: HashMap<String, String>,
    dirty: Vec<String>,
}

impl Printed {
    fn add(&mut self, call_id: &str, text: &str) {
        let buf = self.by_call.entry(call_id.to_string()).or_default();
        buf.push_str(text);
        if buf.len() > 2 * map::SHOWN_OUTPUT {
            let keep = map::tail(buf, map::SHOWN_OUTPUT).to_string();
            *buf = keep;
        }
        if !self.dirty.iter().any(|c| c == call_id) {
            self.dirty.push(call_id.to_string());
        }
    }

    fn flush(&mut self, link: &Link) {
        for call_id in std::mem::take(&mut self.dirty) {
            let Some(buf) = self.by_call.get(&call_id) else {
                continue;
            };
            let shown = map::fenced(map::tail(buf, map::SHOWN_OUTPUT));
            link.update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id,
                ToolCallUpdateFields::new()
                    .status(ToolCallStatus::InProgress)
                    .content(vec![acp::ToolCallContent::from(map::text(shown))]),
            )));
        }
    }
}

/// Turns the agent's events into the editor's updates until the agent
/// ends.
pub async fn pump(link: Link, mut events: mpsc::UnboundedReceiver<AgentEvent>) {
    let mut printed = Printed::default();
    let mut tick = tokio::time::interval(OUTPUT_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            ev = events.recv() => {
                let Some(ev) = ev else { break };
                on_event(&link, &mut printed, ev);
            }
            _ = tick.tick(), if !printed.dirty.is_empty() => printed.flush(&link),
        }
    }
    link.fail("the agent stopped");
}

fn on_event(link: &Link, printed: &mut Printed, ev: AgentEvent) {
    match ev {
        AgentEvent::AssistantDelta { text, .. } => link.say(text),
        AgentEvent::ReasoningDelta { text, .. } => {
            link.update(SessionUpdate::AgentThoughtChunk(map::chunk(text)));
        }
        AgentEvent::ProviderRetry { reason, .. } => {
            link.update(SessionUpdate::AgentThoughtChunk(map::chunk(format!(
                "\n(the server failed: {reason}; trying again)\n"
            ))));
        }
        AgentEvent::ToolCallStarted {
            call_id,
            tool,
            arguments,
            kind,
            ..
        } => link.update(SessionUpdate::ToolCall(map::started(
            &link.workspace,
            &call_id,
            &tool,
            &arguments,
            kind,
        ))),
        AgentEvent::ToolProgress { call_id, text, .. } => printed.add(&call_id, &text),
        AgentEvent::ApprovalRequested(req) => {
            // A cancelled turn's questions are not asked (its waits are
            // ended by the engine); the others are tied to this moment.
            if let Some(epoch) = link.asking() {
                let link = link.clone();
                tokio::spawn(async move { approve(link, req, epoch).await });
            }
        }
        AgentEvent::ApprovalDecided {
            call_id, decision, ..
        } if !matches!(decision, crate::protocol::ApprovalDecision::Deny { .. }) => {
            link.update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id,
                ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
            )));
        }
        AgentEvent::ToolCallFinished {
            call_id,
            status,
            content,
            change,
            ..
        } => {
            printed.flush(link);
            let out = printed.by_call.remove(&call_id).unwrap_or_default();
            link.update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id,
                map::finished(&link.workspace, status, &content, change.as_deref(), &out),
            )));
        }
        AgentEvent::McpServerStatus(status) => {
            server_trouble(link, &status);
            prompts_changed(link, &status);
        }
        AgentEvent::Attachments { files, .. } => not_attached(link, &files),
        AgentEvent::PlanUpdated { steps, .. } => {
            link.update(SessionUpdate::Plan(map::plan(&steps)));
        }
        AgentEvent::QuestionAsked {
            call_id,
            question,
            choices,
            from,
            ..
        } => {
            if let Some(epoch) = link.asking() {
                let link = link.clone();
                tokio::spawn(
                    async move { answer(link, call_id, question, choices, from, epoch).await },
                );
            }
        }
        ev @ (AgentEvent::ToolLimitReached { .. }
        | AgentEvent::BudgetReached { .. }
        | AgentEvent::LoopDetected { .. }) => on_limit(link, ev),
        AgentEvent::TurnCompleted { stop_reason, .. } => {
            printed.flush(link);
            match stop_reason {
                crate::protocol::StopReason::Budget => {
                    link.say("\n\n(stopped: a budget cap was reached)");
                }
                crate::protocol::StopReason::Loop => {
                    link.say("\n\n(stopped: the model repeated a call)");
                }
                _ => {}
            }
            link.end(map::stop_reason(stop_reason));
        }
        AgentEvent::Error {
            turn_id,
            kind,
            message,
            ..
        } => {
            printed.flush(link);
            on_error(link, turn_id, kind, &message);
        }
        other => super::commands::on_answer(link, other),
    }
}

/// An MCP server that failed or asks for a login: said now while a prompt
/// runs, else with the next one.
fn server_trouble(link: &Link, status: &crate::protocol::McpStatus) {
    use crate::protocol::McpState;
    let what = match status.state {
        McpState::Failed => "failed",
        McpState::NeedsLogin => "asks for a login (`lathe mcp login NAME`)",
        _ => return,
    };
    let note = format!(
        "(lathe: the MCP server {} {what}{})\n",
        status.server,
        status
            .message
            .as_deref()
            .map(|m| format!(": {}", map::short(m, 300)))
            .unwrap_or_default()
    );
    if link.turn().prompt.is_some() {
        link.update(SessionUpdate::AgentThoughtChunk(map::chunk(note)));
    } else if let Ok(mut notes) = link.notes.lock() {
        notes.push(note);
    }
}

/// An MCP server's prompts, offered as commands when they change.
fn prompts_changed(link: &Link, status: &crate::protocol::McpStatus) {
    let prompts: Vec<(String, String)> = status
        .prompts
        .iter()
        .map(|p| (p.name.clone(), p.description.clone()))
        .collect();
    let changed = {
        let mut o = link
            .offered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        o.prompts.insert(status.server.clone(), prompts.clone()) != Some(prompts)
    };
    if changed {
        link.offer_commands();
    }
}

/// The `@`-mentioned files that were not attached, and why.
fn not_attached(link: &Link, files: &[crate::protocol::Attachment]) {
    let not: Vec<String> = files
        .iter()
        .filter(|f| !f.attached)
        .map(|f| match &f.note {
            Some(n) => format!("{} ({n})", f.path),
            None => f.path.clone(),
        })
        .collect();
    if !not.is_empty() {
        link.update(SessionUpdate::AgentThoughtChunk(map::chunk(format!(
            "(lathe: not attached: {})\n",
            not.join("; ")
        ))));
    }
}

/// A limit the turn reached, asked: yes goes on.
fn on_limit(link: &Link, ev: AgentEvent) {
    match ev {
        AgentEvent::ToolLimitReached {
            turn_id, rounds, ..
        } => go_on(
            link,
            turn_id,
            format!("The turn used its {rounds} tool rounds. Go on?"),
        ),
        AgentEvent::BudgetReached {
            turn_id,
            cap,
            spent,
            limit,
            raise_to,
            ..
        } => go_on(
            link,
            turn_id,
            format!(
                "The cap {} is reached: {} spent of {}. Raise it to {} and go on?",
                cap.setting(),
                cap.amount(spent),
                cap.amount(limit),
                cap.amount(raise_to)
            ),
        ),
        AgentEvent::LoopDetected {
            turn_id,
            tool,
            arguments,
            count,
            task: None,
            ..
        } => go_on(
            link,
            turn_id,
            format!(
                "The model made the same call {count} times: {}. Let it go on?",
                map::title(&tool, &arguments)
            ),
        ),
        _ => {}
    }
}

/// A turn that failed, or an op the engine refused.
fn on_error(link: &Link, turn_id: Option<u64>, kind: ErrorKind, message: &str) {
    // The answer of a command cancelled before it came.
    if turn_id.is_none() && link.turn().discard.pop().is_some() {
        return;
    }
    let waits = link.turn().prompt.is_some();
    match (turn_id, kind) {
        (Some(_), ErrorKind::Interrupted) => link.end(acp::StopReason::Cancelled),
        (Some(_), ErrorKind::Blocked | ErrorKind::Command) => {
            link.say(message);
            link.end(acp::StopReason::EndTurn);
        }
        (Some(_), _) => link.fail(message),
        (None, _) if waits && link.turn().command.is_some() => {
            link.say(message);
            link.end(acp::StopReason::EndTurn);
        }
        // What the engine warns of while a prompt runs (a secret taken
        // out of the message, an answer cut): said beside the answer.
        (None, _) if waits => link.update(SessionUpdate::AgentThoughtChunk(map::chunk(format!(
            "\n(lathe: {message})\n"
        )))),
        (None, _) => tracing::warn!("{message}"),
    }
}

/// An approval asked in the editor; its answer is the decision.
async fn approve(link: Link, req: crate::protocol::ApprovalRequest, epoch: u64) {
    if link.epoch() != epoch {
        return;
    }
    let call = ToolCallUpdate::new(req.call_id.clone(), map::asking(&link.workspace, &req));
    let chosen = link
        .ask(call, map::options(&req, link.can_elicit_text()))
        .await;
    let reason = if chosen.as_deref() == Some(map::REJECT_WHY) {
        link.ask_text(
            Some(&req.call_id),
            "Why not? The model reads this and tries another way.",
        )
        .await
    } else {
        None
    };
    // Cancelled meanwhile: the call is gone (the engine ended its wait).
    if link.epoch() != epoch {
        return;
    }
    link.op(Op::Decide {
        call_id: req.call_id,
        decision: map::decision(chosen.as_deref(), reason),
    })
    .await;
}

/// The model's (or a server's) question: its choices as options; with
/// none, the editor's form when it has one, else no answer.
async fn answer(
    link: Link,
    call_id: String,
    question: String,
    choices: Vec<String>,
    from: Option<String>,
    epoch: u64,
) {
    if link.epoch() != epoch {
        return;
    }
    let asked = match &from {
        Some(who) => format!("{who} asks: {question}"),
        None => question,
    };
    let answer = if choices.is_empty() {
        link.ask_text(Some(&call_id), &asked).await
    } else {
        let mut options: Vec<PermissionOption> = choices
            .iter()
            .enumerate()
            .map(|(i, c)| {
                PermissionOption::new(
                    format!("choice-{i}"),
                    c.clone(),
                    PermissionOptionKind::AllowOnce,
                )
            })
            .collect();
        options.push(PermissionOption::new(
            "no-answer",
            "Do not answer",
            PermissionOptionKind::RejectOnce,
        ));
        let call = ToolCallUpdate::new(
            call_id.clone(),
            ToolCallUpdateFields::new()
                .title(map::short(&asked, 200))
                .content(vec![acp::ToolCallContent::from(map::text(asked.clone()))]),
        );
        link.ask(call, options)
            .await
            .and_then(|id| id.strip_prefix("choice-")?.parse::<usize>().ok())
            .and_then(|i| choices.get(i).cloned())
    };
    if link.epoch() == epoch {
        link.op(Op::Answer { call_id, answer }).await;
    }
}

/// A limit reached: asked as a call of its own, yes goes on.
fn go_on(link: &Link, turn_id: u64, question: String) {
    let Some(epoch) = link.asking() else {
        return;
    };
    let link = link.clone();
    tokio::spawn(async move {
        if link.epoch() != epoch {
            return;
        }
        let yes = link
            .confirm(
                &question,
                acp::ToolKind::Other,
                question.clone(),
                "Go on",
                "Stop",
            )
            .await;
        if link.epoch() != epoch {
            return;
        }
        link.op(Op::ContinueTurn {
            turn_id,
            go_on: yes,
        })
        .await;
    });
}

/// A short id unique within the process.
fn uuid_ish() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The approval mode as the editor sets it.
pub fn mode_of(id: &str) -> Result<ApprovalMode, Error> {
    id.parse::<ApprovalMode>().map_err(super::bad_params)
}

/// The person's words of a replayed conversation as the editor shows
/// them.
pub fn user_chunk(text: String) -> SessionUpdate {
    SessionUpdate::UserMessageChunk(acp::ContentChunk::new(ContentBlock::Text(
        acp::TextContent::new(text),
    )))
}
