//! Simple commands: wrappers looked through, programs that run other code
//! (`eval`, `sh -c`, `find -exec`, `git -c`), the program resolved as the
//! shell would resolve it, and the subcommand that scopes a grant.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::interpreters::{SHELLS, STDIN_PATHS, Source, source_of};
use super::walk::{Ctx, Var, Walker};
use super::wrappers::{skip_options, unwrap_one};
use super::{lexical_join, path_inside};
use crate::policy::operation::{FileStamp, Program, SimpleCommand, Stdin, Word, basename, join};
use crate::policy::options::{has_option, is_long, operands, option_values};

/// Bash builtins and keywords that run as commands.
const BUILTINS: &[&str] = &[
    ".",
    ":",
    "[",
    "[[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
];

/// Builtins that change how later commands are found or run.
const REDEFINERS: &[&str] = &["enable", "bind", "shopt", "fc", "history"];

/// Git's own commands; anything else may be an alias from a config file.
const GIT_COMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "checkout",
    "cherry",
    "cherry-pick",
    "citool",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "describe",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "difftool",
    "fetch",
    "for-each-ref",
    "format-patch",
    "fsck",
    "gc",
    "grep",
    "gui",
    "hash-object",
    "help",
    "init",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "mv",
    "name-rev",
    "notes",
    "prune",
    "pull",
    "push",
    "range-diff",
    "read-tree",
    "rebase",
    "reflog",
    "remote",
    "repack",
    "replace",
    "request-pull",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "shortlog",
    "show",
    "show-branch",
    "show-ref",
    "sparse-checkout",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "switch",
    "symbolic-ref",
    "tag",
    "update-index",
    "update-ref",
    "var",
    "verify-commit",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// Programs whose first operand is a subcommand, with the global options
/// that take a value (so the value is not taken for the subcommand).
const SUBCOMMANDS: &[(&str, &[&str])] = &[
    (
        "git",
        &[
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--super-prefix",
            "--config-env",
        ],
    ),
    ("cargo", &["--config", "-Z", "-C", "--color"]),
    ("npm", &["--prefix", "-w", "--workspace"]),
    ("pnpm", &["-C", "--dir", "--filter", "-F"]),
    ("yarn", &["--cwd"]),
    ("bun", &["--cwd"]),
    ("deno", &[]),
    ("npx", &["-p", "--package"]),
    ("go", &["-C"]),
    (
        "docker",
        &[
            "-H",
            "--host",
            "-c",
            "--context",
            "--config",
            "-l",
            "--log-level",
        ],
    ),
    ("podman", &["--connection", "--url", "--log-level"]),
    (
        "kubectl",
        &[
            "-n",
            "--namespace",
            "--context",
            "--kubeconfig",
            "-s",
            "--server",
            "--cluster",
            "--user",
        ],
    ),
    ("helm", &["-n", "--namespace", "--kube-context"]),
    ("rustup", &["--toolchain"]),
    ("pip", &[]),
    ("pip3", &[]),
    ("uv", &["--directory", "--project"]),
    ("poetry", &["-C", "--directory"]),
    ("gh", &["-R", "--repo"]),
    ("glab", &["-R", "--repo"]),
    (
        "systemctl",
        &[
            "-H",
            "--host",
            "-M",
            "--machine",
            "-t",
            "--type",
            "-p",
            "--property",
        ],
    ),
    ("apt", &["-o"]),
    ("apt-get", &["-o"]),
    ("brew", &[]),
    ("dotnet", &[]),
    ("mvn", &["-f", "--file", "-pl", "--projects"]),
    ("gradle", &["-p", "--project-dir"]),
    ("gradlew", &["-p", "--project-dir"]),
    ("bundle", &[]),
    ("rake", &["-f"]),
    ("terraform", &[]),
    (
        "make",
        &["-C", "--directory", "-f", "--file", "-I", "-o", "-W"],
    ),
    ("just", &["-f", "--justfile", "-d", "--working-directory"]),
    ("nix", &[]),
    ("conda", &[]),
    ("pipx", &[]),
    ("mix", &[]),
    ("stack", &[]),
    ("cabal", &[]),
    ("dune", &[]),
    ("opam", &[]),
    ("swift", &[]),
    ("zig", &[]),
    ("flutter", &[]),
    ("dart", &[]),
    ("composer", &["-d", "--working-dir"]),
    ("aws", &["--profile", "--region", "--output"]),
    ("gcloud", &["--project"]),
    ("az", &[]),
    ("bazel", &[]),
    ("meson", &[]),
];

/// Environment variables that change what a command runs (its program,
/// its libraries, its pager, its compiler): setting one makes a line
/// complex, because a grant on the command would then cover other code.
fn changes_what_runs(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "PATH",
        "HOME",
        "ENV",
        "IFS",
        "CDPATH",
        "GLOBIGNORE",
        "SHELLOPTS",
        "PS4",
        "PROMPT_COMMAND",
        "PAGER",
        "MANPAGER",
        "EDITOR",
        "VISUAL",
        "LESSOPEN",
        "LESSCLOSE",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONSTARTUP",
        "NODE_OPTIONS",
        "NODE_PATH",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "RUBYLIB",
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "CC",
        "CXX",
        "LD",
        "AR",
        "MAKEFLAGS",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "TMPDIR",
    ];
    const PREFIXES: &[&str] = &[
        "LD_",
        "DYLD_",
        "GIT_",
        "BASH",
        "CARGO_",
        "RUSTC",
        "NPM_CONFIG_",
        "npm_config_",
    ];
    NAMES.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn stamp(p: &Path) -> Option<FileStamp> {
    let m = std::fs::metadata(p).ok()?;
    Some(FileStamp {
        dev: m.dev(),
        ino: m.ino(),
        len: m.len(),
        mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
    })
}

/// Whether `sub` is one of `base`'s own subcommands (for git, not an
/// alias or an external `git-sub` program).
pub(crate) fn is_known_subcommand(base: &str, sub: &str) -> bool {
    base != "git" || GIT_COMMANDS.contains(&sub)
}

/// Whether `base` takes a subcommand as its first operand.
pub(crate) fn has_subcommands(base: &str) -> bool {
    SUBCOMMANDS.iter().any(|(p, _)| *p == base)
}

/// The subcommand that scopes a grant: `git status`, `cargo test`,
/// `python3 -m pytest`, the script an interpreter runs (`python3 a.py`);
/// `None` for programs without subcommands.
pub(crate) fn subcommand_of(base: &str, args: &[Word]) -> Option<String> {
    match source_of(base, args) {
        Some(Source::Module(m)) if m.is_plain() => return Some(format!("-m {}", m.text)),
        Some(Source::Script(s)) if s.is_plain() => return Some(s.text),
        Some(_) => return None,
        None => {}
    }
    let (_, with_value) = SUBCOMMANDS.iter().find(|(p, _)| *p == base)?;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if base == "cargo" && t.starts_with('+') {
            i += 1;
            continue;
        }
        if !t.starts_with('-') {
            break;
        }
        i += if with_value.contains(&t) { 2 } else { 1 };
    }
    let sub = args.get(i)?;
    let ok = sub.is_plain()
        && sub.text.starts_with(|c: char| c.is_ascii_alphanumeric())
        && sub
            .text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '.' | '_' | '-' | '+' | '@'));
    ok.then(|| sub.text.clone())
}

impl Walker<'_> {
    /// Notes an assignment that changes what commands run, or that bash
    /// evaluates later (prompt strings).
    pub(super) fn note_assignment(&mut self, name: &str, value: &Word) {
        if changes_what_runs(name) {
            self.complex(format!("sets {name}, which changes what commands run"));
        }
        match name {
            "PS0" | "PS1" | "PS2" | "PS4" => self.evaluates("sets a prompt string"),
            // Variables whose value programs run as a command.
            "PROMPT_COMMAND"
            | "GIT_SSH_COMMAND"
            | "GIT_SSH"
            | "GIT_PAGER"
            | "GIT_EDITOR"
            | "GIT_SEQUENCE_EDITOR"
            | "GIT_EXTERNAL_DIFF"
            | "GIT_ASKPASS"
            | "SSH_ASKPASS"
            | "SUDO_ASKPASS"
            | "PAGER"
            | "MANPAGER"
            | "EDITOR"
            | "VISUAL"
            | "LESSOPEN"
            | "LESSCLOSE"
            | "RUSTC_WRAPPER"
            | "RUSTC"
            | "CC"
            | "CXX" => {
                let code = Word {
                    text: value.text.trim_start_matches('|').to_string(),
                    ..value.clone()
                };
                self.code_string(&code, name);
            }
            _ => {}
        }
    }

    /// `git -c KEY=VALUE` and `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`:
    /// settings whose value git runs as a command are looked into.
    fn git_config(&mut self, key: &str, value: &Word) {
        let k = key.to_ascii_lowercase();
        let last = k.rsplit('.').next().unwrap_or("");
        if last == "hookspath"
            || last == "worktree"
            || k == "include.path"
            || k.starts_with("includeif.")
        {
            self.unchecked(format!(
                "it points git at hooks or configuration elsewhere ({key})"
            ));
            return;
        }
        let runs = if k.starts_with("alias.") {
            value.text.starts_with('!')
        } else {
            k.starts_with("pager.")
                || [
                    "pager",
                    "editor",
                    "sshcommand",
                    "fsmonitor",
                    "askpass",
                    "external",
                    "textconv",
                    "command",
                    "clean",
                    "smudge",
                    "process",
                    "program",
                    "helper",
                    "driver",
                    "difffilter",
                    "packobjectshook",
                    "receivepack",
                    "uploadpack",
                    "cmd",
                    "tool",
                ]
                .contains(&last)
        };
        if runs {
            let code = Word {
                text: value.text.trim_start_matches('!').to_string(),
                ..value.clone()
            };
            self.code_string(&code, "a git setting");
        }
    }

    /// Code in a string that bash will run (a trap, an alias, a callback):
    /// looked into when literal; refused when known only at run time.
    fn code_string(&mut self, code: &Word, what: &str) {
        self.complex(format!("runs the code in a string ({what})"));
        if code.dynamic {
            self.unchecked(format!("it runs code ({what}) known only when it runs"));
        } else {
            let text = code.text.clone();
            self.nested(&text, false, Stdin::Inherited);
        }
    }

    /// One simple command as found in the tree.
    pub(super) fn simple(&mut self, argv: Vec<Word>, assigns: Vec<(String, Word)>, cx: Ctx) {
        let mut assignments = Vec::new();
        for (name, value) in &assigns {
            self.note_assignment(name, value);
            assignments.push(format!("{name}={}", value.text));
        }
        if argv.is_empty() {
            return;
        }
        self.interpret(Vec::new(), argv, assignments, cx, false);
    }

    /// Looks through wrappers, then records the command and looks into
    /// the code it runs.
    pub(super) fn interpret(
        &mut self,
        mut wrappers: Vec<Word>,
        argv: Vec<Word>,
        mut assignments: Vec<String>,
        cx: Ctx,
        mut extra_args: bool,
    ) {
        let mut argv = argv;
        let mut cwd = self.cwd.clone();
        loop {
            let u = unwrap_one(&argv, 0);
            if let Some(code) = &u.code {
                self.code_string(code, "flock -c");
            }
            let Some(next) = u.next.filter(|n| *n < argv.len() || u.split.is_some()) else {
                break;
            };
            if u.extra_args {
                extra_args = true;
                self.complex("takes arguments from its input (xargs)");
            }
            for (name, value) in &u.assignments {
                self.note_assignment(name, value);
                assignments.push(format!("{name}={}", value.text));
            }
            if let Some(dir) = u.chdir {
                cwd = match (&cwd, dir.is_plain()) {
                    (Some(c), true) => Some(lexical_join(c, &dir.text)),
                    _ => None,
                };
            }
            let mut rest: Vec<Word> = argv.split_off(next.min(argv.len()));
            if let Some(words) = u.split {
                self.complex("env -S splits a string into a command");
                let mut joined = words;
                joined.append(&mut rest);
                rest = joined;
            }
            wrappers.append(&mut argv);
            argv = rest;
            if argv.is_empty() {
                // A wrapper with nothing to wrap runs as itself.
                argv = wrappers.split_off(wrappers.len().saturating_sub(1));
                break;
            }
        }
        self.git_config_from_env(&assignments);
        let Some(first) = argv.first().cloned() else {
            return;
        };
        let base = basename(&first.text).to_string();
        if first.expanded && !first.dynamic {
            self.complex("takes the program name from a variable");
        }
        let program = if first.is_plain() {
            self.resolve_cached(&first.text, cwd.clone())
        } else {
            self.complex("computes the program name at run time");
            Program::Dynamic
        };
        self.note_function_call(&first.text);
        let args = argv[1..].to_vec();
        let subcommand = subcommand_of(&base, &args);
        let script = self.script_of(&base, &args, cwd.as_deref());
        let is_cd = matches!(base.as_str(), "cd" | "pushd" | "popd");
        self.out.commands.push(SimpleCommand {
            argv,
            wrappers,
            program,
            subcommand,
            script,
            redirects: cx.redirects.clone(),
            assignments,
            cwd: cwd.clone(),
            stdin: cx.stdin.clone(),
            extra_args,
        });
        self.look_inside(&base, &args, &cx);
        if is_cd {
            self.change_directory(&args, &cx, cwd);
        }
    }

    /// `GIT_CONFIG_KEY_n` paired with `GIT_CONFIG_VALUE_n`.
    fn git_config_from_env(&mut self, assignments: &[String]) {
        let get = |prefix: &str, n: &str| {
            assignments.iter().find_map(|a| {
                a.strip_prefix(prefix)
                    .and_then(|rest| rest.strip_prefix(n))
                    .and_then(|rest| rest.strip_prefix('='))
            })
        };
        for a in assignments {
            let Some(rest) = a.strip_prefix("GIT_CONFIG_KEY_") else {
                continue;
            };
            let Some((n, key)) = rest.split_once('=') else {
                continue;
            };
            let value = get("GIT_CONFIG_VALUE_", n).unwrap_or("");
            self.git_config(key, &Word::literal(value));
        }
    }

    fn resolve_cached(&mut self, name: &str, cwd: Option<PathBuf>) -> Program {
        let key = (name.to_string(), cwd.clone());
        if let Some(p) = self.resolved.get(&key) {
            return p.clone();
        }
        let p = self.resolve(name, cwd.as_deref());
        self.resolved.insert(key, p.clone());
        p
    }

    /// The script an interpreter runs, with its identity: a grant on
    /// `python3 a.py` does not cover `a.py` rewritten.
    fn script_of(&self, base: &str, args: &[Word], cwd: Option<&Path>) -> Option<Program> {
        let Some(Source::Script(w)) = source_of(base, args) else {
            return None;
        };
        if !w.is_plain() {
            return None;
        }
        let path = lexical_join(cwd?, &w.text);
        Some(match path.canonicalize() {
            Ok(c) => Program::Path {
                stamp: stamp(&c),
                path: c,
            },
            Err(_) => Program::NotFound {
                name: path.display().to_string(),
            },
        })
    }

    /// `cd [-L|-P|-e|-@] [--] [DIR]`: the directory of what follows, when
    /// it is sure to run and its target is literal; else unknown.
    fn change_directory(&mut self, args: &[Word], cx: &Ctx, cwd: Option<PathBuf>) {
        let physical = has_option(args, "P", &[]);
        let targets = operands(args);
        let sure = cx.top && !cx.conditional;
        self.cwd = if !sure {
            None
        } else if targets.is_empty() {
            self.env.home.clone()
        } else if let ([dir], Some(c)) = (targets.as_slice(), cwd)
            && dir.is_plain()
            && dir.text != "-"
        {
            let to = lexical_join(&c, &dir.text);
            if physical {
                to.canonicalize().ok()
            } else {
                Some(to)
            }
        } else {
            None
        };
    }

    fn note_function_call(&mut self, name: &str) {
        if let Some(current) = self.in_function.last().cloned() {
            self.calls
                .entry(current)
                .or_default()
                .push(name.to_string());
        }
        if self.calls.contains_key(name) {
            self.complex("calls a shell function or alias");
            // The function may change directory.
            self.cwd = None;
        }
    }

    /// Commands that run other code: look into it when it is literal.
    fn look_inside(&mut self, base: &str, args: &[Word], cx: &Ctx) {
        if let Some(source) = source_of(base, args) {
            return self.interpreter(base, source, cx);
        }
        match base {
            "eval" => {
                self.complex("uses eval");
                if !args.is_empty() && args.iter().all(|a| !a.dynamic) {
                    let code = join(args);
                    self.nested(&code, false, cx.stdin.clone());
                }
            }
            "source" | "." => {
                self.complex("runs the commands of a file (source)");
                let from_stdin = args
                    .first()
                    .is_some_and(|a| STDIN_PATHS.contains(&a.text.as_str()));
                if from_stdin && let Stdin::Inline { code: Some(code) } = &cx.stdin {
                    let code = code.clone();
                    self.nested(&code, false, Stdin::Inherited);
                }
            }
            "watch" => {
                self.complex("runs a command string (watch)");
                let at = skip_options(args, 0, "nd", &["interval", "differences"]);
                let rest = &args[at.min(args.len())..];
                if !rest.is_empty() && rest.iter().all(|a| !a.dynamic) {
                    let code = join(rest);
                    self.nested(&code, true, Stdin::Inherited);
                }
            }
            "trap" => {
                let ops = operands(args);
                if !has_option(args, "pl", &[]) && ops.len() >= 2 {
                    self.code_string(ops[0], "trap");
                }
            }
            "alias" => {
                for a in args {
                    if let Some((name, value)) = a.text.split_once('=') {
                        let first = value.split_whitespace().next().unwrap_or("").to_string();
                        self.calls.entry(name.to_string()).or_default().push(first);
                        let code = Word {
                            text: value.to_string(),
                            ..a.clone()
                        };
                        self.code_string(&code, "alias");
                    }
                }
            }
            "hash" => {
                for path in option_values(args, 'p', "") {
                    let code = Word::literal(path);
                    self.code_string(&code, "hash -p");
                }
            }
            "mapfile" | "readarray" => {
                for code in option_values(args, 'C', "") {
                    let dynamic = args.iter().any(|a| a.dynamic && a.text.contains(code));
                    let w = Word {
                        dynamic,
                        ..Word::literal(code)
                    };
                    self.code_string(&w, "mapfile -C");
                }
            }
            "compgen" | "complete" => {
                for code in option_values(args, 'C', "") {
                    self.code_string(&Word::literal(code), "compgen -C");
                }
            }
            "printf" => {
                for name in option_values(args, 'v', "") {
                    self.assigned_by_name(name);
                }
            }
            "read" => {
                for a in operands(args) {
                    self.assigned_by_name(&a.text);
                }
            }
            "let" => self.evaluates("evaluates arithmetic (let)"),
            "test" | "[" if args.iter().any(|a| a.text == "-v") => {
                self.evaluates("tests a variable by name");
            }
            "declare" | "typeset" | "local" | "export" | "readonly"
                if has_option(args, "in", &[]) =>
            {
                self.evaluates("declares an integer or reference variable");
            }
            "git" => self.git(args),
            "cargo" if has_option(args, "", &["config"]) => {
                self.complex("uses cargo --config, which can redefine what cargo runs");
            }
            "npm" | "pnpm" | "yarn" | "npx" | "bun" => self.node_package_manager(base, args),
            "make" | "gmake" => self.make(args),
            "find" => self.find_exec(args),
            b if REDEFINERS.contains(&b) => {
                self.complex(format!("uses `{b}`, which changes how later commands run"));
            }
            _ => {}
        }
    }

    /// `printf -v NAME`, `read NAME`: a variable takes a value known only
    /// at run time; an array element's subscript is evaluated.
    fn assigned_by_name(&mut self, name: &str) {
        if name.contains('[') {
            self.evaluates("assigns to an array element");
        }
        let value = Word {
            dynamic: true,
            ..Word::default()
        };
        self.note_assignment(name, &value);
        self.vars.insert(name.to_string(), Var::Unknown);
    }

    /// Shells and interpreters: inline code is looked into (shells) and
    /// makes the line complex; a shell fed a literal here-document too.
    fn interpreter(&mut self, base: &str, source: Source, cx: &Ctx) {
        let shell = SHELLS.contains(&base);
        match source {
            Source::Inline(code) => {
                self.complex(format!("runs inline code ({base} -c)"));
                if let Some(code) = code
                    && shell
                    && !code.dynamic
                {
                    self.nested(&code.text, true, cx.stdin.clone());
                }
            }
            Source::Stdin => {
                if let Stdin::Inline { code } = &cx.stdin {
                    self.complex(format!("feeds code to {base} on its input"));
                    if let Some(code) = code.clone()
                        && shell
                    {
                        self.nested(&code, true, Stdin::Inherited);
                    }
                }
            }
            Source::Script(_) | Source::Module(_) => {}
        }
    }

    fn git(&mut self, args: &[Word]) {
        let mut i = 0;
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            if a.dynamic {
                self.complex("computes a git option at run time");
                return;
            }
            if !t.starts_with('-') {
                break;
            }
            if t == "-c" || (t.starts_with("-c") && t.len() > 2) {
                let setting = if t == "-c" {
                    args.get(i + 1).cloned()
                } else {
                    Some(Word {
                        text: t[2..].to_string(),
                        ..a.clone()
                    })
                };
                if let Some(w) = setting
                    && let Some((key, value)) = w.text.split_once('=')
                {
                    let value = Word {
                        text: value.to_string(),
                        ..w.clone()
                    };
                    self.git_config(key, &value);
                }
            }
            let redefines = t == "-c"
                || t.starts_with("-c")
                || [
                    "config-env",
                    "exec-path",
                    "git-dir",
                    "work-tree",
                    "namespace",
                    "super-prefix",
                ]
                .iter()
                .any(|l| is_long(t, l) && (t.contains('=') || *l != "exec-path"));
            if redefines {
                self.complex(
                    "uses a git option that changes which repository or configuration git uses",
                );
            }
            if t == "-C" {
                let inside = args.get(i + 1).is_some_and(|d| {
                    !d.dynamic
                        && path_inside(&d.text, d.glob, self.cwd.as_deref(), self.env.workspace)
                });
                if !inside {
                    self.complex("runs git in another directory");
                }
                i += 2;
                continue;
            }
            let takes_value = matches!(
                t,
                "-c" | "--git-dir"
                    | "--work-tree"
                    | "--namespace"
                    | "--super-prefix"
                    | "--config-env"
            );
            i += if takes_value { 2 } else { 1 };
        }
        let rest = args.get(i + 1..).unwrap_or_default();
        if has_option(
            rest,
            "",
            &[
                "output",
                "ext-diff",
                "upload-pack",
                "receive-pack",
                "exec",
                "config",
                "template",
            ],
        ) || (rest.iter().any(|a| a.text.starts_with("-u"))
            && args.get(i).is_some_and(|s| {
                matches!(
                    s.text.as_str(),
                    "fetch" | "clone" | "pull" | "ls-remote" | "archive"
                )
            }))
        {
            self.complex("uses a git option that writes a file or runs a configured program");
        }
        if let Some(sub) = args.get(i) {
            if !sub.is_plain() {
                self.complex("computes the git subcommand at run time");
            } else if !GIT_COMMANDS.contains(&sub.text.as_str()) {
                self.complex(format!(
                    "`git {}` may be an alias or an external command",
                    sub.text
                ));
            }
        }
    }

    /// npm and friends: options that choose the shell scripts run with,
    /// another project, another configuration, or a package to install.
    fn node_package_manager(&mut self, base: &str, args: &[Word]) {
        let redefines = has_option(
            args,
            "",
            &[
                "script-shell",
                "prefix",
                "userconfig",
                "globalconfig",
                "node-options",
                "package",
                "call",
                "dir",
                "cwd",
            ],
        ) || (base == "npx" && has_option(args, "pc", &[]))
            || (base == "npm" && args.iter().any(|a| a.text == "-c" || a.text == "-C"));
        if redefines {
            self.complex(format!(
                "uses a {base} option that changes what {base} runs"
            ));
        }
    }

    /// `make -f -`, `make SHELL=…`: rules or a shell from elsewhere.
    fn make(&mut self, args: &[Word]) {
        let from_input = option_values(args, 'f', "file")
            .into_iter()
            .chain(option_values(args, 'f', "makefile"))
            .any(|f| STDIN_PATHS.contains(&f) || f.starts_with('$'));
        let shell = args
            .iter()
            .any(|a| a.text.starts_with("SHELL=") || a.text.starts_with(".SHELLFLAGS="));
        if from_input || shell || args.iter().any(|a| a.dynamic && a.text.starts_with("-f")) {
            self.complex("gives make its rules or shell from elsewhere");
        }
    }

    /// `find … -exec CMD … ;` runs CMD: it is a command of the line too.
    /// The `{}` it gets are found paths, checked on `find` itself.
    fn find_exec(&mut self, args: &[Word]) {
        let mut i = 0;
        while i < args.len() {
            let t = args[i].text.as_str();
            if matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir") {
                let end = args[i + 1..]
                    .iter()
                    .position(|a| a.text == ";" || a.text == "+")
                    .map_or(args.len(), |p| i + 1 + p);
                let inner = args[i + 1..end].to_vec();
                if !inner.is_empty() {
                    let saved = self.cwd.clone();
                    if t.ends_with("dir") {
                        self.cwd = None;
                    }
                    if self.depth < super::MAX_DEPTH {
                        self.depth += 1;
                        self.interpret(Vec::new(), inner, Vec::new(), Ctx::default(), false);
                        self.depth -= 1;
                    } else {
                        self.unchecked("it nests commands too deeply to check".into());
                    }
                    self.cwd = saved;
                }
                i = end + 1;
            } else {
                i += 1;
            }
        }
    }

    /// Resolves a program as bash would: builtins, then a path (relative
    /// to the directory it runs in), then `PATH`.
    fn resolve(&mut self, name: &str, cwd: Option<&Path>) -> Program {
        if name.contains('/') {
            let path = match cwd {
                Some(c) => lexical_join(c, name),
                None if Path::new(name).is_absolute() => PathBuf::from(name),
                None => {
                    self.complex("runs a program by a relative path after an unpredictable cd");
                    return Program::NotFound {
                        name: name.to_string(),
                    };
                }
            };
            return match path.canonicalize() {
                Ok(c) if is_executable(&c) => Program::Path {
                    stamp: stamp(&c),
                    path: c,
                },
                _ => {
                    self.complex("runs a program that does not exist yet");
                    Program::NotFound {
                        name: path.display().to_string(),
                    }
                }
            };
        }
        if BUILTINS.contains(&name) {
            return Program::Builtin {
                name: name.to_string(),
            };
        }
        for dir in &self.env.path {
            let dir = if dir.is_absolute() {
                dir.clone()
            } else {
                match cwd {
                    Some(c) => c.join(dir),
                    None => continue,
                }
            };
            let candidate = dir.join(name);
            if is_executable(&candidate)
                && let Ok(c) = candidate.canonicalize()
            {
                return Program::Path {
                    stamp: stamp(&c),
                    path: c,
                };
            }
        }
        Program::NotFound {
            name: name.to_string(),
        }
    }
}
