//! The denylist: what no approval mode, grant or rule lets run. It judges
//! each simple command of a parsed line by its program (after wrappers,
//! by the name the shell will run, whatever quoting spelled it) and its
//! arguments after quote removal, never by substrings of the text. So
//! `grep -rn shutdown src/` and `rm -rf target/` pass, while `su''do`,
//! `"sudo"`, `$(echo sudo)`, `rm --recursive --force /`, `find / -delete`
//! and a fork bomb under any name are refused.
//!
//! Refused: privilege escalation (also under another name: a program is
//! judged by the file it resolves to); formatting and raw writes to disks
//! and kernel controls; powering the machine off; recursive deletion,
//! moves and permission changes of `/`, system directories, the home
//! directory and the workspace's ancestors, and a glob that matches all of
//! them; killing every process; fork bombs (a function or alias that calls
//! itself, an endless loop of background jobs); code Lathe cannot see
//! (piped into a shell or interpreter, computed at run time); a program
//! name computed at run time; and lines that cannot be checked.

use std::path::{Path, PathBuf};

use super::options::{self, Arg, Scan, Spec, has_option, is_long, operands};
use super::shell::{
    SHELLS, Source, find_filters, find_starts, is_stdin_path, lexical_join, source_of,
};
use super::workspace::Workspace;
use crate::protocol::operation::{Access, ExecOp, Program, SimpleCommand, Stdin, Word, basename};

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
    "sudo", "su", "doas", "pkexec", "runuser", "sudoedit", "run0", "gosu", "su-exec", "sg",
    "newgrp", "setcap",
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
    "soft-reboot",
    "shutdown",
    "sleep",
];
/// Programs that run the command in their arguments and that Lathe does
/// not unwrap: a denied program anywhere in their arguments is refused.
const RUNNERS: &[&str] = &[
    "parallel", "tsp", "gdb", "perf", "script", "entr", "watch", "expect", "at", "batch",
];
/// System directories nothing in them may be deleted recursively.
const DEEP_SYSTEM_DIRS: &[&str] = &[
    "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/sys",
    "/proc", "/dev", "/var",
];
/// Top-level directories of the system: no glob may delete inside them.
const SYSTEM_DIRS: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media",
    "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/usr", "/var",
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
    if let Some(why) = op.fork_bombs.first() {
        return deny("fork bomb", why.clone());
    }
    for file in &op.files {
        if file.access == Access::Write
            && (file.outside || file.path.starts_with('/'))
            && let Some(d) = kernel_write(Path::new(&file.path))
        {
            return deny(d, format!("writing to {}", file.path));
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

/// How much a command can destroy, hence which places are critical to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Deleting: the workspace itself and the home's dot-directories too.
    Delete,
    /// Moving away: the workspace itself too.
    Move,
    /// Changing permissions, or finding: system places only.
    Change,
}

/// What a path operand may stand for.
enum Target {
    /// This path.
    Path(PathBuf),
    /// Whatever a glob in this directory matches; `all` when the pattern
    /// matches every name (`*`, `.*`).
    Glob { dir: PathBuf, all: bool },
    /// Known only when it runs, and possibly empty.
    Unknown,
    /// Known only when it runs, never empty.
    Opaque,
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
    fn critical(&self, p: &Path, scope: Scope) -> bool {
        let with_workspace = scope != Scope::Change;
        let root = Path::new("/");
        let ws = self.workspace.as_path();
        p == root
            || SYSTEM_DIRS.iter().any(|d| p == Path::new(d))
            || (scope == Scope::Delete
                && DEEP_SYSTEM_DIRS.iter().any(|d| p.starts_with(d))
                && !p.starts_with("/var/tmp"))
            || self.home.as_deref() == Some(p)
            || (scope == Scope::Delete
                && self.home.as_deref().is_some_and(|h| {
                    p.parent() == Some(h)
                        && p.file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                }))
            || (ws.starts_with(p) && (with_workspace || p != ws))
            || p == ws.join(".git")
    }

    /// Whether a glob in `dir` could match a critical place.
    fn critical_glob(&self, dir: &Path, all: bool, scope: Scope) -> bool {
        let with_workspace = scope != Scope::Change;
        let root = Path::new("/");
        dir == root
            || SYSTEM_DIRS.iter().any(|d| dir == Path::new(d))
            || self.home.as_deref().and_then(Path::parent) == Some(dir)
            || self.workspace.parent().is_some_and(|p| p.starts_with(dir))
            || (all
                && (self.home.as_deref() == Some(dir)
                    || dir == Path::new("/tmp")
                    || (with_workspace && dir == self.workspace)))
    }

    /// What `word`, a path operand run in `cwd`, stands for. Existing
    /// symbolic links on the way are followed.
    fn target(word: &Word, cwd: Option<&Path>) -> Target {
        let text = word.text.as_str();
        let (prefix, pattern) = if word.dynamic {
            (word.prefix(), true)
        } else if word.glob {
            (
                &text[..text.find(['*', '?', '[']).unwrap_or(text.len())],
                true,
            )
        } else {
            (text, false)
        };
        if word.dynamic && prefix.is_empty() {
            // `${X:?}/x`, `$tmp` from mktemp: unknown, but never empty.
            return if word.nonempty {
                Target::Opaque
            } else {
                Target::Unknown
            };
        }
        let base = match cwd {
            Some(c) => c.to_path_buf(),
            None if prefix.starts_with('/') => PathBuf::from("/"),
            None => return Target::Unknown,
        };
        if pattern {
            let dir = match prefix.rfind('/') {
                Some(0) => "/",
                Some(i) => &prefix[..i],
                None => ".",
            };
            let name = &text[prefix.rfind('/').map_or(0, |i| i + 1)..];
            let all = !word.dynamic && name.chars().all(|c| matches!(c, '*' | '?' | '.'));
            let dir = follow(lexical_join(&base, dir));
            return Target::Glob { dir, all };
        }
        let path = lexical_join(&base, prefix);
        // `link/` and `link/x` go through the link; `link` alone is the link.
        let through = if prefix.ends_with('/') {
            follow(path)
        } else {
            match (path.parent(), path.file_name()) {
                (Some(parent), Some(name)) => follow(parent.to_path_buf()).join(name),
                _ => path,
            }
        };
        Target::Path(through)
    }

    /// A critical place `word` may name: `Ok(Some(place))`, `Ok(None)`, or
    /// `Err(())` when it is known only at run time.
    fn dangerous(
        &self,
        word: &Word,
        cwd: Option<&Path>,
        scope: Scope,
    ) -> Result<Option<PathBuf>, ()> {
        match Self::target(word, cwd) {
            Target::Unknown => Err(()),
            Target::Opaque => Ok(None),
            Target::Path(p) => Ok(self.critical(&p, scope).then_some(p)),
            Target::Glob { dir, all } => Ok(self.critical_glob(&dir, all, scope).then_some(dir)),
        }
    }
}

/// The path with its existing prefix's symbolic links resolved.
fn follow(path: PathBuf) -> PathBuf {
    if let Ok(c) = path.canonicalize() {
        return c;
    }
    let mut existing = path.as_path();
    let mut rest = Vec::new();
    while let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) {
        rest.push(name.to_os_string());
        existing = parent;
        if let Ok(c) = existing.canonicalize() {
            let mut out = c;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return out;
        }
    }
    path
}

/// Writing `path` writes a disk or a kernel control.
fn kernel_write(path: &Path) -> Option<&'static str> {
    let p = lexical_join(Path::new("/"), &path.to_string_lossy());
    let s = p.to_string_lossy();
    let stream = matches!(
        s.as_ref(),
        "/dev/null"
            | "/dev/zero"
            | "/dev/full"
            | "/dev/tty"
            | "/dev/stdout"
            | "/dev/stderr"
            | "/dev/stdin"
    ) || ["/dev/fd/", "/dev/pts/", "/dev/shm/"]
        .iter()
        .any(|d| s.starts_with(d));
    if s.starts_with("/dev/") && !stream {
        return Some("raw device write");
    }
    if s == "/proc/sysrq-trigger" || s.starts_with("/proc/sys/") || s.starts_with("/sys/") {
        return Some("kernel control write");
    }
    None
}

/// The program's names: as written, and as the file it resolves to.
fn names(c: &SimpleCommand) -> Vec<&str> {
    let mut out = vec![c.basename()];
    if let Program::Path { path, .. } = &c.program
        && let Some(real) = path.file_name().and_then(|n| n.to_str())
        && real != c.basename()
    {
        out.push(real);
    }
    out
}

fn denied_program(name: &str) -> Option<&'static str> {
    if PRIVILEGE.contains(&name) {
        Some("privilege escalation")
    } else if DISK.contains(&name) || name.starts_with("mkfs") {
        Some("disk formatting")
    } else if POWER.contains(&name) {
        Some("system power")
    } else {
        None
    }
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
    let args = c.args();
    let shown = || format!("`{}`", c.display());
    for name in names(c) {
        if let Some(rule) = denied_program(name) {
            return deny(rule, format!("{} runs {name}", shown()));
        }
    }
    let base = c.basename();
    if power_verb(base, args) {
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
    if let Some(d) = writes_kernel(c, base, args) {
        return Some(d);
    }
    match base {
        "rm" => rm(c, args, places),
        "find" => find(c, args, places),
        "chmod" | "chown" | "chgrp" | "chattr" => permissions(c, args, places),
        "mv" => mv(c, args, places),
        "ln" | "cp" | "install" => copies_privilege(c, args, places),
        "kill" | "pkill" | "killall" | "skill" => kill(c, args),
        _ => None,
    }
}

/// `systemctl poweroff`, `systemctl start reboot.target`, `init 0`.
fn power_verb(base: &str, args: &[Word]) -> bool {
    match base {
        "systemctl" | "loginctl" => args.iter().any(|a| {
            let t = a.text.trim_end_matches(".target");
            POWER_VERBS.contains(&t) && !a.text.starts_with('-')
        }),
        "init" | "telinit" => args
            .iter()
            .any(|a| matches!(a.text.as_str(), "0" | "6" | "1" | "s" | "S")),
        _ => false,
    }
}

/// A runner Lathe does not unwrap that has a denied program in its
/// arguments (`parallel sudo …`).
fn runs_hidden(c: &SimpleCommand, args: &[Word]) -> Option<Denial> {
    if !RUNNERS.contains(&c.basename()) {
        return None;
    }
    let hidden = args
        .iter()
        .find(|a| denied_program(basename(&a.text)).is_some())?;
    deny(
        "privilege escalation",
        format!("`{}` runs {}", c.display(), hidden.text),
    )
}

/// Code Lathe cannot see: piped into a shell or interpreter, computed at
/// run time and handed to `-c`, `eval` or a here-document, or taken from
/// another command's output.
fn code_from_input(c: &SimpleCommand, base: &str, args: &[Word]) -> Option<Denial> {
    let unseen = |what: &str| {
        deny(
            "code Lathe cannot see",
            format!(
                "`{}` {what}; run the code directly, or save it to a file and show it first",
                c.display()
            ),
        )
    };
    if base == "eval" && args.iter().any(|a| a.dynamic) {
        return unseen("evaluates code known only when it runs");
    }
    if matches!(base, "source" | ".")
        && operands(args)
            .first()
            .is_some_and(|a| a.dynamic || is_stdin_path(&a.text))
        && !matches!(c.stdin, Stdin::Inline { code: Some(_) })
    {
        return unseen("runs commands it reads from its input");
    }
    let piped = matches!(c.stdin, Stdin::Pipe);
    let awk = matches!(base, "awk" | "gawk" | "mawk" | "nawk");
    if awk
        && piped
        && args.iter().any(|a| {
            a.text.contains("system(") || a.text.contains("| \"") || a.text.contains("|\"")
        })
    {
        return unseen("runs commands built from its input");
    }
    // A program read from input: `awk -f /dev/stdin`, `sed -f -`, `make -f -`.
    let program_files: Vec<&str> = match base {
        _ if awk => options::option_values(args, 'f', "file")
            .into_iter()
            .chain(options::option_values(args, 'W', "exec"))
            .collect(),
        "sed" | "gsed" => options::option_values(args, 'f', "file"),
        "make" | "gmake" => options::option_values(args, 'f', "file")
            .into_iter()
            .chain(options::option_values(args, 'f', "makefile"))
            .collect(),
        _ => Vec::new(),
    };
    if program_files
        .iter()
        .any(|f| is_stdin_path(f) || f.starts_with("$(") || f.starts_with("<("))
        && !matches!(c.stdin, Stdin::Inline { code: Some(_) } | Stdin::File)
    {
        return unseen("runs a program it reads from its input");
    }
    // Editors and debuggers run shell commands their input asks for.
    if piped
        && matches!(
            base,
            "ed" | "ex"
                | "vi"
                | "vim"
                | "nvim"
                | "dc"
                | "gdb"
                | "lldb"
                | "expect"
                | "ftp"
                | "sftp"
                | "at"
                | "batch"
                | "crontab"
        )
    {
        return unseen("takes commands from the previous command's output, which can run anything");
    }
    match source_of(base, args)? {
        Source::Inline(Some(code)) if code.dynamic => unseen("runs code known only when it runs"),
        Source::Inline(None) if c.extra_args => unseen("runs code it takes from its input"),
        Source::Script(s)
            if (s.dynamic
                && (s.text.starts_with("<(")
                    || s.prefix().is_empty() && s.text.contains("$(")))
                || is_descriptor(&s.text) =>
        {
            unseen("runs a script produced by another command")
        }
        Source::Stdin => match &c.stdin {
            Stdin::Pipe => unseen("runs whatever the previous command prints"),
            Stdin::Inline { code: None } => unseen("runs a here-document with substitutions"),
            Stdin::Inline { code: Some(_) } if !SHELLS.contains(&base) => {
                // A literal program for another interpreter: not parsed, but seen.
                None
            }
            _ => None,
        },
        _ => None,
    }
}

/// `/dev/fd/3`, `/proc/self/fd/4`: whatever a descriptor carries.
fn is_descriptor(t: &str) -> bool {
    let p = lexical_join(Path::new("/"), t);
    let s = p.to_string_lossy();
    s.starts_with("/dev/fd/") || (s.starts_with("/proc/") && s.contains("/fd/"))
}

/// Writes to a disk or a kernel control through a program's arguments
/// (`dd of=`, `cp … /dev/sda`, `tee /proc/sysrq-trigger`, `ln -s /dev/sda`).
fn writes_kernel(c: &SimpleCommand, base: &str, args: &[Word]) -> Option<Denial> {
    let cwd = c.cwd.as_deref().unwrap_or(Path::new("/"));
    let check = |t: &str| kernel_write(&lexical_join(cwd, t));
    let found = match base {
        "dd" => args
            .iter()
            .filter_map(|a| a.text.strip_prefix("of="))
            .find_map(|t| check(t).map(|r| (r, t.to_string()))),
        "cp" | "tee" | "install" | "shred" | "wipe" | "truncate" | "sponge" | "ln" | "mv"
        | "rsync" => operands(args)
            .into_iter()
            .find_map(|a| check(&a.text).map(|r| (r, a.text.clone()))),
        _ => None,
    };
    let (rule, target) = found?;
    deny(rule, format!("`{}` writes {target}", c.display()))
}

/// `ln -s /usr/bin/sudo x`, `cp /usr/bin/sudo x`: a privileged program
/// under another name; `ln -s / r`: a critical place behind a harmless
/// name, for a later command to go through.
fn copies_privilege(c: &SimpleCommand, args: &[Word], places: &Places) -> Option<Denial> {
    let ops = operands(args);
    let sources = if has_option(args, "t", &["target-directory"]) {
        &ops[..]
    } else {
        ops.split_last().map_or(&[][..], |(_, s)| s)
    };
    for s in sources {
        let real = Path::new(&s.text)
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
        if denied_program(basename(&s.text)).is_some()
            || real.is_some_and(|r| denied_program(&r).is_some())
        {
            return deny(
                "privilege escalation",
                format!(
                    "`{}` copies or links {} under another name",
                    c.display(),
                    s.text
                ),
            );
        }
        if c.basename() == "ln"
            && let Ok(Some(p)) =
                places.dangerous(s, c.cwd.as_deref().or(Some(Path::new("/"))), Scope::Change)
        {
            return deny(
                "filesystem destruction",
                format!("`{}` links {} under another name", c.display(), p.display()),
            );
        }
    }
    None
}

/// The operands of a command whose options may permute with them; for
/// chmod-like commands a mode such as `-rwx` is an operand.
fn path_operands(args: &[Word], modes: bool) -> Vec<&Word> {
    let is_mode = |t: &str| {
        modes
            && t.len() > 1
            && t.starts_with(['-', '+', '='])
            && t[1..]
                .chars()
                .all(|c| "rwxXstugoa,+-=0123456789".contains(c))
    };
    let mut out: Vec<&Word> = Vec::new();
    for (i, a) in Scan::new(args, Spec::default()) {
        match a {
            Arg::Operand(w) | Arg::Dynamic(w) => out.push(w),
            // A mode's letters read as a cluster: the word once.
            _ if is_mode(&args[i].text)
                && !out.last().is_some_and(|w| std::ptr::eq(*w, &args[i])) =>
            {
                out.push(&args[i]);
            }
            _ => {}
        }
    }
    out
}

fn rm(c: &SimpleCommand, args: &[Word], places: &Places) -> Option<Denial> {
    if has_option(args, "", &["no-preserve-root"]) {
        return deny(
            "filesystem destruction",
            format!("`{}` disables rm's protection of /", c.display()),
        );
    }
    if !has_option(args, "rR", &["recursive"]) && !c.per_found {
        return None;
    }
    if c.extra_args {
        return deny(
            "filesystem destruction",
            format!(
                "`{}` deletes recursively paths it takes from its input; name them literally or use find … -delete",
                c.display()
            ),
        );
    }
    for t in path_operands(args, false) {
        match places.dangerous(t, c.cwd.as_deref(), Scope::Delete) {
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

/// `find / -delete`: deleting everything under a critical place. (What
/// `-exec` runs is judged as its own command, on each start point.)
fn find(c: &SimpleCommand, args: &[Word], places: &Places) -> Option<Denial> {
    if !args.iter().any(|a| a.text == "-delete") {
        return None;
    }
    let Some(starts) = find_starts(args) else {
        return deny(
            "filesystem destruction",
            format!(
                "`{}` deletes under start points it reads from a file",
                c.display()
            ),
        );
    };
    // Filtered (`-name '*.pyc'`), it deletes some files, not the place.
    let scope = if find_filters(args) {
        Scope::Change
    } else {
        Scope::Delete
    };
    for s in &starts {
        match places.dangerous(s, c.cwd.as_deref(), scope) {
            Ok(None) => {}
            Ok(Some(p)) => {
                return deny(
                    "filesystem destruction",
                    format!("`{}` deletes everything under {}", c.display(), p.display()),
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
    let modes = c.basename() != "chgrp";
    let ops = path_operands(args, modes);
    let reference = has_option(args, "", &["reference"]);
    // chmod's mode is its first operand, or one written like an option
    // wherever it stands (`chmod -R / -w`); every other operand is a path.
    let mode_at = if reference {
        None
    } else if modes {
        ops.iter()
            .position(|w| w.text.starts_with('-'))
            .or((!ops.is_empty()).then_some(0))
    } else {
        (!ops.is_empty()).then_some(0)
    };
    let targets: Vec<&Word> = ops
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != mode_at)
        .map(|(_, w)| *w)
        .collect();
    let recursive = has_option(args, "R", &["recursive"]) || c.per_found;
    targets.iter().find_map(
        |t| match places.dangerous(t, c.cwd.as_deref(), Scope::Change) {
            Ok(Some(p)) => deny(
                "dangerous permission change",
                format!(
                    "`{}` changes the permissions or owner of {}",
                    c.display(),
                    p.display()
                ),
            ),
            Err(()) if recursive => deny(
                "dangerous permission change",
                format!(
                    "`{}` changes recursively a path known only when it runs",
                    c.display()
                ),
            ),
            _ => None,
        },
    )
}

fn mv(c: &SimpleCommand, args: &[Word], places: &Places) -> Option<Denial> {
    let ops = path_operands(args, false);
    let sources = if has_option(args, "t", &["target-directory"]) {
        &ops[..]
    } else {
        ops.split_last().map_or(&[][..], |(_, s)| s)
    };
    sources.iter().find_map(
        |t| match places.dangerous(t, c.cwd.as_deref(), Scope::Move) {
            Ok(Some(p)) => deny(
                "filesystem destruction",
                format!("`{}` moves {} away", c.display(), p.display()),
            ),
            _ => None,
        },
    )
}

/// Unrelated process names; a `pkill` pattern that matches most of them
/// would match almost every process (`.`, `[a-z]`, `o`).
const BYSTANDERS: &[&str] = &[
    "systemd",
    "init",
    "sshd",
    "bash",
    "dbus-daemon",
    "Xorg",
    "node",
    "python3",
    "cron",
    "login",
];

/// What pkill, pgrep, killall or skill select by: the patterns (process
/// names), and whether a selector (user, parent, group, session,
/// terminal…) narrows or widens it. Each reads its options as it does
/// (`-fu root` is `-f -u root`), after a leading signal (`-9`, `-KILL`).
fn kill_selection(program: &str, args: &[Word]) -> (Vec<Word>, bool) {
    // A signal (`-9`, `-KILL`, `-SIGTERM`, `-rtmin+1`) is taken out before
    // the options are read, wherever it stands (after `--` too).
    let args: Vec<Word> = args
        .iter()
        .filter(|w| w.dynamic || !is_signal_word(&w.text))
        .map(|w| match w.text.strip_prefix('-') {
            // killall reads `-user` as `--user` (getopt_long_only).
            Some(long)
                if program == "killall"
                    && long.len() > 1
                    && !long.starts_with('-')
                    && "user".starts_with(long) =>
            {
                Word {
                    text: "--user".into(),
                    ..w.clone()
                }
            }
            _ => w.clone(),
        })
        .collect();
    // Options that take a value, and those of them that select by owner,
    // family or terminal.
    const PKILL_SELECTORS: &[&str] = &[
        "user",
        "euid",
        "uid",
        "group",
        "pgroup",
        "parent",
        "session",
        "terminal",
        "older",
        "runstates",
    ];
    const PKILL_VALUES: &[&str] = &[
        "user",
        "euid",
        "uid",
        "group",
        "pgroup",
        "parent",
        "session",
        "terminal",
        "signal",
        "delimiter",
        "pidfile",
        "logpidfile",
        "runstates",
        "older",
        "ns",
        "nslist",
        "queue",
        "cgroup",
        "env",
    ];
    let (values, chosen, long_values, long_chosen): (&str, &str, &[&str], &[&str]) = match program {
        "killall" => (
            "nosuyZ",
            "u",
            &[
                "user",
                "signal",
                "older-than",
                "younger-than",
                "context",
                "ns",
            ],
            &["user"],
        ),
        "skill" | "snice" => ("ctupn", "tu", &["user", "tty", "signal"], &["user", "tty"]),
        // `-O` (older than) and `-r` (run states) alone select every
        // process too.
        _ => ("dgGPstuUFrOq", "gGPstuUOr", PKILL_VALUES, PKILL_SELECTORS),
    };
    let reading = Spec {
        short_val: values,
        long_val: long_values,
        ..Spec::default()
    };
    let mut patterns = Vec::new();
    let mut selectors = false;
    for (_, a) in Scan::new(&args, reading) {
        match a {
            Arg::Operand(w) | Arg::Dynamic(w) => patterns.push(w.clone()),
            a => selectors |= a.is(chosen, long_chosen),
        }
    }
    (patterns, selectors)
}

/// A signal as kill, pkill and killall take it among their options:
/// `-9`, `-KILL`, `-SIGKILL`, `-kill`, `-RTMIN+1`.
fn is_signal_word(t: &str) -> bool {
    const NAMES: &[&str] = &[
        "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "IOT", "BUS", "FPE", "KILL", "USR1", "SEGV",
        "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CLD", "CONT", "STOP", "TSTP", "TTIN",
        "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "POLL", "PWR", "SYS",
        "RTMIN", "RTMAX",
    ];
    let Some(s) = t.strip_prefix('-') else {
        return false;
    };
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    let upper = s.to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    let base = name.split(['+', '-']).next().unwrap_or(name);
    NAMES.contains(&base)
        && name[base.len()..]
            .trim_start_matches(['+', '-'])
            .chars()
            .all(|c| c.is_ascii_digit())
}

/// `kill -9 -1` signals every process the user owns; `kill 1` is init;
/// `pkill -u` and `killall -u` kill a user's every process; `xargs kill`
/// kills what its input names.
fn kill(c: &SimpleCommand, args: &[Word]) -> Option<Denial> {
    let all = |what: &str| deny("kills every process", format!("`{}` {what}", c.display()));
    if c.basename() != "kill" {
        // pkill/killall/skill: a selector (user, parent, group, session…)
        // without a pattern, or a pattern every process name matches.
        let (patterns, selectors) = kill_selection(c.basename(), args);
        // pkill -v kills every process its pattern does not match.
        if c.basename() == "pkill" && has_option(args, "v", &["inverse"]) {
            return all("kills every process its pattern does not match (-v)");
        }
        let regex = c.basename() != "killall" || has_option(args, "r", &["regexp"]);
        let matches_everything = |p: &Word| {
            !p.dynamic
                && if regex {
                    regex::Regex::new(&p.text).is_ok_and(|r| {
                        // A pattern that matches nothing in particular: the
                        // empty name, or most of a set of unrelated ones.
                        r.is_match("")
                            || BYSTANDERS.iter().filter(|n| r.is_match(n)).count() * 2
                                >= BYSTANDERS.len()
                    })
                } else {
                    p.text.is_empty()
                }
        };
        if patterns.iter().any(matches_everything) || (selectors && patterns.is_empty()) {
            return all("kills every process of a user, or every process it can");
        }
        return None;
    }
    if c.extra_args {
        return all("kills processes its input names; name them literally");
    }
    let pid = |t: &str| t.trim().parse::<i64>().ok();
    let mut pids_only = false;
    let mut signal_seen = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        if a.dynamic {
            if a.text.contains("$((") {
                return all("signals a process id it computes; name the process literally");
            }
            continue;
        }
        if !pids_only {
            if t == "--" {
                pids_only = true;
                continue;
            }
            if matches!(t, "-s" | "-n") || is_long(t, "signal") {
                i += usize::from(!t.contains('='));
                signal_seen = true;
                continue;
            }
            if t.trim_start().starts_with('-') && !signal_seen && args.len() > i {
                // The first option is the signal (`-9`, `-KILL`, `-1` before a pid).
                signal_seen = true;
                continue;
            }
        }
        if matches!(pid(t), Some(-1 | 1)) {
            return all("signals every process (or init)");
        }
    }
    None
}

#[cfg(test)]
#[path = "denylist_tests.rs"]
mod tests;
