//! `lathe acp` driven by a real editor: the official ACP TypeScript SDK
//! (`@agentclientprotocol/sdk`, from npm as `.ci/run` installs it) in a
//! Node script (tests/fixtures/acp-client.mjs), against the scripted
//! model server. Then the protocol abused by hand: malformed and
//! out-of-order messages get JSON-RPC errors, never a crash or a hang.

use std::path::PathBuf;
use std::time::Duration;

use lathe_test_support::run::Setup;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use crate::mock_llm::{MockLlm, Reply, Step};

fn sdk_dir() -> Option<PathBuf> {
    lathe_test_support::npm::installed(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("target/npm/node_modules/@agentclientprotocol/sdk"),
        "LATHE_ACP_SDK",
        "@agentclientprotocol/sdk@2.4.0",
    )
    // The script resolves the package from the directory above it.
    .and_then(|p| p.parent()?.parent()?.parent().map(PathBuf::from))
}

/// Runs the Node client's `scenario`; its report.
async fn client(
    env: &Setup,
    sdk: &std::path::Path,
    mock: &MockLlm,
    scenario: &str,
    extra: &[(&str, String)],
) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/acp-client.mjs");
    let args = json!([
        "--provider",
        "openai",
        "--base-url",
        mock.openai_url(),
        "--model",
        "scripted",
        "acp"
    ]);
    let out = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new("node")
            .arg(&script)
            .arg(scenario)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", env.home.path())
            .env("LATHE_HOME", env.home.path())
            .env("OPENAI_API_KEY", "lm-studio")
            .env("ACP_SDK_DIR", sdk)
            .env("LATHE_BIN", env!("CARGO_BIN_EXE_lathe"))
            .env("LATHE_ARGS", args.to_string())
            .env("LATHE_CWD", env.ws.path())
            .envs(extra.iter().map(|(k, v)| (*k, v.as_str())))
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the ACP client did not finish")
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| {
        panic!(
            "no report ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn updates<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_editor_drives_a_session_through_consent_modes_cancel_and_load() {
    let Some(sdk) = sdk_dir() else { return };
    let env = Setup::new(env!("CARGO_BIN_EXE_lathe"));
    env.file("a.txt", "alpha\n");
    env.file("b.txt", "beta\n");
    // The person's own command, and one of the workspace's (waits for
    // trust).
    std::fs::create_dir_all(env.home.path().join("commands")).unwrap();
    std::fs::write(
        env.home.path().join("commands/review.md"),
        "Review the diff\n\nReview $ARGUMENTS.\n",
    )
    .unwrap();
    env.file(".lathe/commands/deploy.md", "Deploy it\n");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("r1", "read_file", json!({"path": "a.txt"}))),
        Step::Reply(Reply::tools().call(
            "e1",
            "edit_file",
            json!({"path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"}),
        )),
        Step::Reply(Reply::tools().call(
            "e2",
            "edit_file",
            json!({"path": "b.txt", "old_text": "beta", "new_text": "BETA"}),
        )),
        Step::Reply(Reply::text("a.txt changed; b.txt was refused")),
        Step::Reply(
            Reply::tools()
                .call(
                    "p1",
                    "update_plan",
                    json!({"steps": [
                        {"step": "look around", "status": "done"},
                        {"step": "run the command", "status": "in_progress"}
                    ]}),
                )
                .call(
                    "x1",
                    "exec_shell",
                    json!({"command": "echo line-one; echo line-two; touch made.txt"}),
                ),
        ),
        Step::Reply(Reply::text("ran it")),
        Step::Reply(Reply::tools().call(
            "w1",
            "write_file",
            json!({"path": "c.txt", "content": "x"}),
        )),
        Step::Reply(Reply::text("read-only: could not write")),
        Step::Hang(Reply::text("thinking about it for a long while")),
    ])
    .await;
    let report = client(
        &env,
        &sdk,
        &mock,
        "main",
        &[("ANSWERS", "allow_once,reject_once,allow_once,yes".into())],
    )
    .await;
    let errors = report["errors"].as_array().unwrap();
    assert_eq!(report["initialize"]["protocolVersion"], 1, "{report}");
    assert_eq!(
        report["initialize"]["agentCapabilities"]["loadSession"],
        true
    );
    // The approval modes are the session's modes.
    let modes = &report["session"]["modes"];
    assert_eq!(modes["currentModeId"], "ask");
    assert_eq!(modes["availableModes"].as_array().unwrap().len(), 4);

    // 1: the files as the answers left them.
    let ws = env.ws.path();
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "ALPHA\n"
    );
    assert_eq!(std::fs::read_to_string(ws.join("b.txt")).unwrap(), "beta\n");
    let perms = report["permissions"].as_array().unwrap();
    assert_eq!(perms.len(), 4, "{perms:#?}");
    let kinds: Vec<&str> = perms[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.starts_with(&["allow_once"]), "{kinds:?}");
    assert!(kinds.contains(&"reject_once"), "{kinds:?}");
    // The change asked about is shown as its diff.
    let asked = perms[0]["content"].to_string();
    assert!(asked.contains("\"type\":\"diff\""), "{asked}");
    assert!(asked.contains("ALPHA"), "{asked}");
    // Each call with its kind and where it works.
    let calls = updates(&report, "tool_call");
    let kind_of = |id: &str| {
        calls
            .iter()
            .find(|c| c["toolCallId"] == id)
            .map(|c| c["kind"].clone())
    };
    assert_eq!(kind_of("r1"), Some(json!("read")));
    assert_eq!(kind_of("e1"), Some(json!("edit")));
    assert_eq!(kind_of("x1"), Some(json!("execute")));
    let read = calls.iter().find(|c| c["toolCallId"] == "r1").unwrap();
    assert_eq!(
        read["locations"][0]["path"],
        ws.join("a.txt").display().to_string()
    );
    let finished = |id: &str| {
        updates(&report, "tool_call_update")
            .into_iter()
            .rfind(|u| u["toolCallId"] == id && u.get("status").is_some())
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(finished("e1")["status"], "completed");
    assert_eq!(finished("e2")["status"], "failed");
    let e1 = finished("e1")["content"].to_string();
    assert!(e1.contains("\"oldText\":\"alpha\\n\""), "{e1}");
    assert!(e1.contains("\"newText\":\"ALPHA\\n\""), "{e1}");

    // 2: the plan, and the command's output as it ran.
    let plan = updates(&report, "plan");
    assert_eq!(plan[0]["entries"][0]["status"], "completed");
    assert_eq!(plan[0]["entries"][1]["status"], "in_progress");
    let x1 = finished("x1");
    assert_eq!(x1["status"], "completed");
    let shown = x1["content"].to_string();
    assert!(
        shown.contains("line-one") && shown.contains("line-two"),
        "{shown}"
    );
    assert!(ws.join("made.txt").exists());

    // 3: read-only: the write is refused without a question.
    assert_eq!(report["setMode"], json!({}));
    assert!(
        updates(&report, "current_mode_update")
            .iter()
            .any(|u| u["currentModeId"] == "read-only")
    );
    assert_eq!(finished("w1")["status"], "failed");
    assert!(!ws.join("c.txt").exists());

    // 4: cancelled: the turn ends `cancelled`, and nothing more reaches
    // the model's server.
    let stops: Vec<&str> = report["stops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(
        stops,
        [
            "end_turn",
            "end_turn",
            "end_turn",
            "cancelled",
            "error",
            "end_turn",
            "end_turn"
        ],
        "{errors:?}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(mock.requests().len(), 9);
    // 5: an unknown session: an error, said.
    assert!(
        errors.iter().any(|e| e.to_string().contains("no session")),
        "{errors:?}"
    );
    // 6: `/diff` answered from the session's changes.
    let said: String = updates(&report, "agent_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert!(said.contains("+ALPHA"), "{said}");
    // Lathe's commands are offered to the editor.
    let offered = updates(&report, "available_commands_update");
    let names = offered[0]["availableCommands"].to_string();
    assert!(
        names.contains("\"undo\"") && names.contains("\"init\""),
        "{names}"
    );
    // The person's own command too; the workspace's once trusted
    // (`/trust`: what waits was said at the first prompt, shown whole,
    // and remembered); the editor's MCP server that failed was said.
    assert!(
        names.contains("\"review\"") && names.contains("Review the diff"),
        "{names}"
    );
    assert!(!names.contains("deploy"), "{names}");
    let thought: String = updates(&report, "agent_thought_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert!(thought.contains("/trust"), "{thought}");
    assert!(thought.contains("MCP server broken failed"), "{thought}");
    assert!(
        perms[3]["content"].to_string().contains("deploy"),
        "{perms:#?}"
    );
    let last = offered.last().unwrap()["availableCommands"].to_string();
    assert!(last.contains("\"deploy\""), "{last}");
    assert_eq!(report["exit"], 0, "{}", report["stderr"]);

    // Loaded in a new process: the conversation comes back, calls and
    // their diffs with it.
    let id = report["session"]["sessionId"].as_str().unwrap().to_string();
    let loaded = client(&env, &sdk, &mock, "load", &[("SESSION", id.clone())]).await;
    assert!(
        loaded["errors"].as_array().unwrap().is_empty(),
        "{loaded:#}"
    );
    let user: String = updates(&loaded, "user_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert!(user.contains("read a.txt, then change"), "{user}");
    let replayed = updates(&loaded, "tool_call_update")
        .iter()
        .map(|u| u.to_string())
        .collect::<String>();
    assert!(replayed.contains("\"newText\":\"ALPHA\\n\""), "{replayed}");
    assert_eq!(loaded["load"]["modes"]["currentModeId"], "ask");
    // And the terminal finds the same session.
    let listed = env.run(&["sessions", "--json"], &[], "").await.stdout;
    assert!(listed.contains(&id), "{listed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn in_an_editor_reads_see_unsaved_buffers_and_writes_go_through_it() {
    let Some(sdk) = sdk_dir() else { return };
    let env = Setup::new(env!("CARGO_BIN_EXE_lathe"));
    env.file("a.txt", "alpha\n");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("r1", "read_file", json!({"path": "a.txt"}))),
        Step::Reply(Reply::tools().call(
            "e1",
            "edit_file",
            json!({"path": "a.txt", "old_text": "unsaved", "new_text": "edited by lathe"}),
        )),
        Step::Reply(Reply::tools().call(
            "e2",
            "write_file",
            json!({"path": "b.txt", "content": "new file"}),
        )),
        Step::Reply(Reply::tools().call(
            "q1",
            "ask_user",
            json!({"question": "Tabs or spaces?", "choices": ["tabs", "spaces"]}),
        )),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let report = client(
        &env,
        &sdk,
        &mock,
        "editor",
        &[
            ("ANSWERS", "allow_once,reject_with_reason,choice-1".into()),
            ("REASON", "put it in docs/ instead".into()),
            (
                "EDITOR_BUFFERS",
                json!({"a.txt": "alpha unsaved\n"}).to_string(),
            ),
        ],
    )
    .await;
    assert_eq!(report["stops"], json!(["end_turn"]), "{report:#}");
    // The picture went with the message, and no copy of it stays.
    let requests = mock.requests();
    assert!(
        requests[0]
            .body
            .to_string()
            .contains("data:image/png;base64,"),
        "{}",
        requests[0].body
    );
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("lathe-acp-"))
        .filter(|e| {
            walk(&e.path())
                .iter()
                .any(|f| f.to_string_lossy().contains(".png"))
        })
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // The model read the buffer, not the file as saved.
    let read = crate::mock_llm::tool_results(&requests[1]);
    assert!(read[0].1.to_string().contains("alpha unsaved"), "{read:?}");
    // The change was made from the buffer, shown as such, and written
    // through the editor (which saved it).
    let asked = report["permissions"][0]["content"].to_string();
    assert!(
        asked.contains("alpha unsaved") && asked.contains("alpha edited by lathe"),
        "{asked}"
    );
    let path = env.ws.path().join("a.txt").display().to_string();
    assert_eq!(
        report["writes"],
        json!([{"path": path, "content": "alpha edited by lathe\n"}])
    );
    assert_eq!(
        std::fs::read_to_string(env.ws.path().join("a.txt")).unwrap(),
        "alpha edited by lathe\n"
    );
    // Rejected with a reason, asked through the editor's form: the model
    // reads it, and nothing is written.
    let options = report["permissions"][1]["options"].to_string();
    assert!(options.contains("reject_with_reason"), "{options}");
    assert!(
        report["elicited"]["message"]
            .to_string()
            .contains("Why not"),
        "{:#}",
        report["errors"]
    );
    let denied = crate::mock_llm::tool_results(&requests[3]);
    assert!(
        denied[0].1.to_string().contains("put it in docs/ instead"),
        "{denied:?}"
    );
    assert!(!env.ws.path().join("b.txt").exists());
    // The model's question: its choices are the options; the one chosen
    // is its answer.
    let asked = &report["permissions"][2];
    let names: Vec<&str> = asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tabs", "spaces", "Do not answer"], "{asked:#}");
    let answered = crate::mock_llm::tool_results(&requests[4]);
    assert!(answered[0].1.to_string().contains("spaces"), "{answered:?}");
}

/// An answer that comes after a cancel does nothing: not to the call it
/// was asked for (gone), nor to a later call that has the same id, nor to
/// `/trust`.
#[tokio::test(flavor = "multi_thread")]
async fn an_answer_after_a_cancel_approves_nothing() {
    let Some(sdk) = sdk_dir() else { return };
    let env = Setup::new(env!("CARGO_BIN_EXE_lathe"));
    env.file(
        ".mcp.json",
        r#"{"mcpServers": {"theirs": {"command": "true"}}}"#,
    );
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "c1",
            "write_file",
            json!({"path": "x.txt", "content": "x"}),
        )),
        Step::Reply(Reply::tools().call(
            "c1",
            "write_file",
            json!({"path": "y.txt", "content": "EVIL"}),
        )),
        Step::Reply(Reply::text("ok")),
    ])
    .await;
    let report = client(&env, &sdk, &mock, "late", &[]).await;
    assert_eq!(report["afterLate"], false, "{report:#}");
    assert_eq!(
        report["stops"],
        json!(["cancelled", "end_turn", "cancelled"]),
        "{report:#}"
    );
    let ws = env.ws.path();
    assert!(!ws.join("x.txt").exists() && !ws.join("y.txt").exists());
    // Nothing of the workspace was trusted.
    let trusted = walk(env.home.path())
        .into_iter()
        .filter(|p| p.display().to_string().contains("trusted"))
        .collect::<Vec<_>>();
    assert!(trusted.is_empty(), "{trusted:?}");
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Sends `lines` to `lathe acp` one at a time, each after the answer to
/// the one before (when it has an id); returns every line it printed.
async fn raw(env: &Setup, lines: &[&[u8]]) -> Vec<Value> {
    let mut child = env
        .command(
            &["--base-url", "http://127.0.0.1:9/v1", "--model", "m", "acp"],
            &[("OPENAI_API_KEY", "lm-studio")],
        )
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines {
        stdin.write_all(line).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        // Its answer (a line that is not JSON is answered with id null),
        // and any notification before it.
        let id = serde_json::from_slice::<Value>(line)
            .ok()
            .and_then(|v| v.get("id").cloned())
            .unwrap_or(Value::Null);
        loop {
            let answered = tokio::time::timeout(Duration::from_secs(20), out.next_line())
                .await
                .expect("no answer: lathe acp hung")
                .unwrap()
                .expect("lathe acp ended");
            let v: Value = serde_json::from_str(&answered)
                .unwrap_or_else(|_| panic!("not JSON on stdout: {answered}"));
            let done = v.get("id") == Some(&id);
            seen.push(v);
            if done {
                break;
            }
        }
    }
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("lathe acp did not end with its input")
        .unwrap();
    assert!(status.success());
    seen
}

#[tokio::test]
async fn malformed_and_out_of_order_messages_get_errors_not_a_crash() {
    let env = Setup::new(env!("CARGO_BIN_EXE_lathe"));
    let ws = env.ws.path().display().to_string();
    let new = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"session/new","params":{{"cwd":"{ws}","mcpServers":[]}}}}"#
    );
    let load_other = format!(
        r#"{{"jsonrpc":"2.0","id":8,"method":"session/load","params":{{"sessionId":"01a00000-0000-7000-8000-000000000000","cwd":"{ws}","mcpServers":[]}}}}"#
    );
    let load_traversal = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"session/load","params":{{"sessionId":"../../etc/passwd","cwd":"{ws}","mcpServers":[]}}}}"#
    );
    let seen = raw(
        &env,
        &[
            // Before initialize: refused.
            br#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
            br#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}"#,
            b"this is not json {",
            // Not UTF-8: a parse error, and the connection goes on.
            b"\xff\xfe{\"a\":1}",
            br#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"nope":true}}"#,
            br#"{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}"#,
            new.as_bytes(),
            br#"{"jsonrpc":"2.0","id":6,"method":"session/set_mode","params":{"sessionId":"x","modeId":"yolo"}}"#,
            br#"{"jsonrpc":"2.0","id":7,"method":"no/such/method","params":{}}"#,
            load_other.as_bytes(),
            load_traversal.as_bytes(),
        ],
    )
    .await;
    let by_id = |id: i64| {
        seen.iter()
            .find(|v| v["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {id}: {seen:#?}"))
    };
    assert_eq!(by_id(1)["error"]["code"], -32600);
    assert_eq!(by_id(2)["result"]["protocolVersion"], 1);
    let parse_errors = seen.iter().filter(|v| v["error"]["code"] == -32700).count();
    assert_eq!(parse_errors, 2, "{seen:#?}");
    assert_eq!(by_id(3)["error"]["code"], -32602);
    assert!(by_id(4)["error"]["data"].to_string().contains("absolute"));
    assert!(by_id(5)["result"]["sessionId"].is_string(), "{seen:#?}");
    assert_eq!(by_id(6)["error"]["code"], -32602);
    assert_eq!(by_id(7)["error"]["code"], -32601);
    // A session that is not there, or a name that is not a session's.
    for id in [8, 9] {
        assert_eq!(by_id(id)["error"]["code"], -32602, "{seen:#?}");
        assert!(
            by_id(id)["error"]["message"]
                .to_string()
                .contains("cannot load session")
        );
    }
}
