//! Wrapping styled lines to a width, by display columns counted per
//! grapheme cluster (`width`), so a cut never splits a cluster.
//!
//! Prose wraps at word boundaries, with a hanging indent for continuation
//! lines (list items, quotes); a word longer than the width is split.
//! Code wraps at the column. Styles survive the cut.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;

use super::width;

/// Styled text held compactly: the text in one allocation and the style of
/// each run (where it ends), adjacent runs of one style merged. A long
/// transcript or code block holds many of these.
#[derive(Debug, Clone, PartialEq, Default)]
struct Styled {
    text: Box<str>,
    runs: Box<[(u32, Style)]>,
}

impl Styled {
    fn from_spans(spans: &[Span<'_>]) -> Self {
        let mut text = String::with_capacity(spans.iter().map(|s| s.content.len()).sum());
        let mut runs: Vec<(u32, Style)> = Vec::with_capacity(spans.len());
        for span in spans.iter().filter(|s| !s.content.is_empty()) {
            text.push_str(&span.content);
            let end = u32::try_from(text.len()).unwrap_or(u32::MAX);
            match runs.last_mut() {
                Some((last_end, style)) if *style == span.style => *last_end = end,
                _ => runs.push((end, span.style)),
            }
        }
        Self {
            text: text.into_boxed_str(),
            runs: runs.into_boxed_slice(),
        }
    }

    /// Each run's text and style.
    fn runs(&self) -> impl Iterator<Item = (&str, Style)> {
        let mut start = 0usize;
        self.runs.iter().map(move |&(end, style)| {
            let end = (end as usize).min(self.text.len());
            let piece = self.text.get(start..end).unwrap_or("");
            start = end;
            (piece, style)
        })
    }

    fn spans(&self) -> Vec<Span<'static>> {
        self.runs()
            .map(|(t, style)| Span::styled(t.to_string(), style))
            .collect()
    }

    fn width(&self) -> usize {
        width::of(&self.text)
    }

    /// Puts `span` in front.
    fn prepend(&mut self, span: &Span<'_>) {
        let mut spans = vec![span.clone()];
        spans.extend(self.runs().map(|(t, style)| Span::styled(t, style)));
        *self = Self::from_spans(&spans);
    }
}

/// A logical line before wrapping.
#[derive(Debug, Clone, PartialEq)]
pub struct Logical {
    line: Styled,
    line_style: Style,
    /// Prepended to every continuation line (e.g. the indent of a list item).
    hang: Styled,
    /// Wrap at the column instead of at words.
    pub hard: bool,
}

impl Logical {
    /// A line that continues behind `hang` when it wraps. Tabs left in it
    /// expand to stops counted from its start (a terminal buffer would
    /// drop them).
    pub fn new(line: Line<'_>, hang: Line<'_>, hard: bool) -> Self {
        let spans = if line.spans.iter().any(|s| s.content.contains('\t')) {
            let owned = line
                .spans
                .iter()
                .map(|s| Span::styled(s.content.to_string(), s.style));
            Styled::from_spans(&expand_tabs(owned.collect(), false))
        } else {
            Styled::from_spans(&line.spans)
        };
        Self {
            line: spans,
            line_style: line.style,
            hang: Styled::from_spans(&hang.spans),
            hard,
        }
    }

    pub fn prose(line: Line<'_>) -> Self {
        Self::new(line, Line::default(), false)
    }

    pub fn code(line: Line<'_>) -> Self {
        Self::new(line, Line::default(), true)
    }

    /// The line, unwrapped.
    #[cfg(any(test, feature = "internals"))]
    pub fn line(&self) -> Line<'static> {
        Line::from(self.line.spans()).style(self.line_style)
    }

    /// Its text, unwrapped.
    #[cfg(any(test, feature = "internals"))]
    pub fn text(&self) -> &str {
        &self.line.text
    }

    pub fn is_empty(&self) -> bool {
        self.line.text.is_empty()
    }

    /// Puts `first` in front of the line, `hang` in front of its
    /// continuations.
    pub fn lead(&mut self, first: &Span<'_>, hang: &Span<'_>) {
        self.line.prepend(first);
        self.hang.prepend(hang);
    }

    /// Puts `span` in front of the line and of its continuations.
    pub fn indent(&mut self, span: &Span<'_>) {
        self.line.prepend(span);
        self.hang.prepend(span);
    }
}

/// Columns between tab stops.
pub const TAB: usize = 4;

/// Expands tabs to the next tab stop, counting columns from the start of
/// `spans` (so text keeps its alignment behind any gutter). With `mark`,
/// a tab shows as a dim `→` and spaces, so whitespace can be reviewed.
pub fn expand_tabs(spans: Vec<Span<'static>>, mark: bool) -> Vec<Span<'static>> {
    if !spans.iter().any(|s| s.content.contains('\t')) {
        return spans;
    }
    let mut col = 0;
    let mut out = Vec::with_capacity(spans.len() + 2);
    for span in spans {
        if !span.content.contains('\t') {
            col += width::of(&span.content);
            out.push(span);
            continue;
        }
        let mut run = String::new();
        for g in span.content.graphemes(true) {
            if g != "\t" {
                run.push_str(g);
                col += width::of_grapheme(g);
                continue;
            }
            let n = TAB - col % TAB;
            col += n;
            if mark {
                if !run.is_empty() {
                    out.push(Span::styled(std::mem::take(&mut run), span.style));
                }
                out.push(Span::styled(
                    format!("→{}", " ".repeat(n - 1)),
                    span.style.add_modifier(ratatui::style::Modifier::DIM),
                ));
            } else {
                run.extend(std::iter::repeat_n(' ', n));
            }
        }
        if !run.is_empty() {
            out.push(Span::styled(run, span.style));
        }
    }
    out
}

/// How many rows `logical` takes at `width` columns.
pub fn rows(logical: &Logical, width: usize) -> usize {
    if logical.line.width() <= width.max(1) {
        return 1;
    }
    let mut scratch = Vec::new();
    wrap(logical, width, &mut scratch);
    scratch.len()
}

/// Wraps `logical` to `width` columns.
pub fn wrap(logical: &Logical, width: usize, out: &mut Vec<Line<'static>>) {
    let width = width.max(1);
    if logical.line.width() <= width {
        // Fits: no cut to make.
        out.push(Line::from(logical.line.spans()).style(logical.line_style));
        return;
    }
    let hang_width = logical.hang.width();
    // One styled grapheme cluster at a time; fine for the lengths chat
    // text has (long lines that fit took the early return).
    let units: Vec<Unit<'_>> = logical
        .line
        .runs()
        .flat_map(|(t, style)| {
            width::graphemes(t).map(move |(text, cols)| Unit { text, cols, style })
        })
        .collect();
    if units.is_empty() {
        out.push(Line::default().style(logical.line_style));
        return;
    }
    let is_space = |u: &Unit<'_>| u.text == " ";
    let mut start = 0;
    let mut first = true;
    while start < units.len() {
        let avail = if first {
            width
        } else {
            width.saturating_sub(hang_width).max(1)
        };
        let mut cols = 0;
        let mut end = start;
        let mut last_space = None;
        while end < units.len() {
            let w = units[end].cols;
            if cols + w > avail {
                break;
            }
            if is_space(&units[end]) {
                last_space = Some(end);
            }
            cols += w;
            end += 1;
        }
        if end == start {
            // A cluster wider than the line: take it anyway.
            end = start + 1;
        } else if end < units.len()
            && !logical.hard
            && !is_space(&units[end])
            && let Some(sp) = last_space.filter(|&sp| sp > start)
        {
            end = sp + 1;
        }
        let mut spans = Vec::new();
        if !first {
            spans.extend(logical.hang.spans());
        }
        let mut piece = &units[start..end];
        if !logical.hard && end < units.len() {
            // Drop the trailing space the line broke at.
            while let Some((last, rest)) = piece.split_last()
                && is_space(last)
            {
                piece = rest;
            }
        }
        push_runs(piece, &mut spans);
        out.push(Line::from(spans).style(logical.line_style));
        start = end;
        if !logical.hard {
            // Spaces at the break do not start the next line.
            while start < units.len() && is_space(&units[start]) {
                start += 1;
            }
        }
        first = false;
    }
}

/// A grapheme cluster with its columns and style.
struct Unit<'a> {
    text: &'a str,
    cols: usize,
    style: Style,
}

fn push_runs(piece: &[Unit<'_>], spans: &mut Vec<Span<'static>>) {
    let mut run = String::new();
    let mut style = None;
    for unit in piece {
        if style != Some(unit.style) {
            if let Some(st) = style {
                spans.push(Span::styled(std::mem::take(&mut run), st));
            }
            style = Some(unit.style);
        }
        run.push_str(unit.text);
    }
    if let Some(st) = style {
        spans.push(Span::styled(run, st));
    }
}

/// Lines as the text they show, one string each (for tests).
#[cfg(test)]
pub fn plain(lines: &[Line<'_>]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use ratatui::style::{Style, Stylize};

    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn prose_wraps_at_words() {
        let mut out = Vec::new();
        wrap(
            &Logical::prose(Line::from("the quick brown fox jumps")),
            10,
            &mut out,
        );
        assert_eq!(texts(&out), ["the quick", "brown fox", "jumps"]);
    }

    #[test]
    fn long_words_are_split_and_code_wraps_at_the_column() {
        let mut out = Vec::new();
        wrap(&Logical::prose(Line::from("abcdefghijkl xy")), 5, &mut out);
        assert_eq!(texts(&out), ["abcde", "fghij", "kl xy"]);
        let mut out = Vec::new();
        wrap(&Logical::code(Line::from("let x = 1; let y")), 8, &mut out);
        assert_eq!(texts(&out), ["let x = ", "1; let y"]);
    }

    #[test]
    fn hanging_indents_and_styles_survive() {
        let mut out = Vec::new();
        let line = Line::from(vec![Span::raw("• "), Span::raw("one two "), "three".bold()]);
        let logical = Logical::new(line, Line::from("  "), false);
        wrap(&logical, 9, &mut out);
        assert_eq!(texts(&out), ["• one two", "  three"]);
        assert_eq!(out[1].spans.last().unwrap().style, Style::default().bold());
    }

    #[test]
    fn wide_characters_count_double() {
        let mut out = Vec::new();
        wrap(&Logical::code(Line::from("漢字漢字")), 5, &mut out);
        assert_eq!(texts(&out), ["漢字", "漢字"]);
    }

    #[test]
    fn clusters_are_never_split() {
        let mut out = Vec::new();
        wrap(&Logical::code(Line::from("🇯🇵🇯🇵👨‍👩‍👧क्षिक्षि")), 3, &mut out);
        assert_eq!(texts(&out), ["🇯🇵", "🇯🇵", "👨‍👩‍👧", "क्षि", "क्षि"]);
        for line in &out {
            assert!(line.width() <= 3, "{line:?}");
        }
    }

    #[test]
    fn rows_counts_what_wrap_makes() {
        for text in [
            "",
            "short",
            "the quick brown fox jumps over",
            "漢字漢字漢字",
            "a b c d e f g h",
            "🇯🇵🇯🇵 👨‍👩‍👧 क्षि e\u{301}e\u{301} ｶﾞ",
        ] {
            for width in 1..12 {
                for l in [
                    Logical::prose(Line::from(text)),
                    Logical::code(Line::from(text)),
                ] {
                    let mut out = Vec::new();
                    wrap(&l, width, &mut out);
                    assert_eq!(rows(&l, width), out.len(), "{text:?} at {width}");
                }
            }
        }
    }

    #[test]
    fn tabs_expand_to_the_next_stop() {
        let text =
            |spans: &[Span<'_>]| spans.iter().map(|s| s.content.as_ref()).collect::<String>();
        let out = expand_tabs(vec![Span::raw("\tx"), Span::raw("ab\tc")], false);
        assert_eq!(text(&out), "    xab c");
        let out = expand_tabs(vec![Span::raw("a\tb\t\tc")], true);
        assert_eq!(text(&out), "a→  b→  →   c");
        let out = expand_tabs(vec![Span::raw("漢\t🇯🇵\tx")], false);
        assert_eq!(text(&out), "漢  🇯🇵  x");
        let plain = vec![Span::raw("no tabs")];
        assert_eq!(expand_tabs(plain.clone(), true), plain);
    }

    #[test]
    fn empty_lines_stay() {
        let mut out = Vec::new();
        wrap(&Logical::prose(Line::default()), 10, &mut out);
        assert_eq!(out.len(), 1);
    }
}
