//! Commands in the background, against the scripted server: a server
//! started with `background: true` returns at once with its handle and
//! first output, its output is read twice (only what is new each time),
//! it is killed, and nothing it started is left once the conversation
//! ends. At most the configured number run at once.

use std::process::Command;
use std::time::{Duration, Instant};

use lathe_core::protocol::{AgentEvent, Op, ToolStatus};
use lathe_core::provider::ProviderKind;
use serde_json::{Value, json};

use crate::harness::{Setup, result_of, turn};
use crate::mock_llm::{MockLlm, Reply, Step};

/// Whether a process runs with `marker` in its command line.
fn running(marker: &str) -> bool {
    Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .is_ok_and(|o| o.status.success())
}

async fn until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn call(id: &str, tool: &str, args: Value) -> Step {
    Step::Reply(Reply::tools().call(id, tool, args))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_runs_in_the_background_is_read_twice_and_killed() {
    let ws = tempfile::tempdir().unwrap();
    let marker = format!("tick{}", std::process::id());
    let server =
        format!("echo started; n=0; while true; do n=$((n+1)); echo {marker} $n; sleep 0.2; done");
    let mock = MockLlm::start(vec![
        call(
            "s1",
            "exec_shell",
            json!({"command": server, "background": true}),
        ),
        call(
            "o1",
            "shell_output",
            json!({"handle": "bg1", "wait_ms": 2000}),
        ),
        call(
            "o2",
            "shell_output",
            json!({"handle": "bg1", "wait_ms": 2000}),
        ),
        call("k1", "shell_kill", json!({"handle": "bg1"})),
        call("o3", "shell_output", json!({"handle": "bg1"})),
        Step::Reply(Reply::text("the server ran and stopped")),
    ])
    .await;
    let mut handle = Setup::new(ProviderKind::OpenAi).spawn(&mock, ws.path());
    let started = Instant::now();
    let events = turn(&mut handle, "start the server").await;
    let (status, first, _) = result_of(&events, "s1");
    assert_eq!(status, ToolStatus::Ok, "{first}");
    assert_eq!(first["handle"], "bg1");
    assert_eq!(first["running"], true);
    assert!(
        first["output"].as_str().unwrap().starts_with("started\n"),
        "{first}"
    );
    assert!(
        first["note"].as_str().unwrap().contains("shell_kill"),
        "{first}"
    );
    // Each read gives what is new since the last.
    let (_, o1, _) = result_of(&events, "o1");
    let (_, o2, _) = result_of(&events, "o2");
    let ticks = |v: &Value| -> Vec<u64> {
        v["output"]
            .as_str()
            .unwrap_or("")
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("{marker} ")))
            .filter_map(|n| n.parse().ok())
            .collect()
    };
    let (t1, t2) = (ticks(&o1), ticks(&o2));
    assert!(!t1.is_empty() && !t2.is_empty(), "{o1} {o2}");
    assert!(t1.iter().max() < t2.iter().min(), "{t1:?} then {t2:?}");
    assert_eq!(o2["running"], true);
    let (status, k1, _) = result_of(&events, "k1");
    assert_eq!(status, ToolStatus::Ok);
    assert_eq!(k1["running"], false, "{k1}");
    let (_, o3, _) = result_of(&events, "o3");
    assert_eq!(o3["running"], false);
    assert!(!running(&marker), "the server outlived its kill");
    // The front end heard it start and end.
    let lists: Vec<&Vec<_>> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Jobs { jobs } => Some(jobs),
            _ => None,
        })
        .collect();
    assert!(lists.iter().any(|l| l.iter().any(|j| j.running)));
    assert!(lists.last().unwrap().iter().all(|j| !j.running));
    assert!(started.elapsed() < Duration::from_secs(15));
}

/// Whatever the conversation left running stops when it is cleared, and
/// when it ends; a fifth command waits for one of four to stop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_started_in_the_background_outlives_the_conversation() {
    let ws = tempfile::tempdir().unwrap();
    let marker = |n: u32| format!("sleep 4{n}{}", std::process::id() % 1000);
    let bg = |n: u32| json!({"command": marker(n), "background": true});
    let mut steps: Vec<Step> = (1..=5)
        .map(|n| call(&format!("b{n}"), "exec_shell", bg(n)))
        .collect();
    steps.push(Step::Reply(Reply::text("five tried")));
    steps.push(call("c1", "exec_shell", bg(6)));
    steps.push(Step::Reply(Reply::text("one more")));
    let mock = MockLlm::start(steps).await;
    let mut handle = Setup::new(ProviderKind::OpenAi).spawn(&mock, ws.path());
    let events = turn(&mut handle, "start them").await;
    for n in 1..=4 {
        assert_eq!(result_of(&events, &format!("b{n}")).0, ToolStatus::Ok);
        until("a command started", || running(&marker(n))).await;
    }
    let (status, fifth, _) = result_of(&events, "b5");
    assert_eq!(status, ToolStatus::Error);
    assert!(
        fifth
            .to_string()
            .contains("4 commands already run in the background"),
        "{fifth}"
    );
    // /clear: a new conversation; the old one's commands stop.
    handle.ops.send(Op::Clear).await.unwrap();
    for n in 1..=4 {
        until("a command stopped at /clear", || !running(&marker(n))).await;
    }
    let events = turn(&mut handle, "one more").await;
    assert_eq!(
        result_of(&events, "c1").1["handle"],
        "bg5",
        "handles go on counting"
    );
    until("it started", || running(&marker(6))).await;
    // The conversation ends: so does what it started.
    handle.ops.send(Op::Shutdown).await.unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(10), handle.task).await;
    assert!(
        !running(&marker(6)),
        "a background command outlived the agent"
    );
}
