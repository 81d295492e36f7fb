//! How the approval dialog is drawn: the call, why it asks, what a grant
//! would cover, its diff or command, and the keys; fitted to the rows it
//! is given.

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use super::*;
use crate::components::cells::key_argument;
use crate::components::diff_view::DiffView;
use crate::protocol::humanize;
use crate::protocol::visible;
use crate::theme::Theme;
use crate::width;
use crate::wrap::{Logical, wrap};

/// The dialog's keys and what they do, from the widest spelling to the
/// narrowest; the first that fits is shown.
const FOOTERS: [[(&str, &str); 8]; 5] = [
    [
        ("y", "yes once"),
        ("a", "yes for this conversation"),
        ("n", "no"),
        ("e", "no, and say what instead"),
        ("E", "edit"),
        ("x", "leave hunk out"),
        ("↑↓", "scroll"),
        ("?", "keys"),
    ],
    [
        ("y", "yes once"),
        ("a", "for conversation"),
        ("n", "no"),
        ("e", "instead…"),
        ("E", "edit"),
        ("x", "leave out"),
        ("↑↓", ""),
        ("?", "keys"),
    ],
    [
        ("y", "yes once"),
        ("a", "for conversation"),
        ("n", "no"),
        ("e", "instead…"),
        ("E", "edit"),
        ("x", "out"),
        ("↑↓", ""),
        ("?", ""),
    ],
    [
        ("y", "yes once"),
        ("a", "grant"),
        ("n", "no"),
        ("e", "instead…"),
        ("E", "edit"),
        ("x", "out"),
        ("↑↓", ""),
        ("?", ""),
    ],
    [
        ("y", "yes"),
        ("a", "grant"),
        ("n", "no"),
        ("e", "instead"),
        ("E", "edit"),
        ("x", "out"),
        ("↑↓", ""),
        ("?", ""),
    ],
];

/// What running in the background means for the call, as the core says
/// it (how long it runs; whether a server in it can be reached).
fn background_notes(req: &PendingApproval, theme: &Theme) -> Vec<Vec<Span<'static>>> {
    req.operations
        .iter()
        .filter_map(|op| match op {
            crate::protocol::operation::Operation::Exec(e) => e.background.as_deref(),
            _ => None,
        })
        .map(|note| {
            vec![
                Span::styled("background: ", theme.bold(theme.colors.warning)),
                Span::styled(note.to_string(), theme.text()),
            ]
        })
        .collect()
}

impl ApprovalOverlay {
    /// What the dialog says above the diff (or the command itself).
    fn body(&self, req: &PendingApproval, theme: &Theme, width: u16) -> Vec<Line<'static>> {
        let w = usize::from(width);
        let mut lines = Vec::new();
        let para = |spans: Vec<Span<'static>>, lines: &mut Vec<Line<'static>>| {
            wrap(
                &Logical::new(Line::from(spans), Line::from("  "), false),
                w,
                lines,
            );
        };
        // A command is shown whole below (`$ …`): the first line names
        // the tool alone, so the command is not read three times.
        let command_below = req.diff.is_none() && command_of(req).is_some();
        let arg = if command_below {
            String::new()
        } else {
            format!(" {}", key_argument(&req.arguments))
        };
        para(
            vec![
                Span::styled(req.tool.clone(), theme.text().add_modifier(Modifier::BOLD)),
                Span::styled(arg, theme.accent()),
            ],
            &mut lines,
        );
        if let [only] = req.needs.as_slice() {
            para(
                vec![
                    Span::styled("needs approval: ", theme.muted()),
                    Span::styled(visible::name(&only.what).into_owned(), theme.text()),
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
                    vec![Span::styled(
                        format!("  • {}", visible::name(&n.what)),
                        theme.text(),
                    )],
                    &mut lines,
                );
            }
        }
        para(
            vec![Span::styled(
                format!("why: {}", visible::name(&req.reason)),
                theme.muted(),
            )],
            &mut lines,
        );
        for note in background_notes(req, theme) {
            para(note, &mut lines);
        }
        let grant = grant_words(req);
        para(vec![Span::styled(grant, theme.muted())], &mut lines);
        lines.push(Line::default());
        match &req.diff {
            Some(diff) => {
                use crate::protocol::change::ChangeKind;
                let what = match req.change.as_ref().map(|c| c.kind) {
                    _ if req.edited => "your edit: ",
                    Some(ChangeKind::Create) => "new file ",
                    Some(ChangeKind::Delete) => "delete ",
                    Some(ChangeKind::Rename) => "move ",
                    _ => "",
                };
                // What would be written: the hunks left out count for nothing.
                let (added, removed) = diff.counts(&self.excluded);
                let mut header = vec![
                    Span::styled(what, theme.bold(theme.colors.warning)),
                    Span::styled(diff.path.clone(), theme.text().add_modifier(Modifier::BOLD)),
                    Span::styled(format!(" +{added}"), theme.fg(theme.colors.diff_add)),
                    Span::styled(format!(" −{removed}"), theme.fg(theme.colors.diff_del)),
                ];
                let total = diff.hunks();
                if total > 1 || self.excluded.contains(&true) {
                    let kept = self.excluded.iter().filter(|x| !**x).count();
                    header.push(Span::styled(
                        format!("  {kept} of {total} hunks"),
                        if kept < total {
                            theme.bold(theme.colors.warning)
                        } else {
                            theme.muted()
                        },
                    ));
                }
                lines.push(Line::from(header));
                for note in req.change.iter().flat_map(|c| &c.notes) {
                    para(
                        vec![Span::styled(
                            format!("⚠ {note}"),
                            theme.fg(theme.colors.warning),
                        )],
                        &mut lines,
                    );
                }
            }
            None => {
                let shown = match command_of(req) {
                    Some(cmd) => format!("$ {}", visible_command(cmd)),
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

    /// The rows the dialog takes in `area`: as many as the call needs
    /// (borders, body, rule, keys), at most two thirds of a screen of 18
    /// rows or more (the transcript above keeps the rest: what the model
    /// said about the call; PgUp/PgDn scroll it); a very short screen
    /// gives the call all it can.
    pub fn height(&self, area: Rect, theme: &Theme) -> u16 {
        let Some(req) = self.queue.front() else {
            return 0;
        };
        let w = area.width.saturating_sub(4).max(20).min(area.width);
        let body_width = w.saturating_sub(4);
        let total = self.body(req, theme, body_width).len()
            + req.diff.as_ref().map_or(0, |d| d.height(body_width));
        Self::rows_for(total, area.height)
    }

    fn rows_for(total: usize, height: u16) -> u16 {
        let wanted = u16::try_from(total).unwrap_or(u16::MAX);
        let cap = if height >= 18 { height * 2 / 3 } else { height };
        wanted
            .saturating_add(4)
            .max(10)
            .min(cap)
            .min(height.saturating_sub(2).max(8))
            .min(height)
    }

    /// Draws the dialog at the bottom of `area`, as tall as [`height`]
    /// says for it.
    ///
    /// [`height`]: Self::height
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, now: Instant) {
        self.render_rows(area, None, buf, theme, now);
    }

    /// Draws the dialog filling `area`, rows the app set aside for it
    /// (with [`height`]).
    ///
    /// [`height`]: Self::height
    pub fn render_filling(&self, area: Rect, buf: &mut Buffer, theme: &Theme, now: Instant) {
        self.render_rows(area, Some(area.height), buf, theme, now);
    }

    fn render_rows(
        &self,
        area: Rect,
        rows: Option<u16>,
        buf: &mut Buffer,
        theme: &Theme,
        now: Instant,
    ) {
        let Some(req) = self.queue.front() else {
            return;
        };
        let w = area.width.saturating_sub(4).max(20).min(area.width);
        // As tall as the content needs, within the area. Only the diff
        // rows in view are ever styled.
        let body_width = w.saturating_sub(4);
        let head = self.body(req, theme, body_width);
        let diff_rows = req.diff.as_ref().map_or(0, |d| d.height(body_width));
        let total = head.len() + diff_rows;
        let h = rows.unwrap_or_else(|| Self::rows_for(total, area.height));
        // At the bottom of its area: the app gives it the rows under the
        // transcript (whose newest lines then end just above it).
        let y = area.y + area.height - h;
        let modal = Rect::new(area.x + (area.width - w) / 2, y, w, h);
        // The rows it takes are its own, edge to edge: no line of the
        // transcript shows beside it as if it were part of it.
        Clear.render(Rect::new(area.x, y, area.width, h), buf);
        let block = self.frame(req, theme);
        let inner = block.inner(modal);
        // Too small to show the call and its keys: one line says so, and
        // only a denial is taken. Showing the call means its first rows:
        // what it is, why it asks, and the start of its command, or of its
        // diff down to the first line it changes (a hunk's header alone
        // shows nothing of what would be written).
        let body_rows = usize::from(inner.height.saturating_sub(2));
        // A diff scrolls to its change (below), so three rows show it: a
        // line above, the change, a marker.
        let needed = total.clamp(3, MIN_BODY_ROWS).min(total);
        let fits = inner.width >= 24 && body_rows >= needed;
        self.fits.set(fits);
        self.drawn.set(Some(fits));
        if !fits {
            Clear.render(area, buf);
            let notice = Line::from(vec![
                Span::styled("approval needed: ", theme.bold(theme.colors.warning)),
                Span::styled("enlarge the window (n denies)", theme.text()),
            ]);
            buf.set_line(area.x, area.y + area.height / 2, &notice, area.width);
            return;
        }
        block.render(modal, buf);
        let body_area = Rect::new(
            inner.x + 1,
            inner.y,
            inner.width.saturating_sub(2),
            inner.height - 2,
        );
        let height = usize::from(body_area.height);
        let above = total - diff_rows;
        self.diff_at.set((above, body_width));
        let max_scroll = total.saturating_sub(height);
        self.max_scroll.set(max_scroll);
        // Each hunk's first changed rows, where the body has them.
        let changes: Vec<Option<(usize, usize)>> = req.diff.as_ref().map_or_else(Vec::new, |d| {
            (0..d.hunks())
                .map(|h| {
                    d.change_rows(h, body_width)
                        .map(|(a, b)| (above + a, above + b))
                })
                .collect()
        });
        let scroll = if self.follow {
            let header = req
                .diff
                .as_ref()
                .map_or(0, |d| above + d.hunk_row(self.hunk, body_width));
            // The chosen hunk in view from its header when its change
            // fits under it; else its change with the line above it
            // (context goes first). Scrolled, the first row is a marker.
            match changes.get(self.hunk).copied().flatten() {
                Some((start, end)) => {
                    let until = end.min(start + height / 2).max(start + 1);
                    if self.hunk == 0 && until <= height {
                        0
                    } else if until < header + height {
                        header.saturating_sub(1)
                    } else {
                        start.saturating_sub(2)
                    }
                }
                None if self.hunk > 0 => header.saturating_sub(1),
                None => 0,
            }
        } else {
            self.scroll
        }
        .min(max_scroll);
        self.shown_scroll.set(scroll);
        // Scrolled past the call's first lines: a marker says so (the
        // tool and its target stay in the frame's title).
        let marker = scroll > 0 && height > 3;
        let (skip, rows) = if marker {
            (scroll + 1, height - 1)
        } else {
            (scroll, height)
        };
        let mut shown: Vec<Line<'static>> = Vec::with_capacity(height);
        if marker {
            shown.push(Line::from(Span::styled(
                format!("↑ {} more (k, PgUp)", skip),
                theme.muted(),
            )));
        }
        shown.extend(head.into_iter().skip(skip).take(rows));
        if let Some(diff) = &req.diff
            && shown.len() < height
        {
            let from = (skip + shown.len() - usize::from(marker)).saturating_sub(above);
            shown.extend(diff.rows_in(theme, body_width, from, height - shown.len()));
        }
        // What this frame shows of each hunk's change counts as seen.
        let window = skip..skip + rows;
        let mut seen = self.seen.borrow_mut();
        for (h, change) in changes.iter().enumerate() {
            if let (Some((start, _)), Some(flag)) = (change, seen.get_mut(h))
                && window.contains(start)
            {
                *flag = true;
            }
        }
        drop(seen);
        for (i, line) in shown.iter().enumerate() {
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
        self.render_footer(req, inner, buf, theme, now);
    }

    /// The dialog's border and titles: the tool, where the call is in the
    /// queue or the round, and (bottom) the hunks kept, in sight however
    /// far the diff is scrolled.
    fn frame(&self, req: &PendingApproval, theme: &Theme) -> Block<'static> {
        let remaining = match req.round {
            _ if self.queue.len() > 1 => format!(" 1 of {} · Tab next ", self.queue.len()),
            // Asked one at a time: the rest of the model's calls may ask too.
            Some([n, total]) if total > 1 => format!(" call {n} of {total} "),
            _ => String::new(),
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.bold(theme.colors.warning))
            .title(Span::styled(
                format!(" Approve {}? ", req.tool),
                theme.bold(theme.colors.warning),
            ))
            .title(Line::from(Span::styled(remaining, theme.muted())).right_aligned());
        // What is kept stays in sight however far the diff is scrolled.
        let hunk_total = req.diff.as_ref().map_or(0, DiffView::hunks);
        if hunk_total > 1 || self.excluded.contains(&true) {
            let kept = self.excluded.iter().filter(|x| !**x).count();
            let (added, removed) = req
                .diff
                .as_ref()
                .map_or((0, 0), |d| d.counts(&self.excluded));
            block.title_bottom(
                Line::from(Span::styled(
                    format!(
                        " hunk {} of {hunk_total} · {kept} kept · +{added} −{removed} ",
                        self.hunk + 1
                    ),
                    if kept < hunk_total {
                        theme.bold(theme.colors.warning)
                    } else {
                        theme.muted()
                    },
                ))
                .left_aligned(),
            )
        } else {
            block
        }
    }

    /// The keys under the call (or the line a denial's message is written
    /// in, or the second `a`'s question), under a rule.
    fn render_footer(
        &self,
        req: &PendingApproval,
        inner: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        now: Instant,
    ) {
        let footer_y = inner.bottom() - 1;
        let footer = Rect::new(inner.x + 1, footer_y, inner.width.saturating_sub(2), 1);
        if let Some(input) = &self.message {
            let label = Span::styled("instead: ", theme.bold(theme.colors.warning));
            buf.set_line(footer.x, footer.y, &Line::from(label), 9);
            let field = Rect::new(footer.x + 9, footer.y, footer.width.saturating_sub(9), 1);
            input.render(field, buf);
            return;
        }
        // The rule between the call and its keys.
        buf.set_line(
            inner.x,
            footer_y - 1,
            &Line::from(Span::styled(
                "─".repeat(usize::from(inner.width)),
                theme.border(),
            )),
            inner.width,
        );
        let armed = self.arming.is_armed(now);
        if self.confirming {
            // What it covers is in the dialog above; here, the key.
            let covers = req
                .grant
                .as_ref()
                .map(|g| {
                    format!(
                        "for this conversation (until unused for {})",
                        humanize::lifetime(g.ttl_secs).replace(' ', "\u{a0}")
                    )
                })
                .unwrap_or_default();
            let line = Line::from(vec![
                Span::styled(
                    "a",
                    if armed {
                        theme.bold(theme.colors.accent)
                    } else {
                        theme.muted()
                    },
                ),
                Span::styled(
                    format!(" again: approve {covers}  ·  Esc: back, no grant"),
                    theme.bold(theme.colors.warning),
                ),
            ]);
            buf.set_line(footer.x, footer.y, &line, footer.width);
            return;
        }
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
                Span::styled(
                    if what.is_empty() {
                        String::new()
                    } else {
                        format!(" {what}")
                    },
                    theme.muted(),
                ),
            ]
        };
        let labels = footer_labels(req, footer.width);
        let mut spans: Vec<Span<'static>> = Vec::new();
        for (i, (k, what)) in labels.iter().enumerate() {
            if i > 0 {
                spans.push(Span::raw("  "));
            }
            spans.extend(key(k, what));
        }
        buf.set_line(footer.x, footer.y, &Line::from(spans), footer.width);
    }
}

/// The keys the call in front is offered, spelled as widely as `width`
/// columns allow.
fn footer_labels(req: &PendingApproval, width: u16) -> Vec<(&'static str, &'static str)> {
    // `a` grants for the model's own proposals, not the person's edit.
    let grantable = req.grant.is_some() && !req.edited;
    let hunks = req.diff.as_ref().map_or(0, DiffView::hunks);
    let editable = req.change.as_ref().is_some_and(|c| c.editable());
    let offered = |f: &[(&'static str, &'static str); 8]| -> Vec<(&'static str, &'static str)> {
        f.iter()
            .copied()
            .filter(|(k, _)| grantable || *k != "a")
            // Leaving out is choosing among hunks.
            .filter(|(k, _)| hunks > 1 || *k != "x")
            .filter(|(k, _)| editable || *k != "E")
            .map(|(k, w)| match (k, hunks > 1) {
                ("↑↓", true) if !w.is_empty() => ("↑↓", "choose hunk"),
                _ => (k, w),
            })
            .collect()
    };
    let fits = |f: &[(&str, &str)]| {
        f.iter()
            .map(|(k, w)| width::of(k) + usize::from(!w.is_empty()) + width::of(w) + 2)
            .sum::<usize>()
            <= usize::from(width)
    };
    FOOTERS
        .iter()
        .map(offered)
        .find(|f| fits(f))
        .unwrap_or_else(|| offered(&FOOTERS[4]))
}

/// What `a` would grant, or why nothing can.
fn grant_words(req: &PendingApproval) -> String {
    match &req.grant {
        _ if req.edited => "your version: y writes it (E edits it again, n denies)".to_string(),
        Some(g) => format!(
            "`a` approves {} for this conversation (until unused for {})",
            {
                let covers = visible::name(&g.covers.join(", ")).into_owned();
                // A deletion is a change to the file, not a write.
                let deletes = req.change.as_ref().map(|c| c.kind)
                    == Some(crate::protocol::change::ChangeKind::Delete);
                if deletes {
                    covers.replace("writes to ", "changes to (deleting, writing) ")
                } else {
                    covers
                }
            },
            // Kept on one line.
            humanize::lifetime(g.ttl_secs).replace(' ', "\u{a0}")
        ),
        None => "no conversation grant can cover this call: approve it once, or deny".into(),
    }
}

/// The shell line a call runs (its `Exec` operation), if it runs one.
fn command_of(req: &ApprovalRequest) -> Option<&str> {
    req.operations.iter().find_map(|op| match op {
        crate::protocol::operation::Operation::Exec(e) => Some(e.line.as_str()),
        _ => None,
    })
}
