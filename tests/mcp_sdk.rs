//! The real `lathe` binary against the MCP TypeScript SDK's own example
//! server (`simpleStreamableHttp.js`, from npm as `.ci/run` installs it):
//! logging in with OAuth (`--oauth`, with its authorization server), and
//! against a server on the SDK's OAuth router whose tokens last 2 s and
//! whose refresh tokens rotate (a refresh token spent twice revokes the
//! whole family, as hosted servers do); `$BROWSER` is a script that
//! follows the login page's redirects back to Lathe, as a person's
//! browser would. Then the server asking the person (elicitation).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use lathe_test_support::run::Setup;
use serde_json::{Value, json};

use crate::mock_llm::{MockLlm, Reply, Step};

const KEY: &str = "sk-lathe-oauth-test-0123456789abcdef";

/// The installed SDK (`target/npm`, as `.ci/run` puts it, or where
/// `LATHE_MCP_SDK` says). Without node these tests are skipped with a
/// message, unless `LATHE_REQUIRE_NODE=1` makes that a failure.
pub(crate) fn sdk() -> Option<PathBuf> {
    lathe_test_support::npm::installed(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("target/npm/node_modules/@modelcontextprotocol/sdk"),
        "LATHE_MCP_SDK",
        "@modelcontextprotocol/sdk@1.32.2",
    )
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `node script args` with `env`, once it prints `ready`; its
/// stdout lines are kept in the returned log.
pub(crate) async fn node(
    script: &Path,
    args: &[&str],
    env: &[(&str, String)],
    ready: &str,
) -> (
    tokio::process::Child,
    std::sync::Arc<std::sync::Mutex<String>>,
) {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new("node")
        .arg(script)
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let started = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains(ready) {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(
        started.ok(),
        Some(true),
        "{} did not start",
        script.display()
    );
    let kept = log.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            kept.lock().unwrap().push_str(&(line + "\n"));
        }
    });
    (child, log)
}

/// A `$BROWSER` that opens the page it is given and follows its
/// redirects (to Lathe's loopback listener), writing what it got to
/// `page` beside it.
fn browser(dir: &Path) -> PathBuf {
    let script = dir.join("browser.py");
    std::fs::write(
        &script,
        format!(
            "#!/usr/bin/env python3\nimport sys, urllib.request\n\
             with urllib.request.urlopen(sys.argv[1], timeout=20) as r:\n    \
             open({:?}, 'w').write(str(r.status) + ' ' + r.read().decode())\n",
            dir.join("page").display().to_string()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// The access token kept for the one server logged in to.
fn kept_token(home: &Path) -> (PathBuf, String) {
    let dir = home.join("mcp-oauth");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("no login kept");
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let token = kept["credentials"]["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    (file, token)
}

/// Every file under `dir` but the logins, as text.
fn everything_written(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() && p.file_name().is_some_and(|n| n != "mcp-oauth") {
            everything_written(&p, out);
        } else if p.is_file() {
            out.push((
                p.clone(),
                String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned(),
            ));
        }
    }
}

fn calls(id: &str, tool: &str, args: Value) -> Vec<Step> {
    vec![
        Step::Reply(Reply::tools().call(id, tool, args)),
        Step::Reply(Reply::text("done")),
    ]
}

/// A person logs in to the SDK's OAuth example (dynamic registration,
/// PKCE, the resource parameter, a loopback return), calls a tool with
/// the login, and logs out; before the login and after the logout the
/// server says in one line what to run, and the run goes on.
#[tokio::test]
async fn a_login_to_the_sdks_oauth_example_a_call_with_it_and_a_logout() {
    let Some(sdk) = sdk() else {
        return;
    };
    let (mcp_port, auth_port) = (free_port(), free_port());
    let (_server, _) = node(
        &sdk.join("dist/esm/examples/server/simpleStreamableHttp.js"),
        &["--oauth"],
        &[
            ("MCP_PORT", mcp_port.to_string()),
            ("MCP_AUTH_PORT", auth_port.to_string()),
        ],
        "MCP Streamable HTTP Server listening",
    )
    .await;
    let env = Setup::new(env!("CARGO_BIN_EXE_lathe"));
    env.config(&format!(
        "[mcp_servers.demo]\nurl = \"http://localhost:{mcp_port}/mcp\"\n"
    ));

    // Before a login: said in one line, with the command; the run goes on.
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("fine"))]).await;
    let r = env.exec_json(&mock.openai_url(), KEY, &[], "hi").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let status = r
        .events()
        .into_iter()
        .find(|e| e["type"] == "mcp_server_status" && e["state"] == "needs_login")
        .unwrap_or_else(|| panic!("no needs_login status: {}", r.stdout));
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains("lathe mcp login demo"),
        "{status}"
    );
    let r = env.run(&["mcp", "list"], &[], "").await;
    assert_eq!(r.code, 0, "a server that needs a login is not a failure");
    assert!(r.stdout.contains("demo (needs login)"), "{}", r.stdout);

    // The login: the URL printed, the browser sent to it, the token kept.
    let places = tempfile::tempdir().unwrap();
    let script = browser(places.path());
    let r = env
        .run(
            &["mcp", "login", "demo"],
            &[("BROWSER", script.to_str().unwrap())],
            "",
        )
        .await;
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let auth = format!("http://localhost:{auth_port}/authorize?");
    assert!(r.stdout.contains(&auth), "the URL is printed: {}", r.stdout);
    for part in [
        "code_challenge_method=S256",
        "resource=http%3A%2F%2Flocalhost%3A",
        "redirect_uri=http%3A%2F%2F127.0.0.1%3A",
    ] {
        assert!(r.stdout.contains(part), "{part}: {}", r.stdout);
    }
    assert!(r.stdout.contains("logged in to demo"), "{}", r.stdout);
    let page = std::fs::read_to_string(places.path().join("page")).unwrap();
    assert!(
        page.starts_with("200 ") && page.contains("logged in to demo"),
        "{page}"
    );
    let (file, token) = kept_token(env.home.path());
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);
    let r = env.run(&["mcp", "list"], &[], "").await;
    assert!(
        r.stdout.contains("demo (ready) http") && r.stdout.contains("logged in"),
        "{}",
        r.stdout
    );

    // A call with the login.
    let mock = MockLlm::start(calls("g", "demo__greet", json!({"name": "Ada"}))).await;
    let r = env.exec_json(&mock.openai_url(), KEY, &[], "greet").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let done = r.finished("g");
    assert_eq!(done["status"], "ok", "{done}");
    assert!(done.to_string().contains("Hello, Ada"), "{done}");

    // The token is nowhere else: not in the config, records, journal,
    // log, or what was printed.
    let mut written = Vec::new();
    everything_written(env.home.path(), &mut written);
    everything_written(env.ws.path(), &mut written);
    assert!(
        written
            .iter()
            .any(|(p, _)| p.to_string_lossy().contains("sessions"))
    );
    for (path, text) in &written {
        assert!(!text.contains(&token), "the token is in {}", path.display());
    }
    assert!(!r.stdout.contains(&token) && !r.stderr.contains(&token));

    // The logout forgets it; the server asks again.
    let r = env.run(&["mcp", "logout", "demo"], &[], "").await;
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("logged out of demo"), "{}", r.stdout);
    assert!(!file.exists());
    let r = env.run(&["mcp", "list"], &[], "").await;
    assert!(r.stdout.contains("demo (needs login)"), "{}", r.stdout);
    let r = env.run(&["mcp", "logout", "demo"], &[], "").await;
    assert!(r.stdout.contains("not logged in to demo"), "{}", r.stdout);
}

/// Tokens that expire are refreshed before they are sent; two sessions
/// refreshing the same rotating token at once take turns (the second
/// reads what the first kept), so the family is never revoked.
#[tokio::test]
async fn expired_tokens_are_refreshed_and_two_sessions_at_once_keep_the_login() {
    let Some(sdk) = sdk() else {
        return;
    };
    let port = free_port();
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp-oauth-rotating.mjs");
    let (_server, log) = node(
        &fixture,
        &[],
        &[
            ("SDK_ROOT", sdk.display().to_string()),
            ("PORT", port.to_string()),
        ],
        "listening",
    )
    .await;
    let env = Setup::new(env!("CARGO_BIN_EXE_lathe"));
    env.config(&format!(
        "[mcp_servers.rot]\nurl = \"http://localhost:{port}/mcp\"\n"
    ));
    let places = tempfile::tempdir().unwrap();
    let script = browser(places.path());
    let r = env
        .run(
            &["mcp", "login", "rot"],
            &[("BROWSER", script.to_str().unwrap())],
            "",
        )
        .await;
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let (_, first) = kept_token(env.home.path());
    for round in 0..3 {
        // Past the token's 2 s.
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let (a, b) = tokio::join!(
            env.run(&["mcp", "list"], &[], ""),
            env.run(&["mcp", "list"], &[], "")
        );
        for r in [a, b] {
            assert!(
                r.stdout.contains("rot (ready)"),
                "round {round}: {}\n{}\nserver: {}",
                r.stdout,
                r.stderr,
                log.lock().unwrap()
            );
        }
    }
    let said = log.lock().unwrap().clone();
    assert!(!said.contains("family revoked"), "{said}");
    assert!(said.contains("refreshed (3)"), "{said}");
    let (_, now) = kept_token(env.home.path());
    assert_ne!(first, now, "the refreshed token is kept");

    // A call in a session whose token expired on the way; the server
    // tells the refreshed token back, which is hidden wherever it goes.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call("w", "rot__whoami", json!({})).call(
            "t",
            "rot__token",
            json!({}),
        )),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let r = env.exec_json(&mock.openai_url(), KEY, &[], "who").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.finished("w")["status"], "ok", "{}", r.stdout);
    let told = r.finished("t").to_string();
    assert!(told.contains("your token: [REDACTED]"), "{told}");
    let (_, token) = kept_token(env.home.path());
    let mut written = Vec::new();
    everything_written(env.home.path(), &mut written);
    for (path, text) in &written {
        assert!(!text.contains(&token), "the token is in {}", path.display());
    }
    let sent = mock.requests()[1].body.to_string();
    assert!(!sent.contains(&token), "the model was sent the token");
    assert!(!r.stdout.contains(&token) && !r.stderr.contains(&token));
}

/// A server's form (elicitation) during a call: headless, no one can
/// answer, so it is declined, and the turn's questions say what was asked.
#[tokio::test]
async fn a_servers_form_is_declined_headless_and_said_so() {
    let Some(sdk) = sdk() else {
        return;
    };
    let port = free_port();
    let (_server, _) = node(
        &sdk.join("dist/esm/examples/server/simpleStreamableHttp.js"),
        &[],
        &[("MCP_PORT", port.to_string())],
        "MCP Streamable HTTP Server listening",
    )
    .await;
    let env = Setup::new(env!("CARGO_BIN_EXE_lathe"));
    env.config(&format!(
        "[mcp_servers.demo]\nurl = \"http://localhost:{port}/mcp\"\n"
    ));
    let mock = MockLlm::start(calls(
        "u",
        "demo__collect-user-info",
        json!({"infoType": "contact"}),
    ))
    .await;
    let r = env.exec_json(&mock.openai_url(), KEY, &[], "collect").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let done = r.finished("u").to_string();
    assert!(done.contains("declined"), "{done}");
    let asked = r.first("turn_completed")["questions"].clone();
    let question = asked[0]["question"].as_str().unwrap_or_default();
    assert!(
        question
            .contains("MCP server demo asks: Please provide your contact information\nFull Name"),
        "{asked}"
    );
    assert!(asked[0]["answer"].is_null(), "{asked}");
}
