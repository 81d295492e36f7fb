use super::*;
use crate::protocol::operation::{Access, Program, Stdin};

fn ws() -> (tempfile::TempDir, Workspace) {
    let d = tempfile::tempdir().unwrap();
    let w = Workspace::new(d.path()).unwrap();
    (d, w)
}

fn argvs(op: &ExecOp) -> Vec<Vec<String>> {
    op.commands
        .iter()
        .map(|c| c.argv.iter().map(|w| w.text.clone()).collect())
        .collect()
}

#[test]
fn chains_pipes_and_lists_split_into_simple_commands() {
    let (_d, w) = ws();
    let op = analyze(
        "git status --short; touch X && ls | wc -l || echo 'a b'",
        &w,
    );
    assert_eq!(
        argvs(&op),
        vec![
            vec!["git", "status", "--short"],
            vec!["touch", "X"],
            vec!["ls"],
            vec!["wc", "-l"],
            vec!["echo", "a b"],
        ]
    );
    assert!(op.complex.is_empty(), "{:?}", op.complex);
    assert_eq!(op.commands[0].subcommand.as_deref(), Some("status"));
    assert_eq!(op.commands[3].stdin, Stdin::Pipe);
}

#[test]
fn quotes_and_escapes_are_removed() {
    let (_d, w) = ws();
    let op = analyze(r#"su''do ls; "sudo" x; r\m -rf y; $'\x73udo' z"#, &w);
    let names: Vec<_> = op.commands.iter().map(|c| c.name().to_string()).collect();
    assert_eq!(names, ["sudo", "sudo", "rm", "sudo"]);
}

#[test]
fn substitutions_are_complex_and_their_commands_are_seen() {
    let (_d, w) = ws();
    let op = analyze("FOO=$(touch${IFS}X) git --version", &w);
    assert!(op.is_complex());
    assert!(op.commands.iter().any(|c| c.name() == "touch${IFS}X"));
    let op = analyze("$(echo sudo) ls", &w);
    assert!(matches!(
        op.commands.last().unwrap().program,
        Program::Dynamic
    ));
    let op = analyze("echo `id`; cat <(ls)", &w);
    assert!(op.commands.iter().any(|c| c.name() == "id"));
    assert!(op.commands.iter().any(|c| c.name() == "ls"));
}

#[test]
fn shell_strings_and_eval_are_looked_into() {
    let (_d, w) = ws();
    for line in [
        "sh -c 'sudo ls'",
        "bash -lc \"sudo ls\"",
        "eval 'sudo ls'",
        "timeout 5 env FOO=1 nice -n 3 sudo ls",
        "find . -exec sudo rm {} \\;",
        "xargs -0 sudo rm",
        "env -S 'sudo ls'",
        "sh <<EOF\nsudo ls\nEOF",
        "bash <<< 'sudo ls'",
    ] {
        let op = analyze(line, &w);
        assert!(
            op.commands.iter().any(|c| c.name() == "sudo"),
            "{line}: {:?}",
            argvs(&op)
        );
    }
}

#[test]
fn braces_and_tildes_expand() {
    let (_d, w) = ws();
    let op = analyze("echo {rm,-rf,/tmp/x} x{1..2}", &w);
    assert_eq!(
        argvs(&op),
        vec![vec!["echo", "rm", "-rf", "/tmp/x", "x1", "x2"]]
    );
    // tree-sitter does not parse a brace expansion in the program's place:
    // such a line is refused as unchecked.
    assert!(analyze("{rm,-rf,/}", &w).unchecked.is_some());
    let op = analyze("ls ~/x", &w);
    let home = std::env::var("HOME").unwrap();
    assert_eq!(op.commands[0].argv[1].text, format!("{home}/x"));
    let op = analyze("X=/; rm -rf $X", &w);
    assert_eq!(op.commands[0].argv[2].text, "/");
    let op = analyze("rm -rf \"$PWD/build\"", &w);
    assert_eq!(
        op.commands[0].argv[2].text,
        format!("{}/build", w.root().display())
    );
}

/// What a run-like subcommand runs scopes its grant: options that change
/// nothing (`--silent`) are left out, those that choose what runs are
/// part of it with their values, and what follows the name is the run
/// program's own.
#[test]
fn a_run_scope_names_what_runs() {
    let (_d, w) = ws();
    for (line, scope) in [
        ("npm run lint", "run lint"),
        ("npm run --silent lint", "run lint"),
        ("npm run lint -- --fix", "run lint"),
        ("npm run -w lint deploy", "run -w=lint deploy"),
        (
            "npm run deploy --workspace=lint",
            "run deploy --workspace=lint",
        ),
        ("pnpm run --filter lint deploy", "run --filter=lint deploy"),
        ("pnpm run lint --fix", "run lint"),
        ("cargo run", "run"),
        ("cargo run --release", "run"),
        ("cargo run -p app --bin tool", "run -p=app --bin=tool"),
        ("cargo run -p app -- x", "run -p=app x"),
        ("go run ./cmd/x -v", "run ./cmd/x"),
        ("go run -C sub ./cmd/x", "run --C=sub ./cmd/x"),
        ("go run -tags dev .", "run --tags=dev ."),
    ] {
        let op = analyze(line, &w);
        assert_eq!(op.commands[0].subcommand.as_deref(), Some(scope), "{line}");
    }
}

#[test]
fn git_aliases_and_config_are_complex() {
    let (_d, w) = ws();
    assert!(analyze("git -c alias.x='!touch X' x", &w).is_complex());
    assert!(analyze("git st", &w).is_complex());
    assert!(!analyze("git -C sub log --oneline", &w).is_complex());
    // `-c` takes the next word: the subcommand is after it.
    let op = analyze("git -c core.pager=less log", &w);
    assert_eq!(op.commands[0].subcommand.as_deref(), Some("log"));
    assert!(
        !op.complex.iter().any(|c| c.contains("alias")),
        "{:?}",
        op.complex
    );
}

#[test]
fn redirections_become_file_operations() {
    let (_d, w) = ws();
    let op = analyze(
        "grep x src > out.txt 2>/dev/null; cat < in.txt; echo hi >> /tmp/elsewhere",
        &w,
    );
    let files: Vec<_> = op
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.access, f.outside))
        .collect();
    assert_eq!(
        files,
        [
            ("out.txt", Access::Write, false),
            ("src", Access::Read, false),
            ("in.txt", Access::Read, false),
            ("/tmp/elsewhere", Access::Write, true),
        ]
    );
    let op = analyze("cd /tmp && echo x > out", &w);
    assert!(
        op.files.iter().any(|f| f.path == "/tmp/out" && f.outside),
        "{:?}",
        op.files
    );
}

#[test]
fn parse_errors_and_deep_nesting_are_unchecked() {
    let (_d, w) = ws();
    assert!(analyze("echo 'unterminated", &w).unchecked.is_some());
    let deep = format!("{}echo hi{}", "$(".repeat(200), ")".repeat(200));
    assert!(analyze(&deep, &w).unchecked.is_some());
}

#[test]
fn fork_bombs_are_found_under_any_name() {
    let (_d, w) = ws();
    let bombs = |line: &str| analyze(line, &w).fork_bombs;
    assert_eq!(bombs(":(){ :|:& };:").len(), 1);
    assert!(bombs("bomb() { bomb | bomb & }; bomb")[0].contains("`bomb`"));
    assert_eq!(bombs("a() { b; }; b() { a | a & }; a").len(), 2);
    assert_eq!(
        bombs("shopt -s expand_aliases\nalias g=f\nf(){ g|g& }; f").len(),
        2
    );
    assert_eq!(bombs("while :; do sleep 1000 & done").len(), 1);
    assert!(bombs("f() { echo hi; }; f").is_empty());
    assert!(bombs("while read l; do echo $l & done").is_empty());
    let chain: String = (0..600)
        .map(|i| format!("f{i}() {{ f{}; }}; ", i + 1))
        .collect();
    let started = std::time::Instant::now();
    assert!(bombs(&chain).is_empty());
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
}

#[test]
fn programs_resolve_like_the_shell() {
    let (d, w) = ws();
    let op = analyze("cd src; echo hi", &w);
    assert!(matches!(op.commands[1].program, Program::Builtin { .. }));
    let op = analyze("sh -c true", &w);
    assert!(matches!(&op.commands[0].program, Program::Path { path, .. } if path.is_absolute()));
    std::fs::write(d.path().join("git"), "#!/bin/sh\n").unwrap();
    let op = analyze("./git status", &w);
    assert!(
        matches!(&op.commands[0].program, Program::NotFound { .. }),
        "not executable"
    );
}

/// Properties of the shell parser and the read-only analysis over
/// arbitrary lines: no panic, no write hidden behind what reads, and no
/// dangerous option of a reader taken as reading.
mod properties {
    use proptest::prelude::*;

    use super::*;
    use crate::policy::{Assessment, Assessor, Rules};
    use crate::protocol::{ApprovalMode, Effect};

    fn auto(line: &str, w: &Workspace) -> bool {
        let op = analyze(line, w);
        let rules = Rules::default();
        let assessor = Assessor {
            mode: ApprovalMode::ReadOnly,
            rules: &rules,
            workspace: w,
            protected: &[],
        };
        matches!(
            assessor.assess(
                "exec_shell",
                Effect::Exec,
                &[crate::protocol::operation::Operation::Exec(op)]
            ),
            Assessment::Auto
        )
    }

    /// A word as bash reads it back: single-quoted.
    fn quoted(s: &str) -> String {
        format!("'{}'", s.replace('\'', r"'\''"))
    }

    fn reader() -> impl Strategy<Value = String> {
        (
            proptest::sample::select(
                &[
                    "ls",
                    "cat",
                    "grep",
                    "wc",
                    "head",
                    "echo",
                    "git status",
                    "find .",
                    "sort",
                ][..],
            ),
            proptest::collection::vec("[ -~é]{0,8}", 0..3),
        )
            .prop_map(|(cmd, args)| {
                let args: Vec<String> = args.iter().map(|a| quoted(a)).collect();
                format!("{cmd} {}", args.join(" "))
            })
    }

    proptest! {
        #![proptest_config(crate::props::config(128))]

        /// Any text: the parser answers, whatever it is.
        #[test]
        fn any_line_is_analysed_without_panic(line in prop_oneof![
            any::<String>(),
            "[a-z $'\"`(){};|&<>\\\\\n#=*?~-]{0,60}",
        ]) {
            let (_d, w) = ws();
            let op = analyze(&line, &w);
            let _ = op.is_complex();
        }

        /// Whatever reads before it, a write at the end of a line is seen:
        /// the line never runs on its own in read-only.
        #[test]
        fn a_write_after_readers_is_never_taken_for_reading(
            readers in proptest::collection::vec(reader(), 1..4),
            seps in proptest::collection::vec(proptest::sample::select(&["; ", " && ", " || ", " | ", "\n"][..]), 4),
            last_sep in proptest::sample::select(&["; ", " && ", " || ", "\n", " | "][..]),
            write in proptest::sample::select(&["touch x", "rm -f x", "echo x > f", "tee f", "mkdir d", "cp a b", "git commit -m x", "sed -i s/a/b/ f"][..]),
        ) {
            let (_d, w) = ws();
            let mut line = String::new();
            for (i, r) in readers.iter().enumerate() {
                if i > 0 {
                    line.push_str(seps[i]);
                }
                line.push_str(r);
            }
            line.push_str(last_sep);
            line.push_str(write);
            prop_assert!(!auto(&line, &w), "{:?}", line);
        }

        /// A reader given an option that writes or runs a program (quoted
        /// or not, anywhere among its arguments) is no reader.
        #[test]
        fn readers_with_options_that_act_are_not_readers(
            (program, danger) in proptest::sample::select(&[
                ("find .", "-delete"), ("find .", "-exec"), ("find .", "-execdir"), ("find .", "-fprint"),
                ("find .", "-fls"), ("find .", "-ok"), ("sed", "-i"), ("sed", "--in-place"),
                ("sort", "-o"), ("sort", "--output=x"), ("sort", "--compress-program=sh"),
                ("rg", "--pre=sh"), ("git", "-c"), ("git diff", "--output=x"), ("git log", "--output=x"),
                ("git", "--exec-path=."), ("tee", "x"),
            ][..]),
            before in proptest::collection::vec("[a-z.]{1,5}", 0..3),
            // Names of files, never of programs: what `find -exec` runs is
            // judged on its own (`find . -exec cat {} ;` only reads), so a
            // reader's name right after it makes a reader.
            after in proptest::collection::vec("[a-z]{1,4}\\.[a-z]{1,3}", 0..3),
            quote in any::<bool>(),
        ) {
            let (_d, w) = ws();
            let danger = if quote { quoted(danger) } else { danger.to_string() };
            let line = format!("{program} {} {danger} {} x", before.join(" "), after.join(" "));
            prop_assert!(!auto(&line, &w), "{:?}", line);
        }
    }
}
