//! Containment for the processes tools start.
//!
//! A command never runs as a direct child of Lathe. Lathe starts its own
//! binary in a helper mode, the *warden* (`lathe __sandbox POLICY`), which:
//!
//! - dies with Lathe: its parent-death signal is SIGTERM, and it checks
//!   that its parent is still the Lathe that started it;
//! - is a child subreaper, so everything the command starts, including
//!   `setsid`, `nohup` and double-forked daemons, stays its descendant;
//! - starts the *confiner* (`lathe __sandbox-exec POLICY`), which applies
//!   the Landlock ruleset to itself and then becomes the shell
//!   (`execve`: the ruleset and the parent-death signal carry over);
//! - when the shell exits, or on SIGTERM, SIGINT, SIGHUP or SIGQUIT (a
//!   timeout, an interrupt, Lathe's exit or death), kills every process
//!   left under it, reaps them, and exits as the shell did.
//!
//! The Landlock ruleset (the `landlock` crate; this crate allows no
//! `unsafe`, hence a helper mode rather than a `pre_exec` hook): read and
//! execute anywhere; write only beneath the workspace, the temp directory
//! and the configured roots (with the REFER right, so links and renames
//! stay inside them); `/dev/null` writable; no TCP bind or connect unless
//! the network is allowed; no signals to, or abstract sockets of,
//! processes outside the sandbox. A ruleset the kernel cannot enforce
//! stops the command, with a message that says why and how to turn the
//! sandbox off; nothing runs half-confined without saying so.
//!
//! The environment commands see is built here too: variables that look
//! like secrets are removed whatever the sandbox mode.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The argument that starts the warden.
pub const WARDEN_ARG: &str = "__sandbox";
/// The argument that starts the confiner.
pub const CONFINER_ARG: &str = "__sandbox-exec";
/// The exit status of a helper that could not set the sandbox up; its
/// stderr then starts with [`FAILURE_PREFIX`].
pub const SETUP_FAILED: i32 = 125;
/// How a helper's setup failure starts on stderr.
pub const FAILURE_PREFIX: &str = "lathe-sandbox: ";

/// How commands are confined (`sandbox = "…"` in the config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Write in the workspace, the temp dir and configured roots only.
    #[default]
    WorkspaceWrite,
    /// Write nowhere (but `/dev/null`).
    ReadOnly,
    /// No Landlock ruleset; processes are still contained and killed.
    Off,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::WorkspaceWrite => "workspace-write",
            Mode::ReadOnly => "read-only",
            Mode::Off => "off",
        }
    }

    /// How much the mode confines: a workspace config may only raise it.
    pub fn strictness(self) -> u8 {
        match self {
            Mode::Off => 0,
            Mode::WorkspaceWrite => 1,
            Mode::ReadOnly => 2,
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "workspace-write" => Ok(Mode::WorkspaceWrite),
            "read-only" => Ok(Mode::ReadOnly),
            "off" => Ok(Mode::Off),
            other => Err(format!(
                "unknown sandbox mode `{other}`; use workspace-write, read-only or off"
            )),
        }
    }
}

/// The sandbox as configured.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Settings {
    pub mode: Mode,
    /// Let sandboxed commands use the network.
    pub network: bool,
    /// More roots commands may write beneath (besides the workspace and
    /// the temp directory).
    pub writable_roots: Vec<PathBuf>,
    /// The `lathe` binary that runs the helper modes; `None`: this
    /// process's own executable, if it is `lathe`.
    pub helper: Option<PathBuf>,
    /// Environment variables commands may see although their names look
    /// like secrets.
    pub env_allow: Vec<String>,
    /// Directories commands may not even read (Lathe's own config, with its
    /// keys, and its data: journals, trusted hooks).
    pub hidden: Vec<PathBuf>,
}

/// What the helpers are told: everything about one command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    pub mode: Mode,
    pub network: bool,
    /// Roots writable beneath (workspace-write only).
    pub writable: Vec<PathBuf>,
    /// Paths inside them that stay read-only (`.git`, `.lathe`, …): they
    /// can make code run later, outside the sandbox.
    #[serde(default)]
    pub protected: Vec<PathBuf>,
    /// Directories hidden from the command (an empty one in their place).
    #[serde(default)]
    pub hidden: Vec<PathBuf>,
    /// The working directory.
    pub cwd: PathBuf,
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// The process the helper must be a child of.
    pub parent: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "the sandbox helper (the `lathe` binary) was not found: {0}; \
         set sandbox = \"off\" in the config to run commands without Landlock"
    )]
    NoHelper(String),
    #[error("the sandbox policy could not be encoded: {0}")]
    Encode(#[from] serde_json::Error),
}

impl Settings {
    /// The helper binary.
    fn helper(&self) -> Result<PathBuf, SandboxError> {
        if let Some(h) = &self.helper {
            return Ok(h.clone());
        }
        let exe = std::env::current_exe().map_err(|e| SandboxError::NoHelper(e.to_string()))?;
        let is_lathe = exe
            .file_stem()
            .is_some_and(|s| s.to_string_lossy() == "lathe");
        if is_lathe {
            Ok(exe)
        } else {
            Err(SandboxError::NoHelper(format!(
                "{} is not lathe",
                exe.display()
            )))
        }
    }

    /// The policy for running `argv` in `workspace`.
    pub fn policy(&self, workspace: &Path, argv: Vec<String>) -> Policy {
        let mut writable = Vec::new();
        if self.mode == Mode::WorkspaceWrite {
            writable.push(workspace.to_path_buf());
            writable.push(std::env::temp_dir());
            if Path::new("/dev/shm").is_dir() {
                writable.push(PathBuf::from("/dev/shm"));
            }
            writable.extend(self.writable_roots.iter().cloned());
        }
        let protected = if self.mode == Mode::WorkspaceWrite {
            protected_paths(workspace)
        } else {
            Vec::new()
        };
        // Never one that holds the workspace.
        let hidden = if self.mode == Mode::Off {
            Vec::new()
        } else {
            self.hidden
                .iter()
                .filter(|d| d.is_dir() && !workspace.starts_with(d))
                .cloned()
                .collect()
        };
        Policy {
            mode: self.mode,
            network: self.network,
            writable,
            protected,
            hidden,
            cwd: workspace.to_path_buf(),
            argv,
            parent: std::process::id(),
        }
    }

    /// A command that runs `policy` through the warden, with the scrubbed
    /// environment and stdin closed. The warden starts a session of its
    /// own (no controlling terminal; its pid is the group to kill).
    pub fn command(&self, policy: &Policy) -> Result<tokio::process::Command, SandboxError> {
        let helper = self.helper()?;
        let mut cmd = tokio::process::Command::new(helper);
        cmd.arg(WARDEN_ARG)
            .arg(serde_json::to_string(policy)?)
            .current_dir(&policy.cwd)
            .env_clear()
            .envs(command_env(std::env::vars_os(), &self.env_allow))
            .stdin(std::process::Stdio::null());
        // Not `kill_on_drop`: a SIGKILL would stop the warden before it
        // cleans up. Whoever holds the child tells the warden to stop.
        Ok(cmd)
    }
}

/// The workspace paths a sandboxed command may not change, because a
/// change there runs code later or changes Lathe's settings: the git
/// directory (and the one a `.git` file points to), `.lathe/`, `.mcp.json`
/// and `.envrc`. Only those that exist can be held read-only.
pub fn protected_paths(workspace: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for name in [".git", ".lathe", ".mcp.json", ".envrc"] {
        let p = workspace.join(name);
        if p.exists() {
            out.push(p);
        }
    }
    // A worktree or submodule: `.git` is a file naming the real directory.
    let dot_git = workspace.join(".git");
    if dot_git.is_file()
        && let Ok(text) = std::fs::read_to_string(&dot_git)
        && let Some(dir) = text.lines().find_map(|l| l.strip_prefix("gitdir:"))
    {
        let dir = workspace.join(dir.trim());
        if dir.is_dir() {
            out.push(dir);
        }
    }
    out
}

/// Whether an environment variable's name says it holds a secret (or
/// configures Lathe, or makes a shell run a file first).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"]
        .iter()
        .any(|w| upper.contains(w))
        || upper.starts_with("LATHE_")
        || upper.starts_with("AWS_")
        || matches!(
            upper.as_str(),
            "DATABASE_URL" | "BASH_ENV" | "ENV" | "PROMPT_COMMAND" | "SSH_AUTH_SOCK"
        )
}

/// Whether a variable's value is to be hidden wherever it shows up (the
/// words of [`is_secret_name`] that name secrets, not the configuration
/// ones like `LATHE_MODEL`, whose values are ordinary words).
pub fn holds_secret_value(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"]
        .iter()
        .any(|w| upper.contains(w))
        || upper == "DATABASE_URL"
}

/// The environment a command gets: `vars` without the secret-looking ones
/// (unless allowed by name).
pub fn command_env(
    vars: impl Iterator<Item = (OsString, OsString)>,
    allow: &[String],
) -> Vec<(OsString, OsString)> {
    vars.filter(|(k, _)| {
        let name = k.to_string_lossy();
        !is_secret_name(&name) || allow.iter().any(|a| a == name.as_ref())
    })
    .collect()
}

/// Runs a helper mode if `args` (the process's arguments) ask for one, and
/// returns its exit status; `None` for a normal start. Call it first in
/// `main`, before any thread or runtime starts.
pub fn helper_main(args: &[OsString]) -> Option<i32> {
    let mode = args.get(1)?.to_str()?;
    if mode != WARDEN_ARG && mode != CONFINER_ARG {
        return None;
    }
    let policy = args
        .get(2)
        .and_then(|p| p.to_str())
        .ok_or_else(|| "no policy given".to_string())
        .and_then(|p| serde_json::from_str::<Policy>(p).map_err(|e| e.to_string()));
    let policy = match policy {
        Ok(p) => p,
        Err(e) => return Some(fail(&format!("bad policy: {e}"))),
    };
    Some(if mode == WARDEN_ARG {
        helper::warden(policy)
    } else {
        helper::confine(policy)
    })
}

/// Reports a setup failure on stderr and gives the status to exit with.
fn fail(message: &str) -> i32 {
    eprintln!("{FAILURE_PREFIX}{message}");
    SETUP_FAILED
}

/// What a failed command's output says if the sandbox may have stopped
/// it, for the model and the person.
pub fn blocked_hint(policy: &Policy, stderr: &str) -> Option<String> {
    if policy.mode == Mode::Off {
        return None;
    }
    let lower = stderr.to_ascii_lowercase();
    let fs = lower.contains("permission denied")
        || lower.contains("operation not permitted")
        || lower.contains("read-only file system");
    let net = !policy.network
        && (lower.contains("network is unreachable")
            || lower.contains("could not resolve")
            || lower.contains("temporary failure in name resolution")
            || lower.contains("connection refused")
            || lower.contains("permission denied") && lower.contains("connect"));
    if !fs && !net {
        return None;
    }
    let writes = match policy.mode {
        Mode::ReadOnly => "nowhere".to_string(),
        _ => policy
            .writable
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    };
    Some(format!(
        "the sandbox ({}) may have blocked this: commands may write only in {writes}{}. \
         If the command needs more, say why and run it again with \"sandbox\": false, which \
         the person approves explicitly; or they can allow more in the config \
         ([shell] writable_roots, network)",
        policy.mode,
        if policy.network {
            ""
        } else {
            " and have no network"
        }
    ))
}

mod helper {
    //! The two helper modes. They run in a fresh process with no runtime
    //! and no other thread.

    use std::os::unix::process::CommandExt;
    use std::process::Command;

    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, Ruleset,
        RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
    };
    use nix::errno::Errno;
    use nix::sys::prctl;
    use nix::sys::signal::{Signal, kill};
    use nix::sys::signalfd::{SigSet, SignalFd};
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    use nix::unistd::{Pid, getppid};

    use super::{CONFINER_ARG, Mode, Policy, fail};

    /// Signals that end the command (and the warden waits on SIGCHLD).
    const STOPS: [Signal; 4] = [
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ];

    fn parent_is(expected: u32) -> bool {
        u32::try_from(getppid().as_raw()).is_ok_and(|p| p == expected)
    }

    pub fn warden(policy: Policy) -> i32 {
        // A session of its own: no terminal to write to, and a group Lathe
        // can kill as a whole.
        if let Err(e) = nix::unistd::setsid() {
            return fail(&format!("cannot start a session: {e}"));
        }
        // Lathe going away (even by SIGKILL) is a SIGTERM here; if it went
        // before this line, the parent check sees it.
        if let Err(e) = prctl::set_pdeathsig(Signal::SIGTERM) {
            return fail(&format!("cannot set the parent-death signal: {e}"));
        }
        if !parent_is(policy.parent) {
            return fail("lathe is gone");
        }
        if let Err(e) = prctl::set_child_subreaper(true) {
            return fail(&format!("cannot become a subreaper: {e}"));
        }
        let mut mask = SigSet::empty();
        mask.add(Signal::SIGCHLD);
        for s in STOPS {
            mask.add(s);
        }
        if let Err(e) = mask.thread_block() {
            return fail(&format!("cannot block signals: {e}"));
        }
        // Close-on-exec: the command gets no descriptor of the warden's.
        let signals = match SignalFd::with_flags(&mask, nix::sys::signalfd::SfdFlags::SFD_CLOEXEC) {
            Ok(fd) => fd,
            Err(e) => return fail(&format!("cannot watch signals: {e}")),
        };
        if policy.mode != Mode::Off {
            // Landlock covers TCP and writes; namespaces of its own add a
            // network with no interface up (UDP, raw sockets) and mounts
            // that hold the protected paths read-only, where the system
            // lets us make them.
            isolate(&policy);
        }
        let me = std::process::id();
        let child_policy = Policy {
            parent: me,
            ..policy
        };
        let encoded = match serde_json::to_string(&child_policy) {
            Ok(e) => e,
            Err(e) => return fail(&format!("cannot encode the policy: {e}")),
        };
        let exe = match std::env::current_exe() {
            Ok(e) => e,
            Err(e) => return fail(&format!("cannot find the lathe binary: {e}")),
        };
        let child = match Command::new(exe).arg(CONFINER_ARG).arg(encoded).spawn() {
            Ok(c) => c,
            Err(e) => return fail(&format!("cannot start the confiner: {e}")),
        };
        let Ok(shell) = i32::try_from(child.id()).map(Pid::from_raw) else {
            return fail("the confiner has no pid");
        };
        // The std handle is not waited on: the warden reaps everything.
        drop(child);
        let mut outcome: Option<WaitStatus> = None;
        while outcome.is_none() {
            match signals.read_signal() {
                Ok(Some(info)) => {
                    let signo = i32::try_from(info.ssi_signo).unwrap_or(0);
                    if signo == Signal::SIGCHLD as i32 {
                        outcome = reap(shell);
                    } else {
                        kill_all(Signal::SIGKILL);
                        return 128 + signo;
                    }
                }
                Ok(None) => {}
                Err(Errno::EINTR) => {}
                Err(e) => {
                    kill_all(Signal::SIGKILL);
                    return fail(&format!("cannot read signals: {e}"));
                }
            }
        }
        // The command is done: nothing it started outlives it.
        kill_all(Signal::SIGKILL);
        match outcome {
            Some(WaitStatus::Exited(_, code)) => code,
            Some(WaitStatus::Signaled(_, sig, _)) => {
                // Die the way the shell died, so Lathe sees the signal.
                let _ = SigSet::all().thread_unblock();
                let _ = nix::sys::signal::raise(sig);
                128 + sig as i32
            }
            _ => 1,
        }
    }

    /// Moves the warden (and so the command) into namespaces of its own:
    /// a network with nothing up (unless the network is allowed) and a
    /// mount table in which the protected paths are read-only. Through a
    /// user namespace when not privileged. Best effort: Landlock's rules
    /// hold either way. The command cannot undo these mounts: Landlock
    /// denies every mount change to a sandboxed process.
    fn isolate(policy: &Policy) {
        use nix::sched::{CloneFlags, unshare};
        // The command starts a PID namespace of its own: when it ends,
        // or its warden dies, the kernel kills everything left in it,
        // whatever the command did to the warden (a `prlimit` that keeps
        // it from reading /proc, say).
        let mut flags = CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWPID;
        if !policy.network {
            flags |= CloneFlags::CLONE_NEWNET;
        }
        // A user namespace of its own first, even for root: capabilities
        // held in it count for nothing outside, so a root command cannot
        // use CAP_SYS_PTRACE to read Lathe's memory or environment
        // through Landlock's ptrace scoping. Where the system forbids user
        // namespaces, root still gets the rest.
        let uid = nix::unistd::getuid();
        let gid = nix::unistd::getgid();
        if unshare(flags | CloneFlags::CLONE_NEWUSER).is_ok() {
            // Keep the same ids inside, so files keep their owners.
            let _ = std::fs::write("/proc/self/setgroups", "deny");
            let _ = std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"));
            let _ = std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"));
        } else if unshare(flags).is_err() {
            return;
        }
        protect(policy);
    }

    /// The mount table the command sees (in this private mount
    /// namespace): everything read-only, so no file outside the writable
    /// roots can have its mode, owner, times or attributes changed either
    /// (Landlock does not cover those); the writable roots writable; the
    /// protected paths read-only inside them; and the sockets of other
    /// programs (a terminal multiplexer, the desktop bus, Docker, X11)
    /// hidden, since connecting to one would run code outside.
    fn protect(policy: &Policy) {
        use nix::mount::{MsFlags, mount};
        const NONE: Option<&str> = None;
        // Nothing done here reaches the rest of the system.
        if mount(NONE, "/", NONE, MsFlags::MS_REC | MsFlags::MS_PRIVATE, NONE).is_err() {
            return;
        }
        // Each writable root becomes a mount of its own, so the read-only
        // remounts below pass it by.
        let mut writable = Vec::new();
        for root in &policy.writable {
            if mount(
                Some(root),
                root,
                NONE,
                MsFlags::MS_BIND | MsFlags::MS_REC,
                NONE,
            )
            .is_ok()
            {
                writable.push(root.clone());
            }
        }
        let under_writable = |p: &std::path::Path| {
            writable
                .iter()
                .any(|w| p.starts_with(w) && p != w.as_path())
        };
        for point in mount_points() {
            if writable.iter().any(|w| w == &point) || under_writable(&point) {
                continue;
            }
            read_only(&point);
        }
        for path in &policy.protected {
            if mount(
                Some(path),
                path,
                NONE,
                MsFlags::MS_BIND | MsFlags::MS_REC,
                NONE,
            )
            .is_ok()
            {
                read_only(path);
            }
        }
        hide_sockets();
        for dir in &policy.hidden {
            cover(dir);
        }
    }

    /// Remounts the mount at `path` read-only, keeping the flags a user
    /// namespace may not drop.
    fn read_only(path: &std::path::Path) {
        use nix::mount::{MsFlags, mount};
        use nix::sys::statvfs::{FsFlags, statvfs};
        const NONE: Option<&str> = None;
        let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY;
        if let Ok(st) = statvfs(path) {
            for (fs, ms) in [
                (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
                (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
                (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
                (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
                (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
                (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
            ] {
                if st.flags().contains(fs) {
                    flags |= ms;
                }
            }
        }
        let _ = mount(NONE, path, NONE, flags, NONE);
    }

    /// Every mount point, from `/proc/self/mountinfo`, parents first.
    fn mount_points() -> Vec<std::path::PathBuf> {
        let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
            return Vec::new();
        };
        info.lines()
            .filter_map(|l| l.split(' ').nth(4))
            .map(|p| std::path::PathBuf::from(unescape_mount_path(p)))
            .collect()
    }

    /// Mount paths escape space, tab, newline and backslash as `\ooo`.
    fn unescape_mount_path(p: &str) -> String {
        let mut out = Vec::with_capacity(p.len());
        let bytes = p.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let octal = bytes
                .get(i + 1..i + 4)
                .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
            if let Some(d) = octal {
                let v = d.iter().fold(0u32, |acc, b| acc * 8 + u32::from(b - b'0'));
                out.push(u8::try_from(v).unwrap_or(b'?'));
                i += 4;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Puts an empty read-only directory over `dir`.
    fn cover(dir: &std::path::Path) {
        use nix::mount::{MsFlags, mount};
        let _ = mount(
            Some("tmpfs"),
            dir,
            Some("tmpfs"),
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some("size=4k,mode=0555"),
        );
    }

    /// Covers the places other programs keep their sockets: an empty
    /// read-only directory over a socket directory, `/dev/null` over a
    /// socket file.
    fn hide_sockets() {
        use nix::mount::{MsFlags, mount};
        const NONE: Option<&str> = None;
        let uid = nix::unistd::getuid();
        let dirs = [
            format!("/run/user/{uid}"),
            format!("/tmp/tmux-{uid}"),
            "/tmp/.X11-unix".to_string(),
            "/run/dbus".to_string(),
            "/var/run/dbus".to_string(),
            "/run/systemd/private".to_string(),
        ];
        for dir in dirs.iter().map(std::path::Path::new).filter(|d| d.is_dir()) {
            cover(dir);
        }
        for sock in [
            "/var/run/docker.sock",
            "/run/docker.sock",
            "/run/podman/podman.sock",
        ] {
            if std::path::Path::new(sock).exists() {
                let _ = mount(Some("/dev/null"), sock, NONE, MsFlags::MS_BIND, NONE);
            }
        }
    }

    /// Reaps every child that has exited; the shell's status if it was
    /// one of them.
    fn reap(shell: Pid) -> Option<WaitStatus> {
        let mut found = None;
        loop {
            match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) | Err(_) => return found,
                Ok(status) => {
                    if status.pid() == Some(shell) {
                        found = Some(status);
                    }
                }
            }
        }
    }

    /// Kills every process under the warden and reaps it. Orphans come to
    /// the warden (it is their subreaper), so this goes on until there
    /// are no children left.
    fn kill_all(sig: Signal) {
        let me = std::process::id();
        for _ in 0..10_000 {
            // No child at all (the common case): nothing to look for.
            if waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) == Err(Errno::ECHILD) {
                return;
            }
            let children = children_of(me);
            if children.is_empty() {
                // Reap what is left; ECHILD means nothing is.
                while let Ok(status) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
                    if status == WaitStatus::StillAlive {
                        break;
                    }
                }
                if children_of(me).is_empty() {
                    return;
                }
                continue;
            }
            for pid in &children {
                let _ = kill(*pid, sig);
            }
            for pid in &children {
                let _ = waitpid(*pid, None);
            }
        }
    }

    /// The children of `parent`, from `/proc`.
    fn children_of(parent: u32) -> Vec<Pid> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|&pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|stat| {
                        // pid (comm) state ppid …; comm may hold anything.
                        let rest = &stat[stat.rfind(')')? + 1..];
                        rest.split_whitespace().nth(1)?.parse::<u32>().ok()
                    })
                    == Some(parent)
            })
            .map(Pid::from_raw)
            .collect()
    }

    pub fn confine(policy: Policy) -> i32 {
        if let Err(e) = prctl::set_pdeathsig(Signal::SIGKILL) {
            return fail(&format!("cannot set the parent-death signal: {e}"));
        }
        // As the first process of a PID namespace of its own, the warden
        // (outside it) shows as parent 0.
        if !parent_is(policy.parent) && getppid().as_raw() != 0 {
            return fail("the warden is gone");
        }
        // The warden blocked these for itself; the command gets them back.
        if let Err(e) = SigSet::all().thread_unblock() {
            return fail(&format!("cannot unblock signals: {e}"));
        }
        if policy.mode != Mode::Off
            && let Err(e) = restrict(&policy)
        {
            return fail(&e);
        }
        let Some((program, args)) = policy.argv.split_first() else {
            return fail("no command given");
        };
        let err = Command::new(program)
            .args(args)
            .current_dir(&policy.cwd)
            .exec();
        fail(&format!("cannot run {program}: {err}"))
    }

    /// Applies the Landlock ruleset to this process and what it starts.
    fn restrict(policy: &Policy) -> Result<(), String> {
        let abi = ABI::V6;
        let off = "set sandbox = \"off\" in the config (~/.config/lathe/config.toml) \
                   to run commands without it";
        let build = || -> Result<landlock::RestrictionStatus, landlock::RulesetError> {
            let mut ruleset = Ruleset::default()
                .set_compatibility(CompatLevel::BestEffort)
                .handle_access(AccessFs::from_all(abi))?;
            let scope = if policy.network {
                Scope::Signal.into()
            } else {
                ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
                Scope::from_all(abi)
            };
            ruleset
                .scope(scope)?
                .create()?
                .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))?
                .add_rules(path_beneath_rules(
                    &policy.writable,
                    AccessFs::from_all(abi),
                ))?
                .add_rules(path_beneath_rules(
                    ["/dev/null", "/dev/zero", "/dev/full"],
                    AccessFs::from_file(abi),
                ))?
                .restrict_self()
        };
        let status = build().map_err(|e| format!("the Landlock sandbox failed: {e}; {off}"))?;
        let effective = match status.landlock {
            LandlockStatus::Available { effective_abi, .. } => effective_abi,
            LandlockStatus::NotEnabled => {
                return Err(format!(
                    "Landlock is built into this kernel but not enabled (add `landlock` to the \
                     kernel's lsm= boot parameter); {off}"
                ));
            }
            _ => {
                return Err(format!(
                    "this kernel has no Landlock (it needs Linux 5.13 or newer); {off}"
                ));
            }
        };
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err(format!(
                "the kernel did not enforce the Landlock ruleset; {off}"
            ));
        }
        if !policy.network && effective < ABI::V4 {
            return Err(format!(
                "this kernel's Landlock (ABI {effective:?}) cannot block the network (it needs \
                 Linux 6.7); allow it with [shell] network = true, or {off}"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_variables_are_removed_unless_allowed() {
        let vars = [
            "PATH",
            "HOME",
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_PROFILE",
            "DATABASE_URL",
            "GITHUB_TOKEN",
            "MY_PASSWORD",
            "LATHE_HOME",
            "BASH_ENV",
            "npm_config__authToken",
            "LANG",
        ]
        .map(|k| (OsString::from(k), OsString::from("v")));
        let kept: Vec<String> = command_env(vars.clone().into_iter(), &[])
            .into_iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        assert_eq!(kept, ["PATH", "HOME", "LANG"]);
        let kept = command_env(vars.into_iter(), &["GITHUB_TOKEN".into()]);
        assert!(kept.iter().any(|(k, _)| k == "GITHUB_TOKEN"));
    }

    #[test]
    fn modes_parse_and_order() {
        assert_eq!("read-only".parse::<Mode>(), Ok(Mode::ReadOnly));
        assert!("none".parse::<Mode>().is_err());
        assert!(Mode::ReadOnly.strictness() > Mode::WorkspaceWrite.strictness());
        assert!(Mode::WorkspaceWrite.strictness() > Mode::Off.strictness());
    }

    #[test]
    fn a_test_binary_is_no_helper() {
        let s = Settings::default();
        assert!(matches!(s.helper(), Err(SandboxError::NoHelper(_))));
    }
}
