//! `write_file`: create or replace a file in the workspace, atomically,
//! creating missing parent directories and keeping an existing file's mode.

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::policy::Workspace;
use crate::protocol::Effect;
use crate::protocol::operation::{Access, Operation};
use crate::tools::fs::atomic::write_atomic;
use crate::tools::preview::unified_diff;
use crate::tools::spec::{ToolContext, ToolError, file_operation};
use crate::tools::typed::TypedTool;

pub struct WriteFile;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// File path, relative to the workspace
    path: String,
    /// The complete new content of the file
    content: String,
}

#[async_trait]
impl TypedTool for WriteFile {
    type Args = Args;

    fn name(&self) -> &'static str {
        "write_file"
    }

    fn description(&self) -> &str {
        "Create or overwrite a file in the workspace with the given content. Missing \
         parent directories are created. Prefer edit_file for changing part of a file."
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
        let path = a.path.as_str();
        let write = file_operation(workspace, path, Access::Write)?;
        // Over a file that exists, its diff shows what the file held: a
        // read of it.
        let exists = workspace.resolve_existing(path).is_ok_and(|p| p.is_file());
        Ok(if exists {
            vec![file_operation(workspace, path, Access::Read)?, write]
        } else {
            vec![write]
        })
    }

    fn change(
        &self,
        a: &Self::Args,
        workspace: &Workspace,
    ) -> Result<Option<crate::protocol::change::FileChange>, ToolError> {
        let path = a.path.as_str();
        let content = a.content.as_str();
        let resolved = workspace
            .resolve_for_write(path)
            .map_err(ToolError::from_path)?;
        if resolved.is_dir() {
            return Err(ToolError::InvalidArgs(format!("{path} is a directory")));
        }
        let shown = workspace.display_relative(&resolved);
        refuse_special(&resolved, &shown)?;
        // The editor's buffer when it holds the file: what the person sees.
        if let Some(text) = workspace.editor().held(&resolved) {
            return Ok(Some(crate::protocol::change::FileChange::new(
                &shown,
                resolved,
                Some(&text),
                content,
            )));
        }
        let old = match std::fs::symlink_metadata(&resolved) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            _ => match crate::tools::fs::regular::read_capped(&resolved, &shown, PREVIEW_OLD_BYTES)
            {
                // Text read whole: the change is exact.
                Ok((bytes, false)) => match String::from_utf8(bytes) {
                    Ok(text) => Some(text),
                    Err(_) => return Ok(None),
                },
                // Too big, or not text: shown as a whole rewrite by the
                // tool itself.
                _ => return Ok(None),
            },
        };
        Ok(Some(crate::protocol::change::FileChange::new(
            &shown,
            resolved,
            old.as_deref(),
            content,
        )))
    }

    fn preview(&self, a: &Self::Args, workspace: &Workspace) -> Result<Option<String>, ToolError> {
        if let Some(c) = self.change(a, workspace)? {
            return Ok(Some(c.unified()));
        }
        let path = a.path.as_str();
        let content = a.content.as_str();
        let resolved = workspace
            .resolve_for_write(path)
            .map_err(ToolError::from_path)?;
        let shown = workspace.display_relative(&resolved);
        let old = crate::tools::fs::regular::read_capped(&resolved, &shown, PREVIEW_OLD_BYTES)
            .ok()
            .map(|(b, _)| String::from_utf8_lossy(&b).into_owned());
        Ok(Some(unified_diff(&shown, old.as_deref(), content)))
    }

    async fn execute(&self, a: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let path = a.path.as_str();
        let content = a.content.clone();
        let resolved = ctx
            .workspace
            .resolve_for_write(path)
            .map_err(ToolError::from_path)?;
        let shown = ctx.workspace.display_relative(&resolved);
        refuse_special(&resolved, &shown)?;
        let bytes = content.len();
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled(format!(
                "interrupted before writing {shown}; nothing was written"
            )));
        }
        let created = if ctx.workspace.editor().writes() {
            // In an editor: written through it, so it shows the file.
            let created = !resolved.exists();
            crate::tools::fs::write_through_editor(ctx, &resolved, &shown, &content).await?;
            created
        } else {
            let target = resolved.clone();
            let shown_for_task = shown.clone();
            let cancel = ctx.cancel.clone();
            tokio::task::spawn_blocking(move || {
                if cancel.is_cancelled() {
                    return Err(ToolError::Cancelled(format!(
                        "interrupted before writing {shown_for_task}; nothing was written"
                    )));
                }
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| ToolError::from_io(&shown_for_task, &e))?;
                }
                write_atomic(&target, content.as_bytes())
                    .map_err(|e| ToolError::from_io(&shown_for_task, &e))
            })
            .await
            .map_err(|e| ToolError::Internal(format!("write_file task failed: {e}")))??
        };
        let verb = if created { "created" } else { "overwrote" };
        let mut v = json!({
            "message": format!("{verb} {shown} ({bytes} bytes)"),
            "path": shown,
            "bytes": bytes,
            "created": created,
        });
        crate::tools::fs::disarm_written(ctx, &resolved, &mut v).await;
        Ok(v)
    }
}
/// The most of an existing file the preview diff reads.
const PREVIEW_OLD_BYTES: u64 = 32 * 1024 * 1024;

/// A path that exists as something other than a regular file (a FIFO, a
/// device, a socket) is not replaced.
fn refuse_special(path: &std::path::Path, shown: &str) -> Result<(), ToolError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_symlink() => {
            crate::tools::fs::regular::check(&meta, shown)
        }
        Ok(_) => match std::fs::metadata(path) {
            Ok(meta) => crate::tools::fs::regular::check(&meta, shown),
            Err(_) => Ok(()),
        },
        Err(_) => Ok(()),
    }
}
