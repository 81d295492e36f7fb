//! Writing a file change approved in whole or in part: exactly the hunks
//! kept, and only to the content the change was computed from (a file
//! changed since the preview is refused, with nothing written).

use serde_json::{Value, json};

pub use crate::protocol::change::{ChangeKind, FileChange, Hunk, hash};

use super::builtin::atomic::write_atomic;
use super::spec::{ToolContext, ToolError};

/// Writes `change` with the hunks `include` keeps, if the file is still
/// what the change was computed from; the result says which hunks were
/// left out.
///
/// The result reads as the tool's own (`write_file`: created or
/// overwrote, bytes; `edit_file`: edited at a line).
pub async fn apply(
    tool: &str,
    change: &FileChange,
    include: &[bool],
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let edit = tool == "edit_file";
    // The path is checked again as it is now: a directory on the way
    // swapped for a link since the preview is refused.
    let again = ctx
        .workspace
        .resolve_for_write(&change.path)
        .map_err(ToolError::from_path)?;
    if again != change.file() {
        return Err(ToolError::ExecutionFailed(format!(
            "{} now leads elsewhere than when the change was shown; nothing was written",
            change.path
        )));
    }
    let kept = include.iter().filter(|k| **k).count();
    let change = change.clone();
    let include = include.to_vec();
    let cancel = ctx.cancel.clone();
    let mut v = tokio::task::spawn_blocking(move || {
        let shown = change.path.clone();
        let now = match std::fs::read(change.file()) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(ToolError::from_io(&shown, &e)),
        };
        let stale = match (&change.base_hash, &now) {
            (Some(base), Some(bytes)) => *base != hash(bytes),
            (None, None) => false,
            _ => true,
        };
        if stale {
            return Err(ToolError::ExecutionFailed(format!(
                "{shown} changed after the change was shown for approval; nothing was \
                 written. Read it again and propose the change anew."
            )));
        }
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled(format!(
                "interrupted before writing {shown}; nothing was written"
            )));
        }
        let text = change.apply(&include);
        if let Some(parent) = change.file().parent() {
            std::fs::create_dir_all(parent).map_err(|e| ToolError::from_io(&shown, &e))?;
        }
        let created = write_atomic(change.file(), text.as_bytes())
            .map_err(|e| ToolError::from_io(&shown, &e))?;
        let left_out: Vec<Value> = change
            .hunks
            .iter()
            .zip(&include)
            .filter(|(_, k)| !**k)
            .map(|(h, _)| {
                json!({
                    "old_lines": format!("{}-{}", h.old_start, h.old_start + h.old_lines.saturating_sub(1)),
                    "new_lines": format!("{}-{}", h.new_start, h.new_start + h.new_lines.saturating_sub(1)),
                })
            })
            .collect();
        let total = change.hunks.len();
        let bytes = text.len();
        // The first line the kept hunks change, in the file as written.
        let line = change
            .hunks
            .iter()
            .zip(&include)
            .find(|(_, k)| **k)
            .map_or(1, |(h, _)| {
                let context = h.lines.iter().take_while(|l| l.starts_with(' ')).count();
                (h.new_start + context).max(1)
            });
        let mut message = if edit {
            format!("edited {shown} at line {line}")
        } else if created {
            format!("created {shown} ({bytes} bytes)")
        } else {
            format!("overwrote {shown} ({bytes} bytes)")
        };
        if !left_out.is_empty() {
            message.push_str(&format!(
                "; only {kept} of {total} hunks: the person left the others out (see \
                 not_applied; line ranges of your proposal, old file and new), and the file \
                 has only what was kept"
            ));
        }
        let mut v = if edit {
            json!({"message": message, "path": shown, "line": line, "replacements": 1})
        } else {
            json!({"message": message, "path": shown, "bytes": bytes, "created": created})
        };
        v["hunks_applied"] = json!(kept);
        if !left_out.is_empty() {
            v["not_applied"] = json!(left_out);
        }
        Ok((v, change.file().to_path_buf()))
    })
    .await
    .map_err(|e| ToolError::Internal(format!("writing the change failed: {e}")))??;
    super::builtin::disarm_written(ctx, &v.1, &mut v.0).await;
    Ok(v.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[tokio::test]
    async fn a_file_changed_since_the_preview_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        std::fs::write(&file, "one\ntwo\n").unwrap();
        let c = FileChange::new("f.txt", file.clone(), Some("one\ntwo\n"), "one\n2\n");
        std::fs::write(&file, "one\ntwo\nthree (the person)\n").unwrap();
        let ws = std::sync::Arc::new(crate::policy::Workspace::new(dir.path()).unwrap());
        let ctx = ToolContext::standalone(ws);
        let e = apply("write_file", &c, &[true], &ctx).await.unwrap_err();
        assert!(
            e.to_string().contains("changed after the change was shown"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "one\ntwo\nthree (the person)\n"
        );
        // Unchanged: the kept hunks are written, the others named.
        std::fs::write(&file, "one\ntwo\n").unwrap();
        let v = apply("write_file", &c, &[true], &ctx).await.unwrap();
        assert_eq!(v["hunks_applied"], 1);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\n2\n");
        // A file created since a "create" preview is refused too.
        let n = dir.path().join("n.txt");
        let c = FileChange::new("n.txt", n.clone(), None, "new\n");
        std::fs::write(&n, "the person's\n").unwrap();
        assert!(apply("write_file", &c, &[true], &ctx).await.is_err());
        assert_eq!(std::fs::read_to_string(&n).unwrap(), "the person's\n");
    }

    #[tokio::test]
    async fn hunks_left_out_are_named_for_the_model() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        let old = numbered(30);
        std::fs::write(&file, &old).unwrap();
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 25\n", "line 25!\n");
        let c = FileChange::new("f.txt", file.clone(), Some(&old), &new);
        let ws = std::sync::Arc::new(crate::policy::Workspace::new(dir.path()).unwrap());
        let v = apply(
            "write_file",
            &c,
            &[true, false],
            &ToolContext::standalone(ws),
        )
        .await
        .unwrap();
        assert_eq!(v["hunks_applied"], 1);
        assert_eq!(v["not_applied"][0]["old_lines"], "22-28");
        assert!(v["message"].as_str().unwrap().contains("only 1 of 2 hunks"));
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("line two\n") && text.contains("line 25\n"));
    }
}
