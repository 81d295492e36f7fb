//! When a question may take an answer: only after a quiet moment in
//! which it was on screen whole and nothing was typed or pasted (see the
//! parent module for why).

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;

/// When a modal question may take keys: after [`QUIET`] since it showed
/// and since the last key or paste.
#[derive(Debug, Clone, Copy, Default)]
pub struct Arming {
    /// When the question was first on screen, whole; `None` until a frame
    /// has shown it (a frozen or too small window shows nothing, and keys
    /// read then were typed before it could be read).
    pub(super) shown_at: Option<Instant>,
    pub(super) last_input: Option<Instant>,
    /// It has armed once: from then on it has the keyboard, and keys
    /// (scrolling included) no longer go to the composer.
    pub(super) has_keys: bool,
    /// The person was typing when the question came and has not paused
    /// since: their keys go on into the composer. A key that comes too
    /// soon otherwise is dropped, with a word.
    pub(super) typing: bool,
    /// Answer keys pressed too soon, not yet known to be answers or the
    /// start of a word ("a" of "also"): text if text follows within the
    /// quiet moment, else dropped.
    held: [char; HOLD],
    held_len: u8,
}

/// How many keys too soon a question holds to see whether they begin a
/// word.
const HOLD: usize = 8;

/// The keys that answer some question (`?` shows a dialog's keys).
fn answers(c: char) -> bool {
    matches!(c, 'y' | 'Y' | 'n' | 'N' | 'a' | 'A' | 'e' | 'E' | '?')
}

/// A key before a question takes keys, as the person's typing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ahead {
    /// Not typing: the question reads the key (and says it came too
    /// soon).
    Not,
    /// An answer's key, pressed too soon: held, in case a word follows.
    Held,
    /// Text for the composer, in order: the keys held, then this one.
    Typed(Vec<KeyEvent>),
}

/// What the hint says of a key dropped before a question armed.
pub const READING: &str = "reading… keys wait 0.4 s";

/// The answer a key gives a yes-or-no question (trust, more rounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Typed before the question armed, as the person was typing when it
    /// came: it belongs to the composer.
    Typing(KeyEvent),
    /// Pressed before the question could be read (and not typing): no
    /// answer, and not text either.
    TooSoon,
    Yes,
    /// `n` or Esc; an Alt-key is an Esc and a key, the key going on to
    /// the composer (`pass`).
    No {
        pass: Option<KeyEvent>,
    },
    /// Not an answer.
    Nothing,
}

/// Where a key goes in a question with keys of its own (a text box):
/// before it armed, to the composer or nowhere; after, to the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    Typing(KeyEvent),
    TooSoon,
    Open,
}

impl Arming {
    /// A key read before the question takes keys, while the composer
    /// holds a message begun (`composing`) or not: whether it is the
    /// person's writing, which a question that opens as they start to
    /// write never takes. Text is: keys that go on a writing begun (in
    /// the composer, or as the question came), and any key of text that
    /// answers nothing. An answer's key pressed too soon is held: if text
    /// follows within the quiet moment it was the word's start ("a" of
    /// "also") and goes into the composer before it; if not, it is
    /// dropped, as any key too soon. Either way the quiet moment starts
    /// again.
    pub fn type_ahead(&mut self, key: KeyEvent, composing: bool, now: Instant) -> Ahead {
        if self.has_keys || self.is_armed(now) {
            self.held_len = 0;
            return Ahead::Not;
        }
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SUPER);
        let text = plain && matches!(key.code, KeyCode::Char(_) | KeyCode::Backspace);
        let fresh = self
            .last_input
            .is_some_and(|t| now.saturating_duration_since(t) < QUIET);
        if !text || !fresh {
            self.held_len = 0;
        }
        if !text {
            return Ahead::Not;
        }
        let going_on = self.typing && fresh;
        self.input(now);
        if let KeyCode::Char(c) = key.code
            && answers(c)
            && !composing
            && !going_on
        {
            if usize::from(self.held_len) < HOLD {
                self.held[usize::from(self.held_len)] = c;
                self.held_len += 1;
            }
            return Ahead::Held;
        }
        let mut keys: Vec<KeyEvent> = self.held[..usize::from(self.held_len)]
            .iter()
            .map(|&c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
            .collect();
        self.held_len = 0;
        keys.push(key);
        self.typing = true;
        Ahead::Typed(keys)
    }

    /// Where `key` goes. Once open, keys edit the question's own text
    /// without waiting (the answer itself waits for [`Arming::is_armed`],
    /// which only a paste or a resize restarts).
    pub fn gate(&mut self, key: KeyEvent, now: Instant) -> Gate {
        if !self.is_armed(now) && !self.has_keys {
            return if self.early(now) {
                Gate::Typing(key)
            } else {
                Gate::TooSoon
            };
        }
        self.has_keys = true;
        Gate::Open
    }

    /// What `key` answers a yes-or-no question this arming guards.
    pub fn answer(&mut self, key: KeyEvent, now: Instant) -> Answer {
        let armed = self.is_armed(now);
        if !armed && !self.has_keys {
            return if self.early(now) {
                Answer::Typing(key)
            } else {
                Answer::TooSoon
            };
        }
        self.has_keys = true;
        self.input(now);
        if !armed {
            return Answer::TooSoon;
        }
        let plain = key.modifiers.is_empty() || key.modifiers == KeyModifiers::SHIFT;
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('y' | 'Y') if plain => Answer::Yes,
            _ if alt => Answer::No {
                pass: Some(KeyEvent::new(key.code, key.modifiers - KeyModifiers::ALT)),
            },
            KeyCode::Char('n' | 'N') | KeyCode::Esc => Answer::No { pass: None },
            _ => Answer::Nothing,
        }
    }

    /// A question not yet drawn.
    pub fn pending() -> Self {
        Self::default()
    }

    /// A question not yet drawn, coming while the person may be typing
    /// (their last key into the composer at `last_typed`).
    pub fn pending_after(last_typed: Option<Instant>, now: Instant) -> Self {
        let typing = last_typed.is_some_and(|t| now.saturating_duration_since(t) < QUIET);
        Self {
            last_input: last_typed.filter(|_| typing),
            typing,
            ..Self::default()
        }
    }

    /// A key before the question armed: whether it is the person's typing
    /// going on (no pause since they typed before it came). Either way
    /// the quiet moment starts again from it, as Crush does.
    pub fn early(&mut self, now: Instant) -> bool {
        let going_on = self.typing
            && self
                .last_input
                .is_some_and(|t| now.saturating_duration_since(t) < QUIET);
        self.typing = going_on;
        self.input(now);
        going_on
    }

    /// A frame has shown the question (or, `false`, could not show it).
    pub fn drawn(&mut self, visible: bool, now: Instant) {
        if !visible {
            self.shown_at = None;
        } else if self.shown_at.is_none() {
            self.shown_at = Some(now);
        }
    }

    /// When keys start to count (`None`: not on screen).
    pub fn armed_at(&self) -> Option<Instant> {
        let shown = self.shown_at?;
        Some(self.last_input.map_or(shown, |i| i.max(shown)) + QUIET)
    }

    pub fn is_armed(&self, now: Instant) -> bool {
        self.armed_at().is_some_and(|t| now >= t)
    }

    /// A key or a paste happened: the quiet moment starts again.
    pub fn input(&mut self, now: Instant) {
        self.last_input = Some(now);
    }
}
