//! Runaway control, driven through the binary against the scripted
//! server: a budget cap reached mid-turn stops the turn before its next
//! request (never in a call), with `stop_reason: "budget"` and its own
//! exit code; a subagent is held to its own cap; a model that repeats a
//! call is stopped; an interrupt stops every request, subagent and
//! command at once.

use lathe_test_support::run::{Run, Setup};
use serde_json::json;

use crate::mock_llm::{MockLlm, Reply, Step};

const KEY: &str = "sk-lathe-budget-test-0123456789";
const PRICES: &str = "[models.\"mock-model\"]\nprice = { input = 2.0, cached_input = 0.5, cache_write = 2.0, output = 8.0 }\n";

fn setup() -> Setup {
    let env = Setup::new(env!("CARGO_BIN_EXE_lathe"));
    env.file("notes.txt", "three open tasks\n");
    env
}

async fn exec(env: &Setup, url: &str, extra: &[&str]) -> Run {
    env.exec_json(url, KEY, extra, "read the notes, then go on")
        .await
}

fn read_notes(id: &str) -> Reply {
    Reply::tools().call(id, "read_file", json!({"path": "notes.txt"}))
}

#[tokio::test]
async fn a_session_cap_stops_the_turn_before_its_next_request() {
    let env = setup();
    env.config(PRICES);
    // The first response costs $2 (a million input tokens at $2): past
    // the $1 cap. Its call still runs whole; nothing more is asked.
    let mock = MockLlm::start(vec![
        Step::Reply(Reply {
            input_tokens: 1_000_000,
            ..read_notes("c1")
        }),
        Step::Reply(read_notes("c2")),
        Step::Reply(Reply::text("never sent")),
    ])
    .await;
    let r = exec(&env, &mock.openai_url(), &["--max-budget-usd", "1"]).await;
    assert_eq!(r.code, 3, "the budget's own exit code\n{}", r.stderr);
    assert_eq!(mock.requests().len(), 1, "no request after the stop");
    assert_eq!(r.finished("c1")["status"], "ok", "the call ran whole");
    let reached = r.first("budget_reached");
    assert_eq!(reached["cap"], "session_usd");
    assert_eq!(reached["limit"], 1.0);
    assert!(reached["spent"].as_f64().unwrap() >= 2.0, "{reached}");
    assert!(reached["raise_to"].as_f64().unwrap() > 2.0, "{reached}");
    let done = r.first("turn_completed");
    assert_eq!(done["stop_reason"], "budget");
    // Said to a person too, with what raises it.
    let mock = MockLlm::start(vec![Step::Reply(Reply {
        input_tokens: 1_000_000,
        ..read_notes("c1")
    })])
    .await;
    let args = [
        "exec",
        "-a",
        "full-auto",
        "--base-url",
        &mock.openai_url(),
        "--model",
        "mock-model",
        "--max-budget-usd",
        "1",
        "read the notes",
    ];
    let r = env.run(&args, &[("OPENAI_API_KEY", KEY)], "").await;
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("the session's budget ($1.00) is spent: $2.00"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("--max-budget-usd"), "{}", r.stderr);
    assert!(r.stderr.contains("stop reason: budget"), "{}", r.stderr);
}

/// A request whose input alone would pass the cap is not sent, though
/// the cap is not yet spent: the bill stays under it.
#[tokio::test]
async fn a_request_that_would_pass_the_cap_is_not_sent() {
    let env = setup();
    env.config(PRICES);
    // 450,000 input tokens at $2 a million: $0.90 of $1. The next
    // request sends them again (read from the cache at $0.50 a million,
    // about $0.23): it would pass the cap, so it is not sent.
    let mock = MockLlm::start(vec![
        Step::Reply(Reply {
            input_tokens: 450_000,
            ..read_notes("c1")
        }),
        Step::Reply(Reply::text("never sent")),
    ])
    .await;
    let r = exec(&env, &mock.openai_url(), &["--max-budget-usd", "1"]).await;
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert_eq!(
        mock.requests().len(),
        1,
        "no request that would pass the cap"
    );
    let reached = r.first("budget_reached");
    let (spent, next) = (
        reached["spent"].as_f64().unwrap(),
        reached["next"].as_f64().unwrap(),
    );
    assert!(spent < 1.0 && spent + next > 1.0, "{reached}");
    assert!(
        reached["raise_to"].as_f64().unwrap() > spent + next,
        "{reached}"
    );
    // With room for it, it is sent.
    let mock = MockLlm::start(vec![
        Step::Reply(Reply {
            input_tokens: 300_000,
            ..read_notes("c1")
        }),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let r = exec(&env, &mock.openai_url(), &["--max-budget-usd", "1"]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn a_turn_token_cap_holds_where_prices_are_unknown() {
    let env = setup();
    // No prices: dollars cannot be counted, tokens can (16 a response).
    // 16 of 20 are spent after the first; the second would send those
    // 16 again and the notes: it is not sent.
    let mock = MockLlm::start(vec![
        Step::Reply(read_notes("c1")),
        Step::Reply(read_notes("c2")),
        Step::Reply(Reply::text("never sent")),
    ])
    .await;
    let r = exec(&env, &mock.openai_url(), &["--max-turn-tokens", "20"]).await;
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert_eq!(mock.requests().len(), 1, "stopped before a request past 20");
    let reached = r.first("budget_reached");
    assert_eq!(reached["cap"], "turn_tokens");
    assert_eq!(reached["spent"], 16.0);
    assert!(reached["next"].as_f64().unwrap() > 16.0, "{reached}");
    assert_eq!(r.first("turn_completed")["stop_reason"], "budget");
    // The next turn starts with the turn's count at nothing again; the
    // session goes on where it stopped.
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("done"))]).await;
    let args = [
        "exec",
        "--json",
        "-a",
        "full-auto",
        "--continue",
        "--base-url",
        &mock.openai_url(),
        "--model",
        "mock-model",
        "--max-turn-tokens",
        "200",
        "finish",
    ];
    let r = env.run(&args, &[("OPENAI_API_KEY", KEY)], "").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.first("turn_completed")["text"], "done");
}

#[tokio::test]
async fn a_subagent_is_held_to_its_own_cap() {
    let env = setup();
    env.config("[limits]\ntask_tokens = 100000\n");
    let mock = MockLlm::start(vec![
        // The main agent hands the work to a subagent…
        Step::Reply(Reply::tools().call(
            "t1",
            "task",
            json!({"description": "notes", "prompt": "read notes.txt"}),
        )),
        // …whose first response (1,000,005 tokens) passes its cap.
        Step::Reply(Reply {
            input_tokens: 1_000_000,
            ..read_notes("s1")
        }),
        // The main agent hears why and answers.
        Step::Reply(Reply::text("the subagent ran out of budget")),
    ])
    .await;
    let r = exec(&env, &mock.openai_url(), &[]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(mock.requests().len(), 3, "the subagent asked once");
    let task = r.finished("t1");
    assert_eq!(task["status"], "error", "{task}");
    let said = task["content"].to_string();
    assert!(
        said.contains("the subagent's budget (100,000 tokens) is spent: 1,000,005 tokens"),
        "{said}"
    );
    assert_eq!(r.first("turn_completed")["stop_reason"], "end_turn");
}

/// The same call six times: the fifth is held, the turn stops with
/// `stop_reason: "loop"` and exit status 4, and no request follows.
#[tokio::test]
async fn the_same_call_again_and_again_stops_the_turn_at_the_limit() {
    let env = setup();
    let mut steps: Vec<Step> = (1..=6)
        .map(|i| Step::Reply(read_notes(&format!("c{i}"))))
        .collect();
    steps.push(Step::Reply(Reply::text("never sent")));
    let mock = MockLlm::start(steps).await;
    let r = exec(&env, &mock.openai_url(), &[]).await;
    assert_eq!(r.code, 4, "the loop's own exit code\n{}", r.stderr);
    assert_eq!(mock.requests().len(), 5, "no request after the stop");
    assert_eq!(r.count("tool_call_finished"), 4, "the fifth did not run");
    let held = r.first("loop_detected");
    assert_eq!(held["tool"], "read_file");
    assert_eq!(held["arguments"]["path"], "notes.txt");
    assert_eq!(held["count"], 5);
    assert_eq!(r.first("turn_completed")["stop_reason"], "loop");
}

/// The same failure in a row, whatever the call's arguments: the turn
/// pauses after the third (`[limits] repeat_calls = 3`).
#[tokio::test]
async fn the_same_failure_in_a_row_stops_the_turn() {
    let env = setup();
    env.config("[limits]\nrepeat_calls = 3\n");
    let mut steps: Vec<Step> = (1..=4)
        .map(|i| {
            Step::Reply(Reply::tools().call(&format!("c{i}"), "no_such_tool", json!({"try": i})))
        })
        .collect();
    steps.push(Step::Reply(Reply::text("never sent")));
    let mock = MockLlm::start(steps).await;
    let r = exec(&env, &mock.openai_url(), &[]).await;
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert_eq!(mock.requests().len(), 3);
    let held = r.first("loop_detected");
    assert_eq!(held["failing"], true);
    assert_eq!(held["count"], 3);
}

/// A subagent repeating a call is stopped; its model hears why and the
/// turn goes on.
#[tokio::test]
async fn a_subagent_repeating_a_call_is_stopped() {
    let env = setup();
    let mut steps = vec![Step::Reply(Reply::tools().call(
        "t1",
        "task",
        json!({"description": "notes", "prompt": "read notes.txt"}),
    ))];
    steps.extend((1..=5).map(|i| Step::Reply(read_notes(&format!("s{i}")))));
    steps.push(Step::Reply(Reply::text("the subagent got stuck")));
    let mock = MockLlm::start(steps).await;
    let r = exec(&env, &mock.openai_url(), &[]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(mock.requests().len(), 7);
    let task = r.finished("t1");
    assert_eq!(task["status"], "error", "{task}");
    assert!(
        task["content"]
            .to_string()
            .contains("made the same read_file call 5 times"),
        "{task}"
    );
    assert_eq!(r.first("loop_detected")["task"], "t1");
    assert_eq!(r.first("turn_completed")["text"], "the subagent got stuck");
}

/// The processes still running whose command line holds `marker`.
pub(crate) fn running(marker: &str) -> usize {
    let out = std::process::Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .expect("pgrep");
    String::from_utf8_lossy(&out.stdout).lines().count()
}

/// Waits (polling, 10 s at most) until none runs; how many were left.
pub(crate) async fn none_left(marker: &str) -> usize {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let n = running(marker);
        if n == 0 || std::time::Instant::now() > deadline {
            return n;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Three subagents, each told to start a command in the background and
/// then left waiting on the server: what a stop must end.
pub(crate) fn three_busy_subagents(marker: &str) -> Vec<Step> {
    let tasks = (1..=3).fold(Reply::tools(), |r, i| {
        r.call(
            &format!("t{i}"),
            "task",
            json!({
                "description": format!("job {i}"),
                "prompt": "start the watcher",
                "tools": ["exec_shell"],
            }),
        )
    });
    let mut steps = vec![Step::Reply(tasks)];
    for i in 1..=3 {
        steps.push(Step::Reply(Reply::tools().call(
            &format!("s{i}"),
            "exec_shell",
            json!({"command": format!("{marker} {i}"), "background": true}),
        )));
    }
    steps.extend((0..6).map(|_| Step::Hang(Reply::text("never"))));
    steps
}

/// Ctrl-C while three subagents wait on the server and their commands run
/// in the background: exit 130, no request after the stop, no process
/// left.
#[tokio::test]
async fn an_interrupt_ends_every_subagent_request_and_command() {
    let env = setup();
    let marker = "sleep 313.7";
    let mock = MockLlm::start(three_busy_subagents(marker)).await;
    let url = mock.openai_url();
    let child = env
        .command(
            &[
                "exec",
                "--json",
                "-a",
                "full-auto",
                "--base-url",
                &url,
                "--model",
                "mock-model",
                "start three watchers",
            ],
            &[("OPENAI_API_KEY", KEY)],
        )
        .spawn()
        .unwrap();
    // Every job started, and a subagent waiting on the server.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while (running(marker) < 3 || mock.requests().len() < 5) && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // Each command is a shell and its `sleep` (or more, sandboxed).
    assert!(running(marker) >= 3, "three commands run in the background");
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap());
    let asked = mock.requests().len();
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let out = tokio::time::timeout(std::time::Duration::from_secs(20), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert_eq!(none_left(marker).await, 0, "no command outlives the stop");
    assert_eq!(mock.requests().len(), asked, "no request after the stop");
}

/// What a turn cost is split by agent and model, in `turn_completed` and
/// in the session list; the record keeps the split, so a resumed session
/// counts what its subagents spent against its cap.
#[tokio::test]
async fn cost_is_split_by_agent_and_kept_across_resume() {
    let env = setup();
    env.config(PRICES);
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "t1",
            "task",
            json!({"description": "find the notes", "prompt": "what do the notes say?"}),
        )),
        // The subagent: half a million tokens ($1 at $2 a million).
        Step::Reply(Reply {
            input_tokens: 500_000,
            ..Reply::text("three open tasks")
        }),
        Step::Reply(Reply::text("the notes list three open tasks")),
    ])
    .await;
    let r = exec(&env, &mock.openai_url(), &[]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let done = r.first("turn_completed");
    let split = done["by_agent"].as_array().expect("by agent").clone();
    let of = |agent: &str| {
        split
            .iter()
            .find(|s| s["agent"] == agent)
            .unwrap_or_else(|| panic!("no {agent} in {split:?}"))
            .clone()
    };
    let task = of("task");
    assert_eq!(task["task"], "t1");
    assert_eq!(task["description"], "find the notes");
    assert_eq!(task["model"], "mock-model");
    assert!(task["usage"]["cost_usd"].as_f64().unwrap() >= 1.0, "{task}");
    assert!(of("main")["usage"]["cost_usd"].as_f64().is_some());
    // The list says what the subagents cost.
    let s = env.run(&["sessions", "--json"], &[], "").await;
    let line: serde_json::Value = serde_json::from_str(s.stdout.lines().next().unwrap()).unwrap();
    assert!(
        line["by_agent"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["agent"] == "task"),
        "{line}"
    );
    assert!(line["usage"]["cost_usd"].as_f64().unwrap() >= 1.0, "{line}");
    let s = env.run(&["sessions"], &[], "").await;
    assert!(
        s.stdout.contains("(of which subagents $1.00"),
        "{}",
        s.stdout
    );
    // Resumed under a $1 cap: what the subagent spent counts; nothing is
    // asked of the server.
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("never sent"))]).await;
    let url = mock.openai_url();
    let args = [
        "exec",
        "--json",
        "--continue",
        "--base-url",
        &url,
        "--model",
        "mock-model",
        "--max-budget-usd",
        "1",
        "go on",
    ];
    let r = env.run(&args, &[("OPENAI_API_KEY", KEY)], "").await;
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        mock.requests().is_empty(),
        "the cap held before any request"
    );
}
