//! `edit_file`: replace exactly one occurrence of a text in a workspace
//! file. Zero or several occurrences are `InvalidArgs` naming the count, so
//! the model can add context. A file with CRLF line endings is matched with
//! the model's LF text converted to CRLF. The write is atomic.

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::policy::Workspace;
use crate::protocol::Effect;
use crate::protocol::operation::{Access, Operation};
use crate::tools::fs::atomic::write_atomic;
use crate::tools::spec::{ToolContext, ToolError, file_operation};
use crate::tools::typed::TypedTool;

pub struct EditFile;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// File path, relative to the workspace
    path: String,
    /// Exact text to find; must occur exactly once
    old_text: String,
    /// Replacement text
    new_text: String,
}

#[async_trait]
impl TypedTool for EditFile {
    type Args = Args;

    fn name(&self) -> &'static str {
        "edit_file"
    }

    fn description(&self) -> &str {
        "Replace one exact occurrence of `old_text` with `new_text` in a workspace file. \
         `old_text` must match exactly once, including whitespace and indentation; add \
         surrounding lines to make it unique."
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Edit
    }

    fn effect(&self) -> Effect {
        Effect::Write
    }

    fn operations(
        &self,
        a: &Self::Args,
        workspace: &Workspace,
    ) -> Result<Vec<Operation>, ToolError> {
        // An edit reads the file: whether `old_text` is in it, and the
        // diff, say what it holds (a read rule covers it).
        let path = a.path.as_str();
        Ok(vec![
            file_operation(workspace, path, Access::Read)?,
            file_operation(workspace, path, Access::Write)?,
        ])
    }

    fn change(
        &self,
        a: &Self::Args,
        workspace: &Workspace,
    ) -> Result<Option<crate::protocol::change::FileChange>, ToolError> {
        let path = a.path.as_str();
        let resolved = workspace
            .resolve_existing(path)
            .map_err(ToolError::from_path)?;
        let shown = workspace.display_relative(&resolved);
        // The editor's buffer when it holds the file: what the person sees.
        let text = match workspace.editor().held(&resolved) {
            Some(text) => text,
            None => read_text(&resolved, &shown)?,
        };
        let (updated, _) = apply_edit(&text, a.old_text.as_str(), a.new_text.as_str(), &shown)?;
        Ok(Some(crate::protocol::change::FileChange::new(
            &shown,
            resolved,
            Some(&text),
            &updated,
        )))
    }

    async fn execute(&self, a: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let path = a.path.as_str();
        let (old, new) = (a.old_text.clone(), a.new_text.clone());
        if old.is_empty() {
            return Err(ToolError::InvalidArgs(
                "old_text is empty; use write_file to create or replace a whole file".into(),
            ));
        }
        let resolved = ctx
            .workspace
            .resolve_existing(path)
            .map_err(ToolError::from_path)?;
        let shown = ctx.workspace.display_relative(&resolved);
        // In an editor: its buffer edited, and written through it.
        let editor = ctx.workspace.editor();
        if editor.writes() {
            let text = match editor.read(&resolved).await {
                Some(Ok(text)) => text,
                Some(Err(e)) => {
                    return Err(ToolError::ExecutionFailed(format!(
                        "the editor could not read {shown} ({e}); nothing was written"
                    )));
                }
                None => read_text(&resolved, &shown)?,
            };
            let (updated, line) = apply_edit(&text, &old, &new, &shown)?;
            if ctx.cancel.is_cancelled() {
                return Err(ToolError::Cancelled(format!(
                    "interrupted before writing {shown}; nothing was written"
                )));
            }
            crate::tools::fs::write_through_editor(ctx, &resolved, &shown, &updated).await?;
            let mut v = edited(&shown, line);
            crate::tools::fs::disarm_written(ctx, &resolved, &mut v).await;
            return Ok(v);
        }
        let cancel = ctx.cancel.clone();
        let written = resolved.clone();
        let mut v = tokio::task::spawn_blocking(move || {
            let text = read_text(&resolved, &shown)?;
            let (updated, line) = apply_edit(&text, &old, &new, &shown)?;
            if cancel.is_cancelled() {
                return Err(ToolError::Cancelled(format!(
                    "interrupted before writing {shown}; nothing was written"
                )));
            }
            write_atomic(&resolved, updated.as_bytes())
                .map_err(|e| ToolError::from_io(&shown, &e))?;
            Ok(edited(&shown, line))
        })
        .await
        .map_err(|e| ToolError::Internal(format!("edit_file task failed: {e}")))??;
        crate::tools::fs::disarm_written(ctx, &written, &mut v).await;
        Ok(v)
    }
}

/// What an edit tells the model.
fn edited(shown: &str, line: usize) -> Value {
    json!({
        "message": format!("edited {shown} at line {line}"),
        "path": shown,
        "line": line,
        "replacements": 1,
    })
}

/// The largest file edit_file takes in whole.
const MAX_EDIT_BYTES: u64 = 32 * 1024 * 1024;

fn read_text(path: &std::path::Path, shown: &str) -> Result<String, ToolError> {
    let (bytes, more) = crate::tools::fs::regular::read_capped(path, shown, MAX_EDIT_BYTES)?;
    if more {
        return Err(ToolError::InvalidArgs(format!(
            "{shown} is larger than 32 MiB; edit_file edits smaller files (use exec_shell with sed for this one)"
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        ToolError::ExecutionFailed(format!(
            "{shown} is not valid UTF-8 text; edit_file edits text files only"
        ))
    })
}

/// Replaces the single occurrence of `old` in `text`; returns the new text
/// and the 1-based line where the edit starts.
pub(crate) fn apply_edit(
    text: &str,
    old: &str,
    new: &str,
    shown: &str,
) -> Result<(String, usize), ToolError> {
    let attempt = |old: &str, new: &str| -> Result<Option<(String, usize)>, ToolError> {
        let mut found = text.match_indices(old);
        let Some((at, _)) = found.next() else {
            return Ok(None);
        };
        let more = found.count();
        if more > 0 {
            return Err(ToolError::InvalidArgs(format!(
                "old_text occurs {} times in {shown}; it must occur exactly once. \
                 Include more surrounding lines to make it unique.",
                more + 1
            )));
        }
        let line = text[..at].matches('\n').count() + 1;
        let mut out = String::with_capacity(text.len() + new.len());
        out.push_str(&text[..at]);
        out.push_str(new);
        out.push_str(&text[at + old.len()..]);
        Ok(Some((out, line)))
    };
    if let Some(done) = attempt(old, new)? {
        return Ok(done);
    }
    if text.contains("\r\n") && old.contains('\n') && !old.contains("\r\n") {
        let crlf = |s: &str| s.replace('\n', "\r\n");
        if let Some(done) = attempt(&crlf(old), &crlf(new))? {
            return Ok(done);
        }
    }
    let hint = if text.contains(old.trim()) && !old.trim().is_empty() {
        " It does occur when leading and trailing whitespace are ignored: copy the text \
         exactly, including indentation and line breaks."
    } else {
        " Read the file again and copy the text exactly."
    };
    Err(ToolError::InvalidArgs(format!(
        "old_text occurs 0 times in {shown}; it must occur exactly once.{hint}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_single_occurrence_and_reports_its_line() {
        let (out, line) = apply_edit("a\nb\nc\n", "b\n", "B\nB2\n", "f").unwrap();
        assert_eq!(out, "a\nB\nB2\nc\n");
        assert_eq!(line, 2);
    }

    #[test]
    fn zero_and_several_occurrences_name_the_count() {
        let err = apply_edit("x x x", "x", "y", "f").unwrap_err();
        assert_eq!(err.kind(), "invalid_args");
        assert!(err.to_string().contains("occurs 3 times"), "{err}");
        let err = apply_edit("abc", "zzz", "y", "f").unwrap_err();
        assert!(err.to_string().contains("occurs 0 times"), "{err}");
    }

    #[test]
    fn whitespace_mismatches_get_a_hint() {
        let err = apply_edit("    let x = 1;\n", "let x = 1; ", "", "f").unwrap_err();
        assert!(err.to_string().contains("whitespace"), "{err}");
    }

    #[test]
    fn crlf_files_match_lf_text() {
        let (out, _) = apply_edit("a\r\nb\r\nc\r\n", "a\nb\n", "a\nB\n", "f").unwrap();
        assert_eq!(out, "a\r\nB\r\nc\r\n");
    }
}
