//! The change a call would make, computed in the person's editor when
//! Lathe runs in one: from the buffer they see.

use serde_json::Value;

use super::{Args, Shared};
use crate::protocol::change::FileChange;
use crate::tools::{RegisteredTool, ToolError};

/// The change a call would make. In an editor, an edit's file is read
/// from it first and held while the change is computed: the change is
/// made from what the person sees, unsaved changes included.
pub(super) async fn change_of(
    shared: &Shared,
    tool: &RegisteredTool,
    args: &Args<'_>,
) -> Result<Option<FileChange>, ToolError> {
    let ws = &shared.services.workspace;
    let held = match args.json.get("path").and_then(Value::as_str) {
        Some(path)
            if ws.editor().reads() && tool.tool.kind() == crate::protocol::ToolKind::Edit =>
        {
            match ws.resolve_existing(path) {
                Ok(resolved) => ws.editor().hold(&resolved).await,
                Err(_) => None,
            }
        }
        _ => None,
    };
    let change = args.call.change(ws);
    drop(held);
    change
}
