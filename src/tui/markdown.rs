//! Markdown to styled lines, with pulldown-cmark: headings, paragraphs,
//! emphasis, strong, strikethrough, links, inline code, lists (nested,
//! numbered, tasks), block quotes, rules, tables, and fenced code blocks
//! highlighted with syntect by their language. The output is logical lines;
//! `wrap` fits them to a width, so one parse serves every width.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::highlight::Highlighter;
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
        quote: 0,
        code: None,
        link: None,
        table_row: Vec::new(),
        in_table: false,
    };
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(text, opts) {
        r.event(event);
    }
    r.flush();
    while r.out.last().is_some_and(|l| l.line.spans.is_empty()) {
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
    quote: usize,
    code: Option<(String, String)>,
    link: Option<String>,
    table_row: Vec<String>,
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
            let marker = self.bullet.clone().unwrap_or_default();
            let pad = " ".repeat(marker.width());
            first.push(Span::raw(indent.clone()));
            first.push(Span::styled(marker, self.theme.accent()));
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
        self.out.push(Logical {
            line: Line::from(first),
            hang: Line::from(hang),
            hard: false,
        });
    }

    fn blank(&mut self) {
        if self.out.last().is_some_and(|l| !l.line.spans.is_empty()) {
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
                    self.spans.push(Span::styled(t.into_string(), s));
                }
            }
            Event::SoftBreak => self.spans.push(Span::raw(" ")),
            Event::HardBreak => self.flush(),
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
                    CodeBlockKind::Fenced(info) => {
                        info.split([' ', ',', '{']).next().unwrap_or("").to_string()
                    }
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
                let (mut first, hang) = self.prefixes();
                let cells = std::mem::take(&mut self.table_row);
                let head = matches!(tag, TagEnd::TableHead);
                for (i, cell) in cells.into_iter().enumerate() {
                    if i > 0 {
                        first.push(Span::styled(" │ ", self.theme.border()));
                    }
                    let style = if head {
                        self.theme.text().add_modifier(Modifier::BOLD)
                    } else {
                        self.theme.text()
                    };
                    first.push(Span::styled(cell, style));
                }
                self.out.push(Logical {
                    line: Line::from(first),
                    hang: Line::from(hang),
                    hard: false,
                });
            }
            TagEnd::Table => {
                self.in_table = false;
                self.blank();
            }
            _ => {}
        }
    }

    fn end_code(&mut self) {
        let Some((lang, code)) = self.code.take() else {
            return;
        };
        let (prefix, _) = self.prefixes();
        let gutter = Span::styled("▏ ", self.theme.border());
        if !lang.is_empty() {
            let mut head = prefix.clone();
            head.push(Span::styled(
                lang.clone(),
                self.theme.muted().add_modifier(Modifier::ITALIC),
            ));
            self.out.push(Logical::prose(Line::from(head)));
        }
        for line in self.hl.highlight(&code, &lang, self.theme.text()) {
            let mut spans = prefix.clone();
            spans.push(gutter.clone());
            spans.extend(line.spans);
            let mut hang = prefix.clone();
            hang.push(gutter.clone());
            self.out.push(Logical {
                line: Line::from(spans),
                hang: Line::from(hang),
                hard: true,
            });
        }
        self.blank();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Vec<String> {
        let theme = Theme::plain();
        let hl = Highlighter::new(None);
        render(text, &theme, &hl)
            .iter()
            .map(|l| l.line.spans.iter().map(|s| s.content.as_ref()).collect())
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
                "Some emphasis and strong and code.",
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
        let spans = &lines[0].line.spans;
        assert!(spans[0].style.add_modifier.contains(Modifier::BOLD));
        assert!(spans[2].style.add_modifier.contains(Modifier::ITALIC));
        assert_eq!(spans[4].style.fg, Some(theme.colors.inline_code));
    }

    #[test]
    fn tables_and_tasks_render_readably() {
        let md = "| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo";
        assert_eq!(
            plain(md),
            ["a │ b", "1 │ 2", "", "• [x] done", "• [ ] todo"]
        );
    }

    #[test]
    fn an_unclosed_fence_while_streaming_is_still_code() {
        let lines = plain("Here:\n\n```py\nprint(1)\n");
        assert_eq!(lines, ["Here:", "", "py", "▏ print(1)"]);
    }
}
