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
}

/// The answer a key gives a yes-or-no question (trust, more rounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Typed before the question armed: it belongs to the composer.
    Typing(KeyEvent),
    Yes,
    /// `n` or Esc; an Alt-key is an Esc and a key, the key going on to
    /// the composer (`pass`).
    No {
        pass: Option<KeyEvent>,
    },
    /// Not an answer.
    Nothing,
}

impl Arming {
    /// What `key` answers a yes-or-no question this arming guards.
    pub fn answer(&mut self, key: KeyEvent, now: Instant) -> Answer {
        let armed = self.is_armed(now);
        self.input(now);
        if !armed {
            return Answer::Typing(key);
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
