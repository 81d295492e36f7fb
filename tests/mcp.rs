//! MCP servers end to end: the real `lathe` binary against real MCP
//! servers on rmcp (lathe-test-support's `lathe-mcp-test-server`, over stdio and over
//! streamable HTTP) and the scripted mock LLM: discovery and namespacing,
//! calls with approvals, progress, errors, timeouts, a server that dies
//! mid-call and comes back, a tool list that changes, a server that fails
//! to start, workspace servers that wait for trust, and `lathe mcp list`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mock_llm;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use lathe_test_support::run::{Run, Setup};
use mock_llm::{MockLlm, Reply, Step, tool_results};
use serde_json::{Value, json};

const SECRET: &str = "sk-lathe-test-SECRET-0123456789abcdef";

/// The test server (lathe-test-support's binary; built first when this
/// crate's tests run alone).
fn server_bin() -> PathBuf {
    lathe_test_support::mcp_server::bin()
}

/// A home with a config and a workspace for `lathe`'s runs.
struct Env(Setup);

impl std::ops::Deref for Env {
    type Target = Setup;
    fn deref(&self) -> &Setup {
        &self.0
    }
}

impl Env {
    fn new(config: &str) -> Self {
        let env = Self(Setup::new(env!("CARGO_BIN_EXE_lathe")));
        env.config(config);
        env
    }

    async fn lathe(&self, args: &[&str]) -> Run {
        self.lathe_with(&[], args).await
    }

    /// `lathe` with more variables in its environment.
    async fn lathe_with(&self, vars: &[(&str, &str)], args: &[&str]) -> Run {
        let mut env = vec![
            ("OPENAI_API_KEY", SECRET),
            ("MY_SERVICE_TOKEN", "tok-0123456789-secret"),
        ];
        env.extend_from_slice(vars);
        self.run(args, &env, "").await
    }

    async fn exec(&self, mock: &MockLlm, mode: &str, extra: &[&str]) -> Run {
        let url = mock.openai_url();
        let mut args = vec![
            "exec",
            "--json",
            "--base-url",
            url.as_str(),
            "--model",
            "mock-model",
            "--approval",
            mode,
        ];
        args.extend_from_slice(extra);
        args.push("go");
        self.lathe(&args).await
    }
}

fn stdio_server(name: &str, extra: &str) -> String {
    format!(
        "[mcp_servers.{name}]\ncommand = \"{}\"\n{extra}\n",
        server_bin().display()
    )
}

fn calls(steps: &[(&str, &str, Value)]) -> Vec<Step> {
    let mut out: Vec<Step> = steps
        .iter()
        .map(|(id, tool, args)| Step::Reply(Reply::tools().call(id, tool, args.clone())))
        .collect();
    out.push(Step::Reply(Reply::text("done")));
    out
}

fn content(result: &Value) -> String {
    result["content"]["content"]
        .as_str()
        .or_else(|| result["content"]["error"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// Tools arrive namespaced, with the server's schema; calls go through
/// approvals (an external effect), and by their dotted name too.
#[tokio::test]
async fn a_servers_tools_are_namespaced_and_called_through_the_pipeline() {
    let env = Env::new(&stdio_server("test", ""));
    let mock = MockLlm::start(calls(&[
        ("e", "test__echo", json!({"message": "hi"})),
        ("s", "test.get-sum", json!({"a": 2, "b": 3})),
        ("i", "test__image", json!({})),
        ("f", "test__fail", json!({})),
        ("v", "test__echo", json!({"wrong": 1})),
    ]))
    .await;
    let r = env.exec(&mock, "full-auto", &[]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let req = &mock.requests()[0];
    let tools: Vec<&str> = req.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"test__echo") && tools.contains(&"test__get-sum"),
        "{tools:?}"
    );
    let echo = req.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "test__echo")
        .unwrap();
    assert_eq!(
        echo["function"]["parameters"]["required"],
        json!(["message"])
    );
    assert_eq!(content(&r.finished("e")), "Echo: hi");
    let sum = r.finished("s");
    assert_eq!(sum["tool"], "test__get-sum");
    assert_eq!(sum["content"]["structured"], json!({"sum": 5.0}));
    assert!(
        content(&r.finished("i")).contains("[image image/png"),
        "{}",
        r.stdout
    );
    let fail = r.finished("f");
    assert_eq!(fail["status"], "error");
    assert!(content(&fail).contains("on purpose"), "{fail}");
    let bad = r.finished("v");
    assert_eq!(bad["metadata"]["error_kind"], "invalid_args", "{bad}");
    assert!(
        r.events()
            .iter()
            .any(|e| e["type"] == "mcp_server_status" && e["state"] == "ready")
    );
    // The model saw each result.
    let told = tool_results(&mock.requests()[1]);
    assert!(told[0].1.to_string().contains("Echo: hi"));

    // Headless ask: nobody to approve an external call.
    let echo = || calls(&[("e", "test__echo", json!({"message": "hi"}))]);
    let mock = MockLlm::start(echo()).await;
    let r = env.exec(&mock, "ask", &[]).await;
    assert_eq!(r.finished("e")["status"], "denied");
    // Unless the person trusts the server, or a rule allows the tool.
    let env = Env::new(&stdio_server("test", "trusted = true"));
    let mock = MockLlm::start(echo()).await;
    let r = env.exec(&mock, "ask", &[]).await;
    assert_eq!(r.finished("e")["status"], "ok", "{}", r.stdout);
    let env = Env::new(&format!(
        "[permissions]\nallow = [\"test.echo\"]\n{}",
        stdio_server("test", "")
    ));
    let mock = MockLlm::start(calls(&[
        ("e", "test__echo", json!({"message": "hi"})),
        ("s", "test__get-sum", json!({"a": 1, "b": 2})),
    ]))
    .await;
    let r = env.exec(&mock, "ask", &[]).await;
    assert_eq!(
        r.finished("e")["status"],
        "ok",
        "the rule allows it: {}",
        r.stdout
    );
    assert_eq!(
        r.finished("s")["status"],
        "denied",
        "the rule is for echo only"
    );
}

#[tokio::test]
async fn progress_streams_and_a_silent_call_times_out() {
    let env = Env::new(&stdio_server("test", "timeout_secs = 1"));
    let mock = MockLlm::start(calls(&[
        ("p", "test__slow", json!({"steps": 4})),
        ("h", "test__hang", json!({})),
        ("e", "test__echo", json!({"message": "still here"})),
    ]))
    .await;
    let r = env.exec(&mock, "full-auto", &[]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let progress: Vec<String> = r
        .events()
        .into_iter()
        .filter(|e| e["type"] == "tool_progress" && e["call_id"] == "p")
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(progress.len(), 4, "{progress:?}");
    assert_eq!(progress[0], "step 1 (1/4)");
    assert_eq!(content(&r.finished("p")), "done after 4 steps");
    let hang = r.finished("h");
    assert_eq!(hang["metadata"]["error_kind"], "timeout", "{hang}");
    assert_eq!(content(&r.finished("e")), "Echo: still here");
}

/// A server that dies mid-call gives that call an error, never a hang;
/// the next call starts it again. A call is never sent twice.
#[tokio::test]
async fn a_server_that_dies_mid_call_comes_back_on_next_use() {
    let env = Env::new(&stdio_server("test", ""));
    let mock = MockLlm::start(calls(&[
        ("c", "test__crash", json!({})),
        ("e", "test__echo", json!({"message": "back"})),
    ]))
    .await;
    let started = std::time::Instant::now();
    let r = env.exec(&mock, "full-auto", &[]).await;
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let crash = r.finished("c");
    assert_eq!(crash["status"], "error");
    assert!(content(&crash).contains("went away"), "{crash}");
    assert!(
        content(&crash).contains("dying on purpose"),
        "the stderr tail: {crash}"
    );
    assert_eq!(content(&r.finished("e")), "Echo: back");
    assert!(
        r.events()
            .iter()
            .any(|e| e["type"] == "mcp_server_status" && e["state"] == "failed")
    );
}

/// `notifications/tools/list_changed`: the next request has the new tool.
#[tokio::test]
async fn a_tool_list_that_changes_changes_the_next_request() {
    let env = Env::new(&stdio_server("test", ""));
    let mock = MockLlm::start(calls(&[
        ("g", "test__grow", json!({})),
        ("l", "test__late", json!({})),
    ]))
    .await;
    let r = env.exec(&mock, "full-auto", &[]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let names = |i: usize| -> Vec<String> {
        mock.requests()[i].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!names(0).contains(&"test__late".to_string()));
    assert!(
        names(1).contains(&"test__late".to_string()),
        "{:?}",
        names(1)
    );
    assert_eq!(content(&r.finished("l")), "the late tool answers");
}

/// One server that cannot start is reported; the others work.
#[tokio::test]
async fn a_server_that_fails_to_start_is_reported_and_the_rest_go_on() {
    let config = format!(
        "{}{}",
        stdio_server("test", ""),
        stdio_server("broken", "args = [\"refuse\"]")
    );
    let env = Env::new(&config);
    let mock = MockLlm::start(calls(&[("e", "test__echo", json!({"message": "ok"}))])).await;
    let r = env.exec(&mock, "full-auto", &[]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let failed = r
        .events()
        .into_iter()
        .find(|e| {
            e["type"] == "mcp_server_status" && e["server"] == "broken" && e["state"] == "failed"
        })
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .contains("refuses to start"),
        "{failed}"
    );
    assert_eq!(content(&r.finished("e")), "Echo: ok");
    // Text mode says so on stderr.
    let url = mock.openai_url();
    let r = env
        .lathe(&[
            "exec",
            "--base-url",
            &url,
            "--model",
            "m",
            "--approval",
            "full-auto",
            "hi",
        ])
        .await;
    assert!(r.stderr.contains("mcp broken failed"), "{}", r.stderr);
}

/// A server gets no secret of Lathe's environment, only what its entry
/// gives it; what it returns is redacted like any result.
#[tokio::test]
async fn a_server_sees_only_its_own_environment_and_results_are_redacted() {
    let env = Env::new(&stdio_server(
        "test",
        "env = { SERVICE_TOKEN = \"${MY_SERVICE_TOKEN}\", LOG_LEVEL = \"warn\" }",
    ));
    let mock = MockLlm::start(calls(&[("l", "test__leak", json!({}))])).await;
    let r = env.exec(&mock, "full-auto", &[]).await;
    let text = content(&r.finished("l"));
    assert!(text.contains("LOG_LEVEL=warn"), "{text}");
    assert!(
        !text.contains(SECRET) && !text.contains("OPENAI_API_KEY"),
        "{text}"
    );
    assert!(text.contains("SERVICE_TOKEN=[REDACTED]"), "{text}");
    assert!(!r.stdout.contains("tok-0123456789-secret"));
}

/// A cloned repository's `.mcp.json` runs nothing until the person
/// trusts it (headless: `--trust-workspace-mcp`).
#[tokio::test]
async fn workspace_servers_wait_for_trust() {
    let env = Env::new("");
    std::fs::write(
        env.ws.path().join(".mcp.json"),
        json!({"mcpServers": {"repo": {"command": server_bin()}}}).to_string(),
    )
    .unwrap();
    let echo = || calls(&[("e", "repo__echo", json!({"message": "x"}))]);
    let mock = MockLlm::start(echo()).await;
    let r = env.exec(&mock, "full-auto", &[]).await;
    assert!(
        r.stderr.contains("do not start until you trust them"),
        "{}",
        r.stderr
    );
    assert_eq!(r.finished("e")["metadata"]["error_kind"], "not_found");
    let mock = MockLlm::start(echo()).await;
    let r = env
        .exec(&mock, "full-auto", &["--trust-workspace-mcp"])
        .await;
    assert_eq!(content(&r.finished("e")), "Echo: x", "{}", r.stdout);
    // A workspace cannot trust its own server: its calls still ask.
    std::fs::write(
        env.ws.path().join(".mcp.json"),
        json!({"mcpServers": {"repo": {"command": server_bin(), "trusted": true}}}).to_string(),
    )
    .unwrap();
    let mock = MockLlm::start(echo()).await;
    let r = env.exec(&mock, "ask", &["--trust-workspace-mcp"]).await;
    assert_eq!(r.finished("e")["status"], "denied");
}

/// Trusting a repository's server never hands it the machine: it runs
/// in the sandbox (writes outside the workspace fail), with the basic
/// variables of the person's environment and those its entry names (which
/// the trust names too), and the network only if its entry asked.
#[tokio::test]
async fn a_trusted_workspace_server_runs_in_the_sandbox() {
    let env = Env::new("");
    let outside = crate::places::outside("lathe-outside-");
    let target = outside.path().join("planted");
    std::fs::write(
        env.ws.path().join(".mcp.json"),
        json!({"mcpServers": {"repo": {
            "command": server_bin(),
            "env": {"CFG": "${MY_SERVICE_TOKEN}"}
        }}})
        .to_string(),
    )
    .unwrap();
    let mock = MockLlm::start(calls(&[
        (
            "w",
            "repo__write",
            json!({"path": target.display().to_string()}),
        ),
        ("i", "repo__write", json!({"path": "inside.txt"})),
        ("l", "repo__leak", json!({})),
    ]))
    .await;
    let r = env
        .exec(
            &mock,
            "full-auto",
            &[
                "--trust-workspace-mcp",
                "--trust-workspace-mcp-env",
                "MY_SERVICE_TOKEN",
            ],
        )
        .await;
    // What was trusted is said, with the variable it takes.
    assert!(
        r.stderr
            .contains("takes from your environment: MY_SERVICE_TOKEN"),
        "{}",
        r.stderr
    );
    assert!(
        !target.exists(),
        "a workspace server wrote outside: {}",
        r.stdout
    );
    assert!(
        content(&r.finished("w")).contains("cannot write"),
        "{}",
        r.stdout
    );
    assert!(env.ws.path().join("inside.txt").exists(), "{}", r.stdout);
    let leaked = content(&r.finished("l"));
    // Only the basic variables and its own: the home directory yes,
    // Lathe's own settings no; the token it named is redacted.
    assert!(leaked.contains("HOME="), "{leaked}");
    assert!(!leaked.contains("LATHE_HOME"), "{leaked}");
    assert!(leaked.contains("CFG=[REDACTED]"), "{leaked}");
    assert!(!leaked.contains("tok-0123456789-secret"), "{leaked}");
}

/// The test server over streamable HTTP, and the address it listens on.
/// A workspace server whose program lives under the system `/tmp` (a
/// checkout there, a build in a temp directory) runs in the sandbox,
/// whose `/tmp` is the session's own: the program's directory is brought
/// back into it, read-only, and nothing else of the system's `/tmp` is.
#[tokio::test]
async fn a_workspace_server_built_under_tmp_runs_in_the_sandbox() {
    let env = Env::new("");
    let build = tempfile::Builder::new()
        .prefix("lathe-build-")
        .tempdir_in("/tmp")
        .unwrap();
    let bin = build.path().join("mcp_test_server");
    std::fs::copy(server_bin(), &bin).unwrap();
    let beside = build.path().join("planted");
    std::fs::write(
        env.ws.path().join(".mcp.json"),
        json!({"mcpServers": {"repo": {"command": bin}}}).to_string(),
    )
    .unwrap();
    let mock = MockLlm::start(calls(&[
        ("i", "repo__write", json!({"path": "inside.txt"})),
        (
            "b",
            "repo__write",
            json!({"path": beside.display().to_string()}),
        ),
    ]))
    .await;
    let r = env
        .exec(&mock, "full-auto", &["--trust-workspace-mcp"])
        .await;
    assert!(
        env.ws.path().join("inside.txt").exists(),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    // Its own directory is there to read and run, not to write.
    assert!(!beside.exists(), "{}", r.stdout);
    assert!(
        content(&r.finished("b")).contains("cannot write"),
        "{}",
        r.stdout
    );
}

async fn http_server() -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt;
    let mut server = tokio::process::Command::new(server_bin())
        .args(["--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut out = tokio::io::BufReader::new(server.stdout.take().unwrap());
    out.read_line(&mut line).await.unwrap();
    (server, line.trim().to_string())
}

/// The same server over streamable HTTP.
#[tokio::test]
async fn streamable_http_servers_work_too() {
    let (mut server, addr) = http_server().await;
    let env = Env::new(&format!(
        "[mcp_servers.remote]\nurl = \"http://{addr}/mcp\"\nheaders = {{ Authorization = \"Bearer ${{MY_SERVICE_TOKEN}}\" }}\n"
    ));
    let mock = MockLlm::start(calls(&[
        ("e", "remote__echo", json!({"message": "over http"})),
        ("p", "remote__slow", json!({"steps": 2})),
    ]))
    .await;
    let r = env.exec(&mock, "full-auto", &[]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(content(&r.finished("e")), "Echo: over http");
    assert!(
        r.events()
            .iter()
            .any(|e| e["type"] == "tool_progress" && e["call_id"] == "p")
    );
    let _ = server.kill().await;
}

/// A remote server that dies during a call is found gone (it is pinged
/// while no progress comes), not waited for until the call's timeout; the
/// errors say what happened in words, not in the SDK's type names.
#[tokio::test]
async fn a_remote_server_that_dies_mid_call_is_reported_gone_not_timed_out() {
    let (mut server, addr) = http_server().await;
    let env = Env::new(&format!(
        "[mcp_servers.remote]\nurl = \"http://{addr}/mcp\"\ntimeout_secs = 120\n"
    ));
    let mock = MockLlm::start(calls(&[
        ("c", "remote__crash", json!({})),
        ("e", "remote__echo", json!({"message": "still there?"})),
    ]))
    .await;
    let r = env.exec(&mock, "full-auto", &[]).await;
    let _ = server.wait().await;
    let crash = r.finished("c");
    let text = content(&crash);
    assert!(text.contains("went away during the call"), "{crash}");
    assert!(
        !text.contains("Transport") && !text.contains("timeout"),
        "{crash}"
    );
    let after = content(&r.finished("e"));
    assert!(
        !after.contains("Transport") && !after.contains("Worker"),
        "{after}"
    );
    assert!(after.contains("remote"), "{after}");
}

/// `lathe mcp list` starts each server and prints it with its tools.
#[tokio::test]
async fn mcp_list_prints_each_server_with_its_state_and_tools() {
    let config = format!(
        "{}{}",
        stdio_server("test", ""),
        stdio_server("broken", "args = [\"refuse\"]")
    );
    let env = Env::new(&config);
    let r = env.lathe(&["mcp", "list"]).await;
    assert_eq!(r.code, 1, "a failed server fails the listing: {}", r.stderr);
    assert!(r.stdout.contains("test (ready)"), "{}", r.stdout);
    assert!(r.stdout.contains("  test__echo"), "{}", r.stdout);
    assert!(r.stdout.contains("broken (failed)"), "{}", r.stdout);
    let r = env.lathe(&["mcp", "list", "--json"]).await;
    let lines: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["server"], "test");
    assert!(lines[1]["tools"].as_array().unwrap().len() >= 8);
}

/// The reference server, `@modelcontextprotocol/server-everything` from
/// npm, as `.ci/run` installs it (into `target/npm`, or where
/// `LATHE_MCP_EVERYTHING` says). Without node these tests are skipped
/// with a message, unless `LATHE_REQUIRE_NODE=1` makes that a failure.
fn everything() -> Option<PathBuf> {
    lathe_test_support::npm::installed(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("target/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
        "LATHE_MCP_EVERYTHING",
        "@modelcontextprotocol/server-everything@2026.8.31",
    )
}

/// Echo, a sum, a long operation with progress, an erroring call, over
/// stdio and over streamable HTTP, against the reference server.
#[tokio::test]
async fn the_reference_server_over_stdio_and_streamable_http() {
    let Some(index) = everything() else {
        return;
    };
    let stdio = format!(
        "[mcp_servers.everything]\ncommand = \"node\"\nargs = [\"{}\", \"stdio\"]\n",
        index.display()
    );
    // A free port for the HTTP server.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut http_server = tokio::process::Command::new("node")
        .arg(&index)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    {
        use tokio::io::AsyncBufReadExt;
        let mut err = tokio::io::BufReader::new(http_server.stderr.take().unwrap()).lines();
        let ready = tokio::time::timeout(Duration::from_secs(30), async {
            while let Ok(Some(line)) = err.next_line().await {
                if line.contains("listening") {
                    return true;
                }
            }
            false
        })
        .await;
        assert_eq!(ready.ok(), Some(true), "the HTTP server did not start");
        tokio::spawn(async move { while let Ok(Some(_)) = err.next_line().await {} });
    }
    let http = format!("[mcp_servers.everything]\nurl = \"http://127.0.0.1:{port}/mcp\"\n");
    for config in [stdio, http] {
        let env = Env::new(&config);
        let mock = MockLlm::start(calls(&[
            ("e", "everything__echo", json!({"message": "hi"})),
            ("s", "everything.get-sum", json!({"a": 2, "b": 3})),
            (
                "p",
                "everything__trigger-long-running-operation",
                json!({"duration": 2, "steps": 4}),
            ),
            (
                "x",
                "everything__get-resource-reference",
                json!({"resourceType": "Text", "resourceId": -1}),
            ),
        ]))
        .await;
        let r = env.exec(&mock, "full-auto", &[]).await;
        assert_eq!(r.code, 0, "{config}: {}", r.stderr);
        assert!(content(&r.finished("e")).contains("hi"), "{}", r.stdout);
        assert!(content(&r.finished("s")).contains('5'), "{}", r.stdout);
        let progress = r
            .events()
            .into_iter()
            .filter(|e| e["type"] == "tool_progress" && e["call_id"] == "p")
            .count();
        assert!(
            progress >= 2,
            "{config}: {progress} progress events: {}",
            r.stdout
        );
        assert_eq!(r.finished("p")["status"], "ok");
        let x = r.finished("x");
        assert_eq!(x["status"], "error", "{x}");
        assert!(content(&x).contains("resourceId"), "{x}");
    }
    let _ = http_server.kill().await;
}

/// Ctrl-C during a long call ends it at once (the server is told).
#[tokio::test]
async fn an_interrupted_call_ends_at_once() {
    let Some(index) = everything() else {
        return;
    };
    let env = Env::new(&format!(
        "[mcp_servers.everything]\ncommand = \"node\"\nargs = [\"{}\", \"stdio\"]\n",
        index.display()
    ));
    let mock = MockLlm::start(calls(&[(
        "p",
        "everything__trigger-long-running-operation",
        json!({"duration": 60, "steps": 60}),
    )]))
    .await;
    let url = mock.openai_url();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_lathe"))
        .args([
            "exec",
            "--json",
            "--base-url",
            &url,
            "--model",
            "m",
            "--approval",
            "full-auto",
            "go",
        ])
        .env("HOME", env.home.path())
        .env("LATHE_HOME", env.home.path())
        .env("OPENAI_API_KEY", SECRET)
        .current_dir(env.ws.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    // Wait for the first progress, then interrupt.
    let mut seen = String::new();
    {
        use tokio::io::AsyncReadExt;
        let mut buf = [0u8; 4096];
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !seen.contains("\"tool_progress\"") {
            assert!(std::time::Instant::now() < deadline, "no progress: {seen}");
            let n = tokio::time::timeout(Duration::from_secs(30), out.read(&mut buf))
                .await
                .unwrap()
                .unwrap();
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap());
    let started = std::time::Instant::now();
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(15), child.wait())
        .await
        .expect("lathe did not end after the interrupt")
        .unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// A restart ends the server and starts it again (a new process), its
/// failures forgotten; an unknown name is an error that names the others.
#[tokio::test]
async fn a_server_restarts_on_request() {
    use lathe_core::config::mcp::{McpServer, McpTransport};
    use lathe_core::protocol::McpState;
    let ws = tempfile::tempdir().unwrap();
    let manager = lathe_core::mcp::Manager::new(lathe_core::mcp::Launch {
        workspace: ws.path().to_path_buf(),
        sandbox: lathe_core::sandbox::Settings {
            helper: Some(PathBuf::from(env!("CARGO_BIN_EXE_lathe"))),
            ..lathe_core::sandbox::Settings::default()
        },
        reads: None,
        logins: None,
    });
    let mut events = manager.subscribe();
    manager.start(vec![McpServer {
        name: "test".into(),
        transport: McpTransport::Stdio {
            command: server_bin().display().to_string(),
            args: Vec::new(),
            env: Default::default(),
        },
        timeout_secs: 10,
        startup_timeout_secs: 10,
        trusted: true,
        origin: lathe_core::policy::RuleOrigin::User,
        digest: String::new(),
        takes: Vec::new(),
        taken_secrets: Vec::new(),
        network: false,
        written: String::new(),
        oauth: Default::default(),
        always_load: false,
    }]);
    manager.settled().await;
    assert_eq!(
        manager.statuses()[0].state,
        McpState::Ready,
        "{:?}",
        manager.statuses()
    );
    while events.try_recv().is_ok() {}
    let e = manager.restart(Some("nope")).unwrap_err();
    assert!(e.contains("the servers are test"), "{e}");
    manager.restart(Some("test")).unwrap();
    let mut seen = Vec::new();
    while seen.last() != Some(&McpState::Ready) {
        let s = tokio::time::timeout(Duration::from_secs(20), events.recv())
            .await
            .unwrap()
            .unwrap();
        seen.push(s.state);
    }
    assert!(seen.contains(&McpState::Starting), "{seen:?}");
    assert!(!manager.statuses()[0].tools.is_empty());
    manager.shutdown().await;
}

/// A workspace's server is never given Lathe's own API key, whatever the
/// trust: not by `${OPENAI_API_KEY}` in its env, URL or headers, not by
/// another variable that holds the same key. Any other variable it takes
/// is given only when the person names it (`--trust-workspace-mcp-env`);
/// the blanket `--trust-workspace-mcp` alone starts it without.
#[tokio::test]
async fn a_workspace_server_never_gets_lathes_key_and_takes_only_named_variables() {
    let (mut http, addr) = http_server().await;
    let cases = [
        json!({"command": server_bin(), "env": {"K": "${OPENAI_API_KEY}"}}),
        json!({"command": server_bin(), "env": {"EVEN": "${OPENAI_API_KEY:-x}"}}),
        json!({"command": server_bin(), "env": {"K": "${SAME_KEY}"}}),
        json!({"url": format!("http://{addr}/mcp?k=${{OPENAI_API_KEY}}")}),
        json!({"url": format!("http://{addr}/mcp"), "headers": {"Authorization": "Bearer ${OPENAI_API_KEY}"}}),
    ];
    for entry in cases {
        let env = Env::new("");
        std::fs::write(
            env.ws.path().join(".mcp.json"),
            json!({"mcpServers": {"repo": entry}}).to_string(),
        )
        .unwrap();
        let mock = MockLlm::start(calls(&[("l", "repo__leak", json!({}))])).await;
        let r = env
            .lathe_with(
                &[("SAME_KEY", SECRET)],
                &[
                    "exec",
                    "--json",
                    "--base-url",
                    &mock.openai_url(),
                    "--model",
                    "mock-model",
                    "--approval",
                    "full-auto",
                    "--trust-workspace-mcp",
                    "--trust-workspace-mcp-env",
                    "OPENAI_API_KEY,SAME_KEY",
                    "go",
                ],
            )
            .await;
        assert!(
            r.stderr.contains("is left out") && r.stderr.contains("API key"),
            "{entry}: {}",
            r.stderr
        );
        assert_eq!(
            r.finished("l")["metadata"]["error_kind"],
            "not_found",
            "{entry}: {}",
            r.stdout
        );
        assert!(!r.stdout.contains(SECRET) && !r.stderr.contains(SECRET));
    }
    // Another variable: the flag alone does not give it; naming it does.
    let env = Env::new("");
    std::fs::write(
        env.ws.path().join(".mcp.json"),
        json!({"mcpServers": {"repo": {"command": server_bin(), "env": {"CFG": "${MY_SERVICE_TOKEN}"}}}})
            .to_string(),
    )
    .unwrap();
    let mock = MockLlm::start(calls(&[("l", "repo__leak", json!({}))])).await;
    let r = env
        .exec(&mock, "full-auto", &["--trust-workspace-mcp"])
        .await;
    assert!(
        r.stderr
            .contains("--trust-workspace-mcp-env MY_SERVICE_TOKEN"),
        "{}",
        r.stderr
    );
    assert_eq!(r.finished("l")["metadata"]["error_kind"], "not_found");
    let mock = MockLlm::start(calls(&[("l", "repo__leak", json!({}))])).await;
    let r = env
        .exec(
            &mock,
            "full-auto",
            &[
                "--trust-workspace-mcp",
                "--trust-workspace-mcp-env",
                "MY_SERVICE_TOKEN",
            ],
        )
        .await;
    assert!(
        content(&r.finished("l")).contains("CFG=[REDACTED]"),
        "{}",
        r.stdout
    );
    http.kill().await.ok();
}

/// 200 tools from a server take more than a tenth of the context: their
/// schemas wait behind `tool_search` (each listed by name and one line),
/// which loads them by name or by words; they are then called by name.
/// Every request sends the same tools, byte for byte, loaded or not; an
/// `always_load` server's tools are always sent.
#[tokio::test]
async fn two_hundred_tools_wait_behind_tool_search_and_every_request_sends_the_same_tools() {
    let env = Env::new(&format!(
        "{}{}",
        stdio_server("many", "env = { LATHE_TEST_TOOLS = \"200\" }"),
        stdio_server("few", "always_load = true")
    ));
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "s",
            "tool_search",
            json!({"names": ["many__record-007", "many.echo", "nope"]}),
        )),
        Step::Reply(Reply::tools().call(
            "q",
            "tool_search",
            json!({"query": "inventory record-150", "limit": 1}),
        )),
        Step::Reply(Reply::tools().call("r", "many__record-007", json!({"id": "A-1"}))),
        Step::Reply(Reply::tools().call("f", "few__echo", json!({"message": "hi"}))),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let r = env.exec(&mock, "full-auto", &[]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let requests = mock.requests();
    assert_eq!(requests.len(), 5);
    let tools = &requests[0].body["tools"];
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"tool_search"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("many__")), "{names:?}");
    assert!(names.contains(&"few__echo"), "always_load: {names:?}");
    let search = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "tool_search")
        .unwrap()["function"]["description"]
        .as_str()
        .unwrap();
    assert_eq!(search.matches("\n- many__record-").count(), 200, "{search}");
    assert!(search.contains("\n- many__record-042: Look up a record of kind 42"));
    assert!(!search.contains("as_of"), "schemas are not in the listing");
    for (i, req) in requests.iter().enumerate() {
        assert_eq!(
            req.body["tools"].to_string(),
            tools.to_string(),
            "request {i} sent other tools"
        );
    }
    let loaded = r.finished("s").to_string();
    assert!(
        loaded.contains("many__record-007") && loaded.contains("as_of"),
        "{loaded}"
    );
    assert!(
        loaded.contains("many__echo") && loaded.contains("nope"),
        "{loaded}"
    );
    let found = r.finished("q").to_string();
    assert!(found.contains("many__record-150"), "{found}");
    assert_eq!(r.finished("r")["status"], "ok", "{}", r.stdout);
    assert!(content(&r.finished("r")).contains("record-007: id A-1"));
    assert!(content(&r.finished("f")).contains("hi"));
}

/// The reference server's prompts are `/server:prompt ARGS` messages (a
/// required argument missing: nothing is sent, and the usage is said);
/// its resources go along with a message that mentions `@server:uri`.
#[tokio::test]
async fn the_reference_servers_prompts_and_resources_come_with_a_message() {
    let Some(index) = everything() else {
        return;
    };
    let env = Env::new(&format!(
        "[mcp_servers.ev]\ncommand = \"node\"\nargs = [\"{}\", \"stdio\"]\n",
        index.display()
    ));
    let run = |prompt: &'static str| {
        let env = &env;
        async move {
            let mock = MockLlm::start(vec![Step::Reply(Reply::text("ok"))]).await;
            let r = env.exec_json(&mock.openai_url(), SECRET, &[], prompt).await;
            (mock, r)
        }
    };
    let (mock, r) = run("/ev:args-prompt Paris").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sent = mock.requests()[0].body["messages"].to_string();
    assert!(sent.contains("Paris"), "{sent}");
    assert!(
        !sent.contains("/ev:args-prompt"),
        "the prompt's text is sent: {sent}"
    );

    let (mock, r) = run("/ev:args-prompt").await;
    assert_ne!(r.code, 0);
    assert!(mock.requests().is_empty(), "nothing is sent");
    let error = r.first("error");
    assert_eq!(error["kind"], "command", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("/ev:args-prompt CITY [STATE]"),
        "{error}"
    );
    let (_, r) = run("/ev:no-such-prompt").await;
    assert!(
        r.first("error")["message"]
            .as_str()
            .unwrap()
            .contains("its prompts are /ev:args-prompt"),
        "{}",
        r.stdout
    );

    let (mock, r) =
        run("summarize @ev:demo://resource/static/document/architecture.md please").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sent = mock.requests()[0].body["messages"].to_string();
    assert!(
        sent.contains("The person mentioned these MCP resources")
            && sent.contains(
                "<resource mention=\\\"@ev:demo://resource/static/document/architecture.md\\\">"
            ),
        "{sent}"
    );
    let attached = r.first("attachments");
    assert_eq!(attached["files"][0]["attached"], true, "{attached}");
    assert!(
        !attached.to_string().contains("no such file"),
        "a resource is not a file: {attached}"
    );
}

/// A server's prompts come with its status, and a server that says its
/// prompts changed (`prompts/list_changed`) has the new list read and
/// shown; `/server:prompt ARG` sends the prompt it renders.
#[tokio::test]
async fn a_servers_prompts_are_sent_and_a_changed_list_is_read_again() {
    let env = Env::new(&stdio_server("test", ""));
    // (The list is read again a moment after the news, which gathers a
    // flood into one read: a second, slower call keeps the run going.)
    let mock = MockLlm::start(calls(&[
        ("m", "test__more-prompts", json!({})),
        ("s", "test__slow", json!({"steps": 10})),
    ]))
    .await;
    let r = env
        .exec_json(&mock.openai_url(), SECRET, &[], "/test:review src/lib.rs")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sent = mock.requests()[0].body["messages"].to_string();
    assert!(
        sent.contains("Review src/lib.rs for bugs, and say what you find."),
        "{sent}"
    );
    let statuses: Vec<Value> = r
        .events()
        .into_iter()
        .filter(|e| e["type"] == "mcp_server_status")
        .collect();
    let first = statuses
        .iter()
        .find(|s| s["state"] == "ready")
        .expect("ready");
    assert_eq!(first["prompts"][0]["name"], "review", "{first}");
    assert_eq!(first["prompts"][0]["arguments"][0]["required"], true);
    assert!(
        statuses
            .iter()
            .any(|s| s["prompts"].to_string().contains("\"later\"")),
        "the changed list is read: {statuses:?}"
    );
}

/// Resources a message mentions are bounded on their own (10, and 1 MiB
/// in all: what would pass it is left out and said), and are never
/// counted as files over the file limit.
#[tokio::test]
async fn a_message_takes_resources_up_to_their_bound_and_says_what_it_left() {
    let env = Env::new(&stdio_server("test", ""));
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("ok"))]).await;
    let mentions: Vec<String> = (1..=12).map(|i| format!("@test:mem://r{i:02}")).collect();
    let prompt = format!("read {}", mentions.join(" "));
    let r = env
        .exec_json(&mock.openai_url(), SECRET, &[], &prompt)
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let files = r.first("attachments")["files"].clone();
    let files = files.as_array().unwrap();
    assert_eq!(files.len(), 12, "each once: {files:?}");
    let attached = files.iter().filter(|f| f["attached"] == true).count();
    assert_eq!(attached, 5, "five of 200 KB fit in 1 MiB: {files:?}");
    for f in files.iter().filter(|f| f["attached"] == false) {
        let note = f["note"].as_str().unwrap();
        assert!(note.contains("at most 10 resources and 1024 KiB"), "{note}");
        assert!(!note.contains("files"), "not a file: {note}");
    }
    let body = &mock.requests()[0].body;
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .len();
    assert!(
        user <= 1024 * 1024 + 8 * 1024,
        "{user} bytes in the message"
    );
}
