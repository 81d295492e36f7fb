//! Undo and rewind through the library: real turns against the scripted
//! mock LLM change a real workspace with file tools and shell commands;
//! `Op::Rewind` puts files and the conversation back, refuses what
//! changed outside Lathe, tells the model, and survives a resume.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;
use crate::mock_llm;

use std::path::Path;
use std::time::Duration;

use harness::*;
use lathe_core::agent::AgentHandle;
use lathe_core::protocol::{AgentEvent, Op, TurnInfo};
use lathe_core::provider::ProviderKind;
use mock_llm::{MockLlm, Reply, Step};
use serde_json::{Value, json};

fn setup(data: &Path) -> Setup {
    Setup {
        data_dir: Some(data.to_path_buf()),
        ..Setup::new(ProviderKind::OpenAi)
    }
}

fn call(id: &str, tool: &str, args: Value) -> Step {
    Step::Reply(Reply::tools().call(id, tool, args))
}

fn text(t: &str) -> Step {
    Step::Reply(Reply::text(t))
}

/// Sends `op` and waits for its answer (`rewound` or `turns`).
async fn ask(handle: &mut AgentHandle, op: Op) -> AgentEvent {
    handle.ops.send(op).await.unwrap();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(30), handle.events.recv())
            .await
            .expect("no answer in time")
            .expect("agent stopped");
        if matches!(
            ev,
            AgentEvent::Rewound { .. } | AgentEvent::Turns { .. } | AgentEvent::SessionDiff { .. }
        ) {
            return ev;
        }
    }
}

async fn undo(handle: &mut AgentHandle) -> AgentEvent {
    ask(
        handle,
        Op::Rewind {
            turn: None,
            files: true,
            conversation: false,
            preview: false,
        },
    )
    .await
}

fn read(ws: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(ws.join(name)).ok()
}

/// The text of the person's messages in a request.
fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Each `/undo` puts back the files of the last turn that changed any:
/// writes, edits, and what a command created and deleted.
#[tokio::test]
async fn undo_puts_back_writes_edits_and_what_commands_did_turn_by_turn() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    std::fs::write(ws.path().join("b.txt"), "keep me\n").unwrap();
    std::fs::create_dir(ws.path().join("src")).unwrap();
    std::fs::write(ws.path().join("src/lib.rs"), "// lib\n").unwrap();
    let mock = MockLlm::start(vec![
        call(
            "w",
            "write_file",
            json!({"path": "src/new.rs", "content": "fn main() {}\n"}),
        ),
        call(
            "e",
            "edit_file",
            json!({"path": "a.txt", "old_text": "one", "new_text": "two"}),
        ),
        text("turn 1 done"),
        call(
            "s",
            "exec_shell",
            json!({"command": "rm b.txt && mkdir -p out && echo made > out/made.txt && echo three > a.txt"}),
        ),
        text("turn 2 done"),
        text("turn 3: nothing changed"),
        text("turn 4 answer"),
    ])
    .await;
    let mut h = setup(data.path()).spawn(&mock, ws.path());
    turn(&mut h, "change things").await;
    assert_eq!(read(ws.path(), "a.txt").as_deref(), Some("two\n"));
    turn(&mut h, "run a command").await;
    assert!(read(ws.path(), "b.txt").is_none());
    turn(&mut h, "just talk").await;

    // Turn 3 changed nothing: the last turn that did is turn 2.
    let AgentEvent::Rewound {
        turn_id,
        restored,
        removed,
        error,
        ..
    } = undo(&mut h).await
    else {
        unreachable!()
    };
    assert_eq!(error, None);
    assert_eq!(turn_id, 2);
    assert_eq!(read(ws.path(), "b.txt").as_deref(), Some("keep me\n"));
    assert_eq!(read(ws.path(), "a.txt").as_deref(), Some("two\n"));
    assert!(read(ws.path(), "out/made.txt").is_none());
    assert!(
        !ws.path().join("out").exists(),
        "a directory it made goes too"
    );
    assert!(restored.contains(&"a.txt".to_string()), "{restored:?}");
    assert!(restored.contains(&"b.txt".to_string()), "{restored:?}");
    assert_eq!(removed, vec!["out/made.txt".to_string()]);

    let AgentEvent::Rewound { turn_id, error, .. } = undo(&mut h).await else {
        unreachable!()
    };
    assert_eq!((turn_id, error), (1, None));
    assert_eq!(read(ws.path(), "a.txt").as_deref(), Some("one\n"));
    assert!(read(ws.path(), "src/new.rs").is_none());
    assert_eq!(
        read(ws.path(), "src/lib.rs").as_deref(),
        Some("// lib\n"),
        "a directory that was there stays"
    );

    let AgentEvent::Rewound { error, .. } = undo(&mut h).await else {
        unreachable!()
    };
    assert!(error.unwrap().contains("no turn's file changes are left"));

    // The model hears what was undone before the next message.
    turn(&mut h, "what now?").await;
    let last = mock.requests().pop().unwrap();
    let said = user_texts(&last.body).pop().unwrap();
    assert!(said.contains("undid the file changes"), "{said}");
    assert!(said.ends_with("what now?"), "{said}");
}

/// A file changed outside Lathe since the turn is never overwritten:
/// nothing is restored, and the error names it.
#[tokio::test]
async fn undo_refuses_files_changed_since_and_restores_nothing() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    let mock = MockLlm::start(vec![
        call(
            "w",
            "write_file",
            json!({"path": "a.txt", "content": "two\n"}),
        ),
        call(
            "n",
            "write_file",
            json!({"path": "n.txt", "content": "new\n"}),
        ),
        text("done"),
    ])
    .await;
    let mut h = setup(data.path()).spawn(&mock, ws.path());
    turn(&mut h, "go").await;
    std::fs::write(ws.path().join("a.txt"), "edited by hand\n").unwrap();
    let AgentEvent::Rewound { error, .. } = undo(&mut h).await else {
        unreachable!()
    };
    let error = error.unwrap();
    assert!(
        error.contains("a.txt") && error.contains("changed"),
        "{error}"
    );
    assert_eq!(
        read(ws.path(), "a.txt").as_deref(),
        Some("edited by hand\n")
    );
    assert_eq!(
        read(ws.path(), "n.txt").as_deref(),
        Some("new\n"),
        "all or nothing"
    );
}

/// `/rewind` to before a turn: files and conversation both; the model
/// no longer sees that turn; a resume keeps it so.
#[tokio::test]
async fn rewind_forgets_the_turns_since_and_a_resume_remembers_it() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        text("hello"),
        call(
            "w",
            "write_file",
            json!({"path": "x.txt", "content": "x\n"}),
        ),
        text("wrote x"),
        text("third answer"),
        text("after resume"),
    ])
    .await;
    let mut h = setup(data.path()).spawn(&mock, ws.path());
    let first = turn(&mut h, "first message").await;
    let session = first
        .iter()
        .find_map(|e| match e {
            AgentEvent::SessionStarted { session_id, .. } => Some(session_id.clone()),
            _ => None,
        })
        .unwrap();
    turn(&mut h, "second message").await;
    let AgentEvent::Turns { turns } = ask(&mut h, Op::ListTurns).await else {
        unreachable!()
    };
    assert_eq!(
        turns,
        vec![
            TurnInfo {
                turn_id: 1,
                prompt: "first message".into(),
                files: false,
                conversation: true
            },
            TurnInfo {
                turn_id: 2,
                prompt: "second message".into(),
                files: true,
                conversation: true
            },
        ]
    );
    let AgentEvent::Rewound {
        turn_id,
        prompt,
        error,
        ..
    } = ask(
        &mut h,
        Op::Rewind {
            turn: Some(2),
            files: true,
            conversation: true,
            preview: false,
        },
    )
    .await
    else {
        unreachable!()
    };
    assert_eq!((turn_id, error), (2, None));
    assert_eq!(prompt.as_deref(), Some("second message"));
    assert!(read(ws.path(), "x.txt").is_none());
    turn(&mut h, "third message").await;
    let sent = user_texts(&mock.requests().pop().unwrap().body);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0], "first message");
    assert!(sent[1].ends_with("third message"), "{sent:?}");
    assert!(
        !sent.iter().any(|s| s.contains("second message")),
        "{sent:?}"
    );
    h.ops.send(Op::Shutdown).await.unwrap();
    let _ = h.task.await;

    // Resumed: the conversation is the rewound one, turn ids go on.
    let mut h = Setup {
        resume: Some(session.clone()),
        ..setup(data.path())
    }
    .spawn(&mock, ws.path());
    let AgentEvent::Turns { turns } = ask(&mut h, Op::ListTurns).await else {
        unreachable!()
    };
    let ids: Vec<u64> = turns.iter().map(|t| t.turn_id).collect();
    assert_eq!(ids, vec![1, 3]);
    let events = turn(&mut h, "fourth").await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::TurnStarted { turn_id, .. } if *turn_id == 4))
    );
    let sent = user_texts(&mock.requests().pop().unwrap().body);
    assert!(
        !sent.iter().any(|s| s.contains("second message")),
        "{sent:?}"
    );
    assert_eq!(sent.len(), 3, "{sent:?}");
}

/// With checkpoints off there is nothing to restore from, and undo says
/// so.
#[tokio::test]
async fn without_checkpoints_undo_says_why() {
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        call(
            "w",
            "write_file",
            json!({"path": "x.txt", "content": "x\n"}),
        ),
        text("done"),
    ])
    .await;
    let mut h = Setup::new(ProviderKind::OpenAi).spawn(&mock, ws.path());
    turn(&mut h, "go").await;
    let AgentEvent::Rewound { error, .. } = undo(&mut h).await else {
        unreachable!()
    };
    assert!(error.unwrap().contains("checkpoints are off"));
    assert!(ws.path().join("x.txt").exists());
}

/// The next day: a resumed session still undoes the last run's turn.
#[tokio::test]
async fn a_resumed_session_undoes_the_turns_of_the_last_run() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("main.rs"), "fn main() {}\n").unwrap();
    let mock = MockLlm::start(vec![
        call(
            "e",
            "edit_file",
            json!({"path": "main.rs", "old_text": "{}", "new_text": "{ run(); }"}),
        ),
        text("edited"),
    ])
    .await;
    let mut h = setup(data.path()).spawn(&mock, ws.path());
    let events = turn(&mut h, "call run").await;
    let session = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::SessionStarted { session_id, .. } => Some(session_id.clone()),
            _ => None,
        })
        .unwrap();
    h.ops.send(Op::Shutdown).await.unwrap();
    let _ = h.task.await;
    assert_eq!(
        read(ws.path(), "main.rs").as_deref(),
        Some("fn main() { run(); }\n")
    );
    let mut h = Setup {
        resume: Some(session),
        ..setup(data.path())
    }
    .spawn(&mock, ws.path());
    let AgentEvent::Rewound { turn_id, error, .. } = undo(&mut h).await else {
        unreachable!()
    };
    assert_eq!((turn_id, error), (1, None));
    assert_eq!(
        read(ws.path(), "main.rs").as_deref(),
        Some("fn main() {}\n")
    );
}

/// `/diff`: every change of the session, by tools and commands, against
/// the files before it, in one diff.
#[tokio::test]
async fn the_session_diff_shows_every_change_against_the_start() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    std::fs::write(ws.path().join("gone.txt"), "bye\n").unwrap();
    let mock = MockLlm::start(vec![
        call(
            "w",
            "write_file",
            json!({"path": "a.txt", "content": "two\n"}),
        ),
        text("wrote"),
        call(
            "s",
            "exec_shell",
            json!({"command": "rm gone.txt && echo made > new.txt"}),
        ),
        text("ran"),
    ])
    .await;
    let mut h = setup(data.path()).spawn(&mock, ws.path());
    let AgentEvent::SessionDiff { diff, error, .. } = ask(&mut h, Op::SessionDiff).await else {
        unreachable!()
    };
    assert_eq!((diff.as_str(), error), ("", None), "nothing changed yet");
    turn(&mut h, "write").await;
    turn(&mut h, "run").await;
    let AgentEvent::SessionDiff { diff, error, .. } = ask(&mut h, Op::SessionDiff).await else {
        unreachable!()
    };
    assert_eq!(error, None);
    assert!(diff.contains("-one") && diff.contains("+two"), "{diff}");
    assert!(diff.contains("-bye") && diff.contains("+made"), "{diff}");
    assert!(
        diff.contains("b/new.txt") && diff.contains("a/gone.txt"),
        "{diff}"
    );
}

/// What no checkpoint holds is said, never lost silently: a command that
/// deletes an ignored directory and a file over the size limit names
/// them on its output; `/undo`'s preview lists what it will put back and
/// what it cannot, and writes nothing; the undo then puts back the rest.
#[tokio::test]
async fn what_cannot_be_undone_is_named_before_and_after() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join(".gitignore"), "cache/\n").unwrap();
    std::fs::create_dir_all(ws.path().join("cache/deep")).unwrap();
    std::fs::write(ws.path().join("cache/deep/blob"), "cached").unwrap();
    std::fs::write(ws.path().join("notes.txt"), "keep me\n").unwrap();
    std::fs::File::create(ws.path().join("big.bin"))
        .unwrap()
        .set_len(lathe_core::session::checkpoints::LARGE_FILE + 1)
        .unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools()
                .call(
                    "s",
                    "exec_shell",
                    json!({"command": "rm -rf cache big.bin notes.txt"}),
                )
                // The next call of the round starts from what the first
                // left: it is not blamed for the first one's deletion.
                .call("t", "exec_shell", json!({"command": "true"})),
        ),
        text("cleaned"),
    ])
    .await;
    let mut h = setup(data.path()).spawn(&mock, ws.path());
    let events = turn(&mut h, "clean up").await;
    let said: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolProgress { call_id, text, .. } if call_id == "s" => Some(text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(said.contains("not checkpointed (over 16 MiB"), "{said}");
    assert!(said.contains("big.bin"), "{said}");
    assert!(
        said.contains("/undo cannot bring back: cache/ deleted"),
        "{said}"
    );
    let blamed = events.iter().any(|e| {
        matches!(e, AgentEvent::ToolProgress { call_id, text, .. }
            if call_id == "t" && text.contains("cache/"))
    });
    assert!(!blamed, "the second call did not delete cache/");

    let AgentEvent::Rewound {
        preview,
        restored,
        not_kept,
        changed_since,
        error,
        ..
    } = ask(
        &mut h,
        Op::Rewind {
            turn: None,
            files: true,
            conversation: false,
            preview: true,
        },
    )
    .await
    else {
        unreachable!()
    };
    assert!(preview && error.is_none() && changed_since.is_empty());
    assert_eq!(restored, ["notes.txt"]);
    assert!(
        not_kept.iter().any(|n| n.contains("big.bin"))
            && not_kept.iter().any(|n| n.contains("cache/")),
        "{not_kept:?}"
    );
    assert!(
        read(ws.path(), "notes.txt").is_none(),
        "a preview writes nothing"
    );

    let AgentEvent::Rewound { error, .. } = undo(&mut h).await else {
        unreachable!()
    };
    assert_eq!(error, None);
    assert_eq!(read(ws.path(), "notes.txt").as_deref(), Some("keep me\n"));
    assert!(
        !ws.path().join("cache").exists(),
        "never kept, never made up"
    );
}
