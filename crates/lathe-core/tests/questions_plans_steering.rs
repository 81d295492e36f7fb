//! Working with the person, against the scripted server: the model's
//! questions (`ask_user`) answered, left to the model, or asked of no one
//! (headless); its plan (`update_plan`) as an event and in the record; a
//! message sent mid-turn reaching the next request, or starting the next
//! turn when it came too late.

use std::time::Duration;

use lathe_core::protocol::{AgentEvent, AskedQuestion, ErrorKind, Op, StepStatus, ToolStatus};
use lathe_core::provider::ProviderKind;
use serde_json::{Value, json};

use crate::harness::{Setup, collect_turn, result_of, turn};
use crate::mock_llm::{MockLlm, Reply, Step, tool_results};

/// Sends `prompt`, answering each question with `answer`, and collects
/// the turn's events.
async fn answering(
    handle: &mut lathe_core::agent::AgentHandle,
    prompt: &str,
    mut answer: impl FnMut(&str) -> Option<Op>,
) -> Vec<AgentEvent> {
    handle
        .ops
        .send(Op::UserInput {
            text: prompt.into(),
        })
        .await
        .unwrap();
    let mut events = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), handle.events.recv())
            .await
            .expect("the turn did not end")
            .expect("the agent stopped");
        if let AgentEvent::QuestionAsked { call_id, .. } = &ev
            && let Some(op) = answer(call_id)
        {
            handle.ops.send(op).await.unwrap();
        }
        let end = ev.ends_turn();
        events.push(ev);
        if end {
            return events;
        }
    }
}

fn questions(events: &[AgentEvent]) -> Vec<AskedQuestion> {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::TurnCompleted { questions, .. } => Some(questions.clone()),
            _ => None,
        })
        .expect("the turn completed")
}

fn ask(id: &str) -> Reply {
    Reply::tools().call(
        id,
        "ask_user",
        json!({"question": "Which port should the dev server use?", "choices": ["3000", "8080"]}),
    )
}

#[tokio::test]
async fn the_persons_answer_goes_back_to_the_model() {
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![Step::Reply(ask("q1")), Step::Reply(Reply::text("ok"))]).await;
    let mut setup = Setup::new(ProviderKind::OpenAi).mode(lathe_core::protocol::ApprovalMode::Ask);
    setup.interactive = true;
    let mut handle = setup.spawn(&mock, ws.path());
    let events = answering(&mut handle, "start the server", |id| {
        Some(Op::Answer {
            call_id: id.into(),
            answer: Some(" 8080 ".into()),
        })
    })
    .await;
    let asked = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::QuestionAsked {
                question, choices, ..
            } => Some((question.clone(), choices.clone())),
            _ => None,
        })
        .expect("the question was asked");
    assert_eq!(asked.1, ["3000", "8080"]);
    // Nothing to approve: a question is not an operation.
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ApprovalRequested(_))),
        "{events:#?}"
    );
    let (status, content, _) = result_of(&events, "q1");
    assert_eq!(status, ToolStatus::Ok);
    assert_eq!(content["answer"], "8080");
    let requests = mock.requests();
    let results = tool_results(&requests[1]);
    assert_eq!(results[0].1["answer"], "8080", "{results:?}");
    assert_eq!(
        questions(&events),
        [AskedQuestion {
            call_id: "q1".into(),
            question: asked.0,
            choices: vec!["3000".into(), "8080".into()],
            answer: Some("8080".into()),
        }]
    );
}

#[tokio::test]
async fn esc_leaves_the_choice_to_the_model() {
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![Step::Reply(ask("q1")), Step::Reply(Reply::text("ok"))]).await;
    let mut setup = Setup::new(ProviderKind::Anthropic);
    setup.interactive = true;
    let mut handle = setup.spawn(&mock, ws.path());
    let events = answering(&mut handle, "go", |id| {
        Some(Op::Answer {
            call_id: id.into(),
            answer: None,
        })
    })
    .await;
    let (status, content, _) = result_of(&events, "q1");
    assert_eq!(status, ToolStatus::Ok);
    assert!(content["answer"].is_null());
    assert!(
        content["note"].as_str().unwrap().contains("decide"),
        "{content}"
    );
    assert_eq!(questions(&events)[0].answer, None);
}

/// Headless, no one answers: the model is told to decide and say what it
/// assumed, and `turn_completed` lists what it wanted to ask.
#[tokio::test]
async fn headless_the_model_is_told_no_one_can_answer() {
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![Step::Reply(ask("q1")), Step::Reply(Reply::text("ok"))]).await;
    let mut handle = Setup::new(ProviderKind::OpenAi).spawn(&mock, ws.path());
    let events = turn(&mut handle, "go").await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::QuestionAsked { .. }))
    );
    let (status, content, _) = result_of(&events, "q1");
    assert_eq!(status, ToolStatus::Error);
    let error = content["error"].as_str().unwrap();
    assert!(
        error.contains("no one to ask") && error.contains("what you assumed"),
        "{error}"
    );
    let asked = questions(&events);
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].answer, None);
}

/// A question waits for the person as long as they take (no tool
/// timeout), and an interrupt ends the wait and the turn.
#[tokio::test]
async fn an_interrupt_ends_a_waiting_question() {
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![Step::Reply(ask("q1")), Step::Reply(Reply::text("ok"))]).await;
    let mut setup = Setup::new(ProviderKind::OpenAi);
    setup.interactive = true;
    let mut handle = setup.spawn(&mock, ws.path());
    let events = answering(&mut handle, "go", |_| Some(Op::Interrupt)).await;
    let (status, content, _) = result_of(&events, "q1");
    assert_eq!(status, ToolStatus::Error, "{content}");
    assert!(matches!(
        events.last(),
        Some(AgentEvent::Error {
            kind: ErrorKind::Interrupted,
            ..
        })
    ));
    assert_eq!(
        mock.requests().len(),
        1,
        "nothing was asked of the model after"
    );
}

/// The plan is an event (whole, each time) and the journal keeps it; a
/// plan the model must fix is an error it reads.
#[tokio::test]
async fn the_plan_is_an_event_and_kept() {
    let ws = tempfile::tempdir().unwrap();
    let journal = tempfile::tempdir().unwrap();
    let plan = json!({"steps": [
        {"step": "read the parser", "status": "done"},
        {"step": "fix the lexer", "status": "in_progress"},
        {"step": "run the tests", "status": "pending"},
    ]});
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("p1", "update_plan", plan)),
        Step::Reply(Reply::tools().call(
            "p2",
            "update_plan",
            json!({"steps": [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]}),
        )),
        Step::Reply(Reply::text("ok")),
    ])
    .await;
    let mut setup = Setup::new(ProviderKind::OpenAi);
    setup.journal_dir = Some(journal.path().to_path_buf());
    let mut handle = setup.spawn(&mock, ws.path());
    let events = turn(&mut handle, "fix it").await;
    let plans: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::PlanUpdated { call_id, steps, .. } => {
                Some((call_id.clone(), steps.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(plans.len(), 1, "the bad plan is not shown");
    assert_eq!(plans[0].0, "p1");
    assert_eq!(plans[0].1[1].step, "fix the lexer");
    assert_eq!(plans[0].1[1].status, StepStatus::InProgress);
    let (status, content, _) = result_of(&events, "p1");
    assert_eq!(status, ToolStatus::Ok);
    assert_eq!(content["current"], "fix the lexer");
    let (status, content, _) = result_of(&events, "p2");
    assert_eq!(status, ToolStatus::Error);
    assert!(
        content["error"].as_str().unwrap().contains("at most one"),
        "{content}"
    );
    drop(handle);
    let mut kept = String::new();
    for f in std::fs::read_dir(journal.path()).unwrap() {
        kept.push_str(&std::fs::read_to_string(f.unwrap().path()).unwrap_or_default());
    }
    let line = kept
        .lines()
        .find(|l| l.contains("\"plan_updated\""))
        .expect("the journal keeps the plan");
    let v: Value = serde_json::from_str(line).unwrap();
    assert_eq!(
        v["steps"][2]["step"].as_str(),
        Some("run the tests"),
        "{line}"
    );
}

/// A message sent while a command runs goes to the model with the next
/// request, after the command's result, marked as sent mid-turn.
#[tokio::test]
async fn a_message_mid_turn_reaches_the_next_request() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("c1", "exec_shell", json!({"command": "sleep 1"}))),
        Step::Reply(Reply::text("switched to 8080")),
        Step::Reply(Reply::text("ok")),
    ])
    .await;
    let with_record = || Setup {
        data_dir: Some(data.path().to_path_buf()),
        ..Setup::new(ProviderKind::Anthropic)
    };
    let mut handle = with_record().spawn(&mock, ws.path());
    handle
        .ops
        .send(Op::UserInput {
            text: "start the server".into(),
        })
        .await
        .unwrap();
    let mut events = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), handle.events.recv())
            .await
            .unwrap()
            .unwrap();
        if matches!(ev, AgentEvent::ToolCallStarted { .. }) {
            handle
                .ops
                .send(Op::Steer {
                    text: "use port 8080, not 3000".into(),
                })
                .await
                .unwrap();
        }
        let end = ev.ends_turn();
        events.push(ev);
        if end {
            break;
        }
    }
    let delivered: Vec<&AgentEvent> = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::SteeringDelivered { .. }))
        .collect();
    assert_eq!(delivered.len(), 1, "{events:#?}");
    // One turn: the message joined it.
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, AgentEvent::TurnStarted { .. }))
            .count(),
        1
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let body = requests[1].body.to_string();
    let result_at = body.find("tool_result").expect("the command's result");
    let steer_at = body.find("use port 8080").expect("the message");
    assert!(result_at < steer_at, "{body}");
    assert!(body.contains("while you were working"), "{body}");
    assert!(!requests[0].body.to_string().contains("8080"));

    // Resumed from the record, the conversation is the one the model had.
    let session = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::SessionStarted { session_id, .. } => Some(session_id.clone()),
            _ => None,
        })
        .unwrap();
    handle.ops.send(Op::Shutdown).await.unwrap();
    let _ = handle.task.await;
    let mut handle = Setup {
        resume: Some(session),
        ..with_record()
    }
    .spawn(&mock, ws.path());
    turn(&mut handle, "next").await;
    let without_marks = |v: &Value| {
        let mut v = v.clone();
        strip(&mut v, "cache_control");
        v["messages"].as_array().cloned().unwrap_or_default()
    };
    let live = without_marks(&requests[1].body);
    let resumed = without_marks(&mock.requests()[2].body);
    assert!(resumed.len() > live.len(), "{resumed:#?}");
    assert_eq!(resumed[..live.len()], live[..]);
}

/// `v` without `key` anywhere in it.
fn strip(v: &mut Value, key: &str) {
    match v {
        Value::Object(m) => {
            m.remove(key);
            m.values_mut().for_each(|v| strip(v, key));
        }
        Value::Array(a) => a.iter_mut().for_each(|v| strip(v, key)),
        _ => {}
    }
}

/// A message that comes after the turn's last request starts the next
/// turn as the person's message; one sent with an interrupt does not.
#[tokio::test]
async fn a_message_too_late_for_the_turn_starts_the_next() {
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Slow(Reply::text("first"), Duration::from_millis(800)),
        Step::Reply(Reply::text("second")),
        Step::Slow(Reply::text("never read"), Duration::from_secs(5)),
    ])
    .await;
    let mut handle = Setup::new(ProviderKind::OpenAi).spawn(&mock, ws.path());
    handle
        .ops
        .send(Op::UserInput { text: "hi".into() })
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    handle
        .ops
        .send(Op::Steer {
            text: "and the docs".into(),
        })
        .await
        .unwrap();
    let first = collect_turn(&mut handle).await;
    assert!(matches!(
        first.last(),
        Some(AgentEvent::TurnCompleted { .. })
    ));
    let second = collect_turn(&mut handle).await;
    assert!(
        matches!(&second[0], AgentEvent::TurnStarted { prompt, .. } if prompt == "and the docs"),
        "{second:#?}"
    );
    assert!(
        matches!(second.last(), Some(AgentEvent::TurnCompleted { text, .. }) if text == "second")
    );
    // Sent, then interrupted: the front end has it back; no turn starts.
    handle
        .ops
        .send(Op::UserInput {
            text: "again".into(),
        })
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    handle
        .ops
        .send(Op::Steer {
            text: "never mind".into(),
        })
        .await
        .unwrap();
    handle.ops.send(Op::Interrupt).await.unwrap();
    let third = collect_turn(&mut handle).await;
    assert!(matches!(
        third.last(),
        Some(AgentEvent::Error {
            kind: ErrorKind::Interrupted,
            ..
        })
    ));
    let quiet = tokio::time::timeout(Duration::from_millis(500), handle.events.recv()).await;
    assert!(
        !matches!(quiet, Ok(Some(AgentEvent::TurnStarted { .. }))),
        "{quiet:?}"
    );
    assert_eq!(mock.requests().len(), 3);
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|t| {
            t["function"]["name"]
                .as_str()
                .or(t["name"].as_str())
                .map(str::to_string)
        })
        .collect()
}

/// A turn in plan mode offers the model only what looks, judges every
/// call as read-only whatever the mode (a write it tries anyway is
/// refused, nothing changes), and tells the model to propose a plan; the
/// next turn has every tool and the chosen mode again.
#[tokio::test]
async fn plan_mode_only_looks_and_the_next_turn_acts() {
    let ws = tempfile::tempdir().unwrap();
    let plan = json!({"steps": [{"step": "add the flag", "status": "pending"}]});
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools()
                .call("r1", "list_directory", json!({"path": "."}))
                .call("w1", "write_file", json!({"path": "a.txt", "content": "x"})),
        ),
        Step::Reply(Reply::tools().call("p1", "update_plan", plan)),
        Step::Reply(Reply::text("The plan: add the flag.")),
        Step::Reply(Reply::tools().call(
            "w2",
            "write_file",
            json!({"path": "a.txt", "content": "x"}),
        )),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let mut handle = Setup::new(ProviderKind::OpenAi).spawn(&mock, ws.path());
    handle
        .ops
        .send(Op::Plan {
            text: "add a --verbose flag".into(),
        })
        .await
        .unwrap();
    let events = collect_turn(&mut handle).await;
    assert!(matches!(
        events.last(),
        Some(AgentEvent::TurnCompleted { .. })
    ));
    assert_eq!(result_of(&events, "r1").0, ToolStatus::Ok);
    let (status, content, _) = result_of(&events, "w1");
    assert_eq!(status, ToolStatus::Denied, "{content}");
    assert!(content.to_string().contains("read-only"), "{content}");
    assert!(!ws.path().join("a.txt").exists());
    let requests = mock.requests();
    let names = tool_names(&requests[0].body);
    assert!(names.contains(&"read_file".to_string()), "{names:?}");
    assert!(names.contains(&"update_plan".to_string()), "{names:?}");
    // Commands, in a read-only sandbox.
    assert!(names.contains(&"exec_shell".to_string()), "{names:?}");
    for acting in [
        "write_file",
        "edit_file",
        "delete_file",
        "spawn",
        "shell_kill",
        "message",
    ] {
        assert!(!names.contains(&acting.to_string()), "{names:?}");
    }
    let first = requests[0].body.to_string();
    assert!(first.contains("Plan mode") && first.contains("add a --verbose flag"));
    // Approved: the next turn acts, in the mode chosen (full-auto here).
    let events = turn(&mut handle, "The plan is approved: carry it out.").await;
    assert_eq!(result_of(&events, "w2").0, ToolStatus::Ok);
    assert!(ws.path().join("a.txt").exists());
    let names = tool_names(&mock.requests()[3].body);
    assert!(names.contains(&"write_file".to_string()), "{names:?}");
}
