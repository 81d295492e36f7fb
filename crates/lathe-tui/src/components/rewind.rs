//! `/rewind`: the conversation's turns, newest first, each with its
//! message and whether its files can be put back. ↑/↓ (or j/k) select;
//! `b` (or Enter) rewinds files and conversation to before the selected
//! turn, `f` the files only, `c` the conversation only; Esc closes. The
//! list comes from the agent (`turns`) and arrives with `set`.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::protocol::TurnInfo;
use crate::theme::Theme;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RewindAction {
    None,
    Close,
    /// Rewind to before this turn.
    Rewind {
        turn: u64,
        files: bool,
        conversation: bool,
    },
    /// What the key would do is not possible for this turn: say why.
    Hint(&'static str),
}

#[derive(Debug, Default)]
pub struct RewindPicker {
    /// Newest first; `None` while the agent answers.
    turns: Option<Vec<TurnInfo>>,
    selected: usize,
}

impl RewindPicker {
    pub fn new() -> Self {
        Self::default()
    }

    /// The turns, oldest first as the agent sends them.
    pub fn set(&mut self, mut turns: Vec<TurnInfo>) {
        turns.reverse();
        self.selected = self.selected.min(turns.len().saturating_sub(1));
        self.turns = Some(turns);
    }

    fn current(&self) -> Option<&TurnInfo> {
        self.turns.as_ref().and_then(|t| t.get(self.selected))
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> RewindAction {
        let n = self.turns.as_ref().map_or(0, Vec::len);
        let pick = |t: &TurnInfo, files: bool, conversation: bool| {
            if !files && !conversation {
                return RewindAction::Hint("nothing to rewind for this turn");
            }
            if conversation && !t.conversation {
                return RewindAction::Hint("this turn is no longer in the conversation");
            }
            RewindAction::Rewind {
                turn: t.turn_id,
                files,
                conversation,
            }
        };
        if super::picker::step(key.code, &mut self.selected, n) {
            return RewindAction::None;
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => RewindAction::Close,
            KeyCode::Enter | KeyCode::Char('b') => {
                self.current().map_or(RewindAction::None, |t| {
                    // Both, or what this turn allows.
                    let files = self.files_after(t.turn_id);
                    pick(t, files, t.conversation)
                })
            }
            KeyCode::Char('f') => self.current().map_or(RewindAction::None, |t| {
                if self.files_after(t.turn_id) {
                    RewindAction::Rewind {
                        turn: t.turn_id,
                        files: true,
                        conversation: false,
                    }
                } else {
                    RewindAction::Hint("no file changes of this turn or later to put back")
                }
            }),
            KeyCode::Char('c') => self
                .current()
                .map_or(RewindAction::None, |t| pick(t, false, true)),
            _ => RewindAction::None,
        }
    }

    /// Whether this turn or a later one changed files that can be put back.
    fn files_after(&self, turn: u64) -> bool {
        self.turns
            .as_ref()
            .is_some_and(|ts| ts.iter().any(|t| t.turn_id >= turn && t.files))
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let keys = "↑↓ select · b/Enter files and conversation · f files · c conversation · Esc";
        let title = " Rewind to before a turn ";
        let Some(body) = super::picker::frame(title, keys, area, buf, theme) else {
            return;
        };
        let rows = usize::from(body.height);
        match &self.turns {
            None => super::picker::message(body, buf, "reading the turns…", theme),
            Some(list) if list.is_empty() => {
                super::picker::message(body, buf, "no turn to rewind to yet", theme);
            }
            Some(list) => {
                let first = super::picker::first_shown(self.selected, rows);
                for (row, (i, t)) in list.iter().enumerate().skip(first).take(rows).enumerate() {
                    let selected = i == self.selected;
                    let style = if selected {
                        theme.bold(theme.colors.accent)
                    } else {
                        theme.text()
                    };
                    let prompt = if t.prompt.is_empty() {
                        "(cleared from the conversation)".to_string()
                    } else {
                        crate::components::cells::terminal_line(&t.prompt)
                    };
                    let line = Line::from(vec![
                        Span::styled(if selected { "▸ " } else { "  " }, style),
                        Span::styled(format!("turn {:<4}", t.turn_id), theme.muted()),
                        Span::styled(
                            if t.files { "files ✎  " } else { "         " },
                            theme.muted(),
                        ),
                        Span::styled(prompt, style),
                    ]);
                    let y = body.y + u16::try_from(row).unwrap_or(0);
                    buf.set_line(body.x, y, &line, body.width);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    fn turn(id: u64, prompt: &str, files: bool) -> TurnInfo {
        TurnInfo {
            turn_id: id,
            prompt: prompt.into(),
            files,
            conversation: !prompt.is_empty(),
        }
    }

    fn key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn keys_choose_what_to_rewind_and_refuse_what_cannot_be() {
        let mut p = RewindPicker::new();
        assert_eq!(p.handle_key(key('b')), RewindAction::None, "not read yet");
        p.set(vec![
            turn(1, "add a parser", true),
            turn(2, "explain it", false),
            turn(3, "rename things", true),
        ]);
        // Newest first.
        assert_eq!(
            p.handle_key(key('f')),
            RewindAction::Rewind {
                turn: 3,
                files: true,
                conversation: false
            }
        );
        p.handle_key(key('j'));
        // Turn 2 changed nothing, but turn 3 after it did: both go back.
        assert_eq!(
            p.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
            RewindAction::Rewind {
                turn: 2,
                files: true,
                conversation: true
            }
        );
        assert_eq!(
            p.handle_key(key('c')),
            RewindAction::Rewind {
                turn: 2,
                files: false,
                conversation: true
            }
        );
        let mut q = RewindPicker::new();
        q.set(vec![turn(4, "", true), turn(5, "ask", false)]);
        assert!(matches!(q.handle_key(key('f')), RewindAction::Hint(_)));
        q.handle_key(key('j'));
        assert!(matches!(q.handle_key(key('c')), RewindAction::Hint(_)));
        assert_eq!(
            q.handle_key(key('f')),
            RewindAction::Rewind {
                turn: 4,
                files: true,
                conversation: false
            }
        );
        assert_eq!(q.handle_key(key('q')), RewindAction::Close);
    }

    #[test]
    fn the_list_renders_turns_newest_first() {
        let theme = Theme::load("dark", None, true).unwrap();
        let mut p = RewindPicker::new();
        p.set(vec![
            turn(1, "add a \u{1b}[31mparser", true),
            turn(2, "explain", false),
        ]);
        let area = Rect::new(0, 0, 70, 6);
        let mut buf = Buffer::empty(area);
        p.render(area, &mut buf, &theme);
        let text = crate::buffer_text(&buf);
        let first = text.find("explain").unwrap();
        let second = text.find("add a parser").unwrap();
        assert!(first < second, "{text}");
        assert!(text.contains("▸ turn 2"), "{text}");
        assert!(text.contains("files ✎"), "{text}");
    }
}
