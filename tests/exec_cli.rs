//! The real `lathe` binary, run the way a user or a CI script runs it,
//! against the scripted mock LLM: flags, `--json` events, exit codes,
//! configuration errors, approval modes, and secrets that must never leak.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mock_llm;

use std::path::Path;
use std::time::Duration;

use lathe_test_support::run::{Run, Setup};
use mock_llm::{MockLlm, Reply, Step, tool_results};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

const SECRET: &str = "sk-lathe-test-SECRET-0123456789abcdef";

/// A home and a workspace for `lathe`'s runs.
struct Env(Setup);

impl std::ops::Deref for Env {
    type Target = Setup;
    fn deref(&self) -> &Setup {
        &self.0
    }
}

impl Env {
    fn new() -> Self {
        Self(Setup::new(env!("CARGO_BIN_EXE_lathe")))
    }

    /// `lathe exec` against the mock's OpenAI endpoint.
    async fn exec(&self, mock: &MockLlm, extra: &[&str], prompt: &str) -> Run {
        let url = mock.openai_url();
        let mut args = vec!["exec", "--base-url", url.as_str(), "--model", "mock-model"];
        args.extend_from_slice(extra);
        args.push(prompt);
        self.run(&args, &[("OPENAI_API_KEY", SECRET)], "").await
    }
}

fn all_files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(all_files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[tokio::test]
async fn help_and_version_work() {
    let env = Env::new();
    let help = env.run(&["--help"], &[], "").await;
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("exec") && help.stdout.contains("--approval"));
    let help = env.run(&["exec", "--help"], &[], "").await;
    assert_eq!(help.code, 0);
    for flag in [
        "--json",
        "--provider",
        "--base-url",
        "--model",
        "--workspace",
        "--approval",
        "--max-tool-iterations",
    ] {
        assert!(
            help.stdout.contains(flag),
            "{flag} missing from exec --help"
        );
    }
    let version = env.run(&["--version"], &[], "").await;
    assert_eq!(version.code, 0);
    assert_eq!(
        version.stdout.trim(),
        format!("lathe {}", env!("CARGO_PKG_VERSION"))
    );
}

#[tokio::test]
async fn usage_and_config_errors_exit_2_with_a_clear_message() {
    let env = Env::new();
    let r = env.run(&["exec", "hello"], &[], "").await;
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("OPENAI_API_KEY is not set"),
        "{}",
        r.stderr
    );

    let r = env
        .run(&["exec", "--approval", "yolo", "hello"], &[], "")
        .await;
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("yolo"), "{}", r.stderr);

    let r = env
        .run(
            &[
                "exec",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "mock-model",
                "-",
            ],
            &[],
            "  \n",
        )
        .await;
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("prompt is empty"), "{}", r.stderr);

    let cfg = env.home.path().join("config.toml");
    std::fs::write(&cfg, "model = \"m\"\n\n[shell]\ntimeout_secs = \"long\"\n").unwrap();
    let r = env
        .run(
            &[
                "exec",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "mock-model",
                "hi",
            ],
            &[],
            "",
        )
        .await;
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains(&cfg.display().to_string()),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("line 4") && r.stderr.contains("shell.timeout_secs"),
        "{}",
        r.stderr
    );

    std::fs::write(&cfg, "approval = \"ask\"\nmodle = \"typo\"\n").unwrap();
    let r = env
        .run(
            &[
                "exec",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "mock-model",
                "hi",
            ],
            &[],
            "",
        )
        .await;
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("line 2") && r.stderr.contains("modle"),
        "{}",
        r.stderr
    );

    // A misspelt tool in a deny rule would protect nothing: it is an error.
    std::fs::write(
        &cfg,
        "[permissions]\ndeny = [\"exec_shell(rm -rf *)\",\n  \"readfile(.env)\"]\n",
    )
    .unwrap();
    let r = env
        .run(
            &[
                "exec",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "mock-model",
                "hi",
            ],
            &[],
            "",
        )
        .await;
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("line 3")
            && r.stderr.contains("permissions.deny")
            && r.stderr.contains("did you mean `read_file`"),
        "{}",
        r.stderr
    );
    // One rule alone is a list of one.
    std::fs::write(&cfg, "[permissions]\ndeny = \"read_file(.env)\"\n").unwrap();
    std::fs::write(env.ws.path().join(".env"), "SECRET=1\n").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("r", "read_file", json!({"path": ".env"}))),
        Step::Reply(Reply::text("denied")),
    ])
    .await;
    let r = env.exec(&mock, &["--json"], "read .env").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.first("tool_call_finished")["status"], "denied");

    std::fs::remove_file(&cfg).unwrap();
    let r = env
        .run(
            &[
                "exec",
                "-C",
                "/nonexistent/dir",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "hi",
            ],
            &[],
            "",
        )
        .await;
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("/nonexistent/dir"), "{}", r.stderr);
}

#[tokio::test]
async fn json_mode_streams_every_event_of_a_real_session() {
    let env = Env::new();
    std::fs::create_dir(env.ws.path().join("src")).unwrap();
    std::fs::write(
        env.ws.path().join("src/lib.rs"),
        "pub fn answer() -> u32 {\n    41\n}\n",
    )
    .unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools()
                .say("Let me look around.")
                .call("c1", "list_directory", json!({"path": "src"}))
                .call("c2", "read_file", json!({"path": "src/lib.rs"})),
        ),
        Step::Reply(Reply::tools().call(
            "c3",
            "edit_file",
            json!({"path": "src/lib.rs", "old_text": "    41\n", "new_text": "    42\n"}),
        )),
        Step::Reply(Reply::tools().call(
            "c4",
            "exec_shell",
            json!({"command": "grep -n 42 src/lib.rs"}),
        )),
        Step::Reply(Reply::text("The answer is now 42.")),
    ])
    .await;
    let r = env
        .exec(
            &mock,
            &["--json", "--approval", "full-auto"],
            "fix the answer",
        )
        .await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(env.ws.path().join("src/lib.rs")).unwrap(),
        "pub fn answer() -> u32 {\n    42\n}\n"
    );
    let events = r.events();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    for t in [
        "session_started",
        "turn_started",
        "assistant_delta",
        "assistant_message",
        "tool_call_started",
        "tool_progress",
        "guardrail_verdict",
        "tool_call_finished",
        "turn_completed",
    ] {
        assert!(types.contains(&t), "{t} missing from {types:?}");
    }
    assert_eq!(types.first(), Some(&"session_started"));
    assert_eq!(types.last(), Some(&"turn_completed"));
    for e in &events {
        if e["type"].as_str().unwrap().starts_with("tool_") || e["type"] == "guardrail_verdict" {
            assert!(e["call_id"].is_string() && e["tool"].is_string(), "{e}");
        }
    }
    // Each call says what kind of work its tool does.
    let kinds: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e["type"] == "tool_call_started")
        .map(|e| (e["tool"].as_str().unwrap(), e["kind"].as_str().unwrap()))
        .collect();
    for expected in [
        ("list_directory", "list"),
        ("read_file", "read"),
        ("exec_shell", "shell"),
    ] {
        assert!(kinds.contains(&expected), "{kinds:?}");
    }
    let finished: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_call_finished")
        .collect();
    assert_eq!(finished.len(), 4);
    assert!(finished.iter().all(|e| e["status"] == "ok"), "{finished:?}");
    assert_eq!(finished[3]["content"]["stdout"], "2:    42\n");
    // Each says what it found or did, as its tool reads its result.
    assert_eq!(finished[3]["summary"], json!({"kind": "exited", "code": 0}));
    let summaries: Vec<&str> = finished
        .iter()
        .map(|e| e["summary"]["kind"].as_str().unwrap_or("none"))
        .collect();
    assert!(summaries.contains(&"entries"), "{summaries:?}");
    assert!(summaries.contains(&"lines"), "{summaries:?}");
    // A command says how it exited; the others carry no exit code.
    assert_eq!(finished[3]["exit_code"], 0);
    assert!(finished[0].get("exit_code").is_none(), "{}", finished[0]);
    assert!(finished[0]["metadata"]["duration_ms"].is_u64());
    assert_eq!(events.last().unwrap()["text"], "The answer is now 42.");
    // The session journal and the log were written under LATHE_HOME.
    let sessions: Vec<_> = all_files_under(&env.home.path().join("sessions"))
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with(".history.jsonl"))
        .collect();
    assert_eq!(sessions.len(), 1);
    assert!(
        std::fs::read_to_string(&sessions[0])
            .unwrap()
            .contains("\"turn_completed\"")
    );
    assert!(!all_files_under(&env.home.path().join("logs")).is_empty());
}

/// A failing command is a call that worked and a command that failed:
/// `status: ok` with its `exit_code`, as the README's jq line shows, and
/// `✗ … exit 1` on stderr.
#[tokio::test]
async fn a_failing_command_says_how_it_exited() {
    let env = Env::new();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "c1",
            "exec_shell",
            json!({"command": "echo 'test result: FAILED'; exit 1"}),
        )),
        Step::Reply(Reply::text("The tests fail.")),
        Step::Reply(Reply::tools().call("c2", "exec_shell", json!({"command": "exit 1"}))),
        Step::Reply(Reply::text("They still fail.")),
    ])
    .await;
    let r = env
        .exec(
            &mock,
            &["--json", "--approval", "full-auto"],
            "run the tests",
        )
        .await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let finished: Vec<Value> = r
        .events()
        .into_iter()
        .filter(|e| e["type"] == "tool_call_finished")
        .collect();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["status"], "ok");
    assert_eq!(finished[0]["exit_code"], 1);
    let plain = env
        .exec(&mock, &["--approval", "full-auto"], "run the tests again")
        .await;
    assert!(
        plain.stderr.contains("✗ exec_shell exit 1"),
        "stderr: {}",
        plain.stderr
    );
}

/// Headless, the model's question has no one to answer it: the model is
/// told to decide, `turn_completed` lists the question, and the text
/// footer says the model decided itself. Its plan is an event.
#[tokio::test]
async fn headless_questions_are_listed_and_left_to_the_model() {
    let env = Env::new();
    let ask = || {
        Reply::tools()
            .call(
                "q1",
                "ask_user",
                json!({"question": "Port 3000 or 8080?", "choices": ["3000", "8080"]}),
            )
            .call(
                "p1",
                "update_plan",
                json!({"steps": [{"step": "start the server", "status": "in_progress"}]}),
            )
    };
    let mock = MockLlm::start(vec![
        Step::Reply(ask()),
        Step::Reply(Reply::text("I used 3000.")),
        Step::Reply(ask()),
        Step::Reply(Reply::text("I used 3000.")),
    ])
    .await;
    let r = env.exec(&mock, &["--json"], "start it").await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let events = r.events();
    let q = events
        .iter()
        .find(|e| e["type"] == "tool_call_finished" && e["call_id"] == "q1")
        .unwrap()
        .clone();
    assert_eq!(q["status"], "error");
    assert!(
        q["content"]["error"]
            .as_str()
            .unwrap()
            .contains("no one to ask"),
        "{q}"
    );
    let done = events
        .iter()
        .find(|e| e["type"] == "turn_completed")
        .unwrap();
    assert_eq!(done["questions"][0]["question"], "Port 3000 or 8080?");
    assert_eq!(done["questions"][0]["choices"][1], "8080");
    assert!(done["questions"][0]["answer"].is_null());
    let plan = events
        .iter()
        .find(|e| e["type"] == "plan_updated")
        .expect("the plan is an event");
    assert_eq!(plan["steps"][0]["status"], "in_progress");
    let plain = env.exec(&mock, &[], "start it").await;
    assert!(
        plain.stderr.contains(
            "the model asked a question with no one here to answer, so it decided itself"
        ),
        "{}",
        plain.stderr
    );
    assert!(
        plain.stderr.contains("• Port 3000 or 8080?"),
        "{}",
        plain.stderr
    );
}

/// `--plan`: the model only looks, whatever the mode, and the plan is
/// printed.
#[tokio::test]
async fn plan_mode_changes_nothing_and_prints_the_plan() {
    let env = Env::new();
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools()
                .call("w1", "write_file", json!({"path": "a.txt", "content": "x"}))
                .call(
                    "p1",
                    "update_plan",
                    json!({"steps": [{"step": "write a.txt", "status": "pending"}]}),
                ),
        ),
        Step::Reply(Reply::text("Plan: write a.txt.")),
    ])
    .await;
    let r = env
        .exec(&mock, &["--plan", "--approval", "full-auto"], "make a.txt")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!env.ws.path().join("a.txt").exists());
    assert!(r.stderr.contains("plan:\n  ○ write a.txt"), "{}", r.stderr);
    assert_eq!(r.stdout, "Plan: write a.txt.\n");
}

#[tokio::test]
async fn plain_mode_prints_the_answer_on_stdout_and_progress_on_stderr() {
    let env = Env::new();
    std::fs::write(env.ws.path().join("notes.txt"), "remember the milk\n").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().say("Reading the notes.").call(
            "c1",
            "read_file",
            json!({"path": "notes.txt"}),
        )),
        Step::Reply(Reply::text("The note says: remember the milk.")),
    ])
    .await;
    let r = env.exec(&mock, &[], "what does the note say?").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "The note says: remember the milk.\n");
    assert!(r.stderr.contains("▸ read_file notes.txt"), "{}", r.stderr);
    assert!(r.stderr.contains("✓ read_file ok"), "{}", r.stderr);
    assert!(r.stderr.contains("Reading the notes."), "{}", r.stderr);
}

#[tokio::test]
async fn the_prompt_can_come_from_stdin() {
    let env = Env::new();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("got it"))]).await;
    let url = mock.openai_url();
    let r = env
        .run(
            &["exec", "--base-url", &url, "--model", "mock-model", "-"],
            &[("OPENAI_API_KEY", SECRET)],
            "a prompt\nover two lines\n",
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let body = &mock.requests()[0].body;
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    assert_eq!(user["content"], "a prompt\nover two lines\n");
}

/// `git diff | lathe exec "review this"`: the prompt, then the piped text
/// in a fenced block (a fence longer than any inside it).
#[tokio::test]
async fn piped_input_goes_along_with_a_prompt_argument() {
    let env = Env::new();
    let user_message = |mock: &MockLlm| {
        mock.requests()[0].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "user")
            .unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("reviewed"))]).await;
    let url = mock.openai_url();
    let diff = "diff --git a/x b/x\n+```rust\n+fn x() {}\n+```\n";
    let r = env
        .run(
            &[
                "exec",
                "--base-url",
                &url,
                "--model",
                "mock-model",
                "review this diff",
            ],
            &[("OPENAI_API_KEY", SECRET)],
            diff,
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        user_message(&mock),
        "review this diff\n\n````\ndiff --git a/x b/x\n+```rust\n+fn x() {}\n+```\n````"
    );
    // Nothing piped: the prompt alone.
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("ok"))]).await;
    let url = mock.openai_url();
    env.run(
        &[
            "exec",
            "--base-url",
            &url,
            "--model",
            "mock-model",
            "just this",
        ],
        &[("OPENAI_API_KEY", SECRET)],
        "",
    )
    .await;
    assert_eq!(user_message(&mock), "just this");
}

#[tokio::test]
async fn anthropic_works_through_the_binary() {
    let env = Env::new();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("toolu_1", "list_directory", json!({}))),
        Step::Reply(Reply::text("Empty workspace.")),
    ])
    .await;
    let url = mock.anthropic_url();
    let r = env
        .run(
            &[
                "exec",
                "--provider",
                "anthropic",
                "--base-url",
                &url,
                "--model",
                "mock-model",
                "--json",
                "look",
            ],
            &[("ANTHROPIC_API_KEY", SECRET)],
            "",
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let reqs = mock.requests();
    assert_eq!(reqs[0].path, "/v1/messages");
    assert_eq!(reqs[0].headers["x-api-key"], SECRET);
    let results = tool_results(&reqs[1]);
    assert_eq!(results[0].0, "toolu_1");
    assert!(results[0].1["entries"].is_array());
    assert_eq!(r.events().last().unwrap()["text"], "Empty workspace.");
}

#[tokio::test]
async fn failed_turns_exit_1() {
    let env = Env::new();
    let looping = || Step::Reply(Reply::tools().call("c", "list_directory", json!({})));
    let mock = MockLlm::start(vec![looping(), looping(), looping()]).await;
    let r = env
        .exec(&mock, &["--max-tool-iterations", "1"], "loop")
        .await;
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("max tool iterations (1) exceeded"),
        "{}",
        r.stderr
    );

    std::fs::write(
        env.home.path().join("config.toml"),
        "[network]\nretry_base_ms = 1\n",
    )
    .unwrap();
    let boom = || Step::Status {
        status: 502,
        message: "upstream exploded".into(),
        retry_after: None,
    };
    let mock = MockLlm::start(vec![boom(), boom(), boom(), boom(), boom()]).await;
    let r = env.exec(&mock, &["--json"], "hi").await;
    assert_eq!(r.code, 1);
    let last = r.events().pop().unwrap();
    assert_eq!(last["type"], "error");
    assert_eq!(last["kind"], "provider");
    let msg = last["message"].as_str().unwrap();
    assert!(
        msg.contains("HTTP 502") && msg.contains("upstream exploded"),
        "{msg}"
    );
    let retries = r
        .events()
        .iter()
        .filter(|e| e["type"] == "provider_retry")
        .count();
    assert_eq!(retries, 4);

    // A server that is not there at all.
    let r = env
        .run(
            &[
                "exec",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "mock-model",
                "hi",
            ],
            &[("OPENAI_API_KEY", SECRET)],
            "",
        )
        .await;
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains(
            "nothing answers at http://127.0.0.1:9/v1/chat/completions (connection refused): \
             is the server at http://127.0.0.1:9 running?"
        ),
        "{}",
        r.stderr
    );
}

#[tokio::test]
async fn headless_ask_denies_changes_and_the_model_is_told() {
    let env = Env::new();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "w",
            "write_file",
            json!({"path": "a.txt", "content": "x"}),
        )),
        Step::Reply(Reply::text("I was not allowed to write a.txt.")),
    ])
    .await;
    let r = env.exec(&mock, &["--json"], "write a.txt").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!env.ws.path().join("a.txt").exists());
    let requested = r.first("approval_requested");
    assert_eq!(requested["tool"], "write_file");
    assert_eq!(requested["needs"][0]["what"], "write a.txt");
    assert_eq!(requested["grant"]["covers"][0], "writes to a.txt");
    assert_eq!(requested["operations"][0]["kind"], "file");
    let decided = r.first("approval_decided");
    assert_eq!(decided["decision"], "deny");
    assert_eq!(decided["source"], "policy");
    assert_eq!(r.first("tool_call_finished")["status"], "denied");
    let told = tool_results(&mock.requests()[1]);
    assert!(
        told[0].1["error"]
            .as_str()
            .unwrap()
            .contains("--approval auto-edit")
    );
}

/// Headless says what it could not do: `turn_completed.denied` names each
/// denied call and what it needed, stderr counts calls (one line each, a
/// deletion called a deletion), the advice fits the mode, and
/// `--deny-exit-code` fails the run for CI.
#[tokio::test]
async fn headless_says_what_it_could_not_do() {
    let env = Env::new();
    std::fs::write(env.ws.path().join("old.txt"), "x\n").unwrap();
    let round = || {
        vec![
            Step::Reply(
                Reply::tools()
                    .call("w", "write_file", json!({"path": "a.txt", "content": "x"}))
                    .call("d", "delete_file", json!({"path": "old.txt"}))
                    .call("r", "read_file", json!({"path": "../outside.txt"})),
            ),
            Step::Reply(Reply::text("All done, the tests pass.")),
        ]
    };
    let mock = MockLlm::start(round().into_iter().chain(round()).chain(round()).collect()).await;
    let r = env.exec(&mock, &["--json"], "tidy up").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let done = r.first("turn_completed");
    let denied = done["denied"].as_array().expect("denied calls listed");
    let ids: Vec<&str> = denied
        .iter()
        .map(|d| d["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["w", "d", "r"], "{done}");
    assert_eq!(denied[0]["tool"], "write_file");
    assert_eq!(denied[0]["needed"][0], "write a.txt");
    assert_eq!(denied[1]["needed"][0], "delete old.txt");
    assert!(denied[2].get("needed").is_none(), "{}", denied[2]);
    assert!(
        denied[2]["reason"].as_str().unwrap().contains("outside"),
        "{}",
        denied[2]
    );
    assert!(env.ws.path().join("old.txt").exists());

    // For a person: one line per call, and advice for the mode in use.
    let r = env.exec(&mock, &[], "tidy up").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("lathe: 3 calls were denied"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("• write_file: write a.txt"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("• delete_file: delete old.txt"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("--approval auto-edit (file edits)."),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("full-auto"),
        "only file edits asked: {}",
        r.stderr
    );

    // CI: any denial fails the run with the status asked for.
    let r = env.exec(&mock, &["--deny-exit-code", "3"], "tidy up").await;
    assert_eq!(r.code, 3, "{}", r.stderr);

    // In full-auto nothing of this asks; what still would is never
    // advised to be run in full-auto.
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("r", "read_file", json!({"path": "../outside.txt"}))),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let r = env
        .exec(
            &mock,
            &["--approval", "full-auto", "--deny-exit-code", "4"],
            "read it",
        )
        .await;
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert!(
        r.stderr.contains("lathe: 1 call was denied"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("--approval"), "{}", r.stderr);
}

#[tokio::test]
async fn api_keys_never_reach_output_files_or_child_processes() {
    let env = Env::new();
    std::fs::write(env.ws.path().join("leak.txt"), format!("key={SECRET}\n")).unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools()
                .call(
                    "c1",
                    "exec_shell",
                    json!({"command": "env; echo \"[$OPENAI_API_KEY]\""}),
                )
                .call("c2", "read_file", json!({"path": "leak.txt"})),
        ),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let r = env
        .run(
            &[
                "exec",
                "--json",
                "--approval",
                "full-auto",
                "--base-url",
                &mock.openai_url(),
                "--model",
                "mock-model",
                "go",
            ],
            &[("OPENAI_API_KEY", SECRET), ("RUST_LOG", "trace")],
            "",
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        mock.requests()[0].headers["authorization"],
        format!("Bearer {SECRET}")
    );
    let shell = r.first("tool_call_finished");
    assert!(
        shell["content"]["stdout"].as_str().unwrap().contains("[]"),
        "the child saw no key"
    );
    assert!(!r.stdout.contains(SECRET), "stdout leaks the key");
    assert!(!r.stderr.contains(SECRET), "stderr leaks the key");
    assert!(
        !mock.requests()[1].body.to_string().contains(SECRET),
        "the model saw the key"
    );
    for file in all_files_under(env.home.path()) {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        assert!(!text.contains(SECRET), "{} leaks the key", file.display());
    }
}

#[tokio::test]
async fn sigint_interrupts_the_turn_and_exits_130() {
    let env = Env::new();
    let mock = MockLlm::start(vec![Step::Hang(Reply::text("this answer never ends"))]).await;
    let url = mock.openai_url();
    let child = env
        .command(
            &[
                "exec",
                "--json",
                "--base-url",
                &url,
                "--model",
                "mock-model",
                "hi",
            ],
            &[("OPENAI_API_KEY", SECRET)],
        )
        .spawn()
        .unwrap();
    // Wait until the stream is running.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while mock.requests().is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(out.status.code(), Some(130));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "error");
    assert_eq!(last["kind"], "interrupted");
}

/// A trusted workspace hook's script is not the model's to rewrite: the
/// write asks (and headless, is denied) in every mode, and the hook keeps
/// running the script the person trusted.
#[tokio::test]
async fn the_scripts_of_workspace_hooks_cannot_be_rewritten_to_run_code() {
    let env = Env::new();
    let ws = env.ws.path();
    std::fs::create_dir_all(ws.join(".lathe")).unwrap();
    std::fs::create_dir_all(ws.join("scripts")).unwrap();
    std::fs::write(
        ws.join(".lathe/config.toml"),
        "[[hooks.after_tool_call]]\nmatch = \"*\"\ncommand = \"./scripts/audit.sh\"\n",
    )
    .unwrap();
    let audit = ws.join("scripts/audit.sh");
    std::fs::write(
        &audit,
        "#!/bin/sh\ncat > /dev/null\necho call >> audit.log\n",
    )
    .unwrap();
    std::fs::set_permissions(&audit, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let hostile = "#!/bin/sh\nid > pwned\n";
    for mode in ["auto-edit", "full-auto"] {
        let mock =
            MockLlm::start(vec![
            Step::Reply(
                Reply::tools()
                    .call(
                        "w",
                        "write_file",
                        json!({"path": "scripts/audit.sh", "content": hostile}),
                    )
                    .call(
                        "s",
                        "exec_shell",
                        json!({"command": "printf 'id > pwned' > ./scripts/../scripts/audit.sh"}),
                    )
                    .call("n", "write_file", json!({"path": "notes.txt", "content": "x"})),
            ),
            Step::Reply(Reply::text("done")),
        ])
            .await;
        let r = env
            .exec(
                &mock,
                &["--json", "--approval", mode, "--trust-workspace-hooks"],
                "go",
            )
            .await;
        assert_eq!(r.code, 0, "{}", r.stderr);
        let statuses: Vec<(String, String)> = r
            .events()
            .into_iter()
            .filter(|e| e["type"] == "tool_call_finished")
            .map(|e| {
                (
                    e["call_id"].as_str().unwrap().to_string(),
                    e["status"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert!(
            statuses.contains(&("w".into(), "denied".into()))
                && statuses.contains(&("s".into(), "denied".into()))
                && statuses.contains(&("n".into(), "ok".into())),
            "{mode}: {statuses:?}"
        );
        assert!(!ws.join("pwned").exists(), "{mode}: the rewritten hook ran");
        assert!(
            std::fs::read_to_string(&audit)
                .unwrap()
                .contains("audit.log"),
            "{mode}: the script was rewritten"
        );
        assert!(
            r.stderr.contains("this workspace's hooks run"),
            "{}",
            r.stderr
        );
    }
    // The trusted script ran after each allowed call.
    assert!(
        std::fs::read_to_string(ws.join("audit.log"))
            .unwrap()
            .lines()
            .count()
            >= 2
    );
}

/// A server that answers every request with a redirect to `to`, and
/// counts what it got.
async fn redirector(status: &'static str, to: String) -> (String, tokio::task::JoinHandle<()>) {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let mut buf = vec![0u8; 65536];
            let _ = sock.read(&mut buf).await;
            let reply = format!(
                "HTTP/1.1 {status}\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = sock.write_all(reply.as_bytes()).await;
        }
    });
    (format!("http://{addr}"), task)
}

/// Redirects (301, 302, 307, 308) are never followed, with either
/// provider: the key and the conversation reach no other host, and the
/// error names where the server pointed.
#[tokio::test]
async fn redirects_are_never_followed() {
    let env = Env::new();
    let elsewhere = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let target = format!(
        "http://{}/v1/chat/completions",
        elsewhere.local_addr().unwrap()
    );
    for status in [
        "301 Moved Permanently",
        "302 Found",
        "307 Temporary Redirect",
        "308 Permanent Redirect",
    ] {
        let (base, server) = redirector(status, target.clone()).await;
        for (provider, url, key) in [
            ("openai", format!("{base}/v1"), "OPENAI_API_KEY"),
            ("anthropic", base.clone(), "ANTHROPIC_API_KEY"),
        ] {
            let run = env
                .run(
                    &[
                        "exec",
                        "--provider",
                        provider,
                        "--base-url",
                        &url,
                        "--model",
                        "m",
                        "hi",
                    ],
                    &[(key, SECRET)],
                    "",
                )
                .await;
            assert_eq!(run.code, 1, "{provider} {status}: {}", run.stderr);
            assert!(
                run.stderr.contains("redirects to") && run.stderr.contains(&target),
                "{provider} {status}: {}",
                run.stderr
            );
            assert!(!run.stderr.contains(SECRET));
        }
        server.abort();
    }
    // Nothing ever reached the other host.
    let reached = tokio::time::timeout(Duration::from_millis(200), elsewhere.accept()).await;
    assert!(reached.is_err(), "a redirect was followed");
}

/// The person's own hook runs outside the sandbox. A command the analysis
/// cannot see into (a script) must not be able to rewrite the workspace
/// file that hook runs, nor swap the directory it lives in: the file is
/// read-only to commands, and a hook whose file changed anyway refuses to
/// run until Lathe restarts.
#[tokio::test]
async fn a_command_cannot_rewrite_what_the_persons_own_hook_runs() {
    let env = Env::new();
    let ws = env.ws.path();
    let home = env.home.path();
    std::fs::write(
        home.join("config.toml"),
        "[[hooks.after_tool_call]]\nmatch = \"*\"\ncommand = \"./scripts/audit.sh\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.join("scripts")).unwrap();
    let audit = ws.join("scripts/audit.sh");
    std::fs::write(
        &audit,
        "#!/bin/sh\ncat > /dev/null\necho call >> audit.log\n",
    )
    .unwrap();
    std::fs::set_permissions(&audit, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let pwned = home.join("pwned");
    let hostile = format!("#!/bin/sh\nid > '{}'\n", pwned.display());
    std::fs::write(
        ws.join("rewrite.sh"),
        format!("printf '{hostile}' > scripts/audit.sh; echo rewrite=$?"),
    )
    .unwrap();
    std::fs::write(
        ws.join("swap.sh"),
        format!(
            "mv scripts scripts.old && mkdir scripts && printf '{hostile}' > scripts/audit.sh && chmod +x scripts/audit.sh; echo swap=$?"
        ),
    )
    .unwrap();
    for script in ["rewrite.sh", "swap.sh"] {
        let mock = MockLlm::start(vec![
            Step::Reply(Reply::tools().call(
                "s",
                "exec_shell",
                json!({"command": format!("bash {script}")}),
            )),
            Step::Reply(Reply::tools().call("n", "list_directory", json!({"path": "."}))),
            Step::Reply(Reply::text("done")),
        ])
        .await;
        let r = env
            .exec(&mock, &["--json", "--approval", "full-auto"], "go")
            .await;
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            !pwned.exists(),
            "{script}: the rewritten hook ran: {}",
            r.stdout
        );
        if script == "rewrite.sh" {
            assert!(
                std::fs::read_to_string(&audit)
                    .unwrap()
                    .contains("audit.log"),
                "the script was rewritten in place"
            );
            assert!(r.stdout.contains("rewrite=1"), "{}", r.stdout);
        }
    }
}

/// A hook script that does not exist when Lathe starts is pinned as
/// absent: a command that creates it does not get it run, confined or
/// not.
#[tokio::test]
async fn a_hook_script_a_command_creates_does_not_run() {
    let env = Env::new();
    let ws = env.ws.path();
    let home = env.home.path();
    std::fs::write(
        home.join("config.toml"),
        "[[hooks.after_tool_call]]\nmatch = \"exec_shell\"\ncommand = \"./scripts/audit.sh\"\nsandbox = false\n",
    )
    .unwrap();
    let pwned = home.join("pwned");
    // What the analysis cannot see into: a script.
    std::fs::write(
        ws.join("create.sh"),
        format!(
            "mkdir -p scripts && printf '#!/bin/sh\\nid > {}\\n' > scripts/audit.sh && chmod +x scripts/audit.sh",
            pwned.display()
        ),
    )
    .unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("s", "exec_shell", json!({"command": "bash create.sh"}))),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let r = env
        .exec(&mock, &["--json", "--approval", "full-auto"], "go")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(ws.join("scripts/audit.sh").exists(), "{}", r.stdout);
    assert!(!pwned.exists(), "the created hook script ran: {}", r.stdout);
}

fn messages(mock: &MockLlm, i: usize) -> Vec<Value> {
    mock.requests()[i].body["messages"]
        .as_array()
        .unwrap()
        .clone()
}

/// `--continue` goes on with the newest session of the workspace, its
/// conversation exact; `--resume ID` with a given one; an unknown id is a
/// usage error naming it; `lathe sessions` lists them.
#[tokio::test]
async fn sessions_continue_and_resume_with_the_conversation_exact() {
    let env = Env::new();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "w",
            "write_file",
            json!({"path": "a.txt", "content": "one"}),
        )),
        Step::Reply(Reply::text("wrote a.txt")),
    ])
    .await;
    let r = env
        .exec(&mock, &["--json", "--approval", "full-auto"], "first task")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = r.first("session_started")["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let mock2 = MockLlm::start(vec![Step::Reply(Reply::text("continued"))]).await;
    let r = env
        .exec(&mock2, &["--json", "--continue"], "second task")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.first("session_started")["session_id"], id.as_str());
    let sent = messages(&mock2, 0);
    let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"],
        "{sent:?}"
    );
    assert_eq!(sent[1]["content"], "first task");
    assert_eq!(sent[2]["tool_calls"][0]["function"]["name"], "write_file");
    assert!(
        sent[3]["content"]
            .as_str()
            .unwrap()
            .contains("created a.txt")
    );
    assert_eq!(sent[4]["content"], "wrote a.txt");
    assert_eq!(sent[5]["content"], "second task");
    // By id, and listed.
    let mock3 = MockLlm::start(vec![Step::Reply(Reply::text("third"))]).await;
    let r = env
        .exec(&mock3, &["--json", "--resume", &id], "third task")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(messages(&mock3, 0).len(), 8);
    let listed = env.run(&["sessions", "--json"], &[], "").await;
    let rows: Vec<Value> = listed
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 1, "{}", listed.stdout);
    assert_eq!(rows[0]["id"], id.as_str());
    assert_eq!(rows[0]["turns"], 3);
    assert_eq!(rows[0]["first_prompt"], "first task");
    let r = env
        .exec(&mock3, &["--resume", "no-such-session"], "x")
        .await;
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no-such-session"), "{}", r.stderr);
}

/// A session killed while a command ran: resumed, the model is told the
/// call was interrupted, and it is not run again.
#[tokio::test]
async fn a_killed_session_resumes_with_the_unfinished_call_reported_not_rerun() {
    let env = Env::new();
    let counter = env.ws.path().join("ran.txt");
    std::fs::write(
        env.ws.path().join("work.sh"),
        format!("echo run >> '{}'; sleep 30\n", counter.display()),
    )
    .unwrap();
    let mock = MockLlm::start(vec![Step::Reply(Reply::tools().call(
        "c",
        "exec_shell",
        json!({"command": "bash work.sh"}),
    ))])
    .await;
    let url = mock.openai_url();
    let mut child = env
        .command(
            &[
                "exec",
                "--json",
                "--base-url",
                &url,
                "--model",
                "m",
                "--approval",
                "full-auto",
                "go",
            ],
            &[("OPENAI_API_KEY", SECRET)],
        )
        .spawn()
        .unwrap();
    drop(child.stdin.take());
    // Wait until the command has run, then kill Lathe outright.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(&counter)
        .unwrap_or_default()
        .is_empty()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never ran"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.start_kill().unwrap();
    let _ = child.wait().await;
    let mock2 = MockLlm::start(vec![Step::Reply(Reply::text("noted"))]).await;
    let r = env
        .exec(&mock2, &["--json", "--continue"], "what happened?")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sent = messages(&mock2, 0);
    let tool = sent.iter().find(|m| m["role"] == "tool").unwrap();
    assert!(
        tool["content"].as_str().unwrap().contains("not run again"),
        "{sent:?}"
    );
    let last = sent.last().unwrap()["content"].as_str().unwrap();
    assert!(
        last.contains("cut off") && last.ends_with("what happened?"),
        "{last}"
    );
    assert_eq!(
        std::fs::read_to_string(&counter).unwrap().lines().count(),
        1,
        "the command ran once"
    );
}

/// A first session that read a big file, for the compaction tests.
async fn session_with_a_big_read(env: &Env) {
    let line = "fn main() { println!(\"this line is part of a rather large file\"); }\n";
    std::fs::write(env.ws.path().join("big.rs"), line.repeat(120)).unwrap();
    std::fs::write(
        env.ws.path().join("small.rs"),
        "// a small file\n".repeat(30),
    )
    .unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("r1", "read_file", json!({"path": "big.rs"}))),
        Step::Reply(Reply::tools().call("r2", "read_file", json!({"path": "small.rs"}))),
        Step::Reply(Reply::text("Both files print one line many times.")),
    ])
    .await;
    let r = env
        .exec(
            &mock,
            &["--json", "--approval", "full-auto"],
            "what do big.rs and small.rs do",
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
}

fn request_bytes(mock: &MockLlm, i: usize) -> usize {
    mock.requests()[i].body["messages"].to_string().len()
}

#[tokio::test]
async fn a_context_length_refusal_compacts_and_the_request_goes_again_smaller() {
    let env = Env::new();
    session_with_a_big_read(&env).await;
    let mock = MockLlm::start(vec![
        Step::Status {
            status: 400,
            message: "This model's maximum context length is 4096 tokens. However, your \
                      messages resulted in 5120 tokens. Please reduce the length of the messages."
                .into(),
            retry_after: None,
        },
        Step::Reply(Reply::text(
            "SUMMARY: the person asked what big.rs and small.rs do; both print one line.",
        )),
        Step::Reply(Reply::text("Now on to the next thing.")),
    ])
    .await;
    let r = env
        .exec(&mock, &["--json", "--continue"], "next: add a test")
        .await;
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let compacted = r.first("context_compacted");
    assert_eq!(compacted["reason"], "overflow");
    assert!(compacted["after_tokens"].as_u64() < compacted["before_tokens"].as_u64());
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    // The summary request: the old part as a transcript, no tools.
    let ask = &requests[1].body;
    assert!(
        ask.get("tools")
            .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)),
        "{ask}"
    );
    let ask_text = ask["messages"].to_string();
    assert!(
        ask_text.contains("what do big.rs and small.rs do"),
        "{ask_text}"
    );
    assert!(
        !ask_text.contains("next: add a test"),
        "the new message stays verbatim"
    );
    // The request again: smaller, with the summary, the new message once.
    assert!(request_bytes(&mock, 2) * 2 < request_bytes(&mock, 0));
    let sent = messages(&mock, 2);
    let all = serde_json::to_string(&sent).unwrap();
    assert!(all.contains("SUMMARY: the person asked"), "{all}");
    assert_eq!(all.matches("next: add a test").count(), 1, "{all}");
    assert!(!all.contains("rather large file"), "{all}");
    assert_eq!(
        r.stdout
            .lines()
            .filter(|l| l.contains("turn_completed"))
            .count(),
        1
    );

    // Resumed later, the conversation is the compacted one.
    let mock2 = MockLlm::start(vec![Step::Reply(Reply::text("ok"))]).await;
    let r = env
        .exec(&mock2, &["--json", "--continue"], "and then?")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let resumed = serde_json::to_string(&messages(&mock2, 0)).unwrap();
    assert!(resumed.contains("SUMMARY: the person asked"), "{resumed}");
    assert!(!resumed.contains("rather large file"), "{resumed}");
    assert!(resumed.contains("Now on to the next thing."), "{resumed}");
}

#[tokio::test]
async fn a_nearly_full_context_is_compacted_before_the_request() {
    let env = Env::new();
    session_with_a_big_read(&env).await;
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::text(
            "SUMMARY: two files were read; both print a line.",
        )),
        Step::Reply(Reply::text("Done.")),
    ])
    .await;
    let url = mock.openai_url();
    let r = env
        .run(
            &[
                "exec",
                "--json",
                "--base-url",
                &url,
                "--model",
                "mock-model",
                "--continue",
                "go on",
            ],
            &[("OPENAI_API_KEY", SECRET), ("LATHE_CONTEXT_WINDOW", "2500")],
            "",
        )
        .await;
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.first("context_compacted")["reason"], "auto");
    let window = r
        .events()
        .into_iter()
        .rfind(|e| e["type"] == "context_updated")
        .unwrap();
    assert_eq!(window["window"], 2500);
    assert!(
        window["tokens"].as_u64().unwrap() < 2500 * 85 / 100,
        "{window}"
    );
    let sent = serde_json::to_string(&messages(&mock, 1)).unwrap();
    assert!(sent.contains("SUMMARY: two files were read"), "{sent}");
    assert!(
        sent.contains("Both files print one line"),
        "the recent part is kept: {sent}"
    );
    assert!(!sent.contains("rather large file"), "{sent}");
}

#[tokio::test]
async fn headless_keeps_the_tool_round_limit_as_an_error() {
    let env = Env::new();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("a", "list_dir", json!({"path": "."}))),
        Step::Reply(Reply::tools().call("b", "list_dir", json!({"path": "."}))),
    ])
    .await;
    let r = env
        .exec(
            &mock,
            &["--json", "--max-tool-iterations", "1"],
            "look around",
        )
        .await;
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        !r.stdout.contains("tool_limit_reached"),
        "nobody to ask headless"
    );
    assert!(
        r.stdout.contains("max tool iterations (1) exceeded"),
        "{}",
        r.stdout
    );
}

/// A deletion and a move are changes like any other: shown, written as
/// shown, reported with their diff; a move never replaces a file.
#[tokio::test]
async fn files_are_deleted_and_moved_as_changes() {
    let env = Env::new();
    std::fs::create_dir(env.ws.path().join("src")).unwrap();
    std::fs::write(env.ws.path().join("src/old.rs"), "fn old() {}\n").unwrap();
    std::fs::write(env.ws.path().join("src/a.rs"), "fn a() {}\n").unwrap();
    std::fs::write(env.ws.path().join("taken.rs"), "mine\n").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools()
                .call("d", "delete_file", json!({"path": "src/old.rs"}))
                .call(
                    "m",
                    "move_file",
                    json!({"from": "src/a.rs", "to": "lib/b.rs"}),
                )
                .call(
                    "x",
                    "move_file",
                    json!({"from": "lib/b.rs", "to": "taken.rs"}),
                ),
        ),
        Step::Reply(Reply::text("Tidied.")),
    ])
    .await;
    let r = env
        .exec(&mock, &["--json", "--approval", "full-auto"], "tidy up")
        .await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(!env.ws.path().join("src/old.rs").exists());
    assert!(!env.ws.path().join("src/a.rs").exists());
    assert_eq!(
        std::fs::read_to_string(env.ws.path().join("lib/b.rs")).unwrap(),
        "fn a() {}\n"
    );
    assert_eq!(
        std::fs::read_to_string(env.ws.path().join("taken.rs")).unwrap(),
        "mine\n"
    );
    let events = r.events();
    let finished = |id: &str| {
        events
            .iter()
            .find(|e| e["type"] == "tool_call_finished" && e["call_id"] == id)
            .cloned()
            .unwrap()
    };
    let d = finished("d");
    assert_eq!(d["status"], "ok", "{d}");
    assert!(
        d["diff"]
            .as_str()
            .unwrap()
            .contains("+++ /dev/null\n@@ -1 +0,0 @@\n-fn old() {}"),
        "{d}"
    );
    let m = finished("m");
    assert_eq!(m["status"], "ok", "{m}");
    assert_eq!(m["diff"], "--- a/src/a.rs\n+++ b/lib/b.rs\n");
    let x = finished("x");
    assert_eq!(x["status"], "error", "{x}");
    assert!(x.to_string().contains("already exists"), "{x}");
}

/// A command the model left running in the background dies with Lathe,
/// even when Lathe is killed outright (SIGKILL: no chance to clean up).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_commands_die_with_a_killed_lathe() {
    let env = Env::new();
    let marker = format!("sleep 5{}", std::process::id() % 10_000);
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "b1",
            "exec_shell",
            json!({"command": marker, "background": true}),
        )),
        Step::Slow(Reply::text("never"), Duration::from_secs(60)),
    ])
    .await;
    let url = mock.openai_url();
    let mut child = env
        .command(
            &[
                "exec",
                "--base-url",
                &url,
                "--model",
                "mock-model",
                "--approval",
                "full-auto",
                "start it",
            ],
            &[("OPENAI_API_KEY", SECRET)],
        )
        .spawn()
        .unwrap();
    let running = || {
        std::process::Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !running() {
        assert!(std::time::Instant::now() < deadline, "it never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.start_kill().unwrap();
    let _ = child.wait().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while running() {
        assert!(
            std::time::Instant::now() < deadline,
            "a background command outlived a killed lathe"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `[judge] model` in the person's config: a deletion full-auto would run
/// unasked goes to the judge first; its escalation denies it headless
/// (the model told why, the run says so); a workspace config cannot set
/// or change the judge.
#[tokio::test]
async fn the_judge_stops_a_risky_call_headless() {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[judge]\nmodel = \"judge-model\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(env.ws.path().join(".lathe")).unwrap();
    std::fs::write(
        env.ws.path().join(".lathe/config.toml"),
        "[judge]\nmodel = \"lenient\"\n",
    )
    .unwrap();
    std::fs::write(env.ws.path().join("notes.txt"), "keep\n").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("c1", "exec_shell", json!({"command": "rm -f notes.txt"}))),
        Step::Reply(Reply::text(
            r#"{"verdict": "escalate", "reason": "the notes were not asked to go"}"#,
        )),
        Step::Reply(Reply::text("I left the notes.")),
    ])
    .await;
    let r = env
        .exec(
            &mock,
            &["--json", "--approval", "full-auto"],
            "clean the build",
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(env.ws.path().join("notes.txt").exists());
    assert!(r.stderr.contains("ignored [judge]"), "{}", r.stderr);
    let events = r.events();
    let judged = events
        .iter()
        .find(|e| e["type"] == "judged")
        .expect("judged");
    assert_eq!(judged["model"], "judge-model");
    assert_eq!(judged["allowed"], false);
    let done = events
        .iter()
        .find(|e| e["type"] == "tool_call_finished")
        .unwrap();
    assert_eq!(done["status"], "denied");
    assert!(
        done["content"]["error"]
            .as_str()
            .unwrap()
            .contains("the notes were not asked to go"),
        "{done}"
    );
    assert_eq!(mock.requests()[1].body["model"], "judge-model");
}

/// A server that streams an answer without end is cut off at the
/// response's limit (`[limits] response_text_mib`): the turn fails with a
/// clear error (exit 1), memory stays bounded, and the session goes on.
#[tokio::test]
async fn an_endless_answer_is_cut_off_and_the_session_goes_on() {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[limits]\nresponse_text_mib = 1\n",
    )
    .unwrap();
    let piece = "y".repeat(1000);
    let endless: String = (0..3000)
        .map(|_| {
            format!(
                "data: {}\n\n",
                json!({"choices": [{"index": 0, "delta": {"content": piece}}]})
            )
        })
        .collect();
    let mock = MockLlm::start(vec![
        Step::Raw(endless),
        Step::Reply(Reply::text("a short answer")),
    ])
    .await;
    let r = env.exec(&mock, &[], "talk").await;
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("passed 1 MiB") && r.stderr.contains("response_text_mib"),
        "{}",
        r.stderr
    );
    assert_eq!(mock.requests().len(), 1, "not asked again");
    let r = env.exec(&mock, &["--continue"], "again").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("a short answer"), "{}", r.stdout);
}

/// What Lathe itself writes to the terminal quotes a repository, a
/// server or a record, and none of it can drive the terminal: a rule with
/// a clipboard write in a headless warning, a title change in the first
/// words of a session in `lathe sessions`.
#[tokio::test]
async fn warnings_and_listings_cannot_drive_the_terminal() {
    let env = Env::new();
    std::fs::create_dir_all(env.ws.path().join(".lathe")).unwrap();
    std::fs::write(
        env.ws.path().join(".lathe/config.toml"),
        "[permissions]\nallow = [\"read_file(\\u001b]52;c;cHduZWQ=\\u0007x\\u001b]0;owned\\u0007)\"]\n",
    )
    .unwrap();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("ok"))]).await;
    let r = env
        .exec(
            &mock,
            &[],
            "hello \u{1b}]0;my title\u{7} \u{1b}[31mred\u{9b}0m",
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("ignored allow rule"), "{}", r.stderr);
    for (what, text) in [("stderr", &r.stderr), ("stdout", &r.stdout)] {
        assert!(
            !text.contains(['\u{1b}', '\u{7}', '\u{9b}']),
            "{what}: {text:?}"
        );
    }
    let listed = env.run(&["sessions"], &[], "").await;
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    assert!(listed.stdout.contains("hello"), "{}", listed.stdout);
    assert!(
        !listed.stdout.contains(['\u{1b}', '\u{7}', '\u{9b}']),
        "{:?}",
        listed.stdout
    );
}

/// A person's hook that runs a task runner (`make -s hookcheck`, `npm
/// run check`, `just check`) runs what its file says: a change to the
/// Makefile, `package.json` or justfile asks in every mode (headless:
/// denied), written by a tool or by a command, there or not yet.
#[tokio::test]
async fn the_files_a_hook_runs_as_instructions_ask_in_every_mode() {
    for (hook, file, hostile) in [
        (
            "make -s hookcheck",
            "Makefile",
            "hookcheck:\n\tid > pwned\n",
        ),
        (
            "npm run -s check",
            "package.json",
            r#"{"scripts": {"check": "id > pwned"}}"#,
        ),
        ("just check", "justfile", "check:\n    id > pwned\n"),
        ("make -f ci.mk lint", "ci.mk", "lint:\n\tid > pwned\n"),
        (
            "make -s -C sub hookcheck",
            "sub/Makefile",
            "hookcheck:\n\tid > pwned\n",
        ),
        (
            "make -s --directory=sub hookcheck",
            "sub/Makefile",
            "hookcheck:\n\tid > pwned\n",
        ),
        (
            "npm run -s check --prefix sub",
            "sub/package.json",
            r#"{"scripts": {"check": "id > pwned"}}"#,
        ),
        // A file the Makefile includes runs as it does.
        ("make -s inc", "rules.mk", "CHECK = id > pwned\n"),
        // However the include is written, and what the recipes run.
        ("make -s tab", "tab.mk", "CHECK = id > pwned\n"),
        ("make -s cont", "cont.mk", "CHECK = id > pwned\n"),
        ("make -s curdir", "cur.mk", "CHECK = id > pwned\n"),
        ("make -s globbed", "mk/new.mk", "CHECK = id > pwned\n"),
        ("make -s -I idir idir", "idir/i.mk", "CHECK = id > pwned\n"),
        ("make -s script", "scripts/check.sh", "id > pwned\n"),
        // What package.json's scripts run, and a workspace's manifest.
        (
            "npm run -s lint",
            "scripts/lint.js",
            "require('child_process').execSync('id > pwned')\n",
        ),
        (
            "npm run -s check -w pkg",
            "pkg/package.json",
            r#"{"scripts": {"check": "id > pwned"}}"#,
        ),
    ] {
        let env = Env::new();
        std::fs::create_dir_all(env.ws.path().join("sub")).unwrap();
        for (path, text) in [
            (
                "Makefile",
                "include rules.mk\ninc:\n\t@$(CHECK)\n\
                 include\ttab.mk\n-include a.mk \\\n  cont.mk\n\
                 include $(CURDIR)/cur.mk\ninclude $(wildcard mk/*.mk)\n\
                 -include i.mk\nscript:\n\t@./scripts/check.sh\n",
            ),
            ("mk/a.mk", "A = 1\n"),
            ("idir/.keep", ""),
            ("scripts/check.sh", "true\n"),
            ("scripts/lint.js", "1\n"),
            (
                "package.json",
                r#"{"scripts": {"lint": "node scripts/lint.js"}}"#,
            ),
            ("pkg/package.json", r#"{"scripts": {"check": "true"}}"#),
        ] {
            let at = env.ws.path().join(path);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(at, text).unwrap();
        }
        std::fs::write(
            env.home.path().join("config.toml"),
            format!("[[hooks.before_tool_call]]\nmatch = \"exec_shell\"\ncommand = \"{hook}\"\n"),
        )
        .unwrap();
        for mode in ["auto-edit", "full-auto"] {
            let mock = MockLlm::start(vec![
                Step::Reply(
                    Reply::tools()
                        .call("w", "write_file", json!({"path": file, "content": hostile}))
                        .call(
                            "s",
                            "exec_shell",
                            json!({"command": format!("printf 'x' > ./{file}")}),
                        )
                        .call(
                            "n",
                            "write_file",
                            json!({"path": "notes.txt", "content": "x"}),
                        ),
                ),
                Step::Reply(Reply::text("done")),
            ])
            .await;
            let r = env.exec(&mock, &["--json", "--approval", mode], "go").await;
            assert_eq!(r.code, 0, "{hook} {mode}: {}", r.stderr);
            let status = |id: &str| {
                r.events()
                    .into_iter()
                    .find(|e| e["type"] == "tool_call_finished" && e["call_id"] == id)
                    .map(|e| e["status"].as_str().unwrap_or("").to_string())
            };
            assert_eq!(status("w").as_deref(), Some("denied"), "{hook} {mode}");
            assert_eq!(status("s").as_deref(), Some("denied"), "{hook} {mode}");
            assert_eq!(status("n").as_deref(), Some("ok"), "{hook} {mode}");
            let written = std::fs::read_to_string(env.ws.path().join(file)).unwrap_or_default();
            assert!(!written.contains("pwned"), "{hook} {mode}: {file} written");
            assert!(!env.ws.path().join("pwned").exists());
        }
    }
}

/// Plan mode writes nothing by construction: the person's allow rules
/// (`exec_shell(make*)`, `write_file(*)`, an MCP server's tools) do not
/// apply, a command runs in a read-only sandbox (the workspace is not
/// writable either, whatever the analysis thinks of it), never in the
/// background, and a subagent cannot be given tools that act.
#[tokio::test]
async fn plan_mode_writes_nothing_whatever_the_rules_allow() {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[permissions]\nallow = [\"exec_shell(make*)\", \"exec_shell(*)\", \"write_file(*)\", \"delete_file(*)\"]\n",
    )
    .unwrap();
    std::fs::write(env.ws.path().join("Makefile"), "all:\n\ttouch made.txt\n").unwrap();
    std::fs::write(env.ws.path().join("keep.txt"), "keep\n").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(
            Reply::tools()
                .call("m", "exec_shell", json!({"command": "make"}))
                .call("t", "exec_shell", json!({"command": "touch x.txt"}))
                .call(
                    "g",
                    "exec_shell",
                    json!({"command": "git log --output=out.txt || true; ls"}),
                )
                .call(
                    "b",
                    "exec_shell",
                    json!({"command": "sleep 1", "background": true}),
                )
                .call("w", "write_file", json!({"path": "a.txt", "content": "x"}))
                .call("d", "delete_file", json!({"path": "keep.txt"}))
                .call(
                    "s",
                    "task",
                    json!({"description": "x", "prompt": "write it", "tools": ["write_file"]}),
                )
                .call("l", "exec_shell", json!({"command": "ls"})),
        ),
        Step::Reply(Reply::text("Plan: run make.")),
    ])
    .await;
    let r = env
        .exec(
            &mock,
            &["--json", "--plan", "--approval", "full-auto"],
            "build it",
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    for made in ["made.txt", "x.txt", "a.txt", "out.txt"] {
        assert!(!env.ws.path().join(made).exists(), "{made} was written");
    }
    assert!(env.ws.path().join("keep.txt").exists());
    let status = |id: &str| {
        r.events()
            .into_iter()
            .find(|e| e["type"] == "tool_call_finished" && e["call_id"] == id)
            .map(|e| e["status"].as_str().unwrap_or("").to_string())
            .unwrap_or_default()
    };
    for id in ["m", "t", "b", "w", "d", "s"] {
        assert_ne!(status(id), "ok", "{id}: {}", r.stdout);
    }
    // What only looks still runs.
    assert_eq!(status("l"), "ok", "{}", r.stdout);
}

/// A plan writes nothing through the person's hooks either: they run in
/// a read-only sandbox during a plan turn (a hook that runs `make`, whose
/// Makefile writes, writes nothing).
#[tokio::test]
async fn plan_mode_runs_hooks_read_only() {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[[hooks.before_tool_call]]\nmatch = \"*\"\ncommand = \"make -s hookcheck\"\n",
    )
    .unwrap();
    std::fs::write(
        env.ws.path().join("Makefile"),
        "hookcheck:\n\t@echo wrote > hookran.txt || true\n",
    )
    .unwrap();
    std::fs::write(env.ws.path().join("notes.txt"), "notes\n").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("r", "read_file", json!({"path": "notes.txt"}))),
        Step::Reply(Reply::text("Plan: nothing.")),
    ])
    .await;
    let r = env
        .exec(
            &mock,
            &["--json", "--plan", "--approval", "full-auto"],
            "plan",
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !env.ws.path().join("hookran.txt").exists(),
        "the hook wrote in a plan turn"
    );
    // Outside a plan, the same hook writes, as the person set it.
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("r", "read_file", json!({"path": "notes.txt"}))),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let r = env
        .exec(&mock, &["--json", "--approval", "full-auto"], "go")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(env.ws.path().join("hookran.txt").exists(), "{}", r.stderr);
    std::fs::remove_file(env.ws.path().join("hookran.txt")).unwrap();
    // With the sandbox off, nothing could keep the hook read-only: a plan
    // turn refuses the call the hook would see, and the hook never runs.
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("r", "read_file", json!({"path": "notes.txt"}))),
        Step::Reply(Reply::text("Plan: nothing.")),
    ])
    .await;
    let r = env
        .exec(
            &mock,
            &[
                "--json",
                "--plan",
                "--sandbox",
                "off",
                "--approval",
                "full-auto",
            ],
            "plan",
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !env.ws.path().join("hookran.txt").exists(),
        "the hook wrote in a plan turn without a sandbox"
    );
    let refused = r
        .events()
        .into_iter()
        .find(|e| e["type"] == "tool_call_finished" && e["call_id"] == "r")
        .unwrap();
    assert_eq!(refused["status"], "denied", "{refused}");
}
