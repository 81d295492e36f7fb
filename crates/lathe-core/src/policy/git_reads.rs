//! What git may print while a read deny rule is in force. git keeps every
//! version of every file in its object store, which no mount or Landlock
//! rule can cover file by file, so its commands are judged here instead,
//! by what they are known to print: a command that prints no file's
//! content runs; one that may (`show`, `diff`, `log -p`, `grep`, `blame`,
//! `archive`, an interactive `add -p`) runs only when its pathspecs,
//! after `--`, name nothing covered; one that reaches objects by id
//! (`cat-file`, `unpack-file`, `fast-export`, `update-index`, a hex id
//! given to `show` or `diff`) does not run. Anything not known (a
//! subcommand this list lacks, an alias, a `-c` setting, a `GIT_`
//! variable, an argument computed at run time) is refused: an unknown
//! command is judged as the worst it could be.

use super::guardrails::ReadDenials;
use super::shell::lexical_join;
use crate::protocol::operation::SimpleCommand;

/// Subcommands that print no file's content whatever their options.
const NAMES_ONLY: &[&str] = &[
    "status",
    "branch",
    "remote",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "ls-remote",
    "describe",
    "fetch",
    "pull",
    "push",
    "init",
    "switch",
    "merge",
    "rebase",
    "cherry-pick",
    "revert",
    "show-ref",
    "for-each-ref",
    "count-objects",
    "rev-list",
    "version",
    "help",
    "rm",
    "clean",
    "gc",
    "fsck",
    "symbolic-ref",
    "merge-base",
    "name-rev",
    "check-ignore",
    "check-attr",
    "cherry",
    "shortlog",
    "config",
    "tag",
    "mv",
    "maintenance",
    "prune",
    "repack",
];

/// Subcommands that may name objects by id: they take commits only (a
/// blob or a tree named there is an error), or print ids and names.
const COMMITS_BY_ID: &[&str] = &[
    "rev-parse",
    "rev-list",
    "describe",
    "merge-base",
    "name-rev",
    "ls-tree",
    "cherry",
    "log",
    "reflog",
    "whatchanged",
    "status",
    "merge",
    "rebase",
    "cherry-pick",
    "revert",
    "reset",
    "switch",
];

/// Subcommands that print a hunk when asked to (`-p`, `-i`, `-e`).
const INTERACTIVE: &[&str] = &["add", "reset", "restore", "checkout", "stash", "commit"];

/// Subcommands that print commits, and file content only with a patch.
const HISTORY: &[&str] = &["log", "reflog", "whatchanged"];

/// Subcommands that print file content unless told to print names only.
const DIFFS: &[&str] = &["show", "diff", "diff-tree", "diff-index", "diff-files"];

/// Subcommands that print file content whatever their options.
const CONTENT: &[&str] = &[
    "grep",
    "blame",
    "annotate",
    "archive",
    "format-patch",
    "range-diff",
];

/// Global options (before the subcommand) that change nothing read.
const PLAIN_GLOBALS: &[&str] = &[
    "--no-pager",
    "-P",
    "--no-optional-locks",
    "--no-replace-objects",
    "--literal-pathspecs",
    "--no-advice",
];

/// Options that make `show` and `diff` print names or numbers instead
/// of the patch.
const NO_PATCH: &[&str] = &[
    "--stat",
    "--name-only",
    "--name-status",
    "--shortstat",
    "--numstat",
    "--summary",
    "--quiet",
    "--exit-code",
    "--dirstat",
    "-s",
    "--no-patch",
    "--raw",
];

/// Options of `show`, `diff` and `log` that print only names, numbers,
/// ids or messages: what a command of theirs takes without pathspecs. Any
/// other option (`-p`, `-U3`, `--word-diff`, `-S`, `--check`, one git
/// adds next year) may print content, and needs them.
const NAMES: &[&str] = &[
    "--oneline",
    "--graph",
    "--decorate",
    "--no-decorate",
    "--all",
    "--branches",
    "--tags",
    "--remotes",
    "-n",
    "--max-count",
    "--skip",
    "--since",
    "--after",
    "--until",
    "--before",
    "--author",
    "--committer",
    "--grep",
    "--all-match",
    "--invert-grep",
    "-i",
    "--regexp-ignore-case",
    "--format",
    "--pretty",
    "--reverse",
    "--first-parent",
    "--no-merges",
    "--merges",
    "--date",
    "--abbrev-commit",
    "--no-abbrev-commit",
    "--abbrev",
    "--no-abbrev",
    "--color",
    "--no-color",
    "--left-right",
    "--cherry-pick",
    "--boundary",
    "--topo-order",
    "--date-order",
    "--author-date-order",
    "--relative-date",
    "--no-renames",
    "--find-renames",
    "-M",
    "--cached",
    "--staged",
    "--no-ext-diff",
    "--no-textconv",
    "--walk-reflogs",
    "-g",
    "--follow",
    "--max-parents",
    "--min-parents",
    "--no-walk",
    "--show-signature",
];

/// Why git's command `c` may not run while read rules are in force, or
/// `None` when it prints nothing they cover.
pub(crate) fn judge(c: &SimpleCommand, reads: &ReadDenials) -> Option<String> {
    if c.basename() != "git" || !reads.active() {
        return None;
    }
    if c.extra_args || c.args().iter().any(|a| a.dynamic) {
        return Some("takes arguments only known when it runs".into());
    }
    if let Some(var) = c.assignments.iter().find(|a| a.starts_with("GIT_")) {
        return Some(format!(
            "runs with {var} set, which can change what it prints"
        ));
    }
    let args: Vec<&str> = c.args().iter().map(|w| w.text.as_str()).collect();
    // Each argument that names a covered file (`REV:PATH`, `--file=F`,
    // a plain path), whatever the subcommand.
    if let Some(why) = args.iter().find_map(|a| names_covered(a, c, reads)) {
        return Some(why);
    }
    let sub_at = args.iter().position(|a| !a.starts_with('-'))?;
    if let Some(g) = args[..sub_at].iter().find(|g| !PLAIN_GLOBALS.contains(g)) {
        return Some(format!(
            "uses the global option `{g}`, which can change what it prints"
        ));
    }
    let sub = args[sub_at];
    let rest = &args[sub_at + 1..];
    let has = |flags: &[&str]| {
        rest.iter()
            .take_while(|a| **a != "--")
            .any(|a| flags.iter().any(|f| flag_is(a, f)))
    };
    // Any option not known to print names only (a bare count, `-5`, is
    // one of those).
    let patches = rest
        .iter()
        .take_while(|a| **a != "--")
        .any(|a| a.starts_with('-') && !prints_names_only(a));
    // An object named by id (as an argument or an option's value) may be
    // a file's content or a tree of covered files (`git grep x <tree>`,
    // `git archive <tree>`, `git config --blob=<id>`): only the commands
    // that take commits alone, or print ids and names, may name one.
    let hex = rest
        .iter()
        .take_while(|a| **a != "--")
        .map(|a| {
            a.split_once('=')
                .filter(|_| a.starts_with("--"))
                .map_or(*a, |(_, v)| v)
        })
        .find(|a| is_object_id(a));
    if let Some(id) = hex
        && !COMMITS_BY_ID.contains(&sub)
    {
        return Some(format!(
            "names the object {id} by id, which may be a file's content; name commits by \
             their refs (`HEAD~2`, a branch) or use `git log -p <id> -- <paths>`"
        ));
    }
    if sub == "config"
        && rest
            .iter()
            .any(|a| *a == "--blob" || a.starts_with("--blob="))
    {
        return Some("reads a configuration out of the object store (`--blob`)".into());
    }
    let needs_pathspecs = if NAMES_ONLY.contains(&sub) {
        false
    } else if INTERACTIVE.contains(&sub) {
        has(&["-p", "--patch", "-i", "--interactive", "-e", "--edit"])
            || (sub == "stash" && rest.first() == Some(&"show") && (patches || !has(NO_PATCH)))
    } else if HISTORY.contains(&sub) {
        patches
    } else if DIFFS.contains(&sub) {
        // `show REV:PATH` prints that one file (its path judged above).
        let files_only = sub == "show" && {
            let mut objects = rest.iter().filter(|a| !a.starts_with('-')).peekable();
            objects.peek().is_some() && objects.all(|a| a.contains(':'))
        };
        !files_only && (patches || !has(NO_PATCH))
    } else if CONTENT.contains(&sub) {
        true
    } else {
        return Some(format!(
            "`{sub}` is not a git command Lathe knows to print no file's content (an alias, a \
             plumbing command that reads objects by id)"
        ));
    };
    if !needs_pathspecs {
        return None;
    }
    pathspecs_clear(sub, rest, c, reads)
}

/// Whether option `a` of `log`, `show` or `diff` prints only names,
/// numbers, ids or messages: a count (`-5`, `-n5`), or one of [`NAMES`]
/// and [`NO_PATCH`] exactly or with its value after `=` (no cluster of
/// letters is read as the allowed ones: `-Gsecret` is not `-s`).
fn prints_names_only(a: &str) -> bool {
    let count = |digits: &str| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    a.strip_prefix('-').is_some_and(count)
        || a.strip_prefix("-n").is_some_and(count)
        || NAMES
            .iter()
            .chain(NO_PATCH)
            .any(|f| a == *f || a.starts_with(&format!("{f}=")))
}

/// Why a line that runs git may not, whatever its git commands: a `GIT_`
/// variable set anywhere on it (`export GIT_ICASE_PATHSPECS=1; git log
/// -p -- PRIVATE`), which git reads from the environment.
pub(crate) fn line_sets_git_variables(
    commands: &[SimpleCommand],
    reads: &ReadDenials,
) -> Option<String> {
    if !reads.active() || !commands.iter().any(|c| c.basename() == "git") {
        return None;
    }
    commands
        .iter()
        .flat_map(|c| {
            c.argv
                .iter()
                .chain(&c.wrappers)
                .map(|w| w.text.as_str())
                .chain(c.assignments.iter().map(String::as_str))
        })
        .find(|w| w.contains("GIT_") && w.contains('='))
        .map(|w| format!("sets `{w}` for git, which can change what it prints"))
}

/// Whether argument `a` is flag `f`: itself, `f=value`, a short flag with
/// its value joined (`-U5` is not `-u`), or one letter of a cluster
/// (`-pW`).
fn flag_is(a: &str, f: &str) -> bool {
    if a == f || a.starts_with(&format!("{f}=")) {
        return true;
    }
    // A cluster of short flags: git's diff options take none joined
    // except the numeric ones (`-U3`, `-M50%`), so letters are flags.
    if let (Some(letter), Some(cluster)) = (f.strip_prefix('-'), a.strip_prefix('-'))
        && letter.len() == 1
        && !cluster.starts_with('-')
        && cluster.chars().all(|ch| ch.is_ascii_alphabetic())
    {
        return cluster.contains(letter);
    }
    false
}

/// An object named by its id (`1a2b3c4`, `1a2b3c4^`, `1a2b3c4~2`): what
/// it is (a commit, or a file's content) cannot be told from the name.
fn is_object_id(a: &str) -> bool {
    let id = a
        .split(['^', '~', '.', ':'])
        .find(|p| !p.is_empty())
        .unwrap_or_default();
    id.len() >= 4 && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Why argument `a` names a covered file: as `REV:PATH` (or `:PATH`,
/// `:N:PATH`), as an option's value (`--file=F`), or as a path.
fn names_covered(a: &str, c: &SimpleCommand, reads: &ReadDenials) -> Option<String> {
    let value = a
        .strip_prefix("--")
        .and_then(|o| o.split_once('='))
        .map_or(a, |(_, v)| v);
    // `REV:PATH`, where REV may hold colons of its own (`HEAD^{/:x}`,
    // `@{9999-01-01 0:0}`): what follows each colon is taken as a path.
    for (at, _) in value.match_indices(':') {
        // From the top of the repository, unless it starts `./`.
        let path = value[at + 1..].trim_start_matches(|ch: char| ch.is_ascii_digit() || ch == ':');
        let root = reads.workspace_root();
        let base = if path.starts_with("./") || path.starts_with("../") {
            c.cwd.as_deref().unwrap_or(root)
        } else {
            root
        };
        if !path.is_empty() && !path.starts_with('(') && covered(&lexical_join(base, path), reads) {
            return Some(format!("prints {path}, which your rules deny reading"));
        }
    }
    if value.starts_with('-') || value.is_empty() {
        return None;
    }
    let cwd = c.cwd.as_deref().unwrap_or(reads.workspace_root());
    let abs = lexical_join(cwd, value);
    (abs.starts_with(reads.workspace_root()) && abs.exists() && covered(&abs, reads))
        .then(|| format!("reads {value}, which your rules deny reading"))
}

/// Whether `abs` is, or holds, a covered file.
fn covered(abs: &std::path::Path, reads: &ReadDenials) -> bool {
    let root = reads.workspace_root();
    let Ok(rel) = abs.strip_prefix(root) else {
        return false;
    };
    let rel = rel.to_string_lossy();
    reads.rule_for(&rel).is_some()
        || reads.rule_for(&format!("{rel}/x")).is_some()
        || reads.denied(abs).is_some()
}

/// Whether the pathspecs after `--` (for `blame`, its file) name nothing
/// covered: plain paths only, no magic, no patterns.
fn pathspecs_clear(
    sub: &str,
    rest: &[&str],
    c: &SimpleCommand,
    reads: &ReadDenials,
) -> Option<String> {
    let specs: &[&str] = match rest.iter().position(|a| *a == "--") {
        Some(dash) => &rest[dash + 1..],
        None if matches!(sub, "blame" | "annotate") => {
            rest.last().map_or(&[], std::slice::from_ref)
        }
        None => &[],
    };
    if specs.is_empty() {
        return Some(
            "can print any file the repository holds; name the paths it may show after `--` \
             (none your read rules cover)"
                .into(),
        );
    }
    let root = reads.workspace_root();
    let cwd = c.cwd.as_deref().unwrap_or(root);
    for spec in specs {
        let abs = lexical_join(cwd, spec);
        let magic = spec.starts_with(':') || spec.contains(['*', '?', '[', '\\']);
        if magic || !abs.starts_with(root) || abs == root || covered(&abs, reads) {
            return Some(format!(
                "may print what {spec} holds, which your rules deny reading (name plain \
                 paths your rules do not cover)"
            ));
        }
    }
    None
}
