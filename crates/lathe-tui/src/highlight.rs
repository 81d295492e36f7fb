//! Syntax highlighting with syntect, for fenced code blocks and diffs.
//!
//! The syntax and theme sets are loaded once, lazily (a background thread
//! warms them at start-up so the first frame never waits). A language is
//! found by its fence token (`rust`, `py`) or a file extension; unknown
//! ones are plain text. Highlighting yields one styled line per code line,
//! foreground colours only, so the UI's own backgrounds show through.
#![allow(clippy::disallowed_methods)]

use std::sync::LazyLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, ThemeSet};
use syntect::parsing::{SyntaxReference, SyntaxSet};

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);
static THEMES: LazyLock<ThemeSet> = LazyLock::new(ThemeSet::load_defaults);

/// Loads the syntax and theme sets on a background thread.
pub fn warm_up() {
    std::thread::spawn(|| {
        LazyLock::force(&SYNTAXES);
        LazyLock::force(&THEMES);
    });
}

/// Highlights code for one syntect theme (or not at all).
#[derive(Debug, Clone)]
pub struct Highlighter {
    theme: Option<String>,
}

impl Highlighter {
    /// `theme` is a syntect theme name; `None` (no colour) leaves code plain.
    pub fn new(theme: Option<&str>) -> Self {
        let theme = theme
            .filter(|t| THEMES.themes.contains_key(*t))
            .map(str::to_string);
        Self { theme }
    }

    fn syntax_for(&self, token: &str) -> Option<&'static SyntaxReference> {
        let token = token.trim();
        if token.is_empty() {
            return None;
        }
        SYNTAXES
            .find_syntax_by_token(token)
            .or_else(|| SYNTAXES.find_syntax_by_extension(token))
    }

    /// The language token of a path, for `highlight` (its extension).
    pub fn token_for_path(path: &str) -> String {
        std::path::Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_string()
    }

    /// One styled line per line of `code`, in language `token`.
    pub fn highlight(&self, code: &str, token: &str, base: Style) -> Vec<Line<'static>> {
        let mut lines = self.lines(token, base);
        syntect::util::LinesWithEndings::from(code)
            .map(|l| lines.line(l))
            .collect()
    }

    /// Highlights code a line at a time, in order, keeping the parser's
    /// state between lines: a block that grows is highlighted once per line.
    pub fn lines(&self, token: &str, base: Style) -> Lines {
        let inner = match (&self.theme, self.syntax_for(token)) {
            (Some(theme_name), Some(syntax)) => THEMES
                .themes
                .get(theme_name)
                .map(|theme| HighlightLines::new(syntax, theme)),
            _ => None,
        };
        Lines { inner, base }
    }
}

/// Highlighting state that runs through a block of code (see
/// [`Highlighter::lines`]).
pub struct Lines {
    inner: Option<HighlightLines<'static>>,
    base: Style,
}

impl Lines {
    /// The next line (with or without its line ending), styled. After a
    /// parse error the rest of the block stays plain.
    pub fn line(&mut self, line: &str) -> Line<'static> {
        let plain = |base: Style| {
            Line::from(Span::styled(
                line.trim_end_matches(['\n', '\r']).to_string(),
                base,
            ))
        };
        let Some(h) = &mut self.inner else {
            return plain(self.base);
        };
        let Ok(regions) = h.highlight_line(line, &SYNTAXES) else {
            self.inner = None;
            return plain(self.base);
        };
        let base = self.base;
        Line::from(
            regions
                .into_iter()
                .filter_map(|(style, text)| {
                    let text = text.trim_end_matches(['\n', '\r']);
                    (!text.is_empty()).then(|| Span::styled(text.to_string(), convert(style, base)))
                })
                .collect::<Vec<_>>(),
        )
    }
}

fn convert(s: syntect::highlighting::Style, base: Style) -> Style {
    let mut style = base.fg(Color::Rgb(s.foreground.r, s.foreground.g, s.foreground.b));
    if s.font_style.contains(FontStyle::BOLD) {
        style = style.add_modifier(Modifier::BOLD);
    }
    if s.font_style.contains(FontStyle::ITALIC) {
        style = style.add_modifier(Modifier::ITALIC);
    }
    style
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_languages_get_colours_and_unknown_ones_stay_plain() {
        let h = Highlighter::new(Some("base16-ocean.dark"));
        let lines = h.highlight("fn main() {\n    let x = 1;\n}\n", "rust", Style::default());
        assert_eq!(lines.len(), 3);
        let colours: std::collections::HashSet<_> = lines
            .iter()
            .flat_map(|l| l.spans.iter().map(|s| s.style.fg))
            .collect();
        assert!(colours.len() > 2, "several colours: {colours:?}");
        let text: String = lines[1].spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "    let x = 1;");

        let plain = h.highlight("a\nb", "no-such-language", Style::default());
        assert_eq!(plain.len(), 2);
        assert_eq!(plain[0].spans[0].style.fg, None);
    }

    #[test]
    fn without_a_theme_nothing_is_coloured() {
        let h = Highlighter::new(None);
        let lines = h.highlight("fn main() {}", "rust", Style::default());
        assert!(lines[0].spans.iter().all(|s| s.style.fg.is_none()));
    }

    #[test]
    fn paths_map_to_their_extension() {
        assert_eq!(Highlighter::token_for_path("src/main.rs"), "rs");
        assert_eq!(Highlighter::token_for_path("Makefile"), "");
    }
}
