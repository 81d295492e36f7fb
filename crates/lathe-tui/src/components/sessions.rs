//! `/resume` (and `lathe resume` without an id): the workspace's earlier
//! sessions, newest first, each with when it was last used, its turns
//! and its first message. ↑/↓ (or j/k) select, Enter opens the selected
//! one with its transcript, Esc closes. The list is read off the UI
//! thread and arrives with `set`.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::protocol::humanize;
use crate::session::store::SessionInfo;
use crate::theme::Theme;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerAction {
    None,
    Close,
    /// Open this session.
    Open(String),
}

#[derive(Debug)]
pub struct SessionPicker {
    /// `None` while the list is read.
    sessions: Option<Vec<SessionInfo>>,
    selected: usize,
    /// The session on screen, which is not offered.
    current: String,
}

impl SessionPicker {
    pub fn new(current: &str) -> Self {
        Self {
            sessions: None,
            selected: 0,
            current: current.to_string(),
        }
    }

    /// The sessions, newest first (the current one is left out).
    pub fn set(&mut self, sessions: Vec<SessionInfo>) {
        let current = self.current.clone();
        let list: Vec<SessionInfo> = sessions.into_iter().filter(|s| s.id != current).collect();
        self.selected = self.selected.min(list.len().saturating_sub(1));
        self.sessions = Some(list);
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> PickerAction {
        let n = self.sessions.as_ref().map_or(0, Vec::len);
        if super::picker::step(key.code, &mut self.selected, n) {
            return PickerAction::None;
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => PickerAction::Close,
            KeyCode::Enter => self
                .sessions
                .as_ref()
                .and_then(|s| s.get(self.selected))
                .map_or(PickerAction::None, |s| PickerAction::Open(s.id.clone())),
            _ => PickerAction::None,
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, now_ms: u64) {
        let keys = "↑↓ select · Enter resume · Esc close";
        let Some(body) = super::picker::frame(" Resume a session ", keys, area, buf, theme) else {
            return;
        };
        let rows = usize::from(body.height);
        match &self.sessions {
            None => super::picker::message(body, buf, "reading the sessions…", theme),
            Some(list) if list.is_empty() => {
                super::picker::message(body, buf, "no earlier sessions in this workspace", theme);
            }
            Some(list) => {
                let first = super::picker::first_shown(self.selected, rows);
                for (row, (i, s)) in list.iter().enumerate().skip(first).take(rows).enumerate() {
                    let selected = i == self.selected;
                    let when = humanize::ago(now_ms.saturating_sub(s.last_activity) / 1000);
                    let turns = format!("{} turn{}", s.turns, if s.turns == 1 { "" } else { "s" });
                    let prompt = crate::components::cells::terminal_line(&s.first_prompt);
                    let style = if selected {
                        theme.bold(theme.colors.accent)
                    } else {
                        theme.text()
                    };
                    // The model and what it cost, when known, after the prompt.
                    let mut model = crate::protocol::humanize::shorten_chars(
                        &crate::protocol::visible::name(&s.model),
                        24,
                    );
                    if let Some(c) = s.usage.cost_usd {
                        model.push_str(&format!(" {}", humanize::dollars(c)));
                    }
                    let line = Line::from(vec![
                        Span::styled(if selected { "▸ " } else { "  " }, style),
                        Span::styled(format!("{when:<12} {turns:<9} "), theme.muted()),
                        Span::styled(prompt, style),
                        Span::styled(
                            if model.is_empty() {
                                String::new()
                            } else {
                                format!(" · {model}")
                            },
                            theme.muted(),
                        ),
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

    fn info(id: &str, prompt: &str, last: u64) -> SessionInfo {
        SessionInfo {
            id: id.into(),
            workspace: "/w".into(),
            started: last,
            last_activity: last,
            first_prompt: prompt.into(),
            turns: 2,
            ..Default::default()
        }
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn enter_opens_the_selected_session_never_the_current_one() {
        let mut p = SessionPicker::new("now");
        assert_eq!(p.handle_key(key(KeyCode::Enter)), PickerAction::None);
        p.set(vec![
            info("now", "x", 3),
            info("b", "fix", 2),
            info("c", "add", 1),
        ]);
        assert_eq!(
            p.handle_key(key(KeyCode::Enter)),
            PickerAction::Open("b".into())
        );
        p.handle_key(key(KeyCode::Down));
        p.handle_key(key(KeyCode::Down));
        assert_eq!(
            p.handle_key(key(KeyCode::Enter)),
            PickerAction::Open("c".into())
        );
        assert_eq!(p.handle_key(key(KeyCode::Esc)), PickerAction::Close);
    }

    #[test]
    fn the_list_renders_with_age_turns_and_prompt() {
        let theme = Theme::load("dark", None, true).unwrap();
        let mut p = SessionPicker::new("now");
        p.set(vec![
            info("b", "fix the \u{1b}[31mparser", 3_600_000),
            info("c", "add a flag", 0),
        ]);
        let area = Rect::new(0, 0, 60, 6);
        let mut buf = Buffer::empty(area);
        p.render(area, &mut buf, &theme, 7_200_000);
        let text = crate::buffer_text(&buf);
        assert!(text.contains("▸ 1 h ago"), "{text}");
        assert!(
            text.contains("fix the parser"),
            "escapes are dropped: {text}"
        );
        assert!(
            text.contains("2 h ago") && text.contains("add a flag"),
            "{text}"
        );
        assert!(text.contains("Enter resume"), "{text}");
    }
}
