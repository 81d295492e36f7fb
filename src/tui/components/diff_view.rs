//! A unified diff, drawn for review: old and new line numbers, `+`/`-`
//! colours, the changed words of each edited line highlighted (a word diff
//! with `similar` between a removed line and the added line that replaces
//! it), and syntax colours by the file's language.

use std::ops::Range;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use similar::{ChangeTag, TextDiff};

use crate::tui::highlight::Highlighter;
use crate::tui::theme::Theme;
use crate::tui::wrap::{Logical, wrap};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Context,
    Added,
    Removed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Row {
    Hunk(String),
    Note(String),
    Line {
        kind: Kind,
        old: Option<usize>,
        new: Option<usize>,
        text: String,
        /// Byte ranges of `text` that the word diff marks as changed.
        words: Vec<Range<usize>>,
        /// Index of this line in its side's text of the hunk (for syntax).
        side_index: usize,
        hunk: usize,
    },
}

/// A parsed diff, ready to draw at any width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffView {
    pub path: String,
    pub added: usize,
    pub removed: usize,
    rows: Vec<Row>,
    /// Per hunk: the old side's and the new side's text, for highlighting.
    sides: Vec<(String, String)>,
}

impl DiffView {
    pub fn parse(diff: &str) -> Self {
        let mut v = Self {
            path: String::new(),
            added: 0,
            removed: 0,
            rows: Vec::new(),
            sides: Vec::new(),
        };
        let (mut old_no, mut new_no) = (0usize, 0usize);
        for raw in diff.lines() {
            if let Some(p) = raw.strip_prefix("+++ ") {
                v.path = p.strip_prefix("b/").unwrap_or(p).to_string();
                continue;
            }
            if raw.starts_with("--- ") && v.rows.is_empty() {
                continue;
            }
            if let Some(rest) = raw.strip_prefix("@@") {
                let (o, n) = parse_hunk_header(rest);
                old_no = o;
                new_no = n;
                v.rows.push(Row::Hunk(raw.to_string()));
                v.sides.push((String::new(), String::new()));
                continue;
            }
            let hunk = v.sides.len().saturating_sub(1);
            if v.sides.is_empty() {
                v.sides.push((String::new(), String::new()));
            }
            let (kind, text) = match raw.chars().next() {
                Some('+') => (Kind::Added, &raw[1..]),
                Some('-') => (Kind::Removed, &raw[1..]),
                Some(' ') => (Kind::Context, &raw[1..]),
                Some('\\') => {
                    v.rows.push(Row::Note(raw.to_string()));
                    continue;
                }
                _ => (Kind::Context, raw),
            };
            let side = &mut v.sides[hunk];
            let (old, new, side_index) = match kind {
                Kind::Context => {
                    let idx = side.1.lines().count();
                    side.0.push_str(text);
                    side.0.push('\n');
                    side.1.push_str(text);
                    side.1.push('\n');
                    old_no += 1;
                    new_no += 1;
                    (Some(old_no - 1), Some(new_no - 1), idx)
                }
                Kind::Removed => {
                    let idx = side.0.lines().count();
                    side.0.push_str(text);
                    side.0.push('\n');
                    old_no += 1;
                    v.removed += 1;
                    (Some(old_no - 1), None, idx)
                }
                Kind::Added => {
                    let idx = side.1.lines().count();
                    side.1.push_str(text);
                    side.1.push('\n');
                    new_no += 1;
                    v.added += 1;
                    (None, Some(new_no - 1), idx)
                }
            };
            v.rows.push(Row::Line {
                kind,
                old,
                new,
                text: text.to_string(),
                words: Vec::new(),
                side_index,
                hunk,
            });
        }
        v.mark_words();
        v
    }

    /// Pairs each run of removed lines with the added lines after it and
    /// marks the words that differ.
    fn mark_words(&mut self) {
        let mut i = 0;
        while i < self.rows.len() {
            let removed: Vec<usize> = (i..self.rows.len())
                .take_while(|&j| {
                    matches!(
                        self.rows[j],
                        Row::Line {
                            kind: Kind::Removed,
                            ..
                        }
                    )
                })
                .collect();
            if removed.is_empty() {
                i += 1;
                continue;
            }
            let after = i + removed.len();
            let added: Vec<usize> = (after..self.rows.len())
                .take_while(|&j| {
                    matches!(
                        self.rows[j],
                        Row::Line {
                            kind: Kind::Added,
                            ..
                        }
                    )
                })
                .collect();
            for (&r, &a) in removed.iter().zip(&added) {
                let (Row::Line { text: old, .. }, Row::Line { text: new, .. }) =
                    (&self.rows[r], &self.rows[a])
                else {
                    continue;
                };
                let (old_ranges, new_ranges) = word_changes(old, new);
                if let Row::Line { words, .. } = &mut self.rows[r] {
                    *words = old_ranges;
                }
                if let Row::Line { words, .. } = &mut self.rows[a] {
                    *words = new_ranges;
                }
            }
            i = after + added.len();
        }
    }

    /// The diff drawn at `width` columns.
    pub fn lines(&self, theme: &Theme, hl: &Highlighter, width: u16) -> Vec<Line<'static>> {
        let token = Highlighter::token_for_path(&self.path);
        let highlighted: Vec<(Vec<Line<'static>>, Vec<Line<'static>>)> = self
            .sides
            .iter()
            .map(|(old, new)| {
                (
                    hl.highlight(old, &token, theme.text()),
                    hl.highlight(new, &token, theme.text()),
                )
            })
            .collect();
        let num_width = self
            .rows
            .iter()
            .filter_map(|r| match r {
                Row::Line { old, new, .. } => Some(old.unwrap_or(0).max(new.unwrap_or(0))),
                _ => None,
            })
            .max()
            .unwrap_or(0)
            .to_string()
            .len()
            .max(3);
        let mut out = Vec::new();
        for row in &self.rows {
            match row {
                Row::Hunk(h) => out.push(Line::from(Span::styled(h.clone(), theme.accent()))),
                Row::Note(n) => out.push(Line::from(Span::styled(n.clone(), theme.muted()))),
                Row::Line {
                    kind,
                    old,
                    new,
                    text,
                    words,
                    side_index,
                    hunk,
                } => {
                    let (sign, line_style, word_style) = match kind {
                        Kind::Context => (' ', Style::default(), Style::default()),
                        Kind::Added => (
                            '+',
                            Style::default().bg(theme.colors.diff_add_bg),
                            Style::default().bg(theme.colors.diff_add_word_bg),
                        ),
                        Kind::Removed => (
                            '-',
                            Style::default().bg(theme.colors.diff_del_bg),
                            Style::default().bg(theme.colors.diff_del_word_bg),
                        ),
                    };
                    let sign_color = match kind {
                        Kind::Context => theme.colors.muted,
                        Kind::Added => theme.colors.diff_add,
                        Kind::Removed => theme.colors.diff_del,
                    };
                    let num = |n: &Option<usize>| {
                        n.map_or_else(|| " ".repeat(num_width), |n| format!("{n:>num_width$}"))
                    };
                    let gutter = format!("{} {} ", num(old), num(new));
                    let side = highlighted
                        .get(*hunk)
                        .map(|(o, n)| if *kind == Kind::Removed { o } else { n });
                    let content = side
                        .and_then(|lines| lines.get(*side_index))
                        .map(|l| l.spans.clone())
                        .unwrap_or_else(|| vec![Span::styled(text.clone(), theme.text())]);
                    let mut content = patch_style(content, line_style);
                    if !theme.has_color() && *kind != Kind::Context {
                        // Without colour, changed words are underlined instead.
                        content = restyle_ranges(
                            content,
                            words,
                            Style::default().add_modifier(Modifier::UNDERLINED),
                        );
                    } else {
                        content = restyle_ranges(content, words, word_style);
                    }
                    let mut spans = vec![
                        Span::styled(gutter.clone(), theme.muted()),
                        Span::styled(
                            format!("{sign} "),
                            Style::default()
                                .fg(sign_color)
                                .add_modifier(Modifier::BOLD)
                                .patch(line_style),
                        ),
                    ];
                    spans.extend(content);
                    let logical = Logical {
                        line: Line::from(spans),
                        hang: Line::from(vec![
                            Span::raw(" ".repeat(gutter.len())),
                            Span::styled("  ", line_style),
                        ]),
                        hard: true,
                    };
                    wrap(&logical, usize::from(width), &mut out);
                }
            }
        }
        out
    }
}

fn parse_hunk_header(rest: &str) -> (usize, usize) {
    // " -12,5 +12,7 @@ ..."
    let mut old = 1;
    let mut new = 1;
    for part in rest.split_whitespace() {
        let num = |p: &str| p.split(',').next().and_then(|n| n.parse::<usize>().ok());
        if let Some(o) = part.strip_prefix('-').and_then(num) {
            old = o.max(1);
        } else if let Some(n) = part.strip_prefix('+').and_then(num) {
            new = n.max(1);
        } else if part == "@@" {
            break;
        }
    }
    (old, new)
}

/// Byte ranges that changed in `old` and in `new`, by words.
fn word_changes(old: &str, new: &str) -> (Vec<Range<usize>>, Vec<Range<usize>>) {
    let diff = TextDiff::from_words(old, new);
    let (mut o, mut n) = (0usize, 0usize);
    let (mut old_r, mut new_r) = (Vec::new(), Vec::new());
    for change in diff.iter_all_changes() {
        let len = change.value().len();
        match change.tag() {
            ChangeTag::Equal => {
                o += len;
                n += len;
            }
            ChangeTag::Delete => {
                push_range(&mut old_r, o..o + len);
                o += len;
            }
            ChangeTag::Insert => {
                push_range(&mut new_r, n..n + len);
                n += len;
            }
        }
    }
    // A line that changed completely gains nothing from word marks.
    if old_r.iter().map(ExactSizeIterator::len).sum::<usize>() == old.len()
        || new_r.iter().map(ExactSizeIterator::len).sum::<usize>() == new.len()
    {
        return (Vec::new(), Vec::new());
    }
    (old_r, new_r)
}

fn push_range(ranges: &mut Vec<Range<usize>>, r: Range<usize>) {
    if let Some(last) = ranges.last_mut()
        && last.end == r.start
    {
        last.end = r.end;
        return;
    }
    ranges.push(r);
}

fn patch_style(spans: Vec<Span<'static>>, style: Style) -> Vec<Span<'static>> {
    spans
        .into_iter()
        .map(|s| {
            let st = s.style.patch(style);
            Span::styled(s.content, st)
        })
        .collect()
}

/// Patches `style` onto the byte `ranges` of the text the spans hold.
fn restyle_ranges(
    spans: Vec<Span<'static>>,
    ranges: &[Range<usize>],
    style: Style,
) -> Vec<Span<'static>> {
    if ranges.is_empty() {
        return spans;
    }
    let mut out = Vec::new();
    let mut pos = 0;
    for span in spans {
        let text = span.content.as_ref();
        let end = pos + text.len();
        let mut cut = 0;
        for r in ranges.iter().filter(|r| r.start < end && r.end > pos) {
            let a = r.start.max(pos) - pos;
            let b = r.end.min(end) - pos;
            if !text.is_char_boundary(a) || !text.is_char_boundary(b) {
                continue;
            }
            if a > cut {
                out.push(Span::styled(text[cut..a].to_string(), span.style));
            }
            out.push(Span::styled(
                text[a..b].to_string(),
                span.style.patch(style),
            ));
            cut = b;
        }
        if cut < text.len() {
            out.push(Span::styled(text[cut..].to_string(), span.style));
        }
        pos = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use insta::assert_snapshot;

    use super::*;
    use crate::tools::preview::unified_diff;

    fn text(lines: &[Line<'_>]) -> String {
        lines
            .iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_diff_renders_with_numbers_signs_and_hunks() {
        let old = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";
        let new = "fn main() {\n    let x = 2;\n    println!(\"{x}\");\n    done();\n}\n";
        let v = DiffView::parse(&unified_diff("src/main.rs", Some(old), new));
        assert_eq!((v.path.as_str(), v.added, v.removed), ("src/main.rs", 2, 1));
        let lines = v.lines(&Theme::plain(), &Highlighter::new(None), 60);
        assert_snapshot!("diff_view_plain", text(&lines));
    }

    #[test]
    fn changed_words_are_marked() {
        let (o, n) = word_changes("let x = 1;", "let x = 2;");
        assert_eq!(o, vec![(8..10)]);
        assert_eq!(n, vec![(8..10)]);
        let (o, _) = word_changes("abc", "xyz");
        assert!(o.is_empty(), "whole-line changes get no word marks");
        let theme = Theme::dark();
        let v = DiffView::parse(&unified_diff("a.rs", Some("let x = 1;\n"), "let x = 2;\n"));
        let lines = v.lines(&theme, &Highlighter::new(theme.syntax_theme.as_deref()), 40);
        let marked: Vec<&str> = lines
            .iter()
            .flat_map(|l| l.spans.iter())
            .filter(|s| {
                s.style.bg == Some(theme.colors.diff_add_word_bg)
                    || s.style.bg == Some(theme.colors.diff_del_word_bg)
            })
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(marked.concat(), "1;2;");
    }

    #[test]
    fn long_lines_wrap_under_the_gutter() {
        let v = DiffView::parse(&unified_diff(
            "a.txt",
            None,
            &format!("{}\n", "word ".repeat(20)),
        ));
        let lines = v.lines(&Theme::plain(), &Highlighter::new(None), 40);
        assert!(lines.len() > 3);
        assert!(
            text(&lines[2..3]).starts_with("        "),
            "{}",
            text(&lines)
        );
    }

    #[test]
    fn restyling_splits_spans_at_byte_ranges() {
        let spans = vec![Span::raw("héllo "), Span::raw("world")];
        let out = restyle_ranges(
            spans,
            &[Range { start: 4, end: 9 }],
            Style::default().bold(),
        );
        let parts: Vec<&str> = out.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(parts, ["hél", "lo ", "wo", "rld"]);
    }
}
