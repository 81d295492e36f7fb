//! The built-in read-only commands: what runs without asking in `ask`
//! (and `read-only`) mode, so reading and searching a codebase never
//! prompts. A command qualifies only as a whole: a known program, named
//! bare and found on `PATH` outside the workspace (a `./ls` is not `ls`),
//! with arguments that cannot write or run anything (`find` without
//! `-delete`, its `-exec` command read-only itself; `git` status/diff/log/
//! show/blame without `--output` or `-c`; `sort` without `-o`; `sed -n`
//! printing), path operands inside the workspace, and no output
//! redirection but to `/dev/null`. Options are read as the programs read
//! them: `-uo` has `-o`, `--outp` is `--output`, `-f/etc/x` names a file.

use super::options::{Arg, Scan, Spec, gives_option, has_option, operands, operands_start};
use super::shell::{READERS, path_inside};
use super::workspace::Workspace;
use crate::protocol::operation::{Program, Redirect, SimpleCommand, Word};

/// Programs that print without reading files named in their arguments.
const NO_FILES: &[&str] = &[
    "echo", "printf", "true", "false", ":", "pwd", "whoami", "id", "uname", "seq", "basename",
    "dirname", "sleep", "test", "[", "[[", "nproc", "printenv", "tty", "uptime", "locale",
    "groups", "arch", "cd", "pushd", "popd", "which", "type", "hostname", "env", "command", "read",
    "shift", "return", "exit", "wait", "break", "continue",
];

/// Programs that only read the files they name: the shell analysis's
/// plain readers, but for those that run code or wait for a person, and
/// the searchers and filters whose options are checked below.
fn reads_files(base: &str) -> bool {
    const ALSO: &[&str] = &[
        "uniq", "sort", "grep", "egrep", "fgrep", "rg", "find", "fd", "fdfind", "xxd", "jq", "git",
        "sed", "awk",
    ];
    const NOT: &[&str] = &["source", ".", "less", "more", "bat"];
    ALSO.contains(&base) || (READERS.contains(&base) && !NOT.contains(&base))
}

/// Wrappers that change nothing about what a command may do.
const QUIET_WRAPPERS: &[&str] = &[
    "env", "timeout", "nice", "command", "stdbuf", "ionice", "taskset", "chrt", "setarch",
    "linux32", "linux64",
];

/// Whether `c` only reads, inside `workspace`.
pub fn is_read_only(c: &SimpleCommand, workspace: &Workspace) -> bool {
    reads_only(c, workspace, false)
}

/// Whether `c` only reads, wherever its paths are (`cat /etc/hostname`):
/// what asks about it is the reading outside, not the command.
pub fn only_reads(c: &SimpleCommand, workspace: &Workspace) -> bool {
    reads_only(c, workspace, true)
}

fn reads_only(c: &SimpleCommand, workspace: &Workspace, anywhere: bool) -> bool {
    if c.extra_args || c.redirects.iter().any(writes_file) {
        return false;
    }
    // Only variables that change how text looks, not what runs.
    let harmless = |a: &String| {
        let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
        name.starts_with("LC_")
            || matches!(
                name,
                "LANG"
                    | "LANGUAGE"
                    | "TZ"
                    | "COLUMNS"
                    | "LINES"
                    | "NO_COLOR"
                    | "CLICOLOR"
                    | "CLICOLOR_FORCE"
                    | "TERM"
                    | "GREP_COLOR"
                    | "GREP_COLORS"
            )
    };
    if !c.assignments.iter().all(harmless) {
        return false;
    }
    if c.wrappers
        .iter()
        .filter(|w| !w.text.starts_with('-'))
        .any(|w| {
            let name = crate::protocol::operation::basename(&w.text);
            super::shell::is_wrapper(name) && !QUIET_WRAPPERS.contains(&name)
        })
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
    // Run from a directory outside the workspace, every relative path is.
    if !anywhere
        && c.cwd
            .as_deref()
            .is_some_and(|d| workspace.check(&d.to_string_lossy()).is_err())
    {
        return false;
    }
    let base = c.basename();
    let args = c.args();
    if let [only] = args
        && !only.dynamic
        && (only.text == "--version" || short_version(base, &only.text))
    {
        return true;
    }
    // File names read from a file or standard input are unknown.
    if args.iter().any(|a| a.text.contains("files0-from")) {
        return false;
    }
    if NO_FILES.contains(&base) {
        return no_files_ok(base, args);
    }
    // In a directory known only at run time, no relative path is known.
    if c.cwd.is_none() {
        return false;
    }
    if !reads_files(base) || !arguments_ok(base, args) {
        return false;
    }
    // git's reading commands run what the repository's configuration
    // names (an fsmonitor, an external diff, a filter): judged by it.
    if base == "git" {
        let dir = c.cwd.as_deref().unwrap_or(workspace.root());
        // `git -C other status` reads the other repository's.
        let elsewhere = args
            .windows(2)
            .filter(|w| w[0].text == "-C")
            .map(|w| dir.join(&w[1].text));
        if std::iter::once(dir.to_path_buf())
            .chain(elsewhere)
            .any(|d| !crate::sandbox::reader_traps(&d).is_empty())
        {
            return false;
        }
    }
    // The pattern or script of grep, sed, awk and jq is not a path.
    let script_first = matches!(
        base,
        "grep" | "egrep" | "fgrep" | "rg" | "sed" | "awk" | "jq"
    ) && !has_option(args, "ef", &["regexp", "expression", "file", "from-file"]);
    let script = script_first
        .then(|| operands(args).first().map(|w| w.text.clone()))
        .flatten();
    let mut skipped = false;
    let paths: Vec<Word> = args
        .iter()
        .filter(|a| {
            let is_script = !skipped && script.as_deref() == Some(a.text.as_str());
            skipped |= is_script;
            !is_script
        })
        .cloned()
        .collect();
    anywhere || paths_inside(c, &paths, workspace)
}

fn writes_file(r: &Redirect) -> bool {
    r.writes()
        && !matches!(
            r.target.as_str(),
            "/dev/null" | "/dev/stdout" | "/dev/stderr"
        )
}

/// `node -v`, `go version`, `java -version`: the version query of a
/// program known to only print it (a shell's `-v` reads its input).
fn short_version(base: &str, arg: &str) -> bool {
    let name = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    match arg {
        "-v" => matches!(
            name,
            "node"
                | "npm"
                | "npx"
                | "yarn"
                | "pnpm"
                | "bun"
                | "deno"
                | "gcc"
                | "g++"
                | "clang"
                | "make"
                | "ruby"
                | "php"
                | "perl"
        ),
        "-V" => matches!(
            name,
            "python" | "rustc" | "cargo" | "rustup" | "uv" | "poetry" | "pip" | "pip3"
        ),
        "version" => matches!(name, "go" | "terraform" | "helm" | "dotnet"),
        "-version" => matches!(name, "java" | "javac" | "ffmpeg"),
        _ => false,
    }
}

fn no_files_ok(base: &str, args: &[Word]) -> bool {
    match base {
        "hostname" => args.is_empty(),
        // `env` and `command` that run something were unwrapped already;
        // what is left prints.
        "env" => Scan::new(
            args,
            Spec::posix("uCS", &["unset", "chdir", "split-string"]),
        )
        .all(|(_, a)| match a {
            Arg::Operand(w) => !w.dynamic && w.text.contains('='),
            Arg::Dynamic(_) => false,
            Arg::Short { .. } | Arg::Long { .. } => true,
        }),
        // Only a query (`-v`, `-V`) among its own options prints.
        "command" => Scan::new(args, Spec::posix("", &[]))
            .take_while(|(_, a)| !a.is_operand())
            .any(|(_, a)| a.is("vV", &[])),
        "printf" => !has_option(args, "v", &[]),
        _ => true,
    }
}

fn arguments_ok(base: &str, args: &[Word]) -> bool {
    match base {
        // `-exec` runs a command of its own, judged on its own.
        "find" => !args.iter().any(|a| {
            matches!(
                a.text.as_str(),
                "-delete" | "-fls" | "-fprint" | "-fprint0" | "-fprintf" | "-ok" | "-okdir"
            )
        }),
        "rg" => !has_option(
            args,
            "z",
            &["pre", "pre-glob", "hostname-bin", "search-zip"],
        ),
        "fd" | "fdfind" => !has_option(args, "xX", &["exec", "exec-batch"]),
        "sort" => !has_option(
            args,
            "oT",
            &["output", "compress-program", "temporary-directory"],
        ),
        "tree" => !has_option(args, "o", &[]),
        "uniq" | "xxd" => operands(args).len() <= 1,
        "date" => date_ok(args),
        "sed" => sed_ok(args),
        "awk" => awk_ok(args),
        // `file -C` compiles magic files into `NAME.mgc`.
        "file" => !has_option(args, "C", &["compile"]),
        "git" => git_ok(args),
        _ => true,
    }
}

/// `date` that prints: not `-s`/`--set`, no operand that sets the clock.
fn date_ok(args: &[Word]) -> bool {
    // `-d`, `-f`, `-r` (and `-s`) take a value; `-I` an attached one only.
    let reading = Spec {
        short_val: "dfrs",
        short_opt: "I",
        long_val: &["date", "file", "reference", "set"],
        ..Spec::default()
    };
    Scan::new(args, reading).all(|(_, a)| match a {
        a if a.is("s", &["set"]) => false,
        Arg::Short { .. } | Arg::Long { .. } => true,
        // An operand that is not a format sets the clock (and a word
        // known only when it runs may be `-s`).
        Arg::Operand(w) | Arg::Dynamic(w) => w.text.starts_with('+'),
    })
}

/// `sed -n '1,20p'`, `sed '/TODO/p'`, `sed 's/a/b/g' file`: scripts
/// that only print, delete from the output or substitute; no `-i`, no
/// script file, no `w`, `W`, `e`, `r`, `R` commands or flags.
fn sed_ok(args: &[Word]) -> bool {
    if has_option(args, "ifs", &["in-place", "file", "separate"]) || args.iter().any(|a| a.dynamic)
    {
        return false;
    }
    let scripts: Vec<&str> = {
        let e = super::options::option_values(args, 'e', "expression");
        if e.is_empty() {
            operands(args)
                .first()
                .map(|w| w.text.as_str())
                .into_iter()
                .collect()
        } else {
            e
        }
    };
    !scripts.is_empty() && scripts.iter().all(|s| sed_script_ok(s))
}

/// A sed script, command by command (`;` or newline between them).
fn sed_script_ok(script: &str) -> bool {
    let mut rest = script.trim();
    while !rest.is_empty() {
        if let Some(closed) = rest.strip_prefix('}') {
            rest = closed.trim_start().trim_start_matches(';').trim_start();
            continue;
        }
        let Some(after) = sed_address(rest).and_then(|r| {
            let r = r.trim_start();
            match r.strip_prefix(',') {
                Some(more) => sed_address(more.trim_start()),
                None => Some(r),
            }
        }) else {
            return false;
        };
        let after = after
            .trim_start()
            .strip_prefix('!')
            .unwrap_or(after)
            .trim_start();
        let Some(cmd) = after.chars().next() else {
            return false;
        };
        if cmd == '{' {
            // A block: its commands follow, up to `}`.
            rest = after[1..].trim_start();
            continue;
        }
        let tail = match cmd {
            'p' | 'd' | '=' | 'q' | 'n' | 'N' | 'P' | 'D' | 'g' | 'G' | 'h' | 'H' | 'x' => {
                &after[1..]
            }
            's' => match substitution_end(after) {
                Some(end) => &after[end..],
                None => return false,
            },
            _ => return false,
        };
        let tail = tail.trim_start();
        rest = match tail.chars().next() {
            None => "",
            Some(';' | '\n') => tail[1..].trim_start(),
            Some('}') => tail[1..].trim_start().trim_start_matches(';').trim_start(),
            _ => return false,
        };
    }
    true
}

/// An optional address at the start of `t`: a line number, `$`, or
/// `/regex/`; returns what follows.
fn sed_address(t: &str) -> Option<&str> {
    if let Some(body) = t.strip_prefix('/') {
        let mut escaped = false;
        for (i, c) in body.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '/' if !escaped => return Some(&body[i + 1..]),
                _ => escaped = false,
            }
        }
        return None;
    }
    let digits = t.len()
        - t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '$')
            .len();
    Some(&t[digits..])
}

/// Where `s/from/to/flags` ends, when its flags are safe (`g`, `i`, `I`,
/// `p`, digits: no `w` or `e`).
fn substitution_end(t: &str) -> Option<usize> {
    let mut chars = t.char_indices().skip(1);
    let (_, delim) = chars.next()?;
    if delim.is_alphanumeric() || delim == '\\' || delim == '\n' {
        return None;
    }
    let mut parts = 0;
    let mut escaped = false;
    for (i, c) in chars {
        if escaped {
            escaped = false;
            continue;
        }
        if c == '\\' {
            escaped = true;
        } else if c == delim {
            parts += 1;
            if parts == 2 {
                let flags_start = i + c.len_utf8();
                let flags_len = t[flags_start..]
                    .find(|c: char| !(matches!(c, 'g' | 'i' | 'I' | 'p') || c.is_ascii_digit()))
                    .unwrap_or(t.len() - flags_start);
                let next = t[flags_start + flags_len..].chars().next();
                return matches!(next, None | Some(';' | '\n' | '}' | ' '))
                    .then_some(flags_start + flags_len);
            }
        }
    }
    None
}

/// `awk '{print $1}' file`, `awk -F, 'NR>1 {print $2}'`: no program file,
/// no `system`, `getline`, pipes, output redirection, `ENVIRON` or `ARGV`.
fn awk_ok(args: &[Word]) -> bool {
    if has_option(
        args,
        "fWiElSe",
        &["file", "exec", "load", "include", "source", "sandbox"],
    ) || args.iter().any(|a| a.dynamic)
    {
        return false;
    }
    // The program is the first operand: gawk's options (in POSIX order)
    // skipped with their values, however written (`-v x=1`, `-bF,`,
    // `--ass x=1`).
    let reading = Spec {
        short_val: "FfvWeEilZ",
        short_opt: "dDLop",
        long_val: &[
            "assign",
            "field-separator",
            "file",
            "exec",
            "include",
            "load",
            "source",
        ],
        posix: true,
        ..Spec::default()
    };
    let i = operands_start(args, reading);
    let Some(program) = args.get(i).map(|w| w.text.as_str()) else {
        return false;
    };
    // Printing to the standard streams writes no file (when nothing is
    // concatenated to the name).
    static STREAMS: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#">\s*"/dev/std(?:err|out)"(\s*(?:[;}\n]|$))"#).ok()
    });
    let program = match STREAMS.as_ref() {
        Some(re) => re.replace_all(program, "$1").into_owned(),
        None => program.to_string(),
    };
    let code = strip_awk_strings(&program);
    let bad = [
        "system", "getline", "close", "fflush", "ENVIRON", "ARGV", "PROCINFO", "@",
    ];
    if bad.iter().any(|b| code.contains(b)) || code.replace("||", "").contains('|') {
        return false;
    }
    !awk_print_redirects(&code)
}

/// Whether a `print` or `printf` statement of an awk program (its
/// strings blanked) may write a file: a `>` at the statement's own level
/// (inside parentheses it compares), or anything the scan does not fully
/// understand (an unclosed regex, unbalanced parentheses). Regex literals
/// and comments are read past; a statement goes on over a line break
/// after `,`, `{`, `&&`, `||` or `\`.
fn awk_print_redirects(code: &str) -> bool {
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    // The last character that was not blank: what a `/` follows decides
    // whether it divides or opens a regex.
    let mut prev: Option<char> = None;
    let mut in_print = false;
    let mut depth = 0i32;
    while let Some(&c) = chars.get(i) {
        match c {
            '#' => {
                while chars.get(i).is_some_and(|c| *c != '\n') {
                    i += 1;
                }
                continue;
            }
            '/' if matches!(
                prev,
                None | Some(
                    '(' | ','
                        | '!'
                        | '~'
                        | '{'
                        | '}'
                        | ';'
                        | '&'
                        | '|'
                        | '='
                        | '?'
                        | ':'
                        | '['
                        | '\n'
                        | '<'
                        | '>'
                )
            ) =>
            {
                // A regex: to its closing `/` (not escaped, not in a class).
                let mut j = i + 1;
                let mut class = false;
                loop {
                    match chars.get(j) {
                        None | Some('\n') => return true,
                        Some('\\') => j += 1,
                        Some('[') => class = true,
                        Some(']') => class = false,
                        Some('/') if !class => break,
                        _ => {}
                    }
                    j += 1;
                }
                i = j + 1;
                prev = Some('r');
                continue;
            }
            '(' | '[' => depth += 1,
            ')' | ']' => {
                depth -= 1;
                if depth < 0 {
                    return true;
                }
            }
            '>' if in_print && depth == 0 => return true,
            ';' | '{' | '}' if depth == 0 => in_print = false,
            '\n' if depth == 0 && !matches!(prev, Some(',' | '{' | '&' | '|' | '\\')) => {
                in_print = false;
            }
            _ if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                if word == "print" || word == "printf" {
                    in_print = true;
                }
                prev = Some('a');
                continue;
            }
            _ => {}
        }
        if !c.is_whitespace() || c == '\n' {
            prev = Some(c);
        }
        i += 1;
    }
    depth != 0
}

/// An awk program with its string literals blanked (`"a>b"` is not a
/// redirection).
fn strip_awk_strings(program: &str) -> String {
    let mut out = String::with_capacity(program.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in program.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
                out.push('"');
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    out
}

// Options that put branch and tag in list mode (operands are patterns);
// `--sort` and `--format` only shape a listing and do not make one.
const LISTING: &[&str] = &[
    "list",
    "contains",
    "no-contains",
    "merged",
    "no-merged",
    "points-at",
    "show-current",
];

/// Whether branch's or tag's options (`short` letters, or a listing's long
/// ones) put it in list mode, read as git does: `--sort -l` is a sort
/// key, not `-l`.
fn lists(rest: &[Word], short: &str) -> bool {
    let values = Spec::gnu(
        "",
        &[
            "contains",
            "no-contains",
            "points-at",
            "sort",
            "format",
            "column",
        ],
    );
    Scan::new(rest, values).any(|(_, a)| a.is(short, LISTING))
}

/// `git branch` and `git tag` that only list (no operand, or list mode,
/// whose operands are patterns).
fn git_lists(sub: &str, rest: &[Word], ops: &[&Word]) -> bool {
    match sub {
        "branch" => {
            !has_option(
                rest,
                "dDmMcCfut",
                &[
                    "delete",
                    "move",
                    "copy",
                    "force",
                    "set-upstream-to",
                    "unset-upstream",
                    "track",
                    "no-track",
                    "edit-description",
                    "create-reflog",
                ],
            ) && (lists(rest, "lar")
                || gives_option(rest, "", &["all", "remotes"])
                || ops.is_empty())
        }
        "tag" => {
            !has_option(
                rest,
                "dasufmFe",
                &[
                    "delete",
                    "annotate",
                    "sign",
                    "local-user",
                    "force",
                    "message",
                    "file",
                    "edit",
                ],
            ) && (lists(rest, "l") || ops.is_empty())
        }
        _ => false,
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
    if rest.iter().any(|a| a.dynamic && !a.bounded)
        || has_option(
            rest,
            "",
            &[
                "output",
                "ext-diff",
                "textconv",
                "open-files-in-pager",
                "exec",
                "upload-pack",
            ],
        )
    {
        return false;
    }
    let ops = operands(rest);
    match sub.text.as_str() {
        "status" | "diff" | "log" | "show" | "blame" | "annotate" | "shortlog" | "ls-files"
        | "ls-tree" | "rev-parse" | "rev-list" | "describe" | "cat-file" | "show-ref"
        | "for-each-ref" | "merge-base" | "name-rev" | "count-objects" | "check-ignore"
        | "check-attr" | "diff-tree" | "diff-files" | "diff-index" | "whatchanged" | "version" => {
            true
        }
        "grep" => !has_option(rest, "O", &["open-files-in-pager"]),
        "branch" | "tag" => git_lists(&sub.text, rest, &ops),
        "remote" => matches!(ops.first().map(|w| w.text.as_str()), None | Some("get-url")),
        "stash" => matches!(ops.first().map(|w| w.text.as_str()), Some("list" | "show")),
        "worktree" => matches!(ops.first().map(|w| w.text.as_str()), Some("list")),
        "reflog" => !matches!(
            ops.first().map(|w| w.text.as_str()),
            Some("expire" | "delete" | "drop")
        ),
        "config" => {
            !has_option(
                rest,
                "fe",
                &[
                    "global",
                    "system",
                    "file",
                    "blob",
                    "add",
                    "unset",
                    "unset-all",
                    "replace-all",
                    "edit",
                    "rename-section",
                    "remove-section",
                ],
            ) && (gives_option(
                rest,
                "l",
                &["get", "get-all", "get-regexp", "list", "get-urlmatch"],
            ) || ops.len() == 1)
        }
        _ => false,
    }
}

/// Every path-like argument stays inside the workspace, including the
/// value of an option (`--file=x`, `-f/etc/x`).
fn paths_inside(c: &SimpleCommand, args: &[Word], workspace: &Workspace) -> bool {
    let cwd = c.cwd.as_deref();
    let mut options_done = false;
    args.iter().all(|a| {
        let t = a.text.as_str();
        if a.dynamic {
            // `<(sort a)` is a pipe from a command judged on its own.
            let pipe = t.starts_with("<(") && t.ends_with(')');
            return a.bounded || pipe;
        }
        if !options_done && t == "--" {
            options_done = true;
            return true;
        }
        if !options_done && t.starts_with('-') && t.len() > 1 {
            let value = match t.split_once('=') {
                Some((_, v)) => v,
                None => t.find(['/', '~']).map_or("", |i| &t[i..]),
            };
            return !looks_like_path(value) || path_inside(value, a.glob, cwd, workspace);
        }
        path_inside(t, a.glob, cwd, workspace)
    })
}

fn looks_like_path(v: &str) -> bool {
    v.contains('/') || v.starts_with(['~', '.'])
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

    /// awk reads its options as getopt_long does: an abbreviated long
    /// option takes its value from the next word (`--ass x=1` is
    /// `--assign x=1`), so the program is the word after; read otherwise,
    /// `x=1` would pass for the program and the real one go unjudged.
    #[test]
    fn awk_options_are_read_as_awk_reads_them() {
        let d = tempfile::tempdir().unwrap();
        let w = Workspace::new(d.path()).unwrap();
        for line in [
            r#"awk --ass x=1 'BEGIN{system("touch p")}'"#,
            r#"awk --field-sep , 'BEGIN{system("touch p")}'"#,
            r#"awk --assign x=1 'BEGIN{system("touch p")}'"#,
            r#"awk -v x=1 'BEGIN{system("touch p")}'"#,
            r#"awk -F , 'BEGIN{system("touch p")}'"#,
            r#"awk -bF , 'BEGIN{system("touch p")}'"#,
        ] {
            assert!(!read_only(line, &w), "{line}");
        }
        for line in [
            "awk --ass x=1 '{print x}' notes.txt",
            "awk -F, '{print $2}' notes.txt",
            "awk -bF , '{print $2}' notes.txt",
        ] {
            assert!(read_only(line, &w), "{line}");
        }
    }
}
