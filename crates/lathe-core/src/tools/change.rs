//! Writing a file change approved in whole or in part: exactly the hunks
//! kept, and only to the content the change was computed from (a file
//! changed since the preview is refused, with nothing written).

use std::path::Path;

use serde_json::{Value, json};

use crate::protocol::change::{ChangeKind, FileChange, hash};

use super::fs::atomic::write_atomic;
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
    match change.kind {
        ChangeKind::Create | ChangeKind::Modify => write(tool, change, include, ctx).await,
        ChangeKind::Delete | ChangeKind::Rename => {
            let change = change.clone();
            let ws = ctx.workspace.clone();
            let cancel = ctx.cancel.clone();
            let moved = change.kind == ChangeKind::Rename;
            let to = change.file().to_path_buf();
            let mut v = tokio::task::spawn_blocking(move || {
                if change.kind == ChangeKind::Delete {
                    delete(&change, &ws, &cancel)
                } else {
                    rename(&change, &ws, &cancel)
                }
            })
            .await
            .map_err(|e| ToolError::Internal(format!("applying the change failed: {e}")))??;
            // A file moved into place is a file written there: a git
            // directory it completes or arms is disarmed, as after a write.
            if moved {
                super::fs::disarm_written(ctx, &to, &mut v).await;
            }
            Ok(v)
        }
    }
}

/// Refuses a file whose content is no longer what the change was computed
/// from (`what` is done to it, e.g. "deleted").
fn unchanged_since(
    change: &FileChange,
    file: &Path,
    shown: &str,
    what: &str,
) -> Result<u64, ToolError> {
    let (bytes, _) = super::fs::regular::read_capped(file, shown, u64::MAX)?;
    if change.base_hash.as_deref() != Some(hash(&bytes).as_str()) {
        return Err(ToolError::ExecutionFailed(format!(
            "{shown} changed after the change was shown for approval; nothing was {what}. \
             Read it again and propose the change anew."
        )));
    }
    Ok(bytes.len() as u64)
}

fn delete(
    change: &FileChange,
    ws: &crate::policy::Workspace,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<Value, ToolError> {
    let (file, shown) = super::fs::regular::own_file(ws, &change.path, "delete_file")?;
    if file != change.file() {
        return Err(ToolError::ExecutionFailed(format!(
            "{shown} now leads elsewhere than when the change was shown; nothing was deleted"
        )));
    }
    let bytes = unchanged_since(change, &file, &shown, "deleted")?;
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled(format!(
            "interrupted before deleting {shown}; nothing was deleted"
        )));
    }
    std::fs::remove_file(&file).map_err(|e| ToolError::from_io(&shown, &e))?;
    Ok(json!({
        "message": format!("deleted {shown} ({bytes} bytes)"),
        "path": shown,
        "deleted": true,
    }))
}

fn rename(
    change: &FileChange,
    ws: &crate::policy::Workspace,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<Value, ToolError> {
    let from_shown = change.from.clone().unwrap_or_default();
    let (from, _) = super::fs::regular::own_file(ws, &from_shown, "move_file")?;
    let to = ws
        .resolve_for_write(&change.path)
        .map_err(ToolError::from_path)?;
    if Some(from.as_path()) != change.from_file() || to != change.file() {
        return Err(ToolError::ExecutionFailed(format!(
            "{from_shown} or {} now leads elsewhere than when the move was shown; nothing \
             was moved",
            change.path
        )));
    }
    unchanged_since(change, &from, &from_shown, "moved")?;
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled(format!(
            "interrupted before moving {from_shown}; nothing was moved"
        )));
    }
    super::fs::move_no_replace(&from, &to, &change.path)?;
    Ok(json!({
        "message": format!("moved {from_shown} to {}", change.path),
        "from": from_shown,
        "path": change.path,
    }))
}

async fn write(
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
    // In an editor that writes: the buffer is what must not have changed
    // since the change was shown, and the editor writes the result.
    let editor = ctx.workspace.editor();
    let through_editor = editor.writes();
    // A file that is there must be read from the editor (its buffer may
    // differ from the disk): if it cannot be, nothing is written. A file
    // not there yet is created, whatever the editor says of it.
    let exists = std::fs::symlink_metadata(change.file()).is_ok();
    let buffer = if through_editor && exists {
        match editor.read(change.file()).await {
            Some(Ok(text)) => Some(text),
            Some(Err(e)) => {
                return Err(ToolError::ExecutionFailed(format!(
                    "the editor could not read {} ({e}); nothing was written",
                    change.path
                )));
            }
            None => None,
        }
    } else {
        None
    };
    let change = change.clone();
    let include = include.to_vec();
    let cancel = ctx.cancel.clone();
    let mut v = tokio::task::spawn_blocking(move || {
        let shown = change.path.clone();
        let now = match (buffer, std::fs::read(change.file())) {
            (Some(text), _) => Some(text.into_bytes()),
            (None, Ok(bytes)) => Some(bytes),
            (None, Err(e)) if e.kind() == std::io::ErrorKind::NotFound => None,
            (None, Err(e)) => return Err(ToolError::from_io(&shown, &e)),
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
        if change.kind == ChangeKind::Modify && change.hunks.is_empty() {
            let v = json!({
                "message": format!("no changes: {shown} already holds this content; nothing was written"),
                "path": shown,
                "unchanged": true,
            });
            return Ok((v, change.file().to_path_buf(), None));
        }
        let text = change.apply(&include);
        if let Some(parent) = change.file().parent() {
            std::fs::create_dir_all(parent).map_err(|e| ToolError::from_io(&shown, &e))?;
        }
        let created = if through_editor {
            now.is_none()
        } else {
            write_atomic(change.file(), text.as_bytes())
                .map_err(|e| ToolError::from_io(&shown, &e))?
        };
        let v = written(edit, &shown, &change, &include, text.len(), created);
        let through = through_editor.then_some(text);
        Ok((v, change.file().to_path_buf(), through))
    })
    .await
    .map_err(|e| ToolError::Internal(format!("writing the change failed: {e}")))??;
    if let Some(text) = &v.2 {
        let shown = ctx.workspace.display_relative(&v.1);
        super::fs::write_through_editor(ctx, &v.1, &shown, text).await?;
    }
    super::fs::disarm_written(ctx, &v.1, &mut v.0).await;
    Ok(v.0)
}

/// What a written change tells the model: where it was written, and the
/// hunks the person left out.
fn written(
    edit: bool,
    shown: &str,
    change: &FileChange,
    include: &[bool],
    bytes: usize,
    created: bool,
) -> Value {
    let kept = include.iter().filter(|k| **k).count();
    let left_out: Vec<Value> = change
        .hunks
        .iter()
        .zip(include)
        .filter(|(_, k)| !**k)
        .map(|(h, _)| {
            json!({
                "old_lines": format!("{}-{}", h.old_start, h.old_start + h.old_lines.saturating_sub(1)),
                "new_lines": format!("{}-{}", h.new_start, h.new_start + h.new_lines.saturating_sub(1)),
            })
        })
        .collect();
    let total = change.hunks.len();
    // The first line the kept hunks change, in the file as written.
    let line = change
        .hunks
        .iter()
        .zip(include)
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
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[tokio::test]
    async fn through_an_editor_the_buffer_is_checked_and_written_or_nothing_is() {
        use crate::policy::editor::{Editor, EditorFiles};
        #[derive(Default)]
        struct Fake {
            buffers: std::sync::Mutex<std::collections::HashMap<std::path::PathBuf, String>>,
            written: std::sync::Mutex<Vec<(std::path::PathBuf, String)>>,
        }
        #[async_trait::async_trait]
        impl EditorFiles for Fake {
            fn reads(&self) -> bool {
                true
            }
            fn writes(&self) -> bool {
                true
            }
            async fn read(&self, path: &Path) -> Result<String, String> {
                self.buffers
                    .lock()
                    .unwrap()
                    .get(path)
                    .cloned()
                    .ok_or_else(|| "no such buffer".to_string())
            }
            async fn write(&self, path: &Path, text: &str) -> Result<(), String> {
                self.written
                    .lock()
                    .unwrap()
                    .push((path.to_path_buf(), text.to_string()));
                Ok(())
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let file = root.join("f.txt");
        std::fs::write(&file, "one\n").unwrap();
        let fake = std::sync::Arc::new(Fake::default());
        let ws = std::sync::Arc::new(
            crate::policy::Workspace::new(&root)
                .unwrap()
                .with_editor(Editor::new(fake.clone())),
        );
        let ctx = ToolContext::standalone(ws);
        // The editor holds unsaved text: a change made from the disk is
        // stale, nothing is written.
        fake.buffers
            .lock()
            .unwrap()
            .insert(file.clone(), "one (unsaved)\n".into());
        let from_disk = FileChange::new("f.txt", file.clone(), Some("one\n"), "1\n");
        let e = apply("write_file", &from_disk, &[true], &ctx)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("changed after"), "{e}");
        // Made from the buffer: written through the editor, not to disk.
        let from_buffer = FileChange::new("f.txt", file.clone(), Some("one (unsaved)\n"), "1\n");
        apply("write_file", &from_buffer, &[true], &ctx)
            .await
            .unwrap();
        assert_eq!(
            fake.written.lock().unwrap().as_slice(),
            &[(file.clone(), "1\n".to_string())]
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\n");
        // The editor cannot read a file that is there: nothing is written.
        fake.buffers.lock().unwrap().clear();
        let e = apply("write_file", &from_disk, &[true], &ctx)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("could not read"), "{e}");
        assert_eq!(fake.written.lock().unwrap().len(), 1);
        // A new file is created through it, whatever it says of it.
        let new = root.join("n.txt");
        let create = FileChange::new("n.txt", new.clone(), None, "new\n");
        apply("write_file", &create, &[true], &ctx).await.unwrap();
        assert_eq!(fake.written.lock().unwrap()[1], (new, "new\n".to_string()));
        // A link put where the file was: not handed to the editor.
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", &file).unwrap();
        fake.buffers
            .lock()
            .unwrap()
            .insert(file.clone(), "one (unsaved)\n".into());
        assert!(
            apply("write_file", &from_buffer, &[true], &ctx)
                .await
                .is_err()
        );
        assert_eq!(fake.written.lock().unwrap().len(), 2);
        // Nor a file larger than an editor holds: read from disk instead.
        let big = root.join("big.log");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(crate::policy::editor::MAX_THROUGH_EDITOR + 1)
            .unwrap();
        fake.buffers.lock().unwrap().insert(big.clone(), "x".into());
        assert!(!crate::policy::editor::fits(&big, false));
        assert!(ctx.workspace.editor().read(&big).await.is_none());
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
        // Deleted since the preview: refused, and nothing is created.
        std::fs::remove_file(&file).unwrap();
        let e = apply("write_file", &c, &[true], &ctx).await.unwrap_err();
        assert!(e.to_string().contains("nothing was"), "{e}");
        assert!(!file.exists(), "a deleted file is not brought back");
        std::fs::write(&file, "one\n2\n").unwrap();
        // Writing what is there already changes nothing, and says so.
        let same = FileChange::new("f.txt", file.clone(), Some("one\n2\n"), "one\n2\n");
        let v = apply("write_file", &same, &[], &ctx).await.unwrap();
        assert_eq!(v["unchanged"], true);
        assert!(
            v["message"].as_str().unwrap().starts_with("no changes"),
            "{v}"
        );
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

#[cfg(test)]
mod delete_and_move_tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::tools::builtin::{DeleteFile, MoveFile};
    use crate::tools::spec::Tool;

    fn setup() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "fn a() {}\n").unwrap();
        let ws = Arc::new(crate::policy::Workspace::new(dir.path()).unwrap());
        (dir, ToolContext::standalone(ws))
    }

    #[tokio::test]
    async fn a_deletion_shows_every_line_and_removes_only_what_was_shown() {
        let (dir, ctx) = setup();
        let c = DeleteFile
            .change(&json!({"path": "src/a.rs"}), &ctx.workspace)
            .unwrap()
            .unwrap();
        assert_eq!(c.kind, ChangeKind::Delete);
        assert_eq!(c.hunks[0].lines, ["-fn a() {}"]);
        // Changed since it was shown: kept.
        std::fs::write(dir.path().join("src/a.rs"), "fn a() { b() }\n").unwrap();
        let e = apply("delete_file", &c, &[true], &ctx).await.unwrap_err();
        assert!(e.to_string().contains("nothing was deleted"), "{e}");
        assert!(dir.path().join("src/a.rs").exists());
        let c = DeleteFile
            .change(&json!({"path": "src/a.rs"}), &ctx.workspace)
            .unwrap()
            .unwrap();
        let v = apply("delete_file", &c, &[true], &ctx).await.unwrap();
        assert_eq!(v["deleted"], true);
        assert!(!dir.path().join("src/a.rs").exists());
    }

    #[tokio::test]
    async fn links_directories_and_the_outside_are_refused() {
        let (dir, ctx) = setup();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x"), "x").unwrap();
        std::os::unix::fs::symlink("src/a.rs", dir.path().join("link.rs")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("x"), dir.path().join("out")).unwrap();
        for (args, says) in [
            (json!({"path": "link.rs"}), "symbolic link"),
            (json!({"path": "src"}), "directory"),
            (json!({"path": "out"}), "outside"),
            (json!({"path": "../x"}), "outside"),
            (json!({"path": "nope.rs"}), "not found"),
        ] {
            let e = DeleteFile.change(&args, &ctx.workspace).unwrap_err();
            assert!(e.to_string().contains(says), "{args}: {e}");
            let e = DeleteFile.execute(args.clone(), &ctx).await.unwrap_err();
            assert!(e.to_string().contains(says), "{args}: {e}");
        }
        assert!(dir.path().join("src/a.rs").exists());
        assert!(std::fs::symlink_metadata(dir.path().join("link.rs")).is_ok());
        for (args, says) in [
            (json!({"from": "link.rs", "to": "b.rs"}), "symbolic link"),
            (json!({"from": "src/a.rs", "to": "../b.rs"}), "outside"),
            (json!({"from": "src/a.rs", "to": "out/b.rs"}), "outside"),
            (
                json!({"from": "src/a.rs", "to": "link.rs"}),
                "already exists",
            ),
            (
                json!({"from": "src/a.rs", "to": "src/a.rs"}),
                "the file itself",
            ),
        ] {
            let e = MoveFile.change(&args, &ctx.workspace).unwrap_err();
            assert!(e.to_string().contains(says), "{args}: {e}");
        }
    }

    /// A config moved into a git directory is disarmed as if written
    /// there: no program runs at the next git command.
    #[tokio::test]
    async fn a_move_that_arms_a_git_directory_is_disarmed() {
        let (dir, ctx) = setup();
        let g = dir.path().join("tools");
        std::fs::create_dir_all(g.join("objects")).unwrap();
        std::fs::create_dir_all(g.join("refs")).unwrap();
        std::fs::write(g.join("HEAD"), "ref: refs/heads/master\n").unwrap();
        std::fs::write(
            g.join("config.txt"),
            "[core]\n\tpager = \"touch /tmp/lathe-pwned; cat\"\n",
        )
        .unwrap();
        let c = MoveFile
            .change(
                &json!({"from": "tools/config.txt", "to": "tools/config"}),
                &ctx.workspace,
            )
            .unwrap()
            .unwrap();
        let v = apply("move_file", &c, &[], &ctx).await.unwrap();
        assert!(v["warnings"].is_array(), "{v}");
        assert!(!g.join("config").exists(), "disarmed: {v}");
        // Moved by the tool's own path (a file not shown line by line).
        std::fs::write(
            g.join("config.bin"),
            b"[core]\n\tpager = \"touch /tmp/lathe-pwned; cat\"\n\xff",
        )
        .unwrap();
        let v = MoveFile
            .execute(
                json!({"from": "tools/config.bin", "to": "tools/config"}),
                &ctx,
            )
            .await
            .unwrap();
        assert!(v["warnings"].is_array(), "{v}");
        assert!(!g.join("config").exists(), "disarmed: {v}");
    }

    /// A config written into the common directory a worktree-shaped git
    /// directory names (`commondir`) is disarmed too.
    #[tokio::test]
    async fn a_config_in_a_common_dir_is_disarmed() {
        let (dir, ctx) = setup();
        let tools = dir.path().join("tools");
        let shared = dir.path().join("shared");
        std::fs::create_dir_all(&tools).unwrap();
        std::fs::create_dir_all(shared.join("objects")).unwrap();
        std::fs::create_dir_all(shared.join("refs")).unwrap();
        std::fs::write(tools.join("HEAD"), "ref: refs/heads/master\n").unwrap();
        std::fs::write(tools.join("commondir"), "../shared\n").unwrap();
        let c = crate::tools::builtin::WriteFile
            .change(
                &json!({"path": "shared/config", "content": "[core]\n\tpager = \"touch /tmp/x; cat\"\n"}),
                &ctx.workspace,
            )
            .unwrap()
            .unwrap();
        let v = apply("write_file", &c, &[true], &ctx).await.unwrap();
        assert!(v["warnings"].is_array(), "{v}");
        assert!(!shared.join("config").exists(), "disarmed: {v}");
    }

    #[tokio::test]
    async fn a_move_never_replaces_and_creates_directories() {
        let (dir, ctx) = setup();
        let c = MoveFile
            .change(
                &json!({"from": "src/a.rs", "to": "lib/deep/b.rs"}),
                &ctx.workspace,
            )
            .unwrap()
            .unwrap();
        assert_eq!(c.kind, ChangeKind::Rename);
        assert_eq!(c.unified(), "--- a/src/a.rs\n+++ b/lib/deep/b.rs\n");
        // Someone takes the name meanwhile: refused, both kept.
        std::fs::create_dir_all(dir.path().join("lib/deep")).unwrap();
        std::fs::write(dir.path().join("lib/deep/b.rs"), "theirs\n").unwrap();
        let e = apply("move_file", &c, &[], &ctx).await.unwrap_err();
        assert!(e.to_string().contains("already exists"), "{e}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("lib/deep/b.rs")).unwrap(),
            "theirs\n"
        );
        assert!(dir.path().join("src/a.rs").exists());
        std::fs::remove_file(dir.path().join("lib/deep/b.rs")).unwrap();
        std::fs::remove_dir_all(dir.path().join("lib")).unwrap();
        let v = apply("move_file", &c, &[], &ctx).await.unwrap();
        assert_eq!(v["path"], "lib/deep/b.rs");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("lib/deep/b.rs")).unwrap(),
            "fn a() {}\n"
        );
        assert!(!dir.path().join("src/a.rs").exists());
        // Changed after it was shown: not moved.
        let c = MoveFile
            .change(
                &json!({"from": "lib/deep/b.rs", "to": "c.rs"}),
                &ctx.workspace,
            )
            .unwrap()
            .unwrap();
        std::fs::write(dir.path().join("lib/deep/b.rs"), "edited\n").unwrap();
        let e = apply("move_file", &c, &[], &ctx).await.unwrap_err();
        assert!(e.to_string().contains("nothing was moved"), "{e}");
        assert!(!dir.path().join("c.rs").exists());
    }
}
