//! Consent end to end, through the agent: grants and chains with real
//! commands on a real disk, permission rules in a working session, hooks
//! as real scripts, interrupts in the middle of a batch, and the
//! permissions report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;
use crate::mock_llm;

use std::time::Duration;

use harness::*;
use lathe_core::agent::AgentHandle;
use lathe_core::policy::{HookSet, HookSpec, RuleOrigin, Rules, Workspace};
use lathe_core::protocol::{
    AgentEvent, ApprovalDecision, ApprovalMode, DecisionSource, ErrorKind, GuardrailOutcome, Op,
    ToolStatus,
};
use lathe_core::provider::ProviderKind;
use lathe_core::tools::ToolRegistry;
use mock_llm::{MockLlm, Reply, Step, tool_results};
use serde_json::{Value, json};

fn shell(id: &str, command: &str) -> Step {
    Step::Reply(Reply::tools().call(id, "exec_shell", json!({ "command": command })))
}

fn interactive(mode: ApprovalMode) -> Setup {
    Setup {
        interactive: true,
        ..Setup::new(ProviderKind::OpenAi).mode(mode)
    }
}

#[tokio::test]
async fn a_grant_then_a_chained_follow_up_asks_again_and_nothing_runs() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("src")).unwrap();
    std::fs::write(ws.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    let mock = MockLlm::start(vec![
        shell("c1", "touch a"),
        shell("c2", "touch b; rm -v src/main.rs"),
        shell("c3", "for f in src/*.rs; do rm -v $f; done"),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let mut handle = interactive(ApprovalMode::Ask).spawn(&mock, ws.path());
    let events = drive(&mut handle, "go", |ev| match ev {
        AgentEvent::ApprovalRequested(lathe_core::protocol::ApprovalRequest {
            call_id,
            grant,
            ..
        }) if call_id == "c1" => {
            assert!(grant.is_some());
            ApprovalDecision::ApproveForConversation
        }
        _ => ApprovalDecision::Deny { message: None },
    })
    .await;
    let questions = asked(&events);
    assert_eq!(questions.len(), 3, "{questions:?}");
    assert_eq!(
        questions[1], "run `rm -v src/main.rs`",
        "only the uncovered part asks"
    );
    assert!(questions[2].contains("rm -v"), "{questions:?}");
    assert!(ws.path().join("a").exists());
    assert!(!ws.path().join("b").exists(), "a denied line runs nothing");
    assert!(
        ws.path().join("src/main.rs").exists(),
        "the sources are still there"
    );
    let f = finished(&events);
    assert_eq!(
        f.iter().map(|x| x.1).collect::<Vec<_>>(),
        [ToolStatus::Ok, ToolStatus::Denied, ToolStatus::Denied]
    );
}

#[tokio::test]
async fn three_allow_rules_make_a_quiet_session_that_still_asks_for_the_rest() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("src")).unwrap();
    std::fs::write(ws.path().join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    std::fs::write(ws.path().join("notes.txt"), "x\n").unwrap();
    let rules = Rules::parse(
        &[
            "exec_shell(touch *)".into(),
            "exec_shell(mkdir -p *)".into(),
            "write_file(src/**)".into(),
        ],
        &[],
        &[],
        RuleOrigin::User,
    )
    .unwrap();
    let work = [
        ("ls", "exec_shell", json!({"command": "ls -la"}), true),
        (
            "grep",
            "exec_shell",
            json!({"command": "grep -rn fn src"}),
            true,
        ),
        (
            "find",
            "exec_shell",
            json!({"command": "find . -name '*.rs'"}),
            true,
        ),
        (
            "cat",
            "exec_shell",
            json!({"command": "cat src/lib.rs | head -n 5"}),
            true,
        ),
        ("read", "read_file", json!({"path": "src/lib.rs"}), true),
        ("list", "list_directory", json!({"path": "."}), true),
        (
            "mkdir",
            "exec_shell",
            json!({"command": "mkdir -p build/out"}),
            true,
        ),
        (
            "touch",
            "exec_shell",
            json!({"command": "touch build/out/stamp"}),
            true,
        ),
        (
            "write",
            "write_file",
            json!({"path": "src/new.rs", "content": "pub fn g() {}\n"}),
            true,
        ),
        (
            "edit-outside-rule",
            "edit_file",
            json!({"path": "notes.txt", "old_text": "x", "new_text": "y"}),
            false,
        ),
        (
            "chain",
            "exec_shell",
            json!({"command": "touch ok && rm notes.txt"}),
            false,
        ),
        (
            "rm",
            "exec_shell",
            json!({"command": "rm notes.txt"}),
            false,
        ),
    ];
    let mut steps: Vec<Step> = work
        .iter()
        .map(|(id, tool, args, _)| Step::Reply(Reply::tools().call(id, tool, args.clone())))
        .collect();
    steps.push(Step::Reply(Reply::text("done")));
    let setup = Setup {
        rules,
        ..Setup::new(ProviderKind::Anthropic).mode(ApprovalMode::Ask)
    };
    let (events, _mock) = run(setup, steps, ws.path(), "work").await;
    for (id, _, _, quiet) in &work {
        let (status, content, _) = result_of(&events, id);
        let was_asked = events
            .iter()
            .any(|e| matches!(e, AgentEvent::ApprovalRequested(lathe_core::protocol::ApprovalRequest { call_id, .. }) if call_id == id));
        assert_eq!(!was_asked, *quiet, "{id}: asked={was_asked} {content}");
        let expected = if *quiet {
            ToolStatus::Ok
        } else {
            ToolStatus::Denied
        };
        assert_eq!(status, expected, "{id}: {content}");
    }
    assert!(ws.path().join("src/new.rs").exists());
    assert!(
        ws.path().join("notes.txt").exists(),
        "headless ask denied the rm"
    );
}

fn hook(command: &str) -> HookSpec {
    HookSpec {
        matcher: "write_file|edit_file".into(),
        command: command.into(),
        timeout_secs: 5,
        origin: RuleOrigin::User,
        files: Vec::new(),
        unconfined: false,
    }
}

#[tokio::test]
async fn before_hooks_deny_or_rewrite_calls_and_the_model_is_told() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("check.sh"),
        "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in\n  *frozen.txt*) echo 'frozen.txt is frozen' >&2; exit 2;;\n  *draft.txt*) echo '{\"path\": \"final.txt\", \"content\": \"rewritten\"}';;\nesac\nexit 0\n",
    )
    .unwrap();
    let setup = Setup {
        hooks: HookSet {
            before: vec![hook("sh ./check.sh")],
            after: vec![],
            ..Default::default()
        },
        ..Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::AutoEdit)
    };
    let (events, mock) = run(
        setup,
        vec![
            Step::Reply(
                Reply::tools()
                    .call(
                        "f",
                        "write_file",
                        json!({"path": "frozen.txt", "content": "x"}),
                    )
                    .call(
                        "d",
                        "write_file",
                        json!({"path": "draft.txt", "content": "x"}),
                    )
                    .call(
                        "o",
                        "write_file",
                        json!({"path": "ok.txt", "content": "fine"}),
                    ),
            ),
            Step::Reply(Reply::text("done")),
        ],
        ws.path(),
        "write",
    )
    .await;
    let (status, content, _) = result_of(&events, "f");
    assert_eq!(status, ToolStatus::Denied);
    assert!(
        error_text(&content).contains("frozen.txt is frozen"),
        "{content}"
    );
    assert!(!ws.path().join("frozen.txt").exists());
    assert!(!ws.path().join("draft.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("final.txt")).unwrap(),
        "rewritten"
    );
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::GuardrailVerdict { call_id, verdict: GuardrailOutcome::Modify, reason: Some(r), .. }
            if call_id == "d" && r.contains("changed the arguments"))));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("ok.txt")).unwrap(),
        "fine"
    );
    let told = tool_results(&mock.requests()[1]);
    assert!(
        told[1].1["guardrail_note"]
            .as_str()
            .unwrap()
            .contains("check.sh")
    );
}

#[tokio::test]
async fn a_broken_before_hook_fails_closed_and_a_hook_cannot_smuggle_a_denied_call() {
    let ws = tempfile::tempdir().unwrap();
    let rewrite_to_escape = r#"echo '{"path": "../escaped.txt", "content": "x"}'"#;
    let setup = Setup {
        hooks: HookSet {
            before: vec![hook(rewrite_to_escape)],
            after: vec![],
            ..Default::default()
        },
        ..Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::FullAuto)
    };
    let (events, _) = run(
        setup,
        vec![
            Step::Reply(Reply::tools().call(
                "w",
                "write_file",
                json!({"path": "a.txt", "content": "x"}),
            )),
            Step::Reply(Reply::text("done")),
        ],
        ws.path(),
        "write",
    )
    .await;
    assert_eq!(result_of(&events, "w").0, ToolStatus::Denied);
    assert!(!ws.path().parent().unwrap().join("escaped.txt").exists());

    let setup = Setup {
        hooks: HookSet {
            before: vec![hook("exit 1")],
            after: vec![],
            ..Default::default()
        },
        ..Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::FullAuto)
    };
    let (events, _) = run(
        setup,
        vec![
            Step::Reply(Reply::tools().call(
                "w",
                "write_file",
                json!({"path": "a.txt", "content": "x"}),
            )),
            Step::Reply(Reply::text("done")),
        ],
        ws.path(),
        "write",
    )
    .await;
    let (status, content, _) = result_of(&events, "w");
    assert_eq!(status, ToolStatus::Denied);
    assert!(error_text(&content).contains("exited with 1"), "{content}");
    assert!(!ws.path().join("a.txt").exists());
}

#[tokio::test]
async fn after_hooks_see_redacted_results_and_may_replace_them() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("secret.txt"), format!("key={KEY}\n")).unwrap();
    let after = HookSpec {
        matcher: "read_file".into(),
        command: r#"cat > seen.json; echo '{"content": "summarised by the hook"}'"#.into(),
        timeout_secs: 5,
        origin: RuleOrigin::User,
        files: Vec::new(),
        unconfined: false,
    };
    let setup = Setup {
        hooks: HookSet {
            before: vec![],
            after: vec![after],
            ..Default::default()
        },
        ..Setup::new(ProviderKind::OpenAi)
    };
    let (events, mock) = run(
        setup,
        vec![
            Step::Reply(Reply::tools().call("r", "read_file", json!({"path": "secret.txt"}))),
            Step::Reply(Reply::text("done")),
        ],
        ws.path(),
        "read",
    )
    .await;
    assert_eq!(
        result_of(&events, "r").1["content"],
        "summarised by the hook"
    );
    let seen = std::fs::read_to_string(ws.path().join("seen.json")).unwrap();
    assert!(!seen.contains(KEY), "the hook saw the key: {seen}");
    let v: Value = serde_json::from_str(&seen).unwrap();
    assert_eq!(v["hook_event_name"], "after_tool_call");
    assert_eq!(v["tool_name"], "read_file");
    assert_eq!(v["status"], "ok");
    assert!(tool_results(&mock.requests()[1])[0].1["content"] == "summarised by the hook");
}

#[tokio::test]
async fn an_interrupt_stops_the_rest_of_a_batch_and_nothing_more_lands_on_disk() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("main.rs"), "old\n").unwrap();
    let mock = MockLlm::start(vec![Step::Reply(
        Reply::tools()
            .call(
                "w1",
                "write_file",
                json!({"path": "first.txt", "content": "1"}),
            )
            .call(
                "s",
                "exec_shell",
                json!({"command": "echo begin; sleep 30", "timeout": 60}),
            )
            .call(
                "w2",
                "write_file",
                json!({"path": "second.txt", "content": "2"}),
            )
            .call(
                "e",
                "edit_file",
                json!({"path": "main.rs", "old_text": "old", "new_text": "new"}),
            ),
    )])
    .await;
    let mut handle = Setup::new(ProviderKind::OpenAi)
        .mode(ApprovalMode::FullAuto)
        .spawn(&mock, ws.path());
    handle
        .ops
        .send(Op::UserInput { text: "go".into() })
        .await
        .unwrap();
    let mut events = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), handle.events.recv())
            .await
            .unwrap()
            .unwrap();
        if matches!(&ev, AgentEvent::ToolProgress { text, .. } if text.contains("begin")) {
            handle.ops.send(Op::Interrupt).await.unwrap();
        }
        let end = ev.ends_turn();
        events.push(ev);
        if end {
            break;
        }
    }
    assert_eq!(turn_error(&events).unwrap().0, ErrorKind::Interrupted);
    assert!(ws.path().join("first.txt").exists());
    assert!(
        !ws.path().join("second.txt").exists(),
        "no call starts after an interrupt"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("main.rs")).unwrap(),
        "old\n"
    );
    for id in ["s", "w2", "e"] {
        let (status, content, meta) = result_of(&events, id);
        assert_eq!(status, ToolStatus::Error, "{id}");
        assert_eq!(
            meta.error_kind.as_deref(),
            Some("cancelled"),
            "{id}: {content}"
        );
    }
    assert!(error_text(&result_of(&events, "w2").1).contains("not run"));
}

/// Ctrl-C while a question is open is an interrupt, not the person's
/// denial: the model is not told the user said no.
#[tokio::test]
async fn an_interrupt_while_asking_is_no_denial() {
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![shell("c1", "touch a")]).await;
    let mut handle = interactive(ApprovalMode::Ask).spawn(&mock, ws.path());
    handle
        .ops
        .send(Op::UserInput { text: "go".into() })
        .await
        .unwrap();
    let mut events = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), handle.events.recv())
            .await
            .unwrap()
            .unwrap();
        if matches!(&ev, AgentEvent::ApprovalRequested { .. }) {
            handle.ops.send(Op::Interrupt).await.unwrap();
        }
        let end = ev.ends_turn();
        events.push(ev);
        if end {
            break;
        }
    }
    let (status, content, meta) = result_of(&events, "c1");
    assert_eq!(status, ToolStatus::Error, "{content}");
    assert_eq!(meta.error_kind.as_deref(), Some("cancelled"), "{content}");
    let text = error_text(&content);
    assert!(!text.contains("denied"), "{text}");
    assert!(text.contains("interrupted"), "{text}");
    assert!(!ws.path().join("a").exists());
}

#[tokio::test]
async fn the_permissions_report_lists_grants_and_revokes_them() {
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![shell("c1", "touch a"), Step::Reply(Reply::text("ok"))]).await;
    let setup = Setup {
        rules: Rules::parse(
            &[],
            &["exec_shell(git push*)".into()],
            &[],
            RuleOrigin::User,
        )
        .unwrap(),
        ..interactive(ApprovalMode::Ask)
    };
    let mut handle = setup.spawn(&mock, ws.path());
    drive(&mut handle, "go", |_| {
        ApprovalDecision::ApproveForConversation
    })
    .await;
    let report = async |handle: &mut AgentHandle, op: Op| {
        handle.ops.send(op).await.unwrap();
        loop {
            let ev = tokio::time::timeout(Duration::from_secs(5), handle.events.recv())
                .await
                .unwrap()
                .unwrap();
            if let AgentEvent::Permissions {
                grants,
                rules,
                approval,
                ..
            } = ev
            {
                return (grants, rules, approval);
            }
        }
    };
    let (grants, rules, approval) = report(&mut handle, Op::ListPermissions).await;
    assert_eq!(approval, ApprovalMode::Ask);
    assert_eq!(rules.ask, ["exec_shell(git push*)"]);
    assert_eq!(grants.len(), 1);
    assert!(grants[0].covers.starts_with("`touch`"), "{grants:?}");
    assert!(grants[0].expires_in_secs > 250 && grants[0].expires_in_secs <= 300);
    let (grants, ..) = report(&mut handle, Op::RevokeGrant { id: grants[0].id }).await;
    assert!(grants.is_empty());
    mock.push(shell("c2", "touch b"));
    mock.push(Step::Reply(Reply::text("asked")));
    let events = drive(&mut handle, "again", |_| ApprovalDecision::Deny {
        message: None,
    })
    .await;
    assert_eq!(
        asked(&events).len(),
        1,
        "the revoked grant no longer covers touch"
    );
    assert!(events.iter().all(|e| !matches!(
        e,
        AgentEvent::ApprovalDecided {
            source: DecisionSource::Grant,
            ..
        }
    )));
}

/// A directory the model made to look like a git repository (HEAD,
/// objects/, refs/, a config whose `core.fsmonitor` runs a command) is not
/// a repository to the read-only `git status` Lathe runs without asking:
/// `exec_shell` sets `safe.bareRepository=explicit`. And a `.git/config`
/// written by awk is a write to a protected file.
#[tokio::test]
async fn read_only_git_does_not_run_a_planted_repository_config() {
    let git_works = std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(git_works, "these tests need git (.ci/run installs it)");
    let ws = tempfile::tempdir().unwrap();
    for d in ["sub/objects", "sub/refs"] {
        std::fs::create_dir_all(ws.path().join(d)).unwrap();
    }
    std::fs::write(ws.path().join("sub/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(
        ws.path().join("sub/config"),
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = \"touch PWNED; false\"\n",
    )
    .unwrap();
    let mock = MockLlm::start(vec![
        shell("s", "git -C sub status"),
        shell("l", "cd sub && git log -1"),
        shell("a", "awk 'BEGIN{if(1)print \"[core]\" >> \".git/config\"}'"),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let mut handle = interactive(ApprovalMode::Ask).spawn(&mock, ws.path());
    let events = drive(&mut handle, "status", |_| ApprovalDecision::Deny {
        message: None,
    })
    .await;
    let questions = asked(&events);
    assert_eq!(questions.len(), 1, "only the awk asks: {questions:?}");
    assert!(questions[0].contains(".git/config"), "{questions:?}");
    assert!(
        !ws.path().join("PWNED").exists() && !ws.path().join("sub/PWNED").exists(),
        "git ran the planted fsmonitor"
    );
}

/// Hooks run through the sandbox's warden: nothing a hook starts outlives
/// it, and its environment holds no secret-looking variable. Hooks are
/// confined as the model's commands are (no write outside the
/// workspace), but for the person's own hooks configured `sandbox =
/// false`; a workspace's hook cannot be let out.
#[tokio::test]
async fn hooks_are_contained_and_a_workspaces_hooks_confined() {
    let ws = tempfile::tempdir().unwrap();
    let outside = crate::places::outside("lathe-hook-outside-");
    let command = |tag: &str| {
        format!(
            "setsid sleep 7731{tag} >/dev/null 2>&1 & echo {tag} > '{}/{tag}.txt'; env > env-{tag}.txt; exit 0",
            outside.path().display()
        )
    };
    let hook_of = |origin: RuleOrigin, tag: &str, unconfined: bool| HookSpec {
        matcher: "write_file".into(),
        command: command(tag),
        timeout_secs: 5,
        origin,
        files: Vec::new(),
        unconfined,
    };
    let setup = Setup {
        hooks: HookSet {
            before: vec![
                hook_of(RuleOrigin::User, "user", true),
                hook_of(RuleOrigin::User, "confined", false),
                hook_of(RuleOrigin::Workspace, "repo", true),
            ],
            after: vec![],
            ..Default::default()
        },
        ..Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::AutoEdit)
    };
    let (events, _) = run(
        setup,
        vec![
            Step::Reply(Reply::tools().call(
                "w",
                "write_file",
                json!({"path": "a.txt", "content": "x"}),
            )),
            Step::Reply(Reply::text("done")),
        ],
        ws.path(),
        "write",
    )
    .await;
    assert_eq!(result_of(&events, "w").0, ToolStatus::Ok);
    assert!(
        outside.path().join("user.txt").exists(),
        "the person's hook set `sandbox = false` may write where it likes"
    );
    assert!(
        !outside.path().join("confined.txt").exists(),
        "a hook is confined unless its person says otherwise"
    );
    assert!(
        !outside.path().join("repo.txt").exists(),
        "a workspace's hook is confined"
    );
    let env = std::fs::read_to_string(ws.path().join("env-user.txt")).unwrap();
    assert!(env.contains("LATHE_WORKSPACE="), "{env}");
    assert!(!env.contains("API_KEY"), "{env}");
    // The person's hooks see the person's environment (cargo's variables
    // here); a workspace's, only the basic variables: a repository's
    // `$HELPER_CFG` is empty.
    let mine = std::fs::read_to_string(ws.path().join("env-confined.txt")).unwrap();
    assert!(mine.contains("CARGO_MANIFEST_DIR="), "{mine}");
    let theirs = std::fs::read_to_string(ws.path().join("env-repo.txt")).unwrap();
    assert!(
        theirs.contains("PATH=") && theirs.contains("LATHE_WORKSPACE="),
        "{theirs}"
    );
    assert!(!theirs.contains("CARGO_MANIFEST_DIR="), "{theirs}");
    // Neither left its daemon behind.
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    loop {
        let left: Vec<String> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.starts_with("sleep 7731"))
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "left running: {left:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The third round's chain: the person's hook `make -s hookcheck` set
/// `sandbox = false`, the model rewrote the Makefile in auto-edit (no
/// dialog), and the hook ran the new recipe outside the sandbox. A hook
/// that runs what the workspace tells it runs in the sandbox whatever its
/// setting: the recipe cannot write outside.
#[tokio::test]
async fn a_hook_never_runs_a_makefile_the_model_rewrote_outside_the_sandbox() {
    let ws = tempfile::tempdir().unwrap();
    let outside = crate::places::outside("lathe-hook-make-");
    let planted = outside.path().join("PWNED");
    std::fs::write(ws.path().join("Makefile"), "hookcheck:\n\t@true\n").unwrap();
    let workspace = Workspace::new(ws.path()).unwrap();
    for command in [
        "make -s hookcheck",
        "cat >/dev/null; make -s -C . hookcheck",
    ] {
        let mut hooks = HookSet {
            before: vec![],
            after: vec![HookSpec {
                matcher: "write_file".into(),
                command: command.into(),
                timeout_secs: 10,
                origin: RuleOrigin::User,
                files: Vec::new(),
                unconfined: true,
            }],
            ..Default::default()
        };
        let warnings = hooks.pin(&workspace);
        assert!(
            warnings.len() == 1 && warnings[0].contains("the Makefile"),
            "{warnings:?}"
        );
        let evil = format!("hookcheck:\n\t@touch '{}'\n", planted.display());
        let setup = Setup {
            hooks,
            ..Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::AutoEdit)
        };
        let (events, _) = run(
            setup,
            vec![
                Step::Reply(Reply::tools().call(
                    "w",
                    "write_file",
                    json!({"path": "Makefile", "content": evil}),
                )),
                Step::Reply(Reply::text("done")),
            ],
            ws.path(),
            "tidy the Makefile",
        )
        .await;
        // The Makefile is what the hook runs: a change to it asks in every
        // mode (headless here: denied), so it is never rewritten unseen.
        let (status, content, _) = result_of(&events, "w");
        assert_eq!(status, ToolStatus::Denied, "{command}: {content}");
        assert!(
            !std::fs::read_to_string(ws.path().join("Makefile"))
                .unwrap()
                .contains("touch"),
            "the rewrite happened"
        );
        assert!(
            !planted.exists(),
            "{command}: the hook ran the new recipe outside the sandbox"
        );
        std::fs::write(ws.path().join("Makefile"), "hookcheck:\n\t@true\n").unwrap();
    }
    // A hook that runs only what its own arguments say stays as set.
    let mut mine = HookSet {
        before: vec![HookSpec {
            matcher: "*".into(),
            command: "grep -rq TODO .".into(),
            timeout_secs: 10,
            origin: RuleOrigin::User,
            files: Vec::new(),
            unconfined: true,
        }],
        after: vec![],
        ..Default::default()
    };
    assert!(mine.pin(&workspace).is_empty());
    assert!(mine.before[0].unconfined);
}

/// A command the sandbox stopped may run again outside it, but only after
/// a second question to the person, which no grant or mode answers; said
/// no to, the model gets the first result and knows why.
#[tokio::test]
async fn a_command_the_sandbox_stopped_runs_outside_only_on_a_second_yes() {
    let ws = tempfile::tempdir().unwrap();
    let out = crate::places::outside("lathe-escalate-");
    let target = out.path().join("written.txt");
    // A script whose writes the analysis cannot see: full-auto runs it.
    std::fs::write(
        ws.path().join("write.sh"),
        format!("echo hi > '{}'\n", target.display()),
    )
    .unwrap();
    let line = "bash write.sh";
    for (answer, ran, rules) in [
        (true, true, false),
        (false, false, false),
        (false, false, true),
    ] {
        let _ = std::fs::remove_file(&target);
        let mock = MockLlm::start(vec![shell("c1", line), Step::Reply(Reply::text("done"))]).await;
        let setup = Setup {
            rules: Rules::parse(
                &[],
                &[],
                &(if rules {
                    vec!["read_file(private/**)".into()]
                } else {
                    vec![]
                }),
                RuleOrigin::User,
            )
            .unwrap(),
            ..interactive(ApprovalMode::FullAuto)
        };
        let mut handle = setup.spawn(&mock, ws.path());
        let events = drive(&mut handle, "go", |ev| match ev {
            AgentEvent::ApprovalRequested(lathe_core::protocol::ApprovalRequest {
                grant, ..
            }) => {
                assert!(grant.is_none(), "no grant covers an unsandboxed run");
                if answer {
                    ApprovalDecision::ApproveForConversation
                } else {
                    ApprovalDecision::Deny { message: None }
                }
            }
            _ => ApprovalDecision::Deny { message: None },
        })
        .await;
        let questions = asked(&events);
        assert_eq!(
            questions.len(),
            1,
            "full-auto asks only the second time: {questions:?}"
        );
        // Why, said once; with read rules, what they add said too.
        let reason = events
            .iter()
            .find_map(|e| match e {
                AgentEvent::ApprovalRequested(r) => Some(r.reason.clone()),
                _ => None,
            })
            .unwrap_or_default();
        assert_eq!(reason.matches("can write anywhere").count(), 1, "{reason}");
        assert_eq!(
            reason.contains("`read_file(private/**)`"),
            rules,
            "{reason}"
        );
        assert!(
            questions[0].starts_with("run it again outside the sandbox"),
            "{questions:?}"
        );
        assert_eq!(target.exists(), ran, "{events:?}");
        let (status, content, _) = result_of(&events, "c1");
        assert_eq!(status, ToolStatus::Ok);
        let note = content["note"].as_str().unwrap_or_default();
        if answer {
            assert!(note.contains("outside the sandbox"), "{content}");
            assert_eq!(content["exit_code"], 0, "{content}");
        } else {
            assert!(note.contains("chose not to"), "{content}");
            assert!(content["sandbox"].is_string(), "{content}");
        }
    }
}

/// Approved in part, a change writes exactly the hunks kept, and the model
/// hears which were left out; a file that changed after the preview is
/// never written.
#[tokio::test]
async fn a_change_approved_in_part_writes_exactly_the_hunks_kept() {
    let ws = tempfile::tempdir().unwrap();
    let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ws.path().join("notes.txt"), &old).unwrap();
    let new = old
        .replace("line 2\n", "line two\n")
        .replace("line 25\n", "line twenty-five\n");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "w",
            "write_file",
            json!({"path": "notes.txt", "content": new}),
        )),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let mut handle = interactive(ApprovalMode::Ask).spawn(&mock, ws.path());
    let events = drive(&mut handle, "go", |ev| {
        let AgentEvent::ApprovalRequested(lathe_core::protocol::ApprovalRequest {
            change,
            diff,
            ..
        }) = ev
        else {
            unreachable!()
        };
        let change = change.as_ref().expect("a file change comes as data");
        assert_eq!(change.hunks.len(), 2);
        assert_eq!(diff.as_deref(), Some(change.unified().as_str()));
        ApprovalDecision::ApproveHunks { hunks: vec![1] }
    })
    .await;
    let text = std::fs::read_to_string(ws.path().join("notes.txt")).unwrap();
    assert!(
        text.contains("line 2\n") && text.contains("line twenty-five\n"),
        "{text}"
    );
    let (status, content, _) = result_of(&events, "w");
    assert_eq!(status, ToolStatus::Ok, "{content}");
    assert_eq!(content["hunks_applied"], 1);
    assert_eq!(content["not_applied"][0]["old_lines"], "1-5");
    let sent = tool_results(&mock.requests()[1]);
    assert!(sent[0].1.to_string().contains("not_applied"), "{sent:?}");

    // Changed between the preview and the answer: refused, kept.
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "e",
            "edit_file",
            json!({"path": "notes.txt", "old_text": "line 10\n", "new_text": "line ten\n"}),
        )),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let path = ws.path().join("notes.txt");
    let mut handle = interactive(ApprovalMode::Ask).spawn(&mock, ws.path());
    let events = drive(&mut handle, "go", |_| {
        let mut now = std::fs::read_to_string(&path).unwrap();
        now.push_str("a line the person added\n");
        std::fs::write(&path, now).unwrap();
        ApprovalDecision::ApproveOnce
    })
    .await;
    let (status, content, _) = result_of(&events, "e");
    assert_eq!(status, ToolStatus::Error);
    assert!(
        error_text(&content).contains("changed after the change was shown"),
        "{content}"
    );
    let text = std::fs::read_to_string(ws.path().join("notes.txt")).unwrap();
    assert!(text.contains("line 10\n") && text.ends_with("a line the person added\n"));
}

/// The person edits the change before it is written: their version is
/// written, and the model is told.
#[tokio::test]
async fn a_change_edited_by_the_person_is_written_as_edited() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "e",
            "edit_file",
            json!({"path": "a.txt", "old_text": "one", "new_text": "two"}),
        )),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let mut handle = interactive(ApprovalMode::Ask).spawn(&mock, ws.path());
    let events = drive(&mut handle, "go", |ev| {
        let AgentEvent::ApprovalRequested(lathe_core::protocol::ApprovalRequest { change, .. }) =
            ev
        else {
            unreachable!()
        };
        assert_eq!(change.as_ref().unwrap().new_text(), "two\n");
        ApprovalDecision::ApproveEdited {
            content: "two, as the person wants it\n".into(),
        }
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "two, as the person wants it\n"
    );
    let (status, content, _) = result_of(&events, "e");
    assert_eq!(status, ToolStatus::Ok, "{content}");
    assert_eq!(content["edited_by_user"], true);
    // The model sees what the person changed in its proposal.
    let theirs = content["edit_diff"].as_str().unwrap();
    assert!(
        theirs.contains("-two\n+two, as the person wants it"),
        "{theirs}"
    );
    assert!(
        content["note"]
            .as_str()
            .unwrap()
            .contains("edited your change")
    );
    let written = events.iter().find_map(|e| match e {
        AgentEvent::ToolCallFinished { diff, .. } => diff.clone(),
        _ => None,
    });
    assert!(written.unwrap().contains("+two, as the person wants it"));
}

/// Third round: a deny rule on reading a file holds for moving it where
/// it could be read (`move_file private/plan.md p.md` in auto-edit).
#[tokio::test]
async fn a_file_denied_to_read_cannot_be_moved_out_of_its_place() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("private")).unwrap();
    std::fs::write(ws.path().join("private/plan.md"), "the plan\n").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "m1",
            "move_file",
            json!({"from": "private/plan.md", "to": "p.md"}),
        )),
        Step::Reply(Reply::text("ok")),
    ])
    .await;
    let setup = private_denied(ApprovalMode::AutoEdit);
    let mut handle = setup.spawn(&mock, ws.path());
    let events = turn(&mut handle, "tidy up").await;
    let done = finished(&events);
    assert_eq!(done[0].1, ToolStatus::Denied, "{done:?}");
    assert!(ws.path().join("private/plan.md").exists());
    assert!(!ws.path().join("p.md").exists());
}

/// The third round's case in full-auto: `mv private public`, then
/// `read_file`. A deny rule follows the file: a directory that holds a
/// covered file is not moved, copied or archived; a pattern that names
/// one counts; a file moved out of its place another way (a program the
/// analysis cannot follow) is still the covered file, by device and
/// inode; grep and glob leave covered files out.
#[tokio::test]
async fn a_read_deny_rule_follows_the_file_not_its_old_name() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("private")).unwrap();
    std::fs::write(ws.path().join("private/plan.md"), "SECRET-PLAN-42\n").unwrap();
    std::fs::write(ws.path().join("notes.md"), "public notes\n").unwrap();
    let steps = vec![
        shell("mv", "mv private public"),
        shell("cp", "cp -r private copy"),
        shell("tar", "tar cf all.tar ."),
        shell("glob", "mv priv* public"),
        Step::Reply(Reply::tools().call(
            "script",
            "write_file",
            json!({"path": "mover.py", "content": "import os\nos.rename('priv' + 'ate', 'public')\n"}),
        )),
        shell("py", "python3 mover.py"),
        Step::Reply(Reply::tools().call(
            "read",
            "read_file",
            json!({"path": "public/plan.md"}),
        )),
        shell("cat", "cat public/plan.md"),
        shell("catglob", "cat pub*/*.md"),
        Step::Reply(Reply::tools().call("grep", "grep", json!({"pattern": "SECRET-PLAN"}))),
        Step::Reply(Reply::tools().call("files", "glob", json!({"pattern": "*.md"}))),
        Step::Reply(Reply::tools().call("ls", "list_directory", json!({"path": "."}))),
        shell("ok", "cat notes.md && ls public"),
        Step::Reply(Reply::text("done")),
    ];
    let setup = Setup {
        rules: Rules::parse(
            &[],
            &[],
            &["read_file(private/**)".into()],
            RuleOrigin::User,
        )
        .unwrap(),
        // Without the sandbox, which would keep the script from moving
        // the file (see the next test): the rules alone hold.
        registry: Some(ToolRegistry::with_defaults(&unsandboxed()).unwrap()),
        ..Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::FullAuto)
    };
    let (events, _mock) = run(setup, steps, ws.path(), "tidy up").await;
    for id in ["mv", "cp", "tar", "glob", "read", "cat", "catglob"] {
        let (status, content, _) = result_of(&events, id);
        assert_eq!(status, ToolStatus::Denied, "{id}: {content}");
        assert!(
            !content.to_string().contains("SECRET-PLAN-42"),
            "{id}: {content}"
        );
    }
    assert!(!ws.path().join("copy").exists() && !ws.path().join("all.tar").exists());
    // The program the analysis cannot follow did move it.
    assert!(ws.path().join("public/plan.md").exists());
    let (status, grep, _) = result_of(&events, "grep");
    assert_eq!(status, ToolStatus::Ok, "{grep}");
    assert!(!grep.to_string().contains("SECRET-PLAN-42"), "{grep}");
    assert!(grep.to_string().contains("your read rules deny"), "{grep}");
    let (_, files, _) = result_of(&events, "files");
    assert!(!files.to_string().contains("plan.md"), "{files}");
    assert!(files.to_string().contains("notes.md"), "{files}");
    assert_eq!(result_of(&events, "ls").0, ToolStatus::Ok);
    let (status, ok, _) = result_of(&events, "ok");
    assert_eq!(status, ToolStatus::Ok, "{ok}");
    assert!(ok.to_string().contains("public notes"), "{ok}");
}

/// Runs git in `dir` as a person with no configuration of their own.
fn git_in(dir: &std::path::Path, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

fn unsandboxed() -> lathe_core::tools::builtin::BuiltinSettings {
    let mut settings = builtin_settings();
    settings.sandbox.mode = lathe_core::sandbox::Mode::Off;
    settings
}

/// What a read rule covers is not there for a sandboxed command, whatever
/// program reads it: a script the analysis cannot follow reads it empty
/// (by its name, by a pattern, after trying to move it), cannot write it,
/// move it or its directory, and the files beside it are untouched.
#[tokio::test]
async fn a_read_rule_holds_for_every_program_in_the_sandbox() {
    // With the mount table of its own, and with Landlock alone.
    for namespaces in [true, false] {
        let mut settings = builtin_settings();
        settings.sandbox.namespaces = namespaces;
        read_rule_holds(settings, namespaces).await;
    }
}

async fn read_rule_holds(settings: lathe_core::tools::builtin::BuiltinSettings, namespaces: bool) {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("private/deep")).unwrap();
    std::fs::create_dir(ws.path().join("mixed")).unwrap();
    std::fs::write(ws.path().join("private/plan.md"), "SECRET-PLAN-42\n").unwrap();
    std::fs::write(ws.path().join("private/deep/key.txt"), "SECRET-KEY-43\n").unwrap();
    std::fs::write(ws.path().join("mixed/secret.env"), "SECRET-ENV-44\n").unwrap();
    std::fs::write(ws.path().join("mixed/readme.md"), "open text\n").unwrap();
    // Committed too: git's object store holds it again.
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &["commit", "-qm", "one"],
    ] {
        git_in(ws.path(), args);
    }
    // A link to a directory elsewhere, which a rule covers by its name.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "SECRET-VAULT-45\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join("vault")).unwrap();
    // A rule on an absolute path outside the workspace.
    let elsewhere = crate::places::outside("lathe-elsewhere-");
    std::fs::write(elsewhere.path().join("key.txt"), "SECRET-ABS-46\n").unwrap();
    let py = |id: &str, code: &str| shell(id, &format!("python3 -c \"{code}\""));
    let steps = vec![
        py(
            "absolute",
            &format!(
                "print(open('{}/key.txt').read())",
                elsewhere.path().display()
            ),
        ),
        py(
            "zlib",
            "import zlib,glob\nfor f in glob.glob('.git/objects/*/*'):\n  print(zlib.decompress(open(f,'rb').read()))",
        ),
        py(
            "subgit",
            "import subprocess; subprocess.run(['git','show','HEAD:pri'+'vate/plan.md'])",
        ),
        py("vault", "print(open('vau'+'lt/secret.txt').read())"),
        shell("gitlog", "git log --oneline && git status --short"),
        py("name", "print(open('pri'+'vate/plan.md').read())"),
        py("deep", "print(open('private/de'+'ep/key.txt').read())"),
        py("mixed", "print(open('mixed/sec'+'ret.env').read())"),
        py(
            "walk",
            "import os\nfor d, _, fs in os.walk('.'):\n  for f in fs:\n    p = os.path.join(d, f)\n    print(p, open(p, errors='replace').read() if os.path.isfile(p) else '')",
        ),
        py("write", "open('mixed/sec'+'ret.env', 'a').write('x')"),
        py("move", "import os; os.rename('pri'+'vate', 'public')"),
        py(
            "movefile",
            "import os; os.rename('mixed/sec'+'ret.env', 'out.env')",
        ),
        shell("tar", "tar cf - mix* 2>&1 | strings"),
        // Searching the whole workspace runs (the covered files are not
        // there for it); naming a covered file is still refused.
        shell("grepall", "grep -rn SECRET . ; grep -rn 'open text' ."),
        shell("findall", "find . -name '*.md' -not -path './.git/*'"),
        shell("catnamed", "cat private/plan.md"),
        py(
            "beside",
            "print(open('mixed/read'+'me.md').read()); open('mixed/new.txt', 'w').write('made')",
        ),
        Step::Reply(Reply::text("done")),
    ];
    let setup = Setup {
        rules: Rules::parse(
            &[],
            &[],
            &[
                "read_file(private/**)".into(),
                "read_file(**/*.env)".into(),
                "read_file(vault/**)".into(),
                format!("read_file({}/**)", elsewhere.path().display()),
            ],
            RuleOrigin::User,
        )
        .unwrap(),
        registry: Some(ToolRegistry::with_defaults(&settings).unwrap()),
        ..Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::FullAuto)
    };
    let (events, _mock) = run(setup, steps, ws.path(), "look").await;
    let all = format!("{events:?}");
    for secret in [
        "SECRET-PLAN-42",
        "SECRET-KEY-43",
        "SECRET-ENV-44",
        "SECRET-VAULT-45",
        "SECRET-ABS-46",
    ] {
        assert!(!all.contains(secret), "{secret} got out: {all}");
    }
    for id in ["name", "mixed", "write", "move", "movefile"] {
        let (_, content, _) = result_of(&events, id);
        assert_ne!(content["exit_code"], json!(0), "{id}: {content}");
    }
    // A covered file beside others cannot be opened; a directory of
    // covered files is empty.
    let (_, mixed, _) = result_of(&events, "mixed");
    assert!(mixed.to_string().contains("Permission denied"), "{mixed}");
    // The model is told why, and not to ask for the sandbox off.
    assert!(
        mixed["sandbox"]
            .to_string()
            .contains("is hidden from commands"),
        "{mixed}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("mixed/secret.env")).unwrap(),
        "SECRET-ENV-44\n"
    );
    assert!(ws.path().join("private/plan.md").exists());
    assert!(!ws.path().join("public").exists() && !ws.path().join("out.env").exists());
    // git itself, judged by what it prints, still works.
    let (_, log, _) = result_of(&events, "gitlog");
    assert_eq!(log["exit_code"], json!(0), "{log}");
    assert!(log.to_string().contains("one"), "{log}");
    let (_, beside, _) = result_of(&events, "beside");
    assert!(beside.to_string().contains("open text"), "{beside}");
    let (status, grepall, _) = result_of(&events, "grepall");
    assert_eq!(status, ToolStatus::Ok, "{grepall}");
    assert!(grepall.to_string().contains("open text"), "{grepall}");
    let (status, findall, _) = result_of(&events, "findall");
    assert_eq!(status, ToolStatus::Ok, "{findall}");
    assert!(findall.to_string().contains("readme.md"), "{findall}");
    let (status, named, _) = result_of(&events, "catnamed");
    assert_eq!(status, ToolStatus::Denied, "{named}");
    // With Landlock alone, the directory that holds a covered file is
    // granted around it, which leaves it without new files.
    if namespaces {
        assert_eq!(
            std::fs::read_to_string(ws.path().join("mixed/new.txt")).unwrap(),
            "made"
        );
    }
}

/// The third round's second look at read rules: git printed a covered
/// file (`git show HEAD:private/plan.md`, `log -p`, `grep`, `cat-file`,
/// `diff`), and `edit_file` with the same old and new text told the model
/// whether its guess was in the file. Both read the file now.
#[tokio::test]
async fn git_and_the_file_tools_cannot_read_a_covered_file_either() {
    let ws = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| git_in(ws.path(), args);
    std::fs::create_dir(ws.path().join("private")).unwrap();
    std::fs::write(ws.path().join("private/plan.md"), "TOPSECRET-PLAN\n").unwrap();
    std::fs::write(ws.path().join("notes.md"), "notes\n").unwrap();
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "one"]);
    std::fs::write(ws.path().join("notes.md"), "notes, changed\n").unwrap();
    let denied = [
        ("show", "git show HEAD:private/plan.md"),
        ("index", "git show :private/plan.md"),
        ("catfile", "git cat-file -p HEAD:private/plan.md"),
        ("logp", "git log -p -1"),
        ("grep", "git grep -n TOPSECRET"),
        ("diff", "git diff"),
        ("diffdir", "git diff -- private"),
    ];
    let allowed = [
        ("status", "git status --short"),
        ("log", "git log --oneline"),
        ("diffnotes", "git diff -- notes.md"),
        ("stat", "git show --stat HEAD"),
    ];
    let mut steps: Vec<Step> = denied
        .iter()
        .chain(allowed.iter())
        .map(|(id, line)| shell(id, line))
        .collect();
    for (id, tool, args) in [
        (
            "guess",
            "edit_file",
            json!({"path": "private/plan.md", "old_text": "TOPSECRET", "new_text": "TOPSECRET"}),
        ),
        (
            "over",
            "write_file",
            json!({"path": "private/plan.md", "content": "x\n"}),
        ),
        ("delete", "delete_file", json!({"path": "private/plan.md"})),
    ] {
        steps.push(Step::Reply(Reply::tools().call(id, tool, args)));
    }
    steps.push(Step::Reply(Reply::text("done")));
    let setup = private_denied(ApprovalMode::FullAuto);
    let (events, _mock) = run(setup, steps, ws.path(), "look around").await;
    for (id, _) in denied {
        let (status, content, _) = result_of(&events, id);
        assert_eq!(status, ToolStatus::Denied, "{id}: {content}");
    }
    for (id, _) in allowed {
        let (status, content, _) = result_of(&events, id);
        assert_eq!(status, ToolStatus::Ok, "{id}: {content}");
    }
    for id in ["guess", "over", "delete"] {
        let (status, content, _) = result_of(&events, id);
        assert_eq!(status, ToolStatus::Denied, "{id}: {content}");
    }
    let all = format!("{events:?}");
    assert!(
        !all.contains("TOPSECRET-PLAN"),
        "a covered file's content got out"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("private/plan.md")).unwrap(),
        "TOPSECRET-PLAN\n"
    );
}

/// The fourth round's N4: a file that comes to match a read rule while a
/// command or a background job runs (a new `*.key`, a new file in
/// `private/`, a new `private/` made then) is not hidden from that
/// command, which made it; what it holds never reaches the model: the
/// text of every covered file is kept out of a command's result, and of
/// what a background job printed, however it is printed (as it is, in
/// hex, in base64, spaced out).
#[tokio::test]
async fn what_comes_to_be_covered_while_a_command_runs_never_reaches_the_model() {
    // The programs write and read the file themselves (the analysis of
    // the line cannot see the name: a script, a name put together).
    let py = |path: &str, text: &str, shown: &str| {
        format!(
            "python3 -c \"import os,base64,sys; p='{path}'; os.makedirs(os.path.dirname(p) or '.', exist_ok=True); \
             open(p,'w').write('{text}\\n'); t=open(p).read(); print({shown})\""
        )
    };
    let cases = [
        (
            "read_file(**/*.key)",
            py("new.key", "KEYTEXT-a1b2c3d4e5f6", "t"),
            "KEYTEXT-a1b2c3d4e5f6",
        ),
        (
            "read_file(private/**)",
            py("private/n.txt", "PRIVATE-TEXT-9f8e7d6c", "t"),
            "PRIVATE-TEXT-9f8e7d6c",
        ),
        (
            "read_file(private/**)",
            py("private/deep/x", "DEEP-TEXT-55aa66bb77", "t.encode().hex()"),
            "DEEP-TEXT-55aa66bb77",
        ),
        (
            "read_file(**/*.key)",
            py(
                "s.key",
                "BASE64-TEXT-0a0b0c0d0e",
                "base64.b64encode(t.encode()).decode()",
            ),
            "BASE64-TEXT-0a0b0c0d0e",
        ),
        (
            "read_file(**/*.key)",
            py("t.key", "SPACED-TEXT-1q2w3e4r5t", "' '.join(t)"),
            "SPACED-TEXT-1q2w3e4r5t",
        ),
        (
            "read_file(secret.txt)",
            py("secret.txt", "NAMED-TEXT-zz11yy22xx", "t.upper()"),
            "NAMED-TEXT-zz11yy22xx",
        ),
    ];
    for (rule, command, text) in cases {
        let ws = tempfile::tempdir().unwrap();
        let mock = MockLlm::start(vec![
            Step::Reply(Reply::tools().call("c", "exec_shell", json!({ "command": &command }))),
            Step::Reply(Reply::text("done")),
        ])
        .await;
        let setup = Setup {
            rules: Rules::parse(&[], &[], &[rule.into()], RuleOrigin::User).unwrap(),
            ..Setup::new(ProviderKind::OpenAi).mode(ApprovalMode::FullAuto)
        };
        let mut handle = setup.spawn(&mock, ws.path());
        let events = turn(&mut handle, "go").await;
        let (status, content, _) = result_of(&events, "c");
        assert_eq!(status, ToolStatus::Ok, "{command}: {content}");
        let hex: String = text.bytes().map(|b| format!("{b:02x}")).collect();
        // What the model was given back (its own call holds the text: it
        // wrote it).
        let sent = format!("{:?}", tool_results(&mock.requests()[1]));
        for form in [text.to_string(), text.to_uppercase(), hex[..24].to_string()] {
            assert!(
                !sent.contains(&form),
                "{command}: {form} reached the model: {sent}"
            );
        }
        // The command could not read it (the warden refused the open), or
        // what it printed was hidden.
        assert!(
            sent.contains("Permission denied") || sent.contains("[REDACTED]"),
            "{command}: {sent}"
        );
        assert!(
            sent.contains("Permission denied"),
            "{command}: not refused: {sent}"
        );
    }
}

/// The same for a background job: what it writes under a read rule and
/// prints is kept out of what `shell_output` gives the model.
#[tokio::test]
async fn what_a_background_job_makes_covered_never_reaches_the_model() {
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "bg",
            "exec_shell",
            json!({
                "command": "sleep 0.3; python3 -c \"import os; os.makedirs('private', exist_ok=True); open('private/j.txt','w').write('JOB-TEXT-7c6b5a493827'); print(open('priv'+'ate/j.txt').read(), flush=True)\"; sleep 30",
                "background": true
            }),
        )),
        Step::Reply(Reply::tools().call(
            "out",
            "shell_output",
            json!({"handle": "bg1", "wait_ms": 3000}),
        )),
        Step::Reply(Reply::tools().call("kill", "shell_kill", json!({"handle": "bg1"}))),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let setup = private_denied(ApprovalMode::FullAuto);
    let mut handle = setup.spawn(&mock, ws.path());
    let _events = turn(&mut handle, "go").await;
    for r in mock.requests() {
        let given = format!("{:?}", tool_results(&r));
        assert!(!given.contains("JOB-TEXT-7c6b5a493827"), "{given}");
    }
    assert!(ws.path().join("private/j.txt").exists());
}

/// A file any tool reads while a job runs may hold what the job made
/// covered since (a copy it wrote): with a job running, every result is
/// checked against the covered files as they are now.
#[tokio::test]
async fn a_copy_a_running_job_made_of_what_it_made_covered_is_hidden() {
    let ws = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools().call(
            "bg",
            "exec_shell",
            json!({
                "command": "sleep 2; mkdir -p private && echo plain words of the copy | tee private/k.txt > copy.txt; sleep 30",
                "background": true
            }),
        )),
        Step::Slow(
            Reply::tools().call("read", "read_file", json!({"path": "copy.txt"})),
            Duration::from_millis(1500),
        ),
        Step::Reply(Reply::tools().call("kill", "shell_kill", json!({"handle": "bg1"}))),
        Step::Reply(Reply::text("done")),
    ])
    .await;
    let setup = private_denied(ApprovalMode::FullAuto);
    let mut handle = setup.spawn(&mock, ws.path());
    let events = turn(&mut handle, "go").await;
    assert_eq!(result_of(&events, "read").0, ToolStatus::Ok);
    for r in mock.requests() {
        let given = format!("{:?}", tool_results(&r));
        assert!(!given.contains("plain words of the copy"), "{given}");
    }
    assert!(
        std::fs::read_to_string(ws.path().join("copy.txt"))
            .unwrap()
            .contains("plain words")
    );
}

/// A setup whose read rules deny `private/**`.
fn private_denied(mode: ApprovalMode) -> Setup {
    Setup {
        rules: Rules::parse(
            &[],
            &[],
            &["read_file(private/**)".into()],
            RuleOrigin::User,
        )
        .unwrap(),
        ..Setup::new(ProviderKind::OpenAi).mode(mode)
    }
}
