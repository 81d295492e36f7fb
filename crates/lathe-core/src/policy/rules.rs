//! Permission rules: the `[permissions]` lists of the config files.
//!
//! A rule is `tool` (every call of that tool) or `tool(pattern)`. For
//! `exec_shell` the pattern is matched against each simple command of a
//! line (`git status*`), with `*` matching anything; for file tools it is a
//! glob of workspace-relative paths (`src/**`, `**/*.pem`, via `globset`),
//! and a path rule of `read_file` covers every read of that path,
//! whichever tool does it (`cat` in a shell line too), as a rule of
//! `write_file` or `edit_file` covers every write. For network tools it is
//! a glob of host names.
//!
//! Deny beats ask beats allow. Deny and ask rules match loosely: the
//! command as written, its program by basename, its flags combined and
//! sorted (`rm -r -f x` as `rm -fr x`), its wrappers too. Allow rules match
//! strictly: the program named bare, both as written and with flags
//! combined, so `-r` hidden after an operand is not allowed by `rm -f *`.

use globset::{GlobBuilder, GlobMatcher};
use serde::{Deserialize, Serialize};

use crate::protocol::operation::{Access, FileOp, Program, SimpleCommand, Word, basename, join};

/// The tool whose patterns are shell commands.
#[cfg(test)]
pub const SHELL_TOOL: &str = "exec_shell";

/// The tool names a rule about reading files is written with, the one
/// place rules name file tools: a read rule covers every read of the files
/// it names, whatever tool reads them.
pub const READ_RULE_TOOLS: &[&str] = &["read_file", "list_directory"];

/// The same for writing files.
pub const WRITE_RULE_TOOLS: &[&str] = &["write_file", "edit_file"];

/// Where a rule comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleOrigin {
    User,
    Workspace,
}

/// Which list a rule is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    Allow,
    Ask,
    Deny,
}

#[derive(Debug, Clone)]
pub struct Rule {
    /// The rule as written.
    pub text: String,
    pub tool: String,
    pub origin: RuleOrigin,
    pattern: Option<Pattern>,
}

#[derive(Debug, Clone)]
struct Pattern {
    shell: GlobMatcher,
    shell_canonical: GlobMatcher,
    loose: Loose,
    path: GlobMatcher,
    absolute: bool,
}

/// A shell pattern taken apart, for deny and ask rules: the program (by
/// any of its names), the subcommand, the flags the command must have
/// among others (in any order, combined or spelled long), and the rest.
#[derive(Debug, Clone)]
struct Loose {
    program: GlobMatcher,
    sub: Option<GlobMatcher>,
    letters: Vec<char>,
    longs: Vec<String>,
    rest: GlobMatcher,
}

impl Loose {
    fn compile(raw: &str) -> Result<Self, String> {
        let words: Vec<&str> = raw.split_whitespace().collect();
        let program = words.first().copied().unwrap_or("*");
        let mut i = 1;
        let sub = match words.get(1) {
            Some(w) if !w.starts_with('-') && super::shell::has_subcommands(basename(program)) => {
                i = 2;
                Some(shell_glob(w)?)
            }
            _ => None,
        };
        let mut letters = Vec::new();
        let mut longs = Vec::new();
        let mut rest = Vec::new();
        for w in &words[i..] {
            if let Some(long) = w.strip_prefix("--").filter(|l| !l.is_empty()) {
                match long_letter(long) {
                    Some(c) => letters.push(c),
                    None => longs.push(long.to_string()),
                }
            } else if w.len() > 1
                && w.starts_with('-')
                && w[1..].chars().all(|c| c.is_ascii_alphabetic())
            {
                letters.extend(w[1..].chars().map(fold_letter));
            } else {
                rest.push(*w);
            }
        }
        // `git push*`: a star at the end of the last word runs on over
        // whatever follows.
        let last = words.last().copied().unwrap_or("");
        let rest = if rest.is_empty() && last.ends_with('*') {
            "*".to_string()
        } else {
            rest.join(" ")
        };
        Ok(Self {
            program: shell_glob(basename(program))?,
            sub,
            letters,
            longs,
            rest: shell_glob(&rest)?,
        })
    }

    fn matches(&self, c: &SimpleCommand) -> bool {
        let mut names = vec![c.basename().to_string()];
        if let Program::Path { path, .. } = &c.program
            && let Some(n) = path.file_name()
        {
            names.push(n.to_string_lossy().into_owned());
        }
        if !names.iter().any(|n| self.program.is_match(n)) {
            return false;
        }
        let mut args: Vec<&Word> = c.args().iter().collect();
        if let Some(sub) = &self.sub {
            // npm takes any unambiguous abbreviation (`npm pub`).
            let abbreviates = matches!(c.basename(), "npm" | "npx");
            let names = |w: &str| {
                sub.is_match(w) || (abbreviates && w.len() >= 2 && sub.glob().glob().starts_with(w))
            };
            let Some(actual) = &c.subcommand else {
                // No subcommand known (computed, or hidden behind an option
                // Lathe does not know): any word of it may be the one the
                // rule names.
                return c
                    .args()
                    .iter()
                    .any(|a| a.dynamic || (!a.text.starts_with('-') && names(&a.text)));
            };
            let equivalent = if actual == "send-pack" {
                "push"
            } else {
                actual.as_str()
            };
            let alias = !super::shell::is_known_subcommand(c.basename(), actual);
            if !alias && !names(actual) && !sub.is_match(equivalent) {
                return false;
            }
            if let Some(at) = args.iter().position(|a| a.text == *actual) {
                args.drain(..=at);
            }
        }
        let mut letters: Vec<char> = Vec::new();
        let mut longs: Vec<String> = Vec::new();
        let mut operands: Vec<&str> = Vec::new();
        let mut done = false;
        // A flag word with a part known only at run time (`-r${F:-f}`,
        // `-r$(echo f)`) may hold any letter.
        let mut any_letter = false;
        for a in &args {
            let t = a.text.as_str();
            if a.dynamic && !done && a.prefix().starts_with('-') {
                any_letter |= !a.prefix().starts_with("--");
                // `-rf$X`: the letters known so far count.
                letters.extend(
                    a.prefix()[1..]
                        .chars()
                        .filter(char::is_ascii_alphabetic)
                        .map(fold_letter),
                );
                continue;
            }
            if done || a.dynamic {
                operands.push(t);
            } else if t == "--" {
                done = true;
            } else if let Some(long) = t.strip_prefix("--") {
                let name = long.split_once('=').map_or(long, |(n, _)| n);
                match long_letter(name) {
                    Some(c) => letters.push(c),
                    None => longs.push(name.to_string()),
                }
            } else if t.len() > 1 && t.starts_with('-') {
                letters.extend(t[1..].chars().map(fold_letter));
            } else {
                operands.push(t);
            }
        }
        self.letters
            .iter()
            .all(|l| any_letter || letters.contains(l))
            && self.longs.iter().all(|l| {
                longs
                    .iter()
                    .any(|given| !given.is_empty() && l.starts_with(given.as_str()))
            })
            && self.rest.is_match(operands.join(" "))
    }
}

/// `-R` and `-r` mean the same to the programs that take both.
fn fold_letter(c: char) -> char {
    if c == 'R' { 'r' } else { c }
}

/// What one rule is tested against.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// The call as a whole (bare rules only).
    Call,
    Command(&'a SimpleCommand),
    File(&'a FileOp),
    Host(&'a str),
}

impl Rule {
    /// Parses `tool` or `tool(pattern)`.
    pub fn parse(text: &str, origin: RuleOrigin) -> Result<Self, String> {
        let trimmed = text.trim();
        let (tool, pattern) = match trimmed.split_once('(') {
            None => (trimmed, None),
            Some((tool, rest)) => {
                let inner = rest.strip_suffix(')').ok_or_else(|| {
                    format!(
                        "rule `{text}`: a pattern must end with `)`, as in exec_shell(git status*)"
                    )
                })?;
                let inner = inner.trim();
                if inner.is_empty() {
                    return Err(format!(
                        "rule `{text}`: the pattern is empty; write `{}` alone to match every call",
                        tool.trim()
                    ));
                }
                (tool.trim(), Some(inner))
            }
        };
        // `server.*` (or `server__*`): every tool of an MCP server.
        let (tool, every) = match tool.strip_suffix(".*").or_else(|| tool.strip_suffix("__*")) {
            Some(server) if pattern.is_none() => (server, true),
            Some(_) => {
                return Err(format!(
                    "rule `{text}`: `server.*` covers whole calls and takes no pattern"
                ));
            }
            None => (tool, false),
        };
        if tool.is_empty()
            || !tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            let hint = if tool.contains('*') {
                "; every tool of an MCP server is written `server.*`"
            } else {
                ""
            };
            return Err(format!(
                "rule `{text}`: `{tool}` is not a tool name (letters, digits, `_`, `-`, `.`){hint}"
            ));
        }
        if every {
            if tool.contains('.') || tool.contains("__") {
                return Err(format!(
                    "rule `{text}`: `{tool}` is not a server name (`server.*`)"
                ));
            }
            return Ok(Self {
                text: trimmed.to_string(),
                tool: format!("{tool}__*"),
                origin,
                pattern: None,
            });
        }
        let name = tool.replace('.', "__");
        let pattern = pattern
            .map(|p| Pattern::compile(p).map_err(|e| format!("rule `{text}`: {e}")))
            .transpose()?;
        Ok(Self {
            text: trimmed.to_string(),
            tool: name,
            origin,
            pattern,
        })
    }

    /// Why the rule protects nothing, if it names a built-in tool that is
    /// not one of `tools` (the registry's names): a misspelt deny rule
    /// must not load. An MCP tool (`server.tool`) is checked when its
    /// server answers.
    pub fn unknown_tool(&self, tools: &[&str]) -> Option<String> {
        let name = self.tool.as_str();
        if name.contains("__") || tools.contains(&name) {
            return None;
        }
        let close = tools
            .iter()
            .find(|n| strsim::damerau_levenshtein(&name.to_ascii_lowercase(), n) <= 2);
        let hint = close.map_or_else(String::new, |n| format!("did you mean `{n}`? "));
        let shown = name.replace("__", ".");
        Some(format!(
            "rule `{}`: there is no tool `{shown}`; {hint}the tools are {}, and an MCP \
             server's tool is written `server.tool`",
            self.text,
            tools.join(", ")
        ))
    }

    /// Whether the rule names what it covers (`tool(pattern)`), not only a tool.
    pub fn has_pattern(&self) -> bool {
        self.pattern.is_some()
    }

    /// The MCP server whose tools the rule covers, if it names one.
    pub fn server(&self) -> Option<&str> {
        self.tool.split_once("__").map(|(server, _)| server)
    }

    /// Whether the rule is about calls of `tool`.
    fn names(&self, tool: &str) -> bool {
        match self.tool.strip_suffix('*') {
            Some(prefix) => tool.starts_with(prefix),
            None => self.tool == tool,
        }
    }

    /// Whether it is a rule about reading files (`read_file(…)`,
    /// `list_directory(…)`): such a rule covers every tool's read of a
    /// file it names (a command's, a search's) and, with a pattern, what
    /// the read rules keep out of results.
    pub fn is_read_rule(&self) -> bool {
        READ_RULE_TOOLS.contains(&self.tool.as_str())
    }

    /// A read rule with a pattern: it names the files it covers.
    pub fn reads_by_pattern(&self) -> bool {
        self.has_pattern() && self.is_read_rule()
    }

    fn matches(&self, tool: &str, subject: Subject<'_>, kind: RuleKind) -> bool {
        let Some(p) = &self.pattern else {
            return self.names(tool);
        };
        match subject {
            Subject::Call => false,
            Subject::Command(c) => self.tool == tool && p.matches_command(c, kind),
            Subject::File(f) => {
                let same_access = match f.access {
                    Access::Read => self.is_read_rule(),
                    Access::Write => WRITE_RULE_TOOLS.contains(&self.tool.as_str()),
                };
                (self.tool == tool || same_access) && p.matches_path(f)
            }
            Subject::Host(h) => self.tool == tool && p.path.is_match(h),
        }
    }
}

impl Pattern {
    fn compile(raw: &str) -> Result<Self, String> {
        let shell = shell_glob(raw)?;
        let shell_canonical = shell_glob(&canonical(
            &raw.split_whitespace()
                .map(Word::literal)
                .collect::<Vec<_>>(),
        ))?;
        let loose = Loose::compile(raw)?;
        let path_raw = raw.strip_prefix("./").unwrap_or(raw);
        let (path_raw, absolute) = match path_raw.strip_prefix("~/") {
            Some(rest) => match std::env::var_os("HOME") {
                Some(h) => (format!("{}/{rest}", h.to_string_lossy()), true),
                None => (path_raw.to_string(), false),
            },
            None => (path_raw.to_string(), path_raw.starts_with('/')),
        };
        let path = GlobBuilder::new(&path_raw)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("invalid path pattern: {e}"))?
            .compile_matcher();
        Ok(Self {
            shell,
            shell_canonical,
            loose,
            path,
            absolute,
        })
    }

    fn matches_path(&self, f: &FileOp) -> bool {
        // Relative patterns name workspace paths; absolute ones the rest.
        if f.outside != self.absolute {
            return false;
        }
        self.path.is_match(&f.path)
    }

    fn matches_command(&self, c: &SimpleCommand, kind: RuleKind) -> bool {
        let text = c.text();
        let canon = canonical(&c.argv);
        if kind == RuleKind::Allow {
            // Strict: a bare program name, as written and canonical.
            return !c.name().contains('/')
                && self.shell.is_match(&text)
                && self.shell_canonical.is_match(&canon);
        }
        let mut by_base = c.argv.clone();
        if let Some(first) = by_base.first_mut() {
            first.text = c.basename().to_string();
        }
        let mut with_wrappers = c.wrappers.clone();
        with_wrappers.extend(c.argv.iter().cloned());
        // `git --no-pager push` as `git push`: global options dropped.
        let mut bare_sub = by_base.clone();
        if let Some(sub) = &c.subcommand
            && let Some(at) = bare_sub.iter().skip(1).position(|w| w.text == *sub)
        {
            bare_sub.drain(1..=at);
        }
        let forms = [
            text,
            canon,
            join(&by_base),
            canonical(&by_base),
            join(&with_wrappers),
            join(&bare_sub),
            canonical(&bare_sub),
        ];
        self.loose.matches(c)
            || forms
                .iter()
                .any(|f| self.shell.is_match(f) || self.shell_canonical.is_match(f))
    }
}

/// A shell pattern: `*` and `?` are wildcards, everything else literal.
fn shell_glob(raw: &str) -> Result<GlobMatcher, String> {
    let mut escaped = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '[' | ']' | '{' | '}' | '\\' => {
                escaped.push('[');
                escaped.push(c);
                escaped.push(']');
            }
            _ => escaped.push(c),
        }
    }
    GlobBuilder::new(&escaped)
        .literal_separator(false)
        .backslash_escape(false)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("invalid command pattern: {e}"))
}

/// The command with its single-letter flags gathered, sorted and put
/// first (after a subcommand, if any), and common long flags folded into
/// letters: `rm x --recursive -f` → `rm -fr x`.
pub fn canonical(argv: &[Word]) -> String {
    let Some((program, args)) = argv.split_first() else {
        return String::new();
    };
    let base = crate::protocol::operation::basename(&program.text);
    let mut head = vec![program.text.clone()];
    let mut rest = args;
    if let Some((sub, after)) = args.split_first()
        && !sub.text.starts_with('-')
        && super::shell::has_subcommands(base)
    {
        head.push(sub.text.clone());
        rest = after;
    }
    let mut letters: Vec<char> = Vec::new();
    let mut longs: Vec<String> = Vec::new();
    let mut operands: Vec<String> = Vec::new();
    let mut done = false;
    for a in rest {
        let t = a.text.as_str();
        if done || a.dynamic {
            operands.push(t.to_string());
        } else if t == "--" {
            done = true;
        } else if let Some(long) = t.strip_prefix("--") {
            match long_letter(long) {
                Some(c) => letters.push(c),
                None => longs.push(t.to_string()),
            }
        } else if t.len() > 1
            && t.starts_with('-')
            && t[1..].chars().all(|c| c.is_ascii_alphabetic())
        {
            letters.extend(t[1..].chars().map(|c| if c == 'R' { 'r' } else { c }));
        } else {
            operands.push(t.to_string());
        }
    }
    letters.sort_unstable();
    letters.dedup();
    let mut out = head;
    if !letters.is_empty() {
        out.push(format!("-{}", letters.into_iter().collect::<String>()));
    }
    longs.sort();
    out.extend(longs);
    out.extend(operands);
    out.join(" ")
}

/// Long options that mean a letter, given whole or abbreviated
/// (`--recur` is `--recursive`, `-r`).
fn long_letter(long: &str) -> Option<char> {
    if long.is_empty() {
        return None;
    }
    [
        ("recursive", 'r'),
        ("force", 'f'),
        ("verbose", 'v'),
        ("interactive", 'i'),
        ("dir", 'd'),
    ]
    .iter()
    .find(|(full, _)| full.starts_with(long))
    .map(|(_, c)| *c)
}

/// The three lists, user rules first.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub allow: Vec<Rule>,
    pub ask: Vec<Rule>,
    pub deny: Vec<Rule>,
}

impl Rules {
    /// These rules but the allow rules: what a turn that only looks (plan
    /// mode) is judged by.
    pub fn without_allow(&self) -> Self {
        Self {
            allow: Vec::new(),
            ask: self.ask.clone(),
            deny: self.deny.clone(),
        }
    }

    /// Parses the lists of one config file.
    pub fn parse(
        allow: &[String],
        ask: &[String],
        deny: &[String],
        origin: RuleOrigin,
    ) -> Result<Self, String> {
        let parse = |list: &[String]| {
            list.iter()
                .map(|r| Rule::parse(r, origin))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Self {
            allow: parse(allow)?,
            ask: parse(ask)?,
            deny: parse(deny)?,
        })
    }

    /// Adds `other`'s rules after these.
    pub fn extend(&mut self, other: Rules) {
        self.allow.extend(other.allow);
        self.ask.extend(other.ask);
        self.deny.extend(other.deny);
    }

    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }

    /// The first rule of `kind` that matches.
    pub fn first(&self, kind: RuleKind, tool: &str, subject: Subject<'_>) -> Option<&Rule> {
        let list = match kind {
            RuleKind::Allow => &self.allow,
            RuleKind::Ask => &self.ask,
            RuleKind::Deny => &self.deny,
        };
        list.iter().find(|r| r.matches(tool, subject, kind))
    }
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
