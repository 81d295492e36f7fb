//! What the binary writes to the terminal itself (warnings, errors, the
//! sessions and MCP listings) passes one function, [`shown`]: a warning
//! quotes a repository's rule, an error a server's body, a listing a
//! session's first words, and none of them may drive the terminal (an
//! escape sequence that sets the title or writes the clipboard is
//! dropped) or hide a character (control and invisible ones are named).

use std::borrow::Cow;

/// `text` as it may reach a terminal: escape sequences dropped, control
/// and invisible characters named (line breaks and tabs kept).
pub fn shown(text: &str) -> String {
    let plain: Cow<'_, str> = if text.contains(['\x1b', '\u{9b}', '\u{9d}']) {
        Cow::Owned(anstream::adapter::strip_str(text).to_string())
    } else {
        Cow::Borrowed(text)
    };
    plain
        .split('\n')
        .map(|line| lathe_core::front::protocol::visible::line(line).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A line on stderr, [`shown`].
macro_rules! say {
    ($($arg:tt)*) => {
        eprintln!("{}", crate::say::shown(&format!($($arg)*)))
    };
}

pub(crate) use say;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_dropped_and_hidden_characters_named() {
        let hostile =
            "rule `a\x1b]52;c;ZXZpbA==\x07b` \x1b]0;pwned\x07in\x1b[2J \u{202e}txt.exe\u{7}";
        let out = shown(hostile);
        assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
        assert!(out.contains("⟨U+202E⟩"), "{out:?}");
        assert_eq!(shown("two\nlines\tand a tab"), "two\nlines\tand a tab");
        assert!(!shown("a C1 \u{9b}31m csi").contains('\u{9b}'));
    }
}
