//! The tool-call log: every call of the session, updating live.
//!
//! A full-screen list (time since the session started, tool, short
//! arguments, guardrail and approval verdict, status, duration, bytes,
//! whether the result was cut). Up/Down select, Enter opens a call's full
//! arguments and result (pretty JSON, scrollable), `/` filters by tool name
//! or status, Esc goes back.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};
use serde_json::Value;

use super::cells::{human_bytes, human_duration, key_argument};
use crate::protocol::{
    AgentEvent, ApprovalDecision, DecisionSource, GuardrailOutcome, ResultMetadata, ToolStatus,
};
use crate::theme::Theme;
use crate::width::fit;
use crate::wrap::{Logical, rows, wrap};

#[derive(Debug, Clone, PartialEq)]
pub struct LogEntry {
    pub call_id: String,
    /// When the call started, since the session did.
    pub at: Duration,
    pub tool: String,
    /// What kind of work the tool does (as the core says).
    pub kind: crate::protocol::ToolKind,
    pub arguments: Value,
    pub guardrail: Option<(GuardrailOutcome, Option<String>)>,
    /// What the call does, as the guardrail judged it.
    pub operations: Vec<String>,
    /// What needed approval, when something did.
    pub needs: Vec<String>,
    pub approval: Option<String>,
    /// How the person decided, when they did: "y, 2.1 s after it showed".
    pub decided: Option<String>,
    pub status: Option<ToolStatus>,
    /// How a command exited.
    pub exit_code: Option<i32>,
    pub metadata: ResultMetadata,
    pub content: Option<Value>,
    /// What a file change wrote, as a unified diff.
    pub change: Option<crate::protocol::change::FileChange>,
    /// The `task` call a subagent made it for (its name).
    pub parent: Option<String>,
    /// That `task` call's id.
    pub parent_id: Option<String>,
    /// What the judge said of it, when it was asked.
    pub judged: Option<String>,
    /// From before this run (a resumed session): its time is not this
    /// run's.
    pub earlier: bool,
    /// Bumped on every change, so the detail view knows to lay out again.
    rev: u64,
}

impl LogEntry {
    /// When it started, as the log says it.
    fn when(&self) -> String {
        if self.earlier {
            "earlier".into()
        } else {
            fmt_at(self.at)
        }
    }

    /// The call's outcome in a word; a command that failed says how
    /// (`✗ exit 1`), though the call itself worked.
    fn status_word(&self) -> std::borrow::Cow<'static, str> {
        match (self.status, self.exit_code) {
            (Some(ToolStatus::Ok), Some(code)) if code != 0 => format!("✗ exit {code}").into(),
            (Some(ToolStatus::Ok), Some(_)) => "exit 0".into(),
            (None, _) if self.approval.as_deref() == Some("asked") => "waiting".into(),
            (None, _) => "running".into(),
            (Some(ToolStatus::Ok), None) => "ok".into(),
            (Some(ToolStatus::Error), _) => "error".into(),
            (Some(ToolStatus::Denied), _) => "denied".into(),
        }
    }

    /// Whether the call failed, a command by its exit code too.
    fn failed(&self) -> bool {
        self.status == Some(ToolStatus::Error) || self.exit_code.is_some_and(|c| c != 0)
    }

    fn verdict(&self) -> String {
        let guard = match &self.guardrail {
            Some((GuardrailOutcome::Allow, _)) | None => "allow",
            Some((GuardrailOutcome::Modify, _)) => "modify",
            Some((GuardrailOutcome::Deny, _)) => "deny",
        };
        // What decided the call, in words: the guardrail only when it did
        // more than allow, then the approval (or `auto`).
        match (&self.approval, guard) {
            // The model's question: the person answered it.
            (None, "allow")
                if self.kind == crate::protocol::ToolKind::Ask && self.status.is_some() =>
            {
                "you answered".to_string()
            }
            (None, "allow") if self.kind == crate::protocol::ToolKind::Ask => {
                "asks you".to_string()
            }
            (Some(a), "allow") => a.clone(),
            (Some(a), g) => format!("{g}, {a}"),
            (None, "allow") if self.guardrail.is_some() => "auto".to_string(),
            (None, "modify") => "modify, auto".to_string(),
            (None, g) => g.to_string(),
        }
    }

    fn matches(&self, filter: &str) -> bool {
        let f = filter.to_lowercase();
        f.is_empty()
            || self.tool.to_lowercase().contains(&f)
            || self.status_word().contains(&f)
            || (self.failed() && "failed".contains(&f))
    }
}

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogAction {
    None,
    Close,
    /// A `/command` typed in the log: the log closes and the command runs.
    Command(crate::components::composer::SlashCommand),
    /// `?`: the log's keys.
    Keys,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum View {
    #[default]
    List,
    Detail {
        scroll: usize,
    },
}

/// Every call of the session, as the agent's events tell it: what the
/// app feeds, open or not, and the log's view borrows.
pub struct CallLog {
    entries: Vec<LogEntry>,
    by_id: HashMap<String, usize>,
    started: Instant,
}

/// The log as the person looks at it: the call chosen, list or detail,
/// the filter. Over a [`CallLog`] it borrows; made anew each time the log
/// opens (following the newest call).
#[derive(Default)]
pub struct ToolLog {
    /// Index into the filtered list; `None` follows the newest call.
    selected: Option<usize>,
    view: View,
    filter: String,
    filtering: bool,
    /// The detail view's lines, made once per entry change, and their
    /// rows at a width.
    detail: RefCell<Option<Detail>>,
    /// How far the last frame of the detail could scroll.
    detail_max: Cell<usize>,
}

struct Detail {
    index: usize,
    rev: u64,
    logical: Vec<Logical>,
    width: Option<u16>,
    ends: Vec<usize>,
}

impl CallLog {
    pub fn new(started: Instant) -> Self {
        Self {
            entries: Vec::new(),
            by_id: HashMap::new(),
            started,
        }
    }

    #[cfg(any(test, feature = "internals"))]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    #[cfg(any(test, feature = "internals"))]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The calls of an earlier run (a resumed session's journal), as they
    /// were: before every call of this one.
    pub fn replay(&mut self, events: &[AgentEvent]) {
        let from = self.entries.len();
        for ev in events {
            self.on_event(ev, self.started);
        }
        for e in &mut self.entries[from..] {
            e.earlier = true;
        }
    }

    /// Records how the person answered the dialog for `call_id`.
    pub fn decided(&mut self, call_id: &str, how: &str) {
        if let Some(e) = self.entry(call_id) {
            e.decided = Some(how.to_string());
        }
    }

    /// A `task` call by what it is for, with its id.
    fn task_name(&self, call_id: &str) -> String {
        let what = self
            .by_id
            .get(call_id)
            .and_then(|i| self.entries.get(*i))
            .map(|e| key_argument(&e.arguments))
            .unwrap_or_default();
        if what.is_empty() {
            call_id.to_string()
        } else {
            format!("\"{what}\" ({call_id})")
        }
    }

    fn entry(&mut self, call_id: &str) -> Option<&mut LogEntry> {
        let i = *self.by_id.get(call_id)?;
        let e = self.entries.get_mut(i)?;
        e.rev += 1;
        Some(e)
    }

    /// Updates the log from an agent event.
    /// A call starts: its row, a subagent's under its task (after the
    /// task's other calls), not after whatever came since.
    fn started_call(
        &mut self,
        call_id: &str,
        (tool, kind): (&str, crate::protocol::ToolKind),
        arguments: &Value,
        parent: Option<&String>,
        now: Instant,
    ) {
        // A subagent's call stands under its task (after the
        // task's other calls), not after whatever came since.
        let at = parent
            .and_then(|p| {
                self.entries
                    .iter()
                    .rposition(|e| e.call_id == *p || e.parent_id.as_deref() == Some(p.as_str()))
            })
            .map_or(self.entries.len(), |i| i + 1);
        let parent_name = parent.map(|p| self.task_name(p));
        self.entries.insert(
            at,
            LogEntry {
                call_id: call_id.to_string(),
                at: now.saturating_duration_since(self.started),
                tool: tool.to_string(),
                kind,
                arguments: arguments.clone(),
                guardrail: None,
                operations: Vec::new(),
                needs: Vec::new(),
                approval: None,
                decided: None,
                status: None,
                exit_code: None,
                metadata: ResultMetadata::default(),
                content: None,
                change: None,
                parent: parent_name,
                parent_id: parent.cloned(),
                judged: None,
                earlier: false,
                rev: 0,
            },
        );
        if at + 1 == self.entries.len() {
            self.by_id.insert(call_id.to_string(), at);
        } else {
            self.by_id = self
                .entries
                .iter()
                .enumerate()
                .map(|(i, e)| (e.call_id.clone(), i))
                .collect();
        }
    }

    pub fn on_event(&mut self, ev: &AgentEvent, now: Instant) {
        match ev {
            AgentEvent::ToolCallStarted {
                call_id,
                tool,
                arguments,
                kind,
                parent,
                ..
            } => self.started_call(
                call_id,
                (tool, kind.unwrap_or(crate::protocol::ToolKind::Other)),
                arguments,
                parent.as_ref(),
                now,
            ),
            AgentEvent::Judged {
                call_id,
                model,
                allowed,
                flagged,
                reason,
                usage,
            } => {
                if let Some(e) = self.entry(call_id) {
                    e.judged = Some(format!(
                        "{} ({model}, flagged as {flagged}): {reason}{}",
                        if *allowed {
                            "allowed"
                        } else {
                            "asked the person"
                        },
                        usage
                            .cost_usd
                            .map(|c| format!(" · ${c:.4}"))
                            .unwrap_or_default()
                    ));
                }
            }
            AgentEvent::GuardrailVerdict {
                call_id,
                verdict,
                reason,
                operations,
                ..
            } => {
                if let Some(e) = self.entry(call_id) {
                    e.guardrail = Some((*verdict, reason.clone()));
                    e.operations = operations.iter().flat_map(|op| op.describe()).collect();
                }
            }
            AgentEvent::ApprovalRequested(request) => {
                if let Some(e) = self.entry(&request.call_id) {
                    e.approval = Some("asked".into());
                    e.needs = request
                        .needs
                        .iter()
                        .map(|n| format!("{} — {}", n.what, n.reason))
                        .collect();
                }
            }
            AgentEvent::ApprovalDecided {
                call_id,
                decision,
                source,
                ..
            } => {
                let word = match (decision, source) {
                    (_, DecisionSource::Grant) => "by grant",
                    (ApprovalDecision::ApproveOnce, _) => "approved once",
                    (ApprovalDecision::ApproveHunks { .. }, _) => "approved in part",
                    (ApprovalDecision::ApproveEdited { .. }, _) => "edited + approved",
                    (ApprovalDecision::ApproveForConversation, _) => "approved + grant",
                    (ApprovalDecision::Deny { .. }, DecisionSource::User) => "denied by you",
                    (ApprovalDecision::Deny { .. }, _) => "denied by mode",
                };
                if let Some(e) = self.entry(call_id) {
                    e.approval = Some(word.into());
                }
            }
            AgentEvent::ToolCallFinished {
                call_id,
                status,
                exit_code,
                content,
                metadata,
                change,
                ..
            } => {
                if let Some(e) = self.entry(call_id) {
                    e.status = Some(*status);
                    e.exit_code = *exit_code;
                    e.metadata = metadata.clone();
                    e.content = Some(content.clone());
                    e.change = change.as_deref().cloned();
                }
            }
            _ => {}
        }
    }
}

impl ToolLog {
    /// The command the filter being typed names, if it names one: `/diff`
    /// typed in the log runs `/diff` rather than filtering by "diff".
    fn typed_command(&self) -> Option<crate::components::composer::SlashCommand> {
        use crate::components::composer::{COMMANDS, parse_command};
        let name = self.filter.split_whitespace().next()?;
        // Named in full (`/q` is a filter for "q", not a way out).
        let named = COMMANDS
            .iter()
            .any(|(c, _)| c.strip_prefix('/') == Some(name));
        if !self.filtering || !named {
            return None;
        }
        parse_command(&format!("/{}", self.filter))?.ok()
    }

    fn visible(&self, calls: &CallLog) -> Vec<usize> {
        (0..calls.entries.len())
            .filter(|&i| calls.entries[i].matches(&self.filter))
            .collect()
    }

    fn selected_index(&self, visible: &[usize]) -> Option<usize> {
        if visible.is_empty() {
            return None;
        }
        Some(
            self.selected
                .unwrap_or(visible.len() - 1)
                .min(visible.len() - 1),
        )
    }

    pub fn handle_key(&mut self, key: KeyEvent, calls: &CallLog) -> LogAction {
        if self.filtering {
            match key.code {
                KeyCode::Esc => {
                    self.filter.clear();
                    self.filtering = false;
                }
                KeyCode::Enter => {
                    if let Some(command) = self.typed_command() {
                        self.filter.clear();
                        self.filtering = false;
                        return LogAction::Command(command);
                    }
                    self.filtering = false;
                }
                KeyCode::Backspace => {
                    self.filter.pop();
                }
                KeyCode::Char(c) => self.filter.push(c),
                _ => {}
            }
            self.selected = None;
            return LogAction::None;
        }
        if key.code == KeyCode::Char('?') {
            return LogAction::Keys;
        }
        let visible = self.visible(calls);
        let sel = self.selected_index(&visible);
        match (self.view, key.code) {
            (View::Detail { .. }, KeyCode::Esc | KeyCode::Backspace | KeyCode::Char('q')) => {
                self.view = View::List;
            }
            (View::Detail { scroll }, KeyCode::Down | KeyCode::Char('j')) => {
                self.view = View::Detail {
                    scroll: (scroll + 1).min(self.detail_max.get()),
                };
            }
            (View::Detail { scroll }, KeyCode::Up | KeyCode::Char('k')) => {
                self.view = View::Detail {
                    scroll: scroll.saturating_sub(1),
                };
            }
            (View::Detail { scroll }, KeyCode::PageDown | KeyCode::Char(' ')) => {
                self.view = View::Detail {
                    scroll: (scroll + 20).min(self.detail_max.get()),
                };
            }
            (View::Detail { scroll }, KeyCode::PageUp) => {
                self.view = View::Detail {
                    scroll: scroll.saturating_sub(20),
                };
            }
            (View::Detail { .. }, KeyCode::Home) => self.view = View::Detail { scroll: 0 },
            (View::Detail { .. }, KeyCode::End) => {
                self.view = View::Detail {
                    scroll: self.detail_max.get(),
                };
            }
            (View::Detail { .. }, _) => {}
            // A filtered list closes as the whole one does: the filter
            // is a way of looking, not a place to back out of.
            (View::List, KeyCode::Esc | KeyCode::Char('q')) => {
                self.filter.clear();
                return LogAction::Close;
            }
            (View::List, KeyCode::Up | KeyCode::Char('k')) => {
                self.selected = sel.map(|s| s.saturating_sub(1));
            }
            (View::List, KeyCode::Down | KeyCode::Char('j')) => {
                self.selected = sel.map(|s| s + 1).filter(|&s| s + 1 < visible.len());
            }
            (View::List, KeyCode::Home) => self.selected = Some(0),
            (View::List, KeyCode::End) => self.selected = None,
            (View::List, KeyCode::PageUp) => self.selected = sel.map(|s| s.saturating_sub(20)),
            (View::List, KeyCode::PageDown) => {
                self.selected = sel.map(|s| s + 20).filter(|&s| s + 1 < visible.len());
            }
            (View::List, KeyCode::Enter) if sel.is_some() => {
                self.selected = sel;
                self.view = View::Detail { scroll: 0 };
            }
            (View::List, KeyCode::Char('/')) => {
                self.filtering = true;
                self.filter.clear();
            }
            _ => {}
        }
        LogAction::None
    }

    pub fn render(&self, calls: &CallLog, area: Rect, buf: &mut Buffer, theme: &Theme) {
        Clear.render(area, buf);
        let visible = self.visible(calls);
        let title = if self.filter.is_empty() {
            format!(" Tool calls ({}) ", calls.entries.len())
        } else {
            format!(
                " Tool calls ({} of {}, filter: {}) ",
                visible.len(),
                calls.entries.len(),
                self.filter
            )
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.accent())
            .title(Span::styled(title, theme.bold(theme.colors.accent)));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height < 2 {
            return;
        }
        let body = Rect::new(inner.x, inner.y, inner.width, inner.height - 1);
        let footer_y = inner.bottom() - 1;
        let sel = self.selected_index(&visible);
        let hints = match self.view {
            View::Detail { scroll } => {
                if let Some(i) = sel.and_then(|s| visible.get(s)) {
                    self.render_detail(calls, *i, body, buf, theme, scroll);
                }
                "Esc back · ↑↓ PgUp PgDn scroll".to_string()
            }
            View::List => {
                self.render_list(calls, &visible, sel, body, buf, theme);
                if self.typed_command().is_some() {
                    let typed = &self.filter;
                    format!("/{typed}▏  (Enter runs /{typed} · Esc clear)")
                } else if self.filtering {
                    format!("filter: {}▏  (Enter keep · Esc clear)", self.filter)
                } else {
                    "↑↓ select · Enter details · / filter · ? keys · Esc close".to_string()
                }
            }
        };
        buf.set_string(inner.x + 1, footer_y, hints, theme.muted());
    }

    fn render_list(
        &self,
        calls: &CallLog,
        visible: &[usize],
        sel: Option<usize>,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
    ) {
        let header = Line::from(Span::styled(
            row_text(
                "elapsed",
                "tool",
                "arguments",
                "verdict",
                "status",
                "took",
                "size",
                "cut?",
                area.width,
            ),
            theme.muted().add_modifier(Modifier::BOLD),
        ));
        buf.set_line(area.x, area.y, &header, area.width);
        let rows = usize::from(area.height.saturating_sub(1));
        if visible.is_empty() {
            let msg = if calls.entries.is_empty() {
                "no tool calls yet".to_string()
            } else if self.typed_command().is_some() {
                format!("Enter runs /{}", self.filter)
            } else {
                "nothing matches the filter".to_string()
            };
            buf.set_string(area.x + 1, area.y + 1, msg, theme.muted());
            return;
        }
        let sel = sel.unwrap_or(0);
        let first = sel.saturating_sub(rows.saturating_sub(1));
        for (row, &i) in visible.iter().enumerate().skip(first).take(rows) {
            let e = &calls.entries[i];
            let status = e.status_word();
            let (took, bytes, cut) = match e.status {
                // Denied, it never ran: its time was the wait for an answer.
                Some(ToolStatus::Denied) => (String::new(), String::new(), String::new()),
                Some(_) => (
                    human_duration(e.metadata.duration_ms),
                    human_bytes(e.metadata.bytes),
                    if e.metadata.truncated { "yes" } else { "" }.to_string(),
                ),
                None => (String::new(), String::new(), String::new()),
            };
            let tool = match &e.parent {
                Some(_) => format!("↳ {}", e.tool),
                None => e.tool.clone(),
            };
            let text = row_text(
                &e.when(),
                &tool,
                &key_argument(&e.arguments),
                &e.verdict(),
                &status,
                &took,
                &bytes,
                &cut,
                area.width,
            );
            let color = match e.status {
                _ if e.failed() => theme.colors.error,
                Some(ToolStatus::Ok) => theme.colors.ok,
                Some(ToolStatus::Error) => theme.colors.error,
                Some(ToolStatus::Denied) => theme.colors.denied,
                None => theme.colors.warning,
            };
            let style = if row == sel {
                theme.selected().fg(color)
            } else {
                Style::default().fg(color)
            };
            let y = area.y + 1 + u16::try_from(row - first).unwrap_or(0);
            buf.set_line(
                area.x,
                y,
                &Line::from(Span::styled(text, style)),
                area.width,
            );
        }
    }

    fn render_detail(
        &self,
        calls: &CallLog,
        index: usize,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        scroll: usize,
    ) {
        let Some(e) = calls.entries.get(index) else {
            return;
        };
        let mut cache = self.detail.borrow_mut();
        let d = match &mut *cache {
            Some(d) if d.index == index && d.rev == e.rev => d,
            slot => slot.insert(Detail {
                index,
                rev: e.rev,
                logical: detail_lines(e, theme),
                width: None,
                ends: Vec::new(),
            }),
        };
        let width = area.width.saturating_sub(1);
        let cols = usize::from(width);
        if d.width != Some(width) {
            let mut acc = 0;
            d.ends = d
                .logical
                .iter()
                .map(|l| {
                    acc += rows(l, cols);
                    acc
                })
                .collect();
            d.width = Some(width);
        }
        let total = d.ends.last().copied().unwrap_or(0);
        let height = usize::from(area.height);
        let max = total.saturating_sub(height);
        self.detail_max.set(max);
        let top = scroll.min(max);
        let first = d.ends.partition_point(|&end| end <= top);
        let mut skip = top - first.checked_sub(1).map_or(0, |i| d.ends[i]);
        let mut shown = Vec::with_capacity(height);
        let mut wrapped = Vec::new();
        for l in &d.logical[first..] {
            if shown.len() >= height {
                break;
            }
            wrapped.clear();
            wrap(l, cols, &mut wrapped);
            shown.extend(wrapped.drain(..).skip(skip).take(height - shown.len()));
            skip = 0;
        }
        for (row, line) in shown.iter().enumerate() {
            let y = area.y + u16::try_from(row).unwrap_or(0);
            buf.set_line(area.x + 1, y, line, width);
        }
    }
}

/// The longest piece of one line the detail view lays out as a unit.
const PIECE: usize = 8 * 1024;

/// Everything the detail view shows of a call, before wrapping.
fn detail_lines(e: &LogEntry, theme: &Theme) -> Vec<Logical> {
    let mut lines = Vec::new();
    let mut add = |text: String, style: Style| {
        if text.is_empty() {
            lines.push(Logical::code(Line::default()));
        }
        for l in text.lines() {
            push_pieces(l, style, &mut lines);
        }
    };
    add(
        match &e.parent {
            Some(p) => format!(
                "{} · {} · started {} · by a subagent of {p}",
                e.tool,
                e.call_id,
                e.when()
            ),
            None => format!("{} · {} · started {}", e.tool, e.call_id, e.when()),
        },
        theme.bold(theme.colors.accent),
    );
    add(format!("verdict: {}", e.verdict()), theme.text());
    if let Some(judged) = &e.judged {
        add(format!("judge: {judged}"), theme.fg(theme.colors.warning));
    }
    if let Some(how) = &e.decided {
        add(format!("decided: {how}"), theme.text());
    }
    if let Some((_, Some(reason))) = &e.guardrail {
        add(
            format!("guardrail: {reason}"),
            theme.fg(theme.colors.warning),
        );
    }
    add(format!("status: {}", e.status_word()), theme.text());
    if e.status.is_some() {
        let m = &e.metadata;
        add(
            format!(
                "took {} · {} · truncated: {}{}",
                human_duration(m.duration_ms),
                human_bytes(m.bytes),
                m.truncated,
                m.error_kind
                    .as_deref()
                    .map(|k| format!(" · error kind: {k}"))
                    .unwrap_or_default()
            ),
            theme.muted(),
        );
    }
    if !e.operations.is_empty() {
        add(String::new(), theme.text());
        add("operations:".into(), theme.bold(theme.colors.heading));
        for op in &e.operations {
            add(format!("  {op}"), theme.text());
        }
    }
    if !e.needs.is_empty() {
        add("needed approval:".into(), theme.bold(theme.colors.heading));
        for n in &e.needs {
            add(format!("  {n}"), theme.text());
        }
    }
    add(String::new(), theme.text());
    match &e.change {
        // A file change reads as the change, not as its raw arguments.
        Some(change) => {
            use super::diff_view::LineKind;
            add("change:".into(), theme.bold(theme.colors.heading));
            for (kind, l) in super::diff_view::change_lines(change) {
                let style = match kind {
                    LineKind::File | LineKind::Note => theme.muted(),
                    LineKind::Added => Style::default().fg(theme.colors.diff_add),
                    LineKind::Removed => Style::default().fg(theme.colors.diff_del),
                    LineKind::Hunk => theme.accent(),
                    LineKind::Context => theme.text(),
                };
                add(crate::components::cells::terminal_line(&l), style);
            }
        }
        None => {
            add("arguments:".into(), theme.bold(theme.colors.heading));
            json_lines(&e.arguments, theme.text(), &mut lines);
        }
    }
    lines.push(Logical::code(Line::default()));
    lines.push(Logical::code(Line::from(Span::styled(
        "result:",
        theme.bold(theme.colors.heading),
    ))));
    match &e.content {
        Some(c) => json_lines(c, theme.text(), &mut lines),
        None => lines.push(Logical::code(Line::from(Span::styled(
            "(still running)",
            theme.muted(),
        )))),
    }
    lines
}

/// Pretty JSON exactly as serde writes it. For the eye only, a string
/// breaks after each `\n` escape it holds, so file contents read as lines;
/// no character is changed, added or dropped.
fn json_lines(v: &Value, style: Style, out: &mut Vec<Logical>) {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    for line in text.lines() {
        let mut start = 0;
        let mut escaped = false;
        for (i, c) in line.char_indices() {
            if escaped {
                escaped = false;
                if c == 'n' {
                    push_pieces(&line[start..=i], style, out);
                    start = i + 1;
                }
            } else if c == '\\' {
                escaped = true;
            }
        }
        if start < line.len() || start == 0 {
            push_pieces(&line[start..], style, out);
        }
    }
}

/// One line of text as logical lines of at most [`PIECE`] bytes, so a
/// huge line is never wrapped whole to show a screenful of it.
fn push_pieces(line: &str, style: Style, out: &mut Vec<Logical>) {
    let mut rest = line;
    loop {
        // At least one character, however wide.
        let cut = crate::protocol::text::cut(rest, PIECE)
            .len()
            .max(rest.chars().next().map_or(0, char::len_utf8));
        let (piece, tail) = rest.split_at(cut);
        out.push(Logical::code(Line::from(Span::styled(
            piece.to_string(),
            style,
        ))));
        if tail.is_empty() {
            break;
        }
        rest = tail;
    }
}

fn fmt_at(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}.{}", s / 60, s % 60, d.subsec_millis() / 100)
}

#[allow(clippy::too_many_arguments)]
fn row_text(
    at: &str,
    tool: &str,
    args: &str,
    verdict: &str,
    status: &str,
    took: &str,
    bytes: &str,
    cut: &str,
    width: u16,
) -> String {
    // Every column but the arguments, with the spaces between them.
    let fixed = 1 + 8 + 1 + 16 + 1 + 1 + 20 + 1 + 10 + 1 + 8 + 1 + 9 + 1 + 4;
    if usize::from(width) < fixed + 16 {
        // Narrow (80 columns): the arguments keep room to be read; the
        // size and the cut mark go (the detail, Enter, has them).
        let fixed = 1 + 8 + 1 + 12 + 1 + 1 + 15 + 1 + 10 + 1 + 8;
        let args_w = usize::from(width).saturating_sub(fixed).max(8);
        return format!(
            " {} {} {} {} {} {:>8}",
            fit(at, 8),
            fit(tool, 12),
            fit(args, args_w),
            fit(verdict, 15),
            fit(status, 10),
            fit(took, 8).trim_end(),
        );
    }
    let args_w = usize::from(width).saturating_sub(fixed).max(8);
    format!(
        " {} {} {} {} {} {:>8} {:>9} {}",
        fit(at, 8),
        fit(tool, 16),
        fit(args, args_w),
        fit(verdict, 20),
        fit(status, 10),
        fit(took, 8).trim_end(),
        fit(bytes, 9).trim_end(),
        fit(cut, 4)
    )
}

#[cfg(test)]
#[path = "tool_log_tests.rs"]
mod tests;
