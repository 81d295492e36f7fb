//! `move_file`: move or rename one regular file within the workspace,
//! creating the destination's missing directories. An existing destination
//! is never replaced (the move is refused, atomically, by the kernel), and
//! the file moves only if it still holds what was shown.

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::policy::Workspace;
use crate::protocol::Effect;
use crate::protocol::change::FileChange;
use crate::protocol::operation::{Access, Operation};
use crate::tools::fs::regular::{own_file, text_of};
use crate::tools::spec::{ToolContext, ToolError, file_operation};
use crate::tools::typed::TypedTool;

/// The largest file whose content is checked before the move.
const CHECKED_BYTES: u64 = 64 * 1024 * 1024;

pub struct MoveFile;

/// Where the file goes: inside the workspace, free, not the file itself.
fn destination(
    workspace: &Workspace,
    to: &str,
    from: &std::path::Path,
) -> Result<(std::path::PathBuf, String), ToolError> {
    // Checked whole (inside, a name that can be shown), then taken by its
    // own name: a link there is a name taken, whatever it points to.
    workspace
        .resolve_for_write(to)
        .map_err(ToolError::from_path)?;
    let (dir, name) = crate::tools::fs::regular::split_name(to)?;
    let target = workspace
        .resolve_for_write(dir)
        .map_err(ToolError::from_path)?
        .join(name);
    let shown = workspace.display_relative(&target);
    if target == from {
        return Err(ToolError::InvalidArgs(format!(
            "{to} is the file itself; nothing to move"
        )));
    }
    if std::fs::symlink_metadata(&target).is_ok() {
        return Err(ToolError::InvalidArgs(format!(
            "{shown} already exists; move_file never replaces a file (delete it first if \
             that is what you mean)"
        )));
    }
    Ok((target, shown))
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The file to move, relative to the workspace
    from: String,
    /// Its new path, relative to the workspace
    to: String,
}

#[async_trait]
impl TypedTool for MoveFile {
    type Args = Args;

    fn name(&self) -> &'static str {
        "move_file"
    }

    fn description(&self) -> &str {
        "Move or rename one file within the workspace. Missing directories of the \
         destination are created; an existing destination is never replaced."
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Edit
    }

    fn effect(&self) -> Effect {
        Effect::Write
    }

    /// A move reads its file, as a copy would: what may not be read
    /// where it is may not be moved where it could be (a deny rule on
    /// `private/**` holds for `private/plan.md` → `p.md`).
    fn operations(
        &self,
        a: &Self::Args,
        workspace: &Workspace,
    ) -> Result<Vec<Operation>, ToolError> {
        let from = a.from.as_str();
        Ok(vec![
            file_operation(workspace, from, Access::Read)?,
            file_operation(workspace, from, Access::Write)?,
            file_operation(workspace, a.to.as_str(), Access::Write)?,
        ])
    }

    fn change(
        &self,
        a: &Self::Args,
        workspace: &Workspace,
    ) -> Result<Option<FileChange>, ToolError> {
        let (from, from_shown) = own_file(workspace, a.from.as_str(), self.name())?;
        let (to, to_shown) = destination(workspace, a.to.as_str(), &from)?;
        Ok(text_of(&from, &from_shown, CHECKED_BYTES)?
            .map(|text| FileChange::rename(&from_shown, from, &to_shown, to, &text)))
    }

    fn preview(&self, a: &Self::Args, workspace: &Workspace) -> Result<Option<String>, ToolError> {
        if let Some(c) = self.change(a, workspace)? {
            return Ok(Some(c.unified()));
        }
        let (from, from_shown) = own_file(workspace, a.from.as_str(), self.name())?;
        let (_, to_shown) = destination(workspace, a.to.as_str(), &from)?;
        let name = crate::protocol::visible::name;
        Ok(Some(format!(
            "--- a/{}\n+++ b/{}\n",
            name(&from_shown),
            name(&to_shown)
        )))
    }

    /// A file too big or not text to be checked line by line.
    async fn execute(&self, a: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let (from, from_shown) = own_file(&ctx.workspace, a.from.as_str(), self.name())?;
        let (to, to_shown) = destination(&ctx.workspace, a.to.as_str(), &from)?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled(format!(
                "interrupted before moving {from_shown}; nothing was moved"
            )));
        }
        crate::tools::fs::move_no_replace(&from, &to, &to_shown)?;
        let mut v = json!({
            "message": format!("moved {from_shown} to {to_shown}"),
            "from": from_shown,
            "path": to_shown,
        });
        crate::tools::fs::disarm_written(ctx, &to, &mut v).await;
        Ok(v)
    }
}
