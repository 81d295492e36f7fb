//! The questions whether a turn goes on, when Lathe has paused it
//! between steps: past its tool rounds, at a budget cap, or a model that
//! repeats itself. Each answers through `Op::ContinueTurn`; armed like
//! every question.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::question::{YesNo, modal_height, render_question};
use crate::component::{AppEvent, AppEvents, Kind, Outcome};
use crate::protocol::Op;
use crate::theme::Theme;

/// Tells the turn whether to go on.
fn go_on(turn_id: u64, go_on: bool, events: &AppEvents) {
    events.send(AppEvent::Op(Op::ContinueTurn { turn_id, go_on }));
}

/// `y` and what it does, `n` stops the turn.
fn keys(yes: &str, t: &Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled("y", t.bold(t.colors.accent)),
        Span::styled(format!(" {yes}  "), t.muted()),
        Span::styled("n", t.bold(t.colors.accent)),
        Span::styled(" stop the turn", t.muted()),
    ])
}

/// The turn used its tool rounds: go on?
pub struct LimitQuestion {
    turn_id: u64,
    rounds: u32,
    more: u32,
}

impl LimitQuestion {
    pub fn new(turn_id: u64, rounds: u32, more: u32) -> Self {
        Self {
            turn_id,
            rounds,
            more,
        }
    }

    /// Tells the turn whether to go on.
    fn answer(&self, go_on: bool, events: &AppEvents) {
        self::go_on(self.turn_id, go_on, events);
        if go_on {
            events.send(AppEvent::Flash(format!(
                "going on for {} more rounds",
                self.more
            )));
        }
    }
}

/// `y` lets the turn go on for more tool rounds, `n` or Esc ends it;
/// armed like the other questions.
impl YesNo for LimitQuestion {
    fn kind(&self) -> Kind {
        Kind::Limit
    }

    fn words(&self) -> Option<String> {
        Some("Lathe asks: go on past the tool rounds?".into())
    }

    fn rows(&self, area: Rect, t: &Theme) -> Option<u16> {
        Some(modal_height(&self.lines(t), area))
    }

    fn yes(&mut self, events: &AppEvents) -> Outcome {
        self.answer(true, events);
        Outcome::Close
    }

    fn no(&mut self, events: &AppEvents) {
        self.answer(false, events);
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, t: &Theme) {
        let lines = self.lines(t);
        let keys = keys("go on", t);
        render_question(" Keep going? ", lines, keys, area, buf, t);
    }
}

impl LimitQuestion {
    fn lines(&self, t: &Theme) -> Vec<ratatui::text::Line<'static>> {
        let rounds = self.rounds;
        vec![Line::from(Span::styled(
            format!(
                "The model has used {rounds} tool round{} in this turn without finishing. Let \
                 it go on for {} more? (The log, Ctrl-T after answering, shows what it did.)",
                if rounds == 1 { "" } else { "s" },
                self.more
            ),
            t.text(),
        ))]
    }
}

/// A budget cap is reached: raise it and go on, or stop the turn here.
pub struct BudgetQuestion {
    turn_id: u64,
    standing: crate::protocol::budget::Standing,
    raise_to: f64,
}

impl BudgetQuestion {
    pub fn new(turn_id: u64, standing: crate::protocol::budget::Standing, raise_to: f64) -> Self {
        Self {
            turn_id,
            standing,
            raise_to,
        }
    }

    fn lines(&self, t: &Theme) -> Vec<ratatui::text::Line<'static>> {
        let cap = self.standing.cap;
        vec![Line::from(Span::styled(
            format!(
                "{}. The turn stopped before its next request; nothing was cut short. Raise \
                 the cap to {} and go on? ({} sets it for next time.)",
                capitalized(&self.standing.to_string()),
                cap.amount(self.raise_to),
                cap.setting()
            ),
            t.text(),
        ))]
    }
}

fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    })
}

/// `y` raises the cap and lets the turn go on, `n` or Esc ends it; armed
/// like the other questions.
impl YesNo for BudgetQuestion {
    fn kind(&self) -> Kind {
        Kind::Budget
    }

    fn words(&self) -> Option<String> {
        Some(format!(
            "Lathe asks: {} is spent: raise it and go on?",
            self.standing.cap.scope()
        ))
    }

    fn rows(&self, area: Rect, t: &Theme) -> Option<u16> {
        Some(modal_height(&self.lines(t), area))
    }

    fn yes(&mut self, events: &AppEvents) -> Outcome {
        go_on(self.turn_id, true, events);
        events.send(AppEvent::CapRaised(self.standing.cap, self.raise_to));
        events.send(AppEvent::Flash(format!(
            "cap raised to {}: going on",
            self.standing.cap.amount(self.raise_to)
        )));
        Outcome::Close
    }

    fn no(&mut self, events: &AppEvents) {
        go_on(self.turn_id, false, events);
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, t: &Theme) {
        let keys = keys("raise it and go on", t);
        render_question(" Budget reached ", self.lines(t), keys, area, buf, t);
    }
}

/// The model made the same call again and again (or got the same failure
/// again and again): let it go on, or stop the turn here.
pub struct LoopQuestion {
    turn_id: u64,
    /// The call, in one line: `exec_shell make`.
    call: String,
    count: u32,
    failing: bool,
}

impl LoopQuestion {
    pub fn new(turn_id: u64, call: String, count: u32, failing: bool) -> Self {
        Self {
            turn_id,
            call,
            count,
            failing,
        }
    }

    fn lines(&self, t: &Theme) -> Vec<ratatui::text::Line<'static>> {
        let what = if self.failing {
            format!(
                "The same call failed the same way {} times in a row:",
                self.count
            )
        } else {
            format!(
                "The model made the same call {} times in this turn:",
                self.count
            )
        };
        vec![
            Line::from(Span::styled(what, t.text())),
            Line::from(Span::styled(
                format!("  {}", crate::protocol::visible::command(&self.call)),
                t.accent(),
            )),
            Line::from(Span::styled(
                "It may be stuck. Let it go on, or stop the turn and say what to do?",
                t.text(),
            )),
        ]
    }
}

/// `y` lets the turn go on (the count starts over), `n` or Esc stops it;
/// armed like the other questions.
impl YesNo for LoopQuestion {
    fn kind(&self) -> Kind {
        Kind::Loop
    }

    fn words(&self) -> Option<String> {
        Some(format!(
            "Lathe asks: the model made the same call {} times: go on?",
            self.count
        ))
    }

    fn rows(&self, area: Rect, t: &Theme) -> Option<u16> {
        Some(modal_height(&self.lines(t), area))
    }

    fn yes(&mut self, events: &AppEvents) -> Outcome {
        go_on(self.turn_id, true, events);
        Outcome::Close
    }

    fn no(&mut self, events: &AppEvents) {
        go_on(self.turn_id, false, events);
    }

    fn draw(&self, area: Rect, buf: &mut Buffer, t: &Theme) {
        let keys = keys("go on", t);
        render_question(" Repeating? ", self.lines(t), keys, area, buf, t);
    }
}
