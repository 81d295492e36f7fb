//! The file system as the file tools use it: writes that are atomic and
//! never follow a link ([`atomic`]), reads of regular files only, capped
//! ([`regular`]), moves that never replace, and the look at a git
//! directory a write completed. Both the built-in tools and the
//! structured changes (`change`) stand on it.

use std::path::Path;

use super::spec::ToolError;

pub mod atomic;
pub mod named;
pub mod regular;

/// After a file tool wrote `path`: a git directory it completed or changed
/// so that git would run a program is disarmed, and the result says so
/// (`warnings`), as after a command.
pub(crate) async fn disarm_written(
    ctx: &super::spec::ToolContext,
    path: &std::path::Path,
    result: &mut serde_json::Value,
) {
    let root = ctx.workspace.root().to_path_buf();
    let written = path.to_path_buf();
    let traps = tokio::task::spawn_blocking(move || {
        crate::sandbox::check_written_git(&root, &written)
            .into_iter()
            .map(|t| t.describe(&root))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    if !traps.is_empty() {
        result["warnings"] = serde_json::json!(traps);
    }
}

/// Writes `text` as the whole of `path` through the person's editor
/// (Lathe runs in one that writes files): its directories are made first,
/// in the workspace, as for a write on disk.
pub(crate) async fn write_through_editor(
    ctx: &super::spec::ToolContext,
    path: &Path,
    shown: &str,
    text: &str,
) -> Result<(), ToolError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| ToolError::from_io(shown, &e))?;
    }
    match ctx.workspace.editor().write(path, text).await {
        Some(Ok(())) => Ok(()),
        Some(Err(e)) => Err(ToolError::ExecutionFailed(format!(
            "the editor did not write {shown}: {e}"
        ))),
        None => Err(ToolError::Internal(
            "no editor to write through".to_string(),
        )),
    }
}

/// Moves `from` to `to`, creating `to`'s missing directories; an existing
/// `to` is never replaced (the kernel refuses it atomically where it can).
pub fn move_no_replace(from: &Path, to: &Path, shown: &str) -> Result<(), ToolError> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| ToolError::from_io(shown, &e))?;
    }
    let exists = || {
        ToolError::InvalidArgs(format!(
            "{shown} already exists; move_file never replaces a file"
        ))
    };
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
        match renameat2(AT_FDCWD, from, AT_FDCWD, to, RenameFlags::RENAME_NOREPLACE) {
            Ok(()) => return Ok(()),
            Err(nix::errno::Errno::EEXIST) => return Err(exists()),
            // The file system cannot refuse a replacement itself.
            Err(nix::errno::Errno::EINVAL | nix::errno::Errno::ENOSYS) => {}
            Err(e) => return Err(ToolError::from_io(shown, &std::io::Error::from(e))),
        }
    }
    // A new link fails if the name is taken; the old name then goes.
    match std::fs::hard_link(from, to) {
        Ok(()) => std::fs::remove_file(from).map_err(|e| ToolError::from_io(shown, &e)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(exists()),
        Err(e) => Err(ToolError::from_io(shown, &e)),
    }
}
