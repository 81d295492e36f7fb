//! The workspace files a hook's command runs, followed through what runs
//! them: the script it names, the Makefile `make` reads, the files that
//! Makefile includes (however the include is written: tabs, continued
//! lines, `$(CURDIR)`, `$(wildcard …)`, a glob, `-I dir`), the scripts its
//! recipes run, the `package.json` of `npm run` (and of its workspaces)
//! and the scripts its scripts run. A change to any of them changes what
//! the hook runs, so each asks in every mode and the sandbox keeps it
//! read-only.
//!
//! A glob (`include mk/*.mk`) is kept as a pattern too: a file that comes
//! to match it later runs as well, so a write that would create one asks.
//! The walk is bounded (a few levels, a few hundred files); what it
//! cannot follow (a name built at run time) stays the sandbox's to
//! confine, as every such hook runs in it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::instructions::{instruction_files, named, run_dir};
use super::shell::analyze_in;
use super::workspace::Workspace;
use crate::protocol::operation::{Program, SimpleCommand};

/// How deep one file running another is followed.
const DEPTH: usize = 3;
/// Most files (and patterns) kept for one hook.
const MAX_FILES: usize = 256;
/// Largest instruction file read.
const MAX_TEXT: u64 = 256 * 1024;

/// The files `command` (run with `sh -c` in the workspace root) runs or
/// names, relative to the workspace, and the glob patterns of files that
/// would run were they there.
pub(super) fn of(command: &str, workspace: &Workspace) -> Vec<String> {
    let mut walk = Walk {
        workspace,
        files: BTreeSet::new(),
        read: BTreeSet::new(),
    };
    walk.line(command, workspace.root(), 0);
    walk.files.into_iter().collect()
}

struct Walk<'a> {
    workspace: &'a Workspace,
    files: BTreeSet<String>,
    /// Instruction files already followed.
    read: BTreeSet<PathBuf>,
}

impl Walk<'_> {
    fn full(&self) -> bool {
        self.files.len() >= MAX_FILES
    }

    /// A workspace path that exists as a regular file, relative.
    fn existing(&self, path: &Path) -> Option<String> {
        let abs = self.workspace.check(&path.to_string_lossy()).ok()?;
        abs.is_file().then(|| self.workspace.display_relative(&abs))
    }

    /// A workspace path that is not a directory, there or not (a command
    /// must not be able to create what runs), relative.
    fn to_run(&self, path: &Path) -> Option<String> {
        let abs = self.workspace.check(&path.to_string_lossy()).ok()?;
        (!abs.is_dir()).then(|| self.workspace.display_relative(&abs))
    }

    fn keep(&mut self, file: Option<String>) {
        if let Some(f) = file
            && !self.full()
        {
            self.files.insert(f);
        }
    }

    /// The text of an instruction file not read before.
    fn text(&mut self, path: &Path) -> Option<String> {
        let abs = self.workspace.check(&path.to_string_lossy()).ok()?;
        if !self.read.insert(abs.clone()) || self.read.len() > MAX_FILES {
            return None;
        }
        crate::fs::read_text(&abs, MAX_TEXT).ok()
    }

    fn line(&mut self, line: &str, cwd: &Path, depth: usize) {
        if depth > DEPTH || self.full() {
            return;
        }
        let op = analyze_in(line, self.workspace, cwd);
        for c in &op.commands {
            self.command(c, cwd, depth);
        }
        for f in op.files.iter().filter(|f| !f.outside) {
            let file = self.existing(&self.workspace.root().join(&f.path));
            self.keep(file);
        }
    }

    fn command(&mut self, c: &SimpleCommand, line_cwd: &Path, depth: usize) {
        let cwd = c.cwd.clone().unwrap_or_else(|| line_cwd.to_path_buf());
        // A program or script named by path, there or not.
        for program in std::iter::once(&c.program).chain(c.script.as_ref()) {
            let file = match program {
                Program::Path { path, .. } => self.to_run(path),
                Program::NotFound { name } if name.contains('/') => self.to_run(&cwd.join(name)),
                _ => None,
            };
            self.keep(file);
        }
        let name = c.basename();
        let args: Vec<&str> = c.argv.iter().skip(1).map(|w| w.text.as_str()).collect();
        // The files it takes its instructions from, there or not.
        let instructions = instruction_files(name, &args);
        for file in &instructions {
            let file = self.to_run(&cwd.join(file));
            self.keep(file);
        }
        let dir = cwd.join(run_dir(name, &args));
        match name {
            "make" | "gmake" | "bmake" | "remake" => {
                let include_dirs = named(&args, "-I", &["--include-dir"]);
                for file in &instructions {
                    self.makefile(&cwd.join(file), &dir, &include_dirs, depth);
                }
            }
            "npm" | "pnpm" | "yarn" | "bun" => self.packages(&args, &dir, depth),
            _ => {}
        }
        // Files named as arguments (`--rules=hooks/rules.txt`).
        for word in c.argv.iter().filter(|w| !w.dynamic) {
            let value = word
                .text
                .split_once('=')
                .map_or(word.text.as_str(), |(_, v)| v);
            for t in [word.text.as_str(), value] {
                if !t.is_empty() {
                    let file = self.existing(&cwd.join(t));
                    self.keep(file);
                }
            }
        }
    }

    /// A makefile's includes (each followed in turn) and what its
    /// recipes and variables run; make runs in `dir`.
    fn makefile(&mut self, path: &Path, dir: &Path, include_dirs: &[String], depth: usize) {
        let mut queue = vec![path.to_path_buf()];
        let mut vars = Vars::default();
        while let Some(path) = queue.pop() {
            if self.full() {
                return;
            }
            let Some(text) = self.text(&path) else {
                continue;
            };
            let parsed = parse_makefile(&text, &mut vars);
            let beside = path.parent().unwrap_or(dir).to_path_buf();
            for inc in &parsed.includes {
                // Where make looks: where it runs, then each `-I` dir;
                // beside the makefile too, to be safe.
                let bases = std::iter::once(dir.to_path_buf())
                    .chain(include_dirs.iter().map(|d| dir.join(d)))
                    .chain(std::iter::once(beside.clone()));
                for base in bases {
                    let at = base.join(inc);
                    if is_glob(inc) {
                        for found in self.glob(&at) {
                            queue.push(found);
                        }
                    } else if !self.full()
                        && let Some(file) = self.to_run(&at)
                    {
                        self.files.insert(file);
                        queue.push(at);
                    }
                }
            }
            for recipe in &parsed.commands {
                self.line(recipe, dir, depth + 1);
            }
        }
    }

    /// The files a glob matches now (kept, and returned to be followed),
    /// and the glob itself, kept as a pattern: a file that comes to match
    /// it runs too. Only the last part may be a pattern; a glob with one
    /// earlier is kept as a pattern alone.
    fn glob(&mut self, pattern: &Path) -> Vec<PathBuf> {
        let (Some(parent), Some(last)) = (pattern.parent(), pattern.file_name()) else {
            return Vec::new();
        };
        let Ok(abs_parent) = self.workspace.check(&parent.to_string_lossy()) else {
            return Vec::new();
        };
        let rel_parent = self.workspace.display_relative(&abs_parent);
        let last = last.to_string_lossy();
        let shown = if rel_parent.is_empty() || rel_parent == "." {
            last.to_string()
        } else {
            format!("{rel_parent}/{last}")
        };
        if !self.full() {
            self.files.insert(shown);
        }
        if is_glob(&rel_parent) {
            return Vec::new();
        }
        let Ok(matcher) = globset::GlobBuilder::new(&last)
            .literal_separator(true)
            .build()
            .map(|g| g.compile_matcher())
        else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(&abs_parent) else {
            return Vec::new();
        };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| matcher.is_match(e.file_name()))
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .take(MAX_FILES)
            .collect();
        found.sort();
        for f in &found {
            let file = self.existing(f);
            self.keep(file);
        }
        found
    }

    /// The `package.json` files `npm` (or its kin) reads in `dir`: its
    /// own, a `-w` workspace's, the workspaces the root names; the
    /// scripts in each are followed.
    fn packages(&mut self, args: &[&str], dir: &Path, depth: usize) {
        let mut dirs = vec![dir.to_path_buf()];
        for w in named(args, "-w", &["--workspace", "--filter", "--cwd"]) {
            dirs.push(dir.join(w));
        }
        let root = self.text(&dir.join("package.json"));
        let mut members: Vec<String> = root.as_deref().map(workspaces).unwrap_or_default();
        if let Some(yaml) = self.text(&dir.join("pnpm-workspace.yaml")) {
            members.extend(pnpm_workspaces(&yaml));
        }
        self.keep(self.to_run(&dir.join("pnpm-workspace.yaml")));
        for member in members {
            let at = dir.join(&member);
            if is_glob(&member) {
                let Ok(abs) = self.workspace.check(&at.to_string_lossy()) else {
                    continue;
                };
                // `packages/*`: each directory it matches.
                let (Some(parent), Some(last)) = (abs.parent(), abs.file_name()) else {
                    continue;
                };
                let Ok(matcher) =
                    globset::Glob::new(&last.to_string_lossy()).map(|g| g.compile_matcher())
                else {
                    continue;
                };
                if let Ok(entries) = std::fs::read_dir(parent) {
                    dirs.extend(
                        entries
                            .flatten()
                            .filter(|e| matcher.is_match(e.file_name()))
                            .map(|e| e.path())
                            .filter(|p| p.is_dir())
                            .take(MAX_FILES),
                    );
                }
            } else {
                dirs.push(at);
            }
        }
        for (i, d) in dirs.iter().enumerate() {
            if self.full() {
                return;
            }
            let manifest = d.join("package.json");
            self.keep(self.to_run(&manifest));
            let text = if i == 0 {
                root.clone()
            } else {
                self.text(&manifest)
            };
            for script in text.as_deref().map(scripts).unwrap_or_default() {
                self.line(&script, d, depth + 1);
            }
        }
    }
}

/// Whether a word is a glob pattern.
fn is_glob(word: &str) -> bool {
    word.contains(['*', '?', '['])
}

/// The scripts of a `package.json`; nothing for what is not one.
fn scripts(text: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    value
        .get("scripts")
        .and_then(|s| s.as_object())
        .map(|s| {
            s.values()
                .filter_map(|v| v.as_str().map(str::to_string))
                .take(MAX_FILES)
                .collect()
        })
        .unwrap_or_default()
}

/// The workspaces a root `package.json` names (`"workspaces": [...]` or
/// `{"packages": [...]}`).
fn workspaces(text: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let list = match value.get("workspaces") {
        Some(serde_json::Value::Object(o)) => o.get("packages"),
        other => other,
    };
    list.and_then(|l| l.as_array())
        .map(|l| {
            l.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .take(MAX_FILES)
                .collect()
        })
        .unwrap_or_default()
}

/// The packages of a `pnpm-workspace.yaml` (`packages:` then `- 'dir/*'`
/// lines); exclusions (`!…`) are left out.
fn pnpm_workspaces(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix('-'))
        .map(|l| l.trim().trim_matches(['\'', '"']).to_string())
        .filter(|l| !l.is_empty() && !l.starts_with('!'))
        .take(MAX_FILES)
        .collect()
}

/// What a makefile says that runs: the files it includes and the command
/// lines of its recipes and variables.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Makefile {
    pub includes: Vec<String>,
    pub commands: Vec<String>,
}

/// A makefile's variables, as far as they can be told without running it.
#[derive(Debug, Default)]
pub(super) struct Vars(Vec<(String, String)>);

impl Vars {
    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// `text` with what can be told expanded: `$(CURDIR)` (make's own
    /// directory, `.`), `$(wildcard X)` (X), a variable set before, `$$`.
    /// What cannot be told is left as it is written.
    pub(super) fn expand(&self, text: &str, depth: usize) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let close = match after.chars().next() {
                Some('(') => ')',
                Some('{') => '}',
                Some('$') => {
                    out.push('$');
                    rest = &after[1..];
                    continue;
                }
                _ => {
                    out.push('$');
                    rest = after;
                    continue;
                }
            };
            let Some(end) = matching(after, close) else {
                out.push_str(&rest[at..]);
                return out;
            };
            let inner = &after[1..end];
            let whole = &rest[at..at + 2 + end];
            let expanded = if depth >= 8 {
                None
            } else if inner == "CURDIR" {
                Some(".".to_string())
            } else if let Some(arg) = ["wildcard ", "wildcard\t", "strip ", "realpath ", "abspath "]
                .iter()
                .find_map(|f| inner.strip_prefix(f))
            {
                Some(self.expand(arg.trim(), depth + 1))
            } else {
                self.get(inner).map(|v| self.expand(v, depth + 1))
            };
            out.push_str(expanded.as_deref().unwrap_or(whole));
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        out
    }
}

/// Where the bracket opened at the start of `s` closes (nesting counted).
fn matching(s: &str, close: char) -> Option<usize> {
    let open = if close == ')' { '(' } else { '{' };
    let mut level = 0usize;
    for (i, c) in s.char_indices() {
        if c == open {
            level += 1;
        } else if c == close {
            level = level.checked_sub(1)?;
            if level == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// The logical lines of a makefile: a line ending in an odd number of
/// backslashes goes on with the next.
fn logical_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let slashes = line.len() - line.trim_end_matches('\\').len();
        if slashes % 2 == 1 {
            current.push_str(&line[..line.len() - 1]);
            current.push(' ');
        } else {
            current.push_str(line);
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Reads a makefile: its includes (words as make would take them, those
/// still holding an unknown variable left out), its recipes (a line that
/// starts with a tab, or what follows `;` on a rule's line) and the values
/// of its variables (which recipes run), with what can be told expanded.
/// `vars` carries the variables into the files it includes.
pub(super) fn parse_makefile(text: &str, vars: &mut Vars) -> Makefile {
    let mut out = Makefile::default();
    for line in logical_lines(text) {
        let recipe = line.starts_with('\t');
        let body = line.trim_start();
        if recipe {
            let command = body.trim_start_matches(['@', '-', '+']);
            out.commands.push(vars.expand(command, 0));
        }
        // Outside a recipe, `#` starts a comment.
        let body = body.split('#').next().unwrap_or_default().trim_end();
        if let Some(rest) = ["include", "-include", "sinclude"].iter().find_map(|k| {
            body.strip_prefix(k)
                .filter(|r| r.starts_with(char::is_whitespace))
        }) {
            out.includes.extend(
                vars.expand(rest, 0)
                    .split_whitespace()
                    .filter(|w| !w.contains('$'))
                    .map(|w| w.trim_start_matches("./").to_string()),
            );
            continue;
        }
        if recipe {
            continue;
        }
        if let Some((name, value)) = assignment(body) {
            let value = value.trim().to_string();
            out.commands.push(vars.expand(&value, 0));
            vars.0.push((name.to_string(), value));
        } else if let Some((rule, command)) = body.split_once(';')
            && rule.contains(':')
        {
            out.commands.push(vars.expand(command.trim(), 0));
        }
    }
    out.commands.retain(|c| !c.trim().is_empty());
    out.commands.truncate(MAX_FILES);
    out.includes.truncate(MAX_FILES);
    out
}

/// `NAME = value` (or `:=`, `::=`, `?=`, `+=`, `!=`), with an `export` or
/// `override` before it.
fn assignment(line: &str) -> Option<(&str, &str)> {
    let line = ["export ", "override "]
        .iter()
        .fold(line, |l, p| l.strip_prefix(p).unwrap_or(l));
    let eq = line.find('=')?;
    let lhs = line[..eq].trim_end_matches([':', '?', '+', '!']).trim();
    (!lhs.is_empty() && !lhs.contains(char::is_whitespace) && !lhs.contains('$'))
        .then(|| (lhs, &line[eq + 1..]))
}

#[cfg(test)]
#[path = "hook_files_tests.rs"]
mod tests;
