//! Simple commands: wrappers looked through, programs that run other code
//! (`eval`, `sh -c`, `find -exec`, `git -c`), the program resolved as the
//! shell would resolve it, and the subcommand that scopes a grant.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::lexical_join;
use super::walk::{Ctx, Walker};
use crate::policy::operation::{FileStamp, Program, SimpleCommand, Stdin, Word, basename};

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

/// Shells: `-c STRING` runs a string; without a script they read stdin.
pub(crate) const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh",
];

/// Builtins that change how later commands are found or run.
const REDEFINERS: &[&str] = &["alias", "enable", "hash", "trap", "bind", "shopt", "coproc"];

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

/// Skips a wrapper's options from `start`; returns where its operands
/// begin. `short_val` lists short options that take a value, `long_val`
/// long ones (as `--x v`; `--x=v` is one word anyway).
fn skip_options(argv: &[Word], start: usize, short_val: &str, long_val: &[&str]) -> usize {
    let mut i = start;
    while let Some(w) = argv.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            return i + 1;
        }
        if !t.starts_with('-') || t == "-" || w.dynamic {
            return i;
        }
        if let Some(long) = t.strip_prefix("--") {
            i += if !long.contains('=') && long_val.contains(&long) {
                2
            } else {
                1
            };
            continue;
        }
        let flags: Vec<char> = t.chars().skip(1).collect();
        let takes_next = flags
            .iter()
            .position(|c| short_val.contains(*c))
            .is_some_and(|k| k + 1 == flags.len());
        i += if takes_next { 2 } else { 1 };
    }
    i
}

/// What one wrapper hides.
struct Unwrapped {
    /// Where the wrapped command starts, or `None`: not a wrapper here.
    next: Option<usize>,
    /// The wrapper feeds arguments from stdin (`xargs`).
    extra_args: bool,
    /// `env -C DIR`.
    chdir: Option<Word>,
    /// `env -S STRING`, split into words.
    split: Option<Vec<Word>>,
}

fn unwrap_one(argv: &[Word], at: usize) -> Unwrapped {
    let mut u = Unwrapped {
        next: None,
        extra_args: false,
        chdir: None,
        split: None,
    };
    let Some(w) = argv.get(at).filter(|w| w.is_plain()) else {
        return u;
    };
    let start = at + 1;
    u.next = match basename(&w.text) {
        "env" => {
            let mut i = start;
            while let Some(a) = argv.get(i) {
                let t = a.text.as_str();
                if a.dynamic {
                    break;
                }
                if t == "--" {
                    i += 1;
                    break;
                }
                if t == "-S" || t == "--split-string" {
                    u.split = argv.get(i + 1).map(split_words);
                    return Unwrapped {
                        next: Some(i + 2),
                        ..u
                    };
                }
                if let Some(v) = t
                    .strip_prefix("--split-string=")
                    .or_else(|| t.strip_prefix("-S"))
                {
                    u.split = Some(split_words(&Word {
                        text: v.to_string(),
                        ..a.clone()
                    }));
                    return Unwrapped {
                        next: Some(i + 1),
                        ..u
                    };
                }
                if t == "-C" || t == "--chdir" {
                    u.chdir = argv.get(i + 1).cloned();
                    i += 2;
                } else if let Some(dir) = t.strip_prefix("--chdir=") {
                    u.chdir = Some(Word::literal(dir));
                    i += 1;
                } else if t == "-u" || t == "--unset" {
                    i += 2;
                } else if t.starts_with('-') || is_assignment(t) {
                    i += 1;
                } else {
                    break;
                }
            }
            Some(i)
        }
        "nice" => Some(skip_options(argv, start, "n", &["adjustment"])),
        "nohup" | "builtin" | "setsid" => Some(skip_options(argv, start, "", &[])),
        "timeout" => Some(skip_options(argv, start, "sk", &["signal", "kill-after"]) + 1),
        "time" => Some(skip_options(argv, start, "fo", &["format", "output"])),
        "stdbuf" => Some(skip_options(
            argv,
            start,
            "ioe",
            &["input", "output", "error"],
        )),
        "ionice" => {
            let i = skip_options(argv, start, "cn", &["class", "classdata"]);
            let by_pid = argv[start..i.min(argv.len())]
                .iter()
                .any(|a| a.text.starts_with("-p") || a.text == "--pid");
            (!by_pid).then_some(i)
        }
        "command" => {
            let i = skip_options(argv, start, "", &[]);
            let query = argv[start..i.min(argv.len())]
                .iter()
                .any(|a| a.text.starts_with('-') && a.text.contains(['v', 'V']));
            (!query).then_some(i)
        }
        "exec" => Some(skip_options(argv, start, "a", &[])),
        "xargs" => {
            u.extra_args = true;
            Some(skip_options(
                argv,
                start,
                "adEILnPs",
                &[
                    "arg-file",
                    "delimiter",
                    "eof",
                    "replace",
                    "max-lines",
                    "max-args",
                    "max-procs",
                    "max-chars",
                    "process-slot-var",
                ],
            ))
        }
        "busybox" => argv
            .get(start)
            .filter(|a| !a.text.starts_with('-'))
            .map(|_| start),
        _ => None,
    };
    u
}

/// `env -S` and `watch` take one string and split it into words.
fn split_words(w: &Word) -> Vec<Word> {
    if w.dynamic {
        return vec![w.clone()];
    }
    match shlex::split(&w.text) {
        Some(parts) if !parts.is_empty() => parts.into_iter().map(Word::literal).collect(),
        _ => vec![Word {
            dynamic: true,
            ..w.clone()
        }],
    }
}

fn is_assignment(t: &str) -> bool {
    t.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
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

/// The operand after a shell's options that `-c` runs, when there is one.
fn dash_c_code(args: &[Word]) -> Option<&Word> {
    let mut i = 0;
    let mut has_c = false;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if t == "--" || !t.starts_with(['-', '+']) || t == "-" {
            break;
        }
        if t.starts_with('-') && !t.starts_with("--") && t.contains('c') {
            has_c = true;
        }
        // `-o OPTION` and `+O OPTION` take a value.
        if matches!(t, "-o" | "+o" | "-O" | "+O") {
            i += 1;
        }
        i += 1;
    }
    if has_c { args.get(i) } else { None }
}

/// Whether a shell invocation names a script to run (else it reads stdin).
pub(crate) fn shell_has_script(args: &[Word]) -> bool {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if t == "--" {
            return args.len() > i + 1;
        }
        if t == "-s" || (t.starts_with('-') && !t.starts_with("--") && t.contains('s')) {
            return false;
        }
        if t.starts_with('-') && t.contains('c') && !t.starts_with("--") {
            return true;
        }
        if matches!(t, "-o" | "+o" | "-O" | "+O") {
            i += 2;
            continue;
        }
        if !t.starts_with(['-', '+']) || t == "-" {
            return t != "-";
        }
        i += 1;
    }
    false
}

/// Whether `base` takes a subcommand as its first operand.
pub(crate) fn has_subcommands(base: &str) -> bool {
    SUBCOMMANDS.iter().any(|(p, _)| *p == base)
}

/// The subcommand that scopes a grant: `git status`, `cargo test`,
/// `python -m pytest`; `None` for programs without subcommands.
pub(crate) fn subcommand_of(base: &str, args: &[Word]) -> Option<String> {
    if base.starts_with("python") || base.starts_with("pypy") {
        return match args {
            [m, module, ..] if m.text == "-m" && module.is_plain() => {
                Some(format!("-m {}", module.text))
            }
            _ => None,
        };
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
    /// Notes an assignment that changes what commands run.
    pub(super) fn note_assignment(&mut self, name: &str, value: &Word) {
        if changes_what_runs(name) {
            self.complex(format!("sets {name}, which changes what commands run"));
        }
        if value.dynamic {
            // `FOO=$(…)` already made the line complex through its substitution.
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
    fn interpret(
        &mut self,
        mut wrappers: Vec<Word>,
        argv: Vec<Word>,
        assignments: Vec<String>,
        cx: Ctx,
        mut extra_args: bool,
    ) {
        let mut argv = argv;
        let mut cwd = self.cwd.clone();
        loop {
            let u = unwrap_one(&argv, 0);
            let Some(next) = u.next.filter(|n| *n < argv.len() || u.split.is_some()) else {
                break;
            };
            extra_args |= u.extra_args;
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
        let Some(first) = argv.first().cloned() else {
            return;
        };
        let base = basename(&first.text).to_string();
        let program = if first.is_plain() {
            let key = (first.text.clone(), cwd.clone());
            match self.resolved.get(&key) {
                Some(p) => p.clone(),
                None => {
                    let p = self.resolve(&first.text, cwd.as_deref());
                    self.resolved.insert(key, p.clone());
                    p
                }
            }
        } else {
            self.complex("computes the program name at run time");
            Program::Dynamic
        };
        self.note_function_call(&first.text);
        let args = argv[1..].to_vec();
        let subcommand = subcommand_of(&base, &args);
        let is_cd = matches!(base.as_str(), "cd" | "pushd" | "popd");
        self.out.commands.push(SimpleCommand {
            argv,
            wrappers,
            program,
            subcommand,
            redirects: cx.redirects.clone(),
            assignments,
            cwd: cwd.clone(),
            stdin: cx.stdin.clone(),
            extra_args,
        });
        self.look_inside(&base, &args, &cx);
        if is_cd {
            self.cwd = match (cx.top, args.as_slice(), &cwd) {
                (true, [], _) => self.env.home.clone(),
                (true, [dir], Some(c)) if dir.is_plain() && dir.text != "-" => {
                    Some(lexical_join(c, &dir.text))
                }
                _ => None,
            };
        }
    }

    fn note_function_call(&mut self, name: &str) {
        if let Some(current) = self.in_function.last().cloned() {
            self.calls
                .entry(current)
                .or_default()
                .push(name.to_string());
        }
        if self.calls.contains_key(name) {
            self.complex("calls a shell function");
            // The function may change directory.
            self.cwd = None;
        }
    }

    /// Commands that run other code: look into it when it is literal.
    fn look_inside(&mut self, base: &str, args: &[Word], cx: &Ctx) {
        match base {
            "eval" => {
                self.complex("uses eval");
                if !args.is_empty() && args.iter().all(|a| !a.dynamic) {
                    let code = join_words(args);
                    self.nested(&code, false, Stdin::Inherited);
                }
            }
            "source" | "." => self.complex("runs the commands of a file (source)"),
            "watch" => {
                self.complex("runs a command string (watch)");
                let at = skip_options(args, 0, "nd", &["interval", "differences"]);
                let rest = &args[at.min(args.len())..];
                if !rest.is_empty() && rest.iter().all(|a| !a.dynamic) {
                    let code = join_words(rest);
                    self.nested(&code, true, Stdin::Inherited);
                }
            }
            "git" => self.git(args),
            "cargo"
                if args
                    .iter()
                    .any(|a| a.text == "--config" || a.text.starts_with("--config=")) =>
            {
                self.complex("uses cargo --config, which can redefine what cargo runs");
            }
            "find" => self.find_exec(args),
            b if SHELLS.contains(&b) => {
                if let Some(code) = dash_c_code(args) {
                    self.complex(format!("runs a shell string ({b} -c)"));
                    if !code.dynamic {
                        let code = code.text.clone();
                        self.nested(&code, true, Stdin::Inherited);
                    }
                } else if !shell_has_script(args)
                    && let Stdin::Inline { code } = &cx.stdin
                {
                    self.complex(format!("feeds shell code to {b} on its input"));
                    if let Some(code) = code.clone() {
                        self.nested(&code, true, Stdin::Inherited);
                    }
                }
            }
            b if REDEFINERS.contains(&b) => {
                self.complex(format!("uses `{b}`, which changes how later commands run"));
            }
            "exec" if args.is_empty() => {}
            _ => {}
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
            if t == "-c" || t == "--config-env" {
                self.complex(format!("uses git {t}, which can redefine what git runs"));
                i += 2;
                continue;
            }
            if (t.starts_with("-c") && t.len() > 2)
                || t.starts_with("--config-env=")
                || t.starts_with("--exec-path=")
            {
                self.complex("uses a git option that can redefine what git runs");
                i += 1;
                continue;
            }
            if matches!(
                t,
                "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix"
            ) {
                i += 2;
                continue;
            }
            if !t.starts_with('-') {
                break;
            }
            i += 1;
        }
        if args[i.min(args.len())..]
            .iter()
            .any(|a| a.text.starts_with("--output") || a.text == "--ext-diff")
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

    /// `find … -exec CMD … ;` runs CMD: it is a command of the line too.
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
                        let cx = Ctx::default();
                        self.interpret(Vec::new(), inner, Vec::new(), cx, true);
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
                _ => Program::NotFound {
                    name: path.display().to_string(),
                },
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

fn join_words(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}
