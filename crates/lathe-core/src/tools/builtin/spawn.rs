//! `spawn`: run a program with arguments, without a shell. It is judged,
//! approved, sandboxed, streamed and swept exactly as `exec_shell` is
//! (its program and arguments are analysed as the one simple command
//! they make, quoted), at most five at a time, with a timeout (default
//! 60 s).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use super::BuiltinSettings;
use super::exec_shell::ExecShell;
use crate::policy::Workspace;
use crate::policy::shell;
use crate::protocol::Effect;
use crate::protocol::operation::Operation;
use crate::tools::args::{parse, seconds};
use crate::tools::spec::{ToolContext, ToolError};
use crate::tools::typed::TypedTool;

/// At most this many spawned processes run at once.
pub const MAX_CONCURRENT: usize = 5;
const DEFAULT_TIMEOUT: u64 = 60;

pub struct Spawn {
    runner: ExecShell,
    slots: Arc<Semaphore>,
    max_timeout: u64,
}

impl Spawn {
    pub fn new(settings: &BuiltinSettings) -> Self {
        Self {
            runner: ExecShell::new(settings),
            slots: Arc::new(Semaphore::new(MAX_CONCURRENT)),
            max_timeout: settings.shell_max_timeout_secs.max(1),
        }
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The program, e.g. `cargo`
    command: String,
    /// Its arguments
    #[serde(default)]
    args: Vec<String>,
    /// What it is for, for the person
    description: Option<String>,
    /// Timeout in seconds (default 60)
    #[schemars(extend("exclusiveMinimum" = 0))]
    timeout: Option<f64>,
    /// false runs it outside the sandbox; the person must approve it explicitly, every time
    sandbox: Option<bool>,
    /// true starts it in the background (as exec_shell does): a handle at once; shell_output reads it, shell_kill stops it
    background: Option<bool>,
}

/// The program and its arguments.
fn argv(args: &Args) -> Result<Vec<String>, ToolError> {
    let program = args.command.trim();
    if program.is_empty() {
        return Err(ToolError::InvalidArgs("command is empty".into()));
    }
    let mut argv = vec![program.to_string()];
    argv.extend(args.args.iter().cloned());
    if argv.iter().any(|a| a.contains('\0')) {
        return Err(ToolError::InvalidArgs(
            "an argument holds a NUL byte".into(),
        ));
    }
    Ok(argv)
}

/// The line a shell would need to run `argv` as it is: what the policy
/// analyses, so a spawn is judged as the simple command it is.
fn as_line(argv: &[String]) -> Result<String, ToolError> {
    shlex::try_join(argv.iter().map(String::as_str))
        .map_err(|e| ToolError::InvalidArgs(format!("cannot quote the command: {e}")))
}

#[async_trait]
impl TypedTool for Spawn {
    type Args = Args;

    fn name(&self) -> &'static str {
        "spawn"
    }

    fn description(&self) -> &str {
        "Run a program with arguments (no shell: no pipes, globs or variables) in the \
         workspace, sandboxed like exec_shell, and return exit_code, stdout and stderr. \
         At most 5 at a time; killed after `timeout` seconds (default 60). \
         `background: true` keeps it running, as exec_shell's does."
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Shell
    }

    fn effect(&self) -> Effect {
        Effect::Exec
    }

    fn operations(
        &self,
        a: &Self::Args,
        workspace: &Workspace,
    ) -> Result<Vec<Operation>, ToolError> {
        let line = as_line(&argv(a)?)?;
        let mut exec = shell::analyze(&line, workspace);
        exec.unsandboxed = self.runner.unsandboxed(a.sandbox);
        exec.background =
            (a.background == Some(true)).then(|| self.runner.background_note(a.sandbox));
        Ok(vec![Operation::Exec(exec)])
    }

    async fn execute(&self, a: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let argv = argv(&a)?;
        if a.background == Some(true) {
            let line = as_line(&argv)?;
            let unsandboxed = self.runner.unsandboxed(a.sandbox);
            return self
                .runner
                .background(argv, &line, unsandboxed, a.timeout, ctx)
                .await;
        }
        let timeout = seconds(a.timeout)
            .unwrap_or(DEFAULT_TIMEOUT)
            .clamp(1, self.max_timeout);
        let Ok(_slot) = self.slots.clone().try_acquire_owned() else {
            return Err(ToolError::ExecutionFailed(format!(
                "{MAX_CONCURRENT} spawned processes are running already (the limit); wait for \
                 one to finish"
            )));
        };
        let description = a
            .description
            .unwrap_or_else(|| "(no description)".to_string());
        let program = argv[0].clone();
        let unsandboxed = self.runner.unsandboxed(a.sandbox);
        let mut v = self.runner.run(argv, unsandboxed, timeout, ctx).await?;
        if let Some(obj) = v.as_object_mut() {
            obj.insert("command".into(), json!(program));
            obj.insert("description".into(), json!(description));
        }
        Ok(v)
    }

    fn unsandboxed_retry(&self, args: &Value, result: &Value) -> Option<Value> {
        let asked = parse::<Args>(args).ok()?.sandbox;
        if self.runner.unsandboxed(asked) || result.get("sandbox").is_none() {
            return None;
        }
        let mut retry = args.clone();
        retry["sandbox"] = Value::Bool(false);
        Some(retry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_quoted_as_one_simple_command() {
        let of = |v: serde_json::Value| parse::<Args>(&v).and_then(|a| argv(&a));
        let argv = of(json!({"command": "rm", "args": ["-rf", "a b", "$(x)"]})).unwrap();
        assert_eq!(as_line(&argv).unwrap(), "rm -rf 'a b' '$(x)'");
        assert!(of(json!({"command": "x", "args": [1]})).is_err());
        assert!(of(json!({"command": "  "})).is_err());
    }
}
