//! `delete_file`: remove one regular file of the workspace. The approval
//! dialog shows every line it takes away; the file is removed only if it
//! still holds what was shown (a file changed since is kept).

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::policy::Workspace;
use crate::protocol::Effect;
use crate::protocol::change::FileChange;
use crate::protocol::operation::{Access, Operation};
use crate::tools::fs::regular::{own_file, text_of};
use crate::tools::spec::{ToolContext, ToolError, file_operation};
use crate::tools::typed::TypedTool;

/// The largest file whose deletion is shown line by line.
const SHOWN_BYTES: u64 = 8 * 1024 * 1024;

pub struct DeleteFile;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// File path, relative to the workspace
    path: String,
}

#[async_trait]
impl TypedTool for DeleteFile {
    type Args = Args;

    fn name(&self) -> &'static str {
        "delete_file"
    }

    fn description(&self) -> &str {
        "Delete one file of the workspace (not a directory, not a symbolic link)."
    }

    fn deletes_files(&self) -> bool {
        true
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
        // Its diff shows every line it removes: a read of the file.
        let path = a.path.as_str();
        let mut delete = file_operation(workspace, path, Access::Write)?;
        if let Operation::File(f) = &mut delete {
            f.deletes = true;
        }
        Ok(vec![file_operation(workspace, path, Access::Read)?, delete])
    }

    fn change(
        &self,
        a: &Self::Args,
        workspace: &Workspace,
    ) -> Result<Option<FileChange>, ToolError> {
        let (file, shown) = own_file(workspace, a.path.as_str(), self.name())?;
        Ok(
            text_of(&file, &shown, SHOWN_BYTES)?
                .map(|text| FileChange::delete(&shown, file, &text)),
        )
    }

    fn preview(&self, a: &Self::Args, workspace: &Workspace) -> Result<Option<String>, ToolError> {
        if let Some(c) = self.change(a, workspace)? {
            return Ok(Some(c.unified()));
        }
        let (file, shown) = own_file(workspace, a.path.as_str(), self.name())?;
        let size = std::fs::metadata(&file).map_or(0, |m| m.len());
        Ok(Some(format!(
            "--- a/{}\n+++ /dev/null\n\\ deletes a binary or large file ({})\n",
            crate::protocol::visible::name(&shown),
            crate::protocol::humanize::bytes(usize::try_from(size).unwrap_or(usize::MAX))
        )))
    }

    /// A file too big or not text to be shown line by line.
    async fn execute(&self, a: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let (file, shown) = own_file(&ctx.workspace, a.path.as_str(), self.name())?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled(format!(
                "interrupted before deleting {shown}; nothing was deleted"
            )));
        }
        let bytes = std::fs::metadata(&file).map_or(0, |m| m.len());
        std::fs::remove_file(&file).map_err(|e| ToolError::from_io(&shown, &e))?;
        Ok(json!({
            "message": format!("deleted {shown} ({bytes} bytes)"),
            "path": shown,
            "deleted": true,
        }))
    }
}
