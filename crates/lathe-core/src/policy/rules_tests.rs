use super::*;
use crate::policy::shell::analyze;
use crate::policy::workspace::Workspace;

fn rules(allow: &[&str], ask: &[&str], deny: &[&str]) -> Rules {
    let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    Rules::parse(&v(allow), &v(ask), &v(deny), RuleOrigin::User).unwrap()
}

fn first_command_matches(r: &Rules, kind: RuleKind, line: &str) -> bool {
    let d = tempfile::tempdir().unwrap();
    let w = Workspace::new(d.path()).unwrap();
    let op = analyze(line, &w);
    op.commands
        .iter()
        .any(|c| r.first(kind, SHELL_TOOL, Subject::Command(c)).is_some())
}

#[test]
fn rules_parse_and_name_their_mistakes() {
    assert!(Rule::parse("exec_shell(git status*)", RuleOrigin::User).is_ok());
    assert!(Rule::parse("read_file", RuleOrigin::User).is_ok());
    let e = Rule::parse("exec_shell(git status*", RuleOrigin::User).unwrap_err();
    assert!(e.contains("must end with `)`"), "{e}");
    let e = Rule::parse("exec_shell()", RuleOrigin::User).unwrap_err();
    assert!(e.contains("empty"), "{e}");
    let e = Rule::parse("exec shell(x)", RuleOrigin::User).unwrap_err();
    assert!(e.contains("not a tool name"), "{e}");
    assert!(Rule::parse("read_file(src/[)", RuleOrigin::User).is_err());
}

#[test]
fn a_misspelt_tool_is_refused_not_ignored() {
    for (rule, hint) in [
        ("Exec_Shell(rm -rf *)", "did you mean `exec_shell`"),
        ("readfile(.env)", "did you mean `read_file`"),
        ("exec_shel(ls)", "did you mean `exec_shell`"),
        ("bash(ls)", "the tools are read_file"),
    ] {
        let tools = crate::tools::builtin::names();
        let e = Rule::parse(rule, RuleOrigin::User)
            .unwrap()
            .unknown_tool(&tools)
            .expect("no such tool");
        assert!(
            e.contains("there is no tool") && e.contains(hint),
            "{rule}: {e}"
        );
    }
    let tools = crate::tools::builtin::names();
    for known in [
        "exec_shell(ls)",
        "read_file",
        "github.create_issue",
        "github.*",
    ] {
        let rule = Rule::parse(known, RuleOrigin::User).unwrap();
        assert_eq!(rule.unknown_tool(&tools), None, "{known}");
    }
    // MCP tools are named by server.
    assert_eq!(
        Rule::parse("github.create_issue", RuleOrigin::User)
            .unwrap()
            .tool,
        "github__create_issue"
    );
    // Every tool of a server.
    for every in ["github.*", "github__*"] {
        let r = Rule::parse(every, RuleOrigin::User).unwrap();
        assert_eq!(r.tool, "github__*");
        assert_eq!(r.server(), Some("github"));
    }
    assert!(Rule::parse("github.*(x)", RuleOrigin::User).is_err_and(|e| e.contains("no pattern")));
    assert!(Rule::parse("git*", RuleOrigin::User).is_err_and(|e| e.contains("server.*")));
    assert!(Rule::parse("a.b.*", RuleOrigin::User).is_err_and(|e| e.contains("server name")));
}

/// `server.*` covers that server's tools and no other's.
#[test]
fn a_server_rule_covers_its_tools_only() {
    let r = rules(&[], &[], &["github.*"]);
    assert!(
        r.first(RuleKind::Deny, "github__create_issue", Subject::Call)
            .is_some()
    );
    assert!(
        r.first(RuleKind::Deny, "githubx__create", Subject::Call)
            .is_none()
    );
    assert!(
        r.first(RuleKind::Deny, "read_file", Subject::Call)
            .is_none()
    );
}

#[test]
fn deny_rules_see_through_flag_spellings_paths_and_wrappers() {
    let r = rules(&[], &[], &["exec_shell(rm -rf *)"]);
    for line in [
        "rm -rf target",
        "rm -fr target",
        "rm -r -f target",
        "rm --recursive --force target",
        "rm target -rf",
        "/bin/rm -rf target",
        "timeout 5 rm -rf target",
        "echo hi && rm -Rf target",
        "r\\m -rf target",
    ] {
        assert!(first_command_matches(&r, RuleKind::Deny, line), "{line}");
    }
    assert!(!first_command_matches(&r, RuleKind::Deny, "rm target"));
}

#[test]
fn allow_rules_match_strictly() {
    let r = rules(
        &["exec_shell(git status*)", "exec_shell(rm -f *.o)"],
        &[],
        &[],
    );
    assert!(first_command_matches(
        &r,
        RuleKind::Allow,
        "git status --short"
    ));
    assert!(!first_command_matches(
        &r,
        RuleKind::Allow,
        "/tmp/git status"
    ));
    assert!(first_command_matches(&r, RuleKind::Allow, "rm -f a.o"));
    assert!(!first_command_matches(
        &r,
        RuleKind::Allow,
        "rm -f x -r y.o"
    ));
}

#[test]
fn path_rules_cover_every_tool_with_the_same_access() {
    let r = rules(
        &["read_file(src/**)"],
        &[],
        &["read_file(.env)", "read_file(**/*.pem)"],
    );
    let f = |path: &str, access| FileOp {
        path: path.into(),
        access,
        outside: false,
        named: false,
        deletes: false,
    };
    let env = f(".env", Access::Read);
    assert!(
        r.first(RuleKind::Deny, "read_file", Subject::File(&env))
            .is_some()
    );
    assert!(
        r.first(RuleKind::Deny, SHELL_TOOL, Subject::File(&env))
            .is_some()
    );
    let pem = f("keys/deep/a.pem", Access::Read);
    assert!(
        r.first(RuleKind::Deny, "read_file", Subject::File(&pem))
            .is_some()
    );
    let src = f("src/a/b.rs", Access::Read);
    assert!(
        r.first(RuleKind::Allow, "read_file", Subject::File(&src))
            .is_some()
    );
    let write = f(".env", Access::Write);
    assert!(
        r.first(RuleKind::Deny, "write_file", Subject::File(&write))
            .is_none()
    );
}

#[test]
fn bare_rules_match_every_call_of_their_tool() {
    let r = rules(&[], &["write_file"], &[]);
    assert!(
        r.first(RuleKind::Ask, "write_file", Subject::Call)
            .is_some()
    );
    assert!(r.first(RuleKind::Ask, "edit_file", Subject::Call).is_none());
}

#[test]
fn canonical_forms_gather_flags() {
    let w = |s: &str| s.split(' ').map(Word::literal).collect::<Vec<_>>();
    assert_eq!(canonical(&w("rm x --recursive -f")), "rm -fr x");
    assert_eq!(
        canonical(&w("git push --force origin")),
        "git push -f origin"
    );
    assert_eq!(canonical(&w("head -n 5 f")), "head -n 5 f");
}
