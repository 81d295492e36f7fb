//! Simple commands: wrappers looked through, programs that run other code
//! (`eval`, `sh -c`, `find -exec`, `git -c`), the program resolved as the
//! shell would resolve it, and the subcommand that scopes a grant. git's
//! own command line is read in `git.rs`, `find -exec` in `find.rs`, and
//! which arguments are files read or written in `roles.rs`.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::interpreters::{SHELLS, Source, is_stdin_path, source_of};
use super::roles::{existing_files, file_roles, git_worktree_writes, path_like};
use super::tables::{BUILTINS, GIT_COMMANDS, MAX_WRAPPERS, SUBCOMMANDS, known_flags};
use super::walk::{Ctx, Var, Walker};
use super::wrappers::{is_wrapper, unwrap_one};
use super::{expand_glob, lexical_join, path_inside};
use crate::policy::options::{Arg, Scan, Spec, has_option, operands, option_values};
use crate::protocol::operation::{
    Access, FileStamp, Program, SimpleCommand, Stdin, Word, basename,
};

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
        "CC",
        "CXX",
        "CPP",
        "LD",
        "AR",
        "CFLAGS",
        "CXXFLAGS",
        "CPPFLAGS",
        "LDFLAGS",
        "MAKEFLAGS",
        "MAKEFILES",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "TMPDIR",
        "KUBECONFIG",
        "VIRTUAL_ENV",
        "SHELL",
        "TERMINFO",
        "LOCPATH",
        "GCONV_PATH",
    ];
    // Interpreters, toolchains and package managers read these.
    const PREFIXES: &[&str] = &[
        "LD_",
        "DYLD_",
        "GIT_",
        "BASH",
        "CARGO_",
        "RUSTC",
        "RUSTDOC",
        "RUSTUP_",
        "RUSTFLAGS",
        "NPM_CONFIG_",
        "npm_config_",
        "NODE_",
        "YARN_",
        "PNPM_",
        "BUN_",
        "DENO_",
        "PYTHON",
        "PIP_",
        "UV_",
        "POETRY_",
        "CONDA_",
        "PERL",
        "RUBY",
        "GEM_",
        "BUNDLE_",
        "GO",
        "CGO_",
        "JAVA_",
        "_JAVA_",
        "MAVEN_",
        "GRADLE_",
        "XDG_",
        "DOCKER_",
        "COMPOSER_",
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

/// How the subcommand of `base` that runs something by name (`npm run
/// lint`, `go run ./cmd/x`, `cargo run`) reads its options: which take a
/// value, and whether they may follow the name (npm's do; the others
/// hand what follows the name to what they run).
fn run_options(base: &str) -> Spec<'static> {
    match base {
        "npm" => Spec::gnu(
            "w",
            &[
                "workspace",
                "prefix",
                "loglevel",
                "registry",
                "userconfig",
                "cache",
                "script-shell",
            ],
        ),
        "pnpm" => Spec::posix(
            "CF",
            &["dir", "filter", "reporter", "workspace-concurrency"],
        ),
        "yarn" => Spec::posix("", &["cwd"]),
        "bun" => Spec::posix("F", &["cwd", "filter"]),
        "cargo" => Spec::posix(
            "pFjZ",
            &[
                "package",
                "bin",
                "example",
                "features",
                "jobs",
                "profile",
                "target",
                "target-dir",
                "manifest-path",
                "config",
                "color",
                "message-format",
                "lockfile-path",
            ],
        ),
        // Go's flags: one dash, whole names.
        "go" => Spec {
            single_dash: true,
            ..Spec::posix(
                "",
                &[
                    "C",
                    "o",
                    "p",
                    "exec",
                    "tags",
                    "ldflags",
                    "gcflags",
                    "asmflags",
                    "gccgoflags",
                    "mod",
                    "modfile",
                    "overlay",
                    "pkgdir",
                    "toolexec",
                    "pgo",
                    "covermode",
                    "coverpkg",
                    "buildmode",
                    "compiler",
                    "installsuffix",
                ],
            )
        },
        _ => Spec::gnu("", &[]),
    }
}

/// A grant's scope for a subcommand that runs something by name: the
/// subcommand, each option that may change what runs (as read, with its
/// value), and the name. `npm run lint` covers `npm run --silent lint`,
/// never `npm run -w lint deploy`.
fn run_scope(base: &str, sub: &str, rest: &[Word]) -> String {
    const QUIET: &[&str] = &["silent", "quiet", "verbose", "if-present", "release"];
    let mut scope = vec![sub.to_string()];
    let mut named = false;
    for (_, a) in Scan::new(rest, run_options(base)) {
        let value = a.value().and_then(|v| v.text()).map(|v| format!("={v}"));
        match a {
            // The name; later operands are what it is given (and npm's
            // options may follow it).
            Arg::Operand(w) | Arg::Dynamic(w) => {
                if !std::mem::replace(&mut named, true) {
                    scope.push(if w.is_plain() {
                        w.text.clone()
                    } else {
                        "$?".to_string()
                    });
                }
            }
            Arg::Short { letter, .. } if value.is_none() && "sqv".contains(letter) => {}
            Arg::Long { name, .. } if value.is_none() && QUIET.contains(&name) => {}
            Arg::Short { letter, .. } => {
                scope.push(format!("-{letter}{}", value.unwrap_or_default()));
            }
            Arg::Long { name, .. } => {
                scope.push(format!("--{name}{}", value.unwrap_or_default()));
            }
        }
    }
    scope.join(" ")
}

/// The subcommand that scopes a grant: `git status`, `cargo test`,
/// `python3 -m pytest`, the script an interpreter runs (`python3 a.py`);
/// `None` for programs without subcommands.
/// The subcommand; `Err` with the option when an unknown global option
/// makes it unsure.
fn find_subcommand(base: &str, args: &[Word]) -> Result<Option<String>, String> {
    match source_of(base, args) {
        Some(Source::Module(m)) if m.is_plain() => return Ok(Some(format!("-m {}", m.text))),
        Some(Source::Script(s)) if s.is_plain() => return Ok(Some(s.text)),
        Some(_) => return Ok(None),
        None => {}
    }
    let Some((_, with_value)) = SUBCOMMANDS.iter().find(|(p, _)| *p == base) else {
        return Ok(None);
    };
    let flags = known_flags(base);
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
        if !t.starts_with('-') || a.dynamic {
            break;
        }
        let name = t.split_once('=').map_or(t, |(n, _)| n);
        if with_value.contains(&name) && !t.contains('=') {
            i += 2;
        } else if t.contains('=')
            || flags.is_none_or(|f| f.contains(&name))
            || (name.len() > 2
                && !name.starts_with("--")
                && with_value
                    .iter()
                    .any(|v| v.len() == 2 && name.starts_with(v)))
        {
            // `-j4` and `-Cdir` carry their value.
            i += 1;
            if matches!(name, "-j" | "--jobs" | "-l" | "--load-average")
                && args
                    .get(i)
                    .is_some_and(|n| n.text.chars().all(|c| c.is_ascii_digit() || c == '.'))
            {
                i += 1;
            }
        } else {
            return Err(t.to_string());
        }
    }
    if base == "make" || base == "gmake" {
        // Every target, in order: `make test` does not cover `make install`.
        let targets: Vec<&Word> = args[i.min(args.len())..]
            .iter()
            .filter(|a| !a.text.starts_with('-') && !a.text.contains('='))
            .collect();
        if targets.iter().any(|t| !t.is_plain()) {
            return Err("a target computed at run time".into());
        }
        return Ok((!targets.is_empty()).then(|| {
            targets
                .iter()
                .map(|t| t.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        }));
    }
    let Some(sub) = args.get(i) else {
        return Ok(None);
    };
    // `npm run lint` does not cover `npm run deploy`.
    let named = matches!(
        (base, sub.text.as_str()),
        (
            "npm" | "pnpm" | "yarn" | "bun",
            "run" | "run-script" | "exec" | "x" | "dlx"
        ) | ("go", "run" | "tool")
            | ("cargo", "run")
    );
    if named {
        // Options before the subcommand choose what runs too (`npm -w
        // evil run lint`, `go -C dir run .`): part of the scope as written.
        let globals: Vec<&str> = args[..i].iter().map(|w| w.text.as_str()).collect();
        let scope = run_scope(base, &sub.text, &args[i + 1..]);
        return Ok(Some(if globals.is_empty() {
            scope
        } else {
            format!("{} {scope}", globals.join(" "))
        }));
    }
    let ok = sub.is_plain()
        && sub.text.starts_with(|c: char| c.is_ascii_alphanumeric())
        && sub
            .text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '.' | '_' | '-' | '+' | '@'));
    Ok(ok.then(|| sub.text.clone()))
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
    pub(super) fn git_config(&mut self, key: &str, value: &Word) {
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
    pub(super) fn code_string(&mut self, code: &Word, what: &str) {
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
        if self.out.commands.len() >= super::MAX_COMMANDS {
            self.unchecked(format!(
                "it runs more than {} commands; write long scripts to a file and run that",
                super::MAX_COMMANDS
            ));
            return;
        }
        let mut argv = argv;
        let mut cwd = self.cwd.clone();
        for round in 0.. {
            if round > MAX_WRAPPERS {
                self.unchecked("it nests more wrappers than Lathe follows".into());
                return;
            }
            let u = unwrap_one(&argv, 0);
            if let Some(code) = &u.code {
                self.code_string(code, "a wrapper's: flock -c, strace -o |CMD");
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
            if let Some(r) = &u.replace {
                // `xargs -I{} CMD {}`: each `{}` is an input item.
                for w in &mut rest {
                    if let Some(at) = w.text.find(r.as_str()) {
                        w.dynamic = true;
                        w.known_prefix = w.known_prefix.min(at);
                        w.glob = false;
                    }
                }
            }
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
        let Some(mut first) = argv.first().cloned() else {
            return;
        };
        if extra_args && first.is_plain() && is_wrapper(basename(&first.text)) {
            // `xargs env`: the command comes from the input.
            first.dynamic = true;
            first.known_prefix = 0;
            argv[0] = first.clone();
        }
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
        let subcommand = match find_subcommand(&base, &args) {
            Ok(sub) => sub,
            Err(option) => {
                self.complex(format!(
                    "uses `{option}` before the {base} subcommand, an option Lathe does not know, so the subcommand is unsure"
                ));
                None
            }
        };
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
            per_found: self.in_find_exec,
        });
        self.argument_files(&base, &args, cwd.as_deref());
        self.look_inside(&base, &args, &cx);
        if is_cd {
            self.change_directory(&base, &args, &cx, cwd);
        }
    }

    /// Files a command names as arguments. What known readers read and
    /// known writers write become file operations, so path rules and
    /// protected files hold for `cat .env` and `touch .git/hooks/x` as for
    /// the file tools; for any other program, a path outside the workspace
    /// does.
    fn argument_files(&mut self, base: &str, args: &[Word], cwd: Option<&Path>) {
        match file_roles(base, args) {
            Some((reads, writes)) => {
                // An option value outside the workspace that is neither
                // (`patch -d/tmp`) may be written to.
                let options: Vec<Word> = args
                    .iter()
                    .filter(|a| a.text.starts_with('-'))
                    .cloned()
                    .collect();
                let unknown: Vec<Word> = path_like(&options)
                    .into_iter()
                    .filter(|w| !reads.iter().chain(&writes).any(|k| k.text == w.text))
                    .collect();
                for w in reads {
                    self.named_file(&w, Access::Read, cwd, false);
                }
                for w in writes {
                    self.named_file(&w, Access::Write, cwd, false);
                }
                for w in unknown {
                    self.named_file(&w, Access::Write, cwd, true);
                }
            }
            None => {
                for w in path_like(args) {
                    self.named_file(&w, Access::Write, cwd, true);
                }
                // What it names that exists, for path rules (`openssl -in
                // key.pem`, `curl -F f=@.env`, `tar cf - .env`).
                if let Some(dir) = cwd {
                    for w in existing_files(args, dir) {
                        self.named_file(&w, Access::Read, cwd, false);
                    }
                    if base == "git" {
                        for w in git_worktree_writes(args, dir) {
                            self.named_file(&w, Access::Write, cwd, false);
                        }
                    }
                }
            }
        }
    }

    /// One named file (each match of a glob); `only_outside` keeps it only
    /// when it leaves the workspace.
    fn named_file(&mut self, w: &Word, access: Access, cwd: Option<&Path>, only_outside: bool) {
        if w.dynamic || w.text.is_empty() || w.text.contains("://") {
            return;
        }
        let outside = |t: &str| !path_inside(t, false, cwd, self.env.workspace);
        if w.glob {
            let Some(base) = cwd.or(Some(Path::new("/")).filter(|_| w.text.starts_with('/')))
            else {
                return;
            };
            // `shopt -s dotglob` or `GLOBIGNORE` make `*` match dot files.
            let dotglob = self.cd_redefined || self.vars.contains_key("GLOBIGNORE");
            let mut budget = self.glob_budget;
            let found = expand_glob(base, &w.text, 64, dotglob, &mut budget);
            self.glob_budget = budget;
            if let Some(found) = found
                && !found.is_empty()
            {
                for p in found {
                    let t = p.display().to_string();
                    if !only_outside || outside(&t) {
                        self.file_op(&Word::literal(t), access, cwd, true);
                    }
                }
                return;
            }
        }
        if !only_outside || outside(&w.text) {
            self.file_op(w, access, cwd, true);
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
                found: (c != path).then_some(path),
                path: c,
            },
            Err(_) => Program::NotFound {
                name: path.display().to_string(),
            },
        })
    }

    /// `cd [-L|-P|-e|-@] [--] [DIR]`: the directory of what follows, when
    /// it is sure to run and its target is literal; else unknown. `CDPATH`,
    /// `shopt` (`cdable_vars`), `popd` and `pushd +N` leave it unknown.
    fn change_directory(&mut self, base: &str, args: &[Word], cx: &Ctx, cwd: Option<PathBuf>) {
        let physical = has_option(args, "P", &[]);
        let targets = operands(args);
        let cdpath = self.cd_redefined
            || self.vars.contains_key("CDPATH")
            || std::env::var_os("CDPATH").is_some_and(|v| !v.is_empty());
        let sure = cx.top && !cx.conditional && base != "popd";
        self.cwd = if !sure {
            None
        } else if targets.is_empty() {
            if base == "pushd" {
                None
            } else {
                self.env.home.clone()
            }
        } else if let ([dir], Some(c)) = (targets.as_slice(), cwd)
            && dir.is_plain()
            && !dir.text.starts_with(['-', '+'])
            && (Path::new(&dir.text).is_absolute() || !cdpath)
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

    /// `printf -v NAME`, `read NAME`: a variable takes a value known only
    /// at run time; an array element's subscript is evaluated.
    pub(super) fn assigned_by_name(&mut self, name: &str) {
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
    pub(super) fn interpreter(&mut self, base: &str, args: &[Word], source: Source, cx: &Ctx) {
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
            Source::Script(ref program) | Source::Module(ref program) => {
                let module = matches!(source, Source::Module(_));
                // Only options known not to load more code than the script.
                let before = args
                    .iter()
                    .position(|a| a.text == program.text)
                    .map_or(args, |p| &args[..p]);
                let safe = |a: &Word| -> bool {
                    let t = a.text.as_str();
                    if !t.starts_with('-') || a.dynamic {
                        // A value of a previous option (`-W ignore`).
                        return !a.dynamic;
                    }
                    let (short_ok, long_ok): (&str, &[&str]) = match base {
                        b if b.starts_with("python") || b.starts_with("pypy") => {
                            ("uBEsSOqbIvRPWX", &["check-hash-based-pycs"])
                        }
                        "node" | "nodejs" => (
                            "",
                            &[
                                "enable-source-maps",
                                "no-warnings",
                                "trace-warnings",
                                "no-deprecation",
                                "trace-deprecation",
                                "inspect",
                                "inspect-brk",
                                "trace-uncaught",
                                "abort-on-uncaught-exception",
                                "max-old-space-size",
                                "stack-size",
                                "unhandled-rejections",
                            ],
                        ),
                        "ruby" => ("wWv", &[]),
                        "perl" => ("wWXTtlnpas0123456789", &[]),
                        "php" => ("nqH", &[]),
                        "lua" => ("WE", &[]),
                        _ => return true,
                    };
                    match t.strip_prefix("--") {
                        Some(long) => {
                            let name = long.split_once('=').map_or(long, |(n, _)| n);
                            long_ok.contains(&name)
                        }
                        // `-m` ends the options: the rest is the module.
                        None => t[1..]
                            .chars()
                            .take_while(|&c| !(module && c == 'm'))
                            .all(|c| short_ok.contains(c)),
                    }
                };
                if !SHELLS.contains(&base) && !before.iter().all(safe) {
                    self.complex(format!(
                        "{base} takes options that may load more code than its script"
                    ));
                }
            }
        }
    }

    /// npm and friends: options that choose the shell scripts run with,
    /// another project, another configuration, or a package to install.
    pub(super) fn node_package_manager(&mut self, base: &str, args: &[Word]) {
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
        for code in option_values(args, 'c', "call") {
            self.code_string(&Word::literal(code), "npm exec -c");
        }
    }

    /// `make -f -`, `make SHELL=…`, `make -C /elsewhere`, `make --eval`:
    /// rules or a shell from elsewhere.
    pub(super) fn make(&mut self, args: &[Word]) {
        let files: Vec<&str> = option_values(args, 'f', "file")
            .into_iter()
            .chain(option_values(args, 'f', "makefile"))
            .chain(option_values(args, 'C', "directory"))
            .collect();
        let elsewhere = files.iter().any(|f| {
            is_stdin_path(f)
                || f.starts_with('$')
                || !path_inside(f, false, self.cwd.as_deref(), self.env.workspace)
        });
        // `make CC=./evil test`: variables on the command line override the
        // Makefile's.
        let shell = args.iter().any(|a| {
            a.text.split_once('=').is_some_and(|(name, _)| {
                !name.starts_with('-')
                    && (matches!(name, "SHELL" | ".SHELLFLAGS" | "MAKE") || changes_what_runs(name))
            })
        });
        if elsewhere || shell || args.iter().any(|a| a.dynamic && a.text.starts_with("-f")) {
            self.complex("gives make its rules or shell from elsewhere");
        }
        if has_option(args, "", &["eval"]) {
            self.unchecked("it gives make rules on its command line (--eval)".into());
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
                    found: (c != path).then_some(path),
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
                    found: (c != candidate).then_some(candidate),
                    path: c,
                };
            }
        }
        Program::NotFound {
            name: name.to_string(),
        }
    }
}
