//! Typed operations: what a tool call will do, as data.
//!
//! A tool describes each call as a list of [`Operation`]s before it runs:
//! `Exec` (the simple commands of a parsed shell line, each with its argv,
//! resolved program and redirections, or `complex` reasons when the line
//! cannot be fully analysed), `File` (a path and an access), `Net` (a host)
//! and `External` (an MCP server's tool). Guardrails, permission rules,
//! grants, the approval dialog, hooks and the log all work on these, never
//! on the raw argument strings.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::redact::{Redact, Scrub};

/// One thing a call will do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Operation {
    /// A shell line.
    Exec(ExecOp),
    /// A file-system access.
    File(FileOp),
    /// A network request to `host`.
    Net { host: String },
    /// A tool of an external (MCP) server.
    External {
        server: String,
        tool: String,
        /// The person's config trusts the server: its calls need no
        /// approval (but in read-only mode).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        trusted: bool,
    },
}

/// How a file is accessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    Read,
    Write,
}

/// A file access. `path` is relative to the workspace when `outside` is
/// false, else as written (absolute where it could be resolved).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FileOp {
    pub path: String,
    pub access: Access,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outside: bool,
    /// Named as an argument of a command (not a redirection): inside the
    /// workspace, the command's own approval covers it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub named: bool,
    /// The write removes the file (`delete_file`): judged as a write,
    /// and called what it is.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deletes: bool,
}

/// A parsed shell line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecOp {
    /// The line as the model wrote it.
    pub line: String,
    /// Every simple command the line can run, in source order, including
    /// those inside substitutions, `sh -c '…'` strings and `find -exec`.
    pub commands: Vec<SimpleCommand>,
    /// Why the line cannot be fully analysed; empty when it can. A complex
    /// line is never covered by a grant or an allow rule.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub complex: Vec<String>,
    /// What makes the line a fork bomb: a shell function or alias that
    /// calls itself, an endless loop of background jobs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fork_bombs: Vec<String>,
    /// The files the line's redirections read or write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileOp>,
    /// Why the line could not be checked at all (it does not parse, or it
    /// nests too deeply); the guardrail refuses such a line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unchecked: Option<String>,
    /// The line is to run outside the sandbox: the person approves that
    /// explicitly, every time, in every mode.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsandboxed: bool,
    /// The line is to keep running in the background: what that means
    /// for the person (how long, whether a server in it is reachable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<String>,
    /// The line runs in a sandbox that hides what the read rules cover
    /// from every program (so a directory holding a covered file may be
    /// searched: the file is not in it there).
    #[serde(skip)]
    pub reads_hidden: bool,
}

impl ExecOp {
    pub fn is_complex(&self) -> bool {
        !self.complex.is_empty()
    }

    /// Whether the line is complex only because it substitutes commands'
    /// output (`$(…)`, `<(…)`), whose commands are in [`Self::commands`].
    pub fn only_substitutes(&self) -> bool {
        self.complex
            .iter()
            .all(|r| SUBSTITUTIONS.contains(&r.as_str()))
    }
}

/// The reasons a substitution makes a line complex.
pub const SUBSTITUTIONS: &[&str] = &["uses command substitution", "uses process substitution"];

/// One shell word after quote removal. `dynamic` words hold a value known
/// only at run time (a variable, a substitution): their text is the source
/// text. `glob` words contain unquoted pattern characters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub struct Word {
    pub text: String,
    pub dynamic: bool,
    pub glob: bool,
    /// It came (in part) from a variable, known or not.
    pub expanded: bool,
    /// How many bytes of `text` are known before the first part known only
    /// at run time (all of it when the word is not dynamic).
    pub known_prefix: usize,
    /// A dynamic word whose value is one of a loop's words, each a path
    /// inside the workspace (`for f in src/*.rs; do wc -l "$f"; done`).
    pub bounded: bool,
    /// A dynamic word that starts with a value never empty (`${X:?}`, a
    /// variable set by `mktemp`).
    pub nonempty: bool,
}

impl Word {
    pub fn literal(text: impl Into<String>) -> Self {
        let text = text.into();
        Self {
            known_prefix: text.len(),
            text,
            dynamic: false,
            glob: false,
            expanded: false,
            bounded: false,
            nonempty: false,
        }
    }

    /// The part of the text known before the word runs.
    pub fn prefix(&self) -> &str {
        self.text.get(..self.known_prefix).unwrap_or("")
    }

    /// A word whose value is exactly its text.
    pub fn is_plain(&self) -> bool {
        !self.dynamic && !self.glob
    }
}

impl From<String> for Word {
    fn from(text: String) -> Self {
        Self::literal(text)
    }
}

impl From<Word> for String {
    fn from(w: Word) -> Self {
        w.text
    }
}

/// Where a command's standard input comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Stdin {
    #[default]
    Inherited,
    /// The previous stage of a pipeline.
    Pipe,
    /// A here-document or here-string; `code` is its text when literal.
    Inline { code: Option<String> },
    /// A file redirection.
    File,
}

/// The program a simple command runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Program {
    /// An executable file, canonicalized.
    Path {
        path: PathBuf,
        /// Where it was found, before symlinks were followed
        /// (`/root/.cargo/bin/cargo` for a `rustup` proxy), when that
        /// differs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        found: Option<PathBuf>,
        #[serde(skip)]
        stamp: Option<FileStamp>,
    },
    /// A shell builtin (`cd`, `echo`, `export`, …).
    Builtin { name: String },
    /// A name found nowhere (it may be created before it runs).
    NotFound { name: String },
    /// A name computed at run time (a variable, a substitution, a glob).
    Dynamic,
}

/// Identity of an executable file: the same path with other content is a
/// different program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FileStamp {
    pub dev: u64,
    pub ino: u64,
    pub len: u64,
    pub mtime_ns: i128,
}

/// A redirection as written, after quote removal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redirect {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fd: Option<String>,
    pub op: String,
    pub target: String,
}

impl Redirect {
    /// Whether the redirection writes a file (not an fd duplication).
    pub fn writes(&self) -> bool {
        matches!(self.op.as_str(), ">" | ">>" | ">|" | "&>" | "&>>" | "<>")
            || (self.op == ">&" && !is_fd_target(&self.target))
    }
}

fn is_fd_target(t: &str) -> bool {
    t == "-" || (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
}

/// One simple command: the program and its arguments as they will run,
/// with the wrappers (`env`, `timeout`, `nice`, …) it was found behind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimpleCommand {
    /// The effective argv, after wrappers.
    pub argv: Vec<Word>,
    /// The wrapper words before it, as written (`timeout 5`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wrappers: Vec<Word>,
    pub program: Program,
    /// The subcommand that scopes grants (`git status`, `cargo test`,
    /// the script of `python3 a.py`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subcommand: Option<String>,
    /// The script an interpreter runs, resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<Program>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redirects: Vec<Redirect>,
    /// `NAME=value` prefixes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assignments: Vec<String>,
    /// The directory it runs in, when known.
    #[serde(skip)]
    pub cwd: Option<PathBuf>,
    #[serde(skip)]
    pub stdin: Stdin,
    /// Arguments come from standard input too (`xargs`).
    #[serde(skip)]
    pub extra_args: bool,
    /// Run by `find -exec` on everything found under its start points
    /// (its `{}` stands for each): as if recursive.
    #[serde(skip)]
    pub per_found: bool,
}

impl SimpleCommand {
    /// The program's name as written (`git`, `/usr/bin/git`, `./run.sh`).
    pub fn name(&self) -> &str {
        self.argv.first().map_or("", |w| w.text.as_str())
    }

    /// The last path component of the program name.
    pub fn basename(&self) -> &str {
        basename(self.name())
    }

    /// The arguments after the program name.
    pub fn args(&self) -> &[Word] {
        self.argv.get(1..).unwrap_or_default()
    }

    /// `argv` joined by spaces, values unquoted: what rules match.
    pub fn text(&self) -> String {
        join(&self.argv)
    }

    /// The command with its wrappers, for display, quoted where needed.
    pub fn display(&self) -> String {
        self.wrappers
            .iter()
            .chain(&self.argv)
            .map(|w| {
                if w.dynamic {
                    w.text.clone()
                } else {
                    shlex::try_quote(&w.text).map_or_else(|_| w.text.clone(), |q| q.into_owned())
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// What a conversation grant on this command covers, for the dialog:
    /// the program and its subcommand.
    pub fn scope(&self) -> String {
        match &self.subcommand {
            Some(sub) => format!("{} {sub}", self.basename()),
            None => self.basename().to_string(),
        }
    }
}

/// The last path component of `name`.
pub fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// The words' values joined by spaces.
pub fn join(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

impl Operation {
    /// One line per thing the operation does, for the log and hooks'
    /// readers: each command with the program it resolves to, each file,
    /// and why a line is complex.
    pub fn describe(&self) -> Vec<String> {
        let Operation::Exec(e) = self else {
            return vec![self.to_string()];
        };
        let mut out: Vec<String> = e
            .commands
            .iter()
            .map(|c| {
                let program = match &c.program {
                    Program::Path { path, found, .. } => {
                        found.as_ref().unwrap_or(path).display().to_string()
                    }
                    Program::Builtin { .. } => "shell builtin".into(),
                    Program::NotFound { .. } => "not found".into(),
                    Program::Dynamic => "computed at run time".into(),
                };
                format!("run `{}` ({program})", c.display())
            })
            .collect();
        out.extend(e.files.iter().map(ToString::to_string));
        if !e.complex.is_empty() {
            out.push(format!("complex: {}", e.complex.join("; ")));
        }
        if let Some(why) = &e.unchecked {
            out.push(format!("unchecked: {why}"));
        }
        out
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operation::Exec(e) => write!(f, "run `{}`", e.line.trim()),
            Operation::File(file) => write!(f, "{file}"),
            Operation::Net { host } => write!(f, "connect to {host}"),
            Operation::External { server, tool, .. } => {
                write!(f, "call {tool} on MCP server {server}")
            }
        }
    }
}

impl fmt::Display for FileOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = match self.access {
            Access::Read => "read",
            Access::Write if self.deletes => "delete",
            Access::Write => "write",
        };
        let place = if self.outside {
            " (outside the workspace)"
        } else {
            ""
        };
        write!(f, "{verb} {}{place}", self.path)
    }
}

/// Every text a command line or a path carries may name a key (a file
/// called after it, a token in an argument): all of them, in place. What
/// was judged is not changed, only what is shown of it.
impl Redact for Operation {
    fn redact(&mut self, s: &dyn Scrub) {
        match self {
            Operation::Exec(exec) => exec.redact(s),
            Operation::File(file) => file.redact(s),
            Operation::Net { host } => host.redact(s),
            Operation::External { server, tool, .. } => {
                server.redact(s);
                tool.redact(s);
            }
        }
    }
}

impl Redact for FileOp {
    fn redact(&mut self, s: &dyn Scrub) {
        self.path.redact(s);
    }
}

impl Redact for ExecOp {
    fn redact(&mut self, s: &dyn Scrub) {
        self.line.redact(s);
        self.commands.redact(s);
        self.fork_bombs.redact(s);
        self.files.redact(s);
        self.unchecked.redact(s);
    }
}

impl Redact for Word {
    fn redact(&mut self, s: &dyn Scrub) {
        if let Some(clean) = s.scrub(&self.text) {
            let mut known = self.known_prefix.min(clean.len());
            while !clean.is_char_boundary(known) {
                known -= 1;
            }
            self.known_prefix = known;
            self.text = clean;
        }
    }
}

impl Redact for Program {
    fn redact(&mut self, s: &dyn Scrub) {
        match self {
            Program::Path { path, found, .. } => {
                path.redact(s);
                found.redact(s);
            }
            Program::Builtin { name } | Program::NotFound { name } => name.redact(s),
            Program::Dynamic => {}
        }
    }
}

impl Redact for Redirect {
    fn redact(&mut self, s: &dyn Scrub) {
        self.target.redact(s);
    }
}

impl Redact for SimpleCommand {
    fn redact(&mut self, s: &dyn Scrub) {
        self.argv.redact(s);
        self.wrappers.redact(s);
        self.program.redact(s);
        self.subcommand.redact(s);
        self.script.redact(s);
        self.redirects.redact(s);
        self.assignments.redact(s);
        self.cwd.redact(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Redaction changes the texts only: what was learnt of a command that
    /// is not shown (its stamp, directory, standard input, a word's flags)
    /// stays, which a round trip through JSON lost.
    #[test]
    fn redaction_keeps_what_is_not_shown() {
        let stamp = FileStamp {
            dev: 1,
            ino: 2,
            len: 3,
            mtime_ns: 4,
        };
        let mut word = Word::literal("sk-123");
        word.dynamic = true;
        let mut op = Operation::Exec(ExecOp {
            line: "curl sk-123".into(),
            commands: vec![SimpleCommand {
                argv: vec![Word::literal("curl"), word],
                wrappers: Vec::new(),
                program: Program::Path {
                    path: "/usr/bin/curl".into(),
                    found: None,
                    stamp: Some(stamp),
                },
                subcommand: None,
                script: None,
                redirects: Vec::new(),
                assignments: vec!["sk-9".into()],
                cwd: Some("/w".into()),
                stdin: Stdin::Pipe,
                extra_args: true,
                per_found: false,
            }],
            ..ExecOp::default()
        });
        op.redact(&crate::redact::tests::Keys);
        let Operation::Exec(exec) = op else {
            unreachable!()
        };
        assert_eq!(exec.line, "curl [REDACTED]");
        let cmd = &exec.commands[0];
        assert_eq!(cmd.argv[1].text, "[REDACTED]");
        assert!(cmd.argv[1].dynamic);
        assert_eq!(cmd.argv[1].known_prefix, "[REDACTED]".len().min(6));
        assert_eq!(cmd.assignments, ["[REDACTED]"]);
        assert!(matches!(cmd.program, Program::Path { stamp: Some(s), .. } if s == stamp));
        assert_eq!(cmd.cwd.as_deref(), Some(std::path::Path::new("/w")));
        assert_eq!(cmd.stdin, Stdin::Pipe);
        assert!(cmd.extra_args);
    }

    #[test]
    fn operations_serialize_with_a_kind_tag() {
        let op = Operation::File(FileOp {
            path: "src/a.rs".into(),
            access: Access::Write,
            outside: false,
            named: false,
            deletes: false,
        });
        let v = serde_json::to_value(&op).unwrap();
        assert_eq!(v["kind"], "file");
        assert_eq!(v["access"], "write");
        assert!(v.get("outside").is_none() && v.get("deletes").is_none());
        assert_eq!(op.to_string(), "write src/a.rs");
        // A record written before deletions said so reads as a write.
        let old: Operation = serde_json::from_value(serde_json::json!(
            {"kind": "file", "path": "a", "access": "write"}
        ))
        .unwrap();
        assert!(matches!(old, Operation::File(f) if !f.deletes));
        let mut gone = op.clone();
        if let Operation::File(f) = &mut gone {
            f.deletes = true;
        }
        assert_eq!(gone.to_string(), "delete src/a.rs");
        assert_eq!(serde_json::to_value(&gone).unwrap()["deletes"], true);
        let exec = Operation::Exec(ExecOp {
            line: "ls".into(),
            commands: vec![SimpleCommand {
                argv: vec![Word::literal("ls")],
                wrappers: vec![],
                program: Program::Builtin { name: "ls".into() },
                subcommand: None,
                script: None,
                redirects: vec![],
                assignments: vec![],
                cwd: None,
                stdin: Stdin::Inherited,
                extra_args: false,
                per_found: false,
            }],
            ..ExecOp::default()
        });
        let v = serde_json::to_value(&exec).unwrap();
        assert_eq!(v["kind"], "exec");
        assert_eq!(v["commands"][0]["argv"][0], "ls");
        assert_eq!(v["commands"][0]["program"]["type"], "builtin");
    }

    #[test]
    fn fd_duplications_do_not_write_files() {
        let r = |op: &str, target: &str| Redirect {
            fd: None,
            op: op.into(),
            target: target.into(),
        };
        assert!(!r(">&", "2").writes());
        assert!(!r(">&", "-").writes());
        assert!(r(">&", "out.txt").writes());
        assert!(r(">>", "log").writes());
        assert!(!r("<", "in").writes());
    }
}
