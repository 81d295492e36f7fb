//! Lathe calls the person back: when it waits for them (an approval, a
//! question, the end of a turn) and the terminal is not focused, a
//! desktop notification (OSC 9 and OSC 777, the bell as a fallback), once
//! per absence: coming back to the terminal (focus, or a key) ends it.
//! `notify = false` in the config turns it off; a terminal that reports
//! no focus is taken as focused (it is never called back to).

use super::*;

/// Whether the person is at the terminal, as focus events say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Presence {
    pub(super) focused: bool,
    /// Called back already in this absence.
    pub(super) called: bool,
    /// The config allows it.
    pub(super) enabled: bool,
}

impl Default for Presence {
    fn default() -> Self {
        Self {
            focused: true,
            called: false,
            enabled: true,
        }
    }
}

impl App {
    /// `notify` from the config.
    pub fn call_back_when_away(&mut self, enabled: bool) {
        self.person.presence.enabled = enabled;
    }

    /// The terminal lost or gained focus.
    pub(super) fn focus(&mut self, focused: bool) {
        self.person.presence.focused = focused;
        if focused {
            self.person.presence.called = false;
        } else if let Some(what) = self.waiting_for() {
            // Left while something waits for them: what it is.
            self.call_back(&what);
        }
    }

    /// What waits for the person, in a notification's words.
    fn waiting_for(&self) -> Option<String> {
        let words = self.questions.waiting_words()?;
        Some(crate::protocol::humanize::shorten_chars(&words, 120))
    }

    /// What an agent event makes wait for the person, as a notification's
    /// words.
    pub(super) fn waits_for_person(ev: &AgentEvent) -> Option<String> {
        match ev {
            AgentEvent::ApprovalRequested(r) => Some(format!(
                "Lathe asks: approve {} {}?",
                r.tool,
                crate::components::cells::key_argument(&r.arguments)
            )),
            AgentEvent::ToolLimitReached { rounds, .. } => {
                Some(format!("Lathe asks: go on after {rounds} tool rounds?"))
            }
            AgentEvent::BudgetReached { cap, limit, .. } => Some(format!(
                "Lathe asks: {} ({}) is reached: raise it and go on?",
                cap.scope(),
                cap.amount(*limit)
            )),
            AgentEvent::LoopDetected {
                tool,
                count,
                task: None,
                ..
            } => Some(format!(
                "Lathe asks: the model made the same {tool} call {count} times: go on?"
            )),
            AgentEvent::TurnCompleted { .. } => Some("Lathe is done: your turn".into()),
            AgentEvent::Error { kind, message, .. } if *kind != ErrorKind::Interrupted => {
                let first = message.lines().next().unwrap_or("");
                Some(format!("Lathe stopped: {first}"))
            }
            _ => None,
        }
    }

    /// A notification, if the person is away and was not called yet.
    pub(super) fn call_back(&mut self, what: &str) {
        let p = &mut self.person.presence;
        if p.enabled && !p.focused && !p.called {
            p.called = true;
            self.bus.request(Request::Notify(what.to_string()));
        }
    }
}
