//! The `lathe` binary run as a script runs it: a fresh home and an empty
//! workspace, an environment cleared to `PATH` and the variables a test
//! names, and what it printed, with its `--json` events parsed.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncWriteExt;

/// A home and a workspace for one test's runs of the binary at `bin`
/// (the calling suite's `env!("CARGO_BIN_EXE_lathe")`).
pub struct Setup {
    pub home: tempfile::TempDir,
    pub ws: tempfile::TempDir,
    bin: PathBuf,
}

/// What one run printed, and how it ended.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Setup {
    pub fn new(bin: impl Into<PathBuf>) -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            ws: tempfile::tempdir().unwrap(),
            bin: bin.into(),
        }
    }

    /// Writes the person's config (`config.toml` in the home).
    pub fn config(&self, text: &str) {
        std::fs::write(self.home.path().join("config.toml"), text).unwrap();
    }

    /// Writes a file of the workspace (its directories made).
    pub fn file(&self, path: &str, text: &str) {
        let path = self.ws.path().join(path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(path, text).unwrap();
    }

    /// The binary with `args`, in the workspace, with the home, `PATH` and
    /// `env` alone in its environment; its output piped, killed if dropped.
    pub fn command(&self, args: &[&str], env: &[(&str, &str)]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.bin);
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("LATHE_HOME", self.home.path())
            .envs(env.iter().copied())
            .current_dir(self.ws.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    /// Runs the binary to its end (a minute at most), `stdin` given to it.
    pub async fn run(&self, args: &[&str], env: &[(&str, &str)], stdin: &str) -> Run {
        let mut child = self.command(args, env).spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        input.write_all(stdin.as_bytes()).await.unwrap();
        drop(input);
        let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
            .await
            .expect("lathe did not exit in time")
            .unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Setup {
    /// `lathe exec --json -a full-auto --checkpoints off` on the scripted
    /// server at `base_url` with `mock-model`, `extra` flags, and `key` as
    /// the API key.
    pub async fn exec_json(&self, base_url: &str, key: &str, extra: &[&str], prompt: &str) -> Run {
        self.exec_json_env(base_url, key, extra, prompt, &[]).await
    }

    /// [`Setup::exec_json`] with more of the environment (`env`).
    pub async fn exec_json_env(
        &self,
        base_url: &str,
        key: &str,
        extra: &[&str],
        prompt: &str,
        env: &[(&str, &str)],
    ) -> Run {
        let mut args = vec![
            "exec",
            "--json",
            "-a",
            "full-auto",
            "--checkpoints",
            "off",
            "--base-url",
            base_url,
            "--model",
            "mock-model",
        ];
        args.extend_from_slice(extra);
        args.push(prompt);
        let mut vars = vec![("OPENAI_API_KEY", key)];
        vars.extend_from_slice(env);
        self.run(&args, &vars, "").await
    }
}

impl Run {
    /// Every `--json` event printed: stdout carries nothing else (a line
    /// that is not JSON fails the test, naming it).
    pub fn events(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }

    /// The first event of this type.
    pub fn first(&self, kind: &str) -> Value {
        self.events()
            .into_iter()
            .find(|e| e["type"] == kind)
            .unwrap_or_else(|| panic!("no {kind} event in {}\n{}", self.stdout, self.stderr))
    }

    /// How many events of this type.
    pub fn count(&self, kind: &str) -> usize {
        self.events().iter().filter(|e| e["type"] == kind).count()
    }

    /// The `tool_call_finished` event of one call.
    pub fn finished(&self, call_id: &str) -> Value {
        self.events()
            .into_iter()
            .find(|e| e["type"] == "tool_call_finished" && e["call_id"] == call_id)
            .unwrap_or_else(|| panic!("no result for {call_id}: {}\n{}", self.stdout, self.stderr))
    }
}
