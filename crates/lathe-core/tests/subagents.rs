//! Subagents (`task`), against the scripted server: a subagent's calls go
//! through the pipeline (approved by the person, sandboxed) as events
//! that name their task; it has its own context and only the tools it
//! was given (read-only by default, never `task`); two run side by side;
//! an interrupt stops it; its answer is the task's result.

use std::time::Duration;

use lathe_core::protocol::{AgentEvent, ApprovalDecision, ApprovalMode, ErrorKind, Op, ToolStatus};
use lathe_core::provider::ProviderKind;
use serde_json::{Value, json};

use crate::harness::{Setup, drive, result_of, turn};
use crate::mock_llm::{MockLlm, Reply, Step};

fn task(id: &str, prompt: &str, tools: Option<&[&str]>) -> Reply {
    let mut args = json!({"description": "look into it", "prompt": prompt});
    if let Some(t) = tools {
        args["tools"] = json!(t);
    }
    Reply::tools().call(id, "task", args)
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

fn parents(events: &[AgentEvent]) -> Vec<(String, String, Option<String>)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallStarted {
                call_id,
                tool,
                parent,
                ..
            } => Some((call_id.clone(), tool.clone(), parent.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_subagents_calls_are_nested_approved_and_sandboxed() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "hello from a\n").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(task(
            "t1",
            "Read a.txt and make a file named seen.",
            Some(&["read_file", "exec_shell"]),
        )),
        Step::Reply(
            Reply::tools()
                .call("r1", "read_file", json!({"path": "a.txt"}))
                .call("e1", "exec_shell", json!({"command": "touch seen"})),
        ),
        Step::Reply(Reply::text("a.txt says hello; seen is made")),
        Step::Reply(Reply::text("The subagent read it.")),
    ])
    .await;
    let mut setup = Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::Ask);
    setup.interactive = true;
    let mut handle = setup.spawn(&mock, ws.path());
    let events = drive(&mut handle, "what does a.txt say?", |_| {
        ApprovalDecision::ApproveOnce
    })
    .await;
    let calls = parents(&events);
    assert_eq!(calls[0], ("t1".into(), "task".into(), None));
    assert!(calls.contains(&("t1-r1".into(), "read_file".into(), Some("t1".into()))));
    assert!(calls.contains(&("t1-e1".into(), "exec_shell".into(), Some("t1".into()))));
    // The command asked the person, as any command does in ask mode.
    let asked: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ApprovalRequested(r) => Some(r.call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(asked, ["t1-e1"]);
    assert!(ws.path().join("seen").exists());
    let (status, content, _) = result_of(&events, "t1");
    assert_eq!(status, ToolStatus::Ok, "{content}");
    assert_eq!(content["answer"], "a.txt says hello; seen is made");
    assert_eq!(content["rounds"], 1);
    let requests = mock.requests();
    // Its own context: the job, not the conversation; its own tools.
    let sub = requests[1].body.to_string();
    assert!(sub.contains("You are a subagent"), "{sub}");
    assert!(sub.contains("Read a.txt and make a file named seen."));
    assert!(!sub.contains("what does a.txt say?"), "{sub}");
    assert_eq!(tool_names(&requests[1].body), ["exec_shell", "read_file"]);
    // Its answer is the task's result, for the model that sent it.
    assert!(
        requests[3]
            .body
            .to_string()
            .contains("a.txt says hello; seen is made")
    );
}

/// By default a subagent only looks; what it was not given, and `task`
/// itself (one level), is refused and it is told so.
#[tokio::test]
async fn a_subagent_has_only_what_it_was_given() {
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(task("t1", "Find the main function.", None)),
        Step::Reply(
            Reply::tools()
                .call("w1", "write_file", json!({"path": "x.txt", "content": "x"}))
                .call("n1", "task", json!({"description": "d", "prompt": "p"})),
        ),
        Step::Reply(Reply::text("could not write; found nothing")),
        Step::Reply(Reply::text("ok")),
    ])
    .await;
    let mut handle = Setup::new(ProviderKind::OpenAi).spawn(&mock, ws.path());
    let events = turn(&mut handle, "go").await;
    assert!(!ws.path().join("x.txt").exists());
    let requests = mock.requests();
    let names = tool_names(&requests[1].body);
    assert!(names.contains(&"read_file".to_string()), "{names:?}");
    for never in [
        "write_file",
        "exec_shell",
        "task",
        "ask_user",
        "update_plan",
        "shell_kill",
        "message",
    ] {
        assert!(!names.contains(&never.to_string()), "{names:?}");
    }
    let back = requests[2].body.to_string();
    assert!(
        back.contains("write_file is not among your tools"),
        "{back}"
    );
    assert!(back.contains("task is not among your tools"), "{back}");
    assert_eq!(result_of(&events, "t1").0, ToolStatus::Ok);
    // Asking for a tool it may not have is the model's to fix.
    let mock = MockLlm::start(vec![
        Step::Reply(task("t2", "p", Some(&["task"]))),
        Step::Reply(Reply::text("ok")),
    ])
    .await;
    let mut handle = Setup::new(ProviderKind::OpenAi).spawn(&mock, ws.path());
    let events = turn(&mut handle, "go").await;
    let (status, content, _) = result_of(&events, "t2");
    assert_eq!(status, ToolStatus::Error);
    assert!(
        content.to_string().contains("cannot have task"),
        "{content}"
    );
}

/// Two tasks of one response run side by side; each answer comes back
/// as its own result.
#[tokio::test]
async fn two_subagents_run_side_by_side() {
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools()
                .call(
                    "a",
                    "task",
                    json!({"description": "one", "prompt": "first job"}),
                )
                .call(
                    "b",
                    "task",
                    json!({"description": "two", "prompt": "second job"}),
                ),
        ),
        Step::Slow(Reply::text("answer one"), Duration::from_millis(600)),
        Step::Slow(Reply::text("answer two"), Duration::from_millis(600)),
        Step::Reply(Reply::text("both done")),
    ])
    .await;
    let mut handle = Setup::new(ProviderKind::OpenAi).spawn(&mock, ws.path());
    let started = std::time::Instant::now();
    let events = turn(&mut handle, "go").await;
    let took = started.elapsed();
    let mut answers: Vec<String> = ["a", "b"]
        .iter()
        .map(|id| {
            result_of(&events, id).1["answer"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    answers.sort();
    assert_eq!(answers, ["answer one", "answer two"]);
    assert!(
        took < Duration::from_millis(1150),
        "one after the other: {took:?}"
    );
}

/// Ctrl-C stops a subagent with the turn.
#[tokio::test]
async fn an_interrupt_stops_a_subagent() {
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(task("t1", "p", None)),
        Step::Hang(Reply::text("never")),
    ])
    .await;
    let events = stop_once_started(&mock, ws.path(), "t1", Op::Interrupt).await;
    assert!(matches!(
        events.last(),
        Some(AgentEvent::Error {
            kind: ErrorKind::Interrupted,
            ..
        })
    ));
    assert_ne!(result_of(&events, "t1").0, ToolStatus::Ok);
}

/// A subagent's calls go back to the server under the ids it issued:
/// OpenAI Chat and Azure refuse an id over 40 characters, and the
/// task-qualified id (`call_…-call_…`) is Lathe's own, for events and
/// the log only. Two calls with one id (or none) get ids of their own.
#[tokio::test]
async fn a_subagents_calls_keep_the_servers_ids_on_the_wire() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "hello\n").unwrap();
    let task_id = "call_Qm9vTXlUYXNrSWQxMjM0NTY3";
    let read_id = "call_UmVhZE15RmlsZU5vdzEyMzQ1";
    let mock = MockLlm::start(vec![
        Step::Reply(task(task_id, "Read a.txt.", None)),
        Step::Reply(
            Reply::tools()
                .call(read_id, "read_file", json!({"path": "a.txt"}))
                .call("", "list_directory", json!({"path": "."}))
                .call("dup", "read_file", json!({"path": "a.txt"}))
                .call("dup", "read_file", json!({"path": "a.txt"})),
        ),
        Step::Reply(Reply::text("it says hello")),
        Step::Reply(Reply::text("Done.")),
    ])
    .await;
    let mut handle = Setup::new(ProviderKind::OpenAi).spawn(&mock, ws.path());
    let events = turn(&mut handle, "read it").await;
    // Lathe's own ids name the task, for the transcript and the log.
    let calls = parents(&events);
    let own: Vec<&str> = calls.iter().map(|(id, _, _)| id.as_str()).collect();
    assert!(
        own.contains(&format!("{task_id}-{read_id}").as_str()),
        "{own:?}"
    );
    // On the wire: the server's ids, each answered once.
    let sub = &mock.requests()[2].body;
    let messages = sub["messages"].as_array().unwrap();
    let asked: Vec<&str> = messages
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let answered: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    // One without an id gets one; one id twice is two.
    assert_eq!(asked.len(), 4, "{sub}");
    assert_eq!(
        (asked[0], asked[2], asked[3]),
        (read_id, "dup", "dup_2"),
        "{sub}"
    );
    assert!(!asked[1].is_empty() && !["dup", "dup_2", read_id].contains(&asked[1]));
    assert_eq!(answered, asked, "{sub}");
    for id in asked {
        assert!(id.len() <= 40 && !id.contains(task_id), "{id}");
    }
}

/// `k` on one subagent stops it and nothing else: its model-facing result
/// says the person stopped it, no request of it follows, and the turn
/// goes on to its answer.
#[tokio::test]
async fn a_person_stops_one_subagent_and_the_turn_goes_on() {
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(task("t1", "p", None)),
        Step::Hang(Reply::text("never")),
        Step::Reply(Reply::text("went on without it")),
    ])
    .await;
    let events =
        stop_once_started(&mock, ws.path(), "t1", Op::StopAgent { task: "t1".into() }).await;
    let (status, content, _) = result_of(&events, "t1");
    assert_eq!(status, ToolStatus::Error);
    assert!(
        content
            .to_string()
            .contains("the person stopped this subagent"),
        "{content}"
    );
    assert!(matches!(
        events.last(),
        Some(AgentEvent::TurnCompleted { text, .. }) if text == "went on without it"
    ));
    assert_eq!(mock.requests().len(), 3, "the main agent asked once more");
}

/// A turn of "go" whose `task` call `task` is sent `op` once its subagent
/// waits on the server: every event of it, to its end.
async fn stop_once_started(
    mock: &MockLlm,
    ws: &std::path::Path,
    task: &str,
    op: Op,
) -> Vec<AgentEvent> {
    let mut handle = Setup::new(ProviderKind::OpenAi).spawn(mock, ws);
    handle
        .ops
        .send(Op::UserInput { text: "go".into() })
        .await
        .unwrap();
    let mut op = Some(op);
    let mut events = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(10), handle.events.recv())
            .await
            .expect("the turn did not end")
            .unwrap();
        if matches!(&ev, AgentEvent::ToolCallStarted { call_id, .. } if call_id == task) {
            // The subagent's request hangs on the server.
            while mock.requests().len() < 2 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            if let Some(op) = op.take() {
                handle.ops.send(op).await.unwrap();
            }
        }
        let end = ev.ends_turn();
        events.push(ev);
        if end {
            return events;
        }
    }
}
