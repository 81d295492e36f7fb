use serde_json::json;

use super::*;

fn hook(command: &str, timeout_secs: u64) -> HookSpec {
    HookSpec {
        matcher: "*".into(),
        command: command.into(),
        timeout_secs,
        origin: RuleOrigin::User,
    }
}

fn runner(dir: &Path) -> HookRunner<'_> {
    HookRunner {
        workspace: dir,
        env_remove: &[],
    }
}

fn input() -> Value {
    json!({"hook_event_name": "before_tool_call", "tool_name": "write_file", "tool_input": {"path": "a.txt", "content": "x"}})
}

#[tokio::test]
async fn exit_zero_allows_and_a_json_object_modifies() {
    let d = tempfile::tempdir().unwrap();
    let r = runner(d.path());
    assert_eq!(
        r.before(&hook("cat > /dev/null", 5), &input()).await,
        BeforeOutcome::Allow
    );
    let out = r
        .before(
            &hook(
                r#"cat > /dev/null; echo '{"path": "b.txt", "content": "y"}'"#,
                5,
            ),
            &input(),
        )
        .await;
    assert_eq!(
        out,
        BeforeOutcome::Modify(json!({"path": "b.txt", "content": "y"}))
    );
    // Claude Code's shape.
    let claude = r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"path": "c.txt", "content": "z"}}}'"#;
    assert_eq!(
        r.before(&hook(claude, 5), &input()).await,
        BeforeOutcome::Modify(json!({"path": "c.txt", "content": "z"}))
    );
}

#[tokio::test]
async fn the_hook_sees_the_call_on_stdin_in_the_workspace() {
    let d = tempfile::tempdir().unwrap();
    let r = runner(d.path());
    let script = r#"cat > seen.json; pwd > where.txt"#;
    assert_eq!(
        r.before(&hook(script, 5), &input()).await,
        BeforeOutcome::Allow
    );
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("seen.json")).unwrap())
            .unwrap();
    assert_eq!(seen["tool_input"]["path"], "a.txt");
    let where_ = std::fs::read_to_string(d.path().join("where.txt")).unwrap();
    assert_eq!(
        Path::new(where_.trim()).canonicalize().unwrap(),
        d.path().canonicalize().unwrap()
    );
}

#[tokio::test]
async fn exit_two_denies_with_stderr_and_failures_fail_closed() {
    let d = tempfile::tempdir().unwrap();
    let r = runner(d.path());
    assert_eq!(
        r.before(
            &hook("echo 'edits to a.txt are frozen' >&2; exit 2", 5),
            &input()
        )
        .await,
        BeforeOutcome::Deny("edits to a.txt are frozen".into())
    );
    let BeforeOutcome::Deny(why) = r.before(&hook("echo boom >&2; exit 1", 5), &input()).await
    else {
        panic!("exit 1 must refuse")
    };
    assert!(
        why.contains("exited with 1") && why.contains("boom"),
        "{why}"
    );
    let BeforeOutcome::Deny(why) = r.before(&hook("kill -SEGV $$", 5), &input()).await else {
        panic!("a crash must refuse")
    };
    assert!(why.contains("signal"), "{why}");
    let BeforeOutcome::Deny(why) = r.before(&hook("./missing-script.sh", 5), &input()).await else {
        panic!("a missing program must refuse")
    };
    assert!(why.contains("127"), "{why}");
    let started = std::time::Instant::now();
    let BeforeOutcome::Deny(why) = r.before(&hook("sleep 30", 1), &input()).await else {
        panic!("a timeout must refuse")
    };
    assert!(why.contains("1 s"), "{why}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn after_hooks_replace_withhold_or_fail_open() {
    let d = tempfile::tempdir().unwrap();
    let r = runner(d.path());
    let input = json!({"tool_response": {"stdout": "secret"}});
    assert_eq!(
        r.after(&hook(r#"echo '{"stdout": "[cleaned]"}'"#, 5), &input)
            .await,
        AfterOutcome::Replace(json!({"stdout": "[cleaned]"}))
    );
    assert_eq!(
        r.after(&hook("echo 'not for the model' >&2; exit 2", 5), &input)
            .await,
        AfterOutcome::Withhold("not for the model".into())
    );
    assert_eq!(
        r.after(&hook("exit 3", 5), &input).await,
        AfterOutcome::Keep
    );
    assert_eq!(
        r.after(&hook("sleep 30", 1), &input).await,
        AfterOutcome::Keep
    );
    assert_eq!(
        r.after(&hook("echo plain text", 5), &input).await,
        AfterOutcome::Keep
    );
}

#[tokio::test]
async fn a_hook_that_ignores_a_big_stdin_does_not_hang() {
    let d = tempfile::tempdir().unwrap();
    let r = runner(d.path());
    let big = json!({"tool_input": {"content": "x".repeat(4 * 1024 * 1024)}});
    assert_eq!(
        r.before(&hook("exit 0", 5), &big).await,
        BeforeOutcome::Allow
    );
}

#[test]
fn matchers_are_alternatives_of_globs() {
    let h = HookSpec {
        matcher: "write_file|edit_file | github__*".into(),
        ..hook("x", 1)
    };
    assert!(h.matches("write_file") && h.matches("edit_file") && h.matches("github__search"));
    assert!(!h.matches("read_file"));
}
