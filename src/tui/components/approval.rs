//! The approval dialog: a modal over the transcript for each call that
//! needs approval.
//!
//! It shows the tool, its key argument, which parts of the call need
//! approval and why (in a chain, only the parts no rule, grant or the
//! read-only set covers), exactly what a conversation grant would cover
//! and for how long (or why no grant is offered), and for file changes the
//! diff (else the command or arguments), scrollable. Keys: `y` approve
//! once, `a` approve for the conversation (only when a grant is offered),
//! `n` or Esc deny, `e` deny and tell the model what to do instead. It cannot be hit by accident: keys are ignored for 300 ms
//! after a request shows, and Enter and Space never approve. More requests
//! queue behind the one shown; the title says how many remain. The composer
//! underneath keeps its draft.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};
use ratatui_textarea::TextArea;
use serde_json::Value;

use super::cells::key_argument;
use super::diff_view::DiffView;
use crate::humanize;
use crate::protocol::{ApprovalDecision, ApprovalNeed, Effect, GrantOffer};
use crate::tui::highlight::Highlighter;
use crate::tui::theme::Theme;
use crate::tui::wrap::{Logical, wrap};

/// How long a new request ignores keys.
pub const ARMING_DELAY: Duration = Duration::from_millis(300);

#[derive(Debug, Clone)]
pub struct PendingApproval {
    pub call_id: String,
    pub tool: String,
    pub arguments: Value,
    pub effect: Effect,
    pub needs: Vec<ApprovalNeed>,
    pub reason: String,
    pub grant: Option<GrantOffer>,
    pub diff: Option<DiffView>,
}

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalAction {
    None,
    /// A key that does nothing here, and why.
    Hint(&'static str),
    Decide {
        call_id: String,
        decision: ApprovalDecision,
    },
}

#[derive(Default)]
pub struct ApprovalOverlay {
    queue: VecDeque<PendingApproval>,
    shown_at: Option<Instant>,
    scroll: usize,
    /// Open while the person writes what the model should do instead.
    message: Option<TextArea<'static>>,
}

impl ApprovalOverlay {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_active(&self) -> bool {
        !self.queue.is_empty()
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn push(&mut self, request: PendingApproval, now: Instant) {
        self.queue.push_back(request);
        if self.queue.len() == 1 {
            self.show_front(now);
        }
    }

    /// Forgets a request the agent no longer waits for (the turn ended).
    pub fn remove(&mut self, call_id: &str, now: Instant) {
        let was_front = self.queue.front().is_some_and(|r| r.call_id == call_id);
        self.queue.retain(|r| r.call_id != call_id);
        if was_front {
            self.show_front(now);
        }
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    fn show_front(&mut self, now: Instant) {
        self.shown_at = self.queue.front().map(|_| now);
        self.scroll = 0;
        self.message = None;
    }

    /// Whether keys are ignored right now, and until when.
    pub fn armed_at(&self) -> Option<Instant> {
        self.shown_at.map(|t| t + ARMING_DELAY)
    }

    pub fn handle_key(&mut self, key: KeyEvent, now: Instant) -> ApprovalAction {
        let Some(front) = self.queue.front() else {
            return ApprovalAction::None;
        };
        if self.armed_at().is_some_and(|t| now < t) {
            return ApprovalAction::None;
        }
        if let Some(input) = &mut self.message {
            match key.code {
                KeyCode::Esc => self.message = None,
                KeyCode::Enter => {
                    let text = input.lines().join(" ").trim().to_string();
                    let message = (!text.is_empty()).then_some(text);
                    return self.decide(ApprovalDecision::Deny { message }, now);
                }
                _ => {
                    input.input(key);
                }
            }
            return ApprovalAction::None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('y' | 'Y') if !ctrl => self.decide(ApprovalDecision::ApproveOnce, now),
            KeyCode::Char('a' | 'A') if !ctrl && front.grant.is_some() => {
                self.decide(ApprovalDecision::ApproveForConversation, now)
            }
            KeyCode::Char('a' | 'A') if !ctrl => ApprovalAction::Hint(
                "`a` is not offered: no conversation grant can cover this call (y once, n deny)",
            ),
            KeyCode::Char('n' | 'N') | KeyCode::Esc => {
                self.decide(ApprovalDecision::Deny { message: None }, now)
            }
            KeyCode::Char('e' | 'E') if !ctrl => {
                let mut input = TextArea::default();
                input.set_placeholder_text(format!(
                    "what should the model do instead of {}?",
                    front.tool
                ));
                self.message = Some(input);
                ApprovalAction::None
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.scroll += 1;
                ApprovalAction::None
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.scroll = self.scroll.saturating_sub(1);
                ApprovalAction::None
            }
            KeyCode::PageDown | KeyCode::Char(' ') => {
                self.scroll += 10;
                ApprovalAction::None
            }
            KeyCode::PageUp => {
                self.scroll = self.scroll.saturating_sub(10);
                ApprovalAction::None
            }
            KeyCode::Home => {
                self.scroll = 0;
                ApprovalAction::None
            }
            // Enter, and everything else, does nothing here.
            _ => ApprovalAction::None,
        }
    }

    fn decide(&mut self, decision: ApprovalDecision, now: Instant) -> ApprovalAction {
        let Some(front) = self.queue.pop_front() else {
            return ApprovalAction::None;
        };
        self.show_front(now);
        ApprovalAction::Decide {
            call_id: front.call_id,
            decision,
        }
    }

    fn body(
        &self,
        req: &PendingApproval,
        theme: &Theme,
        hl: &Highlighter,
        width: u16,
    ) -> Vec<Line<'static>> {
        let w = usize::from(width);
        let mut lines = Vec::new();
        let para = |spans: Vec<Span<'static>>, lines: &mut Vec<Line<'static>>| {
            wrap(
                &Logical {
                    line: Line::from(spans),
                    hang: Line::from("  "),
                    hard: false,
                },
                w,
                lines,
            );
        };
        let arg = key_argument(&req.arguments);
        para(
            vec![
                Span::styled(req.tool.clone(), theme.text().add_modifier(Modifier::BOLD)),
                Span::styled(format!(" {arg}"), theme.accent()),
            ],
            &mut lines,
        );
        if let [only] = req.needs.as_slice() {
            para(
                vec![
                    Span::styled("needs approval: ", theme.muted()),
                    Span::styled(only.what.clone(), theme.text()),
                ],
                &mut lines,
            );
        } else {
            para(
                vec![Span::styled("needs approval:", theme.muted())],
                &mut lines,
            );
            for n in &req.needs {
                para(
                    vec![Span::styled(format!("  • {}", n.what), theme.text())],
                    &mut lines,
                );
            }
        }
        para(
            vec![Span::styled(format!("why: {}", req.reason), theme.muted())],
            &mut lines,
        );
        let grant = match &req.grant {
            Some(g) => format!(
                "`a` approves {} for this conversation ({})",
                g.covers.join(", "),
                // Kept on one line.
                humanize::lifetime(g.ttl_secs).replace(' ', "\u{a0}")
            ),
            None => "no conversation grant can cover this call: approve it once, or deny".into(),
        };
        para(vec![Span::styled(grant, theme.muted())], &mut lines);
        lines.push(Line::default());
        match &req.diff {
            Some(diff) => {
                lines.push(Line::from(vec![
                    Span::styled(diff.path.clone(), theme.text().add_modifier(Modifier::BOLD)),
                    Span::styled(format!(" +{}", diff.added), theme.fg(theme.colors.diff_add)),
                    Span::styled(
                        format!(" -{}", diff.removed),
                        theme.fg(theme.colors.diff_del),
                    ),
                ]));
                lines.extend(diff.lines(theme, hl, width));
            }
            None => {
                let shown = match req.arguments.get("command").and_then(Value::as_str) {
                    Some(cmd) => format!("$ {cmd}"),
                    None => serde_json::to_string_pretty(&req.arguments).unwrap_or_default(),
                };
                for l in shown.lines() {
                    wrap(
                        &Logical::code(Line::from(Span::styled(l.to_string(), theme.text()))),
                        w,
                        &mut lines,
                    );
                }
            }
        }
        lines
    }

    pub fn render(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        hl: &Highlighter,
        now: Instant,
    ) {
        let Some(req) = self.queue.front() else {
            return;
        };
        let w = area.width.saturating_sub(4).max(20).min(area.width);
        // As tall as the content needs (borders, body, rule, keys), within the area.
        let wanted =
            u16::try_from(self.body(req, theme, hl, w.saturating_sub(4)).len()).unwrap_or(u16::MAX);
        let h = wanted
            .saturating_add(4)
            .max(10)
            .min(area.height.saturating_sub(2).max(8))
            .min(area.height);
        let modal = Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height - h) / 2,
            w,
            h,
        );
        Clear.render(modal, buf);
        let remaining = if self.queue.len() > 1 {
            format!(" 1 of {} ", self.queue.len())
        } else {
            String::new()
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.bold(theme.colors.warning))
            .title(Span::styled(
                format!(" Approve {}? ", req.tool),
                theme.bold(theme.colors.warning),
            ))
            .title(Line::from(Span::styled(remaining, theme.muted())).right_aligned());
        let inner = block.inner(modal);
        block.render(modal, buf);
        if inner.height < 3 {
            return;
        }
        let body_area = Rect::new(
            inner.x + 1,
            inner.y,
            inner.width.saturating_sub(2),
            inner.height - 2,
        );
        let body = self.body(req, theme, hl, body_area.width);
        let max_scroll = body.len().saturating_sub(usize::from(body_area.height));
        let scroll = self.scroll.min(max_scroll);
        for (i, line) in body
            .iter()
            .skip(scroll)
            .take(usize::from(body_area.height))
            .enumerate()
        {
            let y = body_area.y + u16::try_from(i).unwrap_or(0);
            buf.set_line(body_area.x, y, line, body_area.width);
        }
        if max_scroll > 0 {
            let pos = format!(" {}/{} ", scroll + 1, max_scroll + 1);
            let x = modal
                .right()
                .saturating_sub(u16::try_from(pos.len()).unwrap_or(0) + 1);
            buf.set_string(x, modal.bottom() - 1, pos, theme.muted());
        }
        let footer_y = inner.bottom() - 1;
        let footer = Rect::new(inner.x + 1, footer_y, inner.width.saturating_sub(2), 1);
        if let Some(input) = &self.message {
            let label = Span::styled("instead: ", theme.bold(theme.colors.warning));
            buf.set_line(footer.x, footer.y, &Line::from(label), 9);
            let field = Rect::new(footer.x + 9, footer.y, footer.width.saturating_sub(9), 1);
            input.render(field, buf);
            return;
        }
        let armed = self.armed_at().is_none_or(|t| now >= t);
        let key = |k: &str, what: &str| {
            vec![
                Span::styled(
                    k.to_string(),
                    if armed {
                        theme.bold(theme.colors.accent)
                    } else {
                        theme.muted()
                    },
                ),
                Span::styled(format!(" {what}  "), theme.muted()),
            ]
        };
        const FOOTERS: [[(&str, &str); 5]; 3] = [
            [
                ("y", "approve once"),
                ("a", "approve for this conversation"),
                ("n", "deny"),
                ("e", "deny, say what instead"),
                ("↑↓", "scroll"),
            ],
            [
                ("y", "approve once"),
                ("a", "for conversation"),
                ("n", "deny"),
                ("e", "instead…"),
                ("↑↓", "scroll"),
            ],
            [
                ("y", "once"),
                ("a", "grant"),
                ("n", "deny"),
                ("e", "instead"),
                ("↑↓", ""),
            ],
        ];
        let grantable = req.grant.is_some();
        let offered = |f: &[(&'static str, &'static str); 5]| -> Vec<(&'static str, &'static str)> {
            f.iter()
                .copied()
                .filter(|(k, _)| grantable || *k != "a")
                .collect()
        };
        let fits = |f: &[(&str, &str)]| {
            f.iter()
                .map(|(k, w)| k.chars().count() + w.len() + 3)
                .sum::<usize>()
                <= usize::from(footer.width)
        };
        let labels = FOOTERS
            .iter()
            .map(offered)
            .find(|f| fits(f))
            .unwrap_or_else(|| offered(&FOOTERS[2]));
        let spans: Vec<Span<'static>> = labels.iter().flat_map(|(k, what)| key(k, what)).collect();
        buf.set_line(footer.x, footer.y, &Line::from(spans), footer.width);
        buf.set_line(
            inner.x,
            footer_y - 1,
            &Line::from(Span::styled(
                "─".repeat(usize::from(inner.width)),
                theme.border(),
            )),
            inner.width,
        );
    }
}

#[cfg(test)]
#[path = "approval_tests.rs"]
mod tests;
