//! `shell_output` and `shell_kill`: what a command started in the
//! background (`exec_shell`/`spawn` with `background: true`) printed since
//! the last read, and stopping it. They reach only the conversation's own
//! background commands, by handle.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::protocol::{Effect, Summary};
use crate::tools::jobs::{Jobs, Read};
use crate::tools::spec::{ToolContext, ToolError};
use crate::tools::typed::TypedTool;

/// The longest `shell_output` waits for something new (milliseconds).
pub const MAX_WAIT_MS: u64 = 30_000;

fn jobs(ctx: &ToolContext) -> Result<&Jobs, ToolError> {
    ctx.jobs
        .as_deref()
        .ok_or_else(|| ToolError::ExecutionFailed("no background commands here".into()))
}

/// A read, as the model gets it.
fn reply(handle: &str, read: Read) -> Value {
    let mut v = json!({
        "handle": handle,
        "running": read.ended.is_none(),
        "output": read.output,
    });
    if read.skipped > 0 {
        v["skipped_bytes"] = json!(read.skipped);
        v["note"] = json!(format!(
            "{} earlier bytes of output are not shown (only the newest part is kept)",
            read.skipped
        ));
    }
    if let Some(ended) = read.ended {
        if let Some(code) = ended.exit_code {
            v["exit_code"] = json!(code);
        }
        if let Some(note) = ended.note {
            v["ended"] = json!(note);
        }
    }
    v
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputArgs {
    /// The handle exec_shell or spawn returned (`bg1`)
    handle: String,
    /// Wait up to this many milliseconds for new output or the end (default 0, max 30000)
    #[schemars(range(min = 0, max = 30000))]
    wait_ms: Option<u64>,
}

pub struct ShellOutput;

#[async_trait]
impl TypedTool for ShellOutput {
    type Args = OutputArgs;

    fn summary(&self, result: &Value) -> Option<Summary> {
        Some(Summary::Output {
            lines: result
                .get("output")
                .and_then(Value::as_str)
                .map_or(0, |o| o.lines().count() as u64),
            running: result.get("running").and_then(Value::as_bool) == Some(true),
            exit_code: result
                .get("exit_code")
                .and_then(Value::as_i64)
                .and_then(|c| i32::try_from(c).ok()),
        })
    }

    /// What a background command printed since the last read.
    fn prints_unchecked(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "shell_output"
    }

    fn description(&self) -> &str {
        "Read what a background command (started with `background: true`) printed since the \
         last read, and whether it still runs (else its exit_code). `wait_ms` waits for new \
         output or its end."
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Shell
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    async fn execute(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let OutputArgs { handle, wait_ms } = args;
        let job = jobs(ctx)?.get(&handle)?;
        let wait = Duration::from_millis(wait_ms.unwrap_or(0).min(MAX_WAIT_MS));
        if !wait.is_zero() {
            tokio::select! {
                () = job.wait(wait) => {}
                () = ctx.cancel.cancelled() => {}
            }
        }
        Ok(reply(&job.handle, job.read()))
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillArgs {
    /// The handle exec_shell or spawn returned (`bg1`)
    handle: String,
}

pub struct ShellKill;

#[async_trait]
impl TypedTool for ShellKill {
    type Args = KillArgs;

    fn name(&self) -> &'static str {
        "shell_kill"
    }

    /// What the command printed since the last read comes with it.
    fn prints_unchecked(&self) -> bool {
        true
    }

    fn description(&self) -> &str {
        "Stop a background command (and everything it started) by its handle; returns what \
         it printed since the last read."
    }

    /// It stops only what this conversation started in the background:
    /// nothing to approve.
    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Shell
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    /// But it acts: not for plan mode or subagents.
    fn only_looks(&self) -> bool {
        false
    }

    async fn execute(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let KillArgs { handle } = args;
        let jobs = jobs(ctx)?;
        let job = jobs.get(&handle)?;
        let was_running = job.is_running();
        job.stop().await;
        jobs.changed();
        let mut v = reply(&job.handle, job.read());
        if !was_running {
            v["note"] = json!("it had already ended");
        }
        Ok(v)
    }
}
