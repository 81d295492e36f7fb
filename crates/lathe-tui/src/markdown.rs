//! Markdown to styled lines, with pulldown-cmark: headings, paragraphs,
//! emphasis, strong, strikethrough, links, inline code, lists (nested,
//! numbered, tasks), block quotes, rules, tables, and fenced code blocks
//! highlighted with syntect by their language. The output is logical lines;
//! `wrap` fits them to a width, so one parse serves every width.
//!
//! A message that streams in is laid out by [`Stream`]: the text is cut
//! into top-level blocks at points where a cut cannot change how either
//! side renders (a blank line before an unindented line that does not
//! continue a list, and around unindented fenced code), each complete block
//! is rendered once, and only the block still growing is rendered again on
//! each delta. A fenced code block still growing is highlighted a line at a
//! time as its lines complete, so a long one costs the same per delta at
//! line 2,000 as at line 2.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::highlight::{self, Highlighter};
use super::theme::Theme;
use super::wrap::Logical;

/// Renders `text` as logical lines.
pub fn render(text: &str, theme: &Theme, hl: &Highlighter) -> Vec<Logical> {
    let mut r = Renderer {
        theme,
        hl,
        out: Vec::new(),
        spans: Vec::new(),
        styles: vec![theme.text()],
        lists: Vec::new(),
        bullet: None,
        item_pad: 0,
        quote: 0,
        code: None,
        link: None,
        table_row: Vec::new(),
        table: Vec::new(),
        in_table: false,
    };
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(text, opts) {
        r.event(event);
    }
    r.flush();
    while r.out.last().is_some_and(Logical::is_empty) {
        r.out.pop();
    }
    r.out
}

struct Renderer<'a> {
    theme: &'a Theme,
    hl: &'a Highlighter,
    out: Vec<Logical>,
    spans: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// Each open list: the next number, or `None` for bullets.
    lists: Vec<Option<u64>>,
    /// The marker of the list item whose first line is not out yet.
    bullet: Option<String>,
    /// The width of the current list item's marker: its later lines
    /// start under its text.
    item_pad: usize,
    quote: usize,
    code: Option<(String, String)>,
    link: Option<String>,
    table_row: Vec<String>,
    /// The rows of the table being read (whether each is the header),
    /// laid out at its end so the columns line up.
    table: Vec<(bool, Vec<String>)>,
    in_table: bool,
}

impl Renderer<'_> {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, f: impl FnOnce(Style) -> Style) {
        let s = f(self.style());
        self.styles.push(s);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    /// Quote bars, then list indentation.
    fn prefixes(&self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::new();
        for _ in 0..self.quote {
            first.push(Span::styled("│ ", self.theme.muted()));
        }
        let mut hang = first.clone();
        let depth = self.lists.len();
        if depth > 0 {
            let indent = "  ".repeat(depth - 1);
            let pad = " ".repeat(self.item_pad);
            first.push(Span::raw(indent.clone()));
            match self.bullet.clone() {
                Some(marker) => first.push(Span::styled(marker, self.theme.accent())),
                // A later line of the item: under its text.
                None => first.push(Span::raw(pad.clone())),
            }
            hang.push(Span::raw(format!("{indent}{pad}")));
        }
        (first, hang)
    }

    fn flush(&mut self) {
        if self.spans.is_empty() && self.bullet.is_none() {
            return;
        }
        let (mut first, hang) = self.prefixes();
        self.bullet = None;
        first.append(&mut self.spans);
        self.out
            .push(Logical::new(Line::from(first), Line::from(hang), false));
    }

    fn blank(&mut self) {
        if self.out.last().is_some_and(|l| !l.is_empty()) {
            self.out.push(Logical::prose(Line::default()));
        }
    }

    fn event(&mut self, event: Event<'_>) {
        if let Some((_, buf)) = &mut self.code {
            match event {
                Event::Text(t) => buf.push_str(&t),
                Event::End(TagEnd::CodeBlock) => self.end_code(),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => {
                if self.in_table {
                    if let Some(cell) = self.table_row.last_mut() {
                        cell.push_str(&t);
                    }
                } else {
                    let s = self.style();
                    self.spans.push(Span::styled(t.into_string(), s));
                }
            }
            Event::Code(t) => {
                if self.in_table {
                    if let Some(cell) = self.table_row.last_mut() {
                        cell.push_str(&t);
                    }
                } else {
                    let s = self.theme.fg(self.theme.colors.inline_code);
                    // Without colour, the backticks are what shows it is code.
                    let text = if self.theme.has_color() {
                        t.into_string()
                    } else {
                        format!("`{t}`")
                    };
                    self.spans.push(Span::styled(text, s));
                }
            }
            // The model's line breaks are kept (a terminal shows its lines
            // as written; a paragraph is not reflowed into one line).
            Event::SoftBreak | Event::HardBreak => self.flush(),
            Event::Rule => {
                self.flush();
                self.out.push(Logical::prose(Line::from(Span::styled(
                    "─".repeat(24),
                    self.theme.border(),
                ))));
                self.blank();
            }
            Event::Html(t) | Event::InlineHtml(t) => {
                self.spans
                    .push(Span::styled(t.trim_end().to_string(), self.theme.muted()));
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                self.spans.push(Span::styled(mark, self.theme.accent()));
            }
            Event::FootnoteReference(t) => self.spans.push(Span::raw(format!("[{t}]"))),
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Heading { level, .. } => {
                self.flush();
                let color = self.theme.colors.heading;
                self.push_style(|_| {
                    let s = Style::default().fg(color).add_modifier(Modifier::BOLD);
                    if level == HeadingLevel::H1 {
                        s.add_modifier(Modifier::UNDERLINED)
                    } else {
                        s
                    }
                });
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.quote += 1;
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => fence_language(&info),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.flush();
                if self.lists.is_empty() {
                    self.blank();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_string(),
                };
                self.item_pad = marker.width();
                self.bullet = Some(marker);
            }
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                let color = self.theme.colors.link;
                self.push_style(|s| s.fg(color).add_modifier(Modifier::UNDERLINED));
                self.link = Some(dest_url.into_string());
            }
            Tag::Table(_) => {
                self.flush();
                self.in_table = true;
            }
            Tag::TableRow | Tag::TableHead => self.table_row.clear(),
            Tag::TableCell => self.table_row.push(String::new()),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            TagEnd::Heading(_) => {
                self.pop_style();
                self.flush();
                self.blank();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quote = self.quote.saturating_sub(1);
                self.blank();
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            TagEnd::Item => self.flush(),
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link => {
                self.pop_style();
                if let Some(url) = self.link.take() {
                    let shown: String = self
                        .spans
                        .iter()
                        .rev()
                        .take(1)
                        .map(|s| s.content.to_string())
                        .collect();
                    if shown != url && !url.is_empty() {
                        self.spans
                            .push(Span::styled(format!(" ({url})"), self.theme.muted()));
                    }
                }
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                let cells = std::mem::take(&mut self.table_row);
                self.table.push((matches!(tag, TagEnd::TableHead), cells));
            }
            TagEnd::Table => {
                self.in_table = false;
                self.end_table();
                self.blank();
            }
            _ => {}
        }
    }

    /// The table read, its columns padded to line up, a rule under the
    /// header.
    fn end_table(&mut self) {
        let rows = std::mem::take(&mut self.table);
        let columns = rows.iter().map(|(_, r)| r.len()).max().unwrap_or(0);
        let mut widths = vec![0usize; columns];
        for (_, r) in &rows {
            for (i, cell) in r.iter().enumerate() {
                widths[i] = widths[i].max(crate::width::of(cell.trim()));
            }
        }
        for (head, cells) in rows {
            let (mut first, hang) = self.prefixes();
            for (i, width) in widths.iter().enumerate() {
                if i > 0 {
                    first.push(Span::styled(" │ ", self.theme.border()));
                }
                let cell = cells.get(i).map_or("", |c| c.trim());
                // The last column needs no padding (trailing blanks would
                // only wrap).
                let pad = if i + 1 == widths.len() {
                    0
                } else {
                    width.saturating_sub(crate::width::of(cell))
                };
                let style = if head {
                    self.theme.text().add_modifier(Modifier::BOLD)
                } else {
                    self.theme.text()
                };
                first.push(Span::styled(format!("{cell}{}", " ".repeat(pad)), style));
            }
            self.out.push(Logical::new(
                Line::from(first),
                Line::from(hang.clone()),
                false,
            ));
            if head {
                let (mut rule, hang) = self.prefixes();
                let line = widths
                    .iter()
                    .map(|w| "─".repeat(*w))
                    .collect::<Vec<_>>()
                    .join("─┼─");
                rule.push(Span::styled(line, self.theme.border()));
                self.out
                    .push(Logical::new(Line::from(rule), Line::from(hang), false));
            }
        }
    }

    fn end_code(&mut self) {
        let Some((lang, code)) = self.code.take() else {
            return;
        };
        let (prefix, _) = self.prefixes();
        if !lang.is_empty() {
            self.out.push(code_header(&prefix, &lang, self.theme));
        }
        for line in self.hl.highlight(&code, &lang, self.theme.text()) {
            self.out.push(code_line(&prefix, line, self.theme));
        }
        self.blank();
    }
}

fn fence_language(info: &str) -> String {
    info.trim()
        .split([' ', ',', '{'])
        .next()
        .unwrap_or("")
        .to_string()
}

/// The line above a fenced block that names its language.
fn code_header(prefix: &[Span<'static>], lang: &str, theme: &Theme) -> Logical {
    let mut head = prefix.to_vec();
    head.push(Span::styled(
        lang.to_string(),
        theme.muted().add_modifier(Modifier::ITALIC),
    ));
    Logical::prose(Line::from(head))
}

/// One line of a code block, behind its gutter; it wraps at the column.
fn code_line(prefix: &[Span<'static>], line: Line<'static>, theme: &Theme) -> Logical {
    let gutter = Span::styled("▏ ", theme.border());
    let mut spans = prefix.to_vec();
    spans.push(gutter.clone());
    // Tab stops count from the start of the code, not of the screen.
    spans.extend(super::wrap::expand_tabs(line.spans, false));
    let mut hang = prefix.to_vec();
    hang.push(gutter);
    Logical::new(Line::from(spans), Line::from(hang), true)
}

/// A fence: its character and length.
type Fence = (u8, usize);

/// The fence and language of a line that opens a fenced code block, and
/// its indentation.
fn opening_fence(line: &str) -> Option<(Fence, String, usize)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.bytes().take_while(|&b| b == ch).count();
    if len < 3 {
        return None;
    }
    let info = &rest[len..];
    if ch == b'`' && info.contains('`') {
        return None;
    }
    Some(((ch, len), fence_language(info), indent))
}

/// Whether `line` closes a block opened by `fence`.
fn closes(line: &str, (ch, len): Fence) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let rest = &line[indent..];
    let run = rest.bytes().take_while(|&b| b == ch).count();
    run >= len && rest[run..].trim().is_empty()
}

/// Whether `line` starts a list item (`-`, `*`, `+`, `1.`, `1)`).
fn starts_list_item(line: &str) -> bool {
    let b = line.as_bytes();
    let after_marker = match b.first() {
        Some(b'-' | b'*' | b'+') => 1,
        Some(c) if c.is_ascii_digit() => {
            let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
            if digits > 9 || !matches!(b.get(digits), Some(b'.' | b')')) {
                return false;
            }
            digits + 1
        }
        _ => return false,
    };
    matches!(b.get(after_marker), None | Some(b' ' | b'\t' | b'\r'))
}

/// Where the top-level block that starts `text` ends, judged on complete
/// lines only.
enum Cut {
    /// A block of prose ends at this byte (the next one starts there).
    Prose(usize),
    /// Prose ends at `prose_end`; an unindented fence line follows, up to
    /// `body`, where the code starts.
    Fence {
        prose_end: usize,
        body: usize,
        fence: Fence,
        lang: String,
    },
}

fn next_cut(text: &str) -> Option<Cut> {
    let mut pos = 0;
    let mut blank_before = false;
    let mut content = false;
    // A fence indented under a list item, which prose cuts must not split.
    let mut inner: Option<Fence> = None;
    while let Some(nl) = text[pos..].find('\n') {
        let end = pos + nl + 1;
        let line = text[pos..end].trim_end_matches(['\n', '\r']);
        if let Some(fence) = inner {
            if closes(line, fence) {
                inner = None;
            }
            blank_before = false;
            pos = end;
            continue;
        }
        if let Some((fence, lang, indent)) = opening_fence(line) {
            if indent == 0 {
                return Some(Cut::Fence {
                    prose_end: pos,
                    body: end,
                    fence,
                    lang,
                });
            }
            inner = Some(fence);
        }
        if line.trim().is_empty() {
            blank_before = true;
        } else {
            let flush_left = !line.starts_with([' ', '\t']);
            if blank_before && content && flush_left && !starts_list_item(line) {
                return Some(Cut::Prose(pos));
            }
            blank_before = false;
            content = true;
        }
        pos = end;
    }
    None
}

/// A fenced code block still open.
struct OpenCode {
    fence: Fence,
    lines: highlight::Lines,
}

/// An assistant message laid out as it grows (see the module docs).
#[derive(Default)]
pub struct Stream {
    /// Bytes of the text laid out for good.
    pub(crate) done: usize,
    /// Logical lines laid out for good.
    stable: usize,
    /// A blank line is owed before the next content, at `stable`.
    sep_stable: bool,
    sep: bool,
    code: Option<OpenCode>,
}

impl Stream {
    /// Lays out `text`, which extends the text of the last call, into
    /// `out` (the lines of the last call). Returns how many leading lines
    /// of `out` are unchanged. Every line starts with `indent`; the last is
    /// blank.
    pub fn update(
        &mut self,
        text: &str,
        indent: &Span<'static>,
        theme: &Theme,
        hl: &Highlighter,
        out: &mut Vec<Logical>,
    ) -> usize {
        if text.len() < self.done || !text.is_char_boundary(self.done) || out.len() < self.stable {
            *self = Self::default();
        }
        out.truncate(self.stable);
        let kept = self.stable;
        self.sep = self.sep_stable;
        loop {
            if let Some(code) = &mut self.code {
                let mut closed = false;
                while let Some(nl) = text[self.done..].find('\n') {
                    let end = self.done + nl + 1;
                    let line = &text[self.done..end];
                    self.done = end;
                    if closes(line.trim_end_matches(['\n', '\r']), code.fence) {
                        closed = true;
                        break;
                    }
                    let l = code_line(&[], code.lines.line(line), theme);
                    emit(&mut self.sep, indent, l, out);
                }
                if closed {
                    self.code = None;
                    self.sep = true;
                    self.mark_stable(out);
                    continue;
                }
                let fence = code.fence;
                self.mark_stable(out);
                let rest = &text[self.done..];
                // A closing fence still missing its newline shows nothing.
                if !rest.is_empty() && !closes(rest.trim_end_matches('\r'), fence) {
                    let partial = Line::from(Span::styled(
                        rest.trim_end_matches('\r').to_string(),
                        theme.text(),
                    ));
                    emit(&mut self.sep, indent, code_line(&[], partial, theme), out);
                }
                break;
            }
            let rest = &text[self.done..];
            match next_cut(rest) {
                Some(Cut::Prose(end)) => {
                    self.prose(&rest[..end], indent, theme, hl, out);
                    self.done += end;
                    self.mark_stable(out);
                }
                Some(Cut::Fence {
                    prose_end,
                    body,
                    fence,
                    lang,
                }) => {
                    self.prose(&rest[..prose_end], indent, theme, hl, out);
                    if !lang.is_empty() {
                        emit(&mut self.sep, indent, code_header(&[], &lang, theme), out);
                    }
                    self.code = Some(OpenCode {
                        fence,
                        lines: hl.lines(&lang, theme.text()),
                    });
                    self.done += body;
                    self.mark_stable(out);
                }
                None => {
                    self.prose(rest, indent, theme, hl, out);
                    break;
                }
            }
        }
        let mut end = Logical::prose(Line::default());
        end.indent(indent);
        out.push(end);
        kept
    }

    fn mark_stable(&mut self, out: &[Logical]) {
        self.stable = out.len();
        self.sep_stable = self.sep;
    }

    /// A block of prose, rendered whole.
    fn prose(
        &mut self,
        text: &str,
        indent: &Span<'static>,
        theme: &Theme,
        hl: &Highlighter,
        out: &mut Vec<Logical>,
    ) {
        let lines = render(text, theme, hl);
        if lines.is_empty() {
            return;
        }
        for l in lines {
            emit(&mut self.sep, indent, l, out);
        }
        self.sep = true;
    }
}

/// Pushes `line` behind `indent`, after the blank line owed, if any.
fn emit(sep: &mut bool, indent: &Span<'static>, mut line: Logical, out: &mut Vec<Logical>) {
    if std::mem::take(sep) && !out.is_empty() {
        out.push(Logical::new(
            Line::from(indent.clone()),
            Line::from(indent.clone()),
            false,
        ));
    }
    line.indent(indent);
    out.push(line);
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: if std::env::var_os("PROPTEST_CASES").is_some() {
                proptest::test_runner::Config::default().cases
            } else {
                128
            },
            failure_persistence: None,
            ..proptest::test_runner::Config::default()
        })]

        /// Whatever the model writes: it renders without panic, and every
        /// line fits any width once wrapped.
        #[test]
        fn any_answer_renders(text in proptest::prelude::prop_oneof![
            proptest::prelude::any::<String>(),
            "([#>*`_~\\[\\]()|!\\-+0-9. \t\n]|[a-zé😀]|\\|[ -]+\\|){0,120}",
        ]) {
            let theme = Theme::plain();
            let hl = Highlighter::new(None);
            for line in render(&text, &theme, &hl) {
                for width in [1, 7, 80] {
                    let mut out = Vec::new();
                    crate::wrap::wrap(&line, width, &mut out);
                    proptest::prop_assert_eq!(out.len().max(1), crate::wrap::rows(&line, width).max(1));
                }
            }
            let _ = code_blocks(&text);
        }
    }

    /// The model's line breaks are kept: a paragraph's lines, a list
    /// item's continued lines (under its text), a quote's lines.
    #[test]
    fn line_breaks_are_kept_as_written() {
        assert_eq!(
            plain("Roses are red,\nviolets are blue.\n\nDone."),
            ["Roses are red,", "violets are blue.", "", "Done."]
        );
        let list = plain("- first item\n  goes on here\n- second");
        assert_eq!(list.len(), 3, "{list:?}");
        assert!(
            list[1].trim_start() == "goes on here" && list[1].starts_with(' '),
            "{list:?}"
        );
        let quote = plain("> one\n> two");
        assert_eq!(quote.len(), 2, "{quote:?}");
    }

    fn plain(text: &str) -> Vec<String> {
        let theme = Theme::plain();
        let hl = Highlighter::new(None);
        render(text, &theme, &hl)
            .iter()
            .map(|l| l.text().to_string())
            .collect()
    }

    #[test]
    fn blocks_render_with_their_markers() {
        let md = "# Title\n\nSome *emphasis* and **strong** and `code`.\n\n- one\n- two\n  1. nested\n\n> quoted\n\n```rust\nfn main() {}\n```\n\n---\n\nSee [docs](https://x.dev).";
        assert_eq!(
            plain(md),
            [
                "Title",
                "",
                "Some emphasis and strong and `code`.",
                "",
                "• one",
                "• two",
                "  1. nested",
                "",
                "│ quoted",
                "",
                "rust",
                "▏ fn main() {}",
                "",
                "────────────────────────",
                "",
                "See docs (https://x.dev).",
            ]
        );
    }

    #[test]
    fn styles_follow_the_markup() {
        let theme = Theme::dark();
        let hl = Highlighter::new(theme.syntax_theme.as_deref());
        let lines = render("**bold** _it_ `c`", &theme, &hl);
        let first = lines[0].line();
        let spans = &first.spans;
        assert!(spans[0].style.add_modifier.contains(Modifier::BOLD));
        assert!(spans[2].style.add_modifier.contains(Modifier::ITALIC));
        assert_eq!(spans[4].style.fg, Some(theme.colors.inline_code));
    }

    #[test]
    fn tables_and_tasks_render_readably() {
        let md = "| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo";
        assert_eq!(
            plain(md),
            ["a │ b", "──┼──", "1 │ 2", "", "• [x] done", "• [ ] todo"]
        );
    }

    const SAMPLES: [&str; 6] = [
        "# Title\n\nSome *emphasis* and **strong**.\nA second line.\n\n- one\n- two\n  1. nested\n\n> quoted\n> more\n\n```rust\nfn main() {\n    let x = 1;\n\n    println!(\"{x}\");\n}\n```\n\n---\n\nSee [docs](https://x.dev).",
        "Intro:\n```py\nprint(1)\n```\nAfter.\n\n1. a\n\n2. b\n\n   para in b\n\nEnd",
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo\n\n```\n```\n\nMore\n\n~~~~\ncode ``` inside\n~~~~\n",
        "- item\n  ```\n  a\n\n  b\n  ```\n\nnext\n\n    indented code\n\n    more\n\nlast",
        "no newline at the end ```js\nx\n```",
        "```go\nfunc main() {\n\tfmt.Println(1)\n}\n```",
    ];

    fn texts(lines: &[Logical]) -> Vec<String> {
        lines.iter().map(|l| l.text().to_string()).collect()
    }

    /// Streamed in pieces of any size, a message ends up laid out as if it
    /// had been rendered whole, and lines reported unchanged never change.
    #[test]
    fn streaming_lays_out_what_rendering_whole_does() {
        let theme = Theme::dark();
        let hl = Highlighter::new(theme.syntax_theme.as_deref());
        let indent = Span::raw("  ");
        for sample in SAMPLES {
            let mut whole = render(sample, &theme, &hl);
            for l in &mut whole {
                l.indent(&indent);
            }
            for step in [1, 2, 3, 7, 50, 10_000] {
                let mut stream = Stream::default();
                let mut out = Vec::new();
                let mut end = 0;
                while end < sample.len() {
                    end = (end + step).min(sample.len());
                    while !sample.is_char_boundary(end) {
                        end += 1;
                    }
                    let before = out.clone();
                    let kept = stream.update(&sample[..end], &indent, &theme, &hl, &mut out);
                    assert_eq!(out[..kept], before[..kept], "{sample:?} at {end}");
                }
                let last = out.pop().expect("a final blank line");
                assert_eq!(texts(std::slice::from_ref(&last)), ["  "]);
                assert_eq!(texts(&out), texts(&whole), "{sample:?} by {step}");
                assert_eq!(out, whole, "{sample:?} by {step}: styles");
            }
        }
    }

    /// Lines of a growing code block are highlighted once each.
    #[test]
    fn a_growing_code_block_keeps_its_finished_lines() {
        let theme = Theme::plain();
        let hl = Highlighter::new(None);
        let indent = Span::raw("");
        let mut stream = Stream::default();
        let mut out = Vec::new();
        let mut text = String::from("Here:\n\n```rust\n");
        stream.update(&text, &indent, &theme, &hl, &mut out);
        for i in 0..2000 {
            text.push_str(&format!("let x{i} = {i};\n"));
            let kept = stream.update(&text, &indent, &theme, &hl, &mut out);
            assert_eq!(kept, out.len() - 2, "only the new line and the end are new");
        }
        text.push_str("let partial");
        let kept = stream.update(&text, &indent, &theme, &hl, &mut out);
        assert_eq!(kept, out.len() - 2);
        assert_eq!(texts(&out[out.len() - 2..out.len() - 1]), ["▏ let partial"]);
    }

    #[test]
    fn an_unclosed_fence_while_streaming_is_still_code() {
        let lines = plain("Here:\n\n```py\nprint(1)\n");
        assert_eq!(lines, ["Here:", "", "py", "▏ print(1)"]);
    }
}

/// The fenced and indented code blocks of `text`, in order, as written
/// (no gutter, no wrapping: what a copy should give).
pub fn code_blocks(text: &str) -> Vec<String> {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for event in Parser::new(text) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => current = Some(String::new()),
            Event::Text(t) => {
                if let Some(c) = current.as_mut() {
                    c.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(c) = current.take() {
                    out.push(c);
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod code_block_tests {
    #[test]
    fn code_blocks_come_out_as_written() {
        let text =
            "Run:\n\n```sh\ncargo test\n```\n\nand\n\n~~~rust\nfn main() {\n    x();\n}\n~~~\n";
        assert_eq!(
            super::code_blocks(text),
            ["cargo test\n", "fn main() {\n    x();\n}\n"]
        );
    }

    /// Columns line up whatever the cells' widths (wide characters too).
    #[test]
    fn table_columns_line_up() {
        let md = "| name | size |\n|---|---|\n| main.rs | 12 KiB |\n| 漢字.txt | 3 |\n";
        let theme = crate::theme::Theme::plain();
        let hl = crate::highlight::Highlighter::new(None);
        let lines: Vec<String> = super::render(md, &theme, &hl)
            .iter()
            .map(|l| l.text().to_string())
            .collect();
        assert_eq!(
            lines,
            [
                "name     │ size",
                "─────────┼───────",
                "main.rs  │ 12 KiB",
                "漢字.txt │ 3",
            ]
        );
    }
}
