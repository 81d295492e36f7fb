//! Starting the real binary as strangers do: keys of every length from 1
//! to 64 bytes (LM Studio's `lm-studio` among them), keys in other
//! scripts, and workspaces whose `.env` holds short everyday values
//! (`DB_PASSWORD=postgres`). Each run must start, finish its turn (a
//! command and an answer that repeats the key), exit 0, and leave no key
//! of 8 bytes or more in what it prints or records.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::mock_llm::{MockLlm, Reply, Step};

/// One start: the key, the workspace's `.env`, and what must not show.
struct Start {
    key: String,
    dotenv: Option<String>,
    hidden: Vec<String>,
}

/// What a run printed and recorded.
struct Seen {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    recorded: String,
}

async fn start(case: &Start) -> Seen {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("README.md"), "# a project\n").unwrap();
    if let Some(dotenv) = &case.dotenv {
        std::fs::write(ws.path().join(".env"), dotenv).unwrap();
    }
    // The model runs a command, then answers with what it should not
    // know: the key and the `.env`'s values.
    let echoed = case.hidden.join(" / ");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "call_1",
            "exec_shell",
            json!({"command": "ls -a && cat README.md"}),
        )),
        Step::Reply(Reply::text(&format!("the key is {echoed}; done"))),
    ])
    .await;
    let url = mock.openai_url();
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_lathe"))
        .args([
            "exec",
            "--json",
            "--approval",
            "full-auto",
            "--base-url",
            url.as_str(),
            "--model",
            "mock-model",
            "look around",
        ])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("LATHE_HOME", home.path())
        .env("OPENAI_API_KEY", &case.key)
        .current_dir(ws.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let out = tokio::time::timeout(Duration::from_secs(90), child.wait_with_output())
        .await
        .expect("lathe did not exit in time")
        .unwrap();
    Seen {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        recorded: recorded(home.path()),
    }
}

/// Every file Lathe wrote under its home (sessions, journal, logs).
fn recorded(dir: &Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.push_str(&recorded(&p));
        } else if let Ok(bytes) = std::fs::read(&p) {
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    out
}

/// Runs every case, eight at a time, and checks each.
async fn check_all(cases: Vec<Start>) {
    let gate = Arc::new(tokio::sync::Semaphore::new(8));
    let cases = Arc::new(cases);
    let mut runs = Vec::new();
    for i in 0..cases.len() {
        let (gate, cases) = (gate.clone(), cases.clone());
        runs.push(tokio::spawn(async move {
            let _permit = gate.acquire().await.unwrap();
            (i, start(&cases[i]).await)
        }));
    }
    let mut failures = Vec::new();
    for run in runs {
        let (i, seen) = run.await.unwrap();
        let case = &cases[i];
        let what = format!(
            "key {:?} ({} bytes), .env {:?}",
            case.key,
            case.key.len(),
            case.dotenv
        );
        if seen.code != Some(0) || seen.stderr.contains("panicked") {
            failures.push(format!("{what}: exit {:?}\n{}", seen.code, seen.stderr));
            continue;
        }
        if !seen.stdout.contains("turn_completed") {
            failures.push(format!(
                "{what}: the turn did not complete\n{}",
                seen.stdout
            ));
        }
        for secret in &case.hidden {
            for (name, text) in [
                ("stdout", &seen.stdout),
                ("stderr", &seen.stderr),
                ("the record", &seen.recorded),
            ] {
                if text.contains(secret.as_str()) {
                    failures.push(format!("{what}: {secret:?} shows in {name}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Keys of every length from 1 to 64 bytes, starting as LM Studio's
/// does; those of 8 bytes or more never show.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_of_every_length_start() {
    const LETTERS: &str = "lm-studio0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let cases = (1..=64)
        .map(|n| {
            let key = LETTERS[..n].to_string();
            let hidden = if n >= 8 {
                vec![key.clone()]
            } else {
                Vec::new()
            };
            Start {
                key,
                dotenv: None,
                hidden,
            }
        })
        .collect();
    check_all(cases).await;
}

/// Keys in other scripts and with symbols, short and long.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_beyond_ascii_start() {
    let keys = [
        "ключ",
        "ключ-доступа",
        "clé-secrète-42",
        "🔑",
        "🔑🔑",
        "🔑🔑🔑🔑🔑",
        "鍵鍵鍵",
        "パスワード",
        "sk-ü",
        "x\u{301}y\u{301}z\u{301}w\u{301}",
        "aaaaaaaaaaaa",
        "!@#$%^&*()_+",
        "Bearer sk-local",
    ];
    let cases = keys
        .iter()
        .map(|k| Start {
            key: (*k).to_string(),
            dotenv: None,
            hidden: if k.len() >= 8 {
                vec![(*k).to_string()]
            } else {
                Vec::new()
            },
        })
        .collect();
    check_all(cases).await;
}

/// Workspaces whose `.env` holds the values people really put there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspaces_with_short_env_values_start() {
    let envs: [(&str, &[&str]); 6] = [
        ("DB_PASSWORD=postgres\n", &["postgres"]),
        ("SECRET_KEY=changeme\nDEBUG=1\n", &["changeme"]),
        ("API_TOKEN=abc123def456\n", &["abc123def456"]),
        (
            "DATABASE_URL=postgres://app:hunter22@localhost:5432/app\nPORT=8080\n",
            &["hunter22"],
        ),
        ("PASSWORD=\nTOKEN=x\nSECRET=ab\nAPI_KEY='lm-studio'\n", &[]),
        ("# comment only\n=\n==\nKEY\n\u{feff}A=B\n", &[]),
    ];
    let cases = envs
        .iter()
        .flat_map(|(dotenv, hidden)| {
            ["lm-studio", "sk-local", "x"].map(|key| Start {
                key: key.to_string(),
                dotenv: Some((*dotenv).to_string()),
                hidden: hidden
                    .iter()
                    .map(|s| (*s).to_string())
                    .chain((key.len() >= 8).then(|| key.to_string()))
                    .collect(),
            })
        })
        .collect();
    check_all(cases).await;
}
