//! `/init`, headless against the scripted server: the model is asked to
//! study the repository and propose an AGENTS.md; its commands run in a
//! read-only sandbox for the turn, and the file is written through the
//! ordinary pipeline (refused headless where the mode would ask).

use lathe_test_support::run::Setup;
use serde_json::json;

use crate::mock_llm::{MockLlm, Reply, Step};

const KEY: &str = "sk-test-key-for-init-runs-0123456789";

#[tokio::test]
async fn init_studies_read_only_and_writes_agents_md_through_the_pipeline() {
    let env = Setup::new(env!("CARGO_BIN_EXE_lathe"));
    env.file("Cargo.toml", "[package]\nname = \"demo\"\n");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "c1",
            "exec_shell",
            json!({"command": "touch made-while-studying"}),
        )),
        // Nor does any other tool that runs a program.
        Step::Reply(Reply::tools().call(
            "c1b",
            "spawn",
            json!({"command": "touch", "args": ["made-by-spawn"]}),
        )),
        Step::Reply(Reply::tools().call(
            "c2",
            "write_file",
            json!({"path": "AGENTS.md", "content": "# Demo\n\nBuild: cargo build\n"}),
        )),
        Step::Reply(Reply::text("AGENTS.md proposed")),
    ])
    .await;
    let r = env
        .exec_json(&mock.openai_url(), KEY, &[], "/init stress the tests")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let asked = mock.requests()[0].body["messages"].to_string();
    assert!(
        asked.contains("propose an AGENTS.md")
            && asked.contains("write it with write_file")
            && asked.contains("The person adds: stress the tests"),
        "{asked}"
    );
    assert!(
        !env.ws.path().join("made-while-studying").exists(),
        "commands only look while studying"
    );
    assert_eq!(r.finished("c1b")["status"], "denied");
    assert!(!env.ws.path().join("made-by-spawn").exists());
    assert_eq!(r.finished("c2")["status"], "ok");
    assert_eq!(
        std::fs::read_to_string(env.ws.path().join("AGENTS.md")).unwrap(),
        "# Demo\n\nBuild: cargo build\n"
    );
    // There now: the next /init proposes changes; in ask mode, headless,
    // the change is refused (no one to approve it), the file kept.
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "c3",
            "write_file",
            json!({"path": "AGENTS.md", "content": "replaced\n"}),
        )),
        Step::Reply(Reply::text("proposed")),
    ])
    .await;
    let args = [
        "exec",
        "--json",
        "-a",
        "ask",
        "--checkpoints",
        "off",
        "--base-url",
        &mock.openai_url(),
        "--model",
        "mock-model",
        "/init",
    ];
    let r = env.run(&args, &[("OPENAI_API_KEY", KEY)], "").await;
    assert!(
        mock.requests()[0].body["messages"]
            .to_string()
            .contains("AGENTS.md exists"),
    );
    assert_eq!(r.finished("c3")["status"], "denied", "{}", r.stdout);
    assert!(
        std::fs::read_to_string(env.ws.path().join("AGENTS.md"))
            .unwrap()
            .starts_with("# Demo")
    );
}
