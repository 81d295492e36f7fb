//! A read-only page over the screen (`/diff`): a summary (`3 files
//! changed, +8 −10` and the files, one a line, ↑↓ to choose and Enter to
//! go to one), then the lines of the session's changes, drawn from their
//! hunks and coloured by what each line is, wrapped (nothing is cut off),
//! with what lines hide shown (`␍` for a CRLF ending, `⟨U+200B⟩` for an
//! invisible character), scrolled with ↑↓ (j/k), PgUp/PgDn (Space), Home
//! and End; Esc or q closes it.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::protocol::change::{FileChange, PatchLine};
use crate::theme::Theme;

/// What a line of the page is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    /// The summary's first line.
    Heading,
    /// A file in the summary's list.
    Listed,
    Patch(PatchLine),
}

#[derive(Debug)]
pub struct Pager {
    title: String,
    /// Each line made safe to show, with what it is.
    lines: Vec<(Kind, String)>,
    /// The summary's files: the line each is listed on, and the line its
    /// patch starts on.
    files: Vec<(usize, usize)>,
    /// The file chosen in the list, while the list is in use; and the
    /// last chosen (Home comes back to it).
    pick: Option<usize>,
    chosen: usize,
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
        let mut lines: Vec<(Kind, String)> =
            text.split('\n').map(|l| (Kind::Text, shown(l))).collect();
        while lines.last().is_some_and(|(_, l)| l.is_empty()) {
            lines.pop();
        }
        Self::of(title, lines, Vec::new())
    }

    /// A page of `changes`: the summary, then each file's patch in git's
    /// form, then the lines of `after` (what they leave out).
    pub fn diff(title: &str, changes: &[FileChange], after: &[String]) -> Self {
        let mut lines = summary(changes);
        let mut files = Vec::with_capacity(changes.len());
        for (i, change) in changes.iter().enumerate() {
            // A blank line between files.
            if i > 0 {
                lines.push((Kind::Text, String::new()));
            }
            files.push((1 + i, lines.len()));
            lines.extend(
                change
                    .patch_lines()
                    .into_iter()
                    .map(|(kind, text)| (Kind::Patch(kind), shown(&text))),
            );
        }
        lines.extend(after.iter().map(|l| (Kind::Text, shown(l))));
        Self::of(title, lines, files)
    }

    fn of(title: &str, lines: Vec<(Kind, String)>, files: Vec<(usize, usize)>) -> Self {
        Self {
            title: format!(" {title} "),
            lines,
            pick: (!files.is_empty()).then_some(0),
            chosen: 0,
            files,
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
                self.lines[*line].0 == Kind::Patch(mark) && (*r == 0 || wrapped.1[r - 1].0 != *line)
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

    /// The first row (at the last frame's width) of line `line`.
    fn row_of(&self, line: usize) -> usize {
        let wrapped = self.wrapped.borrow();
        if wrapped.1.is_empty() {
            return line;
        }
        wrapped.1.partition_point(|(l, _)| *l < line)
    }

    /// A key while the summary's list is in use: ↑↓ choose a file (↓
    /// past the last one goes on scrolling), Enter goes to its patch.
    /// `false`: the key is for the page.
    fn pick_key(&mut self, key: KeyEvent, last: usize) -> bool {
        let (Some(i), false) = (self.pick, self.files.is_empty()) else {
            return false;
        };
        let chosen = match key.code {
            KeyCode::Down | KeyCode::Char('j') if i + 1 < self.files.len() => i + 1,
            KeyCode::Up | KeyCode::Char('k') => i.saturating_sub(1),
            KeyCode::Enter => {
                self.chosen = i;
                let row = self.row_of(self.files[i].1);
                self.scroll = row.min(last);
                self.cursor = Some(row);
                self.pick = None;
                return true;
            }
            KeyCode::Esc | KeyCode::Char('q') => return false,
            _ => {
                self.pick = None;
                return false;
            }
        };
        self.pick = Some(chosen);
        // The chosen file in view.
        let row = self.row_of(self.files[chosen].0);
        let page = self.page.get().max(1);
        if row < self.scroll {
            self.scroll = row;
        } else if row >= self.scroll + page {
            self.scroll = (row + 1 - page).min(last);
        }
        true
    }

    /// Whether the key closes the page.
    pub fn handle_key(&mut self, key: KeyEvent) -> bool {
        let page = self.page.get().max(1);
        // The last screenful is as far as it goes.
        let last = self.rows.get().saturating_sub(page);
        if self.pick_key(key, last) {
            return false;
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return true,
            // Back at the top, ↑ goes into the list, at its last file.
            KeyCode::Up | KeyCode::Char('k') if self.scroll == 0 && !self.files.is_empty() => {
                self.pick = Some(self.files.len() - 1);
                return false;
            }
            KeyCode::Home if !self.files.is_empty() => {
                self.scroll = 0;
                self.pick = Some(self.chosen.min(self.files.len() - 1));
                return false;
            }
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
        let keys = if self.pick.is_some() {
            "↑↓ choose a file · Enter go to it · ? keys · Esc close"
        } else if self.files.is_empty() {
            "↑↓ PgUp PgDn scroll · Esc close"
        } else {
            "↑↓ PgUp PgDn scroll · n/N file · ]/[ hunk · Home files · ? keys · Esc close"
        };
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
            let picked = self.pick.and_then(|p| self.files.get(p)).map(|f| f.0) == Some(*line);
            let style = match self.lines[*line].0 {
                Kind::Listed if picked => theme.selected(),
                Kind::Heading | Kind::Patch(PatchLine::File) => {
                    theme.text().add_modifier(Modifier::BOLD)
                }
                Kind::Patch(PatchLine::Meta) => theme.muted(),
                Kind::Patch(PatchLine::Added) => Style::default().fg(theme.colors.diff_add),
                Kind::Patch(PatchLine::Removed) => Style::default().fg(theme.colors.diff_del),
                Kind::Patch(PatchLine::Hunk) => theme.accent(),
                Kind::Listed | Kind::Patch(PatchLine::Context) | Kind::Text => theme.text(),
            };
            let y = body.y + u16::try_from(i).unwrap_or(0);
            buf.set_line(
                body.x,
                y,
                &Line::from(Span::styled(row.clone(), style)),
                body.width,
            );
            // The file chosen, or where the last jump went (which the
            // last screenful may show below its top): marked in the margin.
            let first_row = from + i == 0 || wrapped.1[from + i - 1].0 != *line;
            if (picked || self.cursor == Some(from + i)) && first_row && body.x > area.x {
                buf.set_string(body.x - 1, y, "›", theme.accent());
            }
        }
    }
}

/// The summary of `changes`: `3 files changed, +8 −10`, each file with
/// its counts and what happens to it, then a blank line.
fn summary(changes: &[FileChange]) -> Vec<(Kind, String)> {
    use crate::protocol::change::ChangeKind;
    if changes.is_empty() {
        return Vec::new();
    }
    let counts: Vec<(usize, usize)> = changes.iter().map(FileChange::counts).collect();
    let (added, removed) = counts
        .iter()
        .fold((0, 0), |(a, r), (ca, cr)| (a + ca, r + cr));
    let files = match changes.len() {
        1 => "1 file changed".to_string(),
        n => format!("{n} files changed"),
    };
    let mut lines = vec![(Kind::Heading, format!("{files}, +{added} −{removed}"))];
    let names: Vec<String> = changes.iter().map(|c| shown(&c.path)).collect();
    let width = names
        .iter()
        .map(|n| crate::width::of(n))
        .max()
        .unwrap_or(0)
        .min(60);
    for ((change, name), (a, r)) in changes.iter().zip(&names).zip(&counts) {
        let what = match (change.kind, &change.from) {
            (ChangeKind::Create, _) => "  new".to_string(),
            (ChangeKind::Delete, _) => "  deleted".to_string(),
            (ChangeKind::Rename, Some(from)) => format!("  moved from {}", shown(from)),
            _ => String::new(),
        };
        let pad = " ".repeat(width.saturating_sub(crate::width::of(name)));
        lines.push((Kind::Listed, format!(" {name}{pad}  +{a} −{r}{what}")));
    }
    lines.push((Kind::Text, String::new()));
    lines
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
        let screen = draw(&p, 60, 22);
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
        let end = draw(&p, 60, 22);
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
        assert!(top(&p).contains("diff --git a/a.rs"), "{}", top(&p));
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

    /// The page opens on a summary: how many files changed and by how
    /// much, each file with its counts and what happened to it; ↑↓
    /// choose a file and Enter goes to its patch.
    #[test]
    fn the_summary_counts_and_lists_the_files_and_enter_goes_to_one() {
        let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 5\n", "line five\n")
            .replace("line 9\n", "");
        let changes = vec![
            FileChange::new("src/app.py", "/nowhere/a".into(), Some(&old), &new),
            FileChange::new("tests/test_new.py", "/nowhere/t".into(), None, "a\nb\n"),
            FileChange::delete("old.py", "/nowhere/o".into(), "x\ny\nz\n"),
        ];
        let mut p = Pager::diff("Changes", &changes, &[]);
        let screen = draw(&p, 60, 12);
        insta::assert_snapshot!("pager_diff_summary", screen);
        assert!(screen.contains("3 files changed, +3 −5"), "{screen}");
        assert!(
            screen.contains("│› src/app.py"),
            "the first file is chosen: {screen}"
        );
        p.handle_key(key(KeyCode::Down));
        let screen = draw(&p, 60, 12);
        assert!(screen.contains("│› tests/test_new.py"), "{screen}");
        p.handle_key(key(KeyCode::Enter));
        let top = draw(&p, 60, 12).lines().nth(1).unwrap_or("").to_string();
        assert!(top.contains("│›diff --git a/tests/test_new.py"), "{top}");
        // Home is the list again, at the file last gone to; ↑ from there.
        p.handle_key(key(KeyCode::Home));
        assert!(draw(&p, 60, 12).contains("│› tests/test_new.py"));
        p.handle_key(key(KeyCode::Up));
        assert!(draw(&p, 60, 12).contains("│› src/app.py"));
        // ↓ past the last file reads on.
        for _ in 0..3 {
            p.handle_key(key(KeyCode::Down));
        }
        let screen = draw(&p, 60, 12);
        assert!(
            !screen.contains('›') && !screen.contains("3 files changed"),
            "{screen}"
        );
        // A page of text has no list.
        let text = Pager::new("Notes", "one\ntwo");
        assert!(!draw(&text, 40, 6).contains("Home files"));
    }
}
