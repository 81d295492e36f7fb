use super::*;
use proptest::prelude::*;

fn parse(text: &str) -> Makefile {
    parse_makefile(text, &mut Vars::default())
}

#[test]
fn includes_are_read_however_they_are_written() {
    let m = parse(
        "include\trules.mk\n\
         -include a.mk \\\n    b.mk # comment\n\
         sinclude $(CURDIR)/c.mk\n\
         include $(wildcard mk/*.mk)\n\
         DIR := gen\n\
         include $(DIR)/d.mk ./e.mk\n\
         include $(UNKNOWN)/f.mk\n\
         included_not: x\n",
    );
    assert_eq!(
        m.includes,
        [
            "rules.mk", "a.mk", "b.mk", "./c.mk", "mk/*.mk", "gen/d.mk", "e.mk"
        ]
        .map(|s| s.trim_start_matches("./").to_string())
    );
}

#[test]
fn recipes_and_variables_are_the_commands_it_runs() {
    let m = parse(
        "CHECK = ./scripts/check.sh --strict\n\
         lint: ; python3 tools/lint.py\n\
         test:\n\t@$(CHECK)\n\t-./scripts/a.sh \\\n\t  --flag\n\t+$$HOME/x\n",
    );
    assert_eq!(
        m.commands,
        [
            "./scripts/check.sh --strict",
            "python3 tools/lint.py",
            "./scripts/check.sh --strict",
            "./scripts/a.sh  \t  --flag",
            "$HOME/x",
        ]
    );
}

#[test]
fn variables_carry_into_included_files_and_expansion_ends() {
    let mut vars = Vars::default();
    parse_makefile("A = $(B)\nB = $(A)\nTOOL = bin/t\n", &mut vars);
    let m = parse_makefile("x:\n\t$(TOOL) $(A)\n", &mut vars);
    assert!(m.commands[0].starts_with("bin/t "), "{:?}", m.commands);
    // Unclosed and odd forms are left as written.
    assert_eq!(vars.expand("$(oops x", 0), "$(oops x");
    assert_eq!(vars.expand("a$", 0), "a$");
    assert_eq!(vars.expand("${TOOL}/y", 0), "bin/t/y");
}

#[test]
fn package_manifests_give_scripts_and_workspaces() {
    let text = r#"{"scripts": {"lint": "node scripts/lint.js", "n": 3},
                  "workspaces": ["packages/*", "tools"]}"#;
    assert_eq!(scripts(text), ["node scripts/lint.js"]);
    assert_eq!(workspaces(text), ["packages/*", "tools"]);
    assert_eq!(workspaces(r#"{"workspaces": {"packages": ["a"]}}"#), ["a"]);
    assert!(scripts("not json").is_empty() && workspaces("[1]").is_empty());
    assert_eq!(
        pnpm_workspaces("packages:\n  - 'apps/*'\n  - \"lib\"\n  - '!**/test'\n"),
        ["apps/*", "lib"]
    );
}

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// What a hook's make runs, through includes found every way and the
/// scripts the recipes run, is its: each file, and the pattern of a
/// glob.
#[test]
fn make_is_followed_through_includes_and_recipes() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[
            (
                "Makefile",
                "include\tmk/*.mk\ninclude inc.mk\ncheck:\n\t@./scripts/check.sh\n",
            ),
            ("mk/a.mk", "A = python3 tools/a.py\n"),
            ("mk/b.txt", "not included\n"),
            ("scripts/check.sh", "echo ok\n"),
            ("tools/a.py", "print(1)\n"),
            ("extra/inc.mk", "x:\n\tsh tools/deep.sh\n"),
            ("tools/deep.sh", "true\n"),
        ],
    );
    let ws = Workspace::new(d.path()).unwrap();
    let files = of("make -s -I extra check", &ws);
    for f in [
        "Makefile",
        "GNUmakefile",
        "mk/*.mk",
        "mk/a.mk",
        "scripts/check.sh",
        "tools/a.py",
        "inc.mk",
        "extra/inc.mk",
        "tools/deep.sh",
    ] {
        assert!(files.contains(&f.to_string()), "{f} missing from {files:?}");
    }
    assert!(!files.contains(&"mk/b.txt".to_string()), "{files:?}");
}

#[test]
fn npm_is_followed_through_scripts_and_workspaces() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[
            (
                "package.json",
                r#"{"workspaces": ["packages/*"], "scripts": {"check": "node scripts/lint.js"}}"#,
            ),
            ("scripts/lint.js", "1\n"),
            (
                "packages/web/package.json",
                r#"{"scripts": {"check": "./run.sh"}}"#,
            ),
            ("packages/web/run.sh", "true\n"),
            (
                "tools/package.json",
                r#"{"scripts": {"check": "sh go.sh"}}"#,
            ),
            ("tools/go.sh", "true\n"),
        ],
    );
    let ws = Workspace::new(d.path()).unwrap();
    let files = of("npm run -s check -w tools", &ws);
    for f in [
        "package.json",
        "scripts/lint.js",
        "packages/web/package.json",
        "packages/web/run.sh",
        "tools/package.json",
        "tools/go.sh",
    ] {
        assert!(files.contains(&f.to_string()), "{f} missing from {files:?}");
    }
}

/// A makefile that includes itself, or a thousand files, ends the walk
/// within its bounds; nothing outside the workspace is named.
#[test]
fn the_walk_is_bounded_and_stays_inside() {
    let d = tempfile::tempdir().unwrap();
    let many: String = (0..2000).map(|i| format!("include f{i}.mk\n")).collect();
    write(
        d.path(),
        &[(
            "Makefile",
            &format!("include Makefile\ninclude ../../etc/x.mk\n{many}"),
        )],
    );
    let ws = Workspace::new(d.path()).unwrap();
    let files = of("make", &ws);
    assert!(files.len() <= MAX_FILES, "{}", files.len());
    assert!(
        files
            .iter()
            .all(|f| !f.starts_with("..") && !f.starts_with('/'))
    );
}

proptest! {
    #![proptest_config(crate::props::config(256))]

    /// Any text, as a makefile or a manifest, is read without a panic;
    /// what it yields is bounded.
    #[test]
    fn any_makefile_or_manifest_is_read(text in "(?s).{0,400}|[\\t$(){}\\\\#:;=a-z* \\n-]{0,200}") {
        let m = parse(&text);
        prop_assert!(m.includes.len() <= MAX_FILES && m.commands.len() <= MAX_FILES);
        for inc in &m.includes {
            prop_assert!(!inc.contains('$') && !inc.trim().is_empty());
        }
        let _ = (scripts(&text), workspaces(&text), pnpm_workspaces(&text));
        let _ = Vars::default().expand(&text, 0);
    }
}
