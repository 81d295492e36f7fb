//! The built-in read-only commands: what runs without asking in `ask`
//! (and `read-only`) mode, so reading and searching a codebase never
//! prompts. A command qualifies only as a whole: a known program, named
//! bare and found on `PATH` outside the workspace (a `./ls` is not `ls`),
//! with arguments that cannot write or run anything (`find` without
//! `-exec`/`-delete`, `git` status/diff/log/show/blame without `--output`
//! or `-c`, `sort` without `-o`), path operands inside the workspace, and
//! no output redirection but to `/dev/null`.

use std::path::Path;

use super::operation::{Program, Redirect, SimpleCommand, Word};
use super::shell::lexical_join;
use super::workspace::Workspace;

/// Programs that print without reading files named in their arguments.
const NO_FILES: &[&str] = &[
    "echo", "printf", "true", "false", ":", "pwd", "whoami", "id", "uname", "seq", "basename",
    "dirname", "sleep", "test", "[", "[[", "nproc", "printenv", "tty", "uptime", "locale",
    "groups", "arch", "cd", "pushd", "popd", "which", "type", "date", "hostname", "env", "command",
];

/// Programs that read the files named in their arguments.
const READS_FILES: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "file",
    "stat",
    "du",
    "df",
    "tree",
    "realpath",
    "readlink",
    "nl",
    "cut",
    "tr",
    "uniq",
    "sort",
    "diff",
    "cmp",
    "comm",
    "column",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "find",
    "fd",
    "fdfind",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "base64",
    "xxd",
    "od",
    "hexdump",
    "strings",
    "jq",
    "tac",
    "rev",
    "fold",
    "fmt",
    "expand",
    "unexpand",
    "paste",
    "join",
    "git",
];

/// Wrappers that change nothing about what a command may do.
const QUIET_WRAPPERS: &[&str] = &["env", "timeout", "nice", "command", "stdbuf", "ionice"];

/// Whether `c` only reads, inside `workspace`.
pub fn is_read_only(c: &SimpleCommand, workspace: &Workspace) -> bool {
    if c.extra_args || c.redirects.iter().any(writes_file) {
        return false;
    }
    if c.wrappers
        .iter()
        .filter(|w| !w.text.starts_with('-'))
        .any(|w| is_wrapper_name(&w.text) && !QUIET_WRAPPERS.contains(&w.text.as_str()))
    {
        return false;
    }
    let name = c.name();
    let known_program = match &c.program {
        Program::Builtin { .. } => true,
        Program::Path { path, .. } => !name.contains('/') && !path.starts_with(workspace.root()),
        Program::NotFound { .. } | Program::Dynamic => false,
    };
    if !known_program {
        return false;
    }
    let base = c.basename();
    let args = c.args();
    if args.len() == 1 && args[0].text == "--version" && !args[0].dynamic {
        return true;
    }
    if NO_FILES.contains(&base) {
        return no_files_ok(base, args);
    }
    if !READS_FILES.contains(&base) || !arguments_ok(base, args) {
        return false;
    }
    paths_inside(c, args, workspace)
}

fn is_wrapper_name(t: &str) -> bool {
    matches!(
        t,
        "env"
            | "timeout"
            | "nice"
            | "command"
            | "stdbuf"
            | "ionice"
            | "nohup"
            | "xargs"
            | "setsid"
            | "exec"
            | "builtin"
            | "time"
            | "busybox"
    )
}

fn writes_file(r: &Redirect) -> bool {
    r.writes()
        && !matches!(
            r.target.as_str(),
            "/dev/null" | "/dev/stdout" | "/dev/stderr"
        )
}

fn no_files_ok(base: &str, args: &[Word]) -> bool {
    match base {
        "date" => !args.iter().any(|a| {
            a.text.starts_with("-s") || a.text.starts_with("--set") || a.text.starts_with("-f")
        }),
        "hostname" => args.is_empty(),
        // `env` and `command` that run something were unwrapped already;
        // what is left prints.
        "env" => args
            .iter()
            .all(|a| a.text.starts_with('-') || a.text.contains('=')),
        "command" => args
            .iter()
            .any(|a| a.text.starts_with('-') && a.text.contains(['v', 'V'])),
        _ => true,
    }
}

fn any_arg(args: &[Word], bad: &[&str]) -> bool {
    args.iter().any(|a| {
        bad.iter()
            .any(|b| a.text == *b || (b.starts_with("--") && a.text.starts_with(&format!("{b}="))))
    })
}

fn operands(args: &[Word]) -> usize {
    args.iter().filter(|a| !a.text.starts_with('-')).count()
}

fn arguments_ok(base: &str, args: &[Word]) -> bool {
    match base {
        "find" => !any_arg(
            args,
            &[
                "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0",
                "-fprintf",
            ],
        ),
        "rg" => !any_arg(
            args,
            &[
                "--pre",
                "--pre-glob",
                "--hostname-bin",
                "-z",
                "--search-zip",
            ],
        ),
        "fd" | "fdfind" => !any_arg(args, &["-x", "--exec", "-X", "--exec-batch"]),
        "sort" => !args.iter().any(|a| {
            a.text.starts_with("-o")
                || a.text.starts_with("--output")
                || a.text.starts_with("--compress-program")
        }),
        "tree" => !any_arg(args, &["-o"]),
        "uniq" | "xxd" => operands(args) <= 1,
        "git" => git_ok(args),
        _ => true,
    }
}

/// `git status/diff/log/show/blame/…` and listing forms of branch, tag,
/// remote, stash and config; no option that runs or writes anything.
fn git_ok(args: &[Word]) -> bool {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.text.as_str() {
            "--no-pager"
            | "-P"
            | "--no-optional-locks"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs" => i += 1,
            "-C" => i += 2,
            t if t.starts_with('-') => return false,
            _ => break,
        }
    }
    let Some(sub) = args.get(i).filter(|s| s.is_plain()) else {
        return false;
    };
    let rest = &args[i + 1..];
    if rest.iter().any(|a| a.dynamic)
        || any_arg(
            rest,
            &[
                "--output",
                "--ext-diff",
                "--textconv",
                "-O",
                "--open-files-in-pager",
                "--exec",
                "--upload-pack",
            ],
        )
    {
        return false;
    }
    let has = |flags: &[&str]| rest.iter().any(|a| flags.contains(&a.text.as_str()));
    match sub.text.as_str() {
        "status" | "diff" | "log" | "show" | "blame" | "annotate" | "shortlog" | "ls-files"
        | "ls-tree" | "rev-parse" | "rev-list" | "describe" | "grep" | "cat-file" | "show-ref"
        | "for-each-ref" | "merge-base" | "name-rev" | "count-objects" | "check-ignore"
        | "check-attr" | "diff-tree" | "diff-files" | "diff-index" | "whatchanged" | "version" => {
            true
        }
        "branch" => {
            let listing = has(&["-l", "--list"]);
            !has(&[
                "-d",
                "-D",
                "-m",
                "-M",
                "-c",
                "-C",
                "-f",
                "-u",
                "-t",
                "--delete",
                "--move",
                "--copy",
                "--force",
                "--set-upstream-to",
                "--unset-upstream",
                "--track",
                "--edit-description",
                "--create-reflog",
            ]) && (listing || operands(rest) == 0)
        }
        "tag" => {
            rest.is_empty()
                || (has(&["-l", "--list"])
                    && !has(&["-d", "--delete", "-a", "-s", "-u", "-f", "-m", "-F"]))
        }
        "remote" => rest
            .iter()
            .all(|a| matches!(a.text.as_str(), "-v" | "--verbose")),
        "stash" | "worktree" => matches!(rest.first().map(|a| a.text.as_str()), Some("list")),
        "reflog" => rest
            .first()
            .is_none_or(|a| a.text == "show" || a.text.starts_with('-')),
        "config" => {
            has(&[
                "--get",
                "--get-all",
                "--get-regexp",
                "--list",
                "-l",
                "--get-urlmatch",
            ]) && !has(&[
                "--add",
                "--unset",
                "--unset-all",
                "--replace-all",
                "--edit",
                "-e",
                "--rename-section",
                "--remove-section",
            ])
        }
        _ => false,
    }
}

/// Every path-like argument stays inside the workspace.
fn paths_inside(c: &SimpleCommand, args: &[Word], workspace: &Workspace) -> bool {
    let cwd = c.cwd.as_deref();
    args.iter().all(|a| {
        let t = a.text.as_str();
        if let Some(opt) = t.strip_prefix('-') {
            // `--file=PATH`: check the value; short flags carry no path.
            return match opt.split_once('=') {
                Some((_, v)) if looks_like_path(v) => {
                    !a.dynamic && inside(v, a.glob, cwd, workspace)
                }
                _ => !a.dynamic,
            };
        }
        !a.dynamic && inside(t, a.glob, cwd, workspace)
    })
}

fn looks_like_path(v: &str) -> bool {
    v.contains('/') || v.starts_with(['~', '.'])
}

fn inside(t: &str, glob: bool, cwd: Option<&Path>, workspace: &Workspace) -> bool {
    let literal = if glob {
        let cut = t.find(['*', '?', '[']).unwrap_or(t.len());
        match t[..cut].rfind('/') {
            Some(i) => &t[..=i],
            None => ".",
        }
    } else {
        t
    };
    let base = match cwd {
        Some(c) => c,
        None if literal.starts_with('/') => Path::new("/"),
        None => return false,
    };
    let joined = lexical_join(base, literal);
    workspace.check(&joined.to_string_lossy()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::shell::analyze;

    fn read_only(line: &str, w: &Workspace) -> bool {
        let op = analyze(line, w);
        !op.is_complex() && op.commands.iter().all(|c| is_read_only(c, w))
    }

    #[test]
    fn reads_and_searches_are_read_only() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("src")).unwrap();
        let w = Workspace::new(d.path()).unwrap();
        for line in [
            "ls -la",
            "ls src",
            "cat src/main.rs | head -n 20",
            "grep -rn TODO src/ 2>/dev/null",
            "find . -name '*.rs' -type f",
            "git status --short",
            "git diff HEAD~1 -- src",
            "git log --oneline -n 5",
            "git -C src blame main.rs",
            "git branch -a",
            "wc -l src/*.rs",
            "pwd && echo done",
            "cd src && ls",
            "cargo --version",
            "timeout 5 grep -c x src/a",
        ] {
            assert!(read_only(line, &w), "should be read-only: {line}");
        }
    }

    #[test]
    fn writes_runs_and_outside_reads_are_not() {
        let d = tempfile::tempdir().unwrap();
        let w = Workspace::new(d.path()).unwrap();
        std::fs::write(d.path().join("ls"), "#!/bin/sh\n").unwrap();
        for line in [
            "ls > listing.txt",
            "find . -delete",
            "find . -exec rm {} +",
            "sort -o out.txt in.txt",
            "git diff --output=patch",
            "git -c core.pager=x log",
            "git branch -D main",
            "git push",
            "git config user.name x",
            "cat /etc/passwd",
            "cat ../secret",
            "cat ~/.ssh/id_rsa",
            "grep -r key $HOME",
            "ls $(pwd)",
            "xargs cat",
            "nohup ls",
            "./ls",
            "rg --pre ./run x",
            "cargo build",
            "rm x",
        ] {
            assert!(!read_only(line, &w), "should not be read-only: {line}");
        }
    }

    #[test]
    fn a_symlink_out_of_the_workspace_is_outside() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("link")).unwrap();
        let w = Workspace::new(d.path()).unwrap();
        assert!(!read_only("cat link/secret", &w));
    }
}
