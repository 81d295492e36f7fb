//! Text as a person must see it to judge it: characters that show as
//! nothing (zero-width, bidirectional overrides, tags) or that move the
//! cursor (control characters) are named instead, so a file name or a line
//! of a diff cannot hide or spoof anything.

use std::borrow::Cow;

/// Characters that show as nothing, or as a blank, though they are not
/// the space or the tab; and the ones a terminal may draw as anything or
/// nothing: every format character (Unicode's Cf), private use (Co) and
/// code points not assigned yet (Cn).
pub fn is_invisible(c: char) -> bool {
    use unicode_general_category::{GeneralCategory, get_general_category};
    if c.is_ascii() {
        return false;
    }
    if matches!(
        get_general_category(c),
        GeneralCategory::Format
            | GeneralCategory::PrivateUse
            | GeneralCategory::Unassigned
            | GeneralCategory::Surrogate
    ) {
        return true;
    }
    matches!(c,
        '\u{00A0}' | '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}'
        | '\u{1680}' | '\u{17B4}' | '\u{17B5}' | '\u{180B}'..='\u{180F}' | '\u{2000}'..='\u{200F}'
        | '\u{2028}'..='\u{202F}' | '\u{205F}'..='\u{206F}' | '\u{2800}' | '\u{3000}'
        | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{1D173}'..='\u{1D17A}'
        // The other format characters (Unicode's Cf): prepended marks
        // that take the characters after them, and shorthand controls.
        | '\u{0600}'..='\u{0605}' | '\u{06DD}' | '\u{070F}' | '\u{0890}' | '\u{0891}'
        | '\u{08E2}' | '\u{110BD}' | '\u{110CD}' | '\u{13430}'..='\u{1343F}'
        | '\u{1BCA0}'..='\u{1BCA3}'
        // Specials a terminal shows as nothing (unassigned ones too).
        | '\u{FFF0}'..='\u{FFFB}'
        // Tags, variation selectors, and the rest of their plane's
        // unassigned block.
        | '\u{E0000}'..='\u{E0FFF}')
        // Private use and unassigned planes' noncharacters show as
        // anything or nothing.
        || matches!(u32::from(c) & 0xFFFE, 0xFFFE)
        || (0xFDD0..=0xFDEF).contains(&u32::from(c))
}

/// The characters of `s` that would be written as `⟨U+XXXX⟩`, by byte
/// offset: control characters (the tab too unless `keep_tab`) and
/// invisible ones, except the zero-width joiners that build an emoji or
/// an Indic cluster (between two non-ASCII characters).
fn hidden(s: &str, keep_tab: bool) -> impl Iterator<Item = (usize, char)> + '_ {
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    (0..chars.len()).filter_map(move |i| {
        let (at, c) = chars[i];
        let joins = matches!(c, '\u{200C}' | '\u{200D}')
            && i > 0
            && chars.get(i + 1).is_some_and(|(_, n)| !n.is_ascii())
            && !chars[i - 1].1.is_ascii();
        // A variation selector after an emoji or an ideograph picks its
        // form; after a letter of code it only makes a look-alike.
        let selects = matches!(c, '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}')
            && i > 0
            && !chars[i - 1].1.is_ascii()
            && !is_invisible(chars[i - 1].1);
        let shown = (keep_tab && c == '\t') || joins || selects;
        ((c.is_control() || is_invisible(c)) && !shown).then_some((at, c))
    })
}

/// The first character a name may not hold unseen, if any.
pub fn first_hidden(s: &str) -> Option<char> {
    hidden(s, false).next().map(|(_, c)| c)
}

fn escape(s: &str, keep_tab: bool) -> Cow<'_, str> {
    // Most text holds nothing to name: no allocation for it (names and
    // lines are escaped as rows are drawn).
    if !s.chars().any(|c| c.is_control() || is_invisible(c)) {
        return Cow::Borrowed(s);
    }
    let mut marks = hidden(s, keep_tab).peekable();
    if marks.peek().is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut from = 0;
    for (at, c) in marks {
        out.push_str(&s[from..at]);
        out.push_str(&format!("⟨U+{:04X}⟩", u32::from(c)));
        from = at + c.len_utf8();
    }
    out.push_str(&s[from..]);
    Cow::Owned(out)
}

/// A name (a path, a server, a tool) on one line, nothing hidden.
pub fn name(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// Text from elsewhere (a model's choice, a server's words) on one line:
/// blanks of any kind (line breaks, tabs) one space, no control
/// characters.
pub fn one_line(text: &str) -> String {
    text.split_whitespace()
        .map(|w| w.chars().filter(|c| !c.is_control()).collect::<String>())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A line of a file, tabs kept, nothing else hidden.
pub fn line(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

/// Blanks in a row a line of a diff shows as they are; a longer run is
/// counted (`⟨N blanks⟩`): padding must not push the rest of a line out of
/// sight.
const BLANK_RUN: usize = 32;

/// A line of a diff: as [`line()`], and a run of blanks long enough to hide
/// what follows it is counted instead.
pub fn diff_line(s: &str) -> Cow<'_, str> {
    let text = line(s);
    let long_run = text
        .as_bytes()
        .windows(BLANK_RUN)
        .any(|w| w.iter().all(|b| *b == b' ' || *b == b'\t'));
    if !long_run {
        return text;
    }
    let mut out = String::with_capacity(text.len().min(4096));
    let mut run = 0usize;
    let flush = |out: &mut String, run: &mut usize, text: &str, end: usize| {
        if *run >= BLANK_RUN {
            out.push_str(&format!("⟨{run} blanks⟩"));
        } else {
            out.push_str(&text[end - *run..end]);
        }
        *run = 0;
    };
    for (i, c) in text.char_indices() {
        if c == ' ' || c == '\t' {
            run += 1;
            continue;
        }
        flush(&mut out, &mut run, &text, i);
        out.push(c);
    }
    flush(&mut out, &mut run, &text, text.len());
    Cow::Owned(out)
}

/// Characters that show as nothing, or as a blank: padding made of them
/// could push part of a command out of sight.
fn is_blank(c: char) -> bool {
    c != '\n' && (c.is_whitespace() || is_invisible(c))
}

/// A command as the person must see it to judge it: nothing it holds can
/// be hidden by layout. Runs of blanks (of any kind) and of empty lines,
/// which would push the rest out of the dialog, are counted; control
/// characters and blanks other than the space and tab are named.
pub fn command(cmd: &str) -> String {
    const BLANKS: usize = 4;
    let mut out = String::with_capacity(cmd.len().min(64 * 1024));
    let mut empty_lines = 0usize;
    let lines: Vec<&str> = cmd.split('\n').collect();
    let last = lines.len().saturating_sub(1);
    for (i, line) in lines.iter().enumerate() {
        if line.chars().all(is_blank) && i != last {
            empty_lines += 1;
            continue;
        }
        if empty_lines > 1 {
            out.push_str(&format!("⟨{empty_lines} empty lines⟩\n"));
        } else if empty_lines == 1 {
            out.push('\n');
        }
        empty_lines = 0;
        let mut run: Vec<char> = Vec::new();
        let flush = |out: &mut String, run: &mut Vec<char>| {
            let plain = run.iter().all(|&c| c == ' ' || c == '\t');
            match (run.len(), plain) {
                (0, _) => {}
                (n, true) if n < BLANKS => out.extend(run.iter()),
                (n, true) => out.push_str(&format!("⟨{n} blanks⟩")),
                (1, false) => out.push_str(&format!("⟨U+{:04X}⟩", u32::from(run[0]))),
                (n, false) => {
                    let first = run[0];
                    if run.iter().all(|&c| c == first) {
                        out.push_str(&format!("⟨{n} × U+{:04X}⟩", u32::from(first)));
                    } else {
                        out.push_str(&format!("⟨{n} blanks⟩"));
                    }
                }
            }
            run.clear();
        };
        for c in line.chars() {
            if is_blank(c) {
                run.push(c);
                continue;
            }
            flush(&mut out, &mut run);
            if c.is_control() {
                out.push_str(&format!("⟨U+{:04X}⟩", u32::from(c)));
            } else {
                out.push(c);
            }
        }
        flush(&mut out, &mut run);
        if i != last {
            out.push('\n');
        }
    }
    if empty_lines > 0 {
        out.push_str(&format!("⟨{empty_lines} empty lines⟩"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_that_moves_the_cursor_or_hides_survives() {
        assert_eq!(name("src/main.rs"), "src/main.rs");
        assert!(matches!(name("plain"), Cow::Borrowed(_)));
        assert_eq!(
            name("a\n+++ b/evil"),
            "a⟨U+000A⟩+++ b/evil",
            "a newline cannot start a line of its own"
        );
        assert_eq!(name("x\u{1b}[2Jy"), "x⟨U+001B⟩[2Jy");
        assert_eq!(line("if a\u{200B} {\t}"), "if a⟨U+200B⟩ {\t}");
        // Trojan Source: a bidirectional override is named.
        assert_eq!(line("/*\u{202E} } \u{2066}*/"), "/*⟨U+202E⟩ } ⟨U+2066⟩*/");
        assert_eq!(name("a\tb"), "a⟨U+0009⟩b");
        // Joiners inside an emoji or a script are part of the text; a
        // joiner among ASCII letters hides.
        assert_eq!(name("👨\u{200D}👩\u{200D}👧"), "👨\u{200D}👩\u{200D}👧");
        assert_eq!(name("क्\u{200D}ष"), "क्\u{200D}ष");
        assert_eq!(name("ad\u{200D}min"), "ad⟨U+200D⟩min");
        assert_eq!(first_hidden("ok.rs"), None);
        // Variation selectors of every block: a look-alike identifier.
        assert_eq!(line("is_admin\u{E0100} = True"), "is_admin⟨U+E0100⟩ = True");
        assert_eq!(first_hidden("n\u{180B}ame.py"), Some('\u{180B}'));
        assert_eq!(first_hidden("a\u{1D173}b"), Some('\u{1D173}'));
        assert_eq!(line("❤\u{FE0F} ok"), "❤\u{FE0F} ok", "an emoji's form");
        assert_eq!(line("x\u{FE0F}"), "x⟨U+FE0F⟩");
        // Padding that would push a payload out of sight is counted.
        let padded = format!("return user == \"root\"{}or True", " ".repeat(12_000));
        assert_eq!(
            diff_line(&padded),
            "return user == \"root\"⟨12000 blanks⟩or True"
        );
        assert_eq!(
            diff_line("        indented\tcode"),
            "        indented\tcode"
        );
        assert_eq!(first_hidden("o\u{202E}k"), Some('\u{202E}'));
        // The third round's: a shorthand format control that hid which
        // file a server runs, the specials, the rest of the tag plane,
        // a prepended mark that takes the `;` after it.
        for c in [
            '\u{1BCA1}',
            '\u{FFF0}',
            '\u{E0200}',
            '\u{E0FFF}',
            '\u{0600}',
            '\u{FFFF}',
            // A second look: private use (a font's icons, or nothing),
            // unassigned code points of every plane.
            '\u{E000}',
            '\u{F8FF}',
            '\u{F0000}',
            '\u{10FFFD}',
            '\u{0378}',
            '\u{2FFFF}',
            '\u{50000}',
            '\u{E01F0}',
        ] {
            assert_eq!(
                first_hidden(&format!("server{c}.js")),
                Some(c),
                "{:X}",
                u32::from(c)
            );
        }
        assert_eq!(
            command("node 'server\u{1BCA1}.js'"),
            "node 'server⟨U+1BCA1⟩.js'"
        );
        // Ordinary scripts and symbols stay as they are.
        for ok in ["données", "東京", "Ελληνικά", "→ ✓", "😀"] {
            assert_eq!(first_hidden(ok), None, "{ok}");
        }
    }
}

/// Whatever a name, a line or a command holds, what is shown of it
/// hides nothing and drives no terminal.
#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;

    fn hides(c: char) -> bool {
        c.is_control() || is_invisible(c)
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: if std::env::var_os("PROPTEST_CASES").is_some() {
                ProptestConfig::default().cases
            } else {
                256
            },
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn nothing_shown_hides_or_drives_the_terminal(text in prop_oneof![
            any::<String>(),
            "[\\x00-\\x1f\\x7f-\\u{9f}\\u{200b}-\\u{200f}\\u{202a}-\\u{202e}a ]{0,40}",
        ]) {
            // Joiners and variation selectors after a non-ASCII character
            // build or pick a glyph: they may stay. A control character
            // never does.
            let joins = |s: &str, i: usize, c: char| {
                !c.is_control()
                    && matches!(c, '\u{200C}' | '\u{200D}' | '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}')
                    && s[..i].chars().next_back().is_some_and(|p| !p.is_ascii())
            };
            let name = name(&text);
            for (i, c) in name.char_indices() {
                prop_assert!(!hides(c) || joins(&name, i, c), "{:?} in {:?}", c, name);
            }
            let shown = line(&text);
            for (i, c) in shown.char_indices() {
                prop_assert!(c == '\t' || !hides(c) || joins(&shown, i, c), "{:?} in {:?}", c, shown);
            }
            let cmd = command(&text);
            prop_assert!(!cmd.contains('\u{1b}') && !cmd.contains('\r'), "{:?}", cmd);
        }
    }
}
