//! Previews of file changes, as unified diffs, for the approval dialog and
//! the `approval_requested` event. Computed with `similar`, with a time
//! limit so a huge file cannot stall a call.

use std::time::Duration;

use similar::TextDiff;

/// Context lines around each change.
const CONTEXT: usize = 3;

/// The unified diff that turns `old` (or nothing, for a new file) into `new`.
pub fn unified_diff(path: &str, old: Option<&str>, new: &str) -> String {
    let before = old.unwrap_or("");
    let diff = TextDiff::configure()
        .timeout(Duration::from_millis(500))
        .diff_lines(before, new);
    let from = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_string()
    };
    diff.unified_diff()
        .context_radius(CONTEXT)
        .header(&from, &format!("b/{path}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs_show_hunks_with_context() {
        let d = unified_diff("a.txt", Some("one\ntwo\nthree\n"), "one\n2\nthree\n");
        assert!(
            d.starts_with("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n"),
            "{d}"
        );
        assert!(d.contains("-two\n+2\n"), "{d}");
    }

    #[test]
    fn new_files_come_from_dev_null() {
        let d = unified_diff("n.txt", None, "hello\n");
        assert!(
            d.starts_with("--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+hello\n"),
            "{d}"
        );
    }
}
