//! The one way the UI counts columns.
//!
//! A terminal cell holds a grapheme cluster, not a `char`: a flag is two
//! regional indicators, a family emoji is five code points joined by
//! zero-width joiners, a Devanagari conjunct is a consonant, a virama and a
//! consonant. Counting per `char` makes wrapping, column alignment and
//! cursor placement disagree with what ratatui's buffer draws, which leaves
//! ghosts and misaligned columns. Everything that measures, cuts or pads
//! text goes through here, and here counts exactly as the buffer does
//! (`ratatui::buffer::CellWidth` per cluster; clusters holding a control
//! character are not drawn, so they take no columns).

use std::borrow::Cow;

use ratatui::buffer::CellWidth;
use unicode_segmentation::UnicodeSegmentation;

/// The columns one grapheme cluster takes on screen.
pub fn of_grapheme(g: &str) -> usize {
    if g.contains(char::is_control) {
        0
    } else {
        usize::from(g.cell_width())
    }
}

/// Each grapheme cluster of `s` with the columns it takes.
pub fn graphemes(s: &str) -> Box<dyn Iterator<Item = (&str, usize)> + '_> {
    if s.is_ascii() {
        // Each byte is a cluster (CR LF aside, which takes no columns
        // either way): no segmentation needed.
        return Box::new((0..s.len()).map(move |i| {
            let g = s.get(i..=i).unwrap_or("");
            (g, usize::from(!g.bytes().all(|b| b.is_ascii_control())))
        }));
    }
    Box::new(s.graphemes(true).map(|g| (g, of_grapheme(g))))
}

/// The columns `s` takes on screen.
pub fn of(s: &str) -> usize {
    if s.is_ascii() {
        // One column per printable byte; control bytes are not drawn.
        return s.bytes().filter(|b| !b.is_ascii_control()).count();
    }
    graphemes(s).map(|(_, w)| w).sum()
}

/// `s` cut to at most `cols` columns, whole clusters only; `…` marks a cut.
pub fn truncate(s: &str, cols: usize) -> Cow<'_, str> {
    if of(s) <= cols {
        return Cow::Borrowed(s);
    }
    if cols == 0 {
        return Cow::Borrowed("");
    }
    let mut out = String::new();
    let mut used = 0;
    for (g, w) in graphemes(s) {
        if used + w > cols - 1 {
            break;
        }
        used += w;
        out.push_str(g);
    }
    out.push('…');
    Cow::Owned(out)
}

/// `s` in exactly `cols` columns: cut with `…`, or padded with spaces.
pub fn fit(s: &str, cols: usize) -> String {
    let cut = truncate(s, cols);
    let pad = cols.saturating_sub(of(&cut));
    let mut out = cut.into_owned();
    out.extend(std::iter::repeat_n(' ', pad));
    out
}

/// The number of `char`s in the cluster that ends at char index `col` of
/// `line` (0 at the start of the line).
pub fn chars_before(line: &str, col: usize) -> usize {
    let mut chars = 0;
    let mut last = 0;
    for g in line.graphemes(true) {
        if chars >= col {
            break;
        }
        last = g.chars().count();
        chars += last;
    }
    last
}

/// The number of `char`s in the cluster that starts at char index `col` of
/// `line` (0 at the end of the line).
pub fn chars_after(line: &str, col: usize) -> usize {
    let mut chars = 0;
    for g in line.graphemes(true) {
        let n = g.chars().count();
        if chars >= col {
            return n;
        }
        chars += n;
    }
    0
}

/// The char index of the cluster boundary at or after char index `col`.
pub fn boundary_at_or_after(line: &str, col: usize) -> usize {
    let mut chars = 0;
    for g in line.graphemes(true) {
        if chars >= col {
            return chars;
        }
        chars += g.chars().count();
    }
    chars
}

/// Fails if a drawn screen (`TestBackend`'s text) has a glyph left in a
/// cell that a wide cluster covers: a ghost the terminal would show.
#[cfg(test)]
pub fn assert_no_ghosts(screen: &str) {
    for line in screen.lines() {
        let Some((_, hidden)) = line.split_once("Hidden by multi-width symbols: ") else {
            continue;
        };
        let rest: String = hidden
            .split("\" \")")
            .map(|part| part.trim_start_matches(['[', ']', ',', ' ', '(']))
            .map(|part| {
                part.trim_end_matches(|c: char| {
                    c.is_ascii_digit() || c == ',' || c == ' ' || c == '('
                })
            })
            .collect();
        assert!(
            rest.trim_matches(['[', ']', ')']).is_empty(),
            "a ghost in {line}"
        );
    }
}

#[cfg(test)]
mod tests {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    use super::*;

    /// The samples that break per-`char` counting.
    const HARD: [&str; 8] = [
        "🇯🇵",         // flag: two regional indicators
        "👨‍👩‍👧",         // ZWJ family: five code points
        "क्षि",        // Devanagari conjunct with a vowel sign
        "e\u{301}",   // e + combining acute
        "漢字",       // wide
        "ｶﾞ",          // halfwidth katakana + voiced mark
        "👍🏽",         // emoji + skin tone modifier
        "a\u{200b}b", // zero-width space
    ];

    #[test]
    fn counts_as_the_buffer_draws() {
        for s in HARD {
            let mut buf = Buffer::empty(Rect::new(0, 0, 20, 1));
            let (x, _) = buf.set_stringn(0, 0, s, 20, ratatui::style::Style::default());
            assert_eq!(of(s), usize::from(x), "{s:?}");
        }
    }

    #[test]
    fn cuts_and_pads_whole_clusters() {
        assert_eq!(truncate("🇯🇵🇯🇵🇯🇵", 5), "🇯🇵🇯🇵…");
        assert_eq!(truncate("👨‍👩‍👧x", 2), "…");
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(fit("漢", 4), "漢  ");
        assert_eq!(of(&fit("👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧", 5)), 5);
        assert_eq!(fit("abc", 0), "");
    }

    #[test]
    fn cluster_sizes_around_a_position() {
        let line = "a👨‍👩‍👧b";
        assert_eq!(chars_after(line, 1), 5);
        assert_eq!(chars_before(line, 6), 5);
        assert_eq!(chars_before(line, 0), 0);
        assert_eq!(chars_after(line, 7), 0);
        assert_eq!(boundary_at_or_after(line, 3), 6);
        assert_eq!(boundary_at_or_after(line, 1), 1);
    }
}
