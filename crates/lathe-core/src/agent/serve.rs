//! The agent task's loop: ops are read while a turn runs (an interrupt
//! or an approval decision is handled at once) and between turns (a
//! message starts one; `/clear`, `/compact`, `/rewind` and the settings
//! are done in place).

use super::*;

/// `session_start` hooks (`source`: `startup`, `resume`, `clear`): what
/// they say, the model reads first.
async fn started(shared: &Shared, conversation: &mut Conversation, source: &str) {
    let said = super::events::fire(
        shared,
        crate::policy::session_hooks::SessionEvent::SessionStart,
        source,
        serde_json::json!({"source": source}),
    )
    .await;
    if let Some(note) = super::events::context_note(
        shared,
        crate::policy::session_hooks::SessionEvent::SessionStart,
        &said,
    ) {
        conversation.add_note(note);
    }
}

/// The agent task: waits for input, runs turns, and keeps reading ops
/// while a turn runs.
pub(super) async fn run(
    shared: Arc<Shared>,
    pending: Arc<PendingApprovals>,
    ops: mpsc::Receiver<Op>,
    mut conversation: Conversation,
) {
    let source = if conversation.messages.is_empty() {
        "startup"
    } else {
        "resume"
    };
    started(&shared, &mut conversation, source).await;
    serve(shared.clone(), pending, ops, conversation).await;
    // `session_end` hooks, briefly (Lathe is on its way out).
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(2),
        super::events::fire(
            &shared,
            crate::policy::session_hooks::SessionEvent::SessionEnd,
            "exit",
            serde_json::json!({"reason": "exit"}),
        ),
    )
    .await;
    // Nothing the conversation started runs on after it.
    shared.services.jobs.stop_all().await;
    shared.sync_history().await;
    // The servers' processes end with the agent.
    if let Some(m) = &shared.services.mcp {
        m.shutdown().await;
    }
}

async fn serve(
    shared: Arc<Shared>,
    pending: Arc<PendingApprovals>,
    mut ops: mpsc::Receiver<Op>,
    mut conversation: Conversation,
) {
    let mut queued: VecDeque<Work> = VecDeque::new();
    let mut ops_open = true;
    // A turn just ended: the person's next message is awaited.
    let mut answered = false;
    loop {
        let work = match queued.pop_front() {
            Some(w) => w,
            None => {
                let Some(op) = next_op(&shared, &mut ops, std::mem::take(&mut answered)).await
                else {
                    return;
                };
                match Work::from_op(op) {
                    Ok(work) => work,
                    Err(Op::Shutdown) => return,
                    Err(other) => {
                        let cleared = other == Op::Clear;
                        idle_op(&shared, &mut conversation, other);
                        if cleared {
                            started(&shared, &mut conversation, "clear").await;
                        }
                        continue;
                    }
                }
            }
        };
        let mut running = Running {
            cancel: CancellationToken::new(),
            kind: match work {
                Work::Turn(_) | Work::Plan(_) => WorkKind::Turn,
                _ => WorkKind::Other,
            },
            clear_after: false,
            shutdown: false,
        };
        {
            let cancel = running.cancel.clone();
            let turn: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> =
                match work {
                    Work::Turn(prompt) => Box::pin(turn::run_turn(
                        &shared,
                        &mut conversation,
                        prompt,
                        false,
                        cancel,
                    )),
                    Work::Plan(prompt) => Box::pin(turn::run_turn(
                        &shared,
                        &mut conversation,
                        prompt,
                        true,
                        cancel,
                    )),
                    Work::Compact => Box::pin(compact_asked(&shared, &mut conversation, cancel)),
                    Work::ListTurns => Box::pin(undo::list(&shared.services, &conversation)),
                    Work::SessionDiff => Box::pin(undo::session_diff(&shared.services)),
                    Work::Rewind {
                        turn,
                        files: _,
                        conversation: _,
                        preview: true,
                    } => Box::pin(undo::preview(&shared, turn)),
                    Work::Rewind {
                        turn,
                        files,
                        conversation: c,
                        preview: false,
                    } => Box::pin(undo::rewind(&shared, &mut conversation, turn, files, c)),
                };
            tokio::pin!(turn);
            loop {
                tokio::select! {
                    () = &mut turn => break,
                    op = ops.recv(), if ops_open => {
                        // The front end went away: nobody can see this turn.
                        let op = op.unwrap_or_else(|| {
                            ops_open = false;
                            Op::Shutdown
                        });
                        running.op(&shared, &pending, &mut queued, op);
                    }
                }
            }
        }
        // What was sent for the turn and came too late for it starts the
        // next one.
        let late = shared.services.desk.take_steering();
        if !late.is_empty() {
            queued.push_front(Work::Turn(late.join("\n\n")));
        }
        // The files as the turn left them (a turn that changed any).
        if let Some(c) = &shared.services.checkpoints {
            c.end(&shared).await;
        }
        if running.clear_after {
            idle_op(&shared, &mut conversation, Op::Clear);
            started(&shared, &mut conversation, "clear").await;
        }
        if running.shutdown {
            return;
        }
        answered = matches!(running.kind, WorkKind::Turn);
    }
}

/// How long the person may leave the model's answer unanswered before the
/// `notification` hooks are told (`idle_prompt`, as Claude Code's are).
const IDLE: std::time::Duration = std::time::Duration::from_secs(60);

/// The next op. After a turn (`answered`), a person who sends nothing for
/// [`IDLE`] is called back through the `notification` hooks, once.
async fn next_op(shared: &Arc<Shared>, ops: &mut mpsc::Receiver<Op>, answered: bool) -> Option<Op> {
    if answered && shared.services.desk.interactive() {
        match tokio::time::timeout(IDLE, ops.recv()).await {
            Ok(op) => return op,
            Err(_) => {
                let shared = shared.clone();
                tokio::spawn(async move {
                    super::events::fire(
                        &shared,
                        crate::policy::session_hooks::SessionEvent::Notification,
                        "idle_prompt",
                        serde_json::json!({
                            "message": "Lathe is waiting for your input",
                            "notification_type": "idle_prompt",
                        }),
                    )
                    .await;
                });
            }
        }
    }
    ops.recv().await
}

/// The work running, as ops arrive while it does.
struct Running {
    cancel: CancellationToken,
    kind: WorkKind,
    clear_after: bool,
    shutdown: bool,
}

impl Running {
    /// An op that arrives while the work runs: handled at once, or queued
    /// as the next work.
    fn op(
        &mut self,
        shared: &Arc<Shared>,
        pending: &PendingApprovals,
        queued: &mut VecDeque<Work>,
        op: Op,
    ) {
        let op = match op {
            // A message for the turn: at its next request, or the next
            // turn if it ends first (or none runs).
            Op::Steer { text } => match self.kind {
                WorkKind::Turn => return shared.services.desk.steer(text),
                WorkKind::Other => return queued.push_back(Work::Turn(text)),
            },
            op => match Work::from_op(op) {
                Ok(work) => return queued.push_back(work),
                Err(op) => op,
            },
        };
        match op {
            Op::Shutdown => {
                self.shutdown = true;
                self.cancel.cancel();
            }
            // What was sent for the turn and not yet given to the model
            // goes back to the person (the front end has it): stopping
            // never starts a turn.
            Op::Interrupt => {
                self.cancel.cancel();
                shared.services.desk.take_steering();
            }
            Op::Clear => {
                self.clear_after = true;
                self.cancel.cancel();
                shared.services.desk.take_steering();
            }
            Op::Decide { call_id, decision } => pending.resolve(&call_id, decision),
            Op::ContinueTurn { turn_id, go_on } => shared.answer_limit(turn_id, go_on),
            Op::Answer { call_id, answer } => shared.services.desk.answer(&call_id, answer),
            other => {
                shared.common_op(&other);
            }
        }
    }
}

/// Whether the work running is a turn (a message mid-turn steers it).
enum WorkKind {
    Turn,
    Other,
}

/// What the agent task does next.
enum Work {
    Turn(String),
    /// A turn in plan mode.
    Plan(String),
    /// `/compact`.
    Compact,
    ListTurns,
    SessionDiff,
    Rewind {
        turn: Option<u64>,
        files: bool,
        conversation: bool,
        preview: bool,
    },
}

impl Work {
    /// The work an op asks for; any other op back.
    fn from_op(op: Op) -> Result<Self, Op> {
        Ok(match op {
            Op::UserInput { text } | Op::Steer { text } => Work::Turn(text),
            Op::Plan { text } => Work::Plan(text),
            Op::Compact => Work::Compact,
            Op::ListTurns => Work::ListTurns,
            Op::SessionDiff => Work::SessionDiff,
            Op::Rewind {
                turn,
                files,
                conversation,
                preview,
            } => Work::Rewind {
                turn,
                files,
                conversation,
                preview,
            },
            other => return Err(other),
        })
    }
}

/// `/compact`: summarizes the older turns now, and says how it went.
async fn compact_asked(shared: &Shared, conv: &mut Conversation, cancel: CancellationToken) {
    match compact::compact(shared, conv, None, "asked", &cancel).await {
        Ok(()) => shared.sync_history().await,
        Err(e) => shared.services.emitter.emit(AgentEvent::Error {
            turn_id: None,
            kind: crate::protocol::ErrorKind::Provider,
            message: format!("the conversation was not compacted: {e}"),
        }),
    }
}

/// Ops that arrive while no turn runs.
fn idle_op(shared: &Arc<Shared>, conversation: &mut Conversation, op: Op) {
    if shared.common_op(&op) {
        return;
    }
    match op {
        Op::Clear => {
            // The turn count goes on: turn ids stay unique in the record.
            let turns = conversation.turns;
            *conversation = Conversation::default();
            conversation.turns = turns;
            shared.services.authz.clear();
            // A new conversation: what the old one started stops.
            tokio::spawn(shared.services.jobs.stop_all());
            // The context is empty again: the meter says so.
            compact::report(shared, conversation);
            if let Some(h) = &shared.services.history {
                h.append_detached(crate::session::history::Item::Clear);
            }
        }
        Op::Decide { call_id, .. } => {
            tracing::debug!(%call_id, "decision for a call that is not waiting; ignored");
        }
        _ => {}
    }
}
