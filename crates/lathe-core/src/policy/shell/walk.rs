//! The walk over tree-sitter-bash's syntax tree: statements, pipelines,
//! loops, functions and declarations. Words are evaluated in `words`,
//! simple commands interpreted in `commands`, redirections and
//! here-documents read in `redirects`.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use tree_sitter::{Node, Parser, Tree};

use super::{MAX_DEPTH, ShellEnv, path_inside};
use crate::protocol::operation::{Access, ExecOp, FileOp, Redirect, Stdin, Word};

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
    /// In the current shell, where `cd` changes the directory of what
    /// follows (not in a subshell, a pipeline stage or a substitution).
    pub(super) top: bool,
    /// It may not run (after `&&`/`||`, in an `if`, a loop or a `case`):
    /// a `cd` here leaves the directory unknown.
    pub(super) conditional: bool,
}

/// What the line makes known about a variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Var {
    /// A literal value.
    Known(String),
    /// Assigned, but known only at run time.
    Unknown,
    /// A loop variable over words that are all paths in the workspace.
    Paths,
    /// A fresh temporary path (`tmp=$(mktemp -d)`).
    Temp,
}

pub(crate) struct Walker<'e> {
    pub(super) env: &'e ShellEnv<'e>,
    /// Variables the line assigns.
    pub(super) vars: HashMap<String, Var>,
    /// The directory the next command runs in, when known.
    pub(super) cwd: Option<PathBuf>,
    pub(super) out: ExecOp,
    pub(super) depth: usize,
    /// Functions the line defines, and whom each calls.
    pub(super) calls: HashMap<String, Vec<String>>,
    /// The function bodies being walked, innermost last.
    pub(super) in_function: Vec<String>,
    /// Programs already resolved in this line, by name and directory.
    pub(super) resolved: HashMap<(String, Option<PathBuf>), crate::protocol::operation::Program>,
    /// Files already recorded.
    pub(super) files_seen: HashSet<FileOp>,
    /// Bash evaluates a string as code somewhere in the line (arithmetic,
    /// `${x@P}`, a prompt variable, `test -v`).
    pub(super) evaluates: bool,
    /// A literal string of the line contains `$(` or a backtick.
    pub(super) code_in_literal: bool,
    /// The line reads input into variables (`read`, `mapfile`).
    pub(super) reads_into_variables: bool,
    /// The line changes how `cd` finds directories (`shopt`, `CDPATH`).
    pub(super) cd_redefined: bool,
    /// Walking the command a `find -exec` runs on what it finds.
    pub(super) in_find_exec: bool,
    /// Directory reads left for expanding globs.
    pub(super) glob_budget: usize,
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

/// Every node below `n`, depth first, without recursion (a hostile line
/// nests deeper than any stack).
pub(super) fn descendants(n: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    let mut stack: Vec<Node<'_>> = kids(n).into_iter().rev().collect();
    std::iter::from_fn(move || {
        let next = stack.pop()?;
        stack.extend(kids(next).into_iter().rev());
        Some(next)
    })
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
    let Some(bad) = descendants(root).find(|n| n.is_error() || n.is_missing()) else {
        return String::new();
    };
    let start = bad.start_byte().min(code.len());
    let end = code.floor_char_boundary(start + 24);
    let from = code.floor_char_boundary(start);
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
            files_seen: HashSet::new(),
            evaluates: false,
            code_in_literal: false,
            reads_into_variables: false,
            cd_redefined: false,
            in_find_exec: false,
            glob_budget: 256,
        }
    }

    /// Walks a whole line.
    pub(crate) fn run(&mut self, code: &str) {
        if code.len() > super::MAX_LINE {
            self.unchecked(format!(
                "it is longer than {} KiB; write long scripts to a file and run that",
                super::MAX_LINE / 1024
            ));
            return;
        }
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
        if code.len() > super::MAX_LINE {
            self.unchecked("it runs a shell string too long to check".into());
            return;
        }
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
        if self.evaluates && self.code_in_literal {
            self.unchecked(
                "bash evaluates a string of it as code, and a string carries a command substitution"
                    .into(),
            );
        }
        if self.evaluates && self.reads_into_variables {
            self.unchecked(
                "it reads input into a variable and bash evaluates a variable as code".into(),
            );
        }
        let mut cyclic: Vec<String> = self
            .cycles()
            .into_iter()
            .map(|f| format!("the shell function or alias `{f}` calls itself"))
            .collect();
        cyclic.sort();
        self.out.fork_bombs.extend(cyclic);
        self.out
    }

    /// The functions (and aliases) that can call themselves.
    fn cycles(&self) -> Vec<String> {
        // Colour-marking depth-first search: a back edge closes a cycle.
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Open,
            Done,
        }
        let names: Vec<&String> = self.calls.keys().collect();
        let index: HashMap<&str, usize> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let edges: Vec<Vec<usize>> = names
            .iter()
            .map(|n| {
                self.calls[*n]
                    .iter()
                    .filter_map(|c| index.get(c.as_str()).copied())
                    .collect()
            })
            .collect();
        let mut mark = vec![Mark::New; names.len()];
        let mut on_cycle = vec![false; names.len()];
        for start in 0..names.len() {
            if mark[start] != Mark::New {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            mark[start] = Mark::Open;
            while let Some((node, next)) = stack.last().copied() {
                if let Some(&to) = edges[node].get(next) {
                    if let Some(top) = stack.last_mut() {
                        top.1 += 1;
                    }
                    match mark[to] {
                        Mark::New => {
                            mark[to] = Mark::Open;
                            stack.push((to, 0));
                        }
                        Mark::Open => {
                            // Everything on the stack from `to` up is a cycle.
                            let from = stack.iter().position(|(n, _)| *n == to).unwrap_or(0);
                            for (n, _) in &stack[from..] {
                                on_cycle[*n] = true;
                            }
                        }
                        Mark::Done => {}
                    }
                } else {
                    mark[node] = Mark::Done;
                    stack.pop();
                }
            }
        }
        names
            .iter()
            .zip(on_cycle)
            .filter(|(_, c)| *c)
            .map(|(n, _)| (*n).clone())
            .collect()
    }

    /// Bash evaluates some string of the line as code.
    pub(super) fn evaluates(&mut self, what: &str) {
        self.evaluates = true;
        self.complex(format!("{what}, which bash evaluates as code"));
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

    pub(super) fn statement(&mut self, s: &str, n: Node<'_>, ctx: &Ctx) {
        if self.depth >= MAX_DEPTH {
            self.unchecked("it nests too deeply to check".into());
            return;
        }
        self.depth += 1;
        self.statement_inner(s, n, ctx);
        self.depth -= 1;
    }

    pub(super) fn child(&mut self, s: &str, c: Node<'_>, ctx: &Ctx) {
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
                // What follows `&&` or `||` may not run.
                let mut conditional = ctx.conditional;
                for c in kids(n) {
                    if !c.is_named() {
                        let op = text(s, c);
                        if op == "&&" || op == "||" {
                            conditional = true;
                        }
                        continue;
                    }
                    let cx = Ctx {
                        conditional,
                        ..ctx.clone()
                    };
                    self.child(s, c, &cx);
                }
            }
            "pipeline" => {
                // Each stage runs in a subshell: its `cd` does not last.
                let saved = self.cwd.clone();
                for (i, c) in named(n).into_iter().enumerate() {
                    let mut cx = inner.clone();
                    if i > 0 {
                        cx.stdin = Stdin::Pipe;
                    }
                    self.child(s, c, &cx);
                    self.cwd = saved.clone();
                }
            }
            "subshell" => {
                let saved = self.cwd.clone();
                for c in named(n) {
                    self.child(s, c, &inner);
                }
                self.cwd = saved;
            }
            "compound_statement" | "do_group" | "negated_command" => {
                for c in named(n) {
                    self.child(s, c, ctx);
                }
            }
            "c_style_for_statement" => {
                // `for ((;;))`: no condition, no end.
                let endless = n.child_by_field_name("condition").is_none();
                if let Some(body) = n.child_by_field_name("body")
                    && endless
                {
                    self.note_spawning_loop(s, body);
                }
                let cx = Ctx {
                    conditional: true,
                    ..ctx.clone()
                };
                for c in named(n) {
                    self.child(s, c, &cx);
                }
            }
            "else_clause" | "elif_clause" | "if_statement" | "case_item" | "case_statement" => {
                let cx = Ctx {
                    conditional: true,
                    ..ctx.clone()
                };
                for c in named(n) {
                    self.child(s, c, &cx);
                }
            }
            "while_statement" => self.while_loop(s, n, ctx),
            "for_statement" => self.for_loop(s, n, ctx),
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
            "test_command" => self.test_command(s, n, ctx),
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
            // Words are evaluated (it finds their substitutions and any
            // literal `$(` bash may evaluate later).
            "word" | "string" | "raw_string" | "concatenation" | "ansi_c_string"
            | "translated_string" => {
                let _ = self.words(s, n);
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
        let reason = format!("uses {what}");
        debug_assert!(crate::protocol::operation::SUBSTITUTIONS.contains(&reason.as_str()));
        self.complex(reason);
        let saved_cwd = self.cwd.clone();
        let mut ctx = Ctx::default();
        if text(s, n).starts_with(">(") {
            // `>(cmd)`: cmd reads what is written to it.
            ctx.stdin = Stdin::Pipe;
        }
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

    /// `NAME=value`, as a name and a word. A subscript (`a[…]=`) is
    /// evaluated as arithmetic by bash; `+=` appends to a known value.
    pub(super) fn assignment_parts(&mut self, s: &str, n: Node<'_>) -> (String, Word) {
        let name_node = n.child_by_field_name("name");
        let name = match name_node {
            Some(c) if c.kind() == "subscript" => {
                self.evaluates("assigns to an array element");
                self.scan(s, c);
                text(s, c).to_string()
            }
            Some(c) => text(s, c).to_string(),
            None => String::new(),
        };
        let appends = kids(n).iter().any(|k| !k.is_named() && text(s, *k) == "+=");
        let mut value = match n.child_by_field_name("value") {
            Some(v) if v.kind() == "array" => {
                self.scan(s, v);
                Word {
                    text: text(s, v).to_string(),
                    dynamic: true,
                    known_prefix: 0,
                    ..Word::default()
                }
            }
            Some(v) => {
                let w = self.words_no_brace(s, v);
                Word { glob: false, ..w }
            }
            None => Word::literal(""),
        };
        if appends {
            value = match self.lookup(&name) {
                Var::Known(before) if !value.dynamic => {
                    Word::literal(format!("{before}{}", value.text))
                }
                _ => Word {
                    dynamic: true,
                    known_prefix: 0,
                    ..value
                },
            };
        }
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
        let from_mktemp = n.child_by_field_name("value").is_some_and(|v| {
            std::iter::once(v)
                .chain(descendants(v))
                .any(|d| d.kind() == "command_name" && text(s, d) == "mktemp")
                && text(s, v).trim_matches('"').starts_with("$(")
        });
        if from_mktemp {
            self.vars.insert(name, Var::Temp);
        } else {
            self.set_var(name, &value);
        }
    }

    pub(super) fn set_var(&mut self, name: String, value: &Word) {
        let v = if value.dynamic {
            Var::Unknown
        } else {
            Var::Known(value.text.clone())
        };
        self.vars.insert(name, v);
    }

    /// `for NAME in WORDS; do …; done`: the variable takes each word; when
    /// every word is a path in the workspace, so is the variable.
    fn for_loop(&mut self, s: &str, n: Node<'_>, ctx: &Ctx) {
        let cx = Ctx {
            conditional: true,
            ..ctx.clone()
        };
        let mut values = Vec::new();
        for (field, c) in fields(n) {
            if field == Some("value") {
                values.extend(self.words(s, c));
            }
        }
        if let Some(v) = n.child_by_field_name("variable") {
            let cwd = self.cwd.clone();
            // A `cd` in the body moves what the paths are relative to.
            let moves = n.child_by_field_name("body").is_some_and(|b| {
                descendants(b).any(|d| {
                    d.kind() == "command_name" && matches!(text(s, d), "cd" | "pushd" | "popd")
                })
            });
            let inside = !moves
                && !values.is_empty()
                && values.iter().all(|w| {
                    !w.dynamic && path_inside(&w.text, w.glob, cwd.as_deref(), self.env.workspace)
                });
            let var = if inside { Var::Paths } else { Var::Unknown };
            self.vars.insert(text(s, v).to_string(), var);
        }
        if let Some(body) = n.child_by_field_name("body") {
            self.statement(s, body, &cx);
        }
    }

    /// `while` and `until`: a loop that starts background jobs it never
    /// waits for or stops, with a condition that is not reading its input,
    /// may multiply them without end.
    fn while_loop(&mut self, s: &str, n: Node<'_>, ctx: &Ctx) {
        let cx = Ctx {
            conditional: true,
            ..ctx.clone()
        };
        let reads_input = n.child_by_field_name("condition").is_some_and(|c| {
            let t = text(s, c).trim_start();
            t.starts_with("read ") || t.starts_with("IFS=")
        });
        if let Some(body) = n.child_by_field_name("body")
            && !reads_input
        {
            self.note_spawning_loop(s, body);
        }
        for c in named(n) {
            self.child(s, c, &cx);
        }
    }

    /// A loop body that backgrounds jobs and neither waits for nor kills
    /// any: a fork bomb in the making.
    pub(super) fn note_spawning_loop(&mut self, s: &str, body: Node<'_>) {
        let stops = descendants(body)
            .any(|d| d.kind() == "command_name" && matches!(text(s, d), "wait" | "kill"));
        if backgrounds(s, body) && !stops {
            self.out
                .fork_bombs
                .push("a loop starts background jobs it neither waits for nor stops".into());
        }
    }

    /// `[[ … ]]` and `[ … ]`. Bash evaluates the operands of `-eq` & co.
    /// and of `-v` as arithmetic; in `[ … ]`, `>` and `<` are redirections.
    fn test_command(&mut self, s: &str, n: Node<'_>, ctx: &Ctx) {
        let double = text(s, n).starts_with("[[");
        let mut cx = ctx.clone();
        let mut ops: Vec<(String, Node<'_>)> = Vec::new();
        for c in descendants(n) {
            if c.kind() == "binary_expression" || c.kind() == "unary_expression" {
                if let Some(op) = c.child_by_field_name("operator") {
                    ops.push((text(s, op).to_string(), c));
                }
                for k in kids(c) {
                    if !k.is_named() && matches!(text(s, k), ">" | "<" | ">>") {
                        ops.push((text(s, k).to_string(), c));
                    }
                }
            }
        }
        for (op, node) in ops {
            match op.as_str() {
                "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" | "-v" if double || op == "-v" => {
                    self.evaluates("compares values as arithmetic or tests a variable by name");
                }
                ">" | ">>" | "<" if !double => {
                    if let Some(right) = node.child_by_field_name("right") {
                        let mut words = self.words(s, right);
                        if let Some(target) = words.pop() {
                            let access = if op == "<" {
                                Access::Read
                            } else {
                                Access::Write
                            };
                            self.file_access(&target, access);
                            cx.redirects.push(Redirect {
                                fd: None,
                                op: op.clone(),
                                target: target.text,
                            });
                        }
                    }
                }
                _ => {}
            }
        }
        for c in named(n) {
            self.scan(s, c);
        }
        let name = if double { "[[" } else { "[" };
        self.simple(vec![Word::literal(name)], Vec::new(), cx);
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
                        ..value.clone()
                    });
                    self.set_var(name, &value);
                }
                "variable_name" => argv.push(Word::literal(text(s, c))),
                _ if !c.is_named() => argv.push(Word::literal(text(s, c))),
                _ => argv.extend(self.words(s, c)),
            }
        }
        if crate::policy::options::has_option(argv.get(1..).unwrap_or_default(), "in", &[]) {
            self.evaluates("declares an integer or reference variable");
        }
        self.simple(argv, Vec::new(), ctx.clone());
    }

    fn unset(&mut self, s: &str, n: Node<'_>, ctx: &Ctx) {
        let mut argv = Vec::new();
        for c in kids(n) {
            match c.kind() {
                "variable_name" => {
                    self.vars.insert(text(s, c).to_string(), Var::Unknown);
                    argv.push(Word::literal(text(s, c)));
                }
                _ if !c.is_named() => argv.push(Word::literal(text(s, c))),
                _ => argv.extend(self.words(s, c)),
            }
        }
        self.simple(argv, Vec::new(), ctx.clone());
    }
}

/// Whether a statement starts a background job (`cmd &`).
fn backgrounds(s: &str, n: Node<'_>) -> bool {
    descendants(n).any(|k| !k.is_named() && text(s, k) == "&")
}

impl Walker<'_> {
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
