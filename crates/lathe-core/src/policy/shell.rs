//! Shell lines as data: [`analyze`] parses a line with tree-sitter-bash and
//! returns the [`ExecOp`] it stands for: every simple command it can run
//! (argv after quote removal, the resolved program, its subcommand, its
//! redirections, the wrappers it hides behind), the files its redirections
//! touch, and, when some part cannot be known before it runs, why.
//!
//! The walk is an allow-list: statement kinds it understands are analysed,
//! anything else marks the line `complex`. Command substitution, process
//! substitution, `eval`, `source`, `sh -c`, a program name computed at run
//! time, `git -c`/aliases and shell functions make a line complex; literal
//! `sh -c '…'`, `eval '…'`, here-documents fed to a shell and `find -exec`
//! are looked into, so their commands are checked too. Wrappers (`env`,
//! `timeout`, `nice`, `xargs`, …) are looked through. A line that does not
//! parse, or nests deeper than Lathe follows, is `unchecked`: the guardrail
//! refuses it. The walk is bash's view; `exec_shell` runs bash, so what is
//! checked is what runs.

use std::path::{Path, PathBuf};

use super::workspace::Workspace;
use crate::protocol::operation::ExecOp;

mod commands;
mod find;
mod git;
mod inside;
mod interpreters;
mod redirects;
mod roles;
mod tables;
mod walk;
mod words;
mod wrappers;

pub(crate) use commands::{has_subcommands, is_known_subcommand};
pub(crate) use interpreters::{SHELLS, Source, is_stdin_path, source_of};
pub(crate) use roles::{READERS, find_filters, find_starts, knows_file_roles};
pub(crate) use wrappers::is_wrapper;

/// How deep substitutions, nested shell strings and compound statements
/// may nest before a line is refused as unchecked.
const MAX_DEPTH: usize = 48;
/// Most words one brace expansion may produce before it counts as dynamic.
const MAX_BRACE_WORDS: usize = 64;
/// Longest line analysed, and most commands followed; beyond, a line is
/// refused as unchecked (a script belongs in a file).
const MAX_LINE: usize = 256 * 1024;
const MAX_COMMANDS: usize = 2000;

/// Parses `line` as run by `exec_shell` in `workspace`'s root.
pub fn analyze(line: &str, workspace: &Workspace) -> ExecOp {
    analyze_in(line, workspace, workspace.root())
}

/// Parses `line` as run in `cwd` (inside `workspace`).
pub fn analyze_in(line: &str, workspace: &Workspace, cwd: &Path) -> ExecOp {
    let env = ShellEnv::from_process(workspace);
    let mut walker = walk::Walker::new(&env, Some(cwd.to_path_buf()));
    walker.run(line);
    let mut op = walker.finish();
    op.line = line.to_string();
    op
}

/// What the analysis takes from the environment Lathe runs in: the
/// shell's children inherit it.
pub(crate) struct ShellEnv<'a> {
    pub(crate) workspace: &'a Workspace,
    pub(crate) home: Option<PathBuf>,
    /// `$TMPDIR` as the commands will see it (empty when unset).
    pub(crate) tmpdir: String,
    pub(crate) path: Vec<PathBuf>,
}

impl<'a> ShellEnv<'a> {
    fn from_process(workspace: &'a Workspace) -> Self {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let path = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        Self {
            workspace,
            home,
            tmpdir: std::env::var("TMPDIR").unwrap_or_default(),
            path,
        }
    }
}

/// Joins `name` to `base` and folds `.` and `..` without touching the
/// disk (the path may not exist yet).
pub(crate) fn lexical_join(base: &Path, name: &str) -> PathBuf {
    use std::path::Component;
    let joined = if Path::new(name).is_absolute() {
        PathBuf::from(name)
    } else {
        base.join(name)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// Whether path `t` (a glob when `glob`), taken in `cwd`, stays inside
/// the workspace. A glob is judged by its literal directory, and refused
/// when `..` follows a wildcard (`s*/../../etc`).
pub(crate) fn path_inside(t: &str, glob: bool, cwd: Option<&Path>, workspace: &Workspace) -> bool {
    let literal = if glob {
        let cut = t.find(['*', '?', '[']).unwrap_or(t.len());
        if t[cut..].split('/').any(|c| c == "..") {
            return false;
        }
        match t[..cut].rfind('/') {
            Some(i) => &t[..=i],
            None => ".",
        }
    } else {
        t
    };
    let joined = if Path::new(literal).is_absolute() {
        PathBuf::from(literal)
    } else {
        match cwd {
            // Not folded: `link/..` is where the kernel takes it.
            Some(c) => c.join(literal),
            None => return false,
        }
    };
    workspace.check(&joined.to_string_lossy()).is_ok()
}

/// The paths a glob matches now, as bash matches them (a leading dot only
/// when written, unless `dotglob`); `None` when it matches more than
/// `limit` or the line's `budget` of directory reads is spent. No match
/// leaves the pattern as written, as in bash.
pub(crate) fn expand_glob(
    base: &Path,
    pattern: &str,
    limit: usize,
    dotglob: bool,
    budget: &mut usize,
) -> Option<Vec<PathBuf>> {
    let mut current = vec![if pattern.starts_with('/') {
        PathBuf::from("/")
    } else {
        base.to_path_buf()
    }];
    for part in pattern.split('/').filter(|p| !p.is_empty()) {
        if !part.contains(['*', '?', '[']) {
            for p in &mut current {
                p.push(part);
            }
            continue;
        }
        let matcher = globset::GlobBuilder::new(part)
            .literal_separator(true)
            .build()
            .ok()?
            .compile_matcher();
        let mut next = Vec::new();
        for dir in &current {
            // Directory reads are budgeted per line: a hostile line names
            // thousands of globs.
            *budget = budget.checked_sub(1)?;
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name();
                let name = name.to_string_lossy();
                if name.starts_with('.') && !part.starts_with('.') && !dotglob {
                    continue;
                }
                if matcher.is_match(name.as_ref()) {
                    next.push(dir.join(name.as_ref()));
                    if next.len() > limit {
                        return None;
                    }
                }
            }
        }
        current = next;
    }
    Some(current)
}

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;
