use super::*;
use crate::policy::rules::RuleOrigin;
use crate::policy::shell::analyze;
use crate::protocol::operation::FileOp;

fn setup() -> (tempfile::TempDir, Workspace) {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("src")).unwrap();
    let w = Workspace::new(d.path()).unwrap();
    (d, w)
}

fn assess_line(mode: ApprovalMode, rules: &Rules, w: &Workspace, line: &str) -> Assessment {
    let ops = vec![Operation::Exec(analyze(line, w))];
    Assessor {
        mode,
        rules,
        workspace: w,
        protected: &[],
    }
    .assess("exec_shell", Effect::Exec, &ops)
}

fn write(path: &str) -> Vec<Operation> {
    vec![Operation::File(FileOp {
        path: path.into(),
        access: Access::Write,
        outside: false,
        named: false,
        deletes: false,
    })]
}

#[test]
fn the_table_matches_the_design() {
    use ApprovalMode::*;
    let (_d, w) = setup();
    let rules = Rules::default();
    let a = |m, ops: &[Operation], e| {
        Assessor {
            mode: m,
            rules: &rules,
            workspace: &w,
            protected: &[],
        }
        .assess("write_file", e, ops)
    };
    let w_ops = write("src/a.rs");
    assert!(matches!(
        a(ReadOnly, &w_ops, Effect::Write),
        Assessment::Refuse(_)
    ));
    assert!(matches!(a(Ask, &w_ops, Effect::Write), Assessment::Ask(_)));
    assert_eq!(a(AutoEdit, &w_ops, Effect::Write), Assessment::Auto);
    assert_eq!(a(FullAuto, &w_ops, Effect::Write), Assessment::Auto);
    for m in ApprovalMode::ALL {
        assert_eq!(
            assess_line(m, &rules, &w, "ls -la && git status"),
            Assessment::Auto,
            "{m}"
        );
    }
    assert!(matches!(
        assess_line(ReadOnly, &rules, &w, "cargo build"),
        Assessment::Refuse(_)
    ));
    assert!(matches!(
        assess_line(Ask, &rules, &w, "cargo build"),
        Assessment::Ask(_)
    ));
    assert!(matches!(
        assess_line(AutoEdit, &rules, &w, "cargo build"),
        Assessment::Ask(_)
    ));
    assert_eq!(
        assess_line(FullAuto, &rules, &w, "cargo build"),
        Assessment::Auto
    );
    let net = vec![Operation::Net {
        host: "example.com".into(),
    }];
    assert!(matches!(
        a(ReadOnly, &net, Effect::Network),
        Assessment::Ask(_)
    ));
    assert_eq!(a(FullAuto, &net, Effect::Network), Assessment::Auto);
}

#[test]
fn only_the_uncovered_part_of_a_chain_asks() {
    let (_d, w) = setup();
    let Assessment::Ask(needs) = assess_line(
        ApprovalMode::Ask,
        &Rules::default(),
        &w,
        "git status && rm -v x",
    ) else {
        panic!("expected a question");
    };
    assert_eq!(needs.len(), 1);
    assert_eq!(needs[0].what, "run `rm -v x`");
    assert!(needs[0].grant.is_some());
}

#[test]
fn complex_lines_are_never_grantable_and_protected_files_always_ask() {
    let (_d, w) = setup();
    let rules = Rules::parse(
        &["exec_shell(echo*)".into(), "write_file".into()],
        &[],
        &[],
        RuleOrigin::User,
    )
    .unwrap();
    let Assessment::Ask(needs) = assess_line(ApprovalMode::Ask, &rules, &w, "echo $(touch x)")
    else {
        panic!("a complex line asks even when its commands are allowed");
    };
    assert!(needs.iter().all(|n| n.grant.is_none()), "{needs:?}");
    for mode in [ApprovalMode::AutoEdit, ApprovalMode::FullAuto] {
        let a = Assessor {
            mode,
            rules: &rules,
            workspace: &w,
            protected: &[],
        };
        for path in [
            ".git/config",
            "sub/.git/hooks/pre-commit",
            ".lathe/config.toml",
            ".mcp.json",
        ] {
            let Assessment::Ask(needs) = a.assess("write_file", Effect::Write, &write(path)) else {
                panic!("{path} should ask in {mode}");
            };
            assert!(needs[0].grant.is_none());
        }
    }
}

#[test]
fn rules_beat_the_table() {
    let (_d, w) = setup();
    let rules = Rules::parse(
        &["exec_shell(cargo test*)".into()],
        &["exec_shell(git status*)".into()],
        &[],
        RuleOrigin::User,
    )
    .unwrap();
    assert_eq!(
        assess_line(ApprovalMode::Ask, &rules, &w, "cargo test --all"),
        Assessment::Auto
    );
    assert!(matches!(
        assess_line(ApprovalMode::FullAuto, &rules, &w, "git status"),
        Assessment::Ask(_)
    ));
    assert!(matches!(
        assess_line(ApprovalMode::Ask, &rules, &w, "cargo test; cargo publish"),
        Assessment::Ask(_)
    ));
}

#[test]
fn writes_outside_the_workspace_always_ask() {
    let (_d, w) = setup();
    let rules = Rules::parse(&["exec_shell".into()], &[], &[], RuleOrigin::User).unwrap();
    let Assessment::Ask(needs) =
        assess_line(ApprovalMode::FullAuto, &rules, &w, "echo hi > /tmp/x")
    else {
        panic!("a write outside the workspace asks in every mode");
    };
    assert!(needs[0].what.contains("/tmp/x") && needs[0].grant.is_none());
}

#[test]
fn each_need_says_what_asks_and_why_without_repeats() {
    let (_d, w) = setup();
    let rules = Rules::default();
    let needs = |line: &str| match assess_line(ApprovalMode::Ask, &rules, &w, line) {
        Assessment::Ask(n) => n,
        other => panic!("{line}: {other:?}"),
    };
    // A reader outside the workspace asks for the read, not as a command
    // that may change things.
    let n = needs("cat /etc/hostname");
    assert!(
        n.iter().all(|n| !n.reason.contains("may change things")),
        "{n:?}"
    );
    assert!(
        n.iter().any(|n| n.reason.contains("outside the workspace")),
        "{n:?}"
    );
    assert!(n.iter().all(|n| n.grant.is_none()));
    // A writer outside still asks as a command.
    let n = needs("cp src/x /tmp/y");
    assert!(n.iter().any(|n| n.what.starts_with("run `cp")), "{n:?}");
    // `sh -c 'make'`: the make, and the line as written; not the shell too.
    let n = needs("sh -c 'make'");
    let whats: Vec<&str> = n.iter().map(|n| n.what.as_str()).collect();
    assert_eq!(whats, ["run `make`", "run the line exactly as written"]);
    // A hook's script is protected like .lathe/.
    let protected = ["scripts/audit.sh".to_string()];
    let ops = vec![Operation::Exec(analyze("echo x > scripts/audit.sh", &w))];
    let a = Assessor {
        mode: ApprovalMode::FullAuto,
        rules: &rules,
        workspace: &w,
        protected: &protected,
    }
    .assess("exec_shell", Effect::Exec, &ops);
    let Assessment::Ask(n) = a else {
        panic!("{a:?}")
    };
    assert!(n.iter().all(|n| n.grant.is_none()), "{n:?}");
    let a = Assessor {
        mode: ApprovalMode::FullAuto,
        rules: &rules,
        workspace: &w,
        protected: &protected,
    }
    .assess("write_file", Effect::Write, &write("scripts/audit.sh"));
    assert!(matches!(a, Assessment::Ask(_)), "{a:?}");
}

/// A command to run outside the sandbox asks in every mode (full-auto
/// too), whatever rule allows its program, and no grant covers it; in
/// read-only mode it is refused.
#[test]
fn running_outside_the_sandbox_always_asks_and_is_never_granted() {
    let (_d, w) = setup();
    let rules = Rules::parse(
        &["exec_shell(cargo test*)".into()],
        &[],
        &[],
        RuleOrigin::User,
    )
    .unwrap();
    for mode in ApprovalMode::ALL {
        let mut exec = analyze("cargo test", &w);
        exec.unsandboxed = true;
        let ops = vec![Operation::Exec(exec)];
        let got = Assessor {
            mode,
            rules: &rules,
            workspace: &w,
            protected: &[],
        }
        .assess("exec_shell", Effect::Exec, &ops);
        match (mode, got) {
            (ApprovalMode::ReadOnly, Assessment::Refuse(why)) => {
                assert!(why.contains("outside the sandbox"), "{why}");
            }
            (ApprovalMode::ReadOnly, other) => panic!("read-only: {other:?}"),
            (_, Assessment::Ask(needs)) => {
                let n = needs
                    .iter()
                    .find(|n| n.what.contains("outside the sandbox"))
                    .unwrap_or_else(|| panic!("{mode}: {needs:?}"));
                assert!(n.grant.is_none(), "{mode}: never granted");
            }
            (_, other) => panic!("{mode}: {other:?}"),
        }
    }
}

/// Outside the sandbox nothing holds the read rules for a program the
/// analysis cannot follow: the question says which rules it can read past.
#[test]
fn running_outside_the_sandbox_says_which_read_rules_cannot_hold() {
    let (_d, w) = setup();
    let rules = Rules::parse(
        &[],
        &[],
        &["read_file(private/**)".into()],
        RuleOrigin::User,
    )
    .unwrap();
    let mut exec = analyze("python3 build.py", &w);
    exec.unsandboxed = true;
    let got = Assessor {
        mode: ApprovalMode::FullAuto,
        rules: &rules,
        workspace: &w,
        protected: &[],
    }
    .assess("exec_shell", Effect::Exec, &[Operation::Exec(exec)]);
    let Assessment::Ask(needs) = got else {
        panic!("{got:?}");
    };
    let n = needs
        .iter()
        .find(|n| n.what.contains("outside the sandbox"))
        .unwrap_or_else(|| panic!("{needs:?}"));
    assert!(
        n.reason
            .contains("can read what your rules `read_file(private/**)` deny"),
        "{}",
        n.reason
    );
}
