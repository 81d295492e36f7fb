//! `/ps`: the commands the model started in the background, each with its
//! state, how long it has run, and its last lines of output. ↑/↓ choose
//! one, `k` (or Delete) stops it, `r` reads their output again, Esc
//! closes. The list comes from the agent's `jobs` event, which it sends
//! when one starts or ends and when asked.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use crate::protocol::JobInfo;
use crate::theme::Theme;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobsAction {
    None,
    Close,
    Refresh,
    Stop(String),
    /// `k` on one that has ended.
    Ended(String),
}

#[derive(Debug, Default)]
pub struct JobsView {
    jobs: Option<Vec<JobInfo>>,
    selected: usize,
}

/// How long ago `ms` (epoch milliseconds) was, for a person.
fn ran_for(started_ms: u64, now_ms: u64) -> String {
    crate::protocol::humanize::duration_ms(now_ms.saturating_sub(started_ms))
}

impl JobsView {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set(&mut self, jobs: Vec<JobInfo>) {
        // First shown: the first one running is chosen.
        if self.jobs.is_none() {
            self.selected = jobs.iter().position(|j| j.running).unwrap_or(0);
        }
        self.selected = self.selected.min(jobs.len().saturating_sub(1));
        self.jobs = Some(jobs);
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> JobsAction {
        let jobs = self.jobs.as_deref().unwrap_or_default();
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => JobsAction::Close,
            KeyCode::Down | KeyCode::Char('j') => {
                self.selected = (self.selected + 1).min(jobs.len().saturating_sub(1));
                JobsAction::None
            }
            KeyCode::Up => {
                self.selected = self.selected.saturating_sub(1);
                JobsAction::None
            }
            KeyCode::Char('r') => JobsAction::Refresh,
            KeyCode::Char('k' | 'x') | KeyCode::Delete => match jobs.get(self.selected) {
                Some(j) if j.running => JobsAction::Stop(j.handle.clone()),
                Some(j) => JobsAction::Ended(j.handle.clone()),
                None => JobsAction::None,
            },
            _ => JobsAction::None,
        }
    }

    fn lines(&self, theme: &Theme, now_ms: u64) -> Vec<Line<'static>> {
        let Some(jobs) = &self.jobs else {
            return vec![Line::from(Span::styled("loading…", theme.muted()))];
        };
        if jobs.is_empty() {
            return vec![Line::from(Span::styled(
                "No command runs in the background. The model starts one with \
                 `background: true` (a dev server, a watcher); it stops when the conversation \
                 ends.",
                theme.muted(),
            ))];
        }
        let mut lines = Vec::new();
        for (i, j) in jobs.iter().enumerate() {
            let chosen = i == self.selected;
            let (mark, state) = if j.running {
                ("●", format!("running {}", ran_for(j.started_ms, now_ms)))
            } else {
                (
                    "○",
                    match j.exit_code {
                        Some(c) => format!("exit {c}"),
                        None => "stopped".into(),
                    },
                )
            };
            let style = if chosen {
                theme.bold(theme.colors.accent)
            } else {
                theme.text().add_modifier(Modifier::BOLD)
            };
            lines.push(Line::from(vec![
                Span::styled(if chosen { "▸ " } else { "  " }, style),
                Span::styled(
                    format!("{mark} "),
                    if j.running {
                        theme.bold(theme.colors.ok)
                    } else {
                        theme.muted()
                    },
                ),
                Span::styled(format!("{} ", j.handle), style),
                Span::styled(
                    crate::protocol::visible::command(&j.command).replace('\n', " ⏎ "),
                    theme.accent(),
                ),
                Span::styled(format!(" · {state}"), theme.muted()),
            ]));
            for line in &j.tail {
                lines.push(Line::from(vec![
                    Span::styled("    │ ", theme.border()),
                    Span::styled(super::cells::terminal_line(line), theme.muted()),
                ]));
            }
        }
        lines
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        Clear.render(area, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.accent())
            .title(Span::styled(
                " Background commands (/ps) ",
                theme.bold(theme.colors.accent),
            ));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height < 2 || inner.width < 4 {
            return;
        }
        let body = Rect::new(inner.x + 1, inner.y, inner.width - 2, inner.height - 1);
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let lines = self.lines(theme, now_ms);
        // The chosen command in view.
        let first = lines.len().saturating_sub(usize::from(body.height));
        let skip = first.min(self.chosen_row(&lines));
        for (i, line) in lines
            .iter()
            .skip(skip)
            .take(usize::from(body.height))
            .enumerate()
        {
            let y = body.y + u16::try_from(i).unwrap_or(0);
            buf.set_line(body.x, y, line, body.width);
        }
        let running = self
            .jobs
            .as_deref()
            .is_some_and(|j| j.iter().any(|j| j.running));
        let keys = if running {
            "↑↓ choose · k stop it · r read again · Esc close"
        } else {
            "r read again · Esc close"
        };
        buf.set_string(inner.x + 1, inner.bottom() - 1, keys, theme.muted());
    }

    /// The row the chosen command's line is on.
    fn chosen_row(&self, lines: &[Line<'_>]) -> usize {
        lines
            .iter()
            .position(|l| l.spans.first().is_some_and(|s| s.content == "▸ "))
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyModifiers;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;

    fn jobs() -> Vec<JobInfo> {
        vec![
            JobInfo {
                handle: "bg1".into(),
                command: "npm run dev".into(),
                started_ms: 0,
                running: true,
                exit_code: None,
                tail: vec![
                    "\u{1b}[32mready\u{1b}[0m in 312 ms".into(),
                    "Local: http://localhost:5173/".into(),
                ],
                call_id: None,
            },
            JobInfo {
                handle: "bg2".into(),
                command: "cargo watch -x test".into(),
                started_ms: 0,
                running: false,
                exit_code: Some(1),
                tail: vec!["error: no such command: `watch`".into()],
                call_id: None,
            },
        ]
    }

    #[test]
    fn the_view_lists_commands_with_their_tails_and_stops_the_chosen_one() {
        let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
        let mut v = JobsView::new();
        v.set(jobs());
        assert_eq!(
            v.handle_key(key(KeyCode::Char('k'))),
            JobsAction::Stop("bg1".into())
        );
        v.handle_key(key(KeyCode::Down));
        assert_eq!(
            v.handle_key(key(KeyCode::Char('k'))),
            JobsAction::Ended("bg2".into()),
            "an ended one is not stopped"
        );
        assert_eq!(v.handle_key(key(KeyCode::Char('r'))), JobsAction::Refresh);
        let lines = v.lines(&Theme::plain(), 65_000);
        let text: Vec<String> = lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        insta::assert_snapshot!("jobs_view", text.join("\n"));
        assert_eq!(v.handle_key(key(KeyCode::Esc)), JobsAction::Close);
        let mut term = Terminal::new(TestBackend::new(60, 10)).unwrap();
        term.draw(|f| v.render(f.area(), f.buffer_mut(), &Theme::plain()))
            .unwrap();
    }
}
