//! `/permissions`: the approval mode, the permission rules in force (the
//! workspace's marked), the hooks that run, and the live conversation
//! grants with the time each has left. ↑/↓ select a grant, `d` (or Delete)
//! revokes it, Esc closes. The data comes from the agent's `permissions`
//! event; the view asks for it when it opens and after each revocation.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use crate::protocol::GrantInfo;
use crate::protocol::humanize;
use crate::protocol::{ApprovalMode, RuleLists};
use crate::theme::Theme;
use crate::wrap::{Logical, wrap};

/// What the agent reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionsData {
    pub approval: ApprovalMode,
    pub rules: RuleLists,
    pub grants: Vec<GrantInfo>,
    pub hooks: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionsAction {
    None,
    Close,
    Revoke(u64),
}

#[derive(Debug, Default)]
pub struct PermissionsView {
    data: Option<(PermissionsData, Instant)>,
    selected: usize,
}

impl PermissionsView {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set(&mut self, data: PermissionsData, now: Instant) {
        self.selected = self.selected.min(data.grants.len().saturating_sub(1));
        self.data = Some((data, now));
    }

    /// Whether any grant is live (its time left is shown).
    pub fn has_grants(&self) -> bool {
        self.data
            .as_ref()
            .is_some_and(|(d, _)| !d.grants.is_empty())
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> PermissionsAction {
        let grants = self.data.as_ref().map_or(0, |(d, _)| d.grants.len());
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => PermissionsAction::Close,
            KeyCode::Down | KeyCode::Char('j') => {
                self.selected = (self.selected + 1).min(grants.saturating_sub(1));
                PermissionsAction::None
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.selected = self.selected.saturating_sub(1);
                PermissionsAction::None
            }
            KeyCode::Char('d' | 'x') | KeyCode::Delete | KeyCode::Backspace => self
                .data
                .as_ref()
                .and_then(|(d, _)| d.grants.get(self.selected))
                .map_or(PermissionsAction::None, |g| PermissionsAction::Revoke(g.id)),
            _ => PermissionsAction::None,
        }
    }

    fn lines(&self, theme: &Theme, width: usize, now: Instant) -> Vec<Line<'static>> {
        let Some((d, at)) = &self.data else {
            return vec![Line::from(Span::styled("loading…", theme.muted()))];
        };
        let mut lines = Vec::new();
        let para = |spans: Vec<Span<'static>>, lines: &mut Vec<Line<'static>>| {
            wrap(
                &Logical::new(Line::from(spans), Line::from("    "), false),
                width,
                lines,
            );
        };
        let heading =
            |t: &str| Span::styled(t.to_string(), theme.text().add_modifier(Modifier::BOLD));
        para(
            vec![
                heading("approval mode: "),
                Span::styled(d.approval.to_string(), theme.accent()),
            ],
            &mut lines,
        );
        lines.push(Line::default());
        for (name, list) in [
            ("allow", &d.rules.allow),
            ("ask", &d.rules.ask),
            ("deny", &d.rules.deny),
        ] {
            if list.is_empty() {
                para(
                    vec![
                        heading(&format!("{name}: ")),
                        Span::styled("none", theme.muted()),
                    ],
                    &mut lines,
                );
                continue;
            }
            para(vec![heading(&format!("{name}:"))], &mut lines);
            for r in list {
                para(
                    vec![Span::styled(format!("  {r}"), theme.text())],
                    &mut lines,
                );
            }
        }
        if !d.hooks.is_empty() {
            para(vec![heading("hooks:")], &mut lines);
            for h in &d.hooks {
                para(
                    vec![Span::styled(format!("  {h}"), theme.text())],
                    &mut lines,
                );
            }
        }
        lines.push(Line::default());
        para(vec![heading("conversation grants")], &mut lines);
        if d.grants.is_empty() {
            para(
                vec![Span::styled(
                    "  none: `a` in an approval dialog grants an operation for a while",
                    theme.muted(),
                )],
                &mut lines,
            );
        }
        let elapsed = now.saturating_duration_since(*at).as_secs();
        for (i, g) in d.grants.iter().enumerate() {
            let left = g.expires_in_secs.saturating_sub(elapsed);
            let marker = if i == self.selected { "▸ " } else { "  " };
            let style = if i == self.selected {
                theme.bold(theme.colors.accent)
            } else {
                theme.text()
            };
            para(
                vec![
                    Span::styled(format!("{marker}{}", g.covers), style),
                    Span::styled(
                        if g.idle_secs > 0 {
                            format!(
                                "  {} left · each use: {} again",
                                humanize::lifetime(left),
                                humanize::lifetime(g.idle_secs)
                            )
                        } else {
                            format!("  {} left", humanize::lifetime(left))
                        },
                        theme.muted(),
                    ),
                ],
                &mut lines,
            );
        }
        lines
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, now: Instant) {
        Clear.render(area, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.accent())
            .title(Span::styled(
                " Permissions ",
                theme.bold(theme.colors.accent),
            ));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height < 2 || inner.width < 4 {
            return;
        }
        let body = Rect::new(inner.x + 1, inner.y, inner.width - 2, inner.height - 1);
        let lines = self.lines(theme, usize::from(body.width), now);
        for (i, line) in lines.iter().take(usize::from(body.height)).enumerate() {
            let y = body.y + u16::try_from(i).unwrap_or(0);
            buf.set_line(body.x, y, line, body.width);
        }
        let keys = if self.has_grants() {
            "↑↓ select a grant · d revoke it · Esc close"
        } else {
            "Esc close"
        };
        buf.set_string(inner.x + 1, inner.bottom() - 1, keys, theme.muted());
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyModifiers;
    use insta::assert_snapshot;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;

    fn data() -> PermissionsData {
        PermissionsData {
            approval: ApprovalMode::Ask,
            rules: RuleLists {
                allow: vec!["exec_shell(cargo test*)".into()],
                ask: vec!["exec_shell(git push*)".into()],
                deny: vec![
                    "read_file(.env)".into(),
                    "exec_shell(rm -rf *) (workspace)".into(),
                ],
            },
            grants: vec![
                GrantInfo {
                    id: 7,
                    covers: "`git status` (/usr/bin/git)".into(),
                    expires_in_secs: 120,
                    idle_secs: 300,
                },
                GrantInfo {
                    id: 9,
                    covers: "writes to src/lib.rs".into(),
                    expires_in_secs: 290,
                    idle_secs: 300,
                },
            ],
            hooks: vec!["before_tool_call write_file|edit_file: ./scripts/check.sh".into()],
        }
    }

    #[test]
    fn the_view_lists_rules_and_grants_and_revokes_the_selected_one() {
        let t0 = Instant::now();
        let mut v = PermissionsView::new();
        v.set(data(), t0);
        let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
        assert_eq!(v.handle_key(key(KeyCode::Down)), PermissionsAction::None);
        assert_eq!(
            v.handle_key(key(KeyCode::Char('d'))),
            PermissionsAction::Revoke(9)
        );
        assert_eq!(v.handle_key(key(KeyCode::Esc)), PermissionsAction::Close);
        let theme = Theme::load("dark", None, true).unwrap();
        let mut term = Terminal::new(TestBackend::new(70, 20)).unwrap();
        term.draw(|f| {
            v.render(
                f.area(),
                f.buffer_mut(),
                &theme,
                t0 + std::time::Duration::from_secs(30),
            )
        })
        .unwrap();
        assert_snapshot!("permissions_view", term.backend());
    }
}
