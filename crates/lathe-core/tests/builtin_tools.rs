//! The built-ins beyond files and the shell: `grep` and `glob` (searching
//! the workspace as ripgrep does, without a shell and without asking),
//! `memory_read` and `memory_write`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use harness::*;
use lathe_core::policy::Workspace;
use lathe_core::protocol::{AgentEvent, ApprovalMode, ToolStatus};
use lathe_core::provider::ProviderKind;
use lathe_core::tools::builtin::{Glob, Grep, MemoryRead, MemoryWrite};
use lathe_core::tools::{Tool, ToolContext, ToolError};
use serde_json::{Value, json};

fn tree() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let w = |p: &str, text: &[u8]| {
        let path = ws.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    w(".gitignore", b"target/\n*.log\n");
    w("src/main.rs", b"fn main() {\n    let needle = 1;\n}\n");
    w(
        "src/lib/util.rs",
        b"// Needle in a comment\npub fn util() {}\n",
    );
    w("src/app.ts", b"const needle = 2;\n");
    w("target/debug/out.rs", b"needle in an ignored dir\n");
    w("build.log", b"needle in an ignored file\n");
    w(".github/workflows/ci.yml", b"run: needle\n");
    w(".git/config", b"needle in git\n");
    w("image.png", b"\x89PNG\0\0needle");
    ws
}

async fn call(tool: &dyn Tool, ws: &Path, args: Value) -> Result<Value, ToolError> {
    let ctx = ToolContext::standalone(Arc::new(Workspace::new(ws).unwrap()));
    tool.execute(args, &ctx).await
}

#[tokio::test]
async fn grep_respects_gitignore_skips_binary_files_and_numbers_lines() {
    let ws = tree();
    let v = call(&Grep, ws.path(), json!({"pattern": "needle"}))
        .await
        .unwrap();
    assert_eq!(
        v["matches"],
        ".github/workflows/ci.yml:1:run: needle\nsrc/app.ts:1:const needle = 2;\nsrc/main.rs:2:    let needle = 1;\n",
        "{v}"
    );
    assert_eq!(v["count"], 3);
    assert_eq!(v["truncated"], false);
    let v = call(
        &Grep,
        ws.path(),
        json!({"pattern": "NEEDLE", "case_insensitive": true, "glob": "*.rs"}),
    )
    .await
    .unwrap();
    assert_eq!(
        v["matches"],
        "src/lib/util.rs:1:// Needle in a comment\nsrc/main.rs:2:    let needle = 1;\n"
    );
    let v = call(
        &Grep,
        ws.path(),
        json!({"pattern": "fn main() {", "fixed_strings": true, "path": "src", "context": 1}),
    )
    .await
    .unwrap();
    assert_eq!(
        v["matches"],
        "src/main.rs:1:fn main() {\nsrc/main.rs-2-    let needle = 1;\n"
    );
}

#[tokio::test]
async fn grep_caps_its_results_and_says_so_and_bad_input_is_an_error() {
    let ws = tempfile::tempdir().unwrap();
    for i in 0..50 {
        std::fs::write(
            ws.path().join(format!("f{i:02}.txt")),
            "hit\nhit\nhit\n".repeat(10),
        )
        .unwrap();
    }
    let v = call(
        &Grep,
        ws.path(),
        json!({"pattern": "hit", "max_results": 25}),
    )
    .await
    .unwrap();
    assert_eq!(v["truncated"], true, "{v}");
    assert_eq!(v["matches"].as_str().unwrap().lines().count(), 25);
    assert!(v["note"].as_str().unwrap().contains("narrow"));
    let e = call(&Grep, ws.path(), json!({"pattern": "("}))
        .await
        .unwrap_err();
    assert!(
        matches!(e, ToolError::InvalidArgs(ref m) if m.contains("pattern")),
        "{e}"
    );
    let e = call(&Grep, ws.path(), json!({"pattern": "x", "path": "missing"}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::FileNotFound(_)), "{e}");
}

#[tokio::test]
async fn glob_finds_files_by_name_or_path_sorted() {
    let ws = tree();
    let v = call(&Glob, ws.path(), json!({"pattern": "*.rs"}))
        .await
        .unwrap();
    assert_eq!(v["files"], json!(["src/lib/util.rs", "src/main.rs"]), "{v}");
    let v = call(&Glob, ws.path(), json!({"pattern": "src/*.ts"}))
        .await
        .unwrap();
    assert_eq!(v["files"], json!(["src/app.ts"]));
    let v = call(&Glob, ws.path(), json!({"pattern": "**/*.yml"}))
        .await
        .unwrap();
    assert_eq!(v["files"], json!([".github/workflows/ci.yml"]));
    let v = call(&Glob, ws.path(), json!({"pattern": "*", "max_results": 2}))
        .await
        .unwrap();
    assert_eq!(v["truncated"], true);
    assert_eq!(v["files"].as_array().unwrap().len(), 2);
    assert!(v["count"].as_u64().unwrap() > 2);
}

/// Searching never asks, in any mode, and never leaves the workspace.
#[tokio::test]
async fn searches_never_ask_and_stay_in_the_workspace() {
    let ws = tree();
    for mode in [ApprovalMode::ReadOnly, ApprovalMode::Ask] {
        let ((status, content, _), events) = run_one(
            Setup::new(ProviderKind::OpenAi).mode(mode),
            ws.path(),
            "grep",
            json!({"pattern": "needle"}),
        )
        .await;
        assert_eq!(status, ToolStatus::Ok, "{content}");
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, AgentEvent::ApprovalRequested { .. })),
            "{mode:?} asked"
        );
        let ((status, _, _), _) = run_one(
            Setup::new(ProviderKind::OpenAi).mode(mode),
            ws.path(),
            "glob",
            json!({"pattern": "*.rs"}),
        )
        .await;
        assert_eq!(status, ToolStatus::Ok);
    }
    let ((status, content, _), _) = run_one(
        Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::FullAuto),
        ws.path(),
        "grep",
        json!({"pattern": "root", "path": "/etc"}),
    )
    .await;
    assert_ne!(status, ToolStatus::Ok, "{content}");
    let ((status, _, _), _) = run_one(
        Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::FullAuto),
        ws.path(),
        "glob",
        json!({"pattern": "*", "path": ".."}),
    )
    .await;
    assert_ne!(status, ToolStatus::Ok);
}

/// A link out of the workspace is not followed.
#[tokio::test]
async fn links_out_of_the_workspace_are_not_followed() {
    let ws = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join("secret.txt"), "needle outside\n").unwrap();
    std::os::unix::fs::symlink(out.path(), ws.path().join("link")).unwrap();
    let v = call(&Grep, ws.path(), json!({"pattern": "needle"}))
        .await
        .unwrap();
    assert_eq!(v["count"], 0, "{v}");
    let v = call(&Glob, ws.path(), json!({"pattern": "*.txt"}))
        .await
        .unwrap();
    assert_eq!(v["files"], json!([]), "{v}");
}

/// Ignore files the walk would read that are not files (a link to
/// `/dev/zero`, a FIFO, a `.git` pointer whose `commondir` is a device):
/// grep and glob never ask, so any model could use one to exhaust memory
/// or hang Lathe. The walk reads none of them; what they guard is left
/// out and said.
#[tokio::test]
async fn searches_survive_ignore_files_that_are_not_files() {
    let ws = tree();
    let root = ws.path();
    std::fs::create_dir_all(root.join("zero")).unwrap();
    std::fs::write(root.join("zero/a.rs"), "needle\n").unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("zero/.gitignore")).unwrap();
    std::fs::create_dir_all(root.join("fifo")).unwrap();
    std::fs::write(root.join("fifo/b.rs"), "needle\n").unwrap();
    nix::unistd::mkfifo(&root.join("fifo/.ignore"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    std::fs::create_dir_all(root.join("wt/g")).unwrap();
    std::fs::write(root.join("wt/c.rs"), "needle\n").unwrap();
    std::fs::write(
        root.join("wt/.git"),
        format!("gitdir: {}\n", root.join("wt/g").display()),
    )
    .unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("wt/g/commondir")).unwrap();
    // A `.git` that is a link to a directory whose `info/exclude` is
    // `/dev/zero` (the walk follows the link).
    std::fs::create_dir_all(root.join("gd/info")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("gd/info/exclude")).unwrap();
    std::fs::create_dir_all(root.join("linked")).unwrap();
    std::fs::write(root.join("linked/d.rs"), "needle\n").unwrap();
    std::os::unix::fs::symlink("../gd", root.join("linked/.git")).unwrap();
    // A file of the kernel's that says it is regular and empty, and reads
    // without end.
    std::fs::create_dir_all(root.join("pagemap")).unwrap();
    std::fs::write(root.join("pagemap/e.rs"), "needle\n").unwrap();
    std::os::unix::fs::symlink("/proc/self/pagemap", root.join("pagemap/.gitignore")).unwrap();
    std::fs::create_dir_all(root.join("sys")).unwrap();
    std::fs::write(root.join("sys/f.rs"), "needle\n").unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", root.join("sys/.ignore")).unwrap();
    for (tool, args) in [
        (&Grep as &dyn Tool, json!({"pattern": "needle"})),
        (&Glob as &dyn Tool, json!({"pattern": "*.rs"})),
    ] {
        let v = tokio::time::timeout(Duration::from_secs(20), call(tool, root, args))
            .await
            .expect("the search hung")
            .unwrap();
        let text = v.to_string();
        assert!(text.contains("src/main.rs"), "{text}");
        for (dir, file) in [
            ("zero", "a.rs"),
            ("fifo", "b.rs"),
            ("wt", "c.rs"),
            ("linked", "d.rs"),
            ("pagemap", "e.rs"),
            ("sys", "f.rs"),
        ] {
            assert!(!text.contains(&format!("{dir}/{file}")), "{text}");
            assert!(
                v["skipped"].as_array().unwrap().iter().any(|s| s
                    .as_str()
                    .unwrap()
                    .contains(&format!("{dir} was not searched"))),
                "{text}"
            );
        }
    }
    // The workspace's own .gitignore as a link to /dev/zero: no ignore
    // file is read, the search goes on.
    std::fs::remove_file(root.join(".gitignore")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join(".gitignore")).unwrap();
    let v = tokio::time::timeout(
        Duration::from_secs(20),
        call(&Glob, root, json!({"pattern": "*.rs"})),
    )
    .await
    .expect("the search hung")
    .unwrap();
    assert!(
        v["skipped"][0]
            .as_str()
            .unwrap()
            .contains("no ignore file was read"),
        "{v}"
    );
}

#[tokio::test]
async fn memory_appends_paragraphs_searches_and_overwrites_per_workspace() {
    let store = tempfile::tempdir().unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let read = MemoryRead::new(Some(store.path().into()));
    let write = MemoryWrite::new(Some(store.path().into()));
    let v = call(&read, a.path(), json!({})).await.unwrap();
    assert_eq!(v, json!({"content": "", "message": "No memory file found"}));
    for note in [
        "Decided: JWT for authentication.",
        "Database: Postgres 16.\nMigrations in db/.",
    ] {
        let v = call(&write, a.path(), json!({"content": note}))
            .await
            .unwrap();
        assert!(
            v["message"].as_str().unwrap().contains("mode: append"),
            "{v}"
        );
    }
    let v = call(&read, a.path(), json!({})).await.unwrap();
    assert_eq!(
        v["content"],
        "Decided: JWT for authentication.\n\nDatabase: Postgres 16.\nMigrations in db/.\n"
    );
    let v = call(&read, a.path(), json!({"query": "POSTGRES"}))
        .await
        .unwrap();
    assert_eq!(v["count"], 1);
    assert_eq!(
        v["matches"][0],
        "Database: Postgres 16.\nMigrations in db/."
    );
    // Another workspace has its own.
    let v = call(&read, b.path(), json!({})).await.unwrap();
    assert_eq!(v["content"], "");
    call(
        &write,
        a.path(),
        json!({"content": "Fresh start.", "mode": "overwrite"}),
    )
    .await
    .unwrap();
    let v = call(&read, a.path(), json!({})).await.unwrap();
    assert_eq!(v["content"], "Fresh start.\n");
    // Nothing of it lands in the workspace.
    assert_eq!(std::fs::read_dir(a.path()).unwrap().count(), 0);
    let e = call(&MemoryWrite::new(None), a.path(), json!({"content": "x"}))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("not available"), "{e}");
}

/// A memory write changes what the model is told in later sessions: it
/// asks where writes ask, and read-only refuses it.
#[tokio::test]
async fn memory_writes_ask_where_writes_ask() {
    let ws = tempfile::tempdir().unwrap();
    for (mode, ok) in [
        (ApprovalMode::ReadOnly, false),
        (ApprovalMode::Ask, false),
        (ApprovalMode::AutoEdit, true),
    ] {
        let ((status, content, _), _) = run_one(
            Setup::new(ProviderKind::OpenAi).mode(mode),
            ws.path(),
            "memory_write",
            json!({"content": "note"}),
        )
        .await;
        assert_eq!(status == ToolStatus::Ok, ok, "{mode:?}: {content}");
        let ((status, _, _), _) = run_one(
            Setup::new(ProviderKind::OpenAi).mode(mode),
            ws.path(),
            "memory_read",
            json!({}),
        )
        .await;
        assert_eq!(status, ToolStatus::Ok, "{mode:?}");
    }
}

/// A small web server on loopback: pages, a redirect, a big body, a
/// SearXNG-style search.
async fn web_server() -> String {
    use axum::Router;
    use axum::http::header;
    use axum::response::{IntoResponse, Redirect};
    use axum::routing::get;
    let app = Router::new()
        .route(
            "/page",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                    "<html><head><style>x{}</style></head><body><h1>Docs</h1>\
                     <p>Use <code>cargo test</code>.</p><script>steal()</script></body></html>",
                )
            }),
        )
        .route("/moved", get(|| async { Redirect::temporary("/page") }))
        .route(
            "/to-localhost",
            get(|| async { Redirect::temporary("http://localhost:9/secret") }),
        )
        .route("/big", get(|| async { "x".repeat(3 * 1024 * 1024) }))
        .route(
            "/png",
            get(|| async { ([(header::CONTENT_TYPE, "image/png")], vec![0x89u8, b'P', 0]) }),
        )
        .route(
            "/search",
            get(|uri: axum::http::Uri| async move {
                let url = reqwest::Url::parse(&format!("http://x{uri}")).unwrap();
                let q: std::collections::HashMap<String, String> =
                    url.query_pairs().into_owned().collect();
                assert_eq!(q.get("format").map(String::as_str), Some("json"));
                let query = q.get("q").cloned().unwrap_or_default();
                let results: Vec<Value> = (0..8)
                    .map(|i| json!({"title": format!("{query} {i}"), "url": format!("https://r/{i}"), "content": "snippet", "engine": "x"}))
                    .collect();
                axum::Json(json!({"query": query, "results": results})).into_response()
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}

fn web(allow: &[&str], endpoint: Option<String>) -> lathe_core::tools::builtin::WebSettings {
    lathe_core::tools::builtin::WebSettings {
        allow_hosts: allow.iter().map(|s| s.to_string()).collect(),
        allow_private: false,
        search_endpoint: endpoint,
    }
}

#[tokio::test]
async fn web_fetch_refuses_this_machine_and_the_local_network_unless_allowed() {
    use lathe_core::tools::builtin::WebFetch;
    let base = web_server().await;
    let ws = tempfile::tempdir().unwrap();
    let e = call(
        &WebFetch::new(&web(&[], None)),
        ws.path(),
        json!({"url": format!("{base}/page")}),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(e, ToolError::PermissionDenied(ref m) if m.contains("not a public address")),
        "{e}"
    );
    for url in [
        "http://[::1]:9/",
        "http://169.254.169.254/latest/meta-data",
        "http://0x7f000001/",
        "file:///etc/passwd",
    ] {
        assert!(
            call(
                &WebFetch::new(&web(&[], None)),
                ws.path(),
                json!({"url": url})
            )
            .await
            .is_err(),
            "{url}"
        );
    }
    let allowed = WebFetch::new(&web(&["127.0.0.1"], None));
    let v = call(&allowed, ws.path(), json!({"url": format!("{base}/moved")}))
        .await
        .unwrap();
    assert_eq!(v["status"], 200, "{v}");
    assert!(v["url"].as_str().unwrap().ends_with("/page"), "{v}");
    let body = v["body"].as_str().unwrap();
    assert!(
        body.contains("# Docs") && body.contains("`cargo test`"),
        "{body}"
    );
    assert!(!body.contains("steal"), "{body}");
    // Allowing one host does not allow another behind a redirect: one
    // to another site is told, not followed (the model fetches it through
    // every check again), and the headers it set go nowhere else.
    let v = call(
        &allowed,
        ws.path(),
        json!({"url": format!("{base}/to-localhost"),
               "headers": {"Authorization": "Bearer secret-token"}}),
    )
    .await
    .unwrap();
    assert_eq!(v["redirect"], "http://localhost:9/secret", "{v}");
    assert!(v.get("body").is_none(), "{v}");
    assert!(v["note"].as_str().unwrap().contains("not followed"), "{v}");
    let v = call(&allowed, ws.path(), json!({"url": format!("{base}/big")}))
        .await
        .unwrap();
    assert_eq!(v["truncated"], true);
    assert_eq!(v["bytes"], 1024 * 1024);
    let v = call(&allowed, ws.path(), json!({"url": format!("{base}/png")}))
        .await
        .unwrap();
    assert_eq!(v["body"], "[image/png content, 3 bytes, not shown]");
}

#[tokio::test]
async fn web_search_speaks_searxng_and_says_when_it_is_not_configured() {
    use lathe_core::tools::builtin::WebSearch;
    let base = web_server().await;
    let ws = tempfile::tempdir().unwrap();
    let v = call(
        &WebSearch::new(&web(&[], None)),
        ws.path(),
        json!({"query": "rust"}),
    )
    .await
    .unwrap();
    assert_eq!(v["error"], "web search not configured", "{v}");
    let v = call(
        &WebSearch::new(&web(&[], Some(base))),
        ws.path(),
        json!({"query": "tokio runtime", "num_results": 3}),
    )
    .await
    .unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 3, "{v}");
    assert_eq!(
        v["results"][0],
        json!({"title": "tokio runtime 0", "url": "https://r/0", "snippet": "snippet"})
    );
}

/// Reaching the network asks where the table says (not in full-auto), and
/// headless `ask` is denied.
#[tokio::test]
async fn web_fetch_asks_for_the_network() {
    let ws = tempfile::tempdir().unwrap();
    let ((status, content, _), events) = run_one(
        Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::AutoEdit),
        ws.path(),
        "web_fetch",
        json!({"url": "https://example.com/"}),
    )
    .await;
    assert_eq!(status, ToolStatus::Denied, "{content}");
    assert!(
        asked(&events).iter().any(|a| a.contains("example.com")),
        "{events:?}"
    );
}

#[tokio::test]
async fn spawn_runs_a_program_without_a_shell_in_the_sandbox_five_at_a_time() {
    use lathe_core::tools::builtin::Spawn;
    let ws = tempfile::tempdir().unwrap();
    let spawn = Arc::new(Spawn::new(&builtin_settings()));
    let v = call(
        &*spawn,
        ws.path(),
        json!({"command": "echo", "args": ["$(id)", "a  b"], "description": "say it"}),
    )
    .await
    .unwrap();
    assert_eq!(v["stdout"], "$(id) a  b\n", "no shell: {v}");
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["command"], "echo");
    assert_eq!(v["description"], "say it");
    let outside = crate::places::outside("lathe-spawn-");
    let target = outside.path().join("x");
    let v = call(
        &*spawn,
        ws.path(),
        json!({"command": "touch", "args": [target.to_str().unwrap()]}),
    )
    .await
    .unwrap();
    assert!(!target.exists(), "the sandbox holds: {v}");
    assert!(v["sandbox"].is_string(), "{v}");
    let e = call(
        &*spawn,
        ws.path(),
        json!({"command": "no-such-program-xyz"}),
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("no-such-program-xyz"), "{e}");
    // A sixth at once is refused.
    let ctx = ToolContext::standalone(Arc::new(Workspace::new(ws.path()).unwrap()));
    let runs = (0..6).map(|_| {
        let spawn = spawn.clone();
        let ctx = ctx.clone();
        async move {
            spawn
                .execute(json!({"command": "sleep", "args": ["1"]}), &ctx)
                .await
        }
    });
    let results = futures_util::future::join_all(runs).await;
    let refused: Vec<_> = results.iter().filter(|r| r.is_err()).collect();
    assert_eq!(refused.len(), 1, "{results:?}");
    assert!(
        refused[0]
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("limit")
    );
}

/// A spawn is judged as the simple command it makes: what would ask as a
/// shell line asks, what is read-only is not asked about.
#[tokio::test]
async fn spawn_is_judged_like_the_command_it_runs() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("keep.txt"), "x").unwrap();
    let ((status, _, _), events) = run_one(
        Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::Ask),
        ws.path(),
        "spawn",
        json!({"command": "ls", "args": ["-la"]}),
    )
    .await;
    assert_eq!(status, ToolStatus::Ok);
    assert!(asked(&events).is_empty());
    let ((status, _, _), events) = run_one(
        Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::Ask),
        ws.path(),
        "spawn",
        json!({"command": "rm", "args": ["keep.txt"]}),
    )
    .await;
    assert_eq!(status, ToolStatus::Denied);
    assert!(asked(&events)[0].contains("rm keep.txt"), "{events:?}");
    assert!(ws.path().join("keep.txt").exists());
    let ((status, _, _), _) = run_one(
        Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::FullAuto),
        ws.path(),
        "spawn",
        json!({"command": "sudo", "args": ["rm", "-rf", "/"]}),
    )
    .await;
    assert_eq!(status, ToolStatus::Denied, "the denylist holds");
}

#[tokio::test]
async fn message_notifies_the_terminal_or_posts_to_a_webhook() {
    use lathe_core::tools::builtin::Message;
    use std::sync::Mutex;
    let ws = tempfile::tempdir().unwrap();
    let got: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: axum::Json<Value>| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(body.0);
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let mut channels = std::collections::BTreeMap::new();
    channels.insert(
        "team".to_string(),
        lathe_core::secret::Secret::new(format!("http://{addr}/hook")).unwrap(),
    );
    let tool = Message::new(&channels);
    let v = call(
        &tool,
        ws.path(),
        json!({"channel": "team", "chat_id": "C1", "content": "build done"}),
    )
    .await
    .unwrap();
    assert_eq!(
        v,
        json!({"status": "sent", "channel": "team", "chat_id": "C1", "content_length": 10})
    );
    assert_eq!(
        got.lock().unwrap()[0],
        json!({"text": "build done", "content": "build done"})
    );
    let e = call(&tool, ws.path(), json!({"channel": "nope", "content": "x"}))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("terminal, team"), "{e}");
    // The terminal channel: a notify line for the front end, no approval.
    let ((status, _, _), events) = run_one(
        Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::Ask),
        ws.path(),
        "message",
        json!({"channel": "terminal", "content": "tests pass"}),
    )
    .await;
    assert_eq!(status, ToolStatus::Ok);
    assert!(asked(&events).is_empty());
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::ToolProgress { stream, text, .. } if stream == "notify" && text == "tests pass")));
}

/// A few file writes can assemble a bare repository set up to run a
/// program: the write that completes it gets it disarmed.
#[tokio::test]
async fn file_writes_that_assemble_a_git_repository_are_checked() {
    use lathe_core::tools::builtin::WriteFile;
    let ws = tempfile::tempdir().unwrap();
    // The write that makes it a git directory (or the common directory a
    // worktree's `commondir` may name: objects and refs) gets it disarmed.
    let mut warned = Vec::new();
    for (path, content) in [
        ("docs/config", "[core]\n\tpager = evil\n"),
        ("docs/objects/.keep", ""),
        ("docs/refs/.keep", ""),
        ("docs/HEAD", "ref: refs/heads/main\n"),
    ] {
        let v = call(
            &WriteFile,
            ws.path(),
            json!({"path": path, "content": content}),
        )
        .await
        .unwrap();
        warned.push(v["warnings"].to_string());
    }
    assert!(
        warned.iter().any(|w| w.contains("core.pager")),
        "{warned:?}"
    );
    assert!(ws.path().join("docs/config.lathe-disarmed").exists());
}
