//! The agent loop end to end, through the library: real providers talk
//! HTTP + SSE to the scripted mock LLM, tools touch a real temporary
//! workspace, and every path of the pipeline is driven from the model's side.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;
use crate::mock_llm;

use std::sync::Arc;
use std::time::Duration;

use harness::*;
use lathe_core::agent::AgentHandle;
use lathe_core::protocol::{
    AgentEvent, ApprovalDecision, ApprovalMode, DecisionSource, ErrorKind, GuardrailOutcome, Op,
    ToolStatus,
};
use lathe_core::provider::ProviderKind;
use lathe_core::tools::ToolRegistry;
use mock_llm::{MockLlm, Reply, Step, tool_results};
use serde_json::{Value, json};

#[tokio::test]
async fn text_streams_as_deltas_and_completes_with_both_providers() {
    for kind in KINDS {
        let ws = tempfile::tempdir().unwrap();
        let (events, mock) = run(
            Setup::new(kind),
            vec![Step::Reply(Reply::text("Hello from the mock model."))],
            ws.path(),
            "hi",
        )
        .await;
        let deltas: String = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::AssistantDelta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        // The mock sends its deltas in one burst: they may come out
        // together (the screen could not show each apart anyway).
        assert_eq!(deltas, "Hello from the mock model.", "{kind}");
        assert!(
            events
                .iter()
                .any(|e| matches!(e, AgentEvent::AssistantDelta { .. }))
        );
        assert_eq!(
            final_text(&events).as_deref(),
            Some("Hello from the mock model.")
        );
        let usage = events.iter().find_map(|e| match e {
            AgentEvent::TurnCompleted { usage, .. } => Some(*usage),
            _ => None,
        });
        assert_eq!(usage.unwrap().input_tokens, 11, "{kind}");
        assert_eq!(usage.unwrap().output_tokens, 5, "{kind}");

        let req = &mock.requests()[0];
        assert_eq!(req.body["model"], "mock-model");
        assert_eq!(req.body["stream"], true);
        match kind {
            ProviderKind::OpenAi => {
                assert_eq!(req.path, "/v1/chat/completions");
                assert_eq!(req.headers["authorization"], format!("Bearer {KEY}"));
                assert_eq!(req.body["stream_options"]["include_usage"], true);
                assert_eq!(req.body["messages"][0]["role"], "system");
                let names: Vec<&str> = req.body["tools"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["function"]["name"].as_str().unwrap())
                    .collect();
                assert_eq!(
                    names,
                    [
                        "ask_user",
                        "delete_file",
                        "edit_file",
                        "exec_shell",
                        "glob",
                        "grep",
                        "list_directory",
                        "memory_read",
                        "memory_write",
                        "message",
                        "move_file",
                        "read_file",
                        "shell_kill",
                        "shell_output",
                        "spawn",
                        "task",
                        "update_plan",
                        "web_fetch",
                        "web_search",
                        "write_file"
                    ]
                );
            }
            ProviderKind::Anthropic => {
                assert_eq!(req.path, "/v1/messages");
                assert_eq!(req.headers["x-api-key"], KEY);
                assert_eq!(req.headers["anthropic-version"], "2023-06-01");
                assert!(req.body["max_tokens"].as_u64().unwrap() > 0);
                assert_eq!(req.body["system"][0]["text"], "You are a test.");
                assert_eq!(req.body["tools"][0]["name"], "ask_user");
                assert!(req.body["tools"][0]["input_schema"].is_object());
            }
        }
    }
}

#[tokio::test]
async fn an_unknown_tool_is_an_error_the_model_recovers_from() {
    for kind in KINDS {
        let ws = tempfile::tempdir().unwrap();
        let (events, mock) = run(
            Setup::new(kind),
            vec![
                Step::Reply(Reply::tools().call("c1", "grep_everything", json!({}))),
                Step::Reply(Reply::text("Sorry, that tool does not exist.")),
            ],
            ws.path(),
            "search",
        )
        .await;
        let f = finished(&events);
        assert_eq!(f[0].1, ToolStatus::Error);
        assert_eq!(f[0].3.error_kind.as_deref(), Some("not_found"));
        assert!(error_text(&f[0].2).contains("grep_everything"));
        assert!(error_text(&f[0].2).contains("read_file"), "lists the tools");
        assert!(final_text(&events).is_some());
        let results = tool_results(&mock.requests()[1]);
        assert_eq!(results[0].0, "c1");
        assert!(
            results[0].1["error"]
                .as_str()
                .unwrap()
                .starts_with("tool not found")
        );
        if kind == ProviderKind::Anthropic {
            assert!(results[0].2, "is_error is set");
        }
    }
}

#[tokio::test]
async fn prefixed_and_dotted_names_resolve() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha").unwrap();
    let (events, _mock) = run(
        Setup::new(ProviderKind::OpenAi),
        vec![
            Step::Reply(Reply::tools().call("c1", "functions.read_file", json!({"path": "a.txt"}))),
            Step::Reply(Reply::text("done")),
        ],
        ws.path(),
        "read",
    )
    .await;
    let f = finished(&events);
    assert_eq!(f[0].0, "read_file");
    assert_eq!(f[0].1, ToolStatus::Ok);
    assert_eq!(f[0].2["content"], "alpha");
}

#[tokio::test]
async fn malformed_json_and_schema_violations_are_invalid_args() {
    for kind in KINDS {
        let ws = tempfile::tempdir().unwrap();
        let (events, mock) = run(
            Setup::new(kind),
            vec![
                Step::Reply(
                    Reply::tools()
                        .call_raw("c1", "read_file", r#"{"path": "a.txt""#)
                        .call("c2", "read_file", json!({"path": 42}))
                        .call("c3", "write_file", json!({"path": "x.txt"}))
                        .call(
                            "c4",
                            "exec_shell",
                            json!({"command": "ls", "timeout": "soon"}),
                        ),
                ),
                Step::Reply(Reply::text("fixed")),
            ],
            ws.path(),
            "go",
        )
        .await;
        let f = finished(&events);
        for (_, status, content, meta) in &f {
            assert_eq!(*status, ToolStatus::Error, "{content}");
            assert_eq!(
                meta.error_kind.as_deref(),
                Some("invalid_args"),
                "{content}"
            );
        }
        assert!(error_text(&f[0].2).contains("not valid JSON"), "{}", f[0].2);
        assert!(error_text(&f[1].2).contains("field `path`"), "{}", f[1].2);
        assert!(
            error_text(&f[2].2).contains("missing required field `content`"),
            "{}",
            f[2].2
        );
        assert!(
            error_text(&f[3].2).contains("field `timeout`"),
            "{}",
            f[3].2
        );
        // The raw text of malformed arguments is shown as it came.
        assert!(events.iter().any(|e| matches!(e,
            AgentEvent::ToolCallStarted { arguments: Value::String(s), .. } if s.contains("a.txt"))));
        assert_eq!(tool_results(&mock.requests()[1]).len(), 4);
        assert!(!ws.path().join("x.txt").exists());
    }
}

#[tokio::test]
async fn path_escapes_are_denied_by_the_guardrail() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "TOP SECRET").unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join("link")).unwrap();
    let abs = outside.path().join("secret.txt").display().to_string();
    let (events, _mock) = run(
        Setup::new(ProviderKind::OpenAi),
        vec![
            Step::Reply(
                Reply::tools()
                    .call("c1", "read_file", json!({"path": "../../../../etc/passwd"}))
                    .call("c2", "read_file", json!({"path": abs}))
                    .call("c3", "read_file", json!({"path": "link/secret.txt"}))
                    .call(
                        "c4",
                        "write_file",
                        json!({"path": "link/new.txt", "content": "x"}),
                    )
                    .call("c5", "list_directory", json!({"path": "link"}))
                    .call(
                        "c6",
                        "edit_file",
                        json!({"path": "../x", "old_text": "a", "new_text": "b"}),
                    ),
            ),
            Step::Reply(Reply::text("ok")),
        ],
        ws.path(),
        "escape",
    )
    .await;
    let f = finished(&events);
    assert_eq!(f.len(), 6);
    for (tool, status, content, meta) in &f {
        assert_eq!(*status, ToolStatus::Denied, "{tool}: {content}");
        assert_eq!(
            meta.error_kind.as_deref(),
            Some("invalid_path"),
            "{tool}: {content}"
        );
        assert!(
            error_text(content).contains("outside the workspace"),
            "{content}"
        );
        assert!(!content.to_string().contains("TOP SECRET"));
    }
    let denials = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                AgentEvent::GuardrailVerdict {
                    verdict: GuardrailOutcome::Deny,
                    ..
                }
            )
        })
        .count();
    assert_eq!(denials, 6);
    assert!(!outside.path().join("new.txt").exists());
}

#[tokio::test]
async fn denylisted_commands_are_denied_even_in_full_auto() {
    let ws = tempfile::tempdir().unwrap();
    let args = json!({"command": "sudo rm -rf /"});
    let ((status, content, meta), _) = run_one(
        Setup::new(ProviderKind::Anthropic),
        ws.path(),
        "exec_shell",
        args,
    )
    .await;
    assert_eq!(status, ToolStatus::Denied);
    assert_eq!(meta.error_kind.as_deref(), Some("permission_denied"));
    let text = error_text(&content);
    assert!(
        text.contains("refused in every approval mode") && text.contains("privilege escalation"),
        "{content}"
    );
}

#[tokio::test]
async fn a_shell_timeout_kills_the_whole_process_group() {
    let ws = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let args = json!({"command": "sleep 60713 & echo started; wait", "timeout": 1});
    let ((status, content, meta), _) = run_one(
        Setup::new(ProviderKind::OpenAi),
        ws.path(),
        "exec_shell",
        args,
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(status, ToolStatus::Error);
    assert_eq!(meta.error_kind.as_deref(), Some("timeout"));
    let msg = error_text(&content);
    assert!(
        msg.contains("timed out after 1s") && msg.contains("started"),
        "{msg}"
    );
    // The command may number its processes in a namespace of its own: find
    // the background one by its command line. SIGKILL is delivered at
    // once, but teardown takes a moment.
    let alive = || {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            let dir = e.path();
            let cmdline = std::fs::read(dir.join("cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).replace('\0', " ").trim() == "sleep 60713"
                && !stat.contains(") Z ")
        })
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(), "the background process survived the timeout");
}

#[tokio::test]
async fn shell_output_streams_as_progress_and_comes_back_whole() {
    let ws = tempfile::tempdir().unwrap();
    let args = json!({"command": "echo one; echo two >&2; echo three; exit 3"});
    let ((status, content, _), events) = run_one(
        Setup::new(ProviderKind::OpenAi),
        ws.path(),
        "exec_shell",
        args,
    )
    .await;
    let progress: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolProgress { stream, text, .. } => Some((stream.clone(), text.clone())),
            _ => None,
        })
        .collect();
    let out: String = progress
        .iter()
        .filter(|p| p.0 == "stdout")
        .map(|p| p.1.clone() + "\n")
        .collect();
    assert_eq!(out, "one\nthree\n");
    assert!(progress.iter().any(|p| p.0 == "stderr" && p.1 == "two"));
    assert_eq!(status, ToolStatus::Ok);
    assert_eq!(content["exit_code"], 3);
    assert_eq!(content["stdout"], "one\nthree\n");
    assert_eq!(content["stderr"], "two\n");
    assert!(content["duration_ms"].is_u64());
}

#[tokio::test]
async fn the_iteration_limit_ends_the_turn_with_an_error() {
    for kind in KINDS {
        let ws = tempfile::tempdir().unwrap();
        let looping = || Step::Reply(Reply::tools().call("c", "list_directory", json!({})));
        let setup = Setup {
            max_iterations: 2,
            ..Setup::new(kind)
        };
        let mock = MockLlm::start(vec![looping(), looping(), looping()]).await;
        let mut handle = setup.spawn(&mock, ws.path());
        let events = turn(&mut handle, "loop").await;
        let (err_kind, message) = turn_error(&events).unwrap();
        assert_eq!(err_kind, ErrorKind::MaxIterations);
        assert_eq!(message, "max tool iterations (2) exceeded");
        assert_eq!(finished(&events).len(), 2, "two rounds ran");
        assert_eq!(mock.requests().len(), 3);
        // The conversation stays well-formed: a next turn works.
        mock.push(Step::Reply(Reply::text("fine")));
        let events = turn(&mut handle, "stop looping").await;
        assert_eq!(final_text(&events).as_deref(), Some("fine"));
        let last = mock.requests().pop().unwrap();
        let refused = tool_results(&{
            let mut r = last.clone();
            // Look at the refused round: the results right after the third assistant message.
            let msgs = r.body["messages"].as_array().unwrap().clone();
            let cut = msgs
                .iter()
                .rposition(|m| {
                    m["role"] == "user"
                        && (m["content"] == "stop looping"
                            || m["content"][0]["text"] == "stop looping")
                })
                .unwrap();
            r.body["messages"] = Value::Array(msgs[..cut].to_vec());
            r
        });
        assert!(
            refused[0].1["error"]
                .as_str()
                .unwrap()
                .contains("max tool iterations")
        );
    }
}

#[tokio::test]
async fn retries_recover_from_429_5xx_cut_and_aborted_streams() {
    for kind in KINDS {
        let ws = tempfile::tempdir().unwrap();
        let (events, mock) = run(
            Setup::new(kind),
            vec![
                Step::Status {
                    status: 429,
                    message: "slow down".into(),
                    retry_after: Some("0".into()),
                },
                Step::Status {
                    status: 503,
                    message: "overloaded".into(),
                    retry_after: None,
                },
                Step::Cut(Reply::text("partial answer that never ends")),
                Step::Abort(Reply::text("broken connection")),
                Step::Reply(Reply::text("finally")),
            ],
            ws.path(),
            "hi",
        )
        .await;
        assert_eq!(final_text(&events).as_deref(), Some("finally"), "{kind}");
        assert_eq!(mock.requests().len(), 5);
        let retries: Vec<(u32, u64, String)> = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ProviderRetry {
                    attempt,
                    delay_ms,
                    reason,
                    ..
                } => Some((*attempt, *delay_ms, reason.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(retries.len(), 4, "{retries:?}");
        assert_eq!(retries[0].1, 0, "Retry-After: 0 is honoured");
        assert!(retries[0].2.contains("429") && retries[0].2.contains("slow down"));
        assert!(retries[1].2.contains("503"));
        assert!(
            retries[2].2.contains("ended before its end marker"),
            "{}",
            retries[2].2
        );
        assert_eq!(retries[3].0, 4);
    }
}

#[tokio::test]
async fn retry_after_delays_are_honoured() {
    let ws = tempfile::tempdir().unwrap();
    let (events, _mock) = run(
        Setup::new(ProviderKind::OpenAi),
        vec![
            Step::Status {
                status: 429,
                message: "rate limited".into(),
                retry_after: Some("1".into()),
            },
            Step::Reply(Reply::text("ok")),
        ],
        ws.path(),
        "hi",
    )
    .await;
    let delay = events.iter().find_map(|e| match e {
        AgentEvent::ProviderRetry { delay_ms, .. } => Some(*delay_ms),
        _ => None,
    });
    assert_eq!(delay, Some(1000));
    assert_eq!(final_text(&events).as_deref(), Some("ok"));
}

#[tokio::test]
async fn giving_up_quotes_the_server_and_client_errors_are_not_retried() {
    let ws = tempfile::tempdir().unwrap();
    let boom = || Step::Status {
        status: 500,
        message: "database on fire".into(),
        retry_after: None,
    };
    let (events, mock) = run(
        Setup::new(ProviderKind::OpenAi),
        vec![boom(), boom(), boom(), boom(), boom()],
        ws.path(),
        "hi",
    )
    .await;
    let (kind, message) = turn_error(&events).unwrap();
    assert_eq!(kind, ErrorKind::Provider);
    assert!(
        message.contains("HTTP 500") && message.contains("database on fire"),
        "{message}"
    );
    assert!(message.contains("gave up after 5 attempts"), "{message}");
    assert_eq!(mock.requests().len(), 5);

    let (events, mock) = run(
        Setup::new(ProviderKind::Anthropic),
        vec![Step::Status {
            status: 401,
            message: "invalid x-api-key".into(),
            retry_after: None,
        }],
        ws.path(),
        "hi",
    )
    .await;
    let (_, message) = turn_error(&events).unwrap();
    assert!(
        message.contains("HTTP 401") && message.contains("invalid x-api-key"),
        "{message}"
    );
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn malformed_stream_chunks_fail_the_turn_clearly() {
    let ws = tempfile::tempdir().unwrap();
    let (events, _mock) = run(
        Setup::new(ProviderKind::OpenAi),
        vec![Step::Raw("data: {\"choices\": [oops\n\n".into())],
        ws.path(),
        "hi",
    )
    .await;
    let (kind, message) = turn_error(&events).unwrap();
    assert_eq!(kind, ErrorKind::Provider);
    assert!(
        message.contains("malformed response") && message.contains("oops"),
        "{message}"
    );
}

#[tokio::test]
async fn a_300_kb_file_is_truncated_to_what_the_model_may_see() {
    let ws = tempfile::tempdir().unwrap();
    let big: String = (0..30_000).map(|i| format!("line {i:>9}\n")).collect();
    assert!(big.len() > 300_000);
    std::fs::write(ws.path().join("big.txt"), &big).unwrap();
    let (events, mock) = run(
        Setup::new(ProviderKind::OpenAi),
        vec![
            Step::Reply(Reply::tools().call("c1", "read_file", json!({"path": "big.txt"}))),
            Step::Reply(Reply::tools().call("c2", "exec_shell", json!({"command": "cat big.txt"}))),
            Step::Reply(Reply::text("big")),
        ],
        ws.path(),
        "read it",
    )
    .await;
    let f = finished(&events);
    for (tool, status, content, meta) in &f {
        assert_eq!(*status, ToolStatus::Ok, "{tool}");
        assert!(meta.truncated, "{tool}");
        assert!(content.to_string().len() <= 65_536, "{tool}");
    }
    assert!(
        f[0].2["content"]
            .as_str()
            .unwrap()
            .starts_with("line         0\n")
    );
    assert!(f[0].2["next_offset"].as_u64().unwrap() > 1000);
    assert!(f[1].2["stdout"].as_str().unwrap().contains("bytes omitted"));
    assert!(
        f[1].2["stdout"]
            .as_str()
            .unwrap()
            .ends_with("line     29999\n")
    );
    for req in &mock.requests()[1..] {
        for (_, content, _) in tool_results(req) {
            assert!(content.to_string().len() <= 65_536);
        }
    }
}

#[tokio::test]
async fn three_parallel_calls_are_answered_in_order() {
    for kind in KINDS {
        let ws = tempfile::tempdir().unwrap();
        for (name, body) in [("a.txt", "AAA"), ("b.txt", "BBB"), ("c.txt", "CCC")] {
            std::fs::write(ws.path().join(name), body).unwrap();
        }
        let (events, mock) = run(
            Setup::new(kind),
            vec![
                Step::Reply(
                    Reply::tools()
                        .say("Reading three files.")
                        .call("call_a", "read_file", json!({"path": "a.txt"}))
                        .call("call_b", "read_file", json!({"path": "b.txt"}))
                        .call("call_c", "read_file", json!({"path": "c.txt"})),
                ),
                Step::Reply(Reply::text("AAA BBB CCC")),
            ],
            ws.path(),
            "read all",
        )
        .await;
        let results = tool_results(&mock.requests()[1]);
        let ids: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(ids, ["call_a", "call_b", "call_c"], "{kind}");
        let bodies: Vec<&str> = results
            .iter()
            .map(|r| r.1["content"].as_str().unwrap())
            .collect();
        assert_eq!(bodies, ["AAA", "BBB", "CCC"]);
        // The assistant message that asked goes back with its text and calls.
        let msgs = mock.requests()[1].body["messages"]
            .as_array()
            .unwrap()
            .clone();
        let assistant = msgs.iter().find(|m| m["role"] == "assistant").unwrap();
        assert!(assistant.to_string().contains("Reading three files."));
        assert_eq!(final_text(&events).as_deref(), Some("AAA BBB CCC"));
    }
}

/// A read-only tool that completes only when three calls run at once.
struct Rendezvous(Arc<tokio::sync::Barrier>);

#[async_trait::async_trait]
impl lathe_core::tools::Tool for Rendezvous {
    fn name(&self) -> &str {
        "rendezvous"
    }
    fn description(&self) -> &str {
        "waits for two other calls"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"n": {"type": "integer"}}})
    }
    fn effect(&self) -> lathe_core::protocol::Effect {
        lathe_core::protocol::Effect::Read
    }
    async fn execute(
        &self,
        args: Value,
        _ctx: &lathe_core::tools::ToolContext,
    ) -> Result<Value, lathe_core::tools::ToolError> {
        tokio::time::timeout(Duration::from_secs(5), self.0.wait())
            .await
            .map_err(|_| lathe_core::tools::ToolError::ExecutionFailed("ran alone".into()))?;
        Ok(args)
    }
}

#[tokio::test]
async fn consecutive_read_only_calls_run_concurrently() {
    let ws = tempfile::tempdir().unwrap();
    let registry = ToolRegistry::builder()
        .tool(Arc::new(Rendezvous(Arc::new(tokio::sync::Barrier::new(3)))))
        .build()
        .unwrap();
    let setup = Setup {
        registry: Some(registry),
        ..Setup::new(ProviderKind::OpenAi)
    };
    let (events, _mock) = run(
        setup,
        vec![
            Step::Reply(
                Reply::tools()
                    .call("r1", "rendezvous", json!({"n": 1}))
                    .call("r2", "rendezvous", json!({"n": 2}))
                    .call("r3", "rendezvous", json!({"n": 3})),
            ),
            Step::Reply(Reply::text("met")),
        ],
        ws.path(),
        "meet",
    )
    .await;
    let f = finished(&events);
    assert!(f.iter().all(|r| r.1 == ToolStatus::Ok), "{f:?}");
}

#[tokio::test]
async fn headless_ask_denies_writes_and_tells_the_model_why() {
    for kind in KINDS {
        let ws = tempfile::tempdir().unwrap();
        let (events, mock) = run(
            Setup::new(kind).mode(ApprovalMode::Ask),
            vec![
                Step::Reply(
                    Reply::tools()
                        .call(
                            "w",
                            "write_file",
                            json!({"path": "new.txt", "content": "hi"}),
                        )
                        .call("x", "exec_shell", json!({"command": "touch made.txt"})),
                ),
                Step::Reply(Reply::text("I could not write the file.")),
            ],
            ws.path(),
            "write",
        )
        .await;
        assert!(!ws.path().join("new.txt").exists());
        assert!(!ws.path().join("made.txt").exists());
        let f = finished(&events);
        assert_eq!(f[0].1, ToolStatus::Denied);
        assert_eq!(f[1].1, ToolStatus::Denied);
        let asked = events
            .iter()
            .filter(|e| matches!(e, AgentEvent::ApprovalRequested { .. }))
            .count();
        assert_eq!(asked, 2);
        assert!(events.iter().any(|e| matches!(
            e,
            AgentEvent::ApprovalDecided {
                source: DecisionSource::Policy,
                decision: ApprovalDecision::Deny { .. },
                ..
            }
        )));
        let results = tool_results(&mock.requests()[1]);
        let told = results[0].1["error"].as_str().unwrap();
        assert!(
            told.contains("headless") && told.contains("--approval"),
            "{told}"
        );
        assert_eq!(
            final_text(&events).as_deref(),
            Some("I could not write the file.")
        );
    }
}

#[tokio::test]
async fn read_only_mode_refuses_writes_and_commands() {
    let ws = tempfile::tempdir().unwrap();
    let (events, _mock) = run(
        Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::ReadOnly),
        vec![
            Step::Reply(
                Reply::tools()
                    .call(
                        "w",
                        "write_file",
                        json!({"path": "new.txt", "content": "hi"}),
                    )
                    .call("l", "list_directory", json!({})),
            ),
            Step::Reply(Reply::text("ok")),
        ],
        ws.path(),
        "write",
    )
    .await;
    let f = finished(&events);
    assert_eq!(f[0].1, ToolStatus::Denied);
    assert!(error_text(&f[0].2).contains("read-only"));
    assert_eq!(f[1].1, ToolStatus::Ok);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ApprovalRequested { .. }))
    );
}

#[tokio::test]
async fn auto_edit_writes_and_edits_files_atomically() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("main.rs"),
        "fn main() {\n    println!(\"old\");\n}\n",
    )
    .unwrap();
    let (events, _mock) =
        run(
            Setup::new(ProviderKind::Anthropic).mode(ApprovalMode::AutoEdit),
            vec![
            Step::Reply(
                Reply::tools()
                    .call(
                        "w",
                        "write_file",
                        json!({"path": "src/deep/new.txt", "content": "fresh\n"}),
                    )
                    .call(
                        "e",
                        "edit_file",
                        json!({"path": "main.rs", "old_text": "\"old\"", "new_text": "\"new\""}),
                    )
                    .call(
                        "e2",
                        "edit_file",
                        json!({"path": "main.rs", "old_text": "missing", "new_text": "x"}),
                    )
                    .call("x", "exec_shell", json!({"command": "touch should-not-run"})),
            ),
            Step::Reply(Reply::text("edited")),
        ],
            ws.path(),
            "edit",
        )
        .await;
    assert_eq!(
        std::fs::read_to_string(ws.path().join("src/deep/new.txt")).unwrap(),
        "fresh\n"
    );
    assert!(
        std::fs::read_to_string(ws.path().join("main.rs"))
            .unwrap()
            .contains("\"new\"")
    );
    let f = finished(&events);
    assert_eq!(f[0].1, ToolStatus::Ok);
    assert_eq!(f[0].2["created"], true);
    assert_eq!(f[1].1, ToolStatus::Ok);
    assert_eq!(f[1].2["line"], 2);
    assert_eq!(f[2].1, ToolStatus::Error);
    assert!(error_text(&f[2].2).contains("occurs 0 times"));
    assert_eq!(
        f[3].1,
        ToolStatus::Denied,
        "auto-edit still asks for commands"
    );
    let leftovers: Vec<_> = std::fs::read_dir(ws.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[tokio::test]
async fn interactive_approvals_are_a_round_trip_with_grants() {
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("c1", "exec_shell", json!({"command": "touch one"}))),
        Step::Reply(Reply::tools().call("c2", "exec_shell", json!({"command": "touch two"}))),
        Step::Reply(Reply::tools().call(
            "c3",
            "write_file",
            json!({"path": "n.txt", "content": "x"}),
        )),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let setup = Setup {
        interactive: true,
        ..Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::Ask)
    };
    let mut handle = setup.spawn(&mock, ws.path());
    handle
        .ops
        .send(Op::UserInput { text: "go".into() })
        .await
        .unwrap();
    let mut events = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), handle.events.recv())
            .await
            .unwrap()
            .unwrap();
        if let AgentEvent::ApprovalRequested(lathe_core::protocol::ApprovalRequest {
            call_id,
            grant,
            ..
        }) = &ev
        {
            let decision = match call_id.as_str() {
                "c1" => {
                    let covers = &grant.as_ref().expect("a grant is offered").covers;
                    assert!(
                        covers[0].starts_with("`touch` with any arguments ("),
                        "{covers:?}"
                    );
                    ApprovalDecision::ApproveForConversation
                }
                "c3" => ApprovalDecision::Deny {
                    message: Some("write it under docs/ instead".into()),
                },
                other => panic!("unexpected approval request for {other}"),
            };
            handle
                .ops
                .send(Op::Decide {
                    call_id: call_id.clone(),
                    decision,
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
    let f = finished(&events);
    assert_eq!(f[0].1, ToolStatus::Ok);
    assert_eq!(
        f[1].1,
        ToolStatus::Ok,
        "the conversation grant covered `touch`"
    );
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::ApprovalDecided { call_id, source: DecisionSource::Grant, .. } if call_id == "c2")));
    assert_eq!(f[2].1, ToolStatus::Denied);
    let told = tool_results(&mock.requests()[3]);
    assert!(
        told[0].1["error"]
            .as_str()
            .unwrap()
            .contains("write it under docs/ instead")
    );
    assert!(!ws.path().join("n.txt").exists());
}

#[tokio::test]
async fn an_interrupt_cancels_the_stream_and_running_tools() {
    let ws = tempfile::tempdir().unwrap();
    // Interrupt during a stream that never ends.
    let mock = MockLlm::start(vec![Step::Hang(Reply::text("thinking forever"))]).await;
    let mut handle = Setup::new(ProviderKind::OpenAi).spawn(&mock, ws.path());
    handle
        .ops
        .send(Op::UserInput { text: "hi".into() })
        .await
        .unwrap();
    loop {
        if let AgentEvent::AssistantDelta { .. } = handle.events.recv().await.unwrap() {
            break;
        }
    }
    handle.ops.send(Op::Interrupt).await.unwrap();
    let events = collect_turn(&mut handle).await;
    assert_eq!(turn_error(&events).unwrap().0, ErrorKind::Interrupted);

    // Interrupt a running shell command.
    mock.push(Step::Reply(Reply::tools().call(
        "s",
        "exec_shell",
        json!({"command": "echo begin; sleep 30", "timeout": 60}),
    )));
    handle
        .ops
        .send(Op::UserInput { text: "run".into() })
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let mut events = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), handle.events.recv())
            .await
            .unwrap()
            .unwrap();
        if matches!(&ev, AgentEvent::ToolProgress { text, .. } if text.contains("begin")) {
            handle.ops.send(Op::Interrupt).await.unwrap();
        }
        let end = ev.ends_turn();
        events.push(ev);
        if end {
            break;
        }
    }
    assert!(started.elapsed() < Duration::from_secs(15));
    let f = finished(&events);
    assert_eq!(f[0].1, ToolStatus::Error);
    assert_eq!(f[0].3.error_kind.as_deref(), Some("cancelled"));
    assert_eq!(turn_error(&events).unwrap().0, ErrorKind::Interrupted);
}

#[tokio::test]
async fn secrets_are_redacted_from_tool_results() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join(".env"),
        format!("OPENAI_API_KEY={KEY}\nAWS=AKIAABCDEFGHIJKLMNOP\n"),
    )
    .unwrap();
    let (events, mock) = run(
        Setup::new(ProviderKind::OpenAi),
        vec![
            Step::Reply(Reply::tools().call("c1", "read_file", json!({"path": ".env"}))),
            Step::Reply(Reply::text("ok")),
        ],
        ws.path(),
        "read",
    )
    .await;
    let f = finished(&events);
    let content = f[0].2["content"].as_str().unwrap();
    assert!(
        !content.contains(KEY) && !content.contains("AKIAABCDEFGHIJKLMNOP"),
        "{content}"
    );
    assert!(content.contains("[REDACTED]"));
    assert!(
        !mock.requests()[1]
            .body
            .to_string()
            .contains("AKIAABCDEFGHIJKLMNOP")
    );
}

#[tokio::test]
async fn the_session_journal_records_the_turn() {
    let ws = tempfile::tempdir().unwrap();
    let journal = tempfile::tempdir().unwrap();
    let setup = Setup {
        journal_dir: Some(journal.path().to_path_buf()),
        ..Setup::new(ProviderKind::OpenAi)
    };
    let (_events, _mock) = run(
        setup,
        vec![
            Step::Reply(Reply::tools().call("c1", "list_directory", json!({}))),
            Step::Reply(Reply::text("listed")),
        ],
        ws.path(),
        "list",
    )
    .await;
    let file = std::fs::read_dir(journal.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let lines: Vec<Value> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    for t in [
        "session_started",
        "turn_started",
        "tool_call_started",
        "tool_call_finished",
        "turn_completed",
    ] {
        assert!(types.contains(&t), "{t} missing from {types:?}");
    }
    assert!(!types.contains(&"assistant_delta"));
}

#[tokio::test]
async fn servers_that_refuse_stream_options_still_work() {
    let ws = tempfile::tempdir().unwrap();
    let (events, mock) = run(
        Setup::new(ProviderKind::OpenAi),
        vec![
            Step::Status {
                status: 400,
                message: "Unrecognized request argument supplied: stream_options".into(),
                retry_after: None,
            },
            Step::Reply(Reply::text("hello")),
        ],
        ws.path(),
        "hi",
    )
    .await;
    assert_eq!(final_text(&events).as_deref(), Some("hello"));
    let reqs = mock.requests();
    assert!(reqs[0].body.get("stream_options").is_some());
    assert!(reqs[1].body.get("stream_options").is_none());
}

#[tokio::test]
async fn binary_files_are_refused_and_listings_are_sorted() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("image.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
    )
    .unwrap();
    std::fs::write(ws.path().join("b.txt"), "bb").unwrap();
    std::fs::create_dir(ws.path().join("a_dir")).unwrap();
    std::fs::write(ws.path().join("C.md"), "c").unwrap();
    let (events, _mock) = run(
        Setup::new(ProviderKind::OpenAi),
        vec![
            Step::Reply(
                Reply::tools()
                    .call("c1", "read_file", json!({"path": "image.png"}))
                    .call("c2", "list_directory", json!({"path": "."}))
                    .call("c3", "read_file", json!({"path": "missing.txt"}))
                    .call("c4", "read_file", json!({"path": "a_dir"})),
            ),
            Step::Reply(Reply::text("ok")),
        ],
        ws.path(),
        "look",
    )
    .await;
    let (status, content, _) = result_of(&events, "c1");
    assert_eq!(status, ToolStatus::Error);
    assert!(error_text(&content).contains("binary file"), "{content}");
    let (_, listing, _) = result_of(&events, "c2");
    let names: Vec<&str> = listing["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["C.md", "a_dir", "b.txt", "image.png"]);
    assert_eq!(listing["entries"][1]["is_dir"], true);
    assert_eq!(listing["entries"][2]["size"], 2);
    assert_eq!(
        result_of(&events, "c3").2.error_kind.as_deref(),
        Some("file_not_found")
    );
    let (_, dir, _) = result_of(&events, "c4");
    assert!(error_text(&dir).contains("is a directory"), "{dir}");
}

#[tokio::test]
async fn servers_that_answer_without_streaming_still_work() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha").unwrap();
    let openai = Step::Json(json!({
        "id": "chatcmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}}]}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    }));
    let anthropic = Step::Json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a.txt"}}],
        "usage": {"input_tokens": 5, "output_tokens": 2}
    }));
    for (kind, step) in [
        (ProviderKind::OpenAi, openai),
        (ProviderKind::Anthropic, anthropic),
    ] {
        let (events, _mock) = run(
            Setup::new(kind),
            vec![step, Step::Reply(Reply::text("alpha it is"))],
            ws.path(),
            "read",
        )
        .await;
        assert_eq!(result_of(&events, "c1").1["content"], "alpha", "{kind}");
        assert_eq!(final_text(&events).as_deref(), Some("alpha it is"));
    }
}

#[tokio::test]
async fn approval_requests_carry_a_diff_and_doomed_edits_are_not_asked() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("lib.rs"), "fn a() {}\nfn b() {}\n").unwrap();
    let (events, _mock) = run(
        Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::Ask),
        vec![
            Step::Reply(
                Reply::tools()
                    .call("e1", "edit_file", json!({"path": "lib.rs", "old_text": "fn b() {}", "new_text": "fn b() { todo() }"}))
                    .call("e2", "edit_file", json!({"path": "lib.rs", "old_text": "fn zzz", "new_text": "x"}))
                    .call("w1", "write_file", json!({"path": "new.md", "content": "# New\n"})),
            ),
            Step::Reply(Reply::text("asked")),
        ],
        ws.path(),
        "edit",
    )
    .await;
    let diffs: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ApprovalRequested(lathe_core::protocol::ApprovalRequest {
                call_id,
                diff,
                ..
            }) => Some((call_id.clone(), diff.clone().unwrap())),
            _ => None,
        })
        .collect();
    assert_eq!(diffs.len(), 2, "the doomed edit was not asked about");
    assert!(
        diffs[0].1.contains("-fn b() {}\n+fn b() { todo() }\n"),
        "{}",
        diffs[0].1
    );
    assert!(
        diffs[1].1.starts_with("--- /dev/null\n+++ b/new.md"),
        "{}",
        diffs[1].1
    );
    let (status, content, _) = result_of(&events, "e2");
    assert_eq!(status, ToolStatus::Error);
    assert!(error_text(&content).contains("occurs 0 times"));
}

#[tokio::test]
async fn clear_forgets_the_conversation_and_its_grants() {
    let ws = tempfile::tempdir().unwrap();
    let call =
        || Step::Reply(Reply::tools().call("c", "exec_shell", json!({"command": "touch hi"})));
    let mock = MockLlm::start(vec![call(), Step::Reply(Reply::text("ran"))]).await;
    let setup = Setup {
        interactive: true,
        ..Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::Ask)
    };
    let mut handle = setup.spawn(&mock, ws.path());
    let approve_all = async |handle: &mut AgentHandle, prompt: &str| {
        drive(handle, prompt, |_| ApprovalDecision::ApproveForConversation).await
    };
    let asked = |events: &[AgentEvent]| asked(events).len();
    let first = approve_all(&mut handle, "one").await;
    assert_eq!(asked(&first), 1);
    mock.push(call());
    mock.push(Step::Reply(Reply::text("ran again")));
    let second = approve_all(&mut handle, "two").await;
    assert_eq!(asked(&second), 0, "the conversation grant covered it");
    handle.ops.send(Op::Clear).await.unwrap();
    mock.push(call());
    mock.push(Step::Reply(Reply::text("asked again")));
    let third = approve_all(&mut handle, "three").await;
    assert_eq!(asked(&third), 1, "/clear dropped the grant");
    let last = mock.requests().pop().unwrap();
    let users = last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .count();
    assert_eq!(users, 1, "/clear dropped the history");
}

/// A key a command prints (plainly, base64-encoded, reversed) reaches no
/// outlet: not the live progress lines, not the timeout's error text, not
/// the model, not the events a front end or the journal sees.
#[tokio::test]
async fn secrets_reach_no_outlet_progress_errors_or_model() {
    use base64::Engine;
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("creds.txt"), format!("{}\n", harness::KEY)).unwrap();
    let (events, mock) = run(
        Setup::new(ProviderKind::OpenAi),
        vec![
            Step::Reply(Reply::tools().call(
                "c1",
                "exec_shell",
                json!({"command": "cat creds.txt; base64 creds.txt; rev creds.txt; sleep 5", "timeout": 1}),
            )),
            Step::Reply(Reply::text("done")),
        ],
        ws.path(),
        "show me",
    )
    .await;
    let key = harness::KEY;
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{key}\n"));
    let reversed: String = key.chars().rev().collect();
    let seen_by_front_end = serde_json::to_string(&events).unwrap();
    let seen_by_model: String = mock.requests().iter().map(|r| r.body.to_string()).collect();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolProgress { .. })),
        "the command streamed progress"
    );
    for (what, text) in [("events", &seen_by_front_end), ("model", &seen_by_model)] {
        assert!(!text.contains(key), "{what} saw the key");
        assert!(!text.contains(&encoded[..20]), "{what} saw it in base64");
        assert!(!text.contains(&reversed), "{what} saw it reversed");
    }
    assert!(seen_by_model.contains("[REDACTED]"));
    let f = finished(&events);
    assert!(f[0].3.redactions >= 3, "counted: {:?}", f[0].3);
}

/// Everything from outside passes the model's boundary once: a key in
/// AGENTS.md, in a file the message attaches, in a tool's error text and
/// in what the person typed reaches neither the model, nor the events, nor
/// the session record the conversation is rebuilt from.
#[tokio::test]
async fn every_way_to_the_model_passes_one_boundary() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let key = harness::KEY;
    std::fs::write(ws.path().join("AGENTS.md"), format!("Deploy with {key}.")).unwrap();
    std::fs::write(ws.path().join("notes.txt"), format!("token: {key}\n")).unwrap();
    let setup = Setup {
        real_prompt: true,
        data_dir: Some(data.path().to_path_buf()),
        ..Setup::new(ProviderKind::Anthropic)
    };
    let (events, mock) = run(
        setup,
        vec![
            Step::Reply(Reply::tools().call(
                "c1",
                "read_file",
                json!({"path": format!("missing-{key}.txt")}),
            )),
            Step::Reply(Reply::text("done")),
        ],
        ws.path(),
        &format!("look at @notes.txt, my key is {key}"),
    )
    .await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].body.to_string();
    assert!(last.contains("Deploy with [REDACTED]"), "{last}");
    assert!(last.contains("token: [REDACTED]"), "{last}");
    assert!(last.contains("missing-[REDACTED]"), "{last}");
    let seen_by_front_end = serde_json::to_string(&events).unwrap();
    let mut record = String::new();
    for entry in walkdir(data.path()) {
        let text = std::fs::read_to_string(entry).unwrap_or_default();
        // The model's own calls are kept as it wrote them, as above.
        for line in text
            .lines()
            .filter(|l| !l.contains(r#""kind":"assistant""#))
        {
            record.push_str(line);
        }
    }
    assert!(record.contains("[REDACTED]"), "the session was recorded");
    // What the model wrote itself (the call's arguments) goes back as it
    // wrote it; all else it is given passed the boundary.
    let given: String = requests
        .iter()
        .map(|r| {
            let mut body = r.body.clone();
            for m in body["messages"].as_array_mut().into_iter().flatten() {
                if let Some(blocks) = m["content"].as_array_mut() {
                    blocks.retain(|b| b["type"] != "tool_use");
                }
            }
            body.to_string()
        })
        .collect();
    for (what, text) in [
        ("model", given),
        ("events", seen_by_front_end),
        ("record", record),
    ] {
        assert!(!text.contains(key), "{what} saw the key");
    }
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Error { message, .. }
            if message.contains("held what looks like a secret"))),
        "the person was told"
    );
}

/// Every file under `dir`.
fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walkdir(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// A call with no tool name is `NotFound` (the model hears of it; the turn
/// does not end empty), and calls that share an id get ids of their own.
#[tokio::test]
async fn nameless_calls_and_repeated_ids_are_handled() {
    for kind in KINDS {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a.txt"), "A").unwrap();
        let (events, mock) = run(
            Setup::new(kind),
            vec![
                Step::Reply(Reply::tools().call("dup", "", json!({})).call(
                    "dup",
                    "read_file",
                    json!({"path": "a.txt"}),
                )),
                Step::Reply(Reply::text("done")),
            ],
            ws.path(),
            "go",
        )
        .await;
        let f = finished(&events);
        assert_eq!(f.len(), 2, "{kind:?}");
        assert_ne!(f[0].0, f[1].0, "{kind:?}: ids of their own");
        assert_eq!(f[0].1, ToolStatus::Error);
        assert_eq!(f[0].3.error_kind.as_deref(), Some("not_found"));
        assert_eq!(f[1].1, ToolStatus::Ok);
        let results = tool_results(&mock.requests()[1]);
        assert_eq!(results.len(), 2, "{kind:?}");
        assert_ne!(results[0].0, results[1].0);
        assert_eq!(final_text(&events).as_deref(), Some("done"));
    }
}

/// Headless, even in full-auto, a call to run outside the sandbox is
/// denied (only a person may approve it), and the model is told why.
#[tokio::test]
async fn running_outside_the_sandbox_is_denied_headless_in_every_mode() {
    let ws = tempfile::tempdir().unwrap();
    let (events, _mock) = run(
        Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::FullAuto),
        vec![
            Step::Reply(Reply::tools().call(
                "c1",
                "exec_shell",
                json!({"command": "touch escaped.txt", "sandbox": false}),
            )),
            Step::Reply(Reply::text("ok")),
        ],
        ws.path(),
        "go",
    )
    .await;
    let f = finished(&events);
    assert_eq!(f[0].1, ToolStatus::Denied, "{:?}", f[0].2);
    assert!(!ws.path().join("escaped.txt").exists());
}

/// `@path` attaches a workspace file to the message (redacted, fenced);
/// a mention of a file outside the workspace, or of no file, is text.
#[tokio::test]
async fn mentioned_workspace_files_go_along_with_the_message() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("src")).unwrap();
    std::fs::write(
        ws.path().join("src/main.rs"),
        format!("fn main() {{ let key = \"{KEY}\"; }}\n```\n"),
    )
    .unwrap();
    std::fs::write(outside.path().join("secret.txt"), "outside secret\n").unwrap();
    let prompt = format!(
        "explain @src/main.rs and @{} to @alice",
        outside.path().join("secret.txt").display()
    );
    let (events, mock) = run(
        Setup::new(ProviderKind::OpenAi),
        vec![Step::Reply(Reply::text("it is a main"))],
        ws.path(),
        &prompt,
    )
    .await;
    assert!(final_text(&events).is_some());
    let sent = mock.requests()[0].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(sent.starts_with(&prompt), "{sent}");
    assert!(sent.contains("src/main.rs:\n````\nfn main()"), "{sent}");
    assert!(!sent.contains(KEY), "redacted: {sent}");
    assert!(!sent.contains("outside secret"), "{sent}");
    assert!(
        sent.contains("secret.txt: not attached: outside the workspace"),
        "the model hears what was left out: {sent}"
    );
    // The turn shows the message as written.
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::TurnStarted { prompt: p, .. } if *p == prompt))
    );
    // The person hears what went along and what did not (`@alice` is a
    // name, not a file, and is not mentioned).
    let files = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Attachments { files, .. } => Some(files.clone()),
            _ => None,
        })
        .expect("an attachments event");
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(files[0].path, "src/main.rs");
    assert!(files[0].attached && files[0].bytes > 0, "{files:?}");
    assert!(!files[1].attached, "{files:?}");
    assert_eq!(
        files[1].note.as_deref(),
        Some("not attached: outside the workspace")
    );
}

/// A secret in a file a change touches reaches no event: not the diff
/// text, not the change's hunks (what exec --json and the journal keep).
#[tokio::test]
async fn secrets_in_a_change_reach_no_event() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("config.py"),
        format!("DEBUG = False\nKEY = \"{}\"\n", harness::KEY),
    )
    .unwrap();
    // A file named after the key: its path is text from outside too.
    let named = format!("cache-{}.json", harness::KEY);
    std::fs::write(ws.path().join(&named), "{}\n").unwrap();
    for mode in [ApprovalMode::Ask, ApprovalMode::FullAuto] {
        let (events, _mock) = run(
            Setup::new(ProviderKind::OpenAi).mode(mode),
            vec![
                Step::Reply(
                    Reply::tools()
                        .call(
                            "c1",
                            "edit_file",
                            json!({"path": "config.py", "old_text": "DEBUG = False", "new_text": "DEBUG = True"}),
                        )
                        .call(
                            "c2",
                            "write_file",
                            json!({"path": named, "content": "{\"a\": 1}\n"}),
                        ),
                ),
                Step::Reply(Reply::text("done")),
            ],
            ws.path(),
            "debug on",
        )
        .await;
        let seen = serde_json::to_string(&events).unwrap();
        assert!(
            seen.contains("DEBUG = True"),
            "{mode:?}: the change is shown"
        );
        assert!(!seen.contains(harness::KEY), "{mode:?}: {seen}");
    }
    assert!(
        std::fs::read_to_string(ws.path().join("config.py"))
            .unwrap()
            .contains(harness::KEY),
        "the file itself keeps its content"
    );
}

/// The models a provider lists, as both wire formats give them (with the
/// key, Anthropic's pages followed); a server with no list says so.
#[tokio::test]
async fn providers_list_their_models() {
    let names: Vec<String> = ["zeta", "alpha", "mock-model", "beta", "gamma"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for kind in KINDS {
        let mock = MockLlm::listing(Some(names.clone())).await;
        let p = lathe_core::provider::build(harness::settings(kind, &mock)).unwrap();
        let listed = p.models().await.unwrap();
        assert_eq!(
            listed,
            Some(vec![
                "alpha".into(),
                "beta".into(),
                "gamma".into(),
                "mock-model".into(),
                "zeta".into()
            ]),
            "{kind:?}"
        );
        let reqs = mock.listings();
        match kind {
            ProviderKind::OpenAi => {
                assert_eq!(reqs.len(), 1);
                assert_eq!(reqs[0].headers["authorization"], format!("Bearer {KEY}"));
            }
            ProviderKind::Anthropic => {
                assert_eq!(reqs.len(), 3, "pages of two: {reqs:?}");
                assert_eq!(reqs[0].headers["x-api-key"], KEY);
                assert!(reqs[1].path.contains("after_id=alpha"), "{reqs:?}");
            }
        }
        let none = MockLlm::listing(None).await;
        let p = lathe_core::provider::build(harness::settings(kind, &none)).unwrap();
        assert_eq!(p.models().await.unwrap(), None, "{kind:?}");
    }
}

/// A mention is a read: the person's deny rules keep a file from going
/// along, as they keep read_file from it; piped input (fenced) mentions
/// nothing; a file mentioned by two names goes once.
#[tokio::test]
async fn mentions_follow_the_read_rules_and_ignore_fenced_text() {
    use lathe_core::policy::{RuleOrigin, Rules};
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("private")).unwrap();
    std::fs::write(ws.path().join("private/notes.txt"), "TOPSECRET-42\n").unwrap();
    std::fs::write(ws.path().join("a.txt"), "plain a\n").unwrap();
    std::os::unix::fs::symlink("a.txt", ws.path().join("alias.txt")).unwrap();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("ok"))]).await;
    let setup = Setup {
        rules: Rules::parse(
            &[],
            &[],
            &["read_file(private/**)".into()],
            RuleOrigin::User,
        )
        .unwrap(),
        ..Setup::new(ProviderKind::OpenAi)
    };
    let mut handle = setup.spawn(&mock, ws.path());
    let prompt = "see @private/notes.txt @a.txt @alias.txt\n\n```\n+ and @private/notes.txt\n```";
    handle
        .ops
        .send(lathe_core::protocol::Op::UserInput {
            text: prompt.into(),
        })
        .await
        .unwrap();
    let mut files = Vec::new();
    while let Some(ev) = handle.events.recv().await {
        match ev {
            AgentEvent::Attachments { files: f, .. } => files = f,
            AgentEvent::TurnCompleted { .. } => break,
            AgentEvent::Error {
                turn_id: Some(_), ..
            } => break,
            _ => {}
        }
    }
    let sent = mock.requests()[0].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!sent.contains("TOPSECRET-42"), "{sent}");
    assert_eq!(sent.matches("plain a").count(), 1, "{sent}");
    let private = files
        .iter()
        .find(|f| f.path == "private/notes.txt")
        .expect("the denied mention is reported");
    assert!(!private.attached);
    assert!(
        private.note.as_deref().unwrap_or("").contains("deny"),
        "{private:?}"
    );
}
