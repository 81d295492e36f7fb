//! Wrappers: programs that run the command in their arguments (`env`,
//! `timeout`, `nice`, `xargs`, `strace`, `taskset`, `flock`, `chroot`, …).
//! Lathe looks through them, so the wrapped command is judged, not the
//! wrapper. Each wrapper's options are skipped as the program reads them
//! (short letters combined or with attached values, long options
//! abbreviated), and what changes the wrapped command (an `env` variable,
//! `env -C DIR`, `env -S STRING`, `flock -c CODE`) is reported.

use crate::policy::options::is_long;
use crate::protocol::operation::{Word, basename};

/// How a wrapper reads its options.
struct Spec {
    /// Short options that take a value.
    short_val: &'static str,
    /// Long options that take a value (as `--x v`; `--x=v` is one word).
    long_val: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `taskset MASK`).
    fixed: usize,
}

const fn spec(short_val: &'static str, long_val: &'static [&'static str], fixed: usize) -> Spec {
    Spec {
        short_val,
        long_val,
        fixed,
    }
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
            "abeEIoOpPsSuUXAn",
            &["output", "expr", "attach", "user", "env", "trace-path"],
            0,
        ),
        "chroot" => spec("", &["userspec", "groups"], 1),
        "unshare" => spec("SGRwlt", &["setuid", "setgid", "root", "wd"], 0),
        "nsenter" => spec(
            "tSGwrLeNmupUCiTn",
            &["target", "setuid", "setgid", "wd", "root"],
            0,
        ),
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
        "xargs" => spec(
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
        ),
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
    let mut i = start;
    while let Some(w) = argv.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            return i + 1;
        }
        if !t.starts_with('-') || t == "-" || w.dynamic {
            return i;
        }
        if t.starts_with("--") {
            let takes_value = !t.contains('=') && long_val.iter().any(|l| is_long(t, l));
            i += if takes_value { 2 } else { 1 };
            continue;
        }
        // A short cluster: the first letter that takes a value takes the
        // rest of the cluster, or the next argument when nothing is left.
        let flags: Vec<char> = t.chars().skip(1).collect();
        let takes_next = flags
            .iter()
            .position(|c| short_val.contains(*c))
            .is_some_and(|k| k + 1 == flags.len());
        i += if takes_next { 2 } else { 1 };
    }
    i
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
pub(super) fn is_wrapper(name: &str) -> bool {
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
            let i = skip_options(argv, start, "", &[]);
            let query = argv[start..i.min(argv.len())]
                .iter()
                .any(|a| a.text.starts_with('-') && a.text.contains(['v', 'V']));
            (!query).then_some(i)
        }
        "ionice" => {
            let i = skip_options(argv, start, "cn", &["class", "classdata"]);
            let by_pid = argv[start..i.min(argv.len())]
                .iter()
                .any(|a| a.text.starts_with("-p") || is_long(&a.text, "pid"));
            (!by_pid).then_some(i)
        }
        "taskset" => {
            let i = skip_options(argv, start, "", &[]);
            let by_pid = argv[start..i.min(argv.len())].iter().any(|a| {
                (a.text.starts_with('-') && a.text.contains('p')) || is_long(&a.text, "pid")
            });
            (!by_pid).then_some(i + 1)
        }
        "strace" | "ltrace" if argv[start..].iter().any(|a| a.text.starts_with("-p")) => None,
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
        "prlimit"
            if !argv[start..]
                .iter()
                .any(|a| a.text.starts_with("-p") || is_long(&a.text, "pid")) =>
        {
            Some(skip_options(argv, start, "", &[]))
        }
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
            let i = skip_options(argv, start, s.short_val, s.long_val);
            if name == "xargs" {
                u.extra_args = true;
                let args = &argv[start..i.min(argv.len())];
                u.replace = xargs_replace(args);
            }
            Some(i + s.fixed)
        }
    };
    u
}

/// What `xargs -I R` (or `-i`, `--replace`) replaces in its command with
/// each input.
fn xargs_replace(args: &[Word]) -> Option<String> {
    crate::policy::options::option_values(args, 'I', "")
        .first()
        .map(|r| (*r).to_string())
        .or_else(|| {
            args.iter().find_map(|a| {
                let t = a.text.as_str();
                if let Some(v) = t.strip_prefix("--replace=") {
                    return Some(v.to_string());
                }
                (t == "--replace" || t.starts_with("-i")).then(|| {
                    t.strip_prefix("-i")
                        .filter(|v| !v.is_empty())
                        .unwrap_or("{}")
                        .to_string()
                })
            })
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

/// `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=value]… COMMAND`.
fn unwrap_env(argv: &[Word], start: usize) -> Unwrapped {
    let mut u = Unwrapped::default();
    let mut i = start;
    while let Some(a) = argv.get(i) {
        let t = a.text.as_str();
        if a.dynamic {
            break;
        }
        if t == "--" {
            i += 1;
            break;
        }
        if t.starts_with("--") {
            let value = |i: usize| match t.split_once('=') {
                Some((_, v)) => (Some(Word::literal(v)), i + 1),
                None => (argv.get(i + 1).cloned(), i + 2),
            };
            if is_long(t, "split-string") {
                let (v, next) = value(i);
                u.split = Some(v.map(|v| split_words(&v)).unwrap_or_default());
                u.next = Some(next);
                return u;
            }
            if is_long(t, "chdir") {
                let (v, next) = value(i);
                u.chdir = v;
                i = next;
            } else if is_long(t, "unset") {
                i = value(i).1;
            } else {
                i += 1;
            }
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            // A cluster: `-i`, `-vS STRING`, `-C/dir`, `-uNAME`.
            let body = &t[1..];
            let mut consumed_next = false;
            for (k, c) in body.char_indices() {
                let rest = &body[k + c.len_utf8()..];
                let value = || -> (Option<Word>, bool) {
                    if rest.is_empty() {
                        (argv.get(i + 1).cloned(), true)
                    } else {
                        (Some(Word::literal(rest)), false)
                    }
                };
                match c {
                    'S' => {
                        let (v, next) = value();
                        u.split = Some(v.map(|v| split_words(&v)).unwrap_or_default());
                        u.next = Some(i + 1 + usize::from(next));
                        return u;
                    }
                    'C' => {
                        let (v, next) = value();
                        u.chdir = v;
                        consumed_next = next;
                        break;
                    }
                    'u' => {
                        consumed_next = value().1;
                        break;
                    }
                    _ => {}
                }
            }
            i += 1 + usize::from(consumed_next);
            continue;
        }
        if let Some((name, value)) = assignment(t) {
            u.assignments.push((name.to_string(), Word::literal(value)));
            i += 1;
            continue;
        }
        break;
    }
    u.next = Some(i);
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
