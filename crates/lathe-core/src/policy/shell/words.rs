//! Shell words after quote removal: quotes and backslashes are removed,
//! `$'…'` is decoded, `~`, `$HOME`, `$PWD` and literal variables of the
//! line are expanded, brace expansion turns one word into several (bash
//! expands `{rm,-rf,x}` into three words), and anything known only at run
//! time (other variables, substitutions, arithmetic) makes the word
//! `dynamic`. Unquoted `*`, `?` and `[…]` make it a `glob`. Where bash
//! evaluates a string as code (arithmetic, `${x@P}`, `${!x}`), the walker
//! is told, so a line that also carries a literal `$(…)` is refused.

use tree_sitter::Node;

use super::MAX_BRACE_WORDS;
use super::walk::{Var, Walker, descendants, kids, named, text};
use crate::protocol::operation::Word;

/// How a character came to be in a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quote {
    /// As written, unquoted: braces, tildes and globs apply.
    Bare,
    /// Quoted or escaped: taken literally.
    Quoted,
    /// From an unquoted variable: globs apply, braces do not.
    Expanded,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ch(char, Quote),
    /// A part known only at run time, as written, and what is known of it.
    Dyn(String, DynKind),
    /// A variable was expanded here (its value, if known, follows).
    Var,
}

/// What is known of a part known only at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DynKind {
    Unknown,
    /// A loop variable over paths in the workspace.
    Paths,
    /// Never empty: `${X:?}` stops the line, a `mktemp` result is a path.
    NonEmpty,
}

/// Most unquoted braces a word may have before brace expansion is not
/// attempted (the word counts as dynamic).
const MAX_BRACES: usize = 32;
/// Longest word brace expansion is attempted on.
const MAX_BRACE_TEXT: usize = 4096;

impl Walker<'_> {
    /// The words `n` stands for (more than one after brace expansion).
    pub(super) fn words(&mut self, s: &str, n: Node<'_>) -> Vec<Word> {
        let mut toks = Vec::new();
        self.toks(s, n, &mut toks);
        self.tilde(&mut toks);
        self.note_literal_code(&toks);
        let braces = toks
            .iter()
            .filter(|t| **t == Tok::Ch('{', Quote::Bare))
            .count();
        let expanded = if braces > MAX_BRACES || toks.len() > MAX_BRACE_TEXT {
            None
        } else {
            expand_braces(&toks)
        };
        match expanded {
            Some(list) => list.iter().map(|t| to_word(t)).collect(),
            None => vec![Word {
                dynamic: true,
                known_prefix: 0,
                ..to_word(&toks)
            }],
        }
    }

    /// One word, without brace expansion (an assignment's value).
    pub(super) fn words_no_brace(&mut self, s: &str, n: Node<'_>) -> Word {
        let mut toks = Vec::new();
        self.toks(s, n, &mut toks);
        self.tilde(&mut toks);
        self.note_literal_code(&toks);
        to_word(&toks)
    }

    /// A literal `$(` or backtick is harmless text, unless bash evaluates
    /// the string somewhere (see `Walker::evaluates`).
    fn note_literal_code(&mut self, toks: &[Tok]) {
        // A run-time part may supply the `$` or the `(` (`${U:-$}(cmd)`).
        let shape: String = toks
            .iter()
            .filter_map(|t| match t {
                Tok::Ch(c, _) => Some(*c),
                Tok::Dyn(..) => Some('\u{1}'),
                Tok::Var => None,
            })
            .collect();
        if ["$(", "`", "\u{1}(", "$\u{1}", "\u{1}`"]
            .iter()
            .any(|p| shape.contains(p))
        {
            self.code_in_literal = true;
        }
    }

    fn toks(&mut self, s: &str, n: Node<'_>, out: &mut Vec<Tok>) {
        if self.depth >= super::MAX_DEPTH {
            self.unchecked("it nests too deeply to check".into());
            out.push(Tok::Dyn(text(s, n).to_string(), DynKind::Unknown));
            return;
        }
        self.depth += 1;
        self.toks_inner(s, n, out);
        self.depth -= 1;
    }

    fn toks_inner(&mut self, s: &str, n: Node<'_>, out: &mut Vec<Tok>) {
        let src = text(s, n);
        match n.kind() {
            "word" | "regex" | "extglob_pattern" | "variable_name" | "brace_expression" => {
                bare(src, out);
            }
            "number" if named(n).is_empty() => bare(src, out),
            "raw_string" => {
                let inner = src
                    .strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(src);
                out.extend(inner.chars().map(|c| Tok::Ch(c, Quote::Quoted)));
            }
            "string" => self.double_quoted(s, n, out),
            "translated_string" => {
                for c in named(n) {
                    self.toks(s, c, out);
                }
            }
            "ansi_c_string" => match decode_ansi_c(src) {
                Some(v) => out.extend(v.chars().map(|c| Tok::Ch(c, Quote::Quoted))),
                None => out.push(Tok::Dyn(src.to_string(), DynKind::Unknown)),
            },
            "concatenation" => {
                for c in kids(n) {
                    if c.is_named() {
                        self.toks(s, c, out);
                    } else {
                        bare(text(s, c), out);
                    }
                }
            }
            "simple_expansion" | "expansion" => self.expansion(s, n, Quote::Expanded, out),
            "command_substitution" => {
                self.substitution(s, n, "command substitution");
                out.push(Tok::Dyn(src.to_string(), DynKind::Unknown));
            }
            "process_substitution" => {
                self.substitution(s, n, "process substitution");
                out.push(Tok::Dyn(src.to_string(), DynKind::Unknown));
            }
            "arithmetic_expansion" => {
                self.arithmetic(s, n);
                out.push(Tok::Dyn(src.to_string(), DynKind::Unknown));
            }
            _ => {
                self.scan(s, n);
                out.push(Tok::Dyn(src.to_string(), DynKind::Unknown));
            }
        }
    }

    /// `$((…))`: bash evaluates the values of the variables it names as
    /// arithmetic, which runs `a[$(…)]` hidden in a value.
    pub(super) fn arithmetic(&mut self, s: &str, n: Node<'_>) {
        let names_variables = std::iter::once(n).chain(descendants(n)).any(|d| {
            matches!(
                d.kind(),
                "variable_name" | "simple_expansion" | "expansion" | "subscript"
            )
        });
        if names_variables {
            self.evaluates("evaluates variables as arithmetic");
        }
        self.scan(s, n);
    }

    fn double_quoted(&mut self, s: &str, n: Node<'_>, out: &mut Vec<Tok>) {
        for c in kids(n) {
            let t = text(s, c);
            match c.kind() {
                "string_content" => dq_content(t, out),
                "simple_expansion" | "expansion" => self.expansion(s, c, Quote::Quoted, out),
                "command_substitution" => {
                    self.substitution(s, c, "command substitution");
                    out.push(Tok::Dyn(t.to_string(), DynKind::Unknown));
                }
                "arithmetic_expansion" => {
                    self.arithmetic(s, c);
                    out.push(Tok::Dyn(t.to_string(), DynKind::Unknown));
                }
                "\"" => {}
                _ if c.is_named() => {
                    self.scan(s, c);
                    out.push(Tok::Dyn(t.to_string(), DynKind::Unknown));
                }
                _ => out.extend(t.chars().map(|ch| Tok::Ch(ch, Quote::Quoted))),
            }
        }
    }

    /// `$NAME` or `${NAME}`: known values are substituted; anything else
    /// (operators, unknown names, special parameters) is dynamic.
    fn expansion(&mut self, s: &str, n: Node<'_>, quote: Quote, out: &mut Vec<Tok>) {
        let src = text(s, n);
        let parts = named(n);
        out.push(Tok::Var);
        let operators: Vec<&str> = kids(n)
            .into_iter()
            .filter(|k| !k.is_named())
            .map(|k| text(s, k))
            .filter(|t| !matches!(*t, "$" | "${" | "}"))
            .collect();
        if operators.iter().any(|o| *o == "!" || *o == "@") {
            self.evaluates("expands a variable indirectly or as a prompt (${!x}, ${x@P})");
        }
        let named_var = parts.first().filter(|p| p.kind() == "variable_name");
        let plain = parts.len() == 1 && named_var.is_some() && operators.is_empty();
        // `${X:?}`, `${X?}`: X, or the line stops. `${X:-d}`: X if set and
        // not empty, else d.
        let guarded = operators.iter().any(|o| matches!(*o, "?" | ":?"));
        let defaulted = operators == [":-"];
        let known = named_var.map(|v| self.lookup(text(s, *v)));
        if !plain {
            for p in &parts {
                self.scan(s, *p);
            }
            if let Some(Var::Known(v)) = &known
                && (guarded || defaulted)
                && !v.is_empty()
                && (quote == Quote::Quoted || !v.contains(char::is_whitespace))
            {
                out.extend(v.chars().map(|c| Tok::Ch(c, quote)));
                return;
            }
            let default_text = parts.get(1).map(|d| text(s, *d)).unwrap_or("");
            let nonempty = guarded
                || matches!(known, Some(Var::Temp))
                || (defaulted && !default_text.is_empty() && !default_text.contains('$'));
            let kind = if nonempty {
                DynKind::NonEmpty
            } else {
                DynKind::Unknown
            };
            out.push(Tok::Dyn(src.to_string(), kind));
            return;
        }
        match known.unwrap_or(Var::Unknown) {
            // Unquoted, a value with white space splits into several words.
            Var::Known(v) if quote == Quote::Quoted || !v.contains(char::is_whitespace) => {
                out.extend(v.chars().map(|c| Tok::Ch(c, quote)));
            }
            Var::Paths => out.push(Tok::Dyn(src.to_string(), DynKind::Paths)),
            Var::Temp => out.push(Tok::Dyn(src.to_string(), DynKind::NonEmpty)),
            _ => out.push(Tok::Dyn(src.to_string(), DynKind::Unknown)),
        }
    }

    /// A variable's value when the line makes it known.
    pub(super) fn lookup(&self, name: &str) -> Var {
        if let Some(v) = self.vars.get(name) {
            return v.clone();
        }
        let known = |p: Option<&std::path::PathBuf>| {
            p.map_or(Var::Unknown, |p| Var::Known(p.display().to_string()))
        };
        match name {
            "HOME" => known(self.env.home.as_ref()),
            "PWD" => known(self.cwd.as_ref()),
            "TMPDIR" => Var::Known(self.env.tmpdir.clone()),
            _ => Var::Unknown,
        }
    }

    /// A leading unquoted `~` or `~/…` is the home directory.
    fn tilde(&self, toks: &mut Vec<Tok>) {
        if toks.first() != Some(&Tok::Ch('~', Quote::Bare)) {
            return;
        }
        let end = toks
            .iter()
            .position(|t| matches!(t, Tok::Ch('/', _)))
            .unwrap_or(toks.len());
        if end == 2 && toks[1] == Tok::Ch('+', Quote::Bare) {
            // `~+` is $PWD.
            let replacement: Vec<Tok> = match self.lookup("PWD") {
                Var::Known(pwd) => pwd.chars().map(|c| Tok::Ch(c, Quote::Quoted)).collect(),
                _ => vec![Tok::Dyn("~+".into(), DynKind::Unknown)],
            };
            toks.splice(..2, replacement);
            return;
        }
        if end != 1 {
            // `~user`, `~-` (OLDPWD): not followed here.
            let prefix = render(&toks[..end]);
            toks.splice(..end, [Tok::Dyn(prefix, DynKind::Unknown)]);
            return;
        }
        let replacement: Vec<Tok> = match self.lookup("HOME") {
            Var::Known(home) => home.chars().map(|c| Tok::Ch(c, Quote::Quoted)).collect(),
            _ => vec![Tok::Dyn("~".into(), DynKind::Unknown)],
        };
        toks.splice(..1, replacement);
    }
}

/// Unquoted text: a backslash quotes the next character; backslash-newline
/// disappears.
fn bare(t: &str, out: &mut Vec<Tok>) {
    let mut chars = t.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') => {}
                Some(next) => out.push(Tok::Ch(next, Quote::Quoted)),
                None => out.push(Tok::Ch('\\', Quote::Quoted)),
            }
        } else {
            out.push(Tok::Ch(c, Quote::Bare));
        }
    }
}

/// Inside double quotes a backslash escapes only `$`, `` ` ``, `"`, `\`
/// and a newline.
fn dq_content(t: &str, out: &mut Vec<Tok>) {
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && matches!(next, '$' | '`' | '"' | '\\' | '\n')
        {
            chars.next();
            if next != '\n' {
                out.push(Tok::Ch(next, Quote::Quoted));
            }
            continue;
        }
        out.push(Tok::Ch(c, Quote::Quoted));
    }
}

fn render(toks: &[Tok]) -> String {
    let mut s = String::new();
    for t in toks {
        match t {
            Tok::Ch(c, _) => s.push(*c),
            Tok::Dyn(d, _) => s.push_str(d),
            Tok::Var => {}
        }
    }
    s
}

fn to_word(toks: &[Tok]) -> Word {
    let mut glob = false;
    let mut open_bracket = false;
    for t in toks {
        if let Tok::Ch(c, q) = *t
            && q != Quote::Quoted
        {
            match c {
                '*' | '?' => glob = true,
                '[' => open_bracket = true,
                ']' if open_bracket => glob = true,
                _ => {}
            }
        }
    }
    let dynamic = toks.iter().any(|t| matches!(t, Tok::Dyn(..)));
    let first_dyn = toks
        .iter()
        .position(|t| matches!(t, Tok::Dyn(..)))
        .unwrap_or(toks.len());
    let known_prefix = render(&toks[..first_dyn]).len();
    let real: Vec<&Tok> = toks.iter().filter(|t| **t != Tok::Var).collect();
    let bounded = matches!(real.as_slice(), [Tok::Dyn(_, DynKind::Paths)]);
    // Never empty, and nothing after it climbs back out (`$d/../..`).
    let nonempty = matches!(
        toks.iter()
            .find(|t| matches!(t, Tok::Dyn(..) | Tok::Ch(..))),
        Some(Tok::Dyn(_, DynKind::NonEmpty))
    ) && !render(toks).split('/').any(|c| c == "..");
    Word {
        text: render(toks),
        dynamic,
        glob: glob && !dynamic,
        expanded: toks.iter().any(|t| matches!(t, Tok::Var | Tok::Dyn(..))),
        known_prefix,
        bounded,
        nonempty,
    }
}

/// Bash's brace expansion on unquoted braces: `{a,b}` alternatives and
/// `{1..3}` / `{a..c}` sequences. `None` when it would make too many words.
fn expand_braces(toks: &[Tok]) -> Option<Vec<Vec<Tok>>> {
    let bare_at = |i: usize, c: char| toks.get(i) == Some(&Tok::Ch(c, Quote::Bare));
    for open in 0..toks.len() {
        if !bare_at(open, '{') {
            continue;
        }
        let mut depth = 0usize;
        let mut commas = Vec::new();
        let mut close = None;
        for j in open + 1..toks.len() {
            if bare_at(j, '{') {
                depth += 1;
            } else if bare_at(j, '}') {
                if depth == 0 {
                    close = Some(j);
                    break;
                }
                depth -= 1;
            } else if bare_at(j, ',') && depth == 0 {
                commas.push(j);
            }
        }
        let Some(close) = close else { continue };
        let alternatives: Vec<Vec<Tok>> = if commas.is_empty() {
            if is_huge_sequence(&toks[open + 1..close]) {
                return None;
            }
            match sequence(&toks[open + 1..close]) {
                Some(items) => items
                    .into_iter()
                    .map(|s| s.chars().map(|c| Tok::Ch(c, Quote::Quoted)).collect())
                    .collect(),
                None => continue,
            }
        } else {
            let mut bounds = vec![open];
            bounds.extend(&commas);
            bounds.push(close);
            bounds
                .windows(2)
                .map(|w| toks[w[0] + 1..w[1]].to_vec())
                .collect()
        };
        let mut out = Vec::new();
        for alt in alternatives {
            let mut combined = toks[..open].to_vec();
            combined.extend(alt);
            combined.extend_from_slice(&toks[close + 1..]);
            for word in expand_braces(&combined)? {
                out.push(word);
                if out.len() > MAX_BRACE_WORDS {
                    return None;
                }
            }
        }
        return Some(out);
    }
    Some(vec![toks.to_vec()])
}

/// A numeric sequence with more words than brace expansion may make.
fn is_huge_sequence(toks: &[Tok]) -> bool {
    let body = render(toks);
    let parts: Vec<&str> = body.split("..").collect();
    if !(2..=3).contains(&parts.len()) {
        return false;
    }
    let (Ok(a), Ok(b)) = (parts[0].parse::<i128>(), parts[1].parse::<i128>()) else {
        return false;
    };
    let step = parts
        .get(2)
        .and_then(|s| s.parse::<i128>().ok())
        .map_or(1, |s| s.unsigned_abs().max(1));
    (a.abs_diff(b) / step).saturating_add(1) > MAX_BRACE_WORDS as u128
}

/// `1..5`, `1..10..2`, `a..e`.
fn sequence(toks: &[Tok]) -> Option<Vec<String>> {
    if toks.iter().any(|t| !matches!(t, Tok::Ch(_, Quote::Bare))) {
        return None;
    }
    let body = render(toks);
    let parts: Vec<&str> = body.split("..").collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let step: i128 = match parts.get(2) {
        Some(s) => s.parse::<i128>().ok()?.checked_abs()?.max(1),
        None => 1,
    };
    if let (Ok(a), Ok(b)) = (parts[0].parse::<i128>(), parts[1].parse::<i128>()) {
        // i128 holds every i64 range bash accepts without overflow.
        let count = (a.abs_diff(b) / step.unsigned_abs()).saturating_add(1);
        if count > MAX_BRACE_WORDS as u128 {
            return None;
        }
        let dir = if b >= a { step } else { -step };
        return Some(
            (0..count)
                .map(|k| (a + dir * i128::try_from(k).unwrap_or(0)).to_string())
                .collect(),
        );
    }
    let single = |p: &str| {
        let mut cs = p.chars();
        let c = cs.next()?;
        cs.next().is_none().then_some(c)
    };
    let (a, b) = (single(parts[0])?, single(parts[1])?);
    if !(a.is_ascii_alphabetic() && b.is_ascii_alphabetic()) {
        return None;
    }
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    let mut items: Vec<String> = (lo..=hi).map(String::from).collect();
    if a > b {
        items.reverse();
    }
    Some(items)
}

/// Decodes bash's `$'…'` quoting; `None` for escapes it does not know.
fn decode_ansi_c(src: &str) -> Option<String> {
    let inner = src.strip_prefix("$'")?.strip_suffix('\'')?;
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        let mut number = |radix: u32, max: usize, first: Option<char>| -> Option<char> {
            let mut digits: String = first.into_iter().collect();
            while digits.len() < max {
                match chars.peek() {
                    Some(d) if d.is_digit(radix) => {
                        digits.push(*d);
                        chars.next();
                    }
                    _ => break,
                }
            }
            char::from_u32(u32::from_str_radix(&digits, radix).ok()?)
        };
        let decoded = match e {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'e' | 'E' => '\u{1b}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\\' | '\'' | '"' | '?' => e,
            '0'..='7' => number(8, 3, Some(e))?,
            'x' => number(16, 2, None)?,
            'u' => number(16, 4, None)?,
            'U' => number(16, 8, None)?,
            _ => return None,
        };
        if decoded == '\0' {
            // Bash's strings end at a NUL: the rest of the word is gone.
            return Some(out);
        }
        out.push(decoded);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_strings_decode() {
        assert_eq!(decode_ansi_c(r"$'\x73udo'").as_deref(), Some("sudo"));
        assert_eq!(decode_ansi_c(r"$'\162m'").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c(r"$'a\tb\u00e9'").as_deref(), Some("a\tbé"));
        assert_eq!(decode_ansi_c(r"$'\q'"), None);
        assert_eq!(decode_ansi_c(r"$'sudo\x00x'").as_deref(), Some("sudo"));
        assert_eq!(decode_ansi_c(r"$'sudo\0x'").as_deref(), Some("sudo"));
    }

    #[test]
    fn braces_expand_into_words() {
        let toks: Vec<Tok> = "{rm,-rf,/}"
            .chars()
            .map(|c| Tok::Ch(c, Quote::Bare))
            .collect();
        let words: Vec<String> = expand_braces(&toks)
            .unwrap()
            .iter()
            .map(|t| render(t))
            .collect();
        assert_eq!(words, ["rm", "-rf", "/"]);
        let seq: Vec<Tok> = "x{1..3}".chars().map(|c| Tok::Ch(c, Quote::Bare)).collect();
        let words: Vec<String> = expand_braces(&seq)
            .unwrap()
            .iter()
            .map(|t| render(t))
            .collect();
        assert_eq!(words, ["x1", "x2", "x3"]);
        let many: Vec<Tok> = "{a,b}"
            .repeat(10)
            .chars()
            .map(|c| Tok::Ch(c, Quote::Bare))
            .collect();
        assert!(expand_braces(&many).is_none(), "2^10 words is too many");
    }
}
