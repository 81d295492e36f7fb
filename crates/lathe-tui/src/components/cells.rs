//! The cells of the transcript and how each becomes lines at a width:
//! user messages, assistant messages (Markdown), tool calls (name, key
//! argument, spinner and elapsed time while running, the last lines of
//! streamed output, then status, duration and a short result), and notices
//! (errors, retries, command feedback).

use std::collections::VecDeque;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::diff_view::LineKind;
use crate::protocol::humanize::shorten_chars as shorten;
pub use crate::protocol::humanize::{bytes as human_bytes, duration_ms as human_duration};
use crate::protocol::summary::Shared;
use crate::protocol::{ResultMetadata, Summary, ToolKind, ToolStatus};

/// The key argument of a call, on one line.
pub fn key_argument(args: &Value) -> String {
    crate::protocol::humanize::key_argument(args, 160)
}
use crate::highlight::Highlighter;
use crate::markdown;
use crate::theme::Theme;
use crate::wrap::Logical;
#[cfg(any(test, feature = "internals"))]
use crate::wrap::wrap;

/// Lines of streamed output a tool cell shows.
const TAIL_LINES: usize = 5;
/// Lines of output a tool cell keeps, to show when opened (the log has
/// all of it).
const KEPT_LINES: usize = 200;

/// A line of program output as a terminal shows it: escape sequences
/// (colours, cursor moves, titles) are dropped, a carriage return goes back
/// to the start of the line and what follows overwrites it (`10%…20%`
/// progress shows its last state), tabs expand and other control
/// characters go.
pub fn terminal_line(raw: &str) -> String {
    use unicode_segmentation::UnicodeSegmentation;
    // What the line holds, one cell's cluster per slot.
    let mut shown: Vec<String> = Vec::new();
    for segment in raw.split('\r') {
        let clean = anstream::adapter::strip_str(segment).to_string();
        let drawn = clean
            .graphemes(true)
            .filter(|g| *g == "\t" || !g.contains(char::is_control));
        for (i, g) in drawn.enumerate() {
            match shown.get_mut(i) {
                Some(slot) => g.clone_into(slot),
                None => shown.push(g.to_string()),
            }
        }
    }
    crate::wrap::expand_tabs(vec![Span::raw(shown.concat())], false)
        .into_iter()
        .map(|s| s.content.into_owned())
        .collect()
}
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The spinner's frame `ms` into a call.
pub(super) fn spinner(ms: u64) -> &'static str {
    SPINNER[(ms / 100) as usize % SPINNER.len()]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    Info,
    Warning,
    Error,
}

/// Where a tool call stands.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolState {
    Running,
    AwaitingApproval,
    Done {
        status: ToolStatus,
        metadata: ResultMetadata,
        summary: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCell {
    pub call_id: String,
    pub tool: String,
    /// What kind of work the tool does (the core says; the transcript
    /// reads this, not the name).
    pub kind: ToolKind,
    pub key_arg: String,
    /// Milliseconds since the call started, refreshed while it runs.
    pub elapsed_ms: u64,
    pub state: ToolState,
    /// The last lines of its output (at most `KEPT_LINES`).
    pub tail: VecDeque<String>,
    /// How many lines of output it printed in all.
    pub printed: usize,
    /// A guardrail note (the arguments were changed).
    pub note: Option<String>,
    /// How an approval was settled, when one was needed: "you approved",
    /// "by grant".
    pub approval: Option<&'static str>,
    /// From an earlier run (a resumed session): its time is not known.
    pub earlier: bool,
    /// What a file change wrote (shown compact).
    pub change: Option<crate::protocol::change::FileChange>,
    /// Shown whole (a click on it, Enter): its diff, its kept output.
    pub open: bool,
    /// A subagent made it (for a `task` call): shown under the task.
    pub nested: bool,
    /// The `task` call it was made for.
    pub parent: Option<String>,
}

impl ToolCell {
    pub fn new(call_id: &str, tool: &str, kind: ToolKind, arguments: &Value) -> Self {
        Self {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            kind,
            key_arg: key_argument(arguments),
            elapsed_ms: 0,
            state: ToolState::Running,
            tail: VecDeque::new(),
            note: None,
            approval: None,
            earlier: false,
            change: None,
            open: false,
            printed: 0,
            nested: false,
            parent: None,
        }
    }

    /// Adds streamed output (whole lines, as `tool_progress` carries
    /// them); only the last lines are kept, each as a terminal would show
    /// it (see [`terminal_line`]).
    pub fn push_output(&mut self, text: &str) {
        for line in text.split('\n') {
            if self.tail.len() == KEPT_LINES {
                self.tail.pop_front();
            }
            self.tail.push_back(terminal_line(line));
            self.printed += 1;
        }
    }

    pub fn is_running(&self) -> bool {
        !matches!(self.state, ToolState::Done { .. })
    }

    /// Whether opening it shows more: a diff cut short, output beyond its
    /// last lines.
    pub fn opens(&self) -> bool {
        self.tail.len() > TAIL_LINES
            || self
                .change
                .as_ref()
                .is_some_and(|c| changed_lines(c).len() > DIFF_SHOWN)
    }

    /// Whether the call only looks (reads, searches, lists): such calls
    /// read as a summary and fold together.
    pub fn explores(&self) -> bool {
        super::explored::Look::of(self.kind).is_some()
    }
}

/// `summary` without the call's own path, which its line shows already:
/// `edited a.txt at line 2` reads `edited at line 2`.
fn without_path(summary: &str, path: &str) -> String {
    if path.is_empty() || path.contains(' ') {
        return summary.to_string();
    }
    for with in [format!(" to {path}"), format!(" {path}")] {
        if let Some(at) = summary.find(&with) {
            let end = at + with.len();
            // A whole word: `a.txt`, not the start of `a.txt.bak`.
            if summary[end..]
                .chars()
                .next()
                .is_none_or(|c| c == ' ' || c == ',' || c == '(')
            {
                return format!("{}{}", &summary[..at], &summary[end..]);
            }
        }
    }
    summary.to_string()
}

/// A call (other than a command, whose time always shows) slower than
/// this shows how long it took.
const SLOW_MS: u64 = 1000;

/// What a model thought before it answered: shown dimmed as it streams,
/// folded to one line (`thought for 12 s`) once the answer starts,
/// unfolded again with Ctrl-O.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ThinkingCell {
    pub text: String,
    /// Whether the model has moved on to its answer.
    pub done: bool,
    /// How long it thought, once done (unknown in a resumed session).
    pub took_ms: Option<u64>,
    /// Shown whole although done.
    pub open: bool,
}

impl ThinkingCell {
    /// Whether its text is on screen.
    pub fn shows_text(&self) -> bool {
        !self.done || self.open
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    User(String),
    Assistant(String),
    Thinking(Box<ThinkingCell>),
    Tool(Box<ToolCell>),
    /// Reads and searches one after another, folded into one line.
    Explored(Box<super::explored::Explored>),
    Notice(NoticeKind, String),
}

/// How a call's approval was settled, in the person's words (`None`: it
/// was denied).
pub fn approval_words(
    decision: &crate::protocol::ApprovalDecision,
    source: crate::protocol::DecisionSource,
) -> Option<&'static str> {
    use crate::protocol::{ApprovalDecision, DecisionSource};
    match (decision, source) {
        (ApprovalDecision::Deny { .. }, _) => None,
        (_, DecisionSource::Grant) => Some("by grant"),
        (ApprovalDecision::ApproveOnce, _) => Some("you approved"),
        (ApprovalDecision::ApproveHunks { .. }, _) => Some("you approved some hunks"),
        (ApprovalDecision::ApproveEdited { .. }, _) => Some("you edited and approved it"),
        (ApprovalDecision::ApproveForConversation, _) => Some("you approved, with a grant"),
    }
}

/// A finished call in one line: a failure by its error, in the person's
/// words; a success by what its tool says it found or did (`summary`).
pub fn summarize(status: ToolStatus, content: &Value, summary: Option<&Summary>) -> String {
    if status != ToolStatus::Ok {
        let msg = Shared(content).error().unwrap_or("failed");
        let msg = msg.lines().next().unwrap_or(msg);
        // The model's words for a denial, in the person's.
        let msg = msg.strip_prefix("permission denied: ").unwrap_or(msg);
        let msg = match msg.strip_prefix("the user denied this call") {
            Some("") => "you said no".to_string(),
            Some(rest) => format!("you said no{}", rest.replacen(" and said:", ":", 1)),
            None => msg.to_string(),
        };
        return shorten(&msg, 200);
    }
    summary.map(words).unwrap_or_default()
}

/// What a call found or did, as a person would say it.
fn words(summary: &Summary) -> String {
    let plural = |n: u64, one: &str, many: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    };
    match summary {
        Summary::Exited { code } => format!("exit {code}"),
        Summary::Background { handle } => format!("runs in the background as {handle} (/ps)"),
        Summary::Output {
            lines,
            running,
            exit_code,
        } => {
            let new = match lines {
                0 => "no new output".to_string(),
                1 => "1 new line".to_string(),
                n => format!("{n} new lines"),
            };
            let state = match (running, exit_code) {
                (true, _) => "still running".to_string(),
                (false, Some(code)) => format!("ended, exit {code}"),
                (false, None) => "ended".to_string(),
            };
            format!("{new} · {state}")
        }
        Summary::Files { count: 0 } => "no files".into(),
        Summary::Files { count } => plural(*count, "file", "files"),
        Summary::Matches { count: 0, .. } => "no matches".into(),
        Summary::Matches { count, files } => format!(
            "{} in {}",
            plural(*count, "match", "matches"),
            plural(*files, "file", "files")
        ),
        Summary::Entries { count } => plural(*count, "entry", "entries"),
        Summary::Lines { start, end, total } => format!("lines {start}-{end} of {total}"),
        // A change written in part: said to the person, not in the words
        // meant for the model.
        Summary::Written {
            path,
            written,
            left_out,
        } => shorten(
            &format!(
                "wrote {written} of {} hunks to {path} (you left {left_out} out)",
                written + left_out
            ),
            200,
        ),
        Summary::Answer { answer: Some(a) } => shorten(&format!("you answered: {a}"), 200),
        Summary::Answer { answer: None } => "you left it to the model".into(),
        Summary::Task { calls } => format!(
            "answered after {calls} call{}",
            if *calls == 1 { "" } else { "s" }
        ),
        Summary::Plan {
            done,
            steps,
            current,
        } => {
            let mut said = format!("{done} of {steps} done");
            if let Some(now) = current {
                said.push_str(&format!(", next: {now}"));
            }
            shorten(&said, 200)
        }
        Summary::Said { message } => {
            // Sizes are the log's: `created a.py (27 bytes)` reads
            // `created a.py`.
            let msg = match message.rsplit_once(" (") {
                Some((head, tail)) if tail.ends_with(" bytes)") => head,
                _ => message,
            };
            shorten(msg, 200)
        }
    }
}

/// Output a result carries that was not streamed as progress: what a
/// command started in the background printed in its first moment, what
/// a read of one found.
pub fn unstreamed_output(kind: ToolKind, content: &Value) -> Option<String> {
    (kind == ToolKind::Shell)
        .then(|| Shared(content).background_output())
        .flatten()
        .map(|o| o.trim_end_matches('\n').to_string())
        .filter(|o| !o.is_empty())
}

/// Why the sandbox may be what stopped a command, when the result says.
pub fn sandbox_note(content: &Value) -> Option<String> {
    Shared(content).sandbox().map(|n| {
        // Its first clause is the person's; the rest (which places
        // are writable, what to do) is for the model.
        let said = n.split_once(": ").map_or(n, |(head, _)| head);
        let offer = if said.contains("may have blocked") || said.starts_with("the sandbox refused")
        {
            "; the model can ask you to run it outside the sandbox"
        } else {
            ""
        };
        shorten(&format!("{said}{offer}"), 200)
    })
}

/// Renders a cell to lines of at most `width` columns.
#[cfg(any(test, feature = "internals"))]
pub fn render(cell: &Cell, width: u16, theme: &Theme, hl: &Highlighter) -> Vec<Line<'static>> {
    let logical = logical(cell, theme, hl);
    let mut out = Vec::with_capacity(logical.len());
    for l in &logical {
        wrap(l, wrap_width(width), &mut out);
    }
    out
}

/// The columns cells wrap to in a view `width` wide.
pub fn wrap_width(width: u16) -> usize {
    usize::from(width.max(4))
}

/// A cell's lines before wrapping; the last is blank.
pub fn logical(cell: &Cell, theme: &Theme, hl: &Highlighter) -> Vec<Logical> {
    let mut logical = Vec::new();
    match cell {
        Cell::User(text) => {
            let prefix = Span::styled("› ", theme.bold(theme.colors.user));
            for (i, line) in text.lines().enumerate() {
                let lead = if i == 0 {
                    prefix.clone()
                } else {
                    Span::raw("  ")
                };
                logical.push(Logical::new(
                    Line::from(vec![lead, Span::styled(line.to_string(), theme.text())]),
                    Line::from("  "),
                    false,
                ));
            }
            if logical.is_empty() {
                logical.push(Logical::prose(Line::from(prefix)));
            }
        }
        Cell::Assistant(text) => {
            for mut l in markdown::render(text, theme, hl) {
                l.indent(&Span::raw("  "));
                logical.push(l);
            }
        }
        Cell::Thinking(t) => {
            logical.push(thinking_header(t, theme));
            if t.shows_text() {
                thinking_text(&t.text, theme, &mut logical);
            }
        }
        Cell::Tool(t) => {
            tool_lines(t, theme, &mut logical);
            // A subagent's call, under its task.
            if t.nested {
                let hang = Span::raw("    ");
                for (i, l) in logical.iter_mut().enumerate() {
                    if i == 0 {
                        l.lead(&Span::styled("  ↳ ", theme.muted()), &hang);
                    } else {
                        l.indent(&hang);
                    }
                }
            }
        }
        Cell::Explored(e) => e.lines(theme, &mut logical),
        Cell::Notice(kind, text) => {
            let (mark, style) = match kind {
                NoticeKind::Info => ("• ", theme.muted()),
                NoticeKind::Warning => ("! ", theme.fg(theme.colors.warning)),
                NoticeKind::Error => ("✗ ", theme.bold(theme.colors.error)),
            };
            for (i, line) in text.lines().enumerate() {
                let lead = if i == 0 { mark } else { "  " };
                logical.push(Logical::new(
                    Line::from(vec![
                        Span::styled(lead, style),
                        Span::styled(line.to_string(), style),
                    ]),
                    Line::from("  "),
                    false,
                ));
            }
        }
    }
    logical.push(Logical::prose(Line::default()));
    logical
}

/// The thinking cell's first line: what it is doing, or did.
pub fn thinking_header(t: &ThinkingCell, theme: &Theme) -> Logical {
    let style = theme.muted().add_modifier(Modifier::ITALIC);
    let what = match (t.done, t.took_ms) {
        (false, _) => "thinking…".to_string(),
        (true, Some(ms)) => format!("thought for {}", human_duration(ms.max(1))),
        (true, None) => "thought".to_string(),
    };
    let mut spans = vec![Span::styled("∴ ", theme.muted()), Span::styled(what, style)];
    if t.done && !t.text.trim().is_empty() {
        let hint = if t.open {
            " · Ctrl-O hides it"
        } else {
            " · Ctrl-O shows it"
        };
        spans.push(Span::styled(hint, theme.muted()));
    }
    Logical::new(Line::from(spans), Line::from("  "), false)
}

/// Lines of thinking text, dimmed and indented, one per line of `text`.
pub fn thinking_text(text: &str, theme: &Theme, out: &mut Vec<Logical>) {
    let style = theme.muted().add_modifier(Modifier::ITALIC);
    for line in text.split('\n') {
        // The model's text drives nothing: escape sequences and other
        // control characters are not drawn (tabs expand).
        let line: String = line
            .chars()
            .filter(|c| *c == '\t' || !c.is_control())
            .collect();
        // A summary's heading (`**Reading the parser**`, as OpenAI's
        // reasoning summaries open each part) shows as one.
        let (line, style) = match line
            .trim()
            .strip_prefix("**")
            .and_then(|l| l.strip_suffix("**"))
            .filter(|l| !l.is_empty() && !l.contains("**"))
        {
            Some(title) => (title.to_string(), style.add_modifier(Modifier::BOLD)),
            None => (line, style),
        };
        out.push(Logical::new(
            Line::from(vec![Span::raw("  "), Span::styled(line, style)]),
            Line::from("  "),
            false,
        ));
    }
}

pub(super) fn tool_lines(t: &ToolCell, theme: &Theme, out: &mut Vec<Logical>) {
    let (mark, mark_style, detail) = match &t.state {
        // A question's time is the person's.
        ToolState::Running if t.kind == ToolKind::Ask => (
            "?",
            theme.bold(theme.colors.warning),
            "waiting for your answer".to_string(),
        ),
        ToolState::Running => (
            spinner(t.elapsed_ms),
            theme.accent(),
            human_duration(t.elapsed_ms),
        ),
        ToolState::AwaitingApproval => (
            "?",
            theme.bold(theme.colors.warning),
            "waiting for approval".to_string(),
        ),
        ToolState::Done {
            status,
            metadata,
            summary,
        } => {
            let failed_exit = summary
                .strip_prefix("exit ")
                .and_then(|c| c.parse::<i64>().ok())
                .is_some_and(|c| c != 0);
            let (mark, color) = match status {
                ToolStatus::Ok if failed_exit => ("✗", theme.colors.error),
                ToolStatus::Ok => ("✓", theme.colors.ok),
                ToolStatus::Error => ("✗", theme.colors.error),
                ToolStatus::Denied => ("⊘", theme.colors.denied),
            };
            // What it found or did, as a person would say it; how long
            // it took when that matters (the bytes are the log's).
            let mut parts = Vec::new();
            if !summary.is_empty() {
                let word = match status {
                    ToolStatus::Denied if !summary.starts_with("you said no") => "denied: ",
                    _ => "",
                };
                // The path is on the line already: `created`, not
                // `created a.py` (an error's words stay whole).
                let said = if *status == ToolStatus::Ok {
                    without_path(summary, &t.key_arg)
                } else {
                    summary.clone()
                };
                parts.push(format!("{word}{said}"));
            }
            // A command's time, or any call's that was slow.
            let command = summary.starts_with("exit ");
            if !t.earlier
                && t.kind != ToolKind::Ask
                && *status != ToolStatus::Denied
                && (command || metadata.duration_ms >= SLOW_MS)
            {
                parts.push(human_duration(metadata.duration_ms));
            }
            if *status == ToolStatus::Ok && metadata.truncated && !t.explores() {
                parts.push("truncated".into());
            }
            if let Some(how) = t.approval
                && *status != ToolStatus::Denied
            {
                parts.push(how.to_string());
            }
            (mark, theme.bold(color), parts.join(" · "))
        }
    };
    let mut spans = vec![
        Span::styled(format!("{mark} "), mark_style),
        Span::styled(t.tool.clone(), theme.text().add_modifier(Modifier::BOLD)),
    ];
    if !t.key_arg.is_empty() {
        spans.push(Span::styled(format!(" {}", t.key_arg), theme.accent()));
    }
    if !detail.is_empty() {
        spans.push(Span::styled(format!(" · {detail}"), theme.muted()));
    }
    out.push(Logical::new(Line::from(spans), Line::from("  "), false));
    if let Some(note) = &t.note {
        out.push(Logical::new(
            Line::from(Span::styled(
                format!("  ↳ {note}"),
                theme.fg(theme.colors.warning),
            )),
            Line::from("    "),
            false,
        ));
    }
    if let Some(change) = &t.change {
        compact_diff(change, t.open, theme, out);
    }
    let shown = if t.open { t.tail.len() } else { TAIL_LINES };
    let hidden = t.printed.max(t.tail.len()).saturating_sub(shown);
    if hidden > 0 {
        let how = if t.open || t.tail.len() <= TAIL_LINES {
            "Ctrl-T: all of it"
        } else {
            "Enter or a click opens"
        };
        let s = if hidden == 1 { "" } else { "s" };
        out.push(Logical::new(
            Line::from(vec![
                Span::styled("  │ ", theme.border()),
                Span::styled(format!("… {hidden} line{s} above ({how})"), theme.muted()),
            ]),
            Line::from(vec![Span::styled("  │ ", theme.border())]),
            false,
        ));
    }
    let skip = t.tail.len().saturating_sub(shown);
    for line in t.tail.iter().skip(skip) {
        out.push(Logical::new(
            Line::from(vec![
                Span::styled("  │ ", theme.border()),
                Span::styled(line.as_str(), Style::default().fg(theme.colors.muted)),
            ]),
            Line::from(vec![Span::styled("  │ ", theme.border())]),
            true,
        ));
    }
}

/// Diff lines a change shows in the transcript; the rest is counted.
const DIFF_SHOWN: usize = 12;
/// The most a change opened in the transcript shows (the log has all).
const DIFF_OPEN: usize = 2000;

/// A change's lines as the transcript shows them: each hunk's changed
/// lines (and final-newline marks), with the context between them when
/// it is short, else `⋯`, so that changes apart do not read as one run;
/// the context around a hunk and the file's header are left out.
fn changed_lines(change: &crate::protocol::change::FileChange) -> Vec<(LineKind, String)> {
    /// Context lines between changes shown as they are; more are `⋯`.
    const SHORT: usize = 2;
    let mut out = Vec::new();
    let mut context: Vec<String> = Vec::new();
    let mut in_hunk = false;
    for (kind, line) in super::diff_view::change_lines(change) {
        match kind {
            LineKind::File => {}
            LineKind::Context => context.push(line),
            LineKind::Hunk => {
                context.clear();
                in_hunk = false;
                out.push((kind, line));
            }
            _ => {
                // Context after the hunk's first change and before this one.
                if in_hunk && !context.is_empty() {
                    if context.len() <= SHORT {
                        out.extend(context.drain(..).map(|l| (LineKind::Context, l)));
                    } else {
                        out.push((LineKind::Note, "⋯".to_string()));
                    }
                }
                context.clear();
                in_hunk = true;
                out.push((kind, line));
            }
        }
    }
    out
}

/// What a change wrote, in a few lines under its call: changed lines with
/// their signs and the final-newline marks (context and file headers left
/// out), then how many more.
fn compact_diff(
    change: &crate::protocol::change::FileChange,
    open: bool,
    theme: &Theme,
    out: &mut Vec<Logical>,
) {
    let shown = if open { DIFF_OPEN } else { DIFF_SHOWN };
    let changed = changed_lines(change);
    let gutter = || Span::styled("  ┊ ", theme.border());
    for (kind, l) in changed.iter().take(shown) {
        let style = match kind {
            LineKind::Added => Style::default().fg(theme.colors.diff_add),
            LineKind::Removed => Style::default().fg(theme.colors.diff_del),
            _ => theme.muted(),
        };
        out.push(Logical::new(
            Line::from(vec![gutter(), Span::styled(terminal_line(l), style)]),
            Line::from(vec![gutter()]),
            true,
        ));
    }
    if changed.len() > shown {
        let more = changed.len() - shown;
        let how = if open {
            "Ctrl-T shows the whole change"
        } else {
            "Enter or a click opens it"
        };
        out.push(Logical::new(
            Line::from(vec![
                gutter(),
                Span::styled(format!("… {more} more lines ({how})"), theme.muted()),
            ]),
            Line::from(vec![gutter()]),
            false,
        ));
    }
}

/// What the core says of each built-in tool's kind, for tests that make
/// its events by hand.
#[cfg(test)]
pub(crate) fn kind_as_the_core_says(tool: &str) -> ToolKind {
    match tool {
        "read_file" => ToolKind::Read,
        "list_directory" => ToolKind::List,
        "grep" | "glob" => ToolKind::Search,
        "exec_shell" | "spawn" | "shell_output" | "shell_kill" => ToolKind::Shell,
        "write_file" | "edit_file" | "delete_file" | "move_file" => ToolKind::Edit,
        "web_fetch" | "web_search" => ToolKind::Web,
        "ask_user" => ToolKind::Ask,
        "update_plan" => ToolKind::Plan,
        "task" => ToolKind::Task,
        _ => ToolKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn output_lines_show_as_a_terminal_shows_them() {
        assert_eq!(terminal_line("10%\r20%\r30%"), "30%");
        assert_eq!(terminal_line("abcdef\rXY"), "XYcdef");
        assert_eq!(
            terminal_line("\x1b[32mok\x1b[0m done\x1b]0;title\x07\x1b[2K"),
            "ok done"
        );
        assert_eq!(terminal_line("a\tb\x08\x07"), "a   b");
        assert_eq!(terminal_line("line\r"), "line");
        assert_eq!(terminal_line("👨‍👩‍👧 50%\r👍🏽"), "👍🏽 50%");
    }

    #[test]
    fn progress_lines_keep_only_their_last_state() {
        let mut t = ToolCell::new(
            "c",
            "exec_shell",
            crate::protocol::ToolKind::Shell,
            &json!({"command": "x"}),
        );
        t.push_output("downloading 10%\rdownloading 20%\r\x1b[1mdownloading 30%\x1b[0m\ndone");
        assert_eq!(Vec::from(t.tail.clone()), ["downloading 30%", "done"]);
    }

    use crate::wrap::plain as text;

    #[test]
    fn tool_cells_show_progress_then_the_outcome() {
        let theme = Theme::plain();
        let hl = Highlighter::new(None);
        let mut t = ToolCell::new(
            "c1",
            "exec_shell",
            crate::protocol::ToolKind::Shell,
            &json!({"command": "cargo test"}),
        );
        t.elapsed_ms = 1200;
        for i in 0..8 {
            t.push_output(&format!("line {i}"));
        }
        let lines = text(&render(&Cell::Tool(Box::new(t.clone())), 60, &theme, &hl));
        assert_eq!(lines[0], "⠹ exec_shell cargo test · 1.2 s");
        // What is above the last lines is counted, and opens.
        assert_eq!(lines[1], "  │ … 3 lines above (Enter or a click opens)");
        assert_eq!(lines[2], "  │ line 3");
        assert_eq!(lines.len(), 1 + 1 + 5 + 1);
        assert!(t.opens());
        t.open = true;
        let open = text(&render(&Cell::Tool(Box::new(t.clone())), 60, &theme, &hl));
        assert_eq!(open[1], "  │ line 0");
        assert_eq!(open.len(), 1 + 8 + 1);
        t.open = false;
        t.state = ToolState::Done {
            status: ToolStatus::Ok,
            metadata: ResultMetadata {
                bytes: 2048,
                duration_ms: 1500,
                ..ResultMetadata::default()
            },
            summary: "exit 0".into(),
        };
        let lines = text(&render(&Cell::Tool(Box::new(t.clone())), 60, &theme, &hl));
        assert_eq!(lines[0], "✓ exec_shell cargo test · exit 0 · 1.5 s");
        // A failed command is marked as failed, and a call a grant let
        // through says so.
        t.state = ToolState::Done {
            status: ToolStatus::Ok,
            metadata: ResultMetadata {
                bytes: 2048,
                duration_ms: 1500,
                ..ResultMetadata::default()
            },
            summary: "exit 101".into(),
        };
        t.approval = Some("by grant");
        let lines = text(&render(&Cell::Tool(Box::new(t)), 80, &theme, &hl));
        assert_eq!(
            lines[0],
            "✗ exec_shell cargo test · exit 101 · 1.5 s · by grant"
        );
    }

    /// Changes apart in one hunk do not read as one run: short context
    /// between them shows, longer is `⋯`; the context around is left out.
    #[test]
    fn compact_diffs_keep_changes_apart() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nB\nc\nd\nE\nf\ng\nh\ni\nj\n";
        let change = crate::protocol::change::FileChange::new("x", "/w/x".into(), Some(old), new);
        let lines: Vec<String> = changed_lines(&change).into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            lines,
            [
                "@@ -1,8 +1,10 @@",
                "-b",
                "+B",
                " c",
                " d",
                "-e",
                "+E",
                "⋯",
                "+i",
                "+j"
            ],
        );
    }

    /// A read of a background command says what it read, not its handle
    /// again; what a background command printed at once, and why the
    /// sandbox stopped it, are on its cell.
    #[test]
    fn background_work_is_spoken_about() {
        let read = |lines, running, exit_code| {
            let s = Summary::Output {
                lines,
                running,
                exit_code,
            };
            summarize(ToolStatus::Ok, &json!({}), Some(&s))
        };
        assert_eq!(read(1, true, None), "1 new line · still running");
        assert_eq!(read(0, true, None), "no new output · still running");
        assert_eq!(read(2, false, Some(0)), "2 new lines · ended, exit 0");
        let failed = json!({
            "handle": "bg1", "running": false, "exit_code": 1,
            "output": "Traceback\nPermissionError: [Errno 13] Permission denied\n",
            "sandbox": "the sandbox (workspace-write) may have blocked this: commands may write only in /ws",
        });
        assert_eq!(
            summarize(ToolStatus::Ok, &failed, Some(&Summary::Exited { code: 1 })),
            "exit 1"
        );
        assert_eq!(
            unstreamed_output(ToolKind::Shell, &failed).as_deref(),
            Some("Traceback\nPermissionError: [Errno 13] Permission denied")
        );
        assert_eq!(
            sandbox_note(&failed).as_deref(),
            Some(
                "the sandbox (workspace-write) may have blocked this; the model can ask you \
                 to run it outside the sandbox"
            )
        );
        // Still running: its note is how to read it, not the sandbox's.
        let running = json!({"handle": "bg1", "running": true, "output": "up\n", "note": "running in the background: …"});
        assert_eq!(sandbox_note(&running), None);
        // A foreground command streamed its output already.
        assert_eq!(
            unstreamed_output(ToolKind::Shell, &json!({"stdout": "x"})),
            None
        );
    }

    /// What each tool found, as a person would say it; a failure by its
    /// error's first line.
    #[test]
    fn summaries_fit_each_tool() {
        let say = |s: Summary| summarize(ToolStatus::Ok, &json!({}), Some(&s));
        assert_eq!(say(Summary::Exited { code: 2 }), "exit 2");
        assert_eq!(
            say(Summary::Lines {
                start: 1,
                end: 40,
                total: 90
            }),
            "lines 1-40 of 90"
        );
        assert_eq!(say(Summary::Files { count: 6 }), "6 files");
        assert_eq!(say(Summary::Files { count: 0 }), "no files");
        assert_eq!(
            say(Summary::Matches { count: 9, files: 5 }),
            "9 matches in 5 files"
        );
        assert_eq!(
            say(Summary::Matches { count: 1, files: 1 }),
            "1 match in 1 file"
        );
        assert_eq!(say(Summary::Matches { count: 0, files: 0 }), "no matches");
        assert_eq!(say(Summary::Entries { count: 2 }), "2 entries");
        assert_eq!(
            say(Summary::Said {
                message: "created a.py (27 bytes)".into()
            }),
            "created a.py"
        );
        assert_eq!(
            say(Summary::Written {
                path: "a.rs".into(),
                written: 1,
                left_out: 2
            }),
            "wrote 1 of 3 hunks to a.rs (you left 2 out)"
        );
        assert_eq!(
            summarize(
                ToolStatus::Error,
                &json!({"error": "timeout: slow\nmore"}),
                None
            ),
            "timeout: slow"
        );
        assert_eq!(summarize(ToolStatus::Ok, &json!({"x": 1}), None), "");
    }

    #[test]
    fn key_arguments_are_one_short_line() {
        assert_eq!(key_argument(&json!({"command": "a\nb"})), "a ⏎ b");
        assert_eq!(key_argument(&json!({})), "");
        assert_eq!(
            key_argument(&json!({"path": "x".repeat(300)}))
                .chars()
                .count(),
            160
        );
    }
}
