//! Wrappers: programs that run the command in their arguments (`env`,
//! `timeout`, `nice`, `xargs`, `strace`, `taskset`, `flock`, `chroot`, …).
//! Lathe looks through them, so the wrapped command is judged, not the
//! wrapper. Each wrapper's options are skipped as the program reads them
//! (short letters combined or with attached values, long options
//! abbreviated), and what changes the wrapped command (an `env` variable,
//! `env -C DIR`, `env -S STRING`, `flock -c CODE`) is reported.

use crate::policy::options::{self, Arg, Scan, Value, is_long, operands_start};
use crate::protocol::operation::{Word, basename};

/// How a wrapper reads its options (in POSIX order: what follows its
/// operands is the wrapped command's), and how many operands come
/// before the command (`timeout DURATION`, `taskset MASK`).
struct Spec {
    options: options::Spec<'static>,
    fixed: usize,
}

const fn spec(short_val: &'static str, long_val: &'static [&'static str], fixed: usize) -> Spec {
    Spec {
        options: options::Spec {
            short_val,
            short_opt: "",
            long_val,
            posix: true,
            plus: false,
            single_dash: false,
        },
        fixed,
    }
}

/// A wrapper's own options, read as `spec` says from `start`, and where
/// its operands begin.
fn own_options<'a>(
    argv: &'a [Word],
    start: usize,
    spec: options::Spec<'_>,
) -> (Vec<Arg<'a>>, usize) {
    let args = argv.get(start..).unwrap_or_default();
    let mut own = Vec::new();
    for (i, a) in Scan::new(args, spec) {
        if a.is_operand() {
            return (own, start + i);
        }
        own.push(a);
    }
    (own, argv.len())
}

/// Whether any of `own` is one of the `short` letters or `long` options.
fn any_of(own: &[Arg<'_>], short: &str, long: &[&str]) -> bool {
    own.iter().any(|a| a.is(short, long))
}

fn spec_of(name: &str) -> Option<Spec> {
    Some(match name {
        "nice" => spec("n", &["adjustment"], 0),
        "nohup" | "builtin" | "setsid" | "catchsegv" | "unbuffer" | "chronic" | "coproc"
        | "linux32" | "linux64" | "eatmydata" | "nocache" => spec("", &[], 0),
        "timeout" => spec("sk", &["signal", "kill-after"], 1),
        "time" => spec("fo", &["format", "output"], 0),
        "stdbuf" => spec("ioe", &["input", "output", "error"], 0),
        "ionice" => spec("cn", &["class", "classdata"], 0),
        "command" => spec("", &[], 0),
        "exec" => spec("a", &[], 0),
        "taskset" => spec("", &[], 1),
        "chrt" => spec("T", &["sched-runtime", "sched-period", "sched-deadline"], 1),
        "flock" => spec("wE", &["timeout", "wait", "conflict-exit-code"], 1),
        "strace" | "ltrace" => spec(
            "abeEIoOpPsSuUX",
            &["output", "expr", "attach", "user", "env", "trace-path"],
            0,
        ),
        "chroot" => spec("", &["userspec", "groups"], 1),
        "unshare" => spec("SGRwlt", &["setuid", "setgid", "root", "wd"], 0),
        // The namespaces' letters take a file only attached (`-m/proc/1/ns/mnt`).
        "nsenter" => {
            let mut s = spec("tSG", &["target", "setuid", "setgid"], 0);
            s.options.short_opt = "muinpCUTrwW";
            s
        }
        "setpriv" => spec(
            "",
            &[
                "reuid",
                "regid",
                "groups",
                "inh-caps",
                "ambient-caps",
                "bounding-set",
                "securebits",
                "selinux-label",
                "apparmor-profile",
                "reset-env",
            ],
            0,
        ),
        "systemd-run" => spec(
            "pEuHMd",
            &[
                "unit",
                "property",
                "description",
                "slice",
                "setenv",
                "uid",
                "gid",
                "working-directory",
                "host",
                "machine",
            ],
            0,
        ),
        "firejail" | "valgrind" => spec("", &[], 0),
        "fakeroot" => spec("lsi", &["lib", "faked"], 0),
        // `--eof`, `--replace`, `--max-lines` take a value only as `=value`.
        // `-e[EOF]`, `-i[R]`, `-l[N]` take a value only attached.
        "xargs" => {
            let mut s = spec(
                "adEILnPs",
                &[
                    "arg-file",
                    "delimiter",
                    "max-args",
                    "max-procs",
                    "max-chars",
                    "process-slot-var",
                ],
                0,
            );
            s.options.short_opt = "eil";
            s
        }
        // Each limit's letter takes a value only attached (`-n1024`).
        "prlimit" => {
            let mut s = spec("op", &["output", "pid"], 0);
            s.options.short_opt = "acdefilmnqrstuvxy";
            s
        }
        _ => return None,
    })
}

/// Skips a wrapper's options from `start`; returns where its operands begin.
pub(super) fn skip_options(
    argv: &[Word],
    start: usize,
    short_val: &str,
    long_val: &[&str],
) -> usize {
    let args = argv.get(start..).unwrap_or_default();
    start + operands_start(args, options::Spec::posix(short_val, long_val))
}

/// What one wrapper hides.
#[derive(Debug, Default)]
pub(super) struct Unwrapped {
    /// Where the wrapped command starts, or `None`: not a wrapper here.
    pub(super) next: Option<usize>,
    /// The wrapper feeds arguments from its input (`xargs`).
    pub(super) extra_args: bool,
    /// `env -C DIR`.
    pub(super) chdir: Option<Word>,
    /// `env -S STRING`, split into words, to run instead.
    pub(super) split: Option<Vec<Word>>,
    /// `env NAME=value`.
    pub(super) assignments: Vec<(String, Word)>,
    /// Shell code the wrapper runs (`flock FILE -c CODE`).
    pub(super) code: Option<Word>,
    /// `xargs -I STR`: where each input item goes.
    pub(super) replace: Option<String>,
}

/// Whether `name` is a wrapper Lathe looks through.
pub(crate) fn is_wrapper(name: &str) -> bool {
    matches!(
        name,
        "env"
            | "command"
            | "ionice"
            | "taskset"
            | "strace"
            | "ltrace"
            | "flock"
            | "gdb"
            | "perf"
            | "busybox"
            | "setarch"
    ) || spec_of(name).is_some()
}

/// Unwraps the wrapper at `argv[at]`, if it is one.
pub(super) fn unwrap_one(argv: &[Word], at: usize) -> Unwrapped {
    let mut u = Unwrapped::default();
    let Some(w) = argv.get(at).filter(|w| w.is_plain()) else {
        return u;
    };
    let start = at + 1;
    let name = basename(&w.text);
    u.next = match name {
        "env" => return unwrap_env(argv, start),
        "command" => {
            let (own, i) = own_options(argv, start, options::Spec::posix("", &[]));
            (!any_of(&own, "vV", &[])).then_some(i)
        }
        // `-p`, `-P`, `-u` name processes to change: no command.
        "ionice" => {
            let spec = options::Spec::posix("cn", &["class", "classdata"]);
            let (own, i) = own_options(argv, start, spec);
            (!any_of(&own, "pPu", &["pid", "pgid", "uid"])).then_some(i)
        }
        "taskset" => {
            let (own, i) = own_options(argv, start, options::Spec::posix("", &[]));
            (!any_of(&own, "p", &["pid"])).then_some(i + 1)
        }
        // `-o |CMD` (or `!CMD`) pipes the trace to a shell command; the
        // traced command runs either way (`-p` too).
        "strace" | "ltrace" => {
            let Some(s) = spec_of(name) else {
                return u;
            };
            let (own, i) = own_options(argv, start, s.options);
            u.code = own
                .iter()
                .filter(|a| a.is("o", &["output"]))
                .filter_map(|a| a.value().and_then(Value::word))
                .find_map(|w| {
                    let code = w.text.strip_prefix(['|', '!'])?.to_string();
                    Some(Word { text: code, ..w })
                });
            Some(i)
        }
        // `--pid` changes a running process's limits: no command.
        "prlimit" => {
            let Some(s) = spec_of(name) else {
                return u;
            };
            let (own, i) = own_options(argv, start, s.options);
            (!any_of(&own, "p", &["pid"])).then_some(i)
        }
        "flock" => {
            let i = skip_options(
                argv,
                start,
                "wE",
                &["timeout", "wait", "conflict-exit-code"],
            );
            // `flock FILE -c CODE` runs a shell string.
            let rest = argv.get(i + 1..).unwrap_or_default();
            if let Some(c) = rest
                .iter()
                .position(|a| a.text == "-c" || is_long(&a.text, "command"))
            {
                u.code = rest.get(c + 1).cloned();
                return Unwrapped { next: None, ..u };
            }
            Some(i + 1)
        }
        // `setarch ARCH [options] COMMAND`: the arch comes first.
        "setarch" => Some(skip_options(argv, start + 1, "", &[])),
        "gdb" => argv.iter().position(|a| a.text == "--args").map(|p| p + 1),
        "perf" => perf_command(argv, start),
        "busybox" => argv
            .get(start)
            .filter(|a| !a.text.starts_with('-'))
            .map(|_| start),
        "numactl" => Some(skip_options(
            argv,
            start,
            "CNmpPi",
            &[
                "physcpubind",
                "cpunodebind",
                "membind",
                "preferred",
                "interleave",
            ],
        )),
        // Language tools that run any command: `uv run`, `bundle exec`, …
        "uv" | "poetry" | "pipenv" | "pdm" | "rye" | "hatch" | "devbox"
            if argv.get(start).is_some_and(|a| a.text == "run") =>
        {
            Some(skip_options(
                argv,
                start + 1,
                "",
                &["with", "python", "project", "directory", "env"],
            ))
        }
        "bundle" | "pyenv" | "rbenv" | "nodenv" | "goenv" | "jenv" | "asdf" | "mise" | "rtx"
        | "pnpm" | "yarn" | "npm" | "bun"
            if argv
                .get(start)
                .is_some_and(|a| a.text == "exec" || a.text == "x")
                && !argv[start..]
                    .iter()
                    .any(|a| a.text == "-c" || is_long(&a.text, "call")) =>
        {
            Some(skip_options(argv, start + 1, "", &["package", "call"]))
        }
        "conda" | "micromamba" | "mamba" if argv.get(start).is_some_and(|a| a.text == "run") => {
            Some(skip_options(argv, start + 1, "np", &["name", "prefix"]))
        }
        "direnv" if argv.get(start).is_some_and(|a| a.text == "exec") => Some(start + 2),
        _ => {
            let Some(s) = spec_of(name) else {
                return u;
            };
            let (own, i) = own_options(argv, start, s.options);
            if name == "xargs" {
                u.extra_args = true;
                u.replace = xargs_replace(&own);
            }
            Some(i + s.fixed)
        }
    };
    u
}

/// What `xargs -I R` (or `-i[R]`, `--replace[=R]`) replaces in its
/// command with each input: the last one given.
fn xargs_replace(own: &[Arg<'_>]) -> Option<String> {
    own.iter().rev().find_map(|a| {
        let value = a.value().and_then(Value::text);
        if a.is("I", &[]) {
            value.map(str::to_string)
        } else if a.is("i", &["replace"]) {
            Some(value.unwrap_or("{}").to_string())
        } else {
            None
        }
    })
}

/// Where the command of `perf stat|record|trace` starts.
fn perf_command(argv: &[Word], start: usize) -> Option<usize> {
    match argv.get(start).map(|a| a.text.as_str()) {
        Some("stat" | "record" | "trace") => Some(skip_options(
            argv,
            start + 1,
            "eoptCGcFIrm",
            &["event", "output", "pid", "tid", "cpu", "cgroup"],
        )),
        _ => None,
    }
}

/// `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=value]… COMMAND`
/// (GNU env reads its options in POSIX order).
fn unwrap_env(argv: &[Word], start: usize) -> Unwrapped {
    let mut u = Unwrapped::default();
    let args = argv.get(start..).unwrap_or_default();
    let spec = options::Spec::posix("CSu", &["chdir", "split-string", "unset"]);
    for (i, arg) in Scan::new(args, spec) {
        let at = start + i;
        match arg {
            Arg::Short { .. } | Arg::Long { .. } => {
                let value = arg.value();
                if arg.is("S", &["split-string"]) {
                    let words = value.and_then(Value::word).map(|v| split_words(&v));
                    u.split = Some(words.unwrap_or_default());
                    u.next = Some(at + 1 + usize::from(value.is_some_and(Value::is_next)));
                    return u;
                }
                if arg.is("C", &["chdir"]) {
                    u.chdir = value.and_then(Value::word);
                }
            }
            // `-` is `-i`.
            Arg::Operand(w) if !w.dynamic && w.text == "-" => {}
            // Every word with a `=` is an assignment to env (`1=1` too:
            // it is no command).
            Arg::Operand(w) if !w.dynamic && !w.text.starts_with('=') && w.text.contains('=') => {
                let (name, value) = assignment(&w.text)
                    .or_else(|| w.text.split_once('='))
                    .unwrap_or_default();
                u.assignments.push((name.to_string(), Word::literal(value)));
            }
            Arg::Operand(w) if !w.dynamic => {
                u.next = Some(at);
                return u;
            }
            // Known only when it runs: the command starts here.
            Arg::Operand(_) | Arg::Dynamic(_) => {
                u.next = Some(at);
                return u;
            }
        }
    }
    u.next = Some(argv.len());
    u
}

/// `env -S` and `watch` take one string and split it into words.
pub(super) fn split_words(w: &Word) -> Vec<Word> {
    if w.dynamic {
        return vec![w.clone()];
    }
    match shlex::split(&w.text) {
        Some(parts) if !parts.is_empty() => parts.into_iter().map(Word::literal).collect(),
        _ => vec![Word {
            dynamic: true,
            known_prefix: 0,
            ..w.clone()
        }],
    }
}

/// `NAME=value`, split.
fn assignment(t: &str) -> Option<(&str, &str)> {
    t.split_once('=').filter(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<Word> {
        s.split(' ').map(Word::literal).collect()
    }

    fn next_of(line: &str) -> Option<usize> {
        unwrap_one(&w(line), 0).next
    }

    #[test]
    fn wrappers_are_looked_through_whatever_their_options() {
        assert_eq!(next_of("timeout -s KILL 5 rm x"), Some(4));
        assert_eq!(next_of("taskset 1 rm x"), Some(2));
        assert_eq!(next_of("taskset -p 1 4242"), None);
        assert_eq!(next_of("setarch x86_64 -R sudo id"), Some(3));
        assert_eq!(next_of("strace -f -o /dev/null rm x"), Some(4));
        assert_eq!(next_of("flock /tmp/l rm x"), Some(2));
        assert_eq!(next_of("chroot --userspec=a / sudo"), Some(3));
        assert_eq!(next_of("nice -n5 rm x"), Some(2));
        let u = unwrap_one(&w("env -vS sudo_id"), 0);
        assert_eq!(u.split.unwrap()[0].text, "sudo_id");
        let u = unwrap_one(&w("env --ch=/etc cat shadow"), 0);
        assert_eq!(u.chdir.unwrap().text, "/etc");
        assert_eq!(u.next, Some(2));
        let u = unwrap_one(&w("env -C/etc cat"), 0);
        assert_eq!(u.chdir.unwrap().text, "/etc");
        let u = unwrap_one(&w("env RUSTC_WRAPPER=./evil cargo test"), 0);
        assert_eq!(u.assignments[0].0, "RUSTC_WRAPPER");
        assert_eq!(u.next, Some(2));
        let u = unwrap_one(&w("flock /tmp/l -c sudo"), 0);
        assert_eq!(u.code.unwrap().text, "sudo");
    }
}
