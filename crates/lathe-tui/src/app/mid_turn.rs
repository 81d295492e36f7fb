//! Working with the model while a turn runs: its questions (a panel of
//! their own), its plan (pinned above the composer), and the person's
//! messages mid-turn, which go to the model at its next step (Enter) or
//! wait for the turn's end (Tab).

use super::*;

impl App {
    pub(super) fn on_together_event(&mut self, ev: AgentEvent, now: Instant) {
        match ev {
            AgentEvent::QuestionAsked {
                call_id,
                question,
                choices,
                from,
                ..
            } => self.questions.ask_model(
                crate::components::ask::AskPanel::new(call_id, question, choices).from(from),
                now,
            ),
            AgentEvent::PlanUpdated { steps, .. } => {
                self.turn.plan = Some(crate::components::plan::Plan::new(steps));
            }
            // The log keeps the verdict; its cost is the session's.
            AgentEvent::Judged { usage, .. } => {
                if let Some(c) = usage.cost_usd {
                    self.status.spent = Some(crate::protocol::round_usd(
                        self.status.spent.unwrap_or(0.0) + c,
                    ));
                }
            }
            AgentEvent::Jobs { jobs } => {
                if let Some(Overlay::Jobs(view)) =
                    self.overlay_mut(|o| matches!(o, Overlay::Jobs(_)))
                {
                    view.set(jobs.clone());
                }
                self.status.jobs = jobs;
            }
            AgentEvent::SteeringDelivered { text, .. } => {
                // Shown where the model got it, in the conversation.
                self.turn.steering.pop_front();
                self.transcript.push(Cell::User(text));
            }
            _ => {}
        }
    }

    /// Enter while a turn runs: the message goes to the model with its
    /// next request.
    pub(super) fn steer(&mut self, text: String, now: Instant) {
        self.bus.op(Op::Steer { text: text.clone() });
        self.turn.steering.push_back(text);
        self.flash(
            "sent: the model reads it at its next step (Tab queues a message for after the turn)",
            now,
        );
    }

    /// Tab while a turn runs: the message waits for the turn's end.
    pub(super) fn queue(&mut self, now: Instant) {
        let text = self.composer.text();
        if text.trim().is_empty() {
            return;
        }
        self.composer.clear();
        self.turn.queued.push_back(text);
        self.flash("queued: it will be sent when this turn ends", now);
    }

    /// The turn ended: a question still open is withdrawn, a finished
    /// plan leaves the screen, and what was sent for the turn and came
    /// too late for it starts the next one (the agent starts it; whether
    /// it does is returned).
    pub(super) fn end_together(&mut self) -> bool {
        if self.questions.withdraw(Kind::Ask) {
            let (kind, text) = crate::components::ask::withdrawn();
            self.notice(kind, text);
        }
        match &mut self.turn.plan {
            Some(p) if p.finished() => self.turn.plan = None,
            Some(p) => p.left = true,
            None => {}
        }
        if !self.turn.steering.is_empty() {
            let text: Vec<String> = self.turn.steering.drain(..).collect();
            self.turn.sent_marks.push_back(self.transcript.len());
            self.transcript.push(Cell::User(text.join("\n\n")));
            self.transcript.scroll_to_bottom();
            return true;
        }
        false
    }

    /// `/plan WHAT`: a turn in plan mode, while no turn runs.
    pub(super) fn plan_command(&mut self, what: Option<String>, now: Instant) {
        let Some(what) = what else {
            return self.notice(
                NoticeKind::Info,
                "/plan WHAT: the model looks into it with read-only tools and proposes a plan; \
                 nothing changes until you approve it",
            );
        };
        if self.is_running() {
            return self.flash("a turn is running: /plan once it ends (Esc stops it)", now);
        }
        self.turn.sent_marks.push_back(self.transcript.len());
        self.transcript.push(Cell::User(what.clone()));
        self.notice(
            NoticeKind::Info,
            "plan mode: the model looks with read-only tools and proposes a plan; nothing \
             changes until you approve it",
        );
        self.transcript.scroll_to_bottom();
        self.bus.op(Op::Plan { text: what });
        self.turn.planning = true;
    }

    /// A turn ended: a plan-mode turn that completed asks whether to
    /// carry its plan out.
    pub(super) fn plan_turn_ended(&mut self, completed: bool, now: Instant) {
        if std::mem::take(&mut self.turn.planning) && completed {
            self.questions
                .ask(crate::components::question::PlanQuestion::new(), now);
        }
    }
}
