//! The keys overlay: `?` shows the keys of where the person is (the
//! composer, an approval dialog, the tool-call log, the `/diff` page) as a
//! short table over the screen; Esc (or `?`, `q`) closes it, ↑↓ scroll a
//! table taller than the screen.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::theme::Theme;

/// Where the keys are wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    Composer,
    Dialog,
    Log,
    Diff,
}

impl Keys {
    fn title(self) -> &'static str {
        match self {
            Keys::Composer => " Keys · writing a message ",
            Keys::Dialog => " Keys · approving a call ",
            Keys::Log => " Keys · the tool-call log ",
            Keys::Diff => " Keys · the session's changes (/diff) ",
        }
    }

    /// The keys, and what each does here.
    pub fn table(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Keys::Composer => &[
                (
                    "Enter",
                    "send (while a turn runs: to it, read at its next step)",
                ),
                (
                    "Tab (while a turn runs)",
                    "queue the message for after the turn",
                ),
                (
                    "Esc (while a turn runs)",
                    "stop the step running; the work so far stays",
                ),
                ("Alt-Enter, Shift-Enter, Ctrl-J", "new line"),
                ("↑ ↓", "the messages you sent before"),
                ("/", "commands (/help lists them)"),
                ("@path", "attach a file (Tab completes)"),
                (
                    "Enter on an empty line",
                    "open or close the change or reads in view",
                ),
                ("PgUp PgDn, wheel", "scroll the conversation"),
                ("Ctrl-Home Ctrl-End", "its top, its end"),
                ("Ctrl-T", "the tool-call log"),
                ("Ctrl-O", "show or hide what the model thought"),
                ("Ctrl-G", "write the message in $EDITOR"),
                (
                    "Ctrl-S",
                    "the mouse to the terminal (select, copy) and back",
                ),
                ("Ctrl-C", "stop the turn; twice on an empty line: quit"),
                ("Ctrl-Z", "suspend (fg comes back)"),
                ("Ctrl-L", "redraw the screen"),
            ],
            Keys::Dialog => &[
                ("y", "yes, run it once"),
                ("a", "yes for this conversation (a grant; press a twice)"),
                ("n, Esc", "no"),
                ("e", "no, and say what to do instead"),
                ("E", "edit the change in $EDITOR, then y writes yours"),
                ("↑ ↓, j k", "choose a hunk (or scroll the call)"),
                ("x", "leave the chosen hunk out (again: put it back)"),
                ("PgUp PgDn", "scroll the conversation above"),
                ("Ctrl-End", "back to the conversation's end"),
                (
                    "Tab",
                    "with several calls waiting, the next one to the front",
                ),
                ("", "a key pressed the moment the dialog appears waits"),
                ("", "0.4 s: nothing is approved by typing ahead"),
            ],
            Keys::Log => &[
                ("↑ ↓, j k", "choose a call (the newest is chosen)"),
                ("Enter", "its arguments, result, verdict and timing"),
                ("/", "filter by tool or status (failed, denied, …)"),
                ("/diff, /cost, …", "a command typed here runs"),
                ("Home End, PgUp PgDn", "first, last, a page"),
                ("Esc, q, Ctrl-T", "close (from the details: back)"),
            ],
            Keys::Diff => &[
                ("↑ ↓", "choose a file in the summary, then scroll"),
                ("Enter", "go to the chosen file"),
                ("n N", "next, previous file"),
                ("] [", "next, previous hunk"),
                ("PgUp PgDn, Space", "a page"),
                ("Home", "back to the summary"),
                ("End", "the end"),
                ("Esc, q", "close"),
            ],
        }
    }
}

pub struct KeysHelp {
    keys: Keys,
    scroll: usize,
    /// Rows the last frame could not show.
    hidden: std::cell::Cell<usize>,
}

impl KeysHelp {
    pub fn new(keys: Keys) -> Self {
        Self {
            keys,
            scroll: 0,
            hidden: std::cell::Cell::new(0),
        }
    }

    /// Whether the key closes the overlay; every key stops here.
    pub fn handle_key(&mut self, key: KeyEvent) -> bool {
        match key.code {
            KeyCode::Esc | KeyCode::Char('q' | '?') | KeyCode::Enter => return true,
            KeyCode::Down | KeyCode::Char('j') => {
                self.scroll = (self.scroll + 1).min(self.hidden.get());
            }
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            _ => {}
        }
        false
    }

    /// A box in the middle of `area`, as wide as the table needs.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let table = self.keys.table();
        let key_w = table
            .iter()
            .map(|(k, _)| crate::width::of(k))
            .max()
            .unwrap_or(0);
        let what_w = table
            .iter()
            .map(|(_, w)| crate::width::of(w))
            .max()
            .unwrap_or(0);
        let want_w = u16::try_from(key_w + what_w + 7).unwrap_or(u16::MAX);
        let want_h = u16::try_from(table.len() + 3).unwrap_or(u16::MAX);
        let w = want_w.min(area.width);
        let h = want_h.min(area.height);
        let boxed = Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height - h) / 2,
            w,
            h,
        );
        // Its rows are its own, edge to edge: no line of the transcript
        // reads on beside it.
        ratatui::widgets::Widget::render(
            ratatui::widgets::Clear,
            Rect::new(area.x, boxed.y, area.width, h),
            buf,
        );
        let Some(body) = super::picker::frame(self.keys.title(), "Esc closes", boxed, buf, theme)
        else {
            return;
        };
        let rows = usize::from(body.height);
        self.hidden.set(table.len().saturating_sub(rows));
        let from = self.scroll.min(self.hidden.get());
        for (i, (k, what)) in table.iter().skip(from).take(rows).enumerate() {
            let key = format!("{k:<key_w$}", key_w = key_w);
            let line = Line::from(vec![
                Span::styled(key, theme.bold(theme.colors.accent)),
                Span::raw("  "),
                Span::styled(*what, theme.text()),
            ]);
            let y = body.y + u16::try_from(i).unwrap_or(0);
            buf.set_line(body.x, y, &line, body.width);
        }
    }
}

#[cfg(test)]
mod tests {
    /// docs/keys.md says what `?` shows, row for row.
    #[test]
    fn the_docs_list_the_same_keys() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/keys.md");
        let doc = std::fs::read_to_string(path).expect("docs/keys.md");
        for keys in [Keys::Composer, Keys::Dialog, Keys::Log, Keys::Diff] {
            for (k, what) in keys.table().iter().filter(|(k, _)| !k.is_empty()) {
                let what = what.replace("$EDITOR", "`$EDITOR`").replace("(fg", "(`fg`");
                let what = what.replace("(/help", "(`/help`");
                let row = format!("| `{k}` | {what} |");
                assert!(doc.contains(&row), "docs/keys.md lacks {row}");
            }
        }
    }

    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;

    fn draw(h: &KeysHelp, w: u16, rows: u16) -> String {
        let mut term = Terminal::new(TestBackend::new(w, rows)).unwrap();
        term.draw(|f| h.render(f.area(), f.buffer_mut(), &Theme::plain()))
            .unwrap();
        term.backend().to_string()
    }

    /// Each place has its own keys; the table is drawn in a box of its
    /// own (what is under it does not show through), scrolls when the
    /// screen is short, and Esc closes it.
    #[test]
    fn each_place_shows_its_keys_and_esc_closes() {
        let key = |c| KeyEvent::new(c, crossterm::event::KeyModifiers::NONE);
        insta::assert_snapshot!("keys_dialog", draw(&KeysHelp::new(Keys::Dialog), 80, 18));
        assert!(draw(&KeysHelp::new(Keys::Log), 80, 14).contains("filter by tool"));
        assert!(draw(&KeysHelp::new(Keys::Diff), 80, 14).contains("next, previous hunk"));
        let mut h = KeysHelp::new(Keys::Composer);
        let short = draw(&h, 80, 8);
        assert!(
            short.contains("Enter") && !short.contains("Ctrl-L"),
            "{short}"
        );
        for _ in 0..20 {
            h.handle_key(key(KeyCode::Down));
        }
        assert!(draw(&h, 80, 8).contains("Ctrl-L"));
        assert!(!h.handle_key(key(KeyCode::Char('y'))));
        assert!(h.handle_key(key(KeyCode::Esc)));
    }
}
