//! Reads and searches that follow one another in the transcript, folded
//! into one line a person reads at a glance: `Explored: read 2 files,
//! searched 1 pattern, listed 1 directory`. Enter (on an empty composer)
//! or a click opens it to each call's own line, and closes it again.

use ratatui::text::{Line, Span};

use super::cells::{ToolCell, ToolState};
use crate::protocol::ToolStatus;
use crate::theme::Theme;
use crate::wrap::Logical;

/// How a call looks at the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    Read,
    Search,
    List,
}

impl Look {
    /// The look a kind of tool takes, if it only looks.
    pub fn of(kind: crate::protocol::ToolKind) -> Option<Look> {
        use crate::protocol::ToolKind;
        match kind {
            ToolKind::Read => Some(Look::Read),
            ToolKind::Search => Some(Look::Search),
            ToolKind::List => Some(Look::List),
            _ => None,
        }
    }
}

/// Calls that only looked, one after another, and whether they are shown
/// one by one.
#[derive(Debug, Clone, PartialEq)]
pub struct Explored {
    pub calls: Vec<ToolCell>,
    pub open: bool,
}

impl Explored {
    /// What the calls did, counted as a person would: files read (each
    /// once, however many parts of it), patterns searched, directories
    /// listed.
    pub fn summary(&self) -> String {
        let mut read: Vec<&str> = Vec::new();
        let mut searched: Vec<&str> = Vec::new();
        let mut listed: Vec<&str> = Vec::new();
        for call in &self.calls {
            let seen = match Look::of(call.kind) {
                Some(Look::Read) => &mut read,
                Some(Look::Search) => &mut searched,
                Some(Look::List) => &mut listed,
                None => continue,
            };
            if !seen.contains(&call.key_arg.as_str()) {
                seen.push(&call.key_arg);
            }
        }
        let count = |n: usize, one: &str, many: &str| match n {
            1 => format!("1 {one}"),
            n => format!("{n} {many}"),
        };
        let mut parts = Vec::new();
        if !read.is_empty() {
            parts.push(format!("read {}", count(read.len(), "file", "files")));
        }
        if !searched.is_empty() {
            parts.push(format!(
                "searched {}",
                count(searched.len(), "pattern", "patterns")
            ));
        }
        if !listed.is_empty() {
            parts.push(format!(
                "listed {}",
                count(listed.len(), "directory", "directories")
            ));
        }
        parts.join(", ")
    }

    fn failed(&self) -> usize {
        self.calls
            .iter()
            .filter(|c| {
                matches!(
                    c.state,
                    ToolState::Done {
                        status: ToolStatus::Error | ToolStatus::Denied,
                        ..
                    }
                )
            })
            .count()
    }

    /// The folded line, then (open) each call's own lines.
    pub fn lines(&self, theme: &Theme, out: &mut Vec<Logical>) {
        let running = self.calls.iter().find(|c| c.is_running());
        let failed = self.failed();
        let (mark, style, word) = match running {
            Some(c) if c.state == ToolState::AwaitingApproval => {
                ("?", theme.bold(theme.colors.warning), "Exploring")
            }
            Some(c) => (
                super::cells::spinner(c.elapsed_ms),
                theme.accent(),
                "Exploring",
            ),
            None if failed > 0 => ("✗", theme.bold(theme.colors.error), "Explored"),
            None => ("✓", theme.bold(theme.colors.ok), "Explored"),
        };
        let mut spans = vec![
            Span::styled(format!("{mark} "), style),
            Span::styled(
                format!("{word}: "),
                theme.text().add_modifier(ratatui::style::Modifier::BOLD),
            ),
            Span::styled(self.summary(), theme.text()),
        ];
        if failed > 0 {
            spans.push(Span::styled(
                format!(" · {failed} failed"),
                theme.fg(theme.colors.error),
            ));
        }
        if !self.open {
            spans.push(Span::styled(" · Enter or a click opens", theme.muted()));
        }
        out.push(Logical::new(Line::from(spans), Line::from("  "), false));
        if self.open {
            for call in &self.calls {
                let mut lines = Vec::new();
                super::cells::tool_lines(call, theme, &mut lines);
                for mut l in lines {
                    l.indent(&Span::styled("  ", theme.muted()));
                    out.push(l);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::components::cells::{Cell, render};
    use crate::highlight::Highlighter;
    use crate::protocol::ResultMetadata;

    fn done(tool: &str, args: serde_json::Value, status: ToolStatus, summary: &str) -> ToolCell {
        let kind = crate::components::cells::kind_as_the_core_says(tool);
        let mut t = ToolCell::new("c", tool, kind, &args);
        t.state = ToolState::Done {
            status,
            metadata: ResultMetadata::default(),
            summary: summary.into(),
        };
        t
    }

    fn text(cell: &Cell, width: u16) -> String {
        crate::wrap::plain(&render(
            cell,
            width,
            &Theme::plain(),
            &Highlighter::new(None),
        ))
        .join("\n")
    }

    /// A run of reads and searches reads as one line, counted as a person
    /// would count (a file read twice is one file); opened, each call has
    /// its line.
    #[test]
    fn reads_and_searches_fold_into_one_line_that_opens() {
        let mut e = Explored {
            calls: vec![
                done(
                    "read_file",
                    json!({"path": "src/app.py"}),
                    ToolStatus::Ok,
                    "lines 1-40 of 90",
                ),
                done(
                    "read_file",
                    json!({"path": "src/app.py", "offset": 41}),
                    ToolStatus::Ok,
                    "lines 41-90 of 90",
                ),
                done(
                    "grep",
                    json!({"pattern": "top_words|old_count"}),
                    ToolStatus::Ok,
                    "9 matches in 5 files",
                ),
                done(
                    "glob",
                    json!({"pattern": "**/*.py"}),
                    ToolStatus::Ok,
                    "6 files",
                ),
                done(
                    "list_directory",
                    json!({"path": "tests"}),
                    ToolStatus::Ok,
                    "4 entries",
                ),
            ],
            open: false,
        };
        insta::assert_snapshot!(
            "explored_folded",
            text(&Cell::Explored(Box::new(e.clone())), 90)
        );
        e.open = true;
        insta::assert_snapshot!(
            "explored_open",
            text(&Cell::Explored(Box::new(e.clone())), 90)
        );
        // A failure shows folded.
        e.open = false;
        e.calls.push(done(
            "read_file",
            json!({"path": "nope.py"}),
            ToolStatus::Error,
            "not found: nope.py",
        ));
        let folded = text(&Cell::Explored(Box::new(e)), 90);
        assert!(
            folded.starts_with(
                "✗ Explored: read 2 files, searched 2 patterns, listed 1 directory · 1 failed"
            ),
            "{folded}"
        );
    }
}
