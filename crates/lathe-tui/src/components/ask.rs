//! The model's question to the person (`ask_user`): a panel of its own at
//! the bottom, not the approval dialog. The person picks one of the
//! model's choices or writes an answer; Esc leaves it to the model. It is
//! armed as every question is: keys pressed before it could be read go on
//! into the composer (the person was typing) or are dropped, and Enter
//! answers only after a quiet moment since it showed or since a paste, so
//! nothing typed or pasted before it answers it.

use std::cell::Cell;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::approval::{Ahead, Arming, Gate, READING};
use super::cells::NoticeKind;
use crate::component::{AppEvent, AppEvents, Component, Outcome, Question};
use crate::protocol::Op;
use crate::theme::Theme;

/// The longest answer the person may write (characters).
const MAX_ANSWER: usize = 4_000;

pub struct AskPanel {
    call_id: String,
    question: String,
    choices: Vec<String>,
    /// The row chosen: a choice, or (`choices.len()`) the person's own.
    selected: usize,
    /// The person's own answer, as typed.
    draft: String,
    arming: Arming,
    shown: Cell<bool>,
    /// Who asks, when not the model (an MCP server, Lathe): Esc declines.
    from: Option<String>,
}

impl AskPanel {
    pub fn new(call_id: String, question: String, choices: Vec<String>) -> Self {
        Self {
            call_id,
            question,
            choices,
            selected: 0,
            draft: String::new(),
            arming: Arming::pending(),
            shown: Cell::new(false),
            from: None,
        }
    }

    /// Asked by `from` rather than the model.
    #[must_use]
    pub fn from(mut self, from: Option<String>) -> Self {
        self.from = from;
        self
    }

    /// What Esc does, said.
    fn esc(&self) -> &'static str {
        if self.from.is_some() {
            "decline"
        } else {
            "let the model decide"
        }
    }

    /// Asked at `now`, the person's last key into the composer at
    /// `last_typed`.
    #[must_use]
    pub fn after_typing(mut self, last_typed: Option<Instant>, now: Instant) -> Self {
        self.arming = Arming::pending_after(last_typed, now);
        self
    }

    /// Text pasted while it asks goes into the person's own answer.
    pub fn paste(&mut self, text: &str) {
        self.selected = self.choices.len();
        let room = MAX_ANSWER.saturating_sub(self.draft.chars().count());
        // One line: a paste's line breaks are spaces (Enter answers).
        let flat: String = text
            .chars()
            .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
            .filter(|c| !c.is_control())
            .take(room)
            .collect();
        self.draft.push_str(&flat);
    }

    /// The model's question.
    pub fn question(&self) -> &str {
        &self.question
    }

    /// Whether the person has begun an answer of their own.
    pub fn is_writing(&self) -> bool {
        !self.draft.is_empty()
    }

    fn own(&self) -> bool {
        self.selected == self.choices.len()
    }

    fn answer(&self, answer: Option<String>, events: &AppEvents) -> Outcome {
        let said = match &answer {
            Some(a) => format!("you answered: {a}"),
            None if self.from.is_some() => "you declined".to_string(),
            None => "you left the question to the model".to_string(),
        };
        events.send(AppEvent::Op(Op::Answer {
            call_id: self.call_id.clone(),
            answer,
        }));
        events.send(AppEvent::Flash(said));
        Outcome::Close
    }
}

impl Component for AskPanel {
    fn handle_key(&mut self, key: KeyEvent, events: &AppEvents, now: Instant) -> Outcome {
        match self.arming.gate(key, now) {
            Gate::Typing(key) => return Outcome::Ignored(key),
            Gate::TooSoon => {
                events.send(AppEvent::Flash(READING.into()));
                return Outcome::Consumed;
            }
            Gate::Open => {}
        }
        let plain = key.modifiers.is_empty() || key.modifiers == KeyModifiers::SHIFT;
        match key.code {
            KeyCode::Esc => return self.answer(None, events),
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Tab => {
                self.selected = (self.selected + 1).min(self.choices.len());
            }
            KeyCode::Enter if !self.arming.is_armed(now) => {
                events.send(AppEvent::Flash(READING.into()));
            }
            KeyCode::Enter if self.own() => {
                let text = self.draft.trim();
                if text.is_empty() {
                    events.send(AppEvent::Flash(format!(
                        "write an answer, choose one (↑), or Esc to {}",
                        self.esc()
                    )));
                } else {
                    return self.answer(Some(text.to_string()), events);
                }
            }
            KeyCode::Enter => {
                let choice = self.choices.get(self.selected).cloned();
                return self.answer(choice, events);
            }
            KeyCode::Backspace => {
                self.selected = self.choices.len();
                self.draft.pop();
            }
            // A choice's number picks it (until the person writes).
            KeyCode::Char(c @ '1'..='9')
                if plain && self.draft.is_empty() && !self.choices.is_empty() =>
            {
                let n = usize::from(c as u8 - b'0');
                if n <= self.choices.len() {
                    self.selected = n - 1;
                } else {
                    self.selected = self.choices.len();
                    self.draft.push(c);
                }
            }
            KeyCode::Char(c) if plain => {
                self.selected = self.choices.len();
                if self.draft.chars().count() < MAX_ANSWER {
                    self.draft.push(c);
                }
            }
            _ => {}
        }
        Outcome::Consumed
    }

    fn render(&self, area: Rect, buf: &mut Buffer, t: &Theme, _: Instant) {
        let (lines, keys) = self.lines(t);
        let title = match &self.from {
            Some(who) => format!(" {who} asks "),
            None => " The model asks ".to_string(),
        };
        super::question::render_question(&title, lines, keys, area, buf, t);
        self.shown.set(true);
    }
}

impl AskPanel {
    /// The rows it takes at the bottom of `area`.
    pub fn height(&self, area: Rect, t: &Theme) -> u16 {
        super::question::modal_height(&self.lines(t).0, area)
    }

    /// Its text, and the keys.
    fn lines(&self, t: &Theme) -> (Vec<Line<'static>>, Line<'static>) {
        let mut lines: Vec<Line<'static>> = self
            .question
            .lines()
            .map(|l| Line::from(Span::styled(l.to_string(), t.text())))
            .collect();
        lines.push(Line::from(""));
        for (i, choice) in self.choices.iter().enumerate() {
            let chosen = i == self.selected;
            lines.push(Line::from(vec![
                Span::styled(if chosen { "› " } else { "  " }, t.bold(t.colors.accent)),
                Span::styled(format!("{} ", i + 1), t.muted()),
                Span::styled(
                    choice.clone(),
                    if chosen {
                        t.bold(t.colors.accent)
                    } else {
                        t.text()
                    },
                ),
            ]));
        }
        let own = self.own();
        let label = if self.choices.is_empty() {
            "your answer: "
        } else {
            "or your own: "
        };
        lines.push(Line::from(vec![
            Span::styled(if own { "› " } else { "  " }, t.bold(t.colors.accent)),
            Span::styled(label, t.muted()),
            Span::styled(self.draft.clone(), t.text()),
            Span::styled(if own { "▏" } else { "" }, t.accent()),
        ]));
        let key = |k: &str| Span::styled(k.to_string(), t.bold(t.colors.accent));
        let word = |w: &str| Span::styled(w.to_string(), t.muted());
        let mut keys = Vec::new();
        if !self.choices.is_empty() {
            keys.extend([key("1-9 ↑↓"), word(" choose  ")]);
        }
        keys.extend([
            key("type"),
            word(" your own  "),
            key("Enter"),
            word(" answer  "),
            key("Esc"),
            word(&format!(" {}", self.esc())),
        ]);
        (lines, Line::from(keys))
    }
}

impl Question for AskPanel {
    fn kind(&self) -> crate::component::Kind {
        crate::component::Kind::Ask
    }

    fn words(&self) -> Option<String> {
        Some(format!("Lathe asks: {}", self.question()))
    }

    fn rows(&self, area: Rect, theme: &Theme) -> Option<u16> {
        Some(self.height(area, theme))
    }

    fn is_writing(&self) -> bool {
        AskPanel::is_writing(self)
    }

    fn paste(&mut self, text: &str) -> bool {
        AskPanel::paste(self, text);
        true
    }

    fn input(&mut self, now: Instant) {
        self.arming.input(now);
    }

    fn drawn(&mut self, now: Instant) {
        self.arming.drawn(self.shown.take(), now);
    }

    fn type_ahead(&mut self, key: KeyEvent, composing: bool, now: Instant) -> Ahead {
        self.arming.type_ahead(key, composing, now)
    }
}

/// What the transcript says when a question is taken back (the turn
/// ended or was interrupted before the person answered).
pub fn withdrawn() -> (NoticeKind, String) {
    (
        NoticeKind::Info,
        "the model's question was withdrawn: the turn ended".into(),
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::component::AppEvents;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn shown(panel: &mut AskPanel, at: Instant) {
        panel.shown.set(true);
        panel.drawn(at);
    }

    type Rx = tokio::sync::mpsc::UnboundedReceiver<AppEvent>;

    fn drain(rx: &mut Rx) -> Vec<AppEvent> {
        std::iter::from_fn(|| rx.try_recv().ok()).collect()
    }

    fn ops(rx: &mut Rx) -> Vec<Op> {
        drain(rx)
            .into_iter()
            .filter_map(|e| match e {
                AppEvent::Op(op) => Some(op),
                _ => None,
            })
            .collect()
    }

    fn panel(choices: &[&str]) -> AskPanel {
        AskPanel::new(
            "c1".into(),
            "Which port?".into(),
            choices.iter().map(|c| (*c).to_string()).collect(),
        )
    }

    #[test]
    fn a_choice_is_picked_by_number_or_arrows_and_answered_with_enter() {
        let (events, mut rx) = AppEvents::channel();
        let t0 = Instant::now();
        let mut p = panel(&["3000", "8080"]);
        shown(&mut p, t0);
        let t = t0 + Duration::from_secs(1);
        assert_eq!(
            p.handle_key(key(KeyCode::Char('2')), &events, t),
            Outcome::Consumed
        );
        assert_eq!(
            p.handle_key(key(KeyCode::Enter), &events, t),
            Outcome::Close
        );
        assert_eq!(
            ops(&mut rx),
            vec![Op::Answer {
                call_id: "c1".into(),
                answer: Some("8080".into())
            }]
        );
    }

    #[test]
    fn the_person_writes_their_own_answer_and_esc_leaves_it_to_the_model() {
        let (events, mut rx) = AppEvents::channel();
        let t0 = Instant::now();
        let mut p = panel(&["3000"]);
        shown(&mut p, t0);
        let mut t = t0 + Duration::from_secs(1);
        // Typing fast is writing, not answering.
        for c in "5173 please".chars() {
            t += Duration::from_millis(30);
            p.handle_key(key(KeyCode::Char(c)), &events, t);
        }
        p.handle_key(key(KeyCode::Backspace), &events, t);
        assert_eq!(
            p.handle_key(key(KeyCode::Enter), &events, t),
            Outcome::Close
        );
        assert_eq!(
            ops(&mut rx),
            vec![Op::Answer {
                call_id: "c1".into(),
                answer: Some("5173 pleas".into())
            }]
        );
        let mut p = panel(&[]);
        shown(&mut p, t0);
        assert_eq!(p.handle_key(key(KeyCode::Esc), &events, t), Outcome::Close);
        assert_eq!(
            ops(&mut rx),
            vec![Op::Answer {
                call_id: "c1".into(),
                answer: None
            }]
        );
    }

    /// Nothing typed, pasted or pressed before it could be read answers it.
    #[test]
    fn keys_before_it_was_read_and_pastes_never_answer() {
        let (events, mut rx) = AppEvents::channel();
        let t0 = Instant::now();
        // The person was typing a message when the question came: their
        // keys go on into the composer.
        let mut p = panel(&["yes", "no"]).after_typing(Some(t0), t0);
        shown(&mut p, t0);
        let early = p.handle_key(
            key(KeyCode::Enter),
            &events,
            t0 + Duration::from_millis(100),
        );
        // It falls to the composer below; nothing answers the question.
        assert_eq!(early, Outcome::Ignored(key(KeyCode::Enter)));
        assert!(ops(&mut rx).is_empty());
        // Not typing: an early key is dropped with a word.
        let mut p = panel(&["yes", "no"]);
        shown(&mut p, t0);
        p.handle_key(
            key(KeyCode::Enter),
            &events,
            t0 + Duration::from_millis(100),
        );
        assert!(ops(&mut rx).is_empty());
        // A paste with a line break is text, and Enter right after it waits.
        let t = t0 + Duration::from_secs(2);
        p.handle_key(key(KeyCode::Down), &events, t);
        p.input(t);
        p.paste("rm -rf /\nyes");
        assert_eq!(p.draft, "rm -rf / yes");
        assert_eq!(
            p.handle_key(key(KeyCode::Enter), &events, t + Duration::from_millis(50)),
            Outcome::Consumed
        );
        assert!(ops(&mut rx).is_empty());
        assert_eq!(
            p.handle_key(key(KeyCode::Enter), &events, t + Duration::from_secs(1)),
            Outcome::Close
        );
    }
}
