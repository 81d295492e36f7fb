//! The denylist: what no approval mode, grant or rule lets run. It judges
//! each simple command of a parsed line by its program (after wrappers,
//! by the name the shell will run, whatever quoting spelled it) and its
//! arguments after quote removal, never by substrings of the text. So
//! `grep -rn shutdown src/` and `rm -rf target/` pass, while `su''do`,
//! `"sudo"`, `$(echo sudo)`, `rm --recursive --force /`, `find / -delete`
//! and a fork bomb under any name are refused.
//!
//! Refused: privilege escalation; formatting and raw writes to disks;
//! powering the machine off; recursive deletion, moves and permission
//! changes of `/`, top-level directories, the home directory and the
//! workspace's ancestors; killing every process; recursive shell
//! functions; code piped into a shell or interpreter; a program name or
//! shell code computed at run time; and lines that cannot be parsed.

use std::path::{Path, PathBuf};

use super::operation::{Access, ExecOp, Program, SimpleCommand, Stdin, Word, basename};
use super::shell::lexical_join;
use super::shell::{SHELLS, shell_has_script};
use super::workspace::Workspace;

/// Why a line is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// A short name of the rule (`privilege escalation`).
    pub rule: &'static str,
    /// What exactly was refused, for the model.
    pub detail: String,
}

impl std::fmt::Display for Denial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.detail, self.rule)
    }
}

const PRIVILEGE: &[&str] = &[
    "sudo", "su", "doas", "pkexec", "runuser", "sudoedit", "run0", "gosu", "su-exec",
];
const DISK: &[&str] = &[
    "mke2fs",
    "mkswap",
    "mkdosfs",
    "mkntfs",
    "mkexfatfs",
    "wipefs",
    "fdisk",
    "sfdisk",
    "cfdisk",
    "gdisk",
    "sgdisk",
    "parted",
    "blkdiscard",
    "cryptsetup",
    "dmsetup",
    "lvremove",
    "vgremove",
    "pvremove",
];
const POWER: &[&str] = &["shutdown", "reboot", "poweroff", "halt", "killall5"];
const POWER_VERBS: &[&str] = &[
    "poweroff",
    "reboot",
    "halt",
    "kexec",
    "suspend",
    "hibernate",
    "hybrid-sleep",
    "suspend-then-hibernate",
    "rescue",
    "emergency",
    "isolate",
    "soft-reboot",
];
/// Programs that run the command in their arguments.
const RUNNERS: &[&str] = &[
    "strace",
    "ltrace",
    "valgrind",
    "gdb",
    "chroot",
    "unshare",
    "nsenter",
    "setpriv",
    "systemd-run",
    "firejail",
    "proot",
    "fakeroot",
    "flatpak-spawn",
    "script",
    "flock",
    "parallel",
    "entr",
    "tsp",
    "taskset",
    "chrt",
    "perf",
    "catchsegv",
    "watch",
];
/// Interpreters that read their program from stdin when given none.
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "pypy",
    "pypy3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "Rscript",
    "tclsh",
    "wish",
    "osascript",
];

fn deny(rule: &'static str, detail: impl Into<String>) -> Option<Denial> {
    Some(Denial {
        rule,
        detail: detail.into(),
    })
}

/// The first reason `op` is refused, if any.
pub fn check(op: &ExecOp, workspace: &Workspace) -> Option<Denial> {
    if let Some(why) = &op.unchecked {
        return deny(
            "cannot be checked",
            format!(
                "Lathe refuses shell lines it cannot check: {why}. Simplify the command or split it into several"
            ),
        );
    }
    if let Some(f) = op.recursive_functions.first() {
        return deny(
            "fork bomb",
            format!("the shell function `{f}` calls itself"),
        );
    }
    for file in &op.files {
        if file.access == Access::Write && writes_device(&file.path) {
            return deny("raw device write", format!("writing to {}", file.path));
        }
    }
    let places = Places::new(workspace);
    op.commands.iter().find_map(|c| command(c, &places))
}

/// The places whose loss is a disaster.
struct Places {
    workspace: PathBuf,
    home: Option<PathBuf>,
}

impl Places {
    fn new(workspace: &Workspace) -> Self {
        Self {
            workspace: workspace.root().to_path_buf(),
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
        }
    }

    /// `/`, a top-level directory, the home directory and its dot-dirs, an
    /// ancestor of the workspace, its `.git`; the workspace itself when
    /// `with_workspace`.
    fn critical(&self, p: &Path, with_workspace: bool) -> bool {
        let root = Path::new("/");
        let ws = self.workspace.as_path();
        p == root
            || p.parent() == Some(root)
            || self.home.as_deref() == Some(p)
            || self.home.as_deref().is_some_and(|h| {
                p.parent() == Some(h)
                    && p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            || (ws.starts_with(p) && (with_workspace || p != ws))
            || p == ws.join(".git")
    }

    /// Whether a glob in directory `dir` could match a critical path.
    fn critical_children(&self, dir: &Path, with_workspace: bool) -> bool {
        let root = Path::new("/");
        dir == root
            || self.home.as_deref() == Some(dir)
            || self.home.as_deref().and_then(Path::parent) == Some(dir)
            || self.workspace.parent().is_some_and(|p| p.starts_with(dir))
            || (with_workspace && dir == self.workspace)
    }

    /// Whether `word`, as a path operand run in `cwd`, may name a critical
    /// place; `Err` when its start is unknown until it runs.
    fn dangerous(
        &self,
        word: &Word,
        cwd: Option<&Path>,
        with_workspace: bool,
    ) -> Result<Option<PathBuf>, ()> {
        let text = word.text.as_str();
        let cut = |stops: &[char]| text.find(stops).map_or(text, |i| &text[..i]);
        let (prefix, pattern) = if word.dynamic {
            (cut(&['$', '`']), true)
        } else if word.glob {
            (cut(&['*', '?', '[']), true)
        } else {
            (text, false)
        };
        if word.dynamic && prefix.is_empty() {
            return Err(());
        }
        let base = match cwd {
            Some(c) => c.to_path_buf(),
            None if prefix.starts_with('/') => PathBuf::from("/"),
            None => return Err(()),
        };
        if pattern {
            let dir = match prefix.rfind('/') {
                Some(0) => "/",
                Some(i) => &prefix[..i],
                None => ".",
            };
            let dir = lexical_join(&base, dir);
            return Ok(self.critical_children(&dir, with_workspace).then_some(dir));
        }
        let path = lexical_join(&base, prefix);
        Ok(self.critical(&path, with_workspace).then_some(path))
    }
}

fn writes_device(path: &str) -> bool {
    path.starts_with("/dev/")
        && !matches!(path, "/dev/null" | "/dev/zero" | "/dev/full" | "/dev/tty")
        && !path.starts_with("/dev/fd/")
        && !path.starts_with("/dev/pts/")
        && !path.starts_with("/dev/shm/")
}

fn command(c: &SimpleCommand, places: &Places) -> Option<Denial> {
    if matches!(c.program, Program::Dynamic) {
        return deny(
            "program computed at run time",
            format!(
                "`{}` runs a program whose name is known only when it runs; write the program name literally",
                c.display()
            ),
        );
    }
    let base = c.basename();
    let args = c.args();
    let shown = || format!("`{}`", c.display());
    if PRIVILEGE.contains(&base) {
        return deny("privilege escalation", format!("{} runs {base}", shown()));
    }
    if DISK.contains(&base) || base.starts_with("mkfs") {
        return deny(
            "disk formatting",
            format!("{} formats or erases disks", shown()),
        );
    }
    if POWER.contains(&base) || power_verb(base, args) {
        return deny(
            "system power",
            format!("{} shuts down, restarts or suspends the machine", shown()),
        );
    }
    if let Some(d) = runs_hidden(c, args) {
        return Some(d);
    }
    if let Some(d) = code_from_input(c, base, args) {
        return Some(d);
    }
    match base {
        "rm" => rm(c, args, places),
        "find" => find(c, args, places),
        "chmod" | "chown" | "chgrp" => permissions(c, args, places),
        "mv" => mv(c, args, places),
        "dd" => args
            .iter()
            .filter_map(|a| a.text.strip_prefix("of="))
            .find(|t| writes_device(t))
            .and_then(|t| deny("raw device write", format!("{} writes to {t}", shown()))),
        "shred" | "wipe" => args
            .iter()
            .find(|a| writes_device(&a.text))
            .and_then(|a| deny("raw device write", format!("{} erases {}", shown(), a.text))),
        "kill" | "pkill" | "killall" => kill(c, args),
        _ => None,
    }
}

fn power_verb(base: &str, args: &[Word]) -> bool {
    let first_operand = args.iter().find(|a| !a.text.starts_with('-'));
    match base {
        "systemctl" | "loginctl" => {
            first_operand.is_some_and(|a| POWER_VERBS.contains(&a.text.as_str()))
        }
        "init" | "telinit" => {
            first_operand.is_some_and(|a| matches!(a.text.as_str(), "0" | "6" | "1" | "s" | "S"))
        }
        _ => false,
    }
}

/// A wrapper or runner that hides a denied program in its arguments
/// (`strace -f sudo …`, `chroot / su`).
fn runs_hidden(c: &SimpleCommand, args: &[Word]) -> Option<Denial> {
    if c.wrappers.is_empty() && !RUNNERS.contains(&c.basename()) {
        return None;
    }
    let hidden = args.iter().find(|a| {
        let b = basename(&a.text);
        PRIVILEGE.contains(&b) || DISK.contains(&b) || b.starts_with("mkfs") || POWER.contains(&b)
    })?;
    deny(
        "privilege escalation",
        format!("`{}` runs {}", c.display(), hidden.text),
    )
}

/// Shell code that Lathe cannot see: piped into a shell or interpreter,
/// or computed at run time and handed to `sh -c`, `eval` or a here-document.
fn code_from_input(c: &SimpleCommand, base: &str, args: &[Word]) -> Option<Denial> {
    let shell = SHELLS.contains(&base);
    if base == "eval" && args.iter().any(|a| a.dynamic) {
        return deny(
            "code computed at run time",
            format!("`{}` evaluates code known only when it runs", c.display()),
        );
    }
    if shell {
        if let Some(i) = args.iter().position(|a| {
            a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('c')
        }) && args[i + 1..]
            .iter()
            .find(|a| !a.text.starts_with(['-', '+']))
            .is_some_and(|code| code.dynamic)
        {
            return deny(
                "code computed at run time",
                format!("`{}` runs shell code known only when it runs", c.display()),
            );
        }
        if shell_has_script(args) {
            return None;
        }
    } else if (!INTERPRETERS.contains(&base) && !base.starts_with("python"))
        || !interpreter_reads_stdin(args)
    {
        return None;
    }
    match &c.stdin {
        Stdin::Pipe => deny(
            "code piped into an interpreter",
            format!(
                "`{}` runs whatever the previous command prints; run the code directly or save it to a file first",
                c.display()
            ),
        ),
        Stdin::Inline { code: None } => deny(
            "code computed at run time",
            format!("`{}` runs a here-document with substitutions", c.display()),
        ),
        _ => None,
    }
}

/// Whether an interpreter has no program argument (`python3`, `perl -`).
fn interpreter_reads_stdin(args: &[Word]) -> bool {
    for a in args {
        let t = a.text.as_str();
        if t == "-" {
            return true;
        }
        if matches!(
            t,
            "-c" | "-m" | "-e" | "-E" | "-r" | "-p" | "--eval" | "--print"
        ) {
            return false;
        }
        if !t.starts_with('-') {
            return false;
        }
    }
    true
}

fn split_options(args: &[Word]) -> (Vec<&Word>, Vec<&Word>) {
    let mut opts = Vec::new();
    let mut operands = Vec::new();
    let mut done = false;
    for a in args {
        if !done && a.text == "--" {
            done = true;
        } else if !done && a.text.starts_with('-') && a.text.len() > 1 && !a.dynamic {
            opts.push(a);
        } else {
            operands.push(a);
        }
    }
    (opts, operands)
}

fn has_flag(opts: &[&Word], short: &[char], long: &[&str]) -> bool {
    opts.iter().any(|o| match o.text.strip_prefix("--") {
        Some(l) => long.contains(&l),
        None => o.text.chars().skip(1).any(|c| short.contains(&c)),
    })
}

fn rm(c: &SimpleCommand, args: &[Word], places: &Places) -> Option<Denial> {
    let (opts, operands) = split_options(args);
    if has_flag(&opts, &[], &["no-preserve-root"]) {
        return deny(
            "filesystem destruction",
            format!("`{}` disables rm's protection of /", c.display()),
        );
    }
    if !has_flag(&opts, &['r', 'R'], &["recursive"]) {
        return None;
    }
    for t in operands {
        match places.dangerous(t, c.cwd.as_deref(), true) {
            Ok(Some(p)) => {
                return deny(
                    "filesystem destruction",
                    format!("`{}` deletes {} recursively", c.display(), p.display()),
                );
            }
            Ok(None) => {}
            Err(()) => {
                return deny(
                    "filesystem destruction",
                    format!(
                        "`{}` deletes recursively a path that starts with a value known only when it runs ({}); if it were empty this could delete /. Write the path literally",
                        c.display(),
                        t.text
                    ),
                );
            }
        }
    }
    None
}

fn find(c: &SimpleCommand, args: &[Word], places: &Places) -> Option<Denial> {
    let destructive = args.iter().any(|a| {
        matches!(
            a.text.as_str(),
            "-delete" | "-exec" | "-execdir" | "-ok" | "-okdir"
        )
    });
    if !destructive {
        return None;
    }
    let starts: Vec<&Word> = args
        .iter()
        .take_while(|a| !a.text.starts_with(['-', '(', '!']))
        .collect();
    let dot = Word::literal(".");
    let starts = if starts.is_empty() {
        vec![&dot]
    } else {
        starts
    };
    for s in starts {
        match places.dangerous(s, c.cwd.as_deref(), false) {
            Ok(None) => {}
            Ok(Some(p)) => {
                return deny(
                    "filesystem destruction",
                    format!(
                        "`{}` deletes or runs commands on everything under {}",
                        c.display(),
                        p.display()
                    ),
                );
            }
            Err(()) => {
                return deny(
                    "filesystem destruction",
                    format!(
                        "`{}` deletes under a directory known only when it runs",
                        c.display()
                    ),
                );
            }
        }
    }
    None
}

fn permissions(c: &SimpleCommand, args: &[Word], places: &Places) -> Option<Denial> {
    let (opts, operands) = split_options(args);
    let reference = has_flag(&opts, &[], &["reference"])
        || opts.iter().any(|o| o.text.starts_with("--reference="));
    let targets = if reference {
        &operands[..]
    } else {
        operands.get(1..).unwrap_or_default()
    };
    targets
        .iter()
        .find_map(|t| match places.dangerous(t, c.cwd.as_deref(), false) {
            Ok(Some(p)) => deny(
                "dangerous permission change",
                format!(
                    "`{}` changes the permissions or owner of {}",
                    c.display(),
                    p.display()
                ),
            ),
            _ => None,
        })
}

fn mv(c: &SimpleCommand, args: &[Word], places: &Places) -> Option<Denial> {
    let (_, operands) = split_options(args);
    let sources = operands.split_last().map_or(&[][..], |(_, s)| s);
    sources
        .iter()
        .find_map(|t| match places.dangerous(t, c.cwd.as_deref(), true) {
            Ok(Some(p)) => deny(
                "filesystem destruction",
                format!("`{}` moves {} away", c.display(), p.display()),
            ),
            _ => None,
        })
}

/// `kill -9 -1` signals every process the user owns; `kill 1` is init.
fn kill(c: &SimpleCommand, args: &[Word]) -> Option<Denial> {
    if c.basename() != "kill" {
        return None;
    }
    let mut pids_only = false;
    let mut signal_seen = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        if !pids_only {
            if t == "--" {
                pids_only = true;
                continue;
            }
            if matches!(t, "-s" | "-n") {
                i += 1;
                signal_seen = true;
                continue;
            }
            if t.starts_with('-') && !signal_seen && t != "-1" {
                signal_seen = true;
                continue;
            }
            if t == "-1" && !signal_seen && args.len() > i {
                // `kill -1 PID`: -1 is the signal (SIGHUP).
                signal_seen = true;
                continue;
            }
        }
        if matches!(t, "-1" | "1") {
            return deny(
                "kills every process",
                format!("`{}` signals every process (or init)", c.display()),
            );
        }
    }
    None
}

#[cfg(test)]
#[path = "denylist_tests.rs"]
mod tests;
