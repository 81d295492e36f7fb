//! `exec_shell`: run `bash -c COMMAND` (`sh -c` where there is no bash) in
//! the workspace. Bash is what `policy::shell` parses, so what was checked
//! and approved is what runs.
//!
//! The command runs in the sandbox (see `crate::sandbox`: Landlock, and a
//! warden that kills everything the command started when it ends) with
//! stdin closed and secret-looking variables removed from its environment. Output lines stream out as
//! progress (batched every 50 ms, so a chatty command cannot flood the UI);
//! each stream keeps its first and last 12 KiB, so memory stays bounded
//! whatever the command prints. When the shell exits, on timeout (default
//! 30 s, at most 300 s), on interrupt, or if the call is dropped, every
//! process the command started is killed. A non-zero exit is a result, not an error: the model sees
//! `exit_code`, `stdout`, `stderr` and `duration_ms`.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sandbox;
use async_trait::async_trait;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::BuiltinSettings;
use crate::policy::Workspace;
use crate::policy::shell;
use crate::protocol::operation::Operation;
use crate::protocol::{Effect, Summary};
use crate::tools::args::{parse, schema, seconds};
use crate::tools::spec::{ToolContext, ToolError};
use crate::tools::typed::TypedTool;

const HEAD_BYTES: usize = 12 * 1024;
const TAIL_BYTES: usize = 12 * 1024;
const PROGRESS_INTERVAL: Duration = Duration::from_millis(50);
/// Longest progress text in one event; older lines of a burst are skipped.
const PROGRESS_MAX: usize = 16 * 1024;
/// How long to wait for the pipes to close after the shell exits (a
/// background process may hold them open).
const EXIT_GRACE: Duration = Duration::from_millis(300);
/// How long a background command waits before its call returns: what
/// it prints when it starts comes back with the handle.
const FIRST_MOMENT: Duration = Duration::from_millis(1500);
/// The longest a background command may run (seconds): a day.
const BACKGROUND_TIMEOUT: u64 = 24 * 3600;

#[derive(Clone)]
pub struct ExecShell {
    default_timeout: u64,
    max_timeout: u64,
    env_remove: Vec<String>,
    sandbox: sandbox::Settings,
}

impl ExecShell {
    pub fn new(settings: &BuiltinSettings) -> Self {
        Self {
            default_timeout: settings.shell_timeout_secs.max(1),
            max_timeout: settings.shell_max_timeout_secs.max(1),
            env_remove: settings.shell_env_remove.clone(),
            sandbox: settings.sandbox.clone(),
        }
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The shell command to run
    command: String,
    /// false runs the command outside the sandbox (writes anywhere, network). Only when a sandboxed run failed because of the sandbox; the person must approve it explicitly, every time
    sandbox: Option<bool>,
    /// Timeout in seconds
    #[schemars(extend("exclusiveMinimum" = 0))]
    timeout: Option<f64>,
    /// true starts it in the background (a dev server, a watcher) and returns at once with a handle and its first output; read more with shell_output, stop it with shell_kill. No timeout unless given
    background: Option<bool>,
}

#[async_trait]
impl TypedTool for ExecShell {
    type Args = Args;

    /// Started in the background: by its handle; else how it exited.
    fn summary(&self, result: &Value) -> Option<Summary> {
        match (
            result.get("handle").and_then(Value::as_str),
            result.get("running").and_then(Value::as_bool),
        ) {
            (Some(handle), Some(true)) => Some(Summary::Background {
                handle: handle.to_string(),
            }),
            _ => Summary::generic(result),
        }
    }

    fn name(&self) -> &'static str {
        "exec_shell"
    }

    fn description(&self) -> &str {
        "Run a shell command (`bash -c`) in the workspace directory and return exit_code, \
         stdout, stderr and duration_ms. stdin is closed; use non-interactive flags. \
         The command is killed after `timeout` seconds, with everything it started. \
         It runs in a sandbox: it may write only in the workspace and the temp directory \
         (not .git/ or .lathe/), without network access. With `background: true` it keeps \
         running (a dev server, a watcher): you get a `handle` at once, `shell_output` reads \
         what it printed since, `shell_kill` stops it; it stops when the conversation ends."
    }

    fn parameters(&self) -> Value {
        let mut schema = schema::<Args>();
        schema["properties"]["timeout"]["description"] = json!(format!(
            "Timeout in seconds (default {}, max {})",
            self.default_timeout, self.max_timeout
        ));
        schema
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Shell
    }

    fn effect(&self) -> Effect {
        Effect::Exec
    }

    /// Planning, it runs in a read-only sandbox (`ToolContext::looks_only`).
    fn offered_when_planning(&self) -> bool {
        true
    }

    fn unsandboxed_retry(&self, args: &Value, result: &Value) -> Option<Value> {
        let asked = parse::<Args>(args).ok()?.sandbox;
        if self.unsandboxed(asked) || result.get("sandbox").is_none() {
            return None;
        }
        let mut retry = args.clone();
        retry["sandbox"] = Value::Bool(false);
        Some(retry)
    }

    fn operations(
        &self,
        args: &Self::Args,
        workspace: &Workspace,
    ) -> Result<Vec<Operation>, ToolError> {
        let &Args {
            ref command,
            sandbox,
            background,
            ..
        } = args;
        let mut exec = shell::analyze(command, workspace);
        exec.unsandboxed = self.unsandboxed(sandbox);
        exec.background = (background == Some(true)).then(|| self.background_note(sandbox));
        // `run` hides what the read rules cover whenever it sandboxes.
        exec.reads_hidden = self.sandbox.mode != sandbox::Mode::Off && !exec.unsandboxed;
        Ok(vec![Operation::Exec(exec)])
    }

    async fn execute(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let Args {
            command,
            timeout,
            sandbox,
            background,
        } = args;
        if command.trim().is_empty() {
            return Err(ToolError::InvalidArgs("command is empty".into()));
        }
        let argv = vec![shell_program().into(), "-c".into(), command.clone()];
        if ctx.looks_only {
            return self.look(argv, background, sandbox, timeout, ctx).await;
        }
        if background == Some(true) {
            return self
                .background(argv, &command, self.unsandboxed(sandbox), timeout, ctx)
                .await;
        }
        let timeout = seconds(timeout)
            .unwrap_or(self.default_timeout)
            .clamp(1, self.max_timeout);
        self.run(argv, self.unsandboxed(sandbox), timeout, ctx)
            .await
    }
}

/// Whether `argv` runs git alone, as the analysis sees every command of
/// it (a shell's `-c` line, or the program itself).
fn runs_git_only(argv: &[String], workspace: &crate::policy::Workspace) -> bool {
    let git = |p: &str| {
        std::path::Path::new(p)
            .file_name()
            .is_some_and(|n| n == "git")
    };
    match argv {
        [_, flag, line] if flag == "-c" => {
            let e = shell::analyze(line, workspace);
            !e.is_complex() && !e.commands.is_empty() && e.commands.iter().all(|c| git(c.name()))
        }
        [program, ..] => git(program),
        [] => false,
    }
}

impl ExecShell {
    /// A command of a turn that only plans: in a read-only sandbox (the
    /// workspace not writable either), in the foreground; refused when it
    /// asks for more or the sandbox is off.
    async fn look(
        &self,
        argv: Vec<String>,
        background: Option<bool>,
        sandbox: Option<bool>,
        timeout: Option<f64>,
        ctx: &ToolContext,
    ) -> Result<Value, ToolError> {
        let refuse = |why: &str| {
            Err(ToolError::PermissionDenied(format!(
                "this turn only plans: {why}; propose it in your plan instead"
            )))
        };
        if background == Some(true) {
            return refuse("no command runs in the background");
        }
        if self.unsandboxed(sandbox) {
            return refuse("no command runs outside the sandbox");
        }
        if self.sandbox.mode == sandbox::Mode::Off {
            return refuse("commands run only in a read-only sandbox, and the sandbox is off");
        }
        let read_only = Self {
            sandbox: sandbox::Settings {
                mode: sandbox::Mode::ReadOnly,
                ..self.sandbox.clone()
            },
            ..self.clone()
        };
        let timeout = seconds(timeout)
            .unwrap_or(self.default_timeout)
            .clamp(1, self.max_timeout);
        read_only.run(argv, false, timeout, ctx).await
    }

    /// Runs `argv` in the workspace, contained and (unless `unsandboxed`,
    /// as the call asked and the person approved) confined, with output
    /// streamed as progress, and sweeps what it left behind.
    pub(super) async fn run(
        &self,
        argv: Vec<String>,
        unsandboxed: bool,
        timeout: u64,
        ctx: &ToolContext,
    ) -> Result<Value, ToolError> {
        // Outside the sandbox only as the call asked (and was approved):
        // the warden still contains its processes.
        let settings = if unsandboxed {
            sandbox::Settings {
                mode: sandbox::Mode::Off,
                ..self.sandbox.clone()
            }
        } else {
            self.sandbox.clone()
        };
        let mut policy = settings.policy(ctx.workspace.root(), argv);
        // What the read rules cover is not there for the command, whatever
        // program reads it.
        if settings.mode != sandbox::Mode::Off
            && let Some(reads) = ctx.read_denials.clone()
        {
            let git_only = runs_git_only(&policy.argv, &ctx.workspace);
            let places = reads
                .sandbox_covers(git_only)
                .await
                .map_err(ToolError::ExecutionFailed)?;
            policy.hidden.extend(places);
            policy.hidden.sort();
            policy.hidden.dedup();
            // And what comes to be covered while it runs.
            policy.reads = reads.sandbox_watch();
        }
        let mut cmd = settings
            .command(&policy)
            .map_err(|e| ToolError::ExecutionFailed(e.to_string()))?;
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        for var in &self.env_remove {
            cmd.env_remove(var);
        }
        refuse_planted_git_dirs(&mut cmd);
        let started = Instant::now();
        let since = std::time::SystemTime::now();
        let child = cmd
            .spawn()
            .map_err(|e| ToolError::ExecutionFailed(format!("could not start the command: {e}")))?;
        // Should the call be dropped (Lathe quitting mid-command), the look
        // for what it left to run later still happens.
        let mut pending = PendingSweep(Some((policy.clone(), since)));
        let result = Run::new(child, ctx, timeout, started, policy.clone())
            .finish()
            .await;
        pending.0 = None;
        // Whatever way it ended, nothing of it runs any more: look for
        // what it left to run later.
        let warnings = disarm_git_traps(policy, since, ctx).await;
        if warnings.is_empty() {
            return result;
        }
        match result {
            Ok(mut v) => {
                v["warnings"] = json!(warnings);
                Ok(v)
            }
            Err(e) => Err(e.with_note(&warnings.join("; "))),
        }
    }

    /// Starts `argv` in the background (see `tools::jobs`): contained and
    /// confined as any command, its output into the job's buffer, the
    /// turn's interrupt not its own. Returns its handle and what it
    /// printed in its first moment (or how it ended, if it did).
    pub(super) async fn background(
        &self,
        argv: Vec<String>,
        shown: &str,
        unsandboxed: bool,
        timeout: Option<f64>,
        ctx: &ToolContext,
    ) -> Result<Value, ToolError> {
        let jobs = ctx.jobs.clone().ok_or_else(|| {
            ToolError::ExecutionFailed(
                "background commands need a conversation to belong to; run it without \
                 `background`"
                    .into(),
            )
        })?;
        let timeout = seconds(timeout)
            .unwrap_or(BACKGROUND_TIMEOUT)
            .clamp(1, BACKGROUND_TIMEOUT);
        let job = jobs.reserve(shown, &ctx.cancel, Some(&ctx.call_id))?;
        let mut job_ctx = ctx.clone();
        job_ctx.cancel = job.cancel();
        job_ctx.progress = job.sink();
        let runner = self.clone();
        let ran = Arc::clone(&job);
        let told = Arc::clone(&jobs);
        tokio::spawn(async move {
            let result = runner.run(argv, unsandboxed, timeout, &job_ctx).await;
            ran.finish(&result);
            told.changed();
        });
        jobs.changed();
        // Its first moment: what it says when it starts, or that it ended.
        let deadline = tokio::time::Instant::now() + FIRST_MOMENT;
        while job.is_running() && tokio::time::Instant::now() < deadline {
            tokio::select! {
                () = job.wait(FIRST_MOMENT) => {}
                () = ctx.cancel.cancelled() => break,
            }
            // Some output: a little more, as a server prints a few lines.
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let read = job.read();
        let mut v = json!({
            "handle": job.handle,
            "running": read.ended.is_none(),
            "output": read.output,
        });
        match &read.ended {
            Some(ended) => {
                if let Some(code) = ended.exit_code {
                    v["exit_code"] = json!(code);
                }
                match (&ended.note, ended.exit_code) {
                    // It exited, and the sandbox may be why (the only note
                    // an exit has): the person may run it again outside.
                    (Some(note), Some(_)) => v["sandbox"] = json!(note),
                    (Some(note), None) => v["note"] = json!(note),
                    (None, _) => {}
                }
            }
            None => {
                v["note"] = json!(format!(
                    "running in the background: shell_output {{\"handle\": \"{h}\"}} reads what \
                     it prints from now on, shell_kill {{\"handle\": \"{h}\"}} stops it; it stops \
                     when the conversation ends. {net}",
                    h = job.handle,
                    net = self.reachability(unsandboxed)
                ));
            }
        }
        Ok(v)
    }

    /// What the person is told of a background run before approving it.
    pub(super) fn background_note(&self, sandbox: Option<bool>) -> String {
        format!(
            "keeps running in the background until stopped (/ps, or the model's shell_kill) or \
             the conversation ends. {}",
            if self.unsandboxed(sandbox)
                || self.sandbox.mode == sandbox::Mode::Off
                || self.sandbox.network
            {
                "A server in it is reachable from this machine (localhost)."
            } else {
                "A server in it listens on localhost only: your browser reaches it, other \
                 machines do not; it has no network and reaches no other program's server \
                 ([shell] network = true allows more)."
            }
        )
    }

    /// Whether a server it starts can be reached from this machine's
    /// browser, in words.
    pub(super) fn reachability(&self, unsandboxed: bool) -> &'static str {
        if unsandboxed || self.sandbox.mode == sandbox::Mode::Off || self.sandbox.network {
            "A server it starts listens on this machine's network: http://localhost:PORT \
             reaches it."
        } else {
            "The sandbox gives it no network, but a server it starts listens on localhost \
             (bound to 0.0.0.0 or :: it is put on 127.0.0.1): http://localhost:PORT \
             reaches it from the person's browser and from other commands of this session; \
             other machines cannot reach it."
        }
    }

    /// Whether the call asks to run outside a sandbox that is on.
    pub(super) fn unsandboxed(&self, sandbox: Option<bool>) -> bool {
        self.sandbox.mode != sandbox::Mode::Off && sandbox == Some(false)
    }
}

/// The sweep of a command whose call was dropped before it ended: run
/// when the warden has been told to stop, on this thread (the runtime
/// may be going away), and logged.
struct PendingSweep(Option<(sandbox::Policy, std::time::SystemTime)>);

impl Drop for PendingSweep {
    fn drop(&mut self) {
        if let Some((policy, since)) = self.0.take() {
            // Give the warden a moment to kill what is left.
            std::thread::sleep(Duration::from_millis(100));
            for trap in sandbox::sweep_git_traps(&policy, since).traps {
                tracing::warn!(warning = %trap.describe(&policy.cwd), "exec_shell (dropped)");
            }
        }
    }
}

/// Sweeps the workspace for git repositories the command armed to run a
/// program later (see `sandbox::sweep_git_traps`), off the runtime's
/// threads; what was found, in words, also shown to the person at once.
async fn disarm_git_traps(
    policy: sandbox::Policy,
    since: std::time::SystemTime,
    ctx: &ToolContext,
) -> Vec<String> {
    let workspace = policy.cwd.clone();
    let sweep = tokio::task::spawn_blocking(move || sandbox::sweep_git_traps(&policy, since))
        .await
        .unwrap_or_default();
    let mut warnings: Vec<String> = sweep.traps.iter().map(|t| t.describe(&workspace)).collect();
    let shown = |p: &std::path::Path| {
        p.strip_prefix(&workspace)
            .unwrap_or(p)
            .display()
            .to_string()
    };
    for dir in &sweep.repaired {
        warnings.push(format!(
            "the command had made {} unreadable; Lathe made it readable again to look inside",
            shown(dir)
        ));
    }
    for dir in &sweep.unreadable {
        warnings.push(format!(
            "Lathe could not look inside {} for git repositories set up to run programs; do \
             not run git there before you have",
            shown(dir)
        ));
    }
    for path in &sweep.created {
        warnings.push(format!(
            "the command created {}, which changes what runs in this workspace (Lathe's \
             settings and hooks, MCP servers, direnv): check it before you trust it",
            path.strip_prefix(&workspace).unwrap_or(path).display()
        ));
    }
    if sweep.incomplete {
        warnings.push(
            "the workspace is too large to check completely for git repositories this \
             command may have set up to run programs"
                .to_string(),
        );
    }
    for w in &warnings {
        tracing::warn!(warning = %w, "exec_shell");
        ctx.progress.emit("lathe", format!("lathe: {w}"));
    }
    warnings
}

/// Git would take any directory that looks like a bare repository (a
/// `HEAD`, `config`, `objects/`, `refs/` a model can write) for one, and
/// run what its `config` says: `safe.bareRepository=explicit` makes git
/// use only the repositories named to it. Added to the configuration the
/// environment already gives.
fn refuse_planted_git_dirs(cmd: &mut Command) {
    let count = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|c| c.trim().parse::<u32>().ok())
        .unwrap_or(0);
    cmd.env("GIT_CONFIG_COUNT", (count + 1).to_string())
        .env(format!("GIT_CONFIG_KEY_{count}"), "safe.bareRepository")
        .env(format!("GIT_CONFIG_VALUE_{count}"), "explicit");
}

/// `bash` when it is on `PATH`, else `sh`.
fn shell_program() -> &'static str {
    static SHELL: std::sync::LazyLock<&'static str> = std::sync::LazyLock::new(|| {
        let found = std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("bash").is_file()));
        if found { "bash" } else { "sh" }
    });
    *SHELL
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

enum End {
    Exited(std::process::ExitStatus),
    /// The shell exited but something it started kept the pipes open.
    ExitedPipesOpen(std::process::ExitStatus),
    Timeout,
    Cancelled,
    /// Waiting for the shell failed: its outcome is unknown.
    WaitFailed(std::io::Error),
}

/// Ends the command when dropped, unless disarmed: the warden is told to
/// stop (SIGTERM), and it kills everything the command started, in any
/// session or group, before it exits.
struct Warden(Option<Pid>);

impl Warden {
    /// Asks the warden to kill everything and exit.
    fn stop(&self) {
        if let Some(pid) = self.0 {
            // ESRCH (already gone) is fine.
            let _ = kill(pid, Signal::SIGTERM);
        }
    }

    /// Kills the warden's group outright (when it does not answer).
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }
}

impl Drop for Warden {
    fn drop(&mut self) {
        self.stop();
    }
}

struct Run<'a> {
    child: tokio::process::Child,
    ctx: &'a ToolContext,
    timeout: u64,
    started: Instant,
    policy: sandbox::Policy,
    guard: Warden,
    readers: Vec<JoinHandle<()>>,
    rx: mpsc::Receiver<(Stream, Vec<u8>)>,
    out: Capture,
    err: Capture,
    out_lines: LineBuf,
    err_lines: LineBuf,
}

impl<'a> Run<'a> {
    fn new(
        mut child: tokio::process::Child,
        ctx: &'a ToolContext,
        timeout: u64,
        started: Instant,
        policy: sandbox::Policy,
    ) -> Self {
        let guard = Warden(
            child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .map(Pid::from_raw),
        );
        let (tx, rx) = mpsc::channel(64);
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            readers.push(tokio::spawn(pump(out, Stream::Stdout, tx.clone())));
        }
        if let Some(err) = child.stderr.take() {
            readers.push(tokio::spawn(pump(err, Stream::Stderr, tx)));
        }
        Self {
            child,
            ctx,
            timeout,
            started,
            policy,
            guard,
            readers,
            rx,
            out: Capture::default(),
            err: Capture::default(),
            out_lines: LineBuf::default(),
            err_lines: LineBuf::default(),
        }
    }

    async fn finish(mut self) -> Result<Value, ToolError> {
        let end = self.wait().await;
        for r in &self.readers {
            r.abort();
        }
        self.flush_progress(/*all*/ true);
        let duration_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match end {
            End::Exited(status) | End::ExitedPipesOpen(status) => {
                let pipes_open = matches!(end, End::ExitedPipesOpen(_));
                if pipes_open {
                    // Something holds the pipes although the warden is
                    // done: only its group can be left.
                    self.guard.kill();
                }
                // The warden killed what the command left running.
                self.guard.0 = None;
                if status.code() == Some(sandbox::SETUP_FAILED) {
                    let (stderr, _) = self.err.render();
                    if let Some(why) = stderr.trim().strip_prefix(sandbox::FAILURE_PREFIX) {
                        return Err(ToolError::ExecutionFailed(format!(
                            "the command did not run: {why}"
                        )));
                    }
                }
                Ok(self.result(status, duration_ms, pipes_open))
            }
            End::Timeout => {
                self.kill_and_reap().await;
                Err(ToolError::Timeout {
                    secs: self.timeout,
                    detail: format!(
                        "command timed out after {}s and every process it started was killed{}",
                        self.timeout,
                        self.last_lines()
                    ),
                })
            }
            End::WaitFailed(e) => {
                self.kill_and_reap().await;
                Err(ToolError::ExecutionFailed(format!(
                    "lost track of the command ({e}); everything it started was killed"
                )))
            }
            End::Cancelled => {
                self.kill_and_reap().await;
                Err(ToolError::Cancelled(format!(
                    "interrupted by the user after {duration_ms} ms; every process the command started was killed"
                )))
            }
        }
    }

    async fn wait(&mut self) -> End {
        let deadline = tokio::time::sleep(Duration::from_secs(self.timeout));
        tokio::pin!(deadline);
        let mut tick = tokio::time::interval(PROGRESS_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut status = None;
        let mut streams_open = true;
        // Armed when the shell exits; until then it never fires.
        let grace = tokio::time::sleep(Duration::from_secs(10 * 365 * 24 * 3600));
        tokio::pin!(grace);
        loop {
            if let (Some(s), false) = (status, streams_open) {
                return End::Exited(s);
            }
            tokio::select! {
                biased;
                () = self.ctx.cancel.cancelled() => return End::Cancelled,
                () = &mut deadline => return End::Timeout,
                msg = self.rx.recv(), if streams_open => match msg {
                    Some((stream, data)) => self.take(stream, &data),
                    None => streams_open = false,
                },
                st = self.child.wait(), if status.is_none() => match st {
                    Ok(s) => {
                        status = Some(s);
                        grace.as_mut().reset(tokio::time::Instant::now() + EXIT_GRACE);
                    }
                    Err(e) => return End::WaitFailed(e),
                },
                () = &mut grace, if status.is_some() => {
                    if let Some(s) = status {
                        return End::ExitedPipesOpen(s);
                    }
                }
                // Only output waiting to be shown wakes the loop: a
                // silent command (a server in the background) costs
                // nothing while it waits.
                _ = tick.tick(), if self.out_lines.waiting() || self.err_lines.waiting() => {
                    self.flush_progress(/*all*/ false);
                }
            }
        }
    }

    fn take(&mut self, stream: Stream, data: &[u8]) {
        match stream {
            Stream::Stdout => {
                self.out.push(data);
                self.out_lines.push(data);
            }
            Stream::Stderr => {
                self.err.push(data);
                self.err_lines.push(data);
            }
        }
    }

    fn flush_progress(&mut self, all: bool) {
        for (stream, lines) in [
            (Stream::Stdout, &mut self.out_lines),
            (Stream::Stderr, &mut self.err_lines),
        ] {
            if let Some(text) = lines.take(all) {
                self.ctx.progress.emit(stream.name(), text);
            }
        }
    }

    async fn kill_and_reap(&mut self) {
        self.guard.stop();
        let waited = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
        if waited.is_err() {
            self.guard.kill();
            let _ = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
        }
        self.guard.0 = None;
    }

    fn last_lines(&self) -> String {
        let (out, _) = self.out.render();
        let (err, _) = self.err.render();
        let tail: Vec<&str> = out.lines().chain(err.lines()).collect();
        if tail.is_empty() {
            return String::new();
        }
        let start = tail.len().saturating_sub(20);
        format!("; last output:\n{}", tail[start..].join("\n"))
    }

    fn result(
        &self,
        status: std::process::ExitStatus,
        duration_ms: u64,
        pipes_open: bool,
    ) -> Value {
        use std::os::unix::process::ExitStatusExt;
        let (stdout, out_cut) = self.out.render();
        let (stderr, err_cut) = self.err.render();
        let mut v = json!({
            "exit_code": status.code().unwrap_or(-1),
            "stdout": stdout,
            "stderr": stderr,
            "duration_ms": duration_ms,
        });
        if let Some(sig) = status.signal() {
            v["signal"] = json!(sig);
        }
        if out_cut || err_cut {
            v["truncated"] = json!(true);
        }
        if status.code() != Some(0)
            && let Some(hint) = sandbox::blocked_hint(&self.policy, &stderr)
        {
            v["sandbox"] = json!(hint);
        }
        if pipes_open {
            v["note"] = json!(
                "the shell exited but a background process kept its output open; \
                 later output was not captured"
            );
        }
        v
    }
}

async fn pump(mut r: impl AsyncRead + Unpin, stream: Stream, tx: mpsc::Sender<(Stream, Vec<u8>)>) {
    let mut buf = vec![0u8; 8192];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if tx.send((stream, buf[..n].to_vec())).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// The first and last bytes of a stream, and how much there was.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: usize,
}

impl Capture {
    fn push(&mut self, mut data: &[u8]) {
        self.total += data.len();
        if self.head.len() < HEAD_BYTES {
            let take = (HEAD_BYTES - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..take]);
            data = &data[take..];
        }
        self.tail.extend(data);
        if self.tail.len() > TAIL_BYTES {
            let excess = self.tail.len() - TAIL_BYTES;
            self.tail.drain(..excess);
        }
    }

    /// The captured text, and whether the middle was dropped. Cuts fall on
    /// UTF-8 character boundaries.
    fn render(&self) -> (String, bool) {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if self.total == self.head.len() + tail.len() {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return (String::from_utf8_lossy(&all).into_owned(), false);
        }
        let head = whole_chars_prefix(&self.head);
        let tail = whole_chars_suffix(&tail);
        let omitted = self.total - head.len() - tail.len();
        let text = format!(
            "{}\n…[{omitted} bytes omitted]…\n{}",
            String::from_utf8_lossy(head),
            String::from_utf8_lossy(tail)
        );
        (text, true)
    }
}

fn whole_chars_prefix(b: &[u8]) -> &[u8] {
    match std::str::from_utf8(b) {
        Err(e) if e.error_len().is_none() => &b[..e.valid_up_to()],
        _ => b,
    }
}

fn whole_chars_suffix(b: &[u8]) -> &[u8] {
    let skip = b.iter().take(3).take_while(|&&c| c & 0xC0 == 0x80).count();
    &b[skip..]
}

/// Output waiting to be sent as progress, released a whole line at a time.
#[derive(Default)]
struct LineBuf {
    pending: Vec<u8>,
    /// A whole line waits (kept, so the loop's guard does not scan).
    line: bool,
}

impl LineBuf {
    fn push(&mut self, data: &[u8]) {
        self.line |= data.contains(&b'\n');
        self.pending.extend_from_slice(data);
        if self.pending.len() > PROGRESS_MAX * 4 {
            // A burst faster than we flush: keep only the newest part.
            let cut = self.pending.len() - PROGRESS_MAX;
            self.pending.drain(..cut);
        }
    }

    /// Whether whole lines wait to be sent.
    fn waiting(&self) -> bool {
        self.line
    }

    /// Complete lines (or everything, at the end), without the final newline.
    fn take(&mut self, all: bool) -> Option<String> {
        // What stays after this has no whole line.
        self.line = false;
        let end = if all {
            self.pending.len()
        } else {
            self.pending.iter().rposition(|&b| b == b'\n')? + 1
        };
        if end == 0 {
            return None;
        }
        let chunk: Vec<u8> = self.pending.drain(..end).collect();
        let mut start = 0;
        if chunk.len() > PROGRESS_MAX {
            start = chunk.len() - PROGRESS_MAX;
            start += chunk[start..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
        }
        let text = String::from_utf8_lossy(&chunk[start..]);
        let text = text.trim_end_matches(['\n', '\r']);
        (!text.is_empty()).then(|| text.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_head_and_tail_of_long_output() {
        let mut c = Capture::default();
        for i in 0..10_000 {
            c.push(format!("line {i}\n").as_bytes());
        }
        let (text, cut) = c.render();
        assert!(cut);
        assert!(text.starts_with("line 0\n"));
        assert!(text.ends_with("line 9999\n"));
        assert!(text.contains("bytes omitted"));
        assert!(text.len() < HEAD_BYTES + TAIL_BYTES + 100);
    }

    #[test]
    fn capture_cuts_on_character_boundaries() {
        let mut c = Capture::default();
        c.push(b"a");
        c.push("é".repeat(HEAD_BYTES * 2).as_bytes());
        let (text, cut) = c.render();
        assert!(cut);
        assert!(!text.contains('\u{FFFD}'));
    }

    #[test]
    fn line_buffer_releases_whole_lines() {
        let mut l = LineBuf::default();
        l.push(b"a\nb");
        assert!(l.waiting());
        assert_eq!(l.take(false).as_deref(), Some("a"));
        assert!(!l.waiting(), "a part of a line wakes nothing");
        assert_eq!(l.take(false), None);
        l.push(b"c\n");
        assert_eq!(l.take(false).as_deref(), Some("bc"));
        l.push(b"tail");
        assert_eq!(l.take(true).as_deref(), Some("tail"));
    }
}
