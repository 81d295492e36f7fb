//! A reader of git's configuration files that reads them as git does:
//! sections (`[core]`, `[remote "origin"]`, the old `[branch.main]`),
//! keys on the header's line or their own, quoted values, escapes, a
//! backslash at the end of a line continuing a value (and only a value:
//! a comment ends at its line), `#` and `;` comments. Anything git would
//! refuse is an error, since a reader more forgiving than git (or less)
//! is a way to hide a key from whoever checks the file.

/// One `section.subsection.key = value`; section and key lower-cased
/// (git compares them so), the subsection as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub section: String,
    pub subsection: Option<String>,
    pub key: String,
    /// `None` for a key with no `=` (a boolean true).
    pub value: Option<String>,
}

impl Entry {
    /// `section.subsection.key`, as git names it.
    pub fn name(&self) -> String {
        match &self.subsection {
            Some(sub) => format!("{}.{sub}.{}", self.section, self.key),
            None => format!("{}.{}", self.section, self.key),
        }
    }
}

/// Every entry of `text`, in order; an error names the line git would
/// stop at.
pub fn parse(text: &str) -> Result<Vec<Entry>, String> {
    let mut p = Parser {
        chars: text
            .strip_prefix('\u{feff}')
            .unwrap_or(text)
            .chars()
            .collect(),
        at: 0,
        line: 1,
    };
    p.entries()
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    line: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn error(&self, what: &str) -> String {
        format!("line {}: {what}", self.line)
    }

    fn skip_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            self.next();
        }
    }

    fn entries(&mut self) -> Result<Vec<Entry>, String> {
        let mut out = Vec::new();
        let mut section: Option<(String, Option<String>)> = None;
        while let Some(c) = self.peek() {
            match c {
                '\n' | ' ' | '\t' | '\r' => {
                    self.next();
                }
                '#' | ';' => self.skip_comment(),
                '[' => {
                    self.next();
                    section = Some(self.header()?);
                }
                c if c.is_ascii_alphabetic() => {
                    let Some((name, sub)) = &section else {
                        return Err(self.error("a key before any section"));
                    };
                    let (key, value) = self.key_value()?;
                    out.push(Entry {
                        section: name.clone(),
                        subsection: sub.clone(),
                        key,
                        value,
                    });
                }
                _ => return Err(self.error("unexpected character")),
            }
        }
        Ok(out)
    }

    /// After `[`: `name]`, `name "sub"]` or `name.sub]`.
    fn header(&mut self) -> Result<(String, Option<String>), String> {
        let mut name = String::new();
        loop {
            match self.next() {
                Some(']') => {
                    if name.is_empty() {
                        return Err(self.error("an empty section name"));
                    }
                    let name = name.to_ascii_lowercase();
                    // The old `[section.sub]` form: the subsection is
                    // lower-cased too.
                    return Ok(match name.split_once('.') {
                        Some((s, sub)) => (s.to_string(), Some(sub.to_string())),
                        None => (name, None),
                    });
                }
                Some(c) if c.is_ascii_alphanumeric() || c == '-' || c == '.' => name.push(c),
                Some(' ' | '\t') => break,
                _ => return Err(self.error("a bad section header")),
            }
        }
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.next();
        }
        if self.next() != Some('"') {
            return Err(self.error("a bad section header"));
        }
        let mut sub = String::new();
        loop {
            match self.next() {
                Some('"') => break,
                Some('\\') => match self.next() {
                    Some('\n') | None => return Err(self.error("a bad subsection")),
                    Some(c) => sub.push(c),
                },
                Some('\n') | None => return Err(self.error("a bad subsection")),
                Some(c) => sub.push(c),
            }
        }
        if self.next() != Some(']') {
            return Err(self.error("a bad section header"));
        }
        Ok((name.to_ascii_lowercase(), Some(sub)))
    }

    fn key_value(&mut self) -> Result<(String, Option<String>), String> {
        let mut key = String::new();
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '-' {
                key.push(c.to_ascii_lowercase());
                self.next();
            } else {
                break;
            }
        }
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.next();
        }
        match self.peek() {
            None | Some('\n') => return Ok((key, None)),
            Some('\r') if self.chars.get(self.at + 1) == Some(&'\n') => {
                return Ok((key, None));
            }
            Some('#' | ';') => {
                self.skip_comment();
                return Ok((key, None));
            }
            Some('=') => {
                self.next();
            }
            Some(_) => return Err(self.error("a bad key")),
        }
        self.value().map(|v| (key, Some(v)))
    }

    /// A value, up to the end of its (last continued) line.
    fn value(&mut self) -> Result<String, String> {
        let mut out = String::new();
        // Whitespace outside quotes, kept only if more follows.
        let mut space = String::new();
        let mut quoted = false;
        let mut started = false;
        loop {
            let Some(c) = self.next() else {
                if quoted {
                    return Err(self.error("an unclosed quote"));
                }
                return Ok(out);
            };
            match c {
                '\n' => {
                    if quoted {
                        return Err(self.error("an unclosed quote"));
                    }
                    return Ok(out);
                }
                ' ' | '\t' if !quoted => {
                    if started {
                        space.push(c);
                    }
                }
                '\r' if !quoted && self.peek() == Some('\n') => {}
                '#' | ';' if !quoted => {
                    self.skip_comment();
                    return Ok(out);
                }
                '"' => {
                    out.push_str(&std::mem::take(&mut space));
                    quoted = !quoted;
                    started = true;
                }
                '\\' => {
                    let escaped = match self.next() {
                        // A continued line.
                        Some('\n') => continue,
                        Some('\r') if self.peek() == Some('\n') => {
                            self.next();
                            continue;
                        }
                        Some('n') => '\n',
                        Some('t') => '\t',
                        Some('b') => '\u{8}',
                        Some(c @ ('\\' | '"')) => c,
                        _ => return Err(self.error("a bad escape")),
                    };
                    out.push_str(&std::mem::take(&mut space));
                    out.push(escaped);
                    started = true;
                }
                c => {
                    out.push_str(&std::mem::take(&mut space));
                    out.push(c);
                    started = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<(String, Option<String>)> {
        parse(text)
            .unwrap()
            .into_iter()
            .map(|e| (e.name(), e.value))
            .collect()
    }

    #[test]
    fn values_comments_and_continuations_read_as_git_reads_them() {
        let text = "[core]\n\t# a comment \\\n\tfsmonitor = x\n\
                    [core] bare = false ; \\\n\tpager = y\n\
                    [remote \"o\\\"r\"]\n\turl = \"a b\" c # d\n\
                    [Branch.Main]\n\tREBASE\n\
                    [x]\n\tv = one\\\n two\n";
        assert_eq!(
            names(text),
            [
                ("core.fsmonitor".to_string(), Some("x".to_string())),
                ("core.bare".to_string(), Some("false".to_string())),
                ("core.pager".to_string(), Some("y".to_string())),
                ("remote.o\"r.url".to_string(), Some("a b c".to_string())),
                ("branch.main.rebase".to_string(), None),
                ("x.v".to_string(), Some("one two".to_string())),
            ]
        );
    }

    #[test]
    fn what_git_refuses_is_an_error() {
        for bad in [
            "key = v\n",
            "[core\n",
            "[core]\n\tk = \"open\n",
            "[core]\n\t=v\n",
            "[core]\n\tk = \\q\n",
            "[a \"b]\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            names("\u{feff}[a]\r\n\tb = c\r\n"),
            [("a.b".into(), Some("c".into()))]
        );
    }
}
