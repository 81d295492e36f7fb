//! Killing Lathe at random points: the real binary runs a scripted
//! session (a command, a big file write, another command, an edit, then
//! an answer that streams forever) and is SIGKILLed after a random delay
//! (while it starts, streams, runs a tool, between approval and
//! execution, during a write). Each of at least 100 runs is then resumed
//! with `lathe exec --continue`, and must: resume (exit 0) with the
//! conversation its record holds, send the provider a valid history
//! (every tool call answered, in order), never run a call again, and
//! leave no half-written file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mock_llm;

use std::collections::HashSet;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use mock_llm::{MockLlm, Reply, Step};
use serde_json::{Value, json};

const RUNS: u64 = 100;

/// A small deterministic generator (the runs are the same every time).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % below
    }
}

fn lathe(home: &Path, ws: &Path, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_lathe"));
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("LATHE_HOME", home)
        .current_dir(ws)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

fn big(tail: &str) -> String {
    format!("{}{tail}\n", "0123456789abcdef".repeat(4 * 1024))
}

/// The scripted session of run `n`.
fn script(n: u64, rng: &mut Lcg) -> Vec<Step> {
    let nap = |rng: &mut Lcg| format!("0.0{}", rng.next(9) + 1);
    vec![
        Step::Reply(
            Reply::tools()
                .say("Working on it.")
                .call(
                    "c1",
                    "exec_shell",
                    json!({"command": format!("echo c1-{n} >> log.txt; sleep {}", nap(rng))}),
                )
                .call(
                    "c2",
                    "write_file",
                    json!({"path": "out/data.txt", "content": big("TAIL-A")}),
                )
                .call(
                    "c3",
                    "exec_shell",
                    json!({"command": format!("sleep {}; echo c3-{n} >> log.txt", nap(rng))}),
                ),
        ),
        Step::Reply(Reply::tools().call(
            "c4",
            "edit_file",
            json!({"path": "out/data.txt", "old_text": "TAIL-A", "new_text": "TAIL-B"}),
        )),
        Step::Hang(Reply::text("and the answer streams on and on")),
    ]
}

/// Every assistant tool call answered right after it, and no answer
/// without its call.
fn assert_valid_history(messages: &[Value], run: u64) {
    let mut open: Vec<String> = Vec::new();
    for m in messages {
        match m["role"].as_str() {
            Some("assistant") => {
                assert!(
                    open.is_empty(),
                    "run {run}: calls left unanswered: {open:?}"
                );
                open = m["tool_calls"]
                    .as_array()
                    .map(|c| {
                        c.iter()
                            .map(|c| c["id"].as_str().unwrap().to_string())
                            .collect()
                    })
                    .unwrap_or_default();
            }
            Some("tool") => {
                let id = m["tool_call_id"].as_str().unwrap();
                assert!(
                    open.first().map(String::as_str) == Some(id),
                    "run {run}: an answer out of order or without its call: {id} ({open:?})"
                );
                open.remove(0);
            }
            _ => assert!(
                open.is_empty(),
                "run {run}: calls left unanswered: {open:?}"
            ),
        }
    }
    assert!(
        open.is_empty(),
        "run {run}: calls left unanswered: {open:?}"
    );
}

/// Files in the workspace that are not whole: the data file neither as it
/// was written nor as edited, or a temporary file of a write. A kill in the
/// moment between naming a replacement and renaming it over the file (no
/// system call does both) may leave that name, whole, until the session is
/// resumed (`resumed`), which sweeps it.
fn assert_no_half_written_file(ws: &Path, run: u64, resumed: bool) {
    let out = ws.join("out");
    if let Ok(entries) = std::fs::read_dir(&out) {
        for e in entries {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name == "data.txt" {
                continue;
            }
            assert!(
                !resumed && name.starts_with(".lathe-") && name.ends_with(".tmp"),
                "run {run}: a stray file in out/: {name} (resumed: {resumed})"
            );
            let data = std::fs::read_to_string(out.join(&name)).unwrap_or_default();
            assert!(
                data == big("TAIL-A") || data == big("TAIL-B"),
                "run {run}: {name} is half written ({} bytes)",
                data.len()
            );
        }
    }
    if let Ok(data) = std::fs::read_to_string(out.join("data.txt")) {
        assert!(
            data == big("TAIL-A") || data == big("TAIL-B"),
            "run {run}: out/data.txt is half written ({} bytes)",
            data.len()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_killed_anywhere_resumes_valid_and_never_runs_a_call_twice() {
    let mut rng = Lcg(0x5eed_1a7e);
    let mut resumed = 0;
    // Where the kills landed: before any call, with a call approved but
    // unanswered, between calls, after the last call (streaming).
    let mut before_calls = 0;
    let mut mid_call = 0;
    let mut between = 0;
    let mut streaming = 0;
    for run in 0..RUNS {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let mock = MockLlm::start(script(run, &mut rng)).await;
        let url = mock.openai_url();
        let delay = rng.next(400);
        let mut child = lathe(
            home.path(),
            ws.path(),
            &[
                "exec",
                "--json",
                "--base-url",
                &url,
                "--model",
                "m",
                "--approval",
                "full-auto",
                "--sandbox",
                "off",
                "--checkpoints",
                "off",
                "start",
            ],
        )
        .spawn()
        .unwrap();
        tokio::time::sleep(Duration::from_millis(delay)).await;
        child.start_kill().unwrap();
        let _ = child.wait().await;
        assert_no_half_written_file(ws.path(), run, false);
        // The calls the killed run had approved to run, as its record says
        // before the resume (a command killed with Lathe may still finish
        // its first line a moment later: the record, not the clock, says
        // what ran).
        let approved_before: HashSet<String> = std::fs::read_dir(home.path().join("sessions"))
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter(|e| e.file_name().to_string_lossy().ends_with(".history.jsonl"))
                    .flat_map(|e| lathe_core::session::history::read(&e.path()).unwrap_or_default())
                    .filter_map(|r| match r.item {
                        lathe_core::session::history::Item::Approved { call_id } => Some(call_id),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();

        // A session is there to resume once the person's message is on
        // record (`--continue` skips sessions without one).
        let has_session = std::fs::read_dir(home.path().join("sessions"))
            .map(|d| {
                d.filter_map(Result::ok).any(|e| {
                    e.file_name().to_string_lossy().ends_with(".history.jsonl")
                        && lathe_core::session::history::read(&e.path()).is_ok_and(|r| {
                            r.iter().any(|r| {
                                matches!(r.item, lathe_core::session::history::Item::User { .. })
                            })
                        })
                })
            })
            .unwrap_or(false);
        if !has_session {
            // Killed before the session began: nothing to resume.
            continue;
        }
        resumed += 1;
        let mock2 = MockLlm::start(vec![Step::Reply(Reply::text("resumed"))]).await;
        let url2 = mock2.openai_url();
        let out = lathe(
            home.path(),
            ws.path(),
            &[
                "exec",
                "--json",
                "--base-url",
                &url2,
                "--model",
                "m",
                "--approval",
                "full-auto",
                "--sandbox",
                "off",
                "--checkpoints",
                "off",
                "--continue",
                "after",
            ],
        )
        .output()
        .await
        .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "run {run} (killed at {delay} ms): {stderr}"
        );
        let requests = mock2.requests();
        assert_eq!(requests.len(), 1, "run {run}");
        let messages = requests[0].body["messages"].as_array().unwrap().clone();
        assert_eq!(messages[0]["role"], "system");
        assert_valid_history(&messages[1..], run);
        // The conversation is the one its record holds, every recorded
        // output as the model first saw it.
        let sessions = home.path().join("sessions");
        let file = std::fs::read_dir(&sessions)
            .unwrap()
            .filter_map(Result::ok)
            .find(|e| e.file_name().to_string_lossy().ends_with(".history.jsonl"))
            .unwrap()
            .path();
        let records = lathe_core::session::history::read(&file).unwrap();
        let outputs: Vec<(String, String)> = records
            .iter()
            .filter_map(|r| match &r.item {
                lathe_core::session::history::Item::ToolOutput(out) => {
                    Some((out.call_id.clone(), out.content.clone()))
                }
                _ => None,
            })
            .collect();
        let approved: Vec<&str> = records
            .iter()
            .filter_map(|r| match &r.item {
                lathe_core::session::history::Item::Approved { call_id } => Some(call_id.as_str()),
                _ => None,
            })
            .collect();
        match (approved.len(), outputs.len()) {
            (0, 0) => before_calls += 1,
            (a, o) if a > o => mid_call += 1,
            (_, 4) => streaming += 1,
            _ => between += 1,
        }
        for m in messages.iter().filter(|m| m["role"] == "tool") {
            let id = m["tool_call_id"].as_str().unwrap();
            let sent = m["content"].as_str().unwrap();
            match outputs.iter().find(|(c, _)| c == id) {
                Some((_, recorded)) => assert_eq!(sent, recorded, "run {run}: {id}"),
                None => assert!(sent.contains("not run again"), "run {run}: {id}: {sent}"),
            }
        }
        let users: Vec<&str> = messages
            .iter()
            .filter(|m| m["role"] == "user")
            .filter_map(|m| m["content"].as_str())
            .collect();
        assert!(
            users.first().is_some_and(|u| u.ends_with("start")),
            "run {run}: {users:?}"
        );
        assert!(
            users.last().is_some_and(|u| u.ends_with("after")),
            "run {run}: {users:?}"
        );
        // Nothing ran again, and nothing ran twice.
        let log = std::fs::read_to_string(ws.path().join("log.txt")).unwrap_or_default();
        for line in log.lines() {
            let call = line.split('-').next().unwrap_or_default();
            assert!(
                approved_before.contains(call),
                "run {run}: {call} ran, but the killed run never approved it: it ran on resume"
            );
        }
        let lines: Vec<&str> = log.lines().collect();
        let unique: HashSet<&&str> = lines.iter().collect();
        assert_eq!(unique.len(), lines.len(), "run {run}: {lines:?}");
        assert_no_half_written_file(ws.path(), run, true);
    }
    eprintln!(
        "{resumed} of {RUNS} runs resumed: killed before any call {before_calls}, during a call \
         {mid_call}, between calls {between}, while the answer streamed {streaming}"
    );
    assert!(
        resumed >= RUNS / 2,
        "only {resumed} of {RUNS} runs got far enough to have a session"
    );
    // (Between calls is a window of microseconds: counted, not required.)
    for (what, n) in [
        ("before any call", before_calls),
        ("during a call", mid_call),
        ("while streaming", streaming),
    ] {
        assert!(n > 0, "no run was killed {what}: the delays need tuning");
    }
}
