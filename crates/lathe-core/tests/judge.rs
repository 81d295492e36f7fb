//! The judge, against the scripted server: a risky call that full-auto
//! would run unasked goes to the judge first; its `escalate` (or anything
//! but a plain `allow`) makes it a question for the person, with the
//! judge's reason, and headless a denial the model reads; it is never
//! asked about what the rules or the mode ask or refuse, nor about calls
//! Lathe does not count risky.

use lathe_core::policy::{RuleOrigin, Rules};
use lathe_core::protocol::{AgentEvent, ApprovalDecision, ApprovalMode, ToolStatus};
use lathe_core::provider::ProviderKind;
use serde_json::json;

use crate::harness::{Setup, drive, result_of, turn};
use crate::mock_llm::{MockLlm, Reply, Step};

fn judged(setup: Setup) -> Setup {
    Setup {
        judge: Some("judge-model".into()),
        ..setup
    }
}

fn rm() -> Step {
    Step::Reply(Reply::tools().call("c1", "exec_shell", json!({"command": "rm -f notes.txt"})))
}

fn verdict(v: &str) -> Step {
    Step::Reply(Reply::text(v))
}

fn judge_events(events: &[AgentEvent]) -> Vec<(bool, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Judged {
                allowed, reason, ..
            } => Some((*allowed, reason.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_escalated_call_in_full_auto_asks_the_person_with_the_judges_reason() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "keep me\n").unwrap();
    let mock = MockLlm::start(vec![
        rm(),
        verdict(r#"{"verdict": "escalate", "reason": "deleting the notes was not asked for"}"#),
        Step::Reply(Reply::text("left them")),
    ])
    .await;
    let mut setup = judged(Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::FullAuto));
    setup.interactive = true;
    let mut handle = setup.spawn(&mock, ws.path());
    let mut asked = None;
    let events = drive(&mut handle, "tidy up the build", |e| {
        if let AgentEvent::ApprovalRequested(r) = e {
            asked = Some(r.reason.clone());
        }
        ApprovalDecision::Deny { message: None }
    })
    .await;
    let reason = asked.expect("the person was asked");
    assert!(reason.contains("the judge"), "{reason}");
    assert!(
        reason.contains("deleting the notes was not asked for"),
        "{reason}"
    );
    assert!(ws.path().join("notes.txt").exists());
    assert_eq!(result_of(&events, "c1").0, ToolStatus::Denied);
    assert_eq!(
        judge_events(&events),
        [(false, "deleting the notes was not asked for".into())]
    );
    // The judge was asked on its own model, with the request and the call.
    let requests = mock.requests();
    assert_eq!(requests[1].body["model"], "judge-model");
    let asked_judge = requests[1].body.to_string();
    assert!(asked_judge.contains("tidy up the build"), "{asked_judge}");
    assert!(asked_judge.contains("rm -f notes.txt"), "{asked_judge}");
    assert!(asked_judge.contains("it deletes files"), "{asked_judge}");
}

/// Headless, an escalated call is denied and the model told the judge's
/// reason; a plain `allow` lets it run; a reply that is not a verdict
/// escalates.
#[tokio::test]
async fn headless_the_judges_escalation_denies_and_its_allow_runs() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "keep me\n").unwrap();
    let mock = MockLlm::start(vec![
        rm(),
        verdict(r#"{"verdict": "escalate", "reason": "not asked for"}"#),
        Step::Reply(Reply::text("left them")),
        rm(),
        verdict("Looks fine to me!"),
        Step::Reply(Reply::text("left them")),
        rm(),
        verdict(r#"{"verdict": "allow", "reason": "the person asked to delete the notes"}"#),
        Step::Reply(Reply::text("deleted")),
    ])
    .await;
    let setup = judged(Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::FullAuto));
    let mut handle = setup.spawn(&mock, ws.path());
    let events = turn(&mut handle, "tidy up").await;
    let (status, content, _) = result_of(&events, "c1");
    assert_eq!(status, ToolStatus::Denied);
    let said = content.to_string();
    assert!(
        said.contains("stopped by the reviewing model (the judge): not asked for"),
        "{said}"
    );
    assert!(!said.contains("--approval"), "{said}");
    let denied = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::TurnCompleted { denied, .. } => Some(denied.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(denied.len(), 1);
    assert!(ws.path().join("notes.txt").exists());
    let events = turn(&mut handle, "tidy up").await;
    assert_eq!(
        result_of(&events, "c1").0,
        ToolStatus::Denied,
        "no verdict: asked, so denied"
    );
    assert!(ws.path().join("notes.txt").exists());
    let events = turn(&mut handle, "delete the notes").await;
    assert_eq!(result_of(&events, "c1").0, ToolStatus::Ok);
    assert!(!ws.path().join("notes.txt").exists());
}

/// The judge never sees (so never approves) what a rule refuses or what
/// the mode asks, nor a call Lathe does not count risky.
#[tokio::test]
async fn the_judge_only_tightens() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "keep me\n").unwrap();
    let mock = MockLlm::start(vec![
        rm(),
        Step::Reply(Reply::text("refused")),
        Step::Reply(Reply::tools().call(
            "w1",
            "write_file",
            json!({"path": "src/lib.rs", "content": "pub fn a() {}\n"}),
        )),
        Step::Reply(Reply::text("wrote")),
    ])
    .await;
    let setup = judged(Setup {
        rules: Rules::parse(&[], &[], &["exec_shell(rm *)".into()], RuleOrigin::User).unwrap(),
        ..Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::FullAuto)
    });
    let mut handle = setup.spawn(&mock, ws.path());
    let events = turn(&mut handle, "tidy up").await;
    assert_eq!(result_of(&events, "c1").0, ToolStatus::Denied);
    assert!(judge_events(&events).is_empty());
    // A write to a source file in full-auto is not risky: no judge.
    let events = turn(&mut handle, "add a function").await;
    assert_eq!(result_of(&events, "w1").0, ToolStatus::Ok);
    assert!(judge_events(&events).is_empty());
    assert!(
        mock.requests()
            .iter()
            .all(|r| r.body["model"] != "judge-model")
    );
    // In ask mode the person is asked anyway: the judge is not.
    let mock = MockLlm::start(vec![rm(), Step::Reply(Reply::text("ok"))]).await;
    let mut setup = judged(Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::Ask));
    setup.interactive = true;
    let mut handle = setup.spawn(&mock, ws.path());
    let events = drive(&mut handle, "tidy", |_| ApprovalDecision::Deny {
        message: None,
    })
    .await;
    assert!(judge_events(&events).is_empty());
    assert!(
        mock.requests()
            .iter()
            .all(|r| r.body["model"] != "judge-model")
    );
}
