//! File changes as data: what a file tool would write, as hunks over the
//! file's lines (line endings kept), with a hash of the content they were
//! computed from. The approval dialog, the event and the log render the
//! same hunks; a change approved in part applies exactly the hunks kept
//! (`tools::change` writes it, only to the content it was computed from).

use std::ops::Range;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::visible;
use crate::redact::{Redact, Scrub};

/// Context lines around each change.
const CONTEXT: usize = 3;

/// What a change does to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Create,
    Modify,
    /// The file goes: one hunk takes away every line.
    Delete,
    /// The file moves from `from` to `path`, its content as it was (no
    /// hunks).
    Rename,
}

impl Hunk {
    /// `@@ -start,lines +start,lines @@`, as a unified diff heads it.
    pub fn header(&self) -> String {
        format!(
            "@@ -{} +{} @@",
            span(self.old_start, self.old_lines),
            span(self.new_start, self.new_lines)
        )
    }
}

/// One hunk: a run of changed lines with their context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hunk {
    /// 1-based first line in the old file, and how many lines it spans.
    pub old_start: usize,
    pub old_lines: usize,
    pub new_start: usize,
    pub new_lines: usize,
    /// The hunk's lines as a unified diff writes them (` `, `-`, `+`),
    /// without line endings.
    pub lines: Vec<String>,
    #[serde(skip)]
    old: Range<usize>,
    #[serde(skip)]
    new: Range<usize>,
}

/// What a line of a patch is (see [`FileChange::patch_lines`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchLine {
    /// `diff --git a/… b/…`: a file starts.
    File,
    /// What happens to the file, notes, the `---`/`+++` names.
    Meta,
    /// `@@ -a,b +c,d @@`: a hunk starts.
    Hunk,
    Context,
    Added,
    Removed,
}

/// A proposed change of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// As the person sees it (relative to the workspace).
    pub path: String,
    pub kind: ChangeKind,
    /// SHA-256 of the content the hunks were computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_hash: Option<String>,
    pub hunks: Vec<Hunk>,
    /// What the lines of a diff do not show: line endings that change,
    /// a final newline added or removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Where a renamed file was (as the person sees it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(skip)]
    file: PathBuf,
    #[serde(skip)]
    from_file: Option<PathBuf>,
    #[serde(skip)]
    old: Vec<String>,
    #[serde(skip)]
    new: Vec<String>,
}

/// The unified diff's mark of a last line without a line ending.
pub const NO_NEWLINE: &str = "\\ No newline at end of file";

/// What a diff's lines leave unseen: a change of line endings across the
/// file, a final newline added or taken away.
fn notes(old: &[String], new: &[String], existed: bool) -> Vec<String> {
    let mut notes = Vec::new();
    let crlf = |lines: &[String]| lines.iter().filter(|l| l.ends_with("\r\n")).count();
    let lf = |lines: &[String]| lines.iter().filter(|l| l.ends_with('\n')).count();
    let style = |lines: &[String]| match (crlf(lines), lf(lines)) {
        (_, 0) => None,
        (0, _) => Some("LF"),
        (c, n) if c == n => Some("CRLF"),
        _ => Some("mixed"),
    };
    if let (true, Some(a), Some(b)) = (existed, style(old), style(new))
        && a != b
    {
        notes.push(format!("line endings change: {a} → {b}"));
    }
    let ends = |lines: &[String]| lines.last().is_none_or(|l| l.ends_with('\n'));
    match (existed && !old.is_empty(), ends(old), ends(new)) {
        (true, true, false) => notes.push("the final newline is removed".into()),
        (true, false, true) => notes.push("a final newline is added".into()),
        (false, _, false) => notes.push("no newline at the end of the file".into()),
        _ => {}
    }
    notes
}

/// SHA-256 of `bytes`, in hex.
pub fn hash(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Lines with their endings.
fn lines(text: &str) -> Vec<String> {
    text.split_inclusive('\n').map(str::to_string).collect()
}

impl FileChange {
    /// The change that turns `old` (nothing: a new file) into `new` at
    /// `file`, shown as `path`.
    pub fn new(path: &str, file: PathBuf, old: Option<&str>, new: &str) -> Self {
        let old_lines = lines(old.unwrap_or(""));
        let new_lines = lines(new);
        let deadline = Instant::now() + Duration::from_millis(500);
        // A huge file gives a coarser diff, never a stalled call.
        let ops = similar::capture_diff_slices_deadline(
            similar::Algorithm::Myers,
            &old_lines,
            &new_lines,
            Some(deadline),
        );
        let mut hunks = Vec::new();
        for group in similar::group_diff_ops(ops, CONTEXT) {
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            let old_range = first.old_range().start..last.old_range().end;
            let new_range = first.new_range().start..last.new_range().end;
            // A hunk whose removed and added lines end differently
            // (CRLF for LF) shows each changed line's carriage return.
            let ending = |l: &String| l.ends_with("\r\n");
            let mut endings = group
                .iter()
                .filter(|op| op.tag() != similar::DiffTag::Equal)
                .flat_map(|op| {
                    old_lines[op.old_range()]
                        .iter()
                        .chain(&new_lines[op.new_range()])
                        .map(ending)
                });
            let mark_cr = endings
                .next()
                .is_some_and(|first| endings.any(|e| e != first));
            let mut shown = Vec::new();
            for op in &group {
                for (tag, range, side) in [
                    ('-', op.old_range(), &old_lines),
                    ('+', op.new_range(), &new_lines),
                ] {
                    let tag = if op.tag() == similar::DiffTag::Equal {
                        if tag == '+' {
                            continue;
                        }
                        ' '
                    } else {
                        tag
                    };
                    for l in &side[range] {
                        let text = l.strip_suffix('\n').unwrap_or(l);
                        let (text, cr) = match text.strip_suffix('\r') {
                            Some(t) if l.ends_with('\n') => (t, true),
                            _ => (text, false),
                        };
                        let cr = if cr && mark_cr && tag != ' ' {
                            "␍"
                        } else {
                            ""
                        };
                        shown.push(format!("{tag}{}{cr}", visible::diff_line(text)));
                        if !l.ends_with('\n') {
                            shown.push(NO_NEWLINE.to_string());
                        }
                    }
                }
            }
            hunks.push(Hunk {
                old_start: old_range.start + usize::from(!old_range.is_empty()),
                old_lines: old_range.len(),
                new_start: new_range.start + usize::from(!new_range.is_empty()),
                new_lines: new_range.len(),
                lines: shown,
                old: old_range,
                new: new_range,
            });
        }
        Self {
            path: path.to_string(),
            kind: if old.is_some() {
                ChangeKind::Modify
            } else {
                ChangeKind::Create
            },
            base_hash: old.map(|o| hash(o.as_bytes())),
            notes: notes(&old_lines, &new_lines, old.is_some()),
            hunks,
            from: None,
            file,
            from_file: None,
            old: old_lines,
            new: new_lines,
        }
    }

    /// Deleting `file` (shown as `path`), whose content is `old`.
    pub fn delete(path: &str, file: PathBuf, old: &str) -> Self {
        let mut c = Self::new(path, file, Some(old), "");
        c.kind = ChangeKind::Delete;
        c.notes.clear();
        c
    }

    /// Moving the file at `from_file` (shown as `from`), whose content is
    /// `content`, to `file` (shown as `path`).
    pub fn rename(
        from: &str,
        from_file: PathBuf,
        path: &str,
        file: PathBuf,
        content: &str,
    ) -> Self {
        let mut c = Self::new(path, file, Some(content), content);
        c.kind = ChangeKind::Rename;
        c.from = Some(from.to_string());
        c.from_file = Some(from_file);
        c
    }

    /// The file it changes (where a renamed file goes).
    pub fn file(&self) -> &std::path::Path {
        &self.file
    }

    /// Where a renamed file is now.
    pub fn from_file(&self) -> Option<&std::path::Path> {
        self.from_file.as_deref()
    }

    /// Whether the person can edit the new content before it is written
    /// (a deletion or a move has none to edit).
    pub fn editable(&self) -> bool {
        matches!(self.kind, ChangeKind::Create | ChangeKind::Modify)
    }

    /// The file as the whole change leaves it.
    pub fn new_text(&self) -> String {
        self.new.concat()
    }

    /// The same file, changed to `new` instead (the person edited the
    /// proposal): computed from the same content, with the same hash.
    pub fn with_new(&self, new: &str) -> Self {
        let old = self.base_hash.as_ref().map(|_| self.old.concat());
        let mut c = Self::new(&self.path, self.file.clone(), old.as_deref(), new);
        c.base_hash.clone_from(&self.base_hash);
        c
    }

    /// As a unified diff (its `@@` headers in the order of `hunks`).
    pub fn unified(&self) -> String {
        self.unified_of(&vec![true; self.hunks.len()])
    }

    /// The change with only the hunks `include` keeps.
    pub fn keeping(&self, include: &[bool]) -> FileChange {
        let mut kept = self.clone();
        kept.hunks = self
            .hunks
            .iter()
            .zip(include)
            .filter(|(_, keep)| **keep)
            .map(|(h, _)| h.clone())
            .collect();
        kept
    }

    /// The hunks `include` keeps, as a unified diff.
    pub fn unified_of(&self, include: &[bool]) -> String {
        let (from, to) = self.sides();
        let mut out = format!("--- {from}\n+++ {to}\n");
        for (h, _) in self.hunks.iter().zip(include).filter(|(_, keep)| **keep) {
            out.push_str(&h.header());
            out.push('\n');
            for l in &h.lines {
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }

    /// The two names a unified diff gives the file (`a/…`, `b/…`,
    /// `/dev/null` for a side that does not exist), shown safely.
    fn sides(&self) -> (String, String) {
        let path = visible::name(&self.path);
        let from = self.from.as_deref().map(visible::name);
        match self.kind {
            ChangeKind::Create => ("/dev/null".to_string(), format!("b/{path}")),
            ChangeKind::Delete => (format!("a/{path}"), "/dev/null".to_string()),
            _ => (
                format!("a/{}", from.as_deref().unwrap_or(&path)),
                format!("b/{path}"),
            ),
        }
    }

    /// Lines the change adds and removes, as `git diff --stat` counts
    /// them.
    pub fn counts(&self) -> (usize, usize) {
        let mut counts = (0, 0);
        for l in self.hunks.iter().flat_map(|h| &h.lines) {
            match l.as_bytes().first() {
                Some(b'+') => counts.0 += 1,
                Some(b'-') => counts.1 += 1,
                _ => {}
            }
        }
        counts
    }

    /// The whole change as `git diff` writes it: the `diff --git` line,
    /// what happens to the file (new, deleted, renamed), then its hunks;
    /// what the lines do not show follows as `#` notes.
    pub fn git_patch(&self) -> String {
        self.patch_lines()
            .into_iter()
            .map(|(_, text)| text + "\n")
            .collect()
    }

    /// [`Self::git_patch`] line by line, each with what it is, for a view
    /// that draws or steps through them (no text is parsed back).
    pub fn patch_lines(&self) -> Vec<(PatchLine, String)> {
        let path = visible::name(&self.path);
        let from = self.from.as_deref().map(visible::name);
        let mut out = vec![(
            PatchLine::File,
            format!("diff --git a/{} b/{path}", from.as_deref().unwrap_or(&path)),
        )];
        match (self.kind, &from) {
            (ChangeKind::Create, _) => out.push((PatchLine::Meta, "new file".into())),
            (ChangeKind::Delete, _) => out.push((PatchLine::Meta, "deleted file".into())),
            (ChangeKind::Rename, Some(from)) => {
                out.push((PatchLine::Meta, format!("rename from {from}")));
                out.push((PatchLine::Meta, format!("rename to {path}")));
            }
            _ => {}
        }
        out.extend(
            self.notes
                .iter()
                .map(|note| (PatchLine::Meta, format!("# {note}"))),
        );
        if self.hunks.is_empty() {
            return out;
        }
        let (old, new) = self.sides();
        out.push((PatchLine::Meta, format!("--- {old}")));
        out.push((PatchLine::Meta, format!("+++ {new}")));
        for h in &self.hunks {
            out.push((PatchLine::Hunk, h.header()));
            for l in &h.lines {
                let kind = match l.as_bytes().first() {
                    Some(b'+') => PatchLine::Added,
                    Some(b'-') => PatchLine::Removed,
                    _ => PatchLine::Context,
                };
                out.push((kind, l.clone()));
            }
        }
        out
    }

    /// The file's text with the hunks `include` keeps applied.
    pub fn apply(&self, include: &[bool]) -> String {
        let mut out = String::new();
        let mut at = 0;
        for (i, h) in self.hunks.iter().enumerate() {
            if !include.get(i).copied().unwrap_or(false) {
                continue;
            }
            out.extend(self.old[at..h.old.start].iter().map(String::as_str));
            out.extend(self.new[h.new.clone()].iter().map(String::as_str));
            at = h.old.end;
        }
        out.extend(self.old[at..].iter().map(String::as_str));
        out
    }
}

/// `start,len` as a unified diff writes a range.
fn span(start: usize, len: usize) -> String {
    if len == 1 {
        start.to_string()
    } else {
        format!("{start},{len}")
    }
}

/// Every text of the change that comes from the file or the model (its
/// paths, the hunks' lines, the notes). The file's own text, which is what
/// is written, is not among them.
impl Redact for FileChange {
    fn redact(&mut self, s: &dyn Scrub) {
        self.path.redact(s);
        self.from.redact(s);
        for line in self.hunks.iter_mut().flat_map(|h| &mut h.lines) {
            line.redact(s);
        }
        self.notes.redact(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(old: Option<&str>, new: &str) -> FileChange {
        FileChange::new("f.txt", PathBuf::from("/nowhere/f.txt"), old, new)
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn a_git_patch_says_what_happens_to_the_file() {
        let moved = FileChange::rename(
            "a.md",
            "/w/a.md".into(),
            "b/a.md",
            "/w/b/a.md".into(),
            "x\n",
        );
        assert_eq!(
            moved.git_patch(),
            "diff --git a/a.md b/b/a.md\nrename from a.md\nrename to b/a.md\n"
        );
        let gone = FileChange::delete("old.txt", "/w/old.txt".into(), "bye\n");
        assert_eq!(
            gone.git_patch(),
            "diff --git a/old.txt b/old.txt\ndeleted file\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
        );
        let made = change(None, "hi");
        assert_eq!(
            made.git_patch(),
            "diff --git a/f.txt b/f.txt\nnew file\n# no newline at the end of the file\n\
             --- /dev/null\n+++ b/f.txt\n@@ -0,0 +1 @@\n+hi\n\\ No newline at end of file\n"
        );
        // A name that hides text shows it.
        let hidden = FileChange::new("a\u{202e}b", "/w/x".into(), None, "x\n");
        assert!(
            hidden.git_patch().starts_with("diff --git a/a⟨U+202E⟩b"),
            "{}",
            hidden.git_patch()
        );
    }

    #[test]
    fn every_subset_of_hunks_applies_exactly() {
        let old = numbered(40);
        let new = old
            .replace("line 3\n", "line three\n")
            .replace("line 20\n", "")
            .replace("line 38\n", "line 38\nline 38b\n");
        let c = change(Some(&old), &new);
        assert_eq!(c.hunks.len(), 3);
        assert_eq!(c.apply(&[true, true, true]), new);
        assert_eq!(c.apply(&[false, false, false]), old);
        let first = c.apply(&[true, false, false]);
        assert!(first.contains("line three\n") && first.contains("line 20\n"));
        let last = c.apply(&[false, false, true]);
        assert!(last.contains("line 38b\n") && last.contains("line 3\n"));
        let middle = c.apply(&[false, true, false]);
        assert!(!middle.contains("line 20\n") && middle.contains("line 3\n"));
        assert!(c.unified().matches("\n@@ ").count() == 3, "{}", c.unified());
    }

    #[test]
    fn adjacent_changes_share_a_hunk_and_endings_are_kept() {
        let old = "a\r\nb\r\nc\r\nd\r\n";
        let new = "a\r\nB\r\nc\r\nD\r\n";
        let c = change(Some(old), new);
        assert_eq!(c.hunks.len(), 1, "close changes are one hunk");
        assert_eq!(c.apply(&[true]), new);
        assert_eq!(c.hunks[0].lines[0], " a", "no \\r in what is shown");
        // No newline at the end, on either side.
        let c = change(Some("x\ny"), "x\nz");
        assert_eq!(c.apply(&[true]), "x\nz");
        assert_eq!(c.apply(&[false]), "x\ny");
    }

    #[test]
    fn what_lines_do_not_show_is_shown() {
        // CRLF to LF: the same words, different endings.
        let c = change(Some("a\r\nb\r\n"), "a\nb\n");
        assert_eq!(c.hunks[0].lines, ["-a␍", "-b␍", "+a", "+b"]);
        assert_eq!(c.notes, ["line endings change: CRLF → LF"]);
        assert_eq!(c.apply(&[true]), "a\nb\n");
        // Within a CRLF file, a CRLF edit needs no marks.
        let c = change(Some("a\r\nb\r\n"), "a\r\nB\r\n");
        assert_eq!(c.hunks[0].lines, [" a", "-b", "+B"]);
        assert!(c.notes.is_empty(), "{:?}", c.notes);
        // The final newline, taken away and added.
        let c = change(Some("x\ny\n"), "x\ny");
        assert_eq!(c.hunks[0].lines, [" x", "-y", "+y", NO_NEWLINE]);
        assert_eq!(c.notes, ["the final newline is removed"]);
        let c = change(Some("x\ny"), "x\ny\n");
        assert_eq!(c.hunks[0].lines, [" x", "-y", NO_NEWLINE, "+y"]);
        assert_eq!(c.notes, ["a final newline is added"]);
        // Invisible characters are named, tabs kept.
        let c = change(Some("let a = 1;\n"), "let a\u{200B} = 1;\t// \u{202E}x\n");
        assert_eq!(c.hunks[0].lines[1], "+let a⟨U+200B⟩ = 1;\t// ⟨U+202E⟩x");
        assert_eq!(c.apply(&[true]), "let a\u{200B} = 1;\t// \u{202E}x\n");
    }

    #[test]
    fn a_name_cannot_add_lines_to_the_diff() {
        let c = FileChange::new(
            "a\n+++ b/other\n@@ -1 +1 @@",
            PathBuf::from("/nowhere/x"),
            None,
            "x\n",
        );
        let diff = c.unified();
        assert_eq!(
            diff.lines().filter(|l| l.starts_with("+++")).count(),
            1,
            "{diff}"
        );
        assert_eq!(
            diff.lines().filter(|l| l.starts_with("@@")).count(),
            1,
            "{diff}"
        );
    }

    #[test]
    fn overlapping_context_joins_hunks_and_each_part_still_applies() {
        let old = numbered(40);
        // Lines 10 and 16: their contexts (3 lines each) touch: one hunk.
        let joined = old
            .replace("line 10\n", "line ten\n")
            .replace("line 16\n", "line sixteen\n");
        let c = change(Some(&old), &joined);
        assert_eq!(c.hunks.len(), 1, "{}", c.unified());
        assert_eq!(c.apply(&[true]), joined);
        // Lines 10 and 18: apart, two hunks, each applies alone.
        let apart = old
            .replace("line 10\n", "line ten\n")
            .replace("line 18\n", "line eighteen\n");
        let c = change(Some(&old), &apart);
        assert_eq!(c.hunks.len(), 2, "{}", c.unified());
        assert_eq!(
            c.apply(&[true, false]),
            old.replace("line 10\n", "line ten\n")
        );
        assert_eq!(
            c.apply(&[false, true]),
            old.replace("line 18\n", "line eighteen\n")
        );
        // The first and the last line of the file.
        let ends = old
            .replace("line 1\n", "first\n")
            .replace("line 40\n", "last\n");
        let c = change(Some(&old), &ends);
        assert_eq!(c.hunks.len(), 2);
        assert!(c.apply(&[true, false]).starts_with("first\n"));
        assert!(c.apply(&[false, true]).ends_with("line 39\nlast\n"));
    }

    #[test]
    fn deletions_and_moves_are_changes_too() {
        let d = FileChange::delete("old.txt", PathBuf::from("/w/old.txt"), "a\nb\n");
        assert_eq!(d.kind, ChangeKind::Delete);
        assert_eq!(d.hunks.len(), 1);
        assert_eq!(d.hunks[0].lines, ["-a", "-b"]);
        assert_eq!(d.base_hash, Some(hash(b"a\nb\n")));
        assert!(
            d.unified()
                .starts_with("--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n")
        );
        assert!(!d.editable());
        let r = FileChange::rename(
            "a.rs",
            PathBuf::from("/w/a.rs"),
            "src/b.rs",
            PathBuf::from("/w/src/b.rs"),
            "fn a() {}\n",
        );
        assert_eq!(r.kind, ChangeKind::Rename);
        assert!(r.hunks.is_empty());
        assert_eq!(r.unified(), "--- a/a.rs\n+++ b/src/b.rs\n");
        assert_eq!(r.from_file(), Some(std::path::Path::new("/w/a.rs")));
        assert_eq!(r.apply(&[]), "fn a() {}\n");
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["kind"], "rename");
        assert_eq!(json["from"], "a.rs");
    }

    #[test]
    fn a_new_file_is_one_hunk_from_nothing() {
        let c = change(None, "hello\nworld\n");
        assert_eq!(c.kind, ChangeKind::Create);
        assert_eq!(c.base_hash, None);
        assert_eq!(c.hunks.len(), 1);
        assert_eq!(c.apply(&[true]), "hello\nworld\n");
        assert!(
            c.unified()
                .starts_with("--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1,2 @@\n+hello\n")
        );
    }
}

/// Properties over arbitrary files and edits: what is written is what
/// the kept hunks say, for every choice of hunks.
#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Text of lines from a small alphabet (so edits overlap), with or
    /// without a last line ending, and CRLF or non-ASCII lines among them.
    fn text() -> impl Strategy<Value = String> {
        (
            proptest::collection::vec(
                prop_oneof![
                    "[ab]{0,2}",
                    Just("é ✓".to_string()),
                    Just("x\r".to_string())
                ],
                0..30,
            ),
            any::<bool>(),
        )
            .prop_map(|(lines, last)| {
                let mut t = lines.join("\n");
                if last && !t.is_empty() {
                    t.push('\n');
                }
                t
            })
    }

    /// `old` patched with the hunks `include` keeps, read from the hunks
    /// as shown (their numbers and their ` `/`-`/`+` lines), line endings
    /// aside.
    fn patched(old: &str, change: &FileChange, include: &[bool]) -> Vec<String> {
        let old: Vec<&str> = old.lines().collect();
        let mut out: Vec<String> = Vec::new();
        let mut at = 0usize;
        for (h, keep) in change.hunks.iter().zip(include) {
            if !keep {
                continue;
            }
            let start = h.old_start.saturating_sub(usize::from(h.old_lines > 0));
            out.extend(
                old[at..start]
                    .iter()
                    .map(|s| visible::diff_line(s).into_owned()),
            );
            for l in &h.lines {
                if let (" " | "+", rest) = l.split_at(1) {
                    out.push(rest.trim_end_matches('␍').to_string());
                }
            }
            at = start + h.old_lines;
        }
        out.extend(
            old[at.min(old.len())..]
                .iter()
                .map(|s| visible::diff_line(s).into_owned()),
        );
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: if std::env::var_os("PROPTEST_CASES").is_some() {
                ProptestConfig::default().cases
            } else {
                128
            },
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn what_is_written_is_what_the_kept_hunks_show(
            old in proptest::option::of(text()),
            new in text(),
            picks in proptest::collection::vec(any::<bool>(), 0..40),
        ) {
            let change = FileChange::new("f.txt", PathBuf::from("/nowhere/f.txt"), old.as_deref(), &new);
            let all = vec![true; change.hunks.len()];
            let none = vec![false; change.hunks.len()];
            let old_text = old.clone().unwrap_or_default();
            prop_assert_eq!(change.apply(&all), new.clone());
            prop_assert_eq!(change.apply(&none), old_text.clone());
            let include: Vec<bool> = (0..change.hunks.len())
                .map(|i| picks.get(i).copied().unwrap_or(false))
                .collect();
            let written = change.apply(&include);
            let shown = patched(&old_text, &change, &include);
            // As shown: each line as the diff shows it.
            let written_lines: Vec<String> = written
                .lines()
                .map(|l| visible::diff_line(l).into_owned())
                .collect();
            prop_assert_eq!(written_lines, shown);
            // The diff text shown never panics and names the hunks kept.
            let unified = change.unified_of(&include);
            prop_assert_eq!(
                unified.matches("\n@@ ").count(),
                include.iter().filter(|k| **k).count()
            );
        }
    }
}
