//! `memory_read` and `memory_write`: notes the model keeps across
//! sessions, one `MEMORY.md` per workspace in Lathe's data directory
//! (`memory/<name>-<hash>/MEMORY.md`, the hash of the workspace's path),
//! out of the workspace and out of reach of commands. Reading may search
//! paragraphs (blocks between blank lines) case-insensitively; writing
//! appends (after a blank line) or overwrites, atomically, under a lock
//! so two writes of one session never lose each other's lines.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::protocol::Effect;
use crate::tools::fs::atomic::write_atomic;
use crate::tools::spec::{ToolContext, ToolError};
use crate::tools::typed::TypedTool;

/// The most a memory file may hold (the model reads it whole).
const MAX_MEMORY: usize = 256 * 1024;

/// Where a workspace's memory lives under `dir`.
pub fn memory_file(dir: &Path, workspace: &Path) -> PathBuf {
    dir.join(crate::config::paths::workspace_slug(workspace))
        .join("MEMORY.md")
}

fn no_store() -> ToolError {
    ToolError::ExecutionFailed("memory is not available: Lathe has no data directory".into())
}

fn read(path: &Path) -> Result<Option<String>, ToolError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ToolError::ExecutionFailed(format!(
            "cannot read memory: {e}"
        ))),
    }
}

pub struct MemoryRead {
    dir: Option<PathBuf>,
}

impl MemoryRead {
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self { dir }
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// Return only paragraphs containing this text (case-insensitive)
    query: Option<String>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// Markdown to write
    #[schemars(length(min = 1))]
    content: String,
    /// append (default) or overwrite
    mode: Option<Mode>,
}

#[derive(PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Mode {
    Append,
    Overwrite,
}

#[async_trait]
impl TypedTool for MemoryRead {
    type Args = ReadArgs;

    fn name(&self) -> &'static str {
        "memory_read"
    }

    fn description(&self) -> &str {
        "Read the notes kept for this workspace across sessions (MEMORY.md). With `query`, \
         only the paragraphs that contain it (case-insensitive)."
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Other
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    async fn execute(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let dir = self.dir.as_ref().ok_or_else(no_store)?;
        let path = memory_file(dir, ctx.workspace.root());
        let ReadArgs { query } = args;
        let query = query.as_deref().map(str::trim).filter(|q| !q.is_empty());
        let Some(content) = tokio::task::spawn_blocking(move || read(&path))
            .await
            .map_err(|e| ToolError::Internal(e.to_string()))??
        else {
            return Ok(json!({"content": "", "message": "No memory file found"}));
        };
        let Some(query) = query else {
            return Ok(json!({ "content": content }));
        };
        let needle = query.to_lowercase();
        let matches: Vec<String> = paragraphs(&content)
            .filter(|p| p.to_lowercase().contains(&needle))
            .map(str::to_string)
            .collect();
        Ok(json!({"query": query, "count": matches.len(), "matches": matches}))
    }
}

/// The blocks of `text` between blank lines, trimmed.
fn paragraphs(text: &str) -> impl Iterator<Item = &str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim().is_empty() {
            if let Some(s) = start.take() {
                out.push(text[s..offset].trim());
            }
        } else if start.is_none() {
            start = Some(offset);
        }
        offset += line.len();
    }
    if let Some(s) = start {
        out.push(text[s..].trim());
    }
    out.into_iter().filter(|p| !p.is_empty())
}

pub struct MemoryWrite {
    dir: Option<PathBuf>,
    lock: tokio::sync::Mutex<()>,
}

impl MemoryWrite {
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self {
            dir,
            lock: tokio::sync::Mutex::new(()),
        }
    }
}

#[async_trait]
impl TypedTool for MemoryWrite {
    type Args = WriteArgs;

    fn name(&self) -> &'static str {
        "memory_write"
    }

    fn description(&self) -> &str {
        "Keep notes for this workspace across sessions (MEMORY.md): decisions, conventions, \
         what to remember next time. `append` (default) adds a paragraph; `overwrite` \
         replaces everything. Never store secrets."
    }

    fn kind(&self) -> crate::protocol::ToolKind {
        crate::protocol::ToolKind::Other
    }

    fn effect(&self) -> Effect {
        Effect::Write
    }

    async fn execute(&self, args: Self::Args, ctx: &ToolContext) -> Result<Value, ToolError> {
        let dir = self.dir.as_ref().ok_or_else(no_store)?;
        let WriteArgs { content, mode } = args;
        // The file outlives the session and is read back into prompts:
        // a secret the model meant to keep is not kept.
        let redacted = ctx.redactor.redact_str(&content);
        let hid_secret = redacted.is_some();
        let content = redacted.unwrap_or(content);
        let overwrite = mode == Some(Mode::Overwrite);
        let path = memory_file(dir, ctx.workspace.root());
        let _held = self.lock.lock().await;
        let shown = path.clone();
        let written = tokio::task::spawn_blocking(move || -> Result<usize, ToolError> {
            let failed =
                |e: std::io::Error| ToolError::ExecutionFailed(format!("cannot write memory: {e}"));
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(failed)?;
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o700));
            }
            let old = if overwrite { None } else { read(&path)? };
            let mut text = old.unwrap_or_default();
            if !text.trim().is_empty() {
                while !text.ends_with("\n\n") {
                    text.push('\n');
                }
            } else {
                text.clear();
            }
            text.push_str(content.trim_end());
            text.push('\n');
            if text.len() > MAX_MEMORY {
                return Err(ToolError::InvalidArgs(format!(
                    "memory would hold {} bytes, more than {MAX_MEMORY}; overwrite it with a \
                     shorter summary",
                    text.len()
                )));
            }
            write_atomic(&path, text.as_bytes()).map_err(failed)?;
            Ok(content.len())
        })
        .await
        .map_err(|e| ToolError::Internal(e.to_string()))??;
        let mode = if overwrite { "overwrite" } else { "append" };
        let mut result = json!({
            "message": format!("Successfully wrote {written} bytes to memory (mode: {mode})"),
            "path": shown,
        });
        if hid_secret {
            result["warnings"] = json!([
                "what looked like secrets was written as [REDACTED]: memory never keeps secrets"
            ]);
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_are_blocks_between_blank_lines() {
        let text = "# Notes\n\nUse JWT for auth.\nTokens last 1 h.\n\n  \n\nDB: Postgres\n";
        assert_eq!(
            paragraphs(text).collect::<Vec<_>>(),
            [
                "# Notes",
                "Use JWT for auth.\nTokens last 1 h.",
                "DB: Postgres"
            ]
        );
    }

    #[test]
    fn each_workspace_has_its_own_file() {
        let a = memory_file(Path::new("/m"), Path::new("/home/u/proj"));
        let b = memory_file(Path::new("/m"), Path::new("/home/v/proj"));
        assert_ne!(a, b);
        assert!(
            a.to_string_lossy().starts_with("/m/proj-"),
            "{}",
            a.display()
        );
        assert!(a.ends_with("MEMORY.md"));
        let odd = memory_file(Path::new("/m"), Path::new("/x/../../etc passwd"));
        assert!(odd.starts_with("/m/") && !odd.to_string_lossy().contains(".."));
    }

    /// A secret the model writes to memory is not kept.
    #[tokio::test]
    async fn secrets_are_not_kept_in_memory() {
        let root = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let workspace = std::sync::Arc::new(crate::policy::Workspace::new(root.path()).unwrap());
        let mut ctx = ToolContext::standalone(workspace);
        ctx.redactor = crate::policy::Redactor::new(["my-configured-key-0123".to_string()]);
        let tool = MemoryWrite::new(Some(data.path().to_path_buf()));
        let out = (&tool as &dyn crate::tools::Tool)
            .execute(
                json!({"content": "deploy with my-configured-key-0123 and AKIAABCDEFGHIJKLMNOP"}),
                &ctx,
            )
            .await
            .unwrap();
        assert!(
            out["warnings"][0].as_str().unwrap().contains("REDACTED"),
            "{out}"
        );
        let kept = std::fs::read_to_string(memory_file(data.path(), root.path())).unwrap();
        assert!(kept.starts_with("deploy with "), "{kept}");
        assert!(!kept.contains("my-configured-key-0123"), "{kept}");
        assert!(!kept.contains("AKIAABCDEFGHIJKLMNOP"), "{kept}");
    }
}
