//! The walk over tree-sitter-bash's syntax tree: statements, pipelines,
//! redirections and here-documents. Words are evaluated in `words`, simple
//! commands interpreted in `commands`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tree_sitter::{Node, Parser, Tree};

use super::{MAX_DEPTH, ShellEnv, lexical_join};
use crate::policy::operation::{Access, ExecOp, FileOp, Redirect, Stdin, Word};

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn parse(code: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut p = Parser::new();
            p.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
            *slot = Some(p);
        }
        slot.as_mut()?.parse(code, None)
    })
}

/// What a statement inherits from where it stands.
#[derive(Debug, Clone, Default)]
pub(super) struct Ctx {
    /// Redirections of enclosing statements (`{ …; } > out`).
    pub(super) redirects: Vec<Redirect>,
    pub(super) stdin: Stdin,
    /// Directly in the line's top-level list, where `cd` changes the
    /// directory of what follows.
    pub(super) top: bool,
}

pub(crate) struct Walker<'e> {
    pub(super) env: &'e ShellEnv<'e>,
    /// Variables assigned in the line: `Some` literal value, `None` unknown.
    pub(super) vars: HashMap<String, Option<String>>,
    /// The directory the next command runs in, when known.
    pub(super) cwd: Option<PathBuf>,
    pub(super) out: ExecOp,
    pub(super) depth: usize,
    /// Functions the line defines, and whom each calls.
    pub(super) calls: HashMap<String, Vec<String>>,
    /// The function bodies being walked, innermost last.
    pub(super) in_function: Vec<String>,
    /// Programs already resolved in this line, by name and directory.
    pub(super) resolved: HashMap<(String, Option<PathBuf>), crate::policy::operation::Program>,
}

pub(super) fn text<'s>(s: &'s str, n: Node<'_>) -> &'s str {
    s.get(n.byte_range()).unwrap_or("")
}

pub(super) fn named(n: Node<'_>) -> Vec<Node<'_>> {
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

pub(super) fn kids(n: Node<'_>) -> Vec<Node<'_>> {
    let mut c = n.walk();
    n.children(&mut c).collect()
}

/// Children with their field names.
pub(super) fn fields<'t>(n: Node<'t>) -> Vec<(Option<&'t str>, Node<'t>)> {
    let mut c = n.walk();
    let mut out = Vec::new();
    if c.goto_first_child() {
        loop {
            out.push((c.field_name(), c.node()));
            if !c.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

fn is_statement(kind: &str) -> bool {
    matches!(
        kind,
        "program"
            | "list"
            | "pipeline"
            | "redirected_statement"
            | "command"
            | "subshell"
            | "compound_statement"
            | "function_definition"
            | "if_statement"
            | "while_statement"
            | "for_statement"
            | "c_style_for_statement"
            | "case_statement"
            | "negated_command"
            | "test_command"
            | "declaration_command"
            | "unset_command"
            | "variable_assignment"
            | "variable_assignments"
            | "comment"
            | "do_group"
            | "else_clause"
            | "elif_clause"
            | "case_item"
            | "ERROR"
    )
}

/// Where the first parse error is, as a short excerpt.
fn error_excerpt(code: &str, root: Node<'_>) -> String {
    fn find(n: Node<'_>) -> Option<Node<'_>> {
        if n.is_error() || n.is_missing() {
            return Some(n);
        }
        if !n.has_error() {
            return None;
        }
        named(n).into_iter().chain(kids(n)).find_map(find)
    }
    let Some(bad) = find(root) else {
        return String::new();
    };
    let start = bad.start_byte().min(code.len());
    let mut end = (start + 24).min(code.len());
    while !code.is_char_boundary(end) {
        end -= 1;
    }
    let mut from = start;
    while !code.is_char_boundary(from) {
        from -= 1;
    }
    let excerpt = code[from..end].trim();
    if excerpt.is_empty() {
        " (it ends too early)".to_string()
    } else {
        format!(" near `{excerpt}`")
    }
}

impl<'e> Walker<'e> {
    pub(crate) fn new(env: &'e ShellEnv<'e>, cwd: Option<PathBuf>) -> Self {
        Self {
            env,
            vars: HashMap::new(),
            cwd,
            out: ExecOp::default(),
            depth: 0,
            calls: HashMap::new(),
            in_function: Vec::new(),
            resolved: HashMap::new(),
        }
    }

    /// Walks a whole line.
    pub(crate) fn run(&mut self, code: &str) {
        let ctx = Ctx {
            top: true,
            ..Ctx::default()
        };
        self.run_with(code, &ctx);
    }

    pub(super) fn run_with(&mut self, code: &str, ctx: &Ctx) {
        let Some(tree) = parse(code) else {
            self.unchecked("the shell parser failed on it".into());
            return;
        };
        let root = tree.root_node();
        if root.has_error() {
            self.unchecked(format!(
                "it does not parse as a shell line{}",
                error_excerpt(code, root)
            ));
        }
        self.statement(code, root, ctx);
    }

    /// Walks shell code found inside the line (`sh -c '…'`, `eval '…'`, a
    /// here-document fed to a shell). A new shell (`fresh`) starts without
    /// the line's variables.
    pub(super) fn nested(&mut self, code: &str, fresh: bool, stdin: Stdin) {
        if self.depth >= MAX_DEPTH {
            self.unchecked("it nests shell code too deeply to check".into());
            return;
        }
        let saved_vars = fresh.then(|| std::mem::take(&mut self.vars));
        let saved_cwd = self.cwd.clone();
        self.depth += 1;
        let ctx = Ctx {
            stdin,
            ..Ctx::default()
        };
        self.run_with(code, &ctx);
        self.depth -= 1;
        if let Some(vars) = saved_vars {
            self.vars = vars;
            self.cwd = saved_cwd;
        }
    }

    pub(crate) fn finish(mut self) -> ExecOp {
        let cyclic: Vec<String> = self
            .calls
            .keys()
            .filter(|f| self.reaches_itself(f))
            .cloned()
            .collect();
        let mut cyclic = cyclic;
        cyclic.sort();
        self.out.recursive_functions = cyclic;
        self.out
    }

    fn reaches_itself(&self, start: &str) -> bool {
        let mut seen: Vec<&str> = Vec::new();
        let mut stack: Vec<&str> = self
            .calls
            .get(start)
            .map(|v| v.iter().map(String::as_str).collect())
            .unwrap_or_default();
        while let Some(f) = stack.pop() {
            if f == start {
                return true;
            }
            if seen.contains(&f) {
                continue;
            }
            seen.push(f);
            if let Some(next) = self.calls.get(f) {
                stack.extend(next.iter().map(String::as_str));
            }
        }
        false
    }

    pub(super) fn complex(&mut self, reason: impl Into<String>) {
        let reason = reason.into();
        if !self.out.complex.contains(&reason) {
            self.out.complex.push(reason);
        }
    }

    pub(super) fn unchecked(&mut self, reason: String) {
        if self.out.unchecked.is_none() {
            self.out.unchecked = Some(reason);
        }
    }

    fn statement(&mut self, s: &str, n: Node<'_>, ctx: &Ctx) {
        if self.depth >= MAX_DEPTH {
            self.unchecked("it nests too deeply to check".into());
            return;
        }
        self.depth += 1;
        self.statement_inner(s, n, ctx);
        self.depth -= 1;
    }

    fn child(&mut self, s: &str, c: Node<'_>, ctx: &Ctx) {
        if is_statement(c.kind()) {
            self.statement(s, c, ctx);
        } else {
            self.scan(s, c);
        }
    }

    fn statement_inner(&mut self, s: &str, n: Node<'_>, ctx: &Ctx) {
        let inner = Ctx {
            top: false,
            ..ctx.clone()
        };
        match n.kind() {
            "program" | "list" => {
                for c in named(n) {
                    self.child(s, c, ctx);
                }
            }
            "pipeline" => {
                for (i, c) in named(n).into_iter().enumerate() {
                    let mut cx = inner.clone();
                    if i > 0 {
                        cx.stdin = Stdin::Pipe;
                    }
                    self.child(s, c, &cx);
                }
            }
            "subshell"
            | "compound_statement"
            | "do_group"
            | "else_clause"
            | "elif_clause"
            | "negated_command"
            | "if_statement"
            | "while_statement"
            | "case_item"
            | "case_statement"
            | "c_style_for_statement" => {
                for c in named(n) {
                    self.child(s, c, &inner);
                }
            }
            "for_statement" => {
                if let Some(v) = n.child_by_field_name("variable") {
                    self.vars.insert(text(s, v).to_string(), None);
                }
                for (field, c) in fields(n) {
                    match field {
                        Some("variable") => {}
                        Some("body") => self.statement(s, c, &inner),
                        _ if c.is_named() => self.scan(s, c),
                        _ => {}
                    }
                }
            }
            "redirected_statement" => self.redirected(s, n, ctx),
            "command" => self.command(s, n, ctx),
            "function_definition" => self.function(s, n),
            "variable_assignment" => self.assign(s, n),
            "variable_assignments" => {
                for c in named(n) {
                    self.assign(s, c);
                }
            }
            "declaration_command" => self.declaration(s, n, ctx),
            "unset_command" => self.unset(s, n, ctx),
            "test_command" => {
                for c in named(n) {
                    self.scan(s, c);
                }
                self.simple(vec![Word::literal("[[")], Vec::new(), ctx.clone());
            }
            "comment" => {}
            "ERROR" => {
                self.unchecked("it does not parse as a shell line".into());
                for c in named(n) {
                    self.scan(s, c);
                }
            }
            other => {
                self.complex(format!(
                    "uses shell syntax Lathe does not analyse ({other})"
                ));
                for c in named(n) {
                    self.scan(s, c);
                }
            }
        }
    }

    /// Looks for commands hidden in expressions and words.
    pub(super) fn scan(&mut self, s: &str, n: Node<'_>) {
        if self.depth >= MAX_DEPTH {
            self.unchecked("it nests too deeply to check".into());
            return;
        }
        self.depth += 1;
        match n.kind() {
            "command_substitution" => self.substitution(s, n, "command substitution"),
            "process_substitution" => self.substitution(s, n, "process substitution"),
            k if is_statement(k) => {
                self.statement(s, n, &Ctx::default());
            }
            _ => {
                for c in named(n) {
                    self.scan(s, c);
                }
            }
        }
        self.depth -= 1;
    }

    /// `$(…)`, backticks, `<(…)`: their commands run first, and their
    /// output becomes part of the line, so the line is complex.
    pub(super) fn substitution(&mut self, s: &str, n: Node<'_>, what: &str) {
        self.complex(format!("uses {what}"));
        let saved_cwd = self.cwd.clone();
        let mut ctx = Ctx::default();
        for c in named(n) {
            if c.kind() == "file_redirect" {
                self.file_redirect(s, c, &mut ctx);
            } else {
                self.child(s, c, &ctx);
            }
        }
        // A substitution runs in a subshell: its `cd` does not last.
        self.cwd = saved_cwd;
    }

    fn redirected(&mut self, s: &str, n: Node<'_>, ctx: &Ctx) {
        let mut cx = ctx.clone();
        let mut after: Vec<(bool, Node<'_>)> = Vec::new();
        for (field, c) in fields(n) {
            if field == Some("body") {
                continue;
            }
            match c.kind() {
                "file_redirect" => self.file_redirect(s, c, &mut cx),
                "herestring_redirect" => self.herestring(s, c, &mut cx),
                "heredoc_redirect" => self.heredoc(s, c, &mut cx, &mut after),
                _ if c.is_named() => self.scan(s, c),
                _ => {}
            }
        }
        if let Some(body) = n.child_by_field_name("body") {
            let before = self.cwd.clone();
            self.statement(s, body, &cx);
            // tree-sitter hangs a redirection of a list's last command on
            // the whole list (`cd /tmp && echo x > out`), and a group's
            // redirections are opened before it runs: when the body
            // changed directory, the target is taken in both places.
            if self.cwd != before {
                for c in fields(n)
                    .into_iter()
                    .filter(|(f, _)| *f != Some("body"))
                    .map(|(_, c)| c)
                    .filter(|c| c.kind() == "file_redirect")
                {
                    let mut scratch = Ctx::default();
                    self.file_redirect(s, c, &mut scratch);
                }
            }
        }
        // What tree-sitter hangs off a here-document: the rest of its
        // pipeline (fed by it) and the rest of its list.
        for (is_pipe, c) in after {
            if is_pipe {
                for stage in named(c) {
                    let cx = Ctx {
                        stdin: Stdin::Pipe,
                        ..Ctx::default()
                    };
                    self.child(s, stage, &cx);
                }
            } else {
                self.child(s, c, ctx);
            }
        }
    }

    pub(super) fn file_redirect(&mut self, s: &str, n: Node<'_>, cx: &mut Ctx) {
        let fd = n
            .child_by_field_name("descriptor")
            .map(|d| text(s, d).to_string());
        let op: String = kids(n)
            .into_iter()
            .filter(|k| !k.is_named())
            .map(|k| text(s, k))
            .collect();
        let mut targets = Vec::new();
        for (field, c) in fields(n) {
            if field == Some("destination") {
                targets.extend(self.words(s, c));
            }
        }
        let target = match targets.len() {
            1 => targets.remove(0),
            _ => Word {
                text: targets
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                dynamic: true,
                glob: false,
            },
        };
        let redirect = Redirect {
            fd: fd.clone(),
            op: op.clone(),
            target: target.text.clone(),
        };
        let on_stdin = fd.as_deref().is_none_or(|f| f == "0");
        if op == "<" || op == "<>" {
            if on_stdin {
                cx.stdin = Stdin::File;
            }
            self.file_access(&target, Access::Read);
        }
        if redirect.writes() {
            self.file_access(&target, Access::Write);
        }
        cx.redirects.push(redirect);
    }

    fn herestring(&mut self, s: &str, n: Node<'_>, cx: &mut Ctx) {
        let mut words = Vec::new();
        for c in named(n) {
            if c.kind() != "file_descriptor" {
                words.extend(self.words(s, c));
            }
        }
        let literal = words.iter().all(|w| !w.dynamic);
        let code = literal.then(|| {
            words
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        });
        cx.stdin = Stdin::Inline { code };
    }

    fn heredoc<'t>(
        &mut self,
        s: &str,
        n: Node<'t>,
        cx: &mut Ctx,
        after: &mut Vec<(bool, Node<'t>)>,
    ) {
        let mut quoted = false;
        let mut body_text = String::new();
        let mut literal = true;
        for (field, c) in fields(n) {
            match (field, c.kind()) {
                (_, "heredoc_start") => {
                    quoted = text(s, c).contains(['\'', '"', '\\']);
                }
                (_, "heredoc_body") => {
                    body_text = text(s, c).to_string();
                    if !quoted {
                        for part in named(c) {
                            if part.kind() != "heredoc_content" {
                                literal = false;
                                self.scan(s, part);
                            }
                        }
                    }
                }
                (_, "file_redirect") => self.file_redirect(s, c, cx),
                (_, "herestring_redirect") => self.herestring(s, c, cx),
                (_, "pipeline") => after.push((true, c)),
                (Some("right"), _) => after.push((false, c)),
                _ if c.is_named() && c.kind() != "heredoc_end" => self.scan(s, c),
                _ => {}
            }
        }
        cx.stdin = Stdin::Inline {
            code: (quoted || literal).then_some(body_text),
        };
    }

    /// Records a file a redirection reads or writes. Device files that
    /// stand for streams are not files.
    pub(super) fn file_access(&mut self, target: &Word, access: Access) {
        let t = target.text.as_str();
        if !target.dynamic
            && (matches!(
                t,
                "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/stdin" | "/dev/tty"
            ) || t.starts_with("/dev/fd/"))
        {
            return;
        }
        let op = match (&self.cwd, target.is_plain()) {
            (Some(cwd), true) => self.resolve_file(cwd.clone().as_path(), t, access),
            _ => FileOp {
                path: t.to_string(),
                access,
                outside: true,
            },
        };
        if !self.out.files.contains(&op) {
            self.out.files.push(op);
        }
    }

    fn resolve_file(&self, cwd: &Path, t: &str, access: Access) -> FileOp {
        let ws = self.env.workspace;
        let joined = lexical_join(cwd, t);
        match ws.check(&joined.to_string_lossy()) {
            Ok(abs) => FileOp {
                path: ws.display_relative(&abs),
                access,
                outside: false,
            },
            Err(_) => FileOp {
                path: joined.display().to_string(),
                access,
                outside: true,
            },
        }
    }

    fn command(&mut self, s: &str, n: Node<'_>, ctx: &Ctx) {
        let mut cx = ctx.clone();
        let mut argv = Vec::new();
        let mut assigns = Vec::new();
        for (field, c) in fields(n) {
            match (field, c.kind()) {
                (_, "variable_assignment") => assigns.push(self.assignment_parts(s, c)),
                (Some("name"), _) => {
                    for w in named(c) {
                        argv.extend(self.words(s, w));
                    }
                }
                (Some("argument"), _) => argv.extend(self.words(s, c)),
                (_, "file_redirect") => self.file_redirect(s, c, &mut cx),
                (_, "herestring_redirect") => self.herestring(s, c, &mut cx),
                (_, "comment") => {}
                _ if c.is_named() => self.scan(s, c),
                _ => {}
            }
        }
        self.simple(argv, assigns, cx);
    }

    /// `NAME=value`, as a name and a word.
    pub(super) fn assignment_parts(&mut self, s: &str, n: Node<'_>) -> (String, Word) {
        let name = n
            .child_by_field_name("name")
            .map(|c| text(s, c).to_string())
            .unwrap_or_default();
        let value = match n.child_by_field_name("value") {
            Some(v) if v.kind() == "array" => {
                self.scan(s, v);
                Word {
                    text: text(s, v).to_string(),
                    dynamic: true,
                    glob: false,
                }
            }
            Some(v) => {
                let words = self.words_no_brace(s, v);
                Word {
                    text: words.text,
                    dynamic: words.dynamic,
                    glob: false,
                }
            }
            None => Word::literal(""),
        };
        (name, value)
    }

    /// A statement-level assignment: later words of the line see it.
    fn assign(&mut self, s: &str, n: Node<'_>) {
        if n.kind() != "variable_assignment" {
            self.scan(s, n);
            return;
        }
        let (name, value) = self.assignment_parts(s, n);
        self.note_assignment(&name, &value);
        self.vars
            .insert(name, (!value.dynamic).then_some(value.text));
    }

    fn declaration(&mut self, s: &str, n: Node<'_>, ctx: &Ctx) {
        let mut argv = Vec::new();
        for c in kids(n) {
            match c.kind() {
                "variable_assignment" => {
                    let (name, value) = self.assignment_parts(s, c);
                    self.note_assignment(&name, &value);
                    argv.push(Word {
                        text: format!("{name}={}", value.text),
                        dynamic: value.dynamic,
                        glob: false,
                    });
                    self.vars
                        .insert(name, (!value.dynamic).then_some(value.text));
                }
                "variable_name" => argv.push(Word::literal(text(s, c))),
                _ if !c.is_named() => argv.push(Word::literal(text(s, c))),
                _ => argv.extend(self.words(s, c)),
            }
        }
        self.simple(argv, Vec::new(), ctx.clone());
    }

    fn unset(&mut self, s: &str, n: Node<'_>, ctx: &Ctx) {
        let mut argv = Vec::new();
        for c in kids(n) {
            match c.kind() {
                "variable_name" => {
                    self.vars.insert(text(s, c).to_string(), None);
                    argv.push(Word::literal(text(s, c)));
                }
                _ if !c.is_named() => argv.push(Word::literal(text(s, c))),
                _ => argv.extend(self.words(s, c)),
            }
        }
        self.simple(argv, Vec::new(), ctx.clone());
    }

    fn function(&mut self, s: &str, n: Node<'_>) {
        let name = n
            .child_by_field_name("name")
            .map(|c| text(s, c).to_string())
            .unwrap_or_default();
        self.complex("defines a shell function");
        self.calls.entry(name.clone()).or_default();
        self.in_function.push(name);
        let saved_cwd = self.cwd.clone();
        let mut ctx = Ctx::default();
        for (field, c) in fields(n) {
            match (field, c.kind()) {
                (Some("name"), _) => {}
                (Some("body"), _) => self.statement(s, c, &ctx),
                (_, "file_redirect") => self.file_redirect(s, c, &mut ctx),
                _ if c.is_named() => self.scan(s, c),
                _ => {}
            }
        }
        self.cwd = saved_cwd;
        self.in_function.pop();
    }
}
