use serde_json::json;

use super::*;

fn hook(command: &str, timeout_secs: u64) -> HookSpec {
    HookSpec {
        matcher: "*".into(),
        command: command.into(),
        timeout_secs,
        origin: RuleOrigin::User,
        files: Vec::new(),
        unconfined: false,
    }
}

fn runner(dir: &Path) -> HookRunner<'_> {
    HookRunner {
        workspace: dir,
        env_remove: &[],
        sandbox: None,
        reads: None,
        looks_only: false,
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

#[test]
fn a_hook_pins_the_workspace_files_it_runs_or_names() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("scripts")).unwrap();
    std::fs::create_dir_all(d.path().join("hooks")).unwrap();
    for f in [
        "scripts/guard.sh",
        "hooks/check.py",
        "hooks/rules.txt",
        "scripts/inner.sh",
    ] {
        std::fs::write(d.path().join(f), "echo hi\n").unwrap();
    }
    let ws = Workspace::new(d.path()).unwrap();
    let mut set = HookSet {
        before: vec![
            hook("./scripts/guard.sh", 5),
            hook("python3 hooks/check.py --rules=hooks/rules.txt", 5),
            hook("sh -c 'scripts/inner.sh' < /dev/null", 5),
        ],
        after: vec![hook("jq . > /dev/null", 5)],
        ..Default::default()
    };
    set.pin(&ws);
    let paths = |h: &HookSpec| h.files.iter().map(|f| f.path.clone()).collect::<Vec<_>>();
    assert_eq!(paths(&set.before[0]), ["scripts/guard.sh"]);
    assert_eq!(paths(&set.before[1]), ["hooks/check.py", "hooks/rules.txt"]);
    assert_eq!(paths(&set.before[2]), ["scripts/inner.sh"]);
    assert!(set.after[0].files.is_empty());
    assert_eq!(
        set.files(),
        [
            "hooks/check.py",
            "hooks/rules.txt",
            "scripts/guard.sh",
            "scripts/inner.sh"
        ]
    );
    assert_eq!(set.before[0].files[0].sha256.len(), 64);
}

#[tokio::test]
async fn a_workspace_hook_whose_script_changed_refuses_instead_of_running() {
    let d = tempfile::tempdir().unwrap();
    let script = d.path().join("guard.sh");
    std::fs::write(&script, "cat > /dev/null; exit 0\n").unwrap();
    let ws = Workspace::new(d.path()).unwrap();
    let mut set = HookSet {
        before: vec![HookSpec {
            origin: RuleOrigin::Workspace,
            ..hook("sh guard.sh", 5)
        }],
        after: vec![HookSpec {
            origin: RuleOrigin::Workspace,
            ..hook("sh guard.sh", 5)
        }],
        ..Default::default()
    };
    set.pin(&ws);
    let r = runner(d.path());
    assert_eq!(
        r.before(&set.before[0], &input()).await,
        BeforeOutcome::Allow
    );
    // The model (or a `git pull`) swaps the script.
    std::fs::write(&script, "touch pwned; exit 0\n").unwrap();
    match r.before(&set.before[0], &input()).await {
        BeforeOutcome::Deny(why) => assert!(why.contains("guard.sh changed"), "{why}"),
        other => panic!("ran a changed script: {other:?}"),
    }
    assert_eq!(r.after(&set.after[0], &input()).await, AfterOutcome::Keep);
    std::fs::remove_file(&script).unwrap();
    assert!(matches!(
        r.before(&set.before[0], &input()).await,
        BeforeOutcome::Deny(_)
    ));
    assert!(!d.path().join("pwned").exists());
    // The person's own hooks too: a command could have rewritten the
    // workspace script one runs, and it would run unconfined. A restart
    // pins the new content.
    let mut mine = HookSet {
        before: vec![hook("sh mine.sh", 5)],
        after: vec![],
        ..Default::default()
    };
    std::fs::write(d.path().join("mine.sh"), "cat > /dev/null\n").unwrap();
    mine.pin(&ws);
    assert_eq!(
        r.before(&mine.before[0], &input()).await,
        BeforeOutcome::Allow
    );
    std::fs::write(d.path().join("mine.sh"), "cat > /dev/null; touch pwned\n").unwrap();
    match r.before(&mine.before[0], &input()).await {
        BeforeOutcome::Deny(why) => assert!(why.contains("restart"), "{why}"),
        other => panic!("ran a changed script: {other:?}"),
    }
    assert!(!d.path().join("pwned").exists());
}

/// A file a hook names that is a FIFO or a link to `/dev/zero` is pinned
/// by its kind, never read: loading the hooks cannot hang or exhaust
/// memory.
#[test]
fn pinning_never_reads_what_is_not_a_regular_file() {
    let d = tempfile::tempdir().unwrap();
    nix::unistd::mkfifo(&d.path().join("guard.sh"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    std::os::unix::fs::symlink("/dev/zero", d.path().join("zero.sh")).unwrap();
    for name in ["guard.sh", "zero.sh"] {
        let pinned = content_of(&d.path().join(name));
        assert!(pinned.starts_with("not a regular file"), "{name}: {pinned}");
    }
    std::fs::write(d.path().join("ok.sh"), "true\n").unwrap();
    assert_eq!(content_of(&d.path().join("ok.sh")).len(), 64);
}

/// A hook the person sets `sandbox = false` stays outside the sandbox
/// only when it runs nothing the workspace can configure: the third
/// round got `cargo fmt --check` (a rust-toolchain.toml the model wrote),
/// pylint (`init-hook`) and mypy (a plugin) to run model-written code.
#[test]
fn only_self_contained_hooks_leave_the_sandbox() {
    let d = tempfile::tempdir().unwrap();
    let ws = Workspace::new(d.path()).unwrap();
    for confined in [
        "cargo fmt --check",
        "rustfmt --check src/main.rs",
        "pylint --errors-only .",
        "mypy --no-error-summary .",
        "git diff --stat",
        "python3 -c 'print(1)'",
        "npx eslint .",
        "make -s hookcheck",
        "echo $(cargo metadata)",
        "some-unknown-linter .",
        // Scripts from files the model can write, or that run programs.
        "sed -f fix.sed notes.md",
        "awk -f check.awk notes.md",
        "sed -n 'e touch /tmp/x' notes.md",
        "sed -n '1w /tmp/x' notes.md",
        "awk 'BEGIN { system(\"id\") }'",
        "awk '{ print | \"sh\" }' notes.md",
        "sort --compress-program=./zip notes.md",
        "tmux -f conf.tmux new -d",
        "tmux run-shell ./x.sh",
        "xargs -a list rm",
        "curl -K hook.curlrc https://hooks.example.org/x",
        "curl --config=hook.curlrc https://hooks.example.org/x",
        "wget -i urls.txt",
        "wget -e 'execute=x' https://hooks.example.org/x",
        "osascript notify.scpt",
        "LD_PRELOAD=./x.so touch done",
        "BASH_ENV=./env.sh printf ok",
        "./bin/notify done",
        "git status --short",
    ] {
        assert!(
            workspace_instructions(confined, &ws).is_some(),
            "{confined} would run unconfined"
        );
    }
    for free in [
        "echo 'lathe: done' >> /dev/stderr",
        "grep -rq TODO .",
        "jq -r .tool_name",
        "cat > /dev/null; printf ok",
        "curl -fsS -X POST https://hooks.example.org/x",
        "sed -n '1,5p' notes.md",
        "awk '{ print $1 }' notes.md",
        "sort -u notes.md",
        "logger -t lathe 'tool finished'",
        "tee -a /tmp/lathe-hook.log",
        "wget -q -O /dev/null https://hooks.example.org/x",
        "mkdir -p /tmp/lathe-hooks && touch /tmp/lathe-hooks/done",
    ] {
        assert_eq!(workspace_instructions(free, &ws), None, "{free}");
    }
}
