//! File roles: which arguments of the programs Lathe knows are files they
//! read and which files they write, and where `find` starts and what it
//! filters on.

use std::path::Path;

use super::interpreters::{Source, source_of};
use crate::policy::options::{has_option, operands, option_values};
use crate::protocol::operation::Word;

/// Programs that name no files in their arguments.
const NO_FILE_ARGS: &[&str] = &[
    "echo", "printf", "true", "false", ":", "pwd", "test", "[", "[[", "cd", "pushd", "popd",
    "export", "declare", "local", "readonly", "typeset", "unset", "read", "type", "which",
    "command", "hash", "alias", "unalias", "sleep", "seq", "basename", "dirname", "id", "whoami",
    "uname", "hostname", "nproc", "kill", "pkill", "killall", "wait", "jobs", "exit", "return",
    "shift", "set", "shopt", "trap", "eval", "let", "env", "printenv", "expr", "yes",
];

/// Programs whose operands are all files they read.
pub(crate) const READERS: &[&str] = &[
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
    "diff",
    "cmp",
    "comm",
    "column",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "base64",
    "od",
    "hexdump",
    "strings",
    "tac",
    "rev",
    "fold",
    "fmt",
    "expand",
    "unexpand",
    "paste",
    "join",
    "ls",
    "less",
    "more",
    "bat",
    "zcat",
    "bzcat",
    "xzcat",
    "source",
    ".",
    "date",
];

/// Programs whose operands are all files they write (or remove).
const WRITERS: &[&str] = &[
    "touch", "mkdir", "rmdir", "rm", "shred", "truncate", "tee", "patch",
];

/// Whether Lathe knows which of `base`'s arguments are files it reads or
/// writes (they become file operations).
pub(crate) fn knows_file_roles(base: &str, args: &[Word]) -> bool {
    file_roles(base, args).is_some()
}

/// The files `base` reads and writes among `args`, for the programs Lathe
/// knows; `None` for the others.
pub(super) fn file_roles(base: &str, args: &[Word]) -> Option<(Vec<Word>, Vec<Word>)> {
    let ops: Vec<Word> = operands(args).into_iter().cloned().collect();
    let values = |short: char, long: &str| -> Vec<Word> {
        option_values(args, short, long)
            .into_iter()
            .map(Word::literal)
            .collect()
    };
    let rest = |n: usize| ops.get(n..).unwrap_or_default().to_vec();
    Some(match base {
        b if NO_FILE_ARGS.contains(&b) => (Vec::new(), Vec::new()),
        "date" => {
            let mut reads = values('f', "file");
            reads.extend(values('r', "reference"));
            (reads, Vec::new())
        }
        b if READERS.contains(&b) => {
            // `wc --files0-from=F` reads F (and the files it lists).
            let mut reads = ops;
            reads.extend(values('\0', "files0-from"));
            (reads, Vec::new())
        }
        b if WRITERS.contains(&b) => (Vec::new(), ops),
        "sort" => (ops, values('o', "output")),
        "uniq" | "xxd" => (rest(0).into_iter().take(1).collect(), rest(1)),
        "grep" | "egrep" | "fgrep" | "rg" | "ag" | "jq" => {
            let explicit = has_option(args, "ef", &["regexp", "file", "from-file"]);
            let mut reads = if explicit { ops } else { rest(1) };
            reads.extend(values('f', "file"));
            (reads, Vec::new())
        }
        "sed" => {
            let explicit = has_option(args, "ef", &["expression", "file"]);
            let files = if explicit { ops } else { rest(1) };
            let mut reads = files.clone();
            reads.extend(values('f', "file"));
            let writes = if has_option(args, "i", &["in-place"]) {
                files
            } else {
                Vec::new()
            };
            (reads, writes)
        }
        "awk" | "gawk" | "mawk" | "nawk" => {
            let explicit = has_option(args, "f", &["file"]);
            let writes = if explicit {
                Vec::new()
            } else {
                ops.first()
                    .map(|p| awk_print_targets(&p.text))
                    .unwrap_or_default()
            };
            let files = if explicit { ops } else { rest(1) };
            let mut reads: Vec<Word> = files
                .into_iter()
                .filter(|w| !w.text.contains('='))
                .collect();
            reads.extend(values('f', "file"));
            (reads, writes)
        }
        "find" => {
            let starts = find_starts(args).unwrap_or_default();
            if args.iter().any(|a| a.text == "-delete") {
                (Vec::new(), starts)
            } else {
                (starts, Vec::new())
            }
        }
        "cp" | "mv" | "install" | "ln" | "rsync" | "scp" => {
            let target = values('t', "target-directory");
            let (sources, dest) = if target.is_empty() {
                match ops.split_last() {
                    Some((d, s)) => (s.to_vec(), vec![d.clone()]),
                    None => (Vec::new(), Vec::new()),
                }
            } else {
                (ops, target)
            };
            let mut writes = dest;
            if base == "mv" {
                writes.extend(sources.iter().cloned());
            }
            (sources, writes)
        }
        "dd" => (
            args.iter()
                .filter_map(|a| a.text.strip_prefix("if=").map(Word::literal))
                .collect(),
            args.iter()
                .filter_map(|a| a.text.strip_prefix("of=").map(Word::literal))
                .collect(),
        ),
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => {
            let skip = usize::from(!has_option(args, "", &["reference"]));
            (Vec::new(), rest(skip))
        }
        b => match source_of(b, args) {
            Some(Source::Script(script)) => (vec![script], Vec::new()),
            _ => return None,
        },
    })
}

/// The files an awk program prints into by name (`print x > "out"`).
fn awk_print_targets(program: &str) -> Vec<Word> {
    static TARGET: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"\bprintf?\b[^;}\n]*?>>?\s*"([^"\\]+)""#).ok()
    });
    let Some(re) = TARGET.as_ref() else {
        return Vec::new();
    };
    re.captures_iter(program)
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str())
        .filter(|t| !matches!(*t, "/dev/stdout" | "/dev/stderr"))
        .map(Word::literal)
        .collect()
}

/// The work-tree files a git command names and overwrites or removes:
/// the paths of `checkout`/`restore` (after `--`, or that exist), `rm`,
/// `mv`, `clean` and `stash push -- …`.
pub(super) fn git_worktree_writes(args: &[Word], cwd: &Path) -> Vec<Word> {
    const WITH_VALUE: &[&str] = &["-C", "-c", "--git-dir", "--work-tree", "--namespace"];
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if WITH_VALUE.contains(&a.text.as_str()) {
            i += 2;
        } else if a.text.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    let Some(sub) = args.get(i) else {
        return Vec::new();
    };
    let rest = &args[i + 1..];
    let after_dashes = || -> Vec<Word> {
        rest.iter()
            .position(|a| a.text == "--")
            .map(|p| rest[p + 1..].to_vec())
            .unwrap_or_default()
    };
    let exists = |w: &&Word| !w.dynamic && std::fs::symlink_metadata(cwd.join(&w.text)).is_ok();
    match sub.text.as_str() {
        "checkout" | "restore" => {
            let mut paths = after_dashes();
            if paths.is_empty() {
                paths = operands(rest).into_iter().filter(exists).cloned().collect();
            }
            paths
        }
        "rm" | "mv" | "clean" => operands(rest).into_iter().cloned().collect(),
        "stash" => after_dashes(),
        _ => Vec::new(),
    }
}

/// The values an argument carries: itself, the value of `--opt=value`,
/// the path attached to a short option (`-o/tmp/x`), without a leading `@`
/// (`curl -F f=@file`).
fn values_of(t: &str) -> Vec<&str> {
    let mut out = Vec::new();
    if let Some(long) = t.strip_prefix("--") {
        if let Some((_, v)) = long.split_once('=') {
            out.push(v);
        }
    } else if t.len() > 1 && t.starts_with('-') {
        if let Some(at) = t.find(['/', '.']).filter(|&i| i >= 2) {
            out.push(&t[at..]);
        }
    } else {
        out.push(t);
        if let Some((_, v)) = t.split_once('=') {
            out.push(v);
        }
    }
    out.into_iter()
        .map(|v| v.trim_start_matches('@'))
        .filter(|v| !v.is_empty())
        .collect()
}

/// The arguments (or their values) that name something existing in `cwd`.
pub(super) fn existing_files(args: &[Word], cwd: &Path) -> Vec<Word> {
    args.iter()
        .filter(|a| !a.dynamic && !a.glob)
        .flat_map(|a| values_of(&a.text))
        .filter(|v| std::fs::symlink_metadata(cwd.join(v)).is_ok())
        .map(Word::literal)
        .collect()
}

/// What looks like a path among a program's arguments (and option
/// values): absolute, or climbing out with `..` anywhere.
pub(super) fn path_like(args: &[Word]) -> Vec<Word> {
    let looks = |t: &str| t.starts_with('/') || t.split('/').any(|c| c == "..");
    args.iter()
        .flat_map(|a| {
            values_of(&a.text)
                .into_iter()
                .filter(|v| looks(v))
                .map(|v| Word {
                    text: v.to_string(),
                    ..a.clone()
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The start points of `find`, after its leading options (`-H -L -P -D
/// … -O…`, `--`); `.` when none; `None` when they come from a file
/// (`-files0-from`).
pub(crate) fn find_starts(args: &[Word]) -> Option<Vec<Word>> {
    if args
        .iter()
        .any(|a| a.text == "-files0-from" || a.text.starts_with("-files0-from="))
    {
        return None;
    }
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.text.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            "--" => {
                i += 1;
                break;
            }
            t if t.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let starts: Vec<Word> = args[i.min(args.len())..]
        .iter()
        .take_while(|a| !a.text.starts_with(['-', '(', '!']) || a.dynamic)
        .cloned()
        .collect();
    Some(if starts.is_empty() {
        vec![Word::literal(".")]
    } else {
        starts
    })
}

/// Option values as words, dynamic when the argument they came from is.
pub(super) fn words_of(values: Vec<&str>, args: &[Word]) -> Vec<Word> {
    values
        .into_iter()
        .map(|v| {
            let dynamic = args.iter().any(|a| a.dynamic && a.text.contains(v));
            Word {
                dynamic,
                known_prefix: if dynamic { 0 } else { v.len() },
                ..Word::literal(v)
            }
        })
        .collect()
}

/// Whether a `find` expression has a test that narrows what it finds
/// (`-name '*.pyc'`, `-type d`, `-newer f`); `-name '*'` does not.
pub(crate) fn find_filters(args: &[Word]) -> bool {
    const TESTS: &[&str] = &[
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-lname",
        "-ilname",
        "-type",
        "-xtype",
        "-newer",
        "-anewer",
        "-cnewer",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-size",
        "-perm",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-nouser",
        "-nogroup",
        "-empty",
        "-links",
        "-inum",
        "-samefile",
        "-used",
        "-executable",
        "-readable",
        "-writable",
        "-fstype",
        "-newermt",
    ];
    args.iter().enumerate().any(|(i, a)| {
        TESTS.contains(&a.text.as_str())
            && args.get(i + 1).is_none_or(|v| {
                !(matches!(
                    a.text.as_str(),
                    "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-regex"
                ) && v.text.chars().all(|c| matches!(c, '*' | '.' | '/')))
            })
    })
}

/// The words a builtin takes as variable names: where bash evaluates an
/// array element's subscript. Options that take a name (`read -a`,
/// `wait -p`, `mapfile -t ARRAY`) leave it among the operands.
pub(super) fn variable_names<'a>(base: &str, args: &'a [Word]) -> Vec<&'a str> {
    let all = || operands(args).into_iter().map(|a| a.text.as_str());
    match base {
        "read" | "mapfile" | "readarray" | "wait" | "getopts" | "unset" | "select" => {
            all().collect()
        }
        // `declare 'a[$(…)]=1'`: the name before the value.
        "declare" | "typeset" | "local" | "export" | "readonly" => all()
            .map(|t| t.split_once('=').map_or(t, |(name, _)| name))
            .collect(),
        "printf" => option_values(args, 'v', ""),
        _ => Vec::new(),
    }
}
