//! User hooks: programs the config runs before and after tool calls
//! (`[[hooks.before_tool_call]]`, `[[hooks.after_tool_call]]`).
//!
//! Each hook gets the call as one JSON object on stdin (field names as in
//! Claude Code's hooks: `hook_event_name`, `tool_name`, `tool_input`,
//! `tool_use_id`, `cwd`, plus Lathe's `operations`; after a call also
//! `tool_response` and `status`), with secrets redacted, and runs with
//! `sh -c` in the workspace, in its own process group, without the API
//! keys in its environment, with a timeout (default 10 s).
//!
//! Before: exit 0 allows; a JSON object on stdout replaces the arguments
//! (or, in Claude's shape, `hookSpecificOutput.updatedInput`, and
//! `permissionDecision: "deny"` denies); exit 2 denies with stderr as the
//! reason the model sees; any other exit, a crash or a timeout denies too
//! (fail closed). After: a JSON value on stdout replaces the result, exit 2
//! withholds it; failures keep the result and are logged (fail open).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use super::rules::RuleOrigin;
use super::workspace::Workspace;
use crate::protocol::operation::Program;

/// Longest output a hook may print; more is cut.
const MAX_OUTPUT: usize = 1024 * 1024;

/// One configured hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookSpec {
    /// Tool names separated by `|`; each may use `*` (`write_file|edit_file`,
    /// `*`, `github__*`).
    #[serde(rename = "match")]
    pub matcher: String,
    pub command: String,
    pub timeout_secs: u64,
    pub origin: RuleOrigin,
    /// The workspace files the command runs or names, with their content
    /// when the hook was loaded ([`HookSet::pin`]): writes to them always
    /// ask, and a workspace hook whose file changed no longer runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<HookFile>,
    /// Runs outside the sandbox (still contained): the person's own hook,
    /// configured `sandbox = false`. Every other hook is confined as the
    /// model's commands are, since what it runs may come from the
    /// workspace.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unconfined: bool,
}

/// A workspace file a hook runs or reads, and its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookFile {
    /// Relative to the workspace.
    pub path: String,
    pub sha256: String,
}

impl HookSpec {
    pub fn matches(&self, tool: &str) -> bool {
        self.matcher
            .split('|')
            .map(str::trim)
            .any(|alt| globset::Glob::new(alt).is_ok_and(|g| g.compile_matcher().is_match(tool)))
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.clamp(1, 600))
    }
}

/// The hooks of one agent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookSet {
    pub before: Vec<HookSpec>,
    pub after: Vec<HookSpec>,
    /// The hooks of the session's other events (`session_start`,
    /// `user_prompt_submit`, `stop`, …).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub events: std::collections::BTreeMap<super::session_hooks::SessionEvent, Vec<HookSpec>>,
}

impl HookSet {
    pub fn is_empty(&self) -> bool {
        self.before.is_empty() && self.after.is_empty() && self.events.values().all(Vec::is_empty)
    }

    /// Every hook, whatever its event.
    fn all(&self) -> impl Iterator<Item = &HookSpec> {
        self.before
            .iter()
            .chain(&self.after)
            .chain(self.events.values().flatten())
    }

    fn all_mut(&mut self) -> impl Iterator<Item = &mut HookSpec> {
        self.before
            .iter_mut()
            .chain(self.after.iter_mut())
            .chain(self.events.values_mut().flatten())
    }

    /// The hooks of `event` whose matcher takes `subject`.
    pub fn of(&self, event: super::session_hooks::SessionEvent, subject: &str) -> Vec<&HookSpec> {
        self.events
            .get(&event)
            .into_iter()
            .flatten()
            .filter(|h| h.matches(subject))
            .collect()
    }

    /// Each hook on one line: `before_tool_call write_file: ./check.sh`.
    pub fn describe(&self) -> Vec<String> {
        let line = |event: &str, h: &HookSpec| {
            let mut line = format!("{event} {}: {}", h.matcher, h.command);
            if h.origin == RuleOrigin::Workspace {
                // Which of the person's variables it sees.
                line.push_str(&format!(
                    "\nin the sandbox; of your environment it sees only {} and the locale",
                    crate::sandbox::BASIC_ENV[..5].join(", ")
                ));
            }
            line
        };
        self.before
            .iter()
            .map(|h| line("before_tool_call", h))
            .chain(self.after.iter().map(|h| line("after_tool_call", h)))
            .chain(
                self.events
                    .iter()
                    .flat_map(|(e, hooks)| hooks.iter().map(|h| line(e.key(), h))),
            )
            .collect()
    }

    /// Adds `other`'s hooks after these.
    pub fn extend(&mut self, other: HookSet) {
        self.before.extend(other.before);
        self.after.extend(other.after);
        for (event, hooks) in other.events {
            self.events.entry(event).or_default().extend(hooks);
        }
    }

    /// Records, for every hook, the workspace files its command runs or
    /// names (`./scripts/guard.sh`, `python3 hooks/check.py`, a file the
    /// command reads) and their content now. A hook of the person's set
    /// `sandbox = false` whose program runs what the workspace tells it
    /// (`make`, `npm run`, `cargo`, a script that loads the files beside
    /// it) runs in the sandbox after all: the model can change those
    /// files, and no hook runs what the model may rewrite unasked outside
    /// it. What was confined so is said, one warning each.
    pub fn pin(&mut self, workspace: &Workspace) -> Vec<String> {
        let mut warnings = Vec::new();
        for hook in self.all_mut() {
            hook.files = super::hook_files::of(&hook.command, workspace)
                .into_iter()
                .map(|path| {
                    let sha256 = content_of(&workspace.root().join(&path));
                    HookFile { path, sha256 }
                })
                .collect();
            if hook.unconfined
                && let Some(why) = workspace_instructions(&hook.command, workspace)
            {
                hook.unconfined = false;
                warnings.push(format!(
                    "the hook `{}` runs in the sandbox although it says sandbox = false: {why}, \
                     which the model can change",
                    crate::protocol::visible::command(&hook.command)
                ));
            }
        }
        warnings
    }

    /// The workspace files these hooks run or name, relative to it.
    pub fn files(&self) -> Vec<String> {
        let mut files: Vec<String> = self
            .all()
            .flat_map(|h| h.files.iter().map(|f| f.path.clone()))
            .collect();
        files.sort();
        files.dedup();
        files
    }
}

/// Why a hook's command runs instructions the workspace gives it (the
/// first command of its line that does), or that it cannot be told (a
/// line too complex to follow).
fn workspace_instructions(command: &str, workspace: &Workspace) -> Option<String> {
    let op = super::shell::analyze(command, workspace);
    if let Some(why) = &op.unchecked {
        return Some(format!("its command cannot be followed ({why})"));
    }
    if let Some(why) = op.complex.first() {
        return Some(format!("its command cannot be followed (it {why})"));
    }
    op.commands.iter().find_map(|c| {
        // The known ones say what they run (`the Makefile`).
        if let Some(why) = super::instructions::command_instructions(c, workspace.root()) {
            return Some(why);
        }
        let name = c.basename();
        match &c.program {
            Program::Builtin { .. } => None,
            // Even a script of the person's own may run a tool that reads
            // the workspace (a pyenv shim reads .python-version, a rustup
            // proxy rust-toolchain.toml): only the known ones go free.
            Program::Path { .. } if c.script.is_none() && self_contained(c, workspace) => None,
            _ => Some(not_known(name)),
        }
    })
}

/// Why a program counts as reading the workspace's instructions.
fn not_known(name: &str) -> String {
    format!(
        "`{name}` is not known to run only what its arguments say (programs read \
         configuration from the workspace: rust-toolchain.toml, .pylintrc, mypy.ini, …)"
    )
}

/// Whether a command runs only what its arguments say, whatever the
/// workspace holds: a hook of these alone may run outside the sandbox
/// when the person sets `sandbox = false`. A reader qualifies when the
/// read-only rules vet its whole script (`sed` without `e` or `w`, `awk`
/// without `system()` or pipes, `sort` without `--compress-program`, no
/// `-f` script file the model could write); a writer when it is one of
/// the few that take no instructions from a file. Anything else (a build
/// tool, a linter, a toolchain proxy, git, an interpreter, tmux, xargs)
/// reads what the model can write, and runs in the sandbox.
fn self_contained(c: &crate::protocol::operation::SimpleCommand, workspace: &Workspace) -> bool {
    let name = c.basename();
    // git reads the repository's configuration, which the model can arm.
    if name == "git" {
        return false;
    }
    if super::read_only::only_reads(c, workspace) {
        return true;
    }
    let outside = match &c.program {
        Program::Path { path, .. } => {
            !c.name().contains('/') && !path.starts_with(workspace.root())
        }
        _ => false,
    };
    // An assignment could load a library or a startup file (LD_PRELOAD,
    // BASH_ENV); a wrapper could run something else.
    if !outside || !c.assignments.is_empty() || !c.wrappers.is_empty() || c.extra_args {
        return false;
    }
    let args = c.args();
    let has = |short: &str, long: &[&str]| super::options::has_option(args, short, long);
    match name {
        "echo" | "printf" | "true" | "false" | "test" | "[" | "sleep" | "mkdir" | "touch"
        | "cp" | "mv" | "rm" | "ln" | "chmod" | "tee" | "logger" | "notify-send"
        | "terminal-notifier" | "wall" | "paplay" | "aplay" | "afplay" | "say" | "spd-say"
        | "espeak" => true,
        // A config file says what to fetch and where to write it.
        "curl" => !has("K", &["config"]),
        "wget" => !has("ei", &["config", "execute", "input-file"]),
        // Only scripts given whole on the command line.
        "osascript" => args.iter().enumerate().all(|(i, a)| {
            a.text == "-e" || args.get(i.wrapping_sub(1)).is_some_and(|p| p.text == "-e")
        }),
        _ => false,
    }
}

/// What a hook file holds: its SHA-256, or `absent` (a file a command
/// could create).
fn content_of(path: &Path) -> String {
    sha256_of(path).unwrap_or_else(|_| ABSENT.to_string())
}

const ABSENT: &str = "absent";

/// The SHA-256 of a file's content, in hex; what is not a regular file
/// (a FIFO, a device, a link to one, a kernel file) is not read but named,
/// and a file over 64 MiB by its size and time: nothing a hook names can
/// make Lathe hang or read without end.
fn sha256_of(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    const MAX: u64 = 64 * 1024 * 1024;
    let file = match crate::fs::open_regular(path, crate::fs::Links::Follow) {
        Ok(opened) => opened,
        Err(crate::fs::FileError::Io(e)) => return Err(e),
        Err(crate::fs::FileError::NotRegular { mode, .. }) => {
            return Ok(format!("not a regular file ({:o})", mode & 0o170_000));
        }
        Err(e) => return Ok(format!("not read: {e}")),
    };
    let meta = &file.meta;
    if meta.len() > MAX {
        return Ok(format!(
            "large file {} {} {}",
            meta.len(),
            meta.mtime(),
            meta.mtime_nsec()
        ));
    }
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buf = vec![0u8; 64 * 1024];
    let mut reader = file.file.take(MAX);
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        ctx.update(&buf[..n]);
    }
    Ok(ctx
        .finish()
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The first workspace file of a hook that no longer holds what it held
/// when Lathe started (or the person trusted it). The person's own hooks
/// too: a command could rewrite the workspace script a hook of theirs
/// runs, unconfined, after it.
fn changed_file(hook: &HookSpec, workspace: &Path) -> Option<String> {
    hook.files
        .iter()
        .find(|f| content_of(&workspace.join(&f.path)) != f.sha256)
        .map(|f| f.path.clone())
}

/// What a before hook decided.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeOutcome {
    Allow,
    Modify(Value),
    Deny(String),
}

/// What an after hook decided.
#[derive(Debug, Clone, PartialEq)]
pub enum AfterOutcome {
    Keep,
    Replace(Value),
    Withhold(String),
}

/// How a hook ran.
#[derive(Debug)]
pub(super) struct Ran {
    pub(super) code: Option<i32>,
    pub(super) stdout: String,
    pub(super) stderr: String,
}

/// Ends a hook and everything it started.
struct Stop {
    leader: Option<Pid>,
    /// The leader is the sandbox's warden, which kills and reaps all of
    /// it, in any session, when told to stop.
    warden: bool,
}

impl Stop {
    async fn now(&mut self, child: &mut tokio::process::Child) {
        let Some(leader) = self.leader.take() else {
            return;
        };
        if self.warden {
            let _ = kill(leader, Signal::SIGTERM);
            if tokio::time::timeout(Duration::from_secs(2), child.wait())
                .await
                .is_ok()
            {
                return;
            }
        }
        let _ = killpg(leader, Signal::SIGKILL);
        let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
    }
}

/// A hook abandoned half-way (its call was dropped) is ended too.
impl Drop for Stop {
    fn drop(&mut self) {
        if let Some(leader) = self.leader {
            let _ = if self.warden {
                kill(leader, Signal::SIGTERM)
            } else {
                killpg(leader, Signal::SIGKILL)
            };
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub(super) enum HookError {
    #[error("the sandbox could not be set up: {0}")]
    Sandbox(String),
    #[error("could not start: {0}")]
    Spawn(std::io::Error),
    #[error("did not finish within {0} s and was killed")]
    Timeout(u64),
    #[error("printed more than 1 MiB and was stopped")]
    TooMuch,
    #[error("{0}")]
    Io(std::io::Error),
    #[error(
        "{0} changed since Lathe started (or the person trusted it); the hook does not run \
         until they restart Lathe (and, for a workspace's hook, trust it again)"
    )]
    Changed(String),
}

/// Where and how hooks run.
#[derive(Debug, Clone)]
pub struct HookRunner<'a> {
    pub workspace: &'a Path,
    /// Environment variables hooks never see (API keys).
    pub env_remove: &'a [String],
    /// Run hooks through the sandbox's warden: nothing a hook starts
    /// outlives it, its environment holds no secret-looking variable, and
    /// a workspace's hook is confined as the model's commands are (a
    /// person's own hooks are not: they may write where they like).
    pub sandbox: Option<&'a crate::sandbox::Settings>,
    /// The person's read rules: what they cover is not there for a hook
    /// in the sandbox, nor is git's object store.
    pub reads: Option<&'a super::guardrails::ReadDenials>,
    /// The turn only looks (plan mode): every hook runs in a read-only
    /// sandbox, whatever it is allowed otherwise.
    pub looks_only: bool,
}

impl HookRunner<'_> {
    /// Runs a before hook on `input`.
    pub async fn before(&self, hook: &HookSpec, input: &Value) -> BeforeOutcome {
        let ran = match self.run(hook, input).await {
            Ok(r) => r,
            Err(e @ HookError::Changed(_)) => {
                tracing::warn!(hook = %hook.command, error = %e, "a hook's file changed; the call is refused");
                return BeforeOutcome::Deny(format!(
                    "the hook `{}` refuses every call: {e}",
                    hook.command
                ));
            }
            Err(e) => {
                tracing::warn!(hook = %hook.command, error = %e, "before hook failed; the call is refused");
                return BeforeOutcome::Deny(format!(
                    "the hook failed ({e}), so the call is refused; fix the hook or remove it"
                ));
            }
        };
        match ran.code {
            Some(0) => before_stdout(&ran.stdout),
            Some(2) => BeforeOutcome::Deny(reason_from(&ran.stderr, "the hook refused the call")),
            code => {
                let how = code.map_or_else(
                    || "was killed by a signal".to_string(),
                    |c| format!("exited with {c}"),
                );
                tracing::warn!(hook = %hook.command, %how, stderr = %ran.stderr.trim(), "before hook failed; the call is refused");
                BeforeOutcome::Deny(format!(
                    "the hook {how}{}, so the call is refused",
                    excerpt(&ran.stderr)
                ))
            }
        }
    }

    /// Runs an after hook on `input`.
    pub async fn after(&self, hook: &HookSpec, input: &Value) -> AfterOutcome {
        let ran = match self.run(hook, input).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(hook = %hook.command, error = %e, "after hook failed; the result is kept");
                return AfterOutcome::Keep;
            }
        };
        match ran.code {
            Some(0) => {
                let out = ran.stdout.trim();
                if out.is_empty() {
                    return AfterOutcome::Keep;
                }
                match serde_json::from_str::<Value>(out) {
                    Ok(v) if is_block(&v) => AfterOutcome::Withhold(
                        v.get("reason")
                            .and_then(Value::as_str)
                            .unwrap_or("the hook withheld the result")
                            .to_string(),
                    ),
                    Ok(v) => AfterOutcome::Replace(v),
                    Err(_) => {
                        tracing::debug!(hook = %hook.command, "after hook printed text, not JSON; ignored");
                        AfterOutcome::Keep
                    }
                }
            }
            Some(2) => {
                AfterOutcome::Withhold(reason_from(&ran.stderr, "the hook withheld the result"))
            }
            code => {
                tracing::warn!(hook = %hook.command, ?code, stderr = %ran.stderr.trim(), "after hook failed; the result is kept");
                AfterOutcome::Keep
            }
        }
    }

    pub(super) async fn run(&self, hook: &HookSpec, input: &Value) -> Result<Ran, HookError> {
        if let Some(path) = changed_file(hook, self.workspace) {
            return Err(HookError::Changed(path));
        }
        let mut cmd = match self.sandbox {
            Some(settings) => {
                let settings = if self.looks_only && settings.mode != crate::sandbox::Mode::Off {
                    // A plan writes nothing, through a hook neither.
                    crate::sandbox::Settings {
                        mode: crate::sandbox::Mode::ReadOnly,
                        basic_env: hook.origin == RuleOrigin::Workspace,
                        ..settings.clone()
                    }
                } else if hook.unconfined && hook.origin == RuleOrigin::User {
                    crate::sandbox::Settings {
                        mode: crate::sandbox::Mode::Off,
                        ..settings.clone()
                    }
                } else {
                    // A workspace's hook gets the basic variables only:
                    // `$OPENAI_API_KEY` in a repository's hook is empty.
                    crate::sandbox::Settings {
                        basic_env: hook.origin == RuleOrigin::Workspace,
                        ..settings.clone()
                    }
                };
                let mut policy = settings.policy(
                    self.workspace,
                    vec!["sh".into(), "-c".into(), hook.command.clone()],
                );
                if settings.mode != crate::sandbox::Mode::Off
                    && let Some(reads) = self.reads.filter(|r| r.active())
                {
                    policy.hidden.extend(
                        reads
                            .sandbox_covers(false)
                            .await
                            .map_err(HookError::Sandbox)?,
                    );
                    policy.reads = reads.sandbox_watch();
                }
                settings
                    .command(&policy)
                    .map_err(|e| HookError::Sandbox(e.to_string()))?
            }
            None => {
                let mut cmd = Command::new("sh");
                cmd.arg("-c")
                    .arg(&hook.command)
                    .current_dir(self.workspace)
                    .process_group(0);
                cmd
            }
        };
        cmd.env("LATHE_WORKSPACE", self.workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for var in self.env_remove {
            cmd.env_remove(var);
        }
        let mut child = cmd.spawn().map_err(HookError::Spawn)?;
        // The warden (or the hook's shell) leads the group; either way
        // this ends everything the hook started.
        let leader = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        let mut stop = Stop {
            leader,
            warden: self.sandbox.is_some(),
        };
        let body = serde_json::to_vec(input).unwrap_or_default();
        let stdin = child.stdin.take();
        // Written concurrently: a hook that never reads stdin must not block us.
        let writer = tokio::spawn(async move {
            if let Some(mut s) = stdin {
                let _ = s.write_all(&body).await;
                let _ = s.shutdown().await;
            }
        });
        let mut out = child.stdout.take();
        let mut err = child.stderr.take();
        let work = async {
            let ((o, o_over), (e, e_over)) =
                tokio::join!(read_capped(out.as_mut()), read_capped(err.as_mut()));
            // Past the cap it is stopped at once, not waited for on a
            // full pipe.
            if o_over || e_over {
                return Err(HookError::TooMuch);
            }
            let status = child.wait().await.map_err(HookError::Io)?;
            Ok::<_, HookError>(Ran {
                code: status.code(),
                stdout: o,
                stderr: e,
            })
        };
        let result = tokio::time::timeout(hook.timeout(), work).await;
        writer.abort();
        // Whatever the hook left behind goes with it.
        stop.now(&mut child).await;
        match result {
            Ok(Ok(ran)) if ran.code == Some(crate::sandbox::SETUP_FAILED) => {
                match ran
                    .stderr
                    .trim()
                    .strip_prefix(crate::sandbox::FAILURE_PREFIX)
                {
                    Some(why) => Err(HookError::Sandbox(why.to_string())),
                    None => Ok(ran),
                }
            }
            Ok(r) => r,
            Err(_) => Err(HookError::Timeout(hook.timeout().as_secs())),
        }
    }
}

/// What a hook printed, up to [`MAX_OUTPUT`], and whether it printed
/// more.
async fn read_capped<R: tokio::io::AsyncRead + Unpin>(r: Option<&mut R>) -> (String, bool) {
    let Some(r) = r else {
        return (String::new(), false);
    };
    let mut buf = Vec::new();
    let _ = r.take(MAX_OUTPUT as u64 + 1).read_to_end(&mut buf).await;
    let over = buf.len() > MAX_OUTPUT;
    buf.truncate(MAX_OUTPUT);
    (String::from_utf8_lossy(&buf).into_owned(), over)
}

pub(super) fn is_block(v: &Value) -> bool {
    v.get("decision").and_then(Value::as_str) == Some("block")
}

fn before_stdout(stdout: &str) -> BeforeOutcome {
    let out = stdout.trim();
    if out.is_empty() {
        return BeforeOutcome::Allow;
    }
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(out) else {
        tracing::debug!("before hook printed something that is not a JSON object; ignored");
        return BeforeOutcome::Allow;
    };
    let v = Value::Object(map);
    if is_block(&v) {
        return BeforeOutcome::Deny(
            v.get("reason")
                .and_then(Value::as_str)
                .unwrap_or("the hook refused the call")
                .to_string(),
        );
    }
    if let Some(specific) = v.get("hookSpecificOutput") {
        if specific.get("permissionDecision").and_then(Value::as_str) == Some("deny") {
            return BeforeOutcome::Deny(
                specific
                    .get("permissionDecisionReason")
                    .and_then(Value::as_str)
                    .unwrap_or("the hook refused the call")
                    .to_string(),
            );
        }
        return match specific.get("updatedInput") {
            Some(input @ Value::Object(_)) => BeforeOutcome::Modify(input.clone()),
            _ => BeforeOutcome::Allow,
        };
    }
    BeforeOutcome::Modify(v)
}

pub(super) fn reason_from(stderr: &str, fallback: &str) -> String {
    let t = stderr.trim();
    if t.is_empty() {
        fallback.to_string()
    } else {
        crate::protocol::text::shorten(t, 2000)
    }
}

fn excerpt(stderr: &str) -> String {
    let t = stderr.trim();
    if t.is_empty() {
        String::new()
    } else {
        format!(": {}", crate::protocol::text::shorten(t, 300))
    }
}

#[cfg(test)]
#[path = "user_hooks_tests.rs"]
mod tests;
