//! A read-only page over the screen (`/diff`): lines of a unified diff,
//! coloured by kind, scrolled with ↑↓ (j/k), PgUp/PgDn (Space), Home and
//! End; Esc or q closes it.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::tui::theme::Theme;

#[derive(Debug)]
pub struct Pager {
    title: String,
    lines: Vec<String>,
    scroll: usize,
    /// Rows the last frame showed, for paging.
    page: std::cell::Cell<usize>,
}

impl Pager {
    /// A page of `text`, its lines made safe to show.
    pub fn new(title: &str, text: &str) -> Self {
        Self {
            title: format!(" {title} "),
            lines: text
                .lines()
                .map(crate::tui::components::cells::terminal_line)
                .collect(),
            scroll: 0,
            page: std::cell::Cell::new(10),
        }
    }

    /// Whether the key closes the page.
    pub fn handle_key(&mut self, key: KeyEvent) -> bool {
        let last = self.lines.len().saturating_sub(1);
        let page = self.page.get().max(1);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return true,
            KeyCode::Down | KeyCode::Char('j') => self.scroll += 1,
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll += page,
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(page),
            KeyCode::Home => self.scroll = 0,
            KeyCode::End => self.scroll = last,
            _ => {}
        }
        self.scroll = self.scroll.min(last);
        false
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let keys = "↑↓ PgUp PgDn Home End scroll · Esc close";
        let Some(body) = super::picker::frame(&self.title, keys, area, buf, theme) else {
            return;
        };
        let rows = usize::from(body.height);
        self.page.set(rows.saturating_sub(1));
        for (i, l) in self.lines.iter().skip(self.scroll).take(rows).enumerate() {
            let style = if l.starts_with("diff --git") {
                theme.text().add_modifier(Modifier::BOLD)
            } else if l.starts_with("+++") || l.starts_with("---") || l.starts_with("index ") {
                theme.muted()
            } else if l.starts_with('+') {
                Style::default().fg(theme.colors.diff_add)
            } else if l.starts_with('-') {
                Style::default().fg(theme.colors.diff_del)
            } else if l.starts_with("@@") {
                theme.accent()
            } else {
                theme.text()
            };
            let shown = crate::tui::width::truncate(l, usize::from(body.width));
            let y = body.y + u16::try_from(i).unwrap_or(0);
            buf.set_line(
                body.x,
                y,
                &Line::from(Span::styled(shown.into_owned(), style)),
                body.width,
            );
        }
    }
}
