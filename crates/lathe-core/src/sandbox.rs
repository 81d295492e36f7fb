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
//!   the Landlock ruleset and the seccomp filter to itself and then
//!   becomes the shell (`execve`: both and the parent-death signal carry
//!   over);
//! - makes every connection the command asks for, or refuses it
//!   (`sockets`): the filter hands each `connect` to the warden, so a
//!   socket another program listens on is out of reach wherever it lies
//!   outside the writable roots, however it was bound;
//! - when the shell exits, or on SIGTERM, SIGINT, SIGHUP or SIGQUIT (a
//!   timeout, an interrupt, Lathe's exit or death), kills every process
//!   left under it, reaps them, and exits as the shell did.
//!
//! The Landlock ruleset (the `landlock` crate; this crate allows no
//! `unsafe`, hence a helper mode rather than a `pre_exec` hook): read and
//! execute anywhere; write only beneath the workspace, the temp directory
//! and the configured roots (with the REFER right, so links and renames
//! stay inside them); `/dev/null` writable; no TCP bind or connect of the
//! command's own unless the network is allowed (the warden binds what
//! listens to the loopback interface, and connects to what commands of
//! the session serve: `sockets`); no signals to, or abstract sockets of,
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
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// Paths commands may not even read (Lathe's own config, with its
    /// keys, and its data: journals, trusted hooks; credential stores).
    pub hidden: Vec<PathBuf>,
    /// Set up namespaces of its own for each command (user, PID,
    /// network, mounts). Off, Landlock alone confines commands: the
    /// workspace root itself becomes read-only so the protected paths in
    /// it stay so.
    pub namespaces: bool,
    /// More workspace paths commands may not change: the files hooks run,
    /// which would otherwise let a command rewrite what runs unconfined
    /// after it.
    pub protected: Vec<PathBuf>,
    /// The session's own temporary directory (see [`Policy::private_tmp`]);
    /// `None`: the system's temp directory is writable.
    pub private_tmp: Option<PathBuf>,
    /// Sockets outside the writable roots commands may reach: paths,
    /// abstract names written `@name`, and ports of this machine written
    /// `localhost:PORT` (`[shell] allow_sockets`).
    pub allow_sockets: Vec<String>,
    /// Where the wardens note the sockets commands listen on (a directory
    /// of Lathe's own no command can write): one command reaches a server
    /// another started. `None`: each reaches only its own.
    pub served: Option<PathBuf>,
    /// Give the command only the basic variables ([`BASIC_ENV`]) of the
    /// person's environment: for what a workspace runs (its hooks and
    /// MCP servers), which must name any other variable it takes.
    pub basic_env: bool,
    /// Directories commands read where they are even under the system's
    /// `/tmp` (which commands see as the session's own): the person's
    /// skills, whose scripts the model runs. Read-only.
    pub shown: Vec<PathBuf>,
}

/// The variables of the person's environment that what a workspace runs
/// gets without naming them: where programs are, who and where the
/// person is, the language and terminal. Nothing that could hold a key.
pub const BASIC_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "LC_COLLATE",
    "LC_NUMERIC",
    "LC_TIME",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
];

impl Default for Settings {
    fn default() -> Self {
        Self {
            mode: Mode::default(),
            network: false,
            writable_roots: Vec::new(),
            helper: None,
            env_allow: Vec::new(),
            hidden: Vec::new(),
            namespaces: true,
            protected: Vec::new(),
            private_tmp: None,
            allow_sockets: Vec::new(),
            served: None,
            shown: Vec::new(),
            basic_env: false,
        }
    }
}

fn yes() -> bool {
    true
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
    /// Set by the warden for the confiner: mount the `/proc` of the
    /// command's own PID namespace.
    #[serde(default)]
    pub own_proc: bool,
    /// Set by the warden for the confiner: the protected paths are held
    /// read-only by the mount table (else Landlock grants around them).
    #[serde(default)]
    pub protected_mounted: bool,
    /// Set up namespaces (off only to try the Landlock-only path).
    #[serde(default = "yes")]
    pub namespaces: bool,
    /// The session's own temporary directory: the command's `/tmp` (and
    /// `TMPDIR`), in place of the system's.
    #[serde(default)]
    pub private_tmp: Option<PathBuf>,
    /// Report what was set up on stderr (lines starting with
    /// [`REPORT_PREFIX`]) before the command runs: the probe.
    #[serde(default)]
    pub report: bool,
    /// Sockets outside the writable roots the person allowed by name.
    #[serde(default)]
    pub allow_sockets: Vec<String>,
    /// See [`Settings::shown`].
    #[serde(default)]
    pub shown: Vec<PathBuf>,
    /// See [`Settings::served`].
    #[serde(default)]
    pub served: Option<PathBuf>,
    /// Set by the warden for the confiner: the descriptor to hand the
    /// seccomp listener through.
    #[serde(default)]
    pub supervisor: Option<i32>,
    /// The read rules' patterns, for files that come to match one while
    /// the command runs: each open for reading waits for the warden,
    /// which refuses one of a covered file ([`sockets::ReadWatch`]).
    #[serde(default)]
    pub reads: Option<sockets::ReadWatch>,
}

/// How the helpers' report lines start on stderr.
pub const REPORT_PREFIX: &str = "lathe-sandbox-report: ";

/// One thing the helpers set up, as they report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Report {
    /// The warden's namespaces.
    Isolation(Isolation),
    /// The command got a `/proc` of its own.
    Proc(bool),
    /// The Landlock ABI the kernel enforced the ruleset with.
    Landlock(u8),
    /// The warden decides every connection the command makes.
    Sockets(bool),
    /// With the sandbox off: no signal reaches outside the command.
    SignalScope(bool),
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
        let private_tmp = self.private_tmp.as_ref().filter(|p| p.is_dir()).cloned();
        if self.mode == Mode::WorkspaceWrite {
            writable.push(workspace.to_path_buf());
            writable.push(private_tmp.clone().unwrap_or_else(std::env::temp_dir));
            if Path::new("/dev/shm").is_dir() {
                writable.push(PathBuf::from("/dev/shm"));
            }
            writable.extend(self.writable_roots.iter().cloned());
        }
        let protected = if self.mode == Mode::WorkspaceWrite {
            let mut p = protected_paths(workspace);
            p.extend(
                self.protected
                    .iter()
                    .filter(|f| f.symlink_metadata().is_ok())
                    .cloned(),
            );
            p.sort();
            p.dedup();
            p
        } else {
            Vec::new()
        };
        // As they really are (a dotfile manager links `~/.ssh` elsewhere),
        // and never one that holds the workspace.
        let hidden = if self.mode == Mode::Off {
            Vec::new()
        } else {
            let mut hidden: Vec<PathBuf> = self
                .hidden
                .iter()
                .flat_map(|d| [Some(d.clone()), d.canonicalize().ok()])
                .flatten()
                .filter(|d| d.symlink_metadata().is_ok() && !workspace.starts_with(d))
                .collect();
            hidden.sort();
            hidden.dedup();
            hidden
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
            own_proc: false,
            protected_mounted: false,
            namespaces: self.namespaces,
            report: false,
            private_tmp: private_tmp.filter(|_| self.mode == Mode::WorkspaceWrite),
            allow_sockets: self.allow_sockets.clone(),
            shown: self.shown.clone(),
            served: self.served.clone(),
            supervisor: None,
            reads: None,
        }
    }

    /// A command that runs `policy` through the warden, with the scrubbed
    /// environment and stdin closed. The warden starts a session of its
    /// own (no controlling terminal; its pid is the group to kill).
    pub fn command(&self, policy: &Policy) -> Result<tokio::process::Command, SandboxError> {
        // Not `kill_on_drop`: a SIGKILL would stop the warden before it
        // cleans up. Whoever holds the child tells the warden to stop.
        Ok(self.std_command(policy)?.into())
    }

    fn std_command(&self, policy: &Policy) -> Result<std::process::Command, SandboxError> {
        let helper = self.helper()?;
        let mut cmd = std::process::Command::new(helper);
        cmd.arg(WARDEN_ARG)
            .arg(serde_json::to_string(policy)?)
            .current_dir(&policy.cwd)
            .env_clear()
            .envs(
                command_env(std::env::vars_os(), &self.env_allow)
                    .into_iter()
                    .filter(|(k, _)| {
                        !self.basic_env || k.to_str().is_some_and(|k| BASIC_ENV.contains(&k))
                    }),
            )
            .stdin(std::process::Stdio::null());
        Ok(cmd)
    }

    /// Runs `true` in the sandbox as configured, in `workspace`, and
    /// reports what was set up. An error says why nothing could run.
    pub fn probe(&self, workspace: &Path) -> Result<Probe, String> {
        let mut policy = self.policy(workspace, vec!["true".into()]);
        policy.report = true;
        let mut cmd = self.std_command(&policy).map_err(|e| e.to_string())?;
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start the sandbox helper: {e}"))?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err("the sandbox helper did not answer within 5 s".into());
                }
                Err(e) => return Err(format!("lost the sandbox helper: {e}")),
            }
        };
        let mut stderr = String::new();
        if let Some(mut err) = child.stderr.take() {
            use std::io::Read;
            let _ = err.by_ref().take(64 * 1024).read_to_string(&mut stderr);
        }
        if let Some(why) = stderr.lines().find_map(|l| l.strip_prefix(FAILURE_PREFIX)) {
            return Err(why.to_string());
        }
        if !status.success() {
            return Err(format!(
                "the sandbox helper failed ({status}): {}",
                stderr.trim()
            ));
        }
        let mut probe = Probe {
            mode: self.mode,
            network: self.network,
            namespaces: self.namespaces,
            ..Probe::default()
        };
        for line in stderr.lines() {
            match line
                .strip_prefix(REPORT_PREFIX)
                .and_then(|r| serde_json::from_str::<Report>(r).ok())
            {
                Some(Report::Isolation(i)) => probe.isolation = i,
                Some(Report::Proc(p)) => probe.own_proc = p,
                Some(Report::Landlock(abi)) => probe.landlock_abi = abi,
                Some(Report::Sockets(s)) => probe.sockets = s,
                Some(Report::SignalScope(s)) => probe.signal_scope = s,
                None => {}
            }
        }
        Ok(probe)
    }
}

/// What the sandbox set up when it was tried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Probe {
    pub mode: Mode,
    pub network: bool,
    /// Namespaces were asked for.
    pub namespaces: bool,
    pub isolation: Isolation,
    /// The command had a `/proc` of its own.
    pub own_proc: bool,
    /// The Landlock ABI the ruleset was enforced with (0: none).
    pub landlock_abi: u8,
    /// The warden decided the command's connections.
    pub sockets: bool,
    /// With the sandbox off: the command could signal nothing outside it.
    pub signal_scope: bool,
}

impl Probe {
    /// What this system left out, in words for the person; empty when
    /// the sandbox is whole (or off, as configured).
    pub fn missing(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.mode == Mode::Off {
            // Off as configured; still, what it starts must not outlive it.
            if !self.isolation.pid && !self.signal_scope {
                out.push(
                    "with the sandbox off, a command could stop its warden and leave \
                     processes behind (no user namespace, and no Landlock signal scoping \
                     before Linux 6.12)"
                        .to_string(),
                );
            }
            return out;
        }
        let i = self.isolation;
        if !self.namespaces {
            out.push("no namespaces ([shell] namespaces = false)".to_string());
        } else if !i.user && !i.pid {
            out.push(
                "no namespaces (this system does not let Lathe create a user namespace; on \
                 Ubuntu 24.04, sysctl kernel.apparmor_restrict_unprivileged_userns=0 allows it)"
                    .to_string(),
            );
        }
        if !i.mounts {
            out.push(
                "no mount table of its own: the workspace root itself is read-only to \
                 commands (files in it and its subdirectories stay writable) so that .git \
                 and .lathe stay protected; /tmp and /dev/shm are read-only (TMPDIR is \
                 the session's own temp directory) and System V IPC is refused; \
                 permissions of files outside can change; the names (not the contents) \
                 of what is hidden can be listed"
                    .to_string(),
            );
        }
        if !i.pid {
            out.push("no PID namespace: commands see every process on the system".to_string());
        } else if !self.own_proc {
            out.push(
                "no /proc of their own: commands see the command lines of every process"
                    .to_string(),
            );
        }
        if !self.sockets {
            out.push(
                "no connection supervisor (seccomp user notification: Linux 5.9 and \
                 libseccomp 2.5, and Lathe not itself under one): sockets other programs \
                 listen on outside the workspace are hidden only where they are found, and \
                 commands cannot listen on localhost"
                    .to_string(),
            );
        }

        out
    }
}

/// Where, under the home directory, keys, tokens, passwords and session
/// cookies are kept: hidden from sandboxed commands (an empty directory,
/// an empty file in their place) unless `[shell] visible_paths` lists
/// them. A command has no business reading them, and what a command
/// reads, the model may see. Shell histories hold what was typed,
/// passwords included.
pub const CREDENTIAL_STORES: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".terraform.d",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gh",
    ".config/hub",
    ".config/gcloud",
    ".config/op",
    ".config/git/credentials",
    ".config/rclone",
    ".config/doctl",
    ".config/netlify",
    ".config/sops",
    ".oci",
    ".s3cfg",
    ".boto",
    ".databrickscfg",
    ".terraformrc",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".cache/huggingface/token",
    ".huggingface/token",
    ".codex/auth.json",
    ".claude/.credentials.json",
    ".claude.json",
    ".config/anthropic",
    ".config/openai",
    ".config/github-copilot",
    ".gemini",
    ".config/stripe",
    ".config/composer/auth.json",
    ".composer/auth.json",
    ".pulumi",
    ".config/glab-cli",
    ".fly",
    ".config/Bitwarden CLI",
    ".config/configstore",
    ".config/.wrangler",
    ".wrangler",
    ".supabase",
    ".config/supabase",
    ".railway",
    ".config/railway",
    ".config/hcloud",
    ".config/ngrok",
    ".ngrok2",
    ".sentryclirc",
    ".kaggle",
    ".local/share/com.vercel.cli",
    ".bashrc",
    ".bash_profile",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".config/fish",
    ".gitconfig",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".mozilla",
    ".thunderbird",
    ".local/share/keyrings",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".node_repl_history",
    // Where people export keys, and what shells remember: the other
    // start-up files and histories.
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".zlogin",
    ".zlogout",
    ".zsh_sessions",
    ".histfile",
    ".history",
    ".sh_history",
    ".lesshst",
    ".sqlite_history",
    ".rediscli_history",
    ".irb_history",
    ".local/share/fish",
    ".config/zsh",
    ".oh-my-zsh/custom",
    ".config/environment.d",
    ".pam_environment",
    ".Renviron",
    ".Rprofile",
    ".env",
    ".envrc",
    ".secrets",
    ".ipython/profile_default/startup",
    // Other AI tools' keys.
    ".config/io.datasette.llm",
    ".aider.conf.yml",
    ".aider.env",
    ".continue",
    ".cursor/mcp.json",
    ".codeium",
    ".config/goose",
    ".config/opencode",
    ".local/share/opencode",
];

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
    // What the repository runs from the workspace (`core.hooksPath`,
    // husky, lefthook, pre-commit, included config).
    out.extend(git_traps::repo_code_paths(workspace));
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
    holds_secret_value(name)
        || upper.starts_with("LATHE_")
        || upper.starts_with("AWS_")
        || matches!(
            upper.as_str(),
            "BASH_ENV" | "ENV" | "PROMPT_COMMAND" | "SSH_AUTH_SOCK" | "GPG_AGENT_INFO"
        )
}

/// Whether a variable's value is to be hidden wherever it shows up: a
/// name that says secret (`*KEY*`, `*SECRET*`, `*TOKEN*`, `*PASSWORD*`,
/// a word such as `PASS`, `PWD`, `AUTH`, `PAT`, `JWT`, `DSN`, `WEBHOOK`,
/// `COOKIE`, `CREDENTIALS`), or `DATABASE_URL`; not the configuration
/// ones like `LATHE_MODEL`, whose values are ordinary words.
pub fn holds_secret_value(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if matches!(upper.as_str(), "PWD" | "OLDPWD") {
        return false;
    }
    let inside = [
        "KEY",
        "SECRET",
        "TOKEN",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "CONNECTIONSTRING",
        "CONNECTION_STRING",
    ];
    let words = [
        "PASS",
        "PWD",
        "PW",
        "CREDS",
        "SESSION",
        "AUTH",
        "PAT",
        "JWT",
        "DSN",
        "WEBHOOK",
        "COOKIE",
        "SESSIONID",
    ];
    inside.iter().any(|w| upper.contains(w))
        || upper
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|part| words.contains(&part))
        || upper == "DATABASE_URL"
}

/// Whether a value carries a password in a URL (`redis://:pw@host`,
/// `https://user:pw@proxy`, `?password=`) or a connection string
/// (`Password=…;`, `AccountKey=…`), whatever its variable is called.
pub fn has_url_password(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    if [
        "password=",
        "pwd=",
        "accountkey=",
        "sharedaccesssignature=",
        "sig=",
        "secret=",
    ]
    .iter()
    .any(|k| lower.contains(k))
    {
        return true;
    }
    value.split("://").skip(1).any(|rest| {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

/// The environment a command gets: `vars` without the secret-looking ones
/// (unless allowed by name).
pub fn command_env(
    vars: impl Iterator<Item = (OsString, OsString)>,
    allow: &[String],
) -> Vec<(OsString, OsString)> {
    vars.filter(|(k, v)| {
        let name = k.to_string_lossy();
        let secret = is_secret_name(&name) || has_url_password(&v.to_string_lossy());
        !secret || allow.iter().any(|a| a == name.as_ref())
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
    if lower.contains("no such file or directory")
        && let Some(hint) = missing_hint(policy, stderr)
    {
        return Some(hint);
    }
    let fs = lower.contains("permission denied")
        || lower.contains("operation not permitted")
        || lower.contains("read-only file system");
    // The warden said what it refused.
    let refused = stderr.contains(&format!("{}refused", sockets::REFUSAL_PREFIX));
    let net = !policy.network
        && (refused
            || lower.contains("network is unreachable")
            || lower.contains("could not resolve")
            || lower.contains("temporary failure in name resolution")
            || lower.contains("connection refused")
            || lower.contains("permission denied") && lower.contains("connect"));
    if !fs && !net && !refused {
        return None;
    }
    // A file hidden on purpose (a read rule of the person's, a credential
    // store) is not something to ask around.
    let named = policy.hidden.iter().find(|p| {
        let rel = p.strip_prefix(&policy.cwd).unwrap_or(p);
        !rel.as_os_str().is_empty() && stderr.contains(&*rel.to_string_lossy())
    });
    if let Some(path) = named {
        let rel = path.strip_prefix(&policy.cwd).unwrap_or(path);
        return Some(format!(
            "{} is hidden from commands (the person's read rules, or a store of \
             credentials): no command may read it, and it is not to be read another way",
            rel.display()
        ));
    }
    // What the warden refused, in its words: the first such line.
    if let Some(line) = stderr
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(sockets::REFUSAL_PREFIX))
        .filter(|l| l.starts_with("refused"))
    {
        return Some(format!(
            "the sandbox {line}. If the command needs more, say why and run it again with \
             \"sandbox\": false, which the person approves explicitly"
        ));
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
            " and have no network (they may listen on localhost, which the person's browser \
             reaches, and reach what commands of this session serve there)"
        }
    ))
}

/// A file "not found" that is there outside the sandbox: under the
/// system's `/tmp` (commands have the session's own), or hidden (a read
/// rule of the person's, a credential store: a hidden directory is empty).
fn missing_hint(policy: &Policy, stderr: &str) -> Option<String> {
    let hidden = policy.hidden.iter().find(|p| {
        let rel = p.strip_prefix(&policy.cwd).unwrap_or(p);
        !rel.as_os_str().is_empty() && stderr.contains(&*rel.to_string_lossy())
    });
    if let Some(path) = hidden {
        let rel = path.strip_prefix(&policy.cwd).unwrap_or(path);
        return Some(format!(
            "{} is hidden from commands (the person's read rules, or a store of credentials): \
             to a command it is not there, and it is not to be read another way",
            rel.display()
        ));
    }
    let private = policy.private_tmp.as_ref()?;
    let tmp = Path::new("/tmp");
    let reached = |p: &Path| {
        p.starts_with(&policy.cwd)
            || policy
                .writable
                .iter()
                .any(|w| w != private && p.starts_with(w))
    };
    let path = stderr
        .split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`' | ':' | ','))
        .map(Path::new)
        .find(|p| p.starts_with(tmp) && p != &tmp && !reached(p))?;
    Some(format!(
        "{} is under /tmp, and commands have a /tmp of their own (the session's, empty at \
         first): what other programs keep in the system's /tmp is not there. Use a directory \
         in the workspace, or, if the command must reach the system's /tmp, say why and run it \
         again with \"sandbox\": false, which the person approves explicitly",
        path.display()
    ))
}

mod git_config;
mod git_traps;
mod helper;
mod namespaces;
mod ports;
mod seccomp;
mod sockets;
pub use sockets::ReadWatch;

pub use git_traps::{
    check_written as check_written_git, reader_traps, repo_code_paths, sweep as sweep_git_traps,
};
pub use namespaces::Isolation;

#[cfg(test)]
mod tests {
    use super::*;

    /// "No such file" where the sandbox is why: a path under the system's
    /// `/tmp` (commands have the session's), or a hidden one. A file that
    /// is simply missing gets no note.
    #[test]
    fn a_file_missing_because_of_the_sandbox_is_explained() {
        let ws = tempfile::tempdir().unwrap();
        let session_tmp = tempfile::tempdir().unwrap();
        let private = ws.path().join("private");
        std::fs::create_dir(&private).unwrap();
        let settings = Settings {
            mode: Mode::WorkspaceWrite,
            private_tmp: Some(session_tmp.path().to_path_buf()),
            hidden: vec![private],
            ..Settings::default()
        };
        let p = settings.policy(ws.path(), Vec::new());
        let hint = blocked_hint(
            &p,
            "cp: cannot create regular file '/tmp/build-cache/x': No such file or directory",
        )
        .unwrap();
        assert!(hint.contains("/tmp/build-cache/x is under /tmp"), "{hint}");
        assert!(hint.contains("\"sandbox\": false"), "{hint}");
        let hint = blocked_hint(&p, "cat: private/key: No such file or directory").unwrap();
        assert!(hint.starts_with("private is hidden"), "{hint}");
        assert_eq!(
            blocked_hint(&p, "cat: notes.txt: No such file or directory"),
            None
        );
        let inside = format!(
            "cat: {}/gone.txt: No such file or directory",
            ws.path().display()
        );
        assert_eq!(blocked_hint(&p, &inside), None, "the workspace is reached");
    }

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

    /// Names an attacker found passing, and values that carry a password
    /// whatever their name; and what must stay (a build needs it).
    #[test]
    fn secrets_are_known_by_their_words_and_urls() {
        for name in [
            "DB_PASS",
            "MYSQL_PWD",
            "GITHUB_PAT",
            "NPM_AUTH",
            "CI_JOB_JWT",
            "SENTRY_DSN",
            "SLACK_WEBHOOK_URL",
            "DOCKER_AUTH_CONFIG",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "PWD",
            "OLDPWD",
            "GIT_AUTHOR_NAME",
            "PYTHONPATH",
            "SSL_CERT_FILE",
            "CARGO_HOME",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
        assert!(has_url_password("redis://:hunter2@localhost:6379/0"));
        assert!(has_url_password("http://user:pw@proxy:3128"));
        assert!(!has_url_password("https://github.com/a/b@main"));
        assert!(!has_url_password("git@github.com:a/b.git"));
        let kept = command_env(
            [
                ("REDIS_URL", "redis://:hunter2@localhost:6379"),
                ("HTTPS_PROXY", "http://u:p@proxy:3128"),
                ("NO_PROXY", "localhost"),
            ]
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .into_iter(),
            &[],
        );
        assert_eq!(
            kept,
            [(OsString::from("NO_PROXY"), OsString::from("localhost"))]
        );
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
