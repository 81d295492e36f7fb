//! The agent task's loop: ops are read while a turn runs (an interrupt
//! or an approval decision is handled at once) and between turns (a
//! message starts one; `/clear`, `/compact`, `/rewind` and the settings
//! are done in place).

use super::*;

/// The agent task: waits for input, runs turns, and keeps reading ops
/// while a turn runs.
pub(super) async fn run(
    shared: Arc<Shared>,
    pending: Arc<PendingApprovals>,
    ops: mpsc::Receiver<Op>,
    conversation: Conversation,
) {
    serve(shared.clone(), pending, ops, conversation).await;
    shared.sync_history().await;
    // The servers' processes end with the agent.
    if let Some(m) = &shared.mcp {
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
    loop {
        let work = match queued.pop_front() {
            Some(w) => w,
            None => {
                let Some(op) = ops.recv().await else {
                    return;
                };
                match op {
                    Op::UserInput { text } | Op::Steer { text } => Work::Turn(text),
                    Op::Compact => Work::Compact,
                    Op::ListTurns => Work::ListTurns,
                    Op::SessionDiff => Work::SessionDiff,
                    Op::Rewind {
                        turn,
                        files,
                        conversation,
                    } => Work::Rewind {
                        turn,
                        files,
                        conversation,
                    },
                    Op::Shutdown => return,
                    other => {
                        idle_op(&shared, &mut conversation, other);
                        continue;
                    }
                }
            }
        };
        let cancel = CancellationToken::new();
        let work_kind = match work {
            Work::Turn(_) => WorkKind::Turn,
            _ => WorkKind::Other,
        };
        let mut clear_after = false;
        let mut shutdown = false;
        {
            let turn: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> =
                match work {
                    Work::Turn(prompt) => Box::pin(turn::run_turn(
                        &shared,
                        &mut conversation,
                        prompt,
                        cancel.clone(),
                    )),
                    Work::Compact => {
                        Box::pin(compact_asked(&shared, &mut conversation, cancel.clone()))
                    }
                    Work::ListTurns => Box::pin(undo::list(&shared, &conversation)),
                    Work::SessionDiff => Box::pin(undo::session_diff(&shared)),
                    Work::Rewind {
                        turn,
                        files,
                        conversation: c,
                    } => Box::pin(undo::rewind(&shared, &mut conversation, turn, files, c)),
                };
            tokio::pin!(turn);
            loop {
                tokio::select! {
                    () = &mut turn => break,
                    op = ops.recv(), if ops_open => match op {
                        // The front end went away: nobody can see this turn.
                        None => {
                            ops_open = false;
                            shutdown = true;
                            cancel.cancel();
                        }
                        Some(Op::Shutdown) => {
                            shutdown = true;
                            cancel.cancel();
                        }
                        // What was sent for the turn and not yet given
                        // to the model goes back to the person (the front
                        // end has it): stopping never starts a turn.
                        Some(Op::Interrupt) => {
                            cancel.cancel();
                            shared.desk.take_steering();
                        }
                        Some(Op::Decide { call_id, decision }) => pending.resolve(&call_id, decision),
                        Some(Op::UserInput { text }) => queued.push_back(Work::Turn(text)),
                        Some(Op::Compact) => queued.push_back(Work::Compact),
                        Some(Op::ListTurns) => queued.push_back(Work::ListTurns),
                        Some(Op::SessionDiff) => queued.push_back(Work::SessionDiff),
                        Some(Op::Rewind { turn, files, conversation }) => {
                            queued.push_back(Work::Rewind { turn, files, conversation });
                        }
                        Some(Op::ContinueTurn { turn_id, go_on }) => shared.answer_limit(turn_id, go_on),
                        Some(Op::Answer { call_id, answer }) => shared.desk.answer(&call_id, answer),
                        // A message for the turn: at its next request, or
                        // the next turn if it ends first (or is not one).
                        Some(Op::Steer { text }) => match &work_kind {
                            WorkKind::Turn => shared.desk.steer(text),
                            WorkKind::Other => queued.push_back(Work::Turn(text)),
                        },
                        Some(Op::Clear) => {
                            clear_after = true;
                            cancel.cancel();
                            shared.desk.take_steering();
                        }
                        Some(other) => {
                            shared.common_op(&other);
                        }
                    },
                }
            }
        }
        // What was sent for the turn and came too late for it starts the
        // next one.
        let late = shared.desk.take_steering();
        if !late.is_empty() {
            queued.push_front(Work::Turn(late.join("\n\n")));
        }
        // The files as the turn left them (a turn that changed any).
        if let Some(c) = &shared.checkpoints {
            c.end(&shared).await;
        }
        if clear_after {
            idle_op(&shared, &mut conversation, Op::Clear);
        }
        if shutdown {
            return;
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
    /// `/compact`.
    Compact,
    ListTurns,
    SessionDiff,
    Rewind {
        turn: Option<u64>,
        files: bool,
        conversation: bool,
    },
}

/// `/compact`: summarizes the older turns now, and says how it went.
async fn compact_asked(shared: &Shared, conv: &mut Conversation, cancel: CancellationToken) {
    match compact::compact(shared, conv, None, "asked", &cancel).await {
        Ok(()) => shared.sync_history().await,
        Err(e) => shared.emitter.emit(AgentEvent::Error {
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
            shared.authz.clear();
            // The context is empty again: the meter says so.
            compact::report(shared, conversation);
            if let Some(h) = &shared.history {
                h.append_detached(crate::session::history::Item::Clear);
            }
        }
        Op::Decide { call_id, .. } => {
            tracing::debug!(%call_id, "decision for a call that is not waiting; ignored");
        }
        _ => {}
    }
}
