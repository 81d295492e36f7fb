//! `list_directory`: the immediate children of a workspace directory,
//! sorted by name, each with `is_dir` and `size`. Symlinks are listed (and
//! marked) but not followed out of the workspace.

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::policy::Workspace;
use crate::protocol::operation::{Access, Operation};
use crate::protocol::{Effect, Summary};
use crate::tools::args::dir_or_root;
use crate::tools::spec::{ToolContext, ToolError, file_operation};
use crate::tools::typed::TypedTool;

/// At most this many entries are returned; the rest are counted.
const MAX_ENTRIES: usize = 1000;

pub struct ListDirectory;

#[async_trait]
impl TypedTool for ListDirectory {
    type Args = Args;

    fn summary(&self, result: &Value) -> Option<Summary> {
        let entries = result.get("entries").and_then(Value::as_array)?;
        Some(Summary::Entries {
            count: entries.len() as u64,
        })
    }

    fn name(&self) -> &'static str {
        "list_directory"
    }

    fn description(&self) -> &str {
        "List the entries of a workspace directory (not recursive), sorted by name, \
         with is_dir and size in bytes."
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::List
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn operations(
        &self,
        args: &Self::Args,
        workspace: &Workspace,
    ) -> Result<Vec<Operation>, ToolError> {
        Ok(vec![file_operation(
            workspace,
            dir_or_root(args.path.as_deref()),
            Access::Read,
        )?])
    }

    async fn execute(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let path = dir_or_root(args.path.as_deref()).to_string();
        let resolved = ctx
            .workspace
            .resolve_readable(&path)
            .map_err(ToolError::from_path)?;
        let shown = ctx.workspace.display_relative(&resolved);
        let root = ctx.workspace.root().to_path_buf();
        tokio::task::spawn_blocking(move || {
            if !resolved.is_dir() {
                return Err(ToolError::InvalidArgs(format!(
                    "{shown} is not a directory; use read_file to read a file"
                )));
            }
            let reader =
                std::fs::read_dir(&resolved).map_err(|e| ToolError::from_io(&shown, &e))?;
            let mut entries: Vec<(String, Value)> = reader
                .filter_map(Result::ok)
                .map(|entry| {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    let link = entry.file_type().is_ok_and(|t| t.is_symlink());
                    // A link is followed only when it stays in the workspace.
                    let inside = !link
                        || entry
                            .path()
                            .canonicalize()
                            .is_ok_and(|target| target.starts_with(&root));
                    let meta = if inside {
                        std::fs::metadata(entry.path()).ok()
                    } else {
                        None
                    };
                    let mut v = json!({
                        "name": name,
                        "is_dir": meta.as_ref().is_some_and(std::fs::Metadata::is_dir),
                        "size": meta.as_ref().map_or(0, std::fs::Metadata::len),
                    });
                    if link {
                        v["symlink"] = json!(true);
                    }
                    if !inside {
                        v["outside_workspace"] = json!(true);
                    }
                    (name, v)
                })
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let total = entries.len();
            let mut out = json!({"path": shown});
            if total > MAX_ENTRIES {
                entries.truncate(MAX_ENTRIES);
                out["truncated"] = json!(true);
                out["total_entries"] = json!(total);
            }
            out["entries"] = Value::Array(entries.into_iter().map(|(_, v)| v).collect());
            Ok(out)
        })
        .await
        .map_err(|e| ToolError::Internal(format!("list_directory task failed: {e}")))?
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Directory path, relative to the workspace (default: the workspace root)
    path: Option<String>,
}
