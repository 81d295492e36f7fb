//! Interpreters (shells, python, node, perl, ruby, …): where each gets the
//! program it runs. Inline code (`sh -c`, `python3 -c`, `node -e`) is
//! read as bash reads it: `-c` may sit in a cluster (`bash -lc`), options
//! that take a value are skipped with their value, `--` ends the options,
//! and `-`, `/dev/stdin` and friends mean standard input.

use crate::policy::options::{self, Arg, Scan, Value};
use crate::protocol::operation::Word;

/// Shells: `-c STRING` runs a string; without a script they read stdin.
pub(crate) const SHELLS: &[&str] = &[
    "sh", "bash", "rbash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash",
    "posh",
];

/// Paths that name a process's standard input (`-` as an operand too).
pub(crate) const STDIN_PATHS: &[&str] = &["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"];

/// Whether `t` names standard input, however it is spelled
/// (`/dev//stdin`, `/dev/./stdin`, `-`).
pub(crate) fn is_stdin_path(t: &str) -> bool {
    if t == "-" {
        return true;
    }
    let p = crate::policy::shell::lexical_join(std::path::Path::new("/"), t);
    let s = p.to_string_lossy();
    STDIN_PATHS.contains(&s.as_ref())
        || (s.starts_with("/proc/") && s.ends_with("/fd/0") && s.matches('/').count() == 4)
}

/// Where an interpreter gets its program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// Inline code (`-c CODE`); `None` when the code operand is missing
    /// (it comes from `xargs`, or the call fails).
    Inline(Option<Word>),
    /// A script file.
    Script(Word),
    /// A module (`python3 -m pytest`).
    Module(Word),
    /// Standard input.
    Stdin,
}

/// How one interpreter reads its options.
struct Spec {
    /// Short options that take the program as their value (`-c`, `-e`).
    code_short: &'static str,
    code_long: &'static [&'static str],
    /// For shells, `-c` makes the first operand the code.
    code_is_operand: bool,
    module_short: Option<char>,
    /// Short and long options that take some other value.
    value_short: &'static str,
    value_long: &'static [&'static str],
    /// A short option that means "read standard input" (`sh -s`).
    stdin_short: Option<char>,
    /// A short option whose value is the script (`php -f FILE`).
    script_short: Option<char>,
}

fn spec_of(base: &str) -> Option<Spec> {
    let none: &'static [&'static str] = &[];
    let s = |code_short, code_long, value_short, value_long| Spec {
        code_short,
        code_long,
        code_is_operand: false,
        module_short: None,
        value_short,
        value_long,
        stdin_short: None,
        script_short: None,
    };
    if SHELLS.contains(&base) {
        return Some(Spec {
            code_is_operand: true,
            stdin_short: Some('s'),
            ..s("c", none, "oO", &["rcfile", "init-file"])
        });
    }
    Some(match base {
        b if b.starts_with("python") || b.starts_with("pypy") => Spec {
            module_short: Some('m'),
            ..s("c", none, "WX", &["check-hash-based-pycs"])
        },
        "perl" => s("eE", none, "", none),
        "ruby" => s("e", none, "rICE", &["encoding"]),
        "node" | "nodejs" => s(
            "ep",
            &["eval", "print"],
            "rC",
            &[
                "require",
                "import",
                "loader",
                "experimental-loader",
                "input-type",
                "conditions",
            ],
        ),
        "php" => Spec {
            script_short: Some('f'),
            ..s("r", none, "cdz", none)
        },
        "lua" => s("e", none, "l", none),
        "Rscript" | "osascript" => s("e", none, "", none),
        "tclsh" | "wish" => s("", none, "", none),
        _ => return None,
    })
}

/// bash's long options, read with one dash as with two.
const BASH_LONGS: &[&str] = &[
    "debug",
    "debugger",
    "dump-po-strings",
    "dump-strings",
    "help",
    "init-file",
    "login",
    "noediting",
    "noprofile",
    "norc",
    "posix",
    "pretty-print",
    "protected",
    "rcfile",
    "restricted",
    "verbose",
    "version",
    "wordexp",
];

/// `w`, a shell's argument: `-rcfile` as `--rcfile` (what bash reads).
fn bash_long(w: &Word, long_val: &[&str]) -> Word {
    match w.text.strip_prefix('-') {
        Some(name)
            if !w.dynamic
                && !name.starts_with('-')
                && (BASH_LONGS.contains(&name) || long_val.contains(&name)) =>
        {
            Word {
                text: format!("-{}", w.text),
                ..w.clone()
            }
        }
        _ => w.clone(),
    }
}

/// Whether a word after `at` gives the program's code as an option
/// (`-c`, `-e`, `--eval`), literally.
fn gives_code_later(args: &[Word], at: usize, spec: &Spec) -> bool {
    args.get(at + 1..).unwrap_or_default().iter().any(|w| {
        let t = w.text.as_str();
        !w.dynamic
            && match t.strip_prefix("--") {
                Some(long) => spec
                    .code_long
                    .iter()
                    .any(|l| options::is_long(&format!("--{long}"), l)),
                None => {
                    t.len() > 1
                        && t.starts_with('-')
                        && t[1..].chars().any(|c| spec.code_short.contains(c))
                }
            }
    })
}

/// Where the interpreter `base` run with `args` gets its program; `None`
/// when `base` is not an interpreter.
pub(crate) fn source_of(base: &str, args: &[Word]) -> Option<Source> {
    let spec = spec_of(base)?;
    // Every option that takes a value, the program's own included (the
    // shells' `-c` takes none: it makes the first operand the code).
    let mut short_val = spec.value_short.to_string();
    short_val.extend(spec.module_short);
    short_val.extend(spec.script_short);
    if !spec.code_is_operand {
        short_val.push_str(spec.code_short);
    }
    let long_val: Vec<&str> = spec
        .value_long
        .iter()
        .chain(spec.code_long)
        .copied()
        .collect();
    let reading = options::Spec {
        short_val: &short_val,
        long_val: &long_val,
        posix: true,
        plus: spec.code_is_operand,
        ..options::Spec::default()
    };
    // bash reads its long options with one dash too (`-rcfile F`,
    // `-restricted`).
    let shell = SHELLS.contains(&base);
    let owned: Vec<Word>;
    let args = if shell {
        owned = args.iter().map(|w| bash_long(w, &long_val)).collect();
        &owned[..]
    } else {
        args
    };
    let mut code_pending = false;
    let mut i = args.len();
    for (at, arg) in Scan::new(args, reading) {
        let code = || arg.value().and_then(Value::word);
        match arg {
            // A shell's `-` ends its options, as `--` does: the script,
            // or the code of `-c`, comes next.
            Arg::Operand(w) if shell && w.text == "-" && !w.dynamic => {
                i = at + 1;
                break;
            }
            Arg::Operand(w) if w.text == "-" && !w.dynamic => return Some(Source::Stdin),
            // A word known only when it runs, where an option could be,
            // before the code of `-c`: the code it ends up running is
            // unknown (`bash $X -c CODE`).
            Arg::Dynamic(w) if code_pending || gives_code_later(args, at, &spec) => {
                return Some(Source::Inline(Some(w.clone())));
            }
            Arg::Operand(_) | Arg::Dynamic(_) => {
                i = at;
                break;
            }
            Arg::Long { .. } if arg.is("", spec.code_long) => {
                return Some(Source::Inline(code()));
            }
            Arg::Long { .. } => {}
            Arg::Short { letter, .. } => {
                if spec.code_short.contains(letter) {
                    if !spec.code_is_operand {
                        return Some(Source::Inline(code()));
                    }
                    code_pending = true;
                } else if spec.module_short == Some(letter) {
                    return code().map(Source::Module);
                } else if spec.script_short == Some(letter) {
                    return code().map(Source::Script);
                } else if spec.stdin_short == Some(letter) && !code_pending {
                    return Some(Source::Stdin);
                }
            }
        }
    }
    if code_pending {
        return Some(Source::Inline(args.get(i).cloned()));
    }
    Some(match args.get(i) {
        Some(op) if is_stdin_path(&op.text) => Source::Stdin,
        Some(op) => Source::Script(op.clone()),
        None => Source::Stdin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(line: &str) -> Option<Source> {
        let words: Vec<Word> = line.split(' ').map(Word::literal).collect();
        source_of(&words[0].text.clone(), &words[1..])
    }

    fn inline(code: &str) -> Option<Source> {
        Some(Source::Inline(Some(Word::literal(code))))
    }

    #[test]
    fn interpreters_find_their_program_as_they_would() {
        assert_eq!(src("bash -lc x"), inline("x"));
        assert_eq!(src("bash -c -- x"), inline("x"));
        assert_eq!(src("sh -c"), Some(Source::Inline(None)));
        assert_eq!(src("bash --rcfile /dev/null"), Some(Source::Stdin));
        assert_eq!(src("bash /dev/stdin"), Some(Source::Stdin));
        assert_eq!(src("bash -s"), Some(Source::Stdin));
        assert_eq!(
            src("bash -o pipefail run.sh"),
            Some(Source::Script(Word::literal("run.sh")))
        );
        assert_eq!(src("python3 -W ignore"), Some(Source::Stdin));
        assert_eq!(
            src("python3 -u -m pytest"),
            Some(Source::Module(Word::literal("pytest")))
        );
        assert_eq!(src("python3 -cprint(1)"), inline("print(1)"));
        assert_eq!(
            src("python3 a.py"),
            Some(Source::Script(Word::literal("a.py")))
        );
        assert_eq!(src("node --eval=x"), inline("x"));
        assert_eq!(
            src("node -r ./hook.js app.js"),
            Some(Source::Script(Word::literal("app.js")))
        );
        assert_eq!(src("perl -e x"), inline("x"));
        assert_eq!(src("ls -la"), None);
    }

    /// bash as it reads its arguments: `-` ends the options (the code of
    /// `-c`, or the script, comes next), long options take one dash, and
    /// `-rcfile`'s value is no script.
    #[test]
    fn a_shell_reads_a_dash_and_its_one_dash_long_options() {
        let lit = |t: &str| Some(Source::Inline(Some(Word::literal(t))));
        assert_eq!(src("bash -c - x"), lit("x"));
        assert_eq!(
            src("bash - run.sh"),
            Some(Source::Script(Word::literal("run.sh")))
        );
        assert_eq!(src("bash -restricted -c x"), lit("x"));
        assert_eq!(src("bash -rcfile rc -c x"), lit("x"));
        assert_eq!(
            src("bash -init-file rc s.sh"),
            Some(Source::Script(Word::literal("s.sh")))
        );
        assert_eq!(src("python3 - x"), Some(Source::Stdin));
    }
}
