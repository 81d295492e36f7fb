//! A person's own subagent types (Claude Code's `.claude/agents/*.md`),
//! driven through the binary: `task` lists them and takes `agent`; the
//! type's instructions lead its subagent's system prompt and its tools
//! narrow what the job asked for; a workspace's types wait for trust.

use lathe_test_support::run::Setup;
use serde_json::{Value, json};

use crate::mock_llm::{MockLlm, Reply, Step};

const KEY: &str = "sk-test-key-for-agent-runs-0123456789";

fn task_tool(request: &Value) -> Value {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "task")
        .map(|t| t["function"].clone())
        .unwrap()
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_task_of_a_type_gets_its_instructions_and_no_more_tools_than_both_allow() {
    let env = Setup::new(env!("CARGO_BIN_EXE_lathe"));
    let agents = env.home.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews a change for bugs\ntools: Read, Grep\n---\nYou are a strict reviewer: list each bug with its line.\n",
    )
    .unwrap();
    env.file("notes.txt", "x\n");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "t1",
            "task",
            json!({
                "agent": "reviewer",
                "description": "review",
                "prompt": "review notes.txt",
                "tools": ["read_file", "write_file"]
            }),
        )),
        Step::Reply(Reply::text("no bugs")),
        Step::Reply(Reply::tools().call(
            "t2",
            "task",
            json!({"agent": "nobody", "description": "x", "prompt": "y"}),
        )),
        Step::Reply(Reply::tools().call(
            "t3",
            "task",
            json!({"agent": "reviewer", "description": "x", "prompt": "y", "tools": ["write_file"]}),
        )),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let r = env
        .exec_json(&mock.openai_url(), KEY, &[], "review it")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let requests = mock.requests();
    let task = task_tool(&requests[0].body);
    assert!(
        task["description"]
            .to_string()
            .contains("- reviewer: Reviews a change for bugs"),
        "{task}"
    );
    assert_eq!(
        task["parameters"]["properties"]["agent"]["enum"],
        json!(["reviewer"])
    );
    // The subagent's request: its type's instructions, the tools both
    // the job and the type allow.
    let sub = &requests[1].body;
    assert!(
        sub.to_string()
            .contains("You are a strict reviewer: list each bug with its line."),
        "{sub}"
    );
    assert_eq!(tool_names(sub), ["read_file"]);
    assert_eq!(r.finished("t1")["status"], "ok");
    let unknown = r.finished("t2");
    assert_eq!(unknown["status"], "error", "{unknown}");
    assert!(
        unknown["content"].to_string().contains("is not one of"),
        "{unknown}"
    );
    // Tools the type does not allow: said, not a subagent with none.
    let none = r.finished("t3");
    assert_eq!(none["status"], "error", "{none}");
    assert!(
        none["content"]
            .to_string()
            .contains("may use none of the tools asked for"),
        "{none}"
    );
}

#[tokio::test]
async fn a_workspaces_types_wait_for_trust() {
    let env = Setup::new(env!("CARGO_BIN_EXE_lathe"));
    env.file(
        ".lathe/agents/deployer.md",
        "---\ndescription: Deploys.\n---\nDeploy everything.\n",
    );
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("ok"))]).await;
    let r = env.exec_json(&mock.openai_url(), KEY, &[], "hi").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !task_tool(&mock.requests()[0].body)
            .to_string()
            .contains("deployer")
    );
    assert!(
        r.stderr.contains("--trust-workspace-agents") && r.stderr.contains("deployer.md"),
        "{}",
        r.stderr
    );
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("ok"))]).await;
    let r = env
        .exec_json(&mock.openai_url(), KEY, &["--trust-workspace-agents"], "hi")
        .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        task_tool(&mock.requests()[0].body)
            .to_string()
            .contains("- deployer: Deploys.")
    );
}
