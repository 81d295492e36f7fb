//! The composer: where the person writes.
//!
//! A multi-line editor (ratatui-textarea): Enter sends; Shift+Enter,
//! Alt+Enter or Ctrl+J insert a newline; bracketed paste keeps multi-line
//! text intact; Up on the first line and Down on the last walk the history
//! (the draft is kept); the usual editing keys work (Ctrl-A/E line start and
//! end, Ctrl-W word back, Ctrl-U to line start, Alt-B/F and Ctrl-←/→ by
//! word). A line starting with `/` opens the slash-command popup: Up/Down
//! choose, Tab completes, Enter runs.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use crate::theme::Theme;
use crate::width;

/// Most lines the composer grows to before it scrolls.
const MAX_VISIBLE_LINES: u16 = 8;

/// Under the cursor, one private-use character per column of the cluster
/// stands in for it while the editor draws: the first takes the cursor.
const STAND_IN: char = '\u{E000}';
const STAND_IN_REST: char = '\u{E001}';

/// Swaps the cluster of several `char`s under the cursor for stand-ins of
/// its width (characters no one types); the cluster to put back.
fn stand_in_at_cursor(ta: &mut TextArea<'_>) -> Option<String> {
    let (row, col) = (ta.cursor().0, ta.cursor().1);
    let line = ta.lines().get(row)?;
    let n = width::chars_after(line, col);
    if n < 2 {
        return None;
    }
    let cluster: String = line.chars().skip(col).take(n).collect();
    let cols = width::of(&cluster);
    if cols == 0 {
        return None;
    }
    ta.delete_str(n);
    ta.insert_char(STAND_IN);
    for _ in 1..cols {
        ta.insert_char(STAND_IN_REST);
    }
    for _ in 0..cols {
        ta.move_cursor(CursorMove::Back);
    }
    Some(cluster)
}

mod slash;

pub use slash::{COMMANDS, ComposerAction, SlashCommand, parse_command};
use slash::{EFFORTS, MODELS_SHOWN, MODES};

pub struct Composer {
    textarea: TextArea<'static>,
    history: Vec<String>,
    /// The text last submitted, for the app to remember across runs.
    submitted: Option<String>,
    /// Where in the history Up/Down are, and the draft they left.
    browsing: Option<(usize, String)>,
    popup_selected: usize,
    busy_hint: bool,
    /// A question waits above (Enter is the turn's, or waits for it).
    question: bool,
    /// The workspace, for `@path` completion, and its files (read on the
    /// first Tab after an `@`).
    workspace: Option<std::path::PathBuf>,
    files: Option<Vec<String>>,
    /// Files matching the `@` being typed, shown above the composer.
    matches: Vec<String>,
    /// The match Tab put in the message last (Tab again: the next one).
    match_selected: Option<usize>,
    /// The models the provider lists (empty: not known), and the model
    /// and approval mode in use.
    models: Vec<String>,
    /// The person's own commands (`/name`, from Markdown prompt files).
    custom: Vec<super::custom::Custom>,
    /// The MCP servers' prompts (`/server:prompt`, what it takes) and
    /// resources (`server:uri`, for `@`).
    mcp_prompts: Vec<(String, String)>,
    mcp_resources: Vec<String>,
    /// The skills found (`/NAME`, `/skills`).
    pub skills: super::skills::Listing,
    current_model: String,
    current_mode: String,
    /// The effort asked for (`default` when none).
    current_effort: String,
    /// The last wrapped row count: for the width and text (by hash) it
    /// was counted at, so a frame that changes neither lays out nothing.
    rows_cache: std::cell::Cell<Option<(u16, u64, usize)>>,
}

impl Composer {
    pub fn new(theme: &Theme) -> Self {
        let mut textarea = TextArea::default();
        textarea.set_wrap_mode(WrapMode::WordOrGlyph);
        textarea.set_cursor_line_style(ratatui::style::Style::default());
        textarea.set_placeholder_text("Ask Lathe to read, change or run code…  (/ for commands)");
        textarea.set_placeholder_style(theme.muted());
        textarea.set_style(theme.text());
        Self {
            textarea,
            history: Vec::new(),
            submitted: None,
            browsing: None,
            popup_selected: 0,
            busy_hint: false,
            question: false,
            workspace: None,
            files: None,
            matches: Vec::new(),
            match_selected: None,
            models: Vec::new(),
            custom: Vec::new(),
            mcp_prompts: Vec::new(),
            mcp_resources: Vec::new(),
            skills: super::skills::Listing::default(),
            current_model: String::new(),
            current_mode: String::new(),
            current_effort: "default".into(),
            rows_cache: std::cell::Cell::new(None),
        }
    }

    pub fn text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.textarea.is_empty()
    }

    pub fn clear(&mut self) {
        self.set_text("");
    }

    pub fn set_text(&mut self, text: &str) {
        self.textarea.select_all();
        self.textarea.cut();
        self.textarea.insert_str(text);
        self.popup_selected = 0;
    }

    /// Shows that a question waits above: what Enter does then.
    pub fn set_question(&mut self, waiting: bool) {
        self.question = waiting;
    }

    /// Shows that a turn is running (Enter sends to it, Tab queues).
    pub fn set_busy(&mut self, busy: bool) {
        self.busy_hint = busy;
    }

    pub fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        self.textarea.insert_str(text);
    }

    /// What the popup offers for what is typed: commands, or the
    /// argument of `/approvals ` and `/model ` (the current one marked).
    pub fn popup(&self) -> Vec<(&str, &str)> {
        self.popup_items()
            .into_iter()
            .map(|(name, help, _)| (name, help))
            .collect()
    }

    /// The popup's items, each with whether it is the current choice.
    fn popup_items(&self) -> Vec<(&str, &str, bool)> {
        let lines = self.textarea.lines();
        let Some(first) = lines.first() else {
            return Vec::new();
        };
        if lines.len() > 1 || !first.starts_with('/') {
            return Vec::new();
        }
        if let Some((cmd, part)) = self.argument_typed() {
            if part.contains(char::is_whitespace) {
                return Vec::new();
            }
            return match cmd {
                // Those that begin with what is typed first, then those
                // that hold it (`auto` offers auto-edit and full-auto).
                "/approvals" => MODES
                    .iter()
                    .filter(|(m, _)| m.starts_with(part))
                    .chain(
                        MODES
                            .iter()
                            .filter(|(m, _)| !m.starts_with(part) && m.contains(part)),
                    )
                    .map(|(m, help)| (*m, *help, *m == self.current_mode))
                    .collect(),
                "/effort" => EFFORTS
                    .iter()
                    .filter(|(e, _)| e.starts_with(part))
                    .map(|(e, help)| (*e, *help, *e == self.current_effort))
                    .collect(),
                _ => {
                    // Those that begin with what is typed first, then
                    // those that hold it.
                    let part = part.to_ascii_lowercase();
                    let lower = |m: &String| m.to_ascii_lowercase();
                    let begins = self.models.iter().filter(|m| lower(m).starts_with(&part));
                    let holds = self
                        .models
                        .iter()
                        .filter(|m| !lower(m).starts_with(&part) && lower(m).contains(&part));
                    begins
                        .chain(holds)
                        .take(MODELS_SHOWN)
                        .map(|m| {
                            let current = *m == self.current_model;
                            (m.as_str(), if current { "in use" } else { "" }, current)
                        })
                        .collect()
                }
            };
        }
        if first.contains(char::is_whitespace) {
            return Vec::new();
        }
        COMMANDS
            .iter()
            .map(|(c, help)| (*c, *help))
            .chain(
                self.custom
                    .iter()
                    .map(|c| (c.name.as_str(), c.about.as_str())),
            )
            .chain(
                self.skills
                    .commands()
                    .iter()
                    .filter(|(c, _)| !self.custom.iter().any(|m| m.name == *c))
                    .map(|(c, d)| (c.as_str(), d.as_str())),
            )
            .chain(
                self.mcp_prompts
                    .iter()
                    .map(|(c, d)| (c.as_str(), d.as_str())),
            )
            .filter(|(c, _)| c.starts_with(first.as_str()))
            .map(|(c, help)| (c, help, false))
            .collect()
    }

    /// The MCP servers' prompts (`/server:prompt`, with what each is and
    /// takes) and resources (`server:uri`), as their statuses say.
    pub fn set_mcp(&mut self, prompts: Vec<(String, String)>, resources: Vec<String>) {
        self.mcp_prompts = prompts;
        self.mcp_resources = resources;
    }

    /// The person's own commands, for the popup and to send.
    pub fn set_custom(&mut self, custom: Vec<super::custom::Custom>) {
        self.custom = custom;
    }

    /// More commands (a workspace's, once trusted); the person's own keep
    /// their names.
    pub fn add_custom(&mut self, more: Vec<super::custom::Custom>) {
        for c in more {
            if !self.custom.iter().any(|m| m.name == c.name) {
                self.custom.push(c);
            }
        }
        self.custom.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// `/approvals part` or `/model part`: the command whose argument is
    /// being typed, and the part typed so far.
    fn argument_typed(&self) -> Option<(&'static str, &str)> {
        let first = self.textarea.lines().first()?;
        ["/approvals", "/model", "/effort"]
            .into_iter()
            .find_map(|cmd| {
                first
                    .strip_prefix(cmd)
                    .and_then(|rest| rest.strip_prefix(' '))
                    .map(|part| (cmd, part))
            })
    }

    /// The models the provider lists, for `/model ` (none: not known).
    pub fn set_models(&mut self, models: Vec<String>) {
        self.models = models;
    }

    /// The model and the approval mode in use, marked in the popup.
    pub fn set_current(&mut self, model: &str, mode: &str) {
        model.clone_into(&mut self.current_model);
        mode.clone_into(&mut self.current_mode);
    }

    /// The effort in use (`default`), marked in the popup.
    pub fn set_effort(&mut self, effort: &str) {
        effort.clone_into(&mut self.current_effort);
    }

    /// The workspace whose files `@` completes.
    pub fn set_workspace(&mut self, root: std::path::PathBuf) {
        self.workspace = Some(root);
        self.files = None;
    }

    /// Whether Tab is the composer's own: a popup shows, or an `@path`
    /// is being written.
    pub fn wants_tab(&self) -> bool {
        if !self.popup().is_empty() || !self.matches.is_empty() {
            return true;
        }
        let at = self.textarea.cursor();
        let Some(line) = self.textarea.lines().get(at.0) else {
            return false;
        };
        let before: String = line.chars().take(at.1).collect();
        before
            .rsplit(char::is_whitespace)
            .next()
            .is_some_and(|w| w.starts_with('@'))
    }

    /// Tab after `@part`: the workspace file it begins (as much as all
    /// matches share), the matches shown when several.
    fn complete_path(&mut self) -> bool {
        let at = self.textarea.cursor();
        let (row, col) = (at.0, at.1);
        let Some(line) = self.textarea.lines().get(row) else {
            return false;
        };
        let before: String = line.chars().take(col).collect();
        let word = before.rsplit(char::is_whitespace).next().unwrap_or("");
        let Some(prefix) = word.strip_prefix('@') else {
            return false;
        };
        let prefix = prefix.to_string();
        let typed = word.chars().count();
        // Tab again, with the matches shown: the next one, in turn.
        if self.matches.len() > 1 {
            let next = match self.matches.iter().position(|m| *m == prefix) {
                Some(i) => (i + 1) % self.matches.len(),
                None => 0,
            };
            let pick = format!("@{}", self.matches[next]);
            for _ in 0..typed {
                self.textarea.delete_char();
            }
            self.textarea.insert_str(pick);
            self.match_selected = Some(next);
            return true;
        }
        self.match_selected = None;
        if self.files.is_none() {
            self.files = self.workspace.as_deref().map(workspace_files);
        }
        let found: Vec<String> = self
            .files
            .iter()
            .flatten()
            .chain(&self.mcp_resources)
            .filter(|f| f.starts_with(&prefix))
            .take(200)
            .cloned()
            .collect();
        let Some(first) = found.first() else {
            self.matches.clear();
            return true;
        };
        let common = found.iter().fold(first.clone(), |acc, f| {
            acc.chars()
                .zip(f.chars())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a)
                .collect()
        });
        let replacement = if found.len() == 1 {
            format!("@{common} ")
        } else {
            format!("@{common}")
        };
        for _ in 0..typed {
            self.textarea.delete_char();
        }
        self.textarea.insert_str(replacement);
        self.matches = if found.len() > 1 {
            found.into_iter().take(8).collect()
        } else {
            Vec::new()
        };
        true
    }

    /// The files `@` offers.
    #[cfg(any(test, feature = "internals"))]
    pub fn path_matches(&self) -> &[String] {
        &self.matches
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> ComposerAction {
        if key.code == KeyCode::Tab && key.modifiers.is_empty() && self.popup().is_empty() {
            if self.complete_path() {
                return ComposerAction::None;
            }
        } else {
            self.matches.clear();
            self.match_selected = None;
        }
        let popup: Vec<(String, String)> = self
            .popup()
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let argument = self.argument_typed().map(|(cmd, _)| cmd);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        // A command recalled from history is not being typed: Up and Down
        // go on through the history, not into the popup.
        if !popup.is_empty() && self.browsing.is_none() {
            let sel = self.popup_selected.min(popup.len() - 1);
            match key.code {
                KeyCode::Up => {
                    self.popup_selected = sel.checked_sub(1).unwrap_or(popup.len() - 1);
                    return ComposerAction::None;
                }
                KeyCode::Down => {
                    self.popup_selected = (sel + 1) % popup.len();
                    return ComposerAction::None;
                }
                KeyCode::Tab if argument.is_some() => {
                    let cmd = argument.unwrap_or_default();
                    self.set_text(&format!("{cmd} {}", popup[sel].0));
                    return ComposerAction::None;
                }
                KeyCode::Enter if !shift && !alt && argument.is_some() => {
                    let cmd = argument.unwrap_or_default();
                    self.set_text(&format!("{cmd} {}", popup[sel].0));
                    return self.submit();
                }
                KeyCode::Tab => {
                    self.set_text(&format!("{} ", popup[sel].0));
                    return ComposerAction::None;
                }
                KeyCode::Enter if !shift && !alt => {
                    let cmd = popup[sel].0.clone();
                    let takes_arg = matches!(cmd.as_str(), "/model" | "/approvals" | "/effort");
                    if takes_arg {
                        self.set_text(&format!("{cmd} "));
                        return ComposerAction::None;
                    }
                    self.set_text(&cmd);
                    return self.submit();
                }
                _ => {}
            }
        }
        match key.code {
            KeyCode::Enter if shift || alt => self.textarea.insert_newline(),
            KeyCode::Char('j') if ctrl => self.textarea.insert_newline(),
            KeyCode::Enter => return self.submit(),
            KeyCode::Char('u') if ctrl => {
                self.textarea.delete_line_by_head();
            }
            KeyCode::Left if ctrl => self.textarea.move_cursor(CursorMove::WordBack),
            KeyCode::Right if ctrl => self.textarea.move_cursor(CursorMove::WordForward),
            KeyCode::Up if !ctrl && !alt && self.textarea.cursor().0 == 0 => self.history_prev(),
            KeyCode::Down
                if !ctrl && !alt && self.textarea.cursor().0 + 1 >= self.textarea.lines().len() =>
            {
                self.history_next();
            }
            _ => {
                self.edit(key);
                self.popup_selected = 0;
            }
        }
        // Moving between lines of other widths can land inside a cluster;
        // typing may (a flag is typed as two code points).
        let vertical = matches!(
            key.code,
            KeyCode::Up | KeyCode::Down | KeyCode::PageUp | KeyCode::PageDown
        ) || (ctrl && matches!(key.code, KeyCode::Char('p' | 'n')));
        if vertical {
            self.snap_to_cluster();
        }
        ComposerAction::None
    }

    /// Passes `key` to the editor, a grapheme cluster at a time: the
    /// editor steps and deletes per `char`, which would move inside a flag
    /// or a family emoji and delete half of it.
    fn edit(&mut self, key: KeyEvent) {
        enum Step {
            Back,
            Forward,
            DeleteBack,
            DeleteForward,
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let step = match key.code {
            _ if alt => None,
            KeyCode::Left if !ctrl => Some(Step::Back),
            KeyCode::Char('b') if ctrl => Some(Step::Back),
            KeyCode::Right if !ctrl => Some(Step::Forward),
            KeyCode::Char('f') if ctrl => Some(Step::Forward),
            KeyCode::Backspace if !ctrl => Some(Step::DeleteBack),
            KeyCode::Char('h') if ctrl => Some(Step::DeleteBack),
            KeyCode::Delete if !ctrl => Some(Step::DeleteForward),
            KeyCode::Char('d') if ctrl => Some(Step::DeleteForward),
            _ => None,
        };
        let (row, col) = (self.textarea.cursor().0, self.textarea.cursor().1);
        let line = self.textarea.lines().get(row).cloned().unwrap_or_default();
        let n = match step {
            Some(Step::Back | Step::DeleteBack) => width::chars_before(&line, col),
            Some(Step::Forward | Step::DeleteForward) => width::chars_after(&line, col),
            None => 0,
        };
        if n <= 1 || self.textarea.is_selecting() {
            // One char (or a line end, or a selection): as the editor does.
            self.textarea.input(key);
            return;
        }
        match step {
            Some(Step::Back | Step::Forward) => {
                for _ in 0..n {
                    self.textarea.input(key);
                }
            }
            Some(Step::DeleteBack) => {
                for _ in 0..n {
                    self.textarea.move_cursor(CursorMove::Back);
                }
                self.textarea.delete_str(n);
            }
            Some(Step::DeleteForward) => {
                self.textarea.delete_str(n);
            }
            None => {
                self.textarea.input(key);
            }
        }
    }

    /// Moves the cursor out of a grapheme cluster it landed inside (by a
    /// move between lines of other widths, or a click) to the cluster's end.
    fn snap_to_cluster(&mut self) {
        let (row, col) = (self.textarea.cursor().0, self.textarea.cursor().1);
        let Some(line) = self.textarea.lines().get(row) else {
            return;
        };
        let at = width::boundary_at_or_after(line, col);
        if at != col {
            let (Ok(row), Ok(at)) = (u16::try_from(row), u16::try_from(at)) else {
                return;
            };
            self.textarea.move_cursor(CursorMove::Jump(row, at));
        }
    }

    fn submit(&mut self) -> ComposerAction {
        let text = self.text();
        if text.trim().is_empty() {
            return ComposerAction::None;
        }
        self.browsing = None;
        if self.history.last() != Some(&text) {
            self.history.push(text.clone());
            self.submitted = Some(text.clone());
        }
        self.clear();
        if text.starts_with('/') {
            match parse_command(&text) {
                Some(Ok(cmd)) => return ComposerAction::Command(cmd),
                Some(Err(why)) => {
                    // One of the person's own: its prompt is the message.
                    // One of the person's own: its prompt is the message;
                    // a skill: the core brings its instructions.
                    return match super::custom::expand(&self.custom, &text) {
                        Some(prompt) => ComposerAction::Submit(prompt),
                        None if self.skills.invokes(&text) => {
                            ComposerAction::Submit(text.trim().to_string())
                        }
                        // An MCP server's prompt: the core asks the server.
                        None if self
                            .mcp_prompts
                            .iter()
                            .any(|(c, _)| text.split_whitespace().next() == Some(c.as_str())) =>
                        {
                            ComposerAction::Submit(text.trim().to_string())
                        }
                        None => ComposerAction::Invalid(why),
                    };
                }
                None => {}
            }
        }
        ComposerAction::Submit(text.trim_start_matches(' ').to_string())
    }

    /// Up/Down walk `history` (oldest first) before this run's messages.
    pub fn set_history(&mut self, history: Vec<String>) {
        let mine = std::mem::replace(&mut self.history, history);
        self.history.extend(mine);
        self.browsing = None;
    }

    /// The text submitted last, once (a new entry of the history).
    pub fn take_submitted(&mut self) -> Option<String> {
        self.submitted.take()
    }

    fn history_prev(&mut self) {
        if self.history.is_empty() {
            return;
        }
        let (pos, draft) = match self.browsing.take() {
            Some((0, d)) => (0, d),
            Some((p, d)) => (p - 1, d),
            None => (self.history.len() - 1, self.text()),
        };
        let text = self.history[pos].clone();
        self.set_text(&text);
        self.textarea.move_cursor(CursorMove::Top);
        self.browsing = Some((pos, draft));
    }

    fn history_next(&mut self) {
        let Some((pos, draft)) = self.browsing.take() else {
            return;
        };
        if pos + 1 < self.history.len() {
            let text = self.history[pos + 1].clone();
            self.set_text(&text);
            self.browsing = Some((pos + 1, draft));
        } else {
            self.set_text(&draft);
        }
    }

    /// Rows the composer wants at `width` (borders included).
    pub fn height(&self, width: u16) -> u16 {
        let inner = width.saturating_sub(2).max(1);
        u16::try_from(self.rows(inner))
            .unwrap_or(u16::MAX)
            .clamp(1, MAX_VISIBLE_LINES)
            + 2
    }

    /// Rows the text takes at `inner` columns, wrapped as the editor wraps
    /// it (at words, so a count of columns would come out short and the
    /// first row would scroll out of sight).
    fn rows(&self, inner: u16) -> usize {
        let lines = self.textarea.lines();
        if lines.iter().all(|l| width::of(l) < usize::from(inner)) {
            return lines.len();
        }
        let key = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            lines.hash(&mut h);
            h.finish()
        };
        if let Some((w, k, rows)) = self.rows_cache.get()
            && (w, k) == (inner, key)
        {
            return rows;
        }
        // The editor lays out when it draws: draw a copy unseen and ask
        // where the end of the text lands.
        let mut ta = TextArea::new(lines.to_vec());
        ta.set_wrap_mode(WrapMode::WordOrGlyph);
        let area = Rect::new(0, 0, inner, MAX_VISIBLE_LINES + 1);
        let mut scratch = Buffer::empty(area);
        (&ta).render(area, &mut scratch);
        ta.move_cursor(CursorMove::Bottom);
        ta.move_cursor(CursorMove::End);
        let rows = ta.screen_cursor().row + 1;
        self.rows_cache.set(Some((inner, key, rows)));
        rows
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        // What Enter does, in each state.
        let title = match (self.busy_hint, self.question) {
            (true, true) if self.is_empty() => " working… (what you type here goes to the turn) ",
            (true, true) => " working… (Enter sends this to the turn, not to the question) ",
            (true, false) => " working… (Enter sends now, Tab queues, Esc stops) ",
            (false, true) if !self.is_empty() => {
                " message (kept; Enter sends it once the question is answered) "
            }
            (false, _) => " message ",
        };
        let border = if focused {
            theme.accent()
        } else {
            theme.border()
        };
        let mut ta = self.textarea.clone();
        ta.set_block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(border)
                .title(Span::styled(title, theme.muted())),
        );
        if !focused {
            ta.set_cursor_style(ratatui::style::Style::default());
        }
        // The editor draws its cursor over one `char`, which would split a
        // cluster of several (a flag, a family emoji) into pieces. Under
        // the cursor, such a cluster stands in as one character of the
        // same width while the editor draws, and goes back after.
        let stand_in = focused.then(|| stand_in_at_cursor(&mut ta)).flatten();
        ta.render(area, buf);
        if let Some(cluster) = stand_in {
            let (first, rest) = (STAND_IN.to_string(), STAND_IN_REST.to_string());
            for y in area.top()..area.bottom() {
                for x in area.left()..area.right() {
                    let cell = &mut buf[(x, y)];
                    if cell.symbol() == first {
                        cell.set_symbol(&cluster);
                    } else if cell.symbol() == rest {
                        // Covered by the cluster.
                        cell.set_symbol(" ");
                    }
                }
            }
        }
        self.render_popup(area, buf, theme);
    }

    fn render_popup(&self, composer: Rect, buf: &mut Buffer, theme: &Theme) {
        if !self.matches.is_empty() {
            return self.render_matches(composer, buf, theme);
        }
        let items = self.popup_items();
        if items.is_empty() {
            return;
        }
        let title = match self.argument_typed() {
            Some(("/approvals", _)) => " approval modes ",
            Some(("/effort", _)) => " how hard the model thinks ",
            Some(_) => " models (type to narrow) ",
            None => " commands ",
        };
        let name_width = items.iter().map(|(c, ..)| c.len()).max().unwrap_or(0);
        let help_width = items
            .iter()
            .map(|(_, h, _)| crate::width::of(h))
            .max()
            .unwrap_or(0);
        let size = (items.len(), 1 + name_width + 1 + help_width);
        let Some(area) = popup_frame(composer, size, title, buf, theme) else {
            return;
        };
        let sel = self.popup_selected.min(items.len() - 1);
        for (i, (cmd, help, current)) in items.iter().enumerate() {
            let row = area.y + 1 + u16::try_from(i).unwrap_or(0);
            if row >= area.bottom() - 1 {
                break;
            }
            let style = if i == sel {
                theme.selected()
            } else {
                theme.text()
            };
            let mark = if *current { "●" } else { " " };
            let line = Line::from(vec![
                Span::styled(
                    format!("{mark}{cmd:<name_width$}"),
                    style.add_modifier(ratatui::style::Modifier::BOLD),
                ),
                Span::styled(format!(" {help}"), style),
            ]);
            buf.set_line(area.x + 1, row, &line, area.width - 2);
        }
    }
}

impl Composer {
    fn render_matches(&self, composer: Rect, buf: &mut Buffer, theme: &Theme) {
        let title = " files (Tab: the next one; type more to narrow) ";
        let cols = self
            .matches
            .iter()
            .map(|f| crate::width::of(f))
            .max()
            .unwrap_or(0);
        let Some(area) = popup_frame(composer, (self.matches.len(), cols), title, buf, theme)
        else {
            return;
        };
        for (i, f) in self.matches.iter().enumerate() {
            let row = area.y + 1 + u16::try_from(i).unwrap_or(0);
            if row >= area.bottom() - 1 {
                break;
            }
            let shown = crate::components::cells::terminal_line(f);
            let style = if self.match_selected == Some(i) {
                theme.selected()
            } else {
                theme.text()
            };
            buf.set_line(
                area.x + 1,
                row,
                &Line::from(Span::styled(format!(" @{shown}"), style)),
                area.width - 2,
            );
        }
    }
}

/// The framed box of `rows` rows, `cols` columns of text wide (as wide
/// as the screen allows), above the composer; the rows it stands on are
/// cleared across the screen, so no text shows beside it. `None` without
/// room.
fn popup_frame(
    composer: Rect,
    (rows, cols): (usize, usize),
    title: &str,
    buf: &mut Buffer,
    theme: &Theme,
) -> Option<Rect> {
    let h = u16::try_from(rows).unwrap_or(0) + 2;
    let y = composer.y.saturating_sub(h);
    let wanted = cols.max(crate::width::of(title)) + 4;
    let w = u16::try_from(wanted)
        .unwrap_or(u16::MAX)
        .min(composer.width);
    let area = Rect::new(composer.x, y, w, h.min(composer.y));
    if area.height < 3 {
        return None;
    }
    Clear.render(Rect::new(composer.x, y, composer.width, area.height), buf);
    Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border())
        .title(Span::styled(title.to_string(), theme.muted()))
        .render(area, buf);
    Some(area)
}

/// The workspace's files as `@` completes them: relative paths, what
/// `.gitignore` ignores left out, at most 20,000.
fn workspace_files(root: &std::path::Path) -> Vec<String> {
    let mut out: Vec<String> = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            e.path()
                .strip_prefix(root)
                .ok()
                .and_then(|p| p.to_str())
                .map(str::to_string)
        })
        .take(20_000)
        .collect();
    out.sort();
    out
}

#[cfg(test)]
#[path = "composer_tests.rs"]
mod tests;
