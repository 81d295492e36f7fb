//! How a turn ends between steps: at a cap (unless the person raises it),
//! or held once by a `stop` hook whose reason the model reads.

use super::*;

impl Turn<'_> {
    /// Before each request: a cap reached stops the turn here, between
    /// steps (never in a call), unless the person raises it and goes on.
    pub(super) async fn within_budget(&mut self, conv: &Conversation) -> Result<(), Ended> {
        let shared = self.shared;
        let next = crate::agent::budget::next_request(
            conv.context_tokens(),
            conv.context.tokens,
            shared.price(&self.model),
        );
        loop {
            let Some(standing) = shared.state().budget.reached(&next) else {
                return Ok(());
            };
            let raise_to = crate::protocol::budget::Caps::raised(&shared.settings.caps, &standing);
            shared.services.emitter.emit(AgentEvent::BudgetReached {
                turn_id: self.id,
                cap: standing.cap,
                spent: standing.spent,
                limit: standing.limit,
                next: standing.next,
                raise_to,
            });
            tracing::warn!(%standing, "budget reached");
            let asks = shared.services.approver.source() == crate::protocol::DecisionSource::User;
            if asks && shared.ask_to_go_on(self.id, &self.cancel).await {
                shared.state().budget.caps.set(standing.cap, raise_to);
                continue;
            }
            if self.cancel.is_cancelled() {
                return Err(self.interrupted().await);
            }
            return Err(self.stopped(StopReason::Budget).await);
        }
    }

    /// Lathe ends the turn between steps (a cap, a loop): it completes,
    /// with `reason` and no answer; the conversation keeps every call's
    /// result, so the next message goes on from there.
    pub(super) async fn stopped(&mut self, reason: StopReason) -> Ended {
        let (shared, turn_id) = (self.shared, self.id);
        shared.record(Item::TurnEnd { turn: turn_id }).await;
        shared.sync_history().await;
        let denied = std::mem::take(&mut shared.state().denied);
        shared.services.emitter.emit(AgentEvent::TurnCompleted {
            turn_id,
            text: String::new(),
            iterations: self.iterations,
            usage: self.usage,
            stop_reason: reason,
            model: self.model.clone(),
            denied,
            questions: shared.services.desk.take_asked(),
            by_agent: shared.state().budget.turn.clone(),
        });
        Ended
    }

    /// A `stop` hook may hold the end of the turn once, with a reason the
    /// model reads (\"tests still fail\"): the answer stays in the
    /// conversation and the turn goes on. A second hold is not heeded
    /// (the hook is told `stop_hook_active`), nor one past the round
    /// limit.
    pub(super) async fn held_by_stop_hook(
        &mut self,
        conv: &mut Conversation,
        completion: &Completion,
    ) -> bool {
        let shared = self.shared;
        // An interrupt ends the wait: the turn ends as asked.
        let said = tokio::select! {
            said = crate::agent::events::fire(
                shared,
                crate::policy::session_hooks::SessionEvent::Stop,
                "",
                serde_json::json!({
                    "stop_hook_active": self.stop_held,
                    "last_assistant_message": completion.text,
                }),
            ) => said,
            () = self.cancel.cancelled() => return false,
        };
        let Some(reason) = said.block else {
            return false;
        };
        if self.stop_held || self.iterations >= self.limit {
            tracing::info!(%reason, "a stop hook held the turn again; not heeded");
            return false;
        }
        self.stop_held = true;
        self.iterations += 1;
        conv.messages.push(completion.message());
        conv.counted(completion.usage);
        let mut text = format!("A stop hook says the work is not done: {reason}");
        shared.to_model(&mut text);
        shared
            .record(Item::Steer {
                turn: self.id,
                text: text.clone(),
            })
            .await;
        crate::session::history::push_steering(&mut conv.messages, &text);
        shared.services.emitter.emit(AgentEvent::SteeringDelivered {
            turn_id: self.id,
            text,
        });
        true
    }
}
