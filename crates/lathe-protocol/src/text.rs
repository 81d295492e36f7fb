//! Cutting text without breaking it: at most so many bytes, characters
//! or terminal columns, always on a character boundary, marked when cut.
//! Every place that shortens text for a person, a log or the model uses
//! these.

use unicode_width::UnicodeWidthChar;

/// The longest prefix of `s` of at most `max` bytes that ends on a
/// character boundary.
pub fn cut(s: &str, max: usize) -> &str {
    &s[..s.floor_char_boundary(max)]
}

/// The longest suffix of `s` of at most `max` bytes that starts on a
/// character boundary.
pub fn cut_tail(s: &str, max: usize) -> &str {
    &s[s.ceil_char_boundary(s.len().saturating_sub(max))..]
}

/// At most `max` bytes of `s`, with `…` when cut.
pub fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    format!("{}…", cut(s, max))
}

/// At most `max` characters of `s`, with `…` (counted) when cut.
pub fn shorten_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some(_) => {
            let keep: String = s.chars().take(max.saturating_sub(1)).collect();
            format!("{keep}…")
        }
    }
}

/// The longest prefix of `s` that takes at most `width` terminal columns.
pub fn cut_columns(s: &str, width: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        used += c.width().unwrap_or(0);
        if used > width {
            return &s[..i];
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_never_split_a_character() {
        let s = "aé😀b";
        for max in 0..=s.len() {
            let c = cut(s, max);
            assert!(c.len() <= max && s.starts_with(c));
            let t = cut_tail(s, max);
            assert!(t.len() <= max && s.ends_with(t));
        }
        assert_eq!(shorten("abcdef", 3), "abc…");
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("é😀", 3), "é…");
        assert_eq!(shorten_chars("abcdef", 4), "abc…");
        assert_eq!(shorten_chars("abcd", 4), "abcd");
        assert_eq!(cut_columns("a漢字b", 3), "a漢");
        assert_eq!(cut_columns("abc", 10), "abc");
    }
}
