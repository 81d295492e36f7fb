//! `grep` and `glob`: searching the workspace without a shell, so without
//! asking. Both walk it as ripgrep does (the `ignore` crate): `.gitignore`,
//! `.ignore` and the global git excludes are respected, hidden files are
//! searched but `.git` is not, links are not followed (so the search stays
//! in the workspace). `grep` skips binary files and files over 10 MiB,
//! searches each file as a whole (a regex finds its way through the bytes;
//! only matching lines are looked at), and numbers its lines. Both cap
//! their results and say so; what they return is sorted by path.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::policy::Workspace;
use crate::protocol::operation::{Access, Operation};
use crate::protocol::{Effect, Summary};
use crate::tools::args::{dir_or_root, whole};
use crate::tools::spec::{ToolContext, ToolError, file_operation};
use crate::tools::typed::TypedTool;

/// Files larger than this are not searched.
const MAX_FILE: u64 = 10 * 1024 * 1024;
/// A line longer than this is cut in what is returned.
const MAX_LINE: usize = 300;
/// How much of a file decides whether it is binary (a NUL byte in it).
const BINARY_PROBE: usize = 8 * 1024;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// Regular expression (or a literal with fixed_strings)
    #[schemars(length(min = 1))]
    pattern: String,
    /// File or directory to search, relative to the workspace (default: the workspace root)
    path: Option<String>,
    /// Only files matching this glob, e.g. `*.rs` (any depth) or `src/**/*.ts`
    glob: Option<String>,
    /// Ignore case (default false)
    case_insensitive: Option<bool>,
    /// Treat pattern as a literal string (default false)
    fixed_strings: Option<bool>,
    /// Lines of context before and after each match (default 0)
    #[serde(default, deserialize_with = "whole")]
    #[schemars(with = "Option<u64>", range(min = 0, max = 10))]
    context: Option<u64>,
    /// At most this many matching lines (default 200)
    #[serde(default, deserialize_with = "whole")]
    #[schemars(with = "Option<u64>", range(min = 1, max = 2000))]
    max_results: Option<u64>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// Glob, e.g. `*.toml`, `src/**/*.rs`, `**/test_*.py`
    #[schemars(length(min = 1))]
    pattern: String,
    /// Directory to search, relative to the workspace (default: the workspace root)
    path: Option<String>,
    /// At most this many paths (default 500)
    #[serde(default, deserialize_with = "whole")]
    #[schemars(with = "Option<u64>", range(min = 1, max = 5000))]
    max_results: Option<u64>,
}

/// The most of an ignore file (or a `.git` pointer) a walk reads.
const MAX_IGNORE_FILE: u64 = 1024 * 1024;

/// What in `dir` a walk would read as ignore rules that is not a regular
/// file of sane size (a link to `/dev/zero`, a FIFO, a device, a huge
/// file: reading one would exhaust memory or hang), as a reason; `None`
/// when all is well. Checked before the walk reads them: `.gitignore`,
/// `.ignore`, the repository's `info/exclude`, and for a `.git` file,
/// the `gitdir` it names and that one's `commondir`.
fn unsafe_ignore_files(dir: &Path) -> Option<String> {
    let bad = |path: &Path| -> Option<String> {
        // Followed, as the walk follows it.
        match std::fs::metadata(path) {
            Err(_) => None,
            Ok(m) if m.is_file() && crate::fs::path_on_pseudo_fs(path) => Some(format!(
                "{} is a file of the kernel's (/proc, /sys)",
                path.display()
            )),
            Ok(m) if m.is_file() && m.len() <= MAX_IGNORE_FILE => None,
            Ok(m) if m.is_file() => Some(format!("{} is over 1 MiB", path.display())),
            Ok(_) => Some(format!("{} is not a regular file", path.display())),
        }
    };
    for name in [".gitignore", ".ignore"] {
        if let Some(why) = bad(&dir.join(name)) {
            return Some(why);
        }
    }
    let git = dir.join(".git");
    // Followed, as the walk follows it: a `.git` that is a link to a
    // directory elsewhere is read there.
    let Ok(meta) = std::fs::metadata(&git) else {
        return None;
    };
    let common = if meta.is_dir() {
        git
    } else if meta.is_file() {
        if let Some(why) = bad(&git) {
            return Some(why);
        }
        // `gitdir: PATH`, then PATH/commondir, as the walk reads them.
        let text = std::fs::read_to_string(&git).ok()?;
        let gitdir = PathBuf::from(text.lines().next()?.strip_prefix("gitdir: ")?);
        let commondir = gitdir.join("commondir");
        if let Some(why) = bad(&commondir) {
            return Some(why);
        }
        match std::fs::read_to_string(&commondir) {
            Ok(line) => {
                let line = line.lines().next().unwrap_or_default();
                if line.starts_with('.') {
                    gitdir.join(line)
                } else {
                    PathBuf::from(line)
                }
            }
            Err(_) => gitdir,
        }
    } else {
        // Neither a directory nor a file: not something to read.
        return Some(format!("{} is not a regular file", git.display()));
    };
    bad(&common.join("info").join("exclude"))
}

/// A walk of `root` as ripgrep's, without `.git`. A directory whose
/// ignore files could not be read safely is left out, and said in
/// `skipped`; if the root's are, its ignore files are not read at all.
fn walker(
    root: &Path,
    workspace: &Path,
    skipped: &std::sync::Arc<Mutex<Vec<String>>>,
) -> ignore::WalkBuilder {
    let mut b = ignore::WalkBuilder::new(root);
    b.hidden(false)
        .follow_links(false)
        .require_git(false)
        .threads(std::thread::available_parallelism().map_or(2, |n| n.get().min(8)));
    let note = |why: String| {
        skipped
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(why);
    };
    // The root and the directories above it are read before any entry
    // is filtered.
    let ws = workspace.to_path_buf();
    let rel = move |text: String| text.replace(&format!("{}/", ws.display()), "");
    if let Some(why) = root.ancestors().find_map(unsafe_ignore_files) {
        note(rel(format!("{why}: no ignore file was read")));
        b.git_ignore(false)
            .ignore(false)
            .git_exclude(false)
            .parents(false);
    }
    let skipped = std::sync::Arc::clone(skipped);
    b.filter_entry(move |e| {
        if e.file_name() == ".git" {
            return false;
        }
        if e.depth() > 0
            && e.file_type().is_some_and(|t| t.is_dir())
            && let Some(why) = unsafe_ignore_files(e.path())
        {
            skipped
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(rel(format!(
                    "{why}: {} was not searched",
                    e.path().display()
                )));
            return false;
        }
        true
    });
    b
}

/// A path as the model sees it: relative to the workspace.
fn shown(workspace: &Workspace, path: &Path) -> String {
    workspace.display_relative(path)
}

pub struct Grep;

#[async_trait]
impl TypedTool for Grep {
    type Args = GrepArgs;

    fn summary(&self, result: &Value) -> Option<Summary> {
        let count = result.get("count").and_then(Value::as_u64)?;
        let files = result.get("files").and_then(Value::as_u64).unwrap_or(1);
        Some(Summary::Matches { count, files })
    }

    fn name(&self) -> &'static str {
        "grep"
    }

    fn description(&self) -> &str {
        "Search file contents in the workspace with a regular expression (Rust regex syntax), \
         as ripgrep does: .gitignore is respected, binary files are skipped. Returns matching \
         lines as `path:line:text` (context lines as `path-line-text`), sorted by path, capped \
         at max_results. Read-only; prefer it to exec_shell grep."
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Search
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn operations(
        &self,
        a: &Self::Args,
        workspace: &Workspace,
    ) -> Result<Vec<Operation>, ToolError> {
        Ok(vec![file_operation(
            workspace,
            dir_or_root(a.path.as_deref()),
            Access::Read,
        )?])
    }

    async fn execute(&self, a: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let source = if a.fixed_strings == Some(true) {
            regex::escape(&a.pattern)
        } else {
            a.pattern.clone()
        };
        let regex = regex::bytes::RegexBuilder::new(&source)
            .case_insensitive(a.case_insensitive == Some(true))
            .multi_line(true)
            .crlf(true)
            .size_limit(16 * 1024 * 1024)
            .build()
            .map_err(|e| ToolError::InvalidArgs(format!("pattern: {e}")))?;
        let context = usize::try_from(a.context.unwrap_or(0).min(10)).unwrap_or(0);
        let max = usize::try_from(a.max_results.unwrap_or(200).clamp(1, 2000)).unwrap_or(200);
        let filter = a.glob.as_deref().map(name_filter).transpose()?;
        let root = ctx
            .workspace
            .resolve_readable(dir_or_root(a.path.as_deref()))
            .map_err(ToolError::from_path)?;
        let workspace = ctx.workspace.clone();
        let cancel = ctx.cancel.clone();
        let denials = ctx.read_denials.clone();
        tokio::task::spawn_blocking(move || {
            let scope = Scope {
                root: &root,
                workspace: workspace.root(),
                denials: denials.as_ref(),
            };
            let found = search(&scope, &regex, filter.as_ref(), context, max, &cancel);
            let mut text = String::new();
            let mut last: Option<&Path> = None;
            for hit in &found.hits {
                if context > 0 && last.is_some_and(|l| l != hit.path) {
                    text.push_str("--\n");
                }
                last = Some(&hit.path);
                let sep = if hit.matched { ':' } else { '-' };
                text.push_str(&format!(
                    "{}{sep}{}{sep}{}\n",
                    shown(&workspace, &hit.path),
                    hit.line,
                    hit.text
                ));
            }
            let mut v = json!({
                "matches": text,
                "count": found.hits.iter().filter(|h| h.matched).count(),
                "files": found.files_matched,
                "truncated": found.truncated,
            });
            if found.truncated {
                v["note"] = json!(format!(
                    "stopped at {max} matching lines; narrow the pattern, path or glob"
                ));
            }
            if !found.skipped.is_empty() {
                v["skipped"] = json!(found.skipped);
            }
            if found.cancelled {
                return Err(ToolError::Cancelled("interrupted by the user".into()));
            }
            Ok(v)
        })
        .await
        .map_err(|e| ToolError::Internal(format!("grep panicked: {e}")))?
    }
}

/// A glob on file names: without a `/` it matches the name at any depth,
/// with one the path below the search root.
fn name_filter(glob: &str) -> Result<NameFilter, ToolError> {
    let bad = |e: globset::Error| ToolError::InvalidArgs(format!("glob: {e}"));
    let glob = glob.trim().trim_start_matches("./");
    // Matched against paths below the search directory: an absolute or
    // climbing pattern would silently match nothing.
    if glob.starts_with('/') || glob.split('/').any(|part| part == "..") {
        return Err(ToolError::InvalidArgs(format!(
            "glob `{glob}`: a pattern is relative to the directory searched (`path`, the \
             workspace by default), as in `src/**/*.rs`; to search a subdirectory, set `path`"
        )));
    }
    let matcher = globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map_err(bad)?
        .compile_matcher();
    Ok(NameFilter {
        matcher,
        whole_path: glob.contains('/'),
    })
}

struct NameFilter {
    matcher: globset::GlobMatcher,
    whole_path: bool,
}

impl NameFilter {
    fn matches(&self, root: &Path, path: &Path) -> bool {
        if self.whole_path {
            path.strip_prefix(root)
                .is_ok_and(|rel| self.matcher.is_match(rel))
        } else {
            path.file_name()
                .is_some_and(|n| self.matcher.is_match(Path::new(n)))
        }
    }
}

/// One line of output.
struct Hit {
    path: PathBuf,
    line: usize,
    text: String,
    /// A matching line (not context).
    matched: bool,
}

#[derive(Default)]
struct Found {
    hits: Vec<Hit>,
    files_matched: usize,
    truncated: bool,
    cancelled: bool,
    /// What was left out because its ignore files could not be read
    /// safely.
    skipped: Vec<String>,
}

/// Where a search walks: from `root`, in `workspace`, leaving out what
/// the read rules cover.
struct Scope<'a> {
    root: &'a Path,
    workspace: &'a Path,
    denials: Option<&'a crate::policy::guardrails::ReadDenials>,
}

fn search(
    scope: &Scope<'_>,
    regex: &regex::bytes::Regex,
    filter: Option<&NameFilter>,
    context: usize,
    max: usize,
    cancel: &tokio_util::sync::CancellationToken,
) -> Found {
    let Scope {
        root,
        workspace,
        denials,
    } = *scope;
    let matched_lines = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let per_file: Mutex<Vec<(PathBuf, Vec<Hit>, usize)>> = Mutex::new(Vec::new());
    let skipped = std::sync::Arc::new(Mutex::new(Vec::new()));
    let covered = AtomicUsize::new(0);
    walker(root, workspace, &skipped).build_parallel().run(|| {
        Box::new(|entry| {
            use ignore::WalkState;
            if stop.load(Ordering::Relaxed) || cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let path = entry.path();
            if filter.is_some_and(|f| !f.matches(root, path)) {
                return WalkState::Continue;
            }
            if denials.is_some_and(|d| d.covers(path)) {
                covered.fetch_add(1, Ordering::Relaxed);
                return WalkState::Continue;
            }
            if let Some((hits, count)) = search_file(path, regex, context) {
                let total = matched_lines.fetch_add(count, Ordering::Relaxed) + count;
                per_file
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push((path.to_path_buf(), hits, count));
                if total >= max {
                    stop.store(true, Ordering::Relaxed);
                    return WalkState::Quit;
                }
            }
            WalkState::Continue
        })
    });
    let mut files = per_file
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut skipped = std::mem::take(
        &mut *skipped
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    let covered = covered.load(Ordering::Relaxed);
    if covered > 0 {
        skipped.push(format!(
            "{covered} file{} your read rules deny {} left out",
            if covered == 1 { "" } else { "s" },
            if covered == 1 { "was" } else { "were" }
        ));
    }
    let mut found = Found {
        skipped,
        truncated: stop.load(Ordering::Relaxed),
        cancelled: cancel.is_cancelled(),
        files_matched: files.len(),
        ..Found::default()
    };
    let mut kept = 0;
    'files: for (_, hits, _) in files {
        for hit in hits {
            if hit.matched {
                if kept == max {
                    found.truncated = true;
                    break 'files;
                }
                kept += 1;
            }
            found.hits.push(hit);
        }
    }
    found
}

/// The matching lines of one file (with context), and how many matched;
/// `None` for no match, a binary file, or one too big or unreadable.
fn search_file(
    path: &Path,
    regex: &regex::bytes::Regex,
    context: usize,
) -> Option<(Vec<Hit>, usize)> {
    // Never blocks on a FIFO that turned up in place of a file.
    let opened = crate::fs::open_regular(path, crate::fs::Links::Follow).ok()?;
    if opened.meta.len() > MAX_FILE {
        return None;
    }
    let (bytes, _) = opened.read_capped(MAX_FILE).ok()?;
    if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
        return None;
    }
    // The start of each matching line, once.
    let mut starts: Vec<usize> = Vec::new();
    for m in regex.find_iter(&bytes) {
        let start = line_start(&bytes, m.start());
        if starts.last() != Some(&start) {
            starts.push(start);
        }
    }
    if starts.is_empty() {
        return None;
    }
    let count = starts.len();
    let mut hits = Vec::new();
    let mut line = 1;
    let mut at = 0;
    // The lines to show: each match and its context, in order, once.
    let mut last_shown: Option<usize> = None;
    for (i, &start) in starts.iter().enumerate() {
        line += count_lines(&bytes[at..start]);
        at = start;
        let first = line.saturating_sub(context).max(1);
        let from = last_shown.map_or(first, |l| first.max(l + 1));
        // Context before: walk back from the match.
        let mut before = Vec::new();
        let mut s = start;
        for n in (from..line).rev() {
            let prev = line_start(&bytes, s.saturating_sub(1));
            before.push(Hit {
                path: path.to_path_buf(),
                line: n,
                text: line_text(&bytes, prev),
                matched: false,
            });
            s = prev;
        }
        hits.extend(before.into_iter().rev());
        hits.push(Hit {
            path: path.to_path_buf(),
            line,
            text: line_text(&bytes, start),
            matched: true,
        });
        last_shown = Some(line);
        // Context after, up to the next match.
        let next = starts.get(i + 1).copied();
        let mut s = next_line(&bytes, start);
        for n in line + 1..=line + context {
            match s {
                Some(p) if next.is_none_or(|nx| p < nx) => {
                    hits.push(Hit {
                        path: path.to_path_buf(),
                        line: n,
                        text: line_text(&bytes, p),
                        matched: false,
                    });
                    last_shown = Some(n);
                    s = next_line(&bytes, p);
                }
                _ => break,
            }
        }
    }
    Some((hits, count))
}

fn line_start(bytes: &[u8], at: usize) -> usize {
    bytes[..at.min(bytes.len())]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1)
}

fn next_line(bytes: &[u8], start: usize) -> Option<usize> {
    let end = bytes[start..].iter().position(|&b| b == b'\n')? + start + 1;
    (end < bytes.len()).then_some(end)
}

fn count_lines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

/// A line's text, without its line break, cut to [`MAX_LINE`] bytes on a
/// character boundary.
fn line_text(bytes: &[u8], start: usize) -> String {
    let end = bytes[start..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |p| start + p);
    let line = &bytes[start..end];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = String::from_utf8_lossy(line);
    if text.len() <= MAX_LINE {
        return text.into_owned();
    }
    let kept = crate::protocol::text::cut(&text, MAX_LINE);
    format!("{kept}… [{} more bytes]", text.len() - kept.len())
}

pub struct Glob;

#[async_trait]
impl TypedTool for Glob {
    type Args = GlobArgs;

    fn summary(&self, result: &Value) -> Option<Summary> {
        let count = result.get("count").and_then(Value::as_u64)?;
        Some(Summary::Files { count })
    }

    fn name(&self) -> &'static str {
        "glob"
    }

    fn description(&self) -> &str {
        "Find workspace files by name with a glob: `*.rs` matches at any depth, `src/**/*.ts` \
         the path below `path`. .gitignore is respected. Returns paths relative to the \
         workspace, sorted, capped at max_results. Read-only."
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Search
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn operations(
        &self,
        a: &Self::Args,
        workspace: &Workspace,
    ) -> Result<Vec<Operation>, ToolError> {
        Ok(vec![file_operation(
            workspace,
            dir_or_root(a.path.as_deref()),
            Access::Read,
        )?])
    }

    async fn execute(&self, a: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let filter = name_filter(&a.pattern)?;
        let max = usize::try_from(a.max_results.unwrap_or(500).clamp(1, 5000)).unwrap_or(500);
        let root = ctx
            .workspace
            .resolve_readable(dir_or_root(a.path.as_deref()))
            .map_err(ToolError::from_path)?;
        let workspace = ctx.workspace.clone();
        let cancel = ctx.cancel.clone();
        let denials = ctx.read_denials.clone();
        tokio::task::spawn_blocking(move || {
            if !root.is_dir() {
                return Err(ToolError::InvalidArgs(format!(
                    "{} is not a directory",
                    shown(&workspace, &root)
                )));
            }
            let mut files: Vec<String> = Vec::new();
            let mut total = 0usize;
            let mut covered = 0usize;
            let skipped = std::sync::Arc::new(Mutex::new(Vec::new()));
            for entry in walker(&root, workspace.root(), &skipped).build().flatten() {
                if cancel.is_cancelled() {
                    return Err(ToolError::Cancelled("interrupted by the user".into()));
                }
                if entry.file_type().is_some_and(|t| t.is_file())
                    && filter.matches(&root, entry.path())
                {
                    if denials.as_ref().is_some_and(|d| d.covers(entry.path())) {
                        covered += 1;
                        continue;
                    }
                    total += 1;
                    files.push(shown(&workspace, entry.path()));
                }
            }
            files.sort();
            let truncated = files.len() > max;
            files.truncate(max);
            let mut v = json!({"files": files, "count": total, "truncated": truncated});
            let mut skipped = std::mem::take(
                &mut *skipped
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            );
            if covered > 0 {
                skipped.push(format!(
                    "{covered} file{} your read rules deny {} left out",
                    if covered == 1 { "" } else { "s" },
                    if covered == 1 { "was" } else { "were" }
                ));
            }
            if !skipped.is_empty() {
                v["skipped"] = json!(skipped);
            }
            if truncated {
                v["note"] = json!(format!(
                    "{total} files match; the first {max} by path are listed"
                ));
            }
            Ok(v)
        })
        .await
        .map_err(|e| ToolError::Internal(format!("glob panicked: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(text: &str, pattern: &str, context: usize) -> Vec<(usize, String, bool)> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, text).unwrap();
        let re = regex::bytes::RegexBuilder::new(pattern)
            .multi_line(true)
            .crlf(true)
            .build()
            .unwrap();
        search_file(&path, &re, context)
            .map(|(h, _)| h.into_iter().map(|h| (h.line, h.text, h.matched)).collect())
            .unwrap_or_default()
    }

    /// A pattern that could only match outside the directory searched is
    /// an error that says how to write it, not an empty result.
    #[test]
    fn absolute_and_climbing_patterns_are_errors() {
        for glob in ["/etc/*", "../*.rs", "src/../../x"] {
            let e = name_filter(glob).err().unwrap();
            assert!(
                e.to_string().contains("relative to the directory searched"),
                "{e}"
            );
        }
        assert!(name_filter("./src/**/*.rs").is_ok());
        assert!(name_filter("a..b/*.rs").is_ok());
    }

    #[test]
    fn lines_are_numbered_once_each_with_context() {
        let text = "a\nfoo 1\nb\nc\nfoo 2 foo\nd\n";
        assert_eq!(
            hits(text, "foo", 0),
            [(2, "foo 1".into(), true), (5, "foo 2 foo".into(), true)]
        );
        assert_eq!(
            hits(text, "foo", 1),
            [
                (1, "a".into(), false),
                (2, "foo 1".into(), true),
                (3, "b".into(), false),
                (4, "c".into(), false),
                (5, "foo 2 foo".into(), true),
                (6, "d".into(), false),
            ]
        );
        assert_eq!(hits("x\r\nfoo\r\n", "^foo$", 0), [(2, "foo".into(), true)]);
        assert!(hits("no\0match foo", "foo", 0).is_empty(), "binary");
    }

    #[test]
    fn long_lines_are_cut_on_a_character_boundary() {
        let line = "é".repeat(400);
        let got = hits(&line, "é", 0);
        assert!(got[0].1.contains("more bytes"));
        assert!(got[0].1.len() < MAX_LINE + 40);
    }
}
