//! A read-only page over the screen (`/diff`): the lines of the session's
//! changes, drawn from their hunks and coloured by what each line is, wrapped (nothing is cut off), with what lines hide
//! shown (`␍` for a CRLF ending, `⟨U+200B⟩` for an invisible character),
//! scrolled with ↑↓ (j/k), PgUp/PgDn (Space), Home and End; Esc or q
//! closes it.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::protocol::change::{FileChange, PatchLine};
use crate::theme::Theme;

#[derive(Debug)]
pub struct Pager {
    title: String,
    /// Each line made safe to show, with what it is in a patch (`None`:
    /// plain text).
    lines: Vec<(Option<PatchLine>, String)>,
    /// The first row in view (rows are the lines wrapped to the width).
    scroll: usize,
    /// The row the last jump (n, ], …) went to, which may lie in the last
    /// screenful, below the top row.
    cursor: Option<usize>,
    /// Rows the last frame showed, for paging, and how many rows there
    /// were at its width.
    page: std::cell::Cell<usize>,
    rows: std::cell::Cell<usize>,
    /// The lines wrapped at a width: (width, each row's line and text).
    wrapped: std::cell::RefCell<(u16, Vec<(usize, String)>)>,
}

/// A line of a diff as a person must see it: a carriage return at its end
/// shown (`␍`, a CRLF line ending), invisible and control characters
/// named, tabs as spaces.
fn shown(raw: &str) -> String {
    let (body, cr) = match raw.strip_suffix('\r') {
        Some(body) => (body, "␍"),
        None => (raw, ""),
    };
    let text = crate::protocol::visible::diff_line(body).replace('\t', "    ");
    format!("{text}{cr}")
}

/// `line` cut into rows of at most `width` columns (wide characters kept
/// whole); an empty line is one empty row.
fn wrap(line: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rows = vec![String::new()];
    let mut cols = 0;
    for c in line.chars() {
        let w = crate::width::of(c.encode_utf8(&mut [0; 4]));
        if cols + w > width && cols > 0 {
            rows.push(String::new());
            cols = 0;
        }
        if let Some(row) = rows.last_mut() {
            row.push(c);
        }
        cols += w;
    }
    rows
}

impl Pager {
    /// A page of `text`, its lines made safe to show.
    pub fn new(title: &str, text: &str) -> Self {
        let mut lines: Vec<(Option<PatchLine>, String)> =
            text.split('\n').map(|l| (None, shown(l))).collect();
        while lines.last().is_some_and(|(_, l)| l.is_empty()) {
            lines.pop();
        }
        Self::of(title, lines)
    }

    /// A page of `changes` in git's form, file by file, then the lines
    /// of `after` (what they leave out).
    pub fn diff(title: &str, changes: &[FileChange], after: &[String]) -> Self {
        let lines = changes
            .iter()
            .flat_map(FileChange::patch_lines)
            .map(|(kind, text)| (Some(kind), shown(&text)))
            .chain(after.iter().map(|l| (None, shown(l))))
            .collect();
        Self::of(title, lines)
    }

    fn of(title: &str, lines: Vec<(Option<PatchLine>, String)>) -> Self {
        Self {
            title: format!(" {title} "),
            lines,
            scroll: 0,
            cursor: None,
            page: std::cell::Cell::new(10),
            rows: std::cell::Cell::new(0),
            wrapped: std::cell::RefCell::new((0, Vec::new())),
        }
    }

    /// The first row of the next (or, `forward` false, the previous)
    /// line of kind `mark`, from the row at the top.
    fn find(&self, mark: PatchLine, forward: bool) -> Option<usize> {
        let wrapped = self.wrapped.borrow();
        let starts: Vec<usize> = wrapped
            .1
            .iter()
            .enumerate()
            .filter(|(r, (line, _))| {
                self.lines[*line].0 == Some(mark) && (*r == 0 || wrapped.1[r - 1].0 != *line)
            })
            .map(|(r, _)| r)
            .collect();
        let at = self.cursor.unwrap_or(self.scroll);
        if forward {
            starts.into_iter().find(|r| *r > at)
        } else {
            starts.into_iter().rev().find(|r| *r < at)
        }
    }

    /// Whether the key closes the page.
    pub fn handle_key(&mut self, key: KeyEvent) -> bool {
        let page = self.page.get().max(1);
        // The last screenful is as far as it goes.
        let last = self.rows.get().saturating_sub(page);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return true,
            KeyCode::Down | KeyCode::Char('j') => self.scroll += 1,
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll += page,
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(page),
            KeyCode::Home => self.scroll = 0,
            KeyCode::End => self.scroll = last,
            // The next or the previous file (n, N) or hunk (], [).
            KeyCode::Char(c @ ('n' | 'N' | ']' | '[')) => {
                let mark = if matches!(c, 'n' | 'N') {
                    PatchLine::File
                } else {
                    PatchLine::Hunk
                };
                if let Some(row) = self.find(mark, matches!(c, 'n' | ']')) {
                    self.scroll = row.min(last);
                    self.cursor = Some(row);
                }
                return false;
            }
            _ => {}
        }
        self.cursor = None;
        self.scroll = self.scroll.min(last);
        false
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let keys = "↑↓ PgUp PgDn scroll · n/N file · ]/[ hunk · Esc close";
        let Some(body) = super::picker::frame(&self.title, keys, area, buf, theme) else {
            return;
        };
        let rows = usize::from(body.height);
        self.page.set(rows.max(1));
        let mut wrapped = self.wrapped.borrow_mut();
        if wrapped.0 != body.width || wrapped.1.is_empty() {
            let width = usize::from(body.width);
            wrapped.1 = self
                .lines
                .iter()
                .enumerate()
                .flat_map(|(i, (_, l))| wrap(l, width).into_iter().map(move |r| (i, r)))
                .collect();
            wrapped.0 = body.width;
        }
        self.rows.set(wrapped.1.len());
        let from = self.scroll.min(wrapped.1.len().saturating_sub(rows));
        for (i, (line, row)) in wrapped.1.iter().skip(from).take(rows).enumerate() {
            let style = match self.lines[*line].0 {
                Some(PatchLine::File) => theme.text().add_modifier(Modifier::BOLD),
                Some(PatchLine::Meta) => theme.muted(),
                Some(PatchLine::Added) => Style::default().fg(theme.colors.diff_add),
                Some(PatchLine::Removed) => Style::default().fg(theme.colors.diff_del),
                Some(PatchLine::Hunk) => theme.accent(),
                Some(PatchLine::Context) | None => theme.text(),
            };
            let y = body.y + u16::try_from(i).unwrap_or(0);
            buf.set_line(
                body.x,
                y,
                &Line::from(Span::styled(row.clone(), style)),
                body.width,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;

    fn draw(p: &Pager, w: u16, h: u16) -> String {
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        term.draw(|f| p.render(f.area(), f.buffer_mut(), &Theme::plain()))
            .unwrap();
        term.backend().to_string()
    }

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, crossterm::event::KeyModifiers::NONE)
    }

    /// What a diff's lines hide is shown, long lines wrap, and the end
    /// of the page is as far as it scrolls.
    #[test]
    fn nothing_is_hidden_cut_off_or_scrolled_past() {
        let long = format!("{}'danger': True", "x".repeat(100));
        let change = FileChange::new(
            "a.py",
            "/nowhere/a.py".into(),
            Some("alpha\r\nbeta\n"),
            &format!("alpha\nbeta\na\u{200B}b \u{202E}c\n{long}\n"),
        );
        let mut p = Pager::diff("Changes", &[change], &["… (cut at 2 MiB)".into()]);
        let screen = draw(&p, 60, 18);
        assert!(screen.contains("-alpha␍"), "{screen}");
        assert!(screen.contains("+a⟨U+200B⟩b ⟨U+202E⟩c"), "{screen}");
        assert!(
            screen.contains("'danger': T") && screen.contains("│ rue"),
            "wrapped, not cut: {screen}"
        );
        assert!(screen.contains("… (cut at 2 MiB)"), "{screen}");
        for _ in 0..5 {
            p.handle_key(key(KeyCode::End));
            p.handle_key(key(KeyCode::PageDown));
        }
        let end = draw(&p, 60, 18);
        assert!(
            end.contains("-alpha␍"),
            "a short page never scrolls away: {end}"
        );
    }

    /// n and N go from file to file, ] and [ from hunk to hunk.
    #[test]
    fn n_and_brackets_step_through_files_and_hunks() {
        // Three files, each changed at lines 5 and 25: two hunks each.
        let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 5\n", "line five\n")
            .replace("line 25\n", "line twenty-five\n");
        let changes: Vec<FileChange> = ["a.rs", "b.rs", "c.rs"]
            .iter()
            .map(|f| FileChange::new(f, format!("/nowhere/{f}").into(), Some(&old), &new))
            .collect();
        let mut p = Pager::diff("Changes", &changes, &[]);
        let top = |p: &Pager| draw(p, 60, 8).lines().nth(1).unwrap_or("").to_string();
        draw(&p, 60, 8);
        p.handle_key(key(KeyCode::Char('n')));
        assert!(top(&p).contains("diff --git a/b.rs"), "{}", top(&p));
        p.handle_key(key(KeyCode::Char(']')));
        assert!(top(&p).contains("@@ -2,7 +2,7 @@"), "{}", top(&p));
        p.handle_key(key(KeyCode::Char(']')));
        assert!(top(&p).contains("@@ -22,7 +22,7 @@"), "{}", top(&p));
        p.handle_key(key(KeyCode::Char('N')));
        assert!(top(&p).contains("diff --git a/b.rs"), "{}", top(&p));
        p.handle_key(key(KeyCode::Char('N')));
        assert!(top(&p).contains("diff --git a/a.rs"), "{}", top(&p));
        // In the last screenful the jumps go on, and back, in order.
        p.handle_key(key(KeyCode::End));
        let end = draw(&p, 60, 8);
        p.handle_key(key(KeyCode::Char(']')));
        p.handle_key(key(KeyCode::Char(']')));
        assert_eq!(draw(&p, 60, 8), end, "the last page stays");
        p.handle_key(key(KeyCode::Char('[')));
        p.handle_key(key(KeyCode::Char('[')));
        assert!(top(&p).contains("@@ -2,7 +2,7 @@"), "{}", top(&p));
    }
}
