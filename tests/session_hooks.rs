//! Hooks on the session's events, written to the shapes Claude Code
//! documents (read JSON on stdin; exit 2 with a reason on stderr, or
//! `{"decision": "block", "reason": …}`, or
//! `hookSpecificOutput.additionalContext`), driven through the binary
//! against the scripted server.

use lathe_test_support::run::Setup;

use crate::mock_llm::{MockLlm, Reply, Step};

const KEY: &str = "sk-test-key-for-hook-runs-0123456789";

/// A person's config with `hooks` (TOML), and the workspace's scripts.
fn setup(hooks: &str, scripts: &[(&str, &str)]) -> Setup {
    let env = Setup::new(env!("CARGO_BIN_EXE_lathe"));
    env.config(hooks);
    for (name, body) in scripts {
        env.file(&format!("hooks/{name}"), body);
    }
    env
}

#[tokio::test]
async fn a_prompt_hook_blocks_a_message_before_anything_is_sent() {
    let env = setup(
        "[[hooks.user_prompt_submit]]\ncommand = \"sh hooks/prompt.sh\"\n",
        &[(
            "prompt.sh",
            "input=$(cat)\ncase \"$input\" in\n  *'\"hook_event_name\":\"UserPromptSubmit\"'*'secret project'*) echo 'prompts about the secret project are blocked' >&2; exit 2;;\nesac\nprintf '%s' '{\"hookSpecificOutput\":{\"hookEventName\":\"UserPromptSubmit\",\"additionalContext\":\"the branch is main\"}}'\n",
        )],
    );
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("ok"))]).await;
    let r = env
        .exec_json(
            &mock.openai_url(),
            KEY,
            &[],
            "tell me about the secret project",
        )
        .await;
    assert_ne!(r.code, 0);
    assert!(mock.requests().is_empty(), "nothing sent");
    let error = r.first("error");
    assert_eq!(error["kind"], "blocked", "{error}");
    assert!(
        error["message"]
            .to_string()
            .contains("prompts about the secret project are blocked"),
        "{error}"
    );
    // Another message goes, with what the hook adds.
    let r = env.exec_json(&mock.openai_url(), KEY, &[], "hello").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sent = mock.requests()[0].body["messages"].to_string();
    assert!(
        sent.contains("the branch is main") && sent.contains("hello"),
        "{sent}"
    );
}

#[tokio::test]
async fn a_stop_hook_holds_the_end_of_a_turn_once() {
    let env = setup(
        "[[hooks.stop]]\ncommand = \"sh hooks/stop.sh\"\n[[hooks.session_start]]\ncommand = \"echo today is Monday, key ghp_0123456789abcdefghijklmnopqrstuvwxyzAB\"\n",
        &[(
            "stop.sh",
            "input=$(cat)\ncase \"$input\" in\n  *'\"stop_hook_active\":false'*) echo '{\"decision\":\"block\",\"reason\":\"tests still fail\"}';;\n  *) echo '{\"decision\":\"block\",\"reason\":\"still not happy\"}';;\nesac\n",
        )],
    );
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::text("done")),
        Step::Reply(Reply::text("fixed the tests")),
        Step::Reply(Reply::text("never sent")),
    ])
    .await;
    let r = env.exec_json(&mock.openai_url(), KEY, &[], "fix it").await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "held once, then heeded no more");
    let first = requests[0].body["messages"].to_string();
    assert!(
        first.contains("[Context from the person's session_start hooks, not their words:]")
            && first.contains("today is Monday"),
        "session_start's words reach the model, labelled: {first}"
    );
    assert!(
        !first.contains("ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"),
        "and no key with them: {first}"
    );
    assert!(
        requests[1].body["messages"]
            .to_string()
            .contains("tests still fail")
    );
    assert_eq!(r.first("turn_completed")["text"], "fixed the tests");
}

/// `lathe hooks import`: Claude Code's hooks shown as a diff, written
/// only on a yes, and then run as Lathe's.
#[tokio::test]
async fn claude_codes_hooks_are_imported_after_a_yes_and_then_run() {
    let env = Setup::new(env!("CARGO_BIN_EXE_lathe"));
    env.config("approval = \"full-auto\"\n");
    let settings = env.home.path().join("claude-settings.json");
    std::fs::write(
        &settings,
        r#"{"hooks": {
          "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'no prompts today' >&2; exit 2"}]}],
          "PreToolUse": [{"matcher": "NotebookEdit", "hooks": [{"type": "command", "command": "true"}]}]
        }}"#,
    )
    .unwrap();
    let from = settings.display().to_string();
    let no = env
        .run(&["hooks", "import", "--from", &from], &[], "n\n")
        .await;
    assert_eq!(no.code, 1, "{}", no.stderr);
    assert!(
        no.stdout.contains("+[[hooks.user_prompt_submit]]"),
        "{}",
        no.stdout
    );
    assert!(no.stderr.contains("left out: PreToolUse"), "{}", no.stderr);
    let config = env.home.path().join("config.toml");
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "approval = \"full-auto\"\n"
    );
    let yes = env
        .run(&["hooks", "import", "--from", &from], &[], "y\n")
        .await;
    assert_eq!(yes.code, 0, "{}", yes.stderr);
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(
        written.starts_with("approval = \"full-auto\"\n")
            && written.contains("[[hooks.user_prompt_submit]]"),
        "{written}"
    );
    // Imported, it runs: the message is held.
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("ok"))]).await;
    let r = env.exec_json(&mock.openai_url(), KEY, &[], "hello").await;
    assert_ne!(r.code, 0);
    assert!(mock.requests().is_empty());
    assert!(
        r.first("error")["message"]
            .to_string()
            .contains("no prompts today")
    );
}
