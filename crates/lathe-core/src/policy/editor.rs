//! The person's editor as the file tools see it, when Lathe runs inside
//! one (ACP's `fs/read_text_file` and `fs/write_text_file`): reads see
//! the editor's buffers, unsaved changes included, and approved writes go
//! through the editor, so it shows them. Only the file tools use it;
//! every check (the workspace's bounds, the rules, approval, the
//! checkpoint before a change) happens as for files on disk.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The largest file read through the editor (a larger one is read from
/// disk, in windows, as without an editor).
pub const MAX_THROUGH_EDITOR: u64 = 16 * 1024 * 1024;

/// Whether `path` may go through the editor: a regular file, not a link
/// (one put in its place since the path was checked would lead the
/// editor elsewhere), of a size an editor holds; or, for a write, no file
/// yet.
pub fn fits(path: &Path, write: bool) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => meta.file_type().is_file() && meta.len() <= MAX_THROUGH_EDITOR,
        Err(e) => write && e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// What the editor offers.
#[async_trait::async_trait]
pub trait EditorFiles: Send + Sync {
    /// Whether reads go through the editor.
    fn reads(&self) -> bool;
    /// Whether writes go through the editor.
    fn writes(&self) -> bool;
    /// The file's text as the editor has it.
    async fn read(&self, path: &Path) -> Result<String, String>;
    /// Writes `text` as the file's whole content.
    async fn write(&self, path: &Path, text: &str) -> Result<(), String>;
}

/// The editor, and the buffers read for the call being decided (the
/// change a call would make is computed from what the person sees, not
/// from the file as last saved).
#[derive(Clone, Default)]
pub struct Editor {
    files: Option<Arc<dyn EditorFiles>>,
    held: Arc<Mutex<HashMap<PathBuf, String>>>,
}

impl std::fmt::Debug for Editor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Editor")
            .field("reads", &self.reads())
            .field("writes", &self.writes())
            .finish()
    }
}

/// A buffer held while a call's change is computed; let go when dropped.
pub struct Held {
    held: Arc<Mutex<HashMap<PathBuf, String>>>,
    path: PathBuf,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&self.path);
    }
}

impl Editor {
    pub fn new(files: Arc<dyn EditorFiles>) -> Self {
        Self {
            files: Some(files),
            held: Arc::default(),
        }
    }

    pub fn reads(&self) -> bool {
        self.files.as_ref().is_some_and(|f| f.reads())
    }

    pub fn writes(&self) -> bool {
        self.files.as_ref().is_some_and(|f| f.writes())
    }

    /// The text of `path` as the editor has it; `None` when reads do not
    /// go through it.
    pub async fn read(&self, path: &Path) -> Option<Result<String, String>> {
        match &self.files {
            Some(f) if f.reads() && fits(path, false) => Some(f.read(path).await),
            _ => None,
        }
    }

    /// Writes through the editor; `None` when writes do not go through it.
    pub async fn write(&self, path: &Path, text: &str) -> Option<Result<(), String>> {
        match &self.files {
            Some(f) if f.writes() && !fits(path, true) => Some(Err(
                "it is no longer a regular file (a link, or something else, took its place)"
                    .to_string(),
            )),
            Some(f) if f.writes() => Some(f.write(path, text).await),
            _ => None,
        }
    }

    /// Reads `path` from the editor and holds its text for the change
    /// being computed (a file the editor cannot read is left to the disk).
    pub async fn hold(&self, path: &Path) -> Option<Held> {
        let text = self.read(path).await?.ok()?;
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(path.to_path_buf(), text);
        Some(Held {
            held: self.held.clone(),
            path: path.to_path_buf(),
        })
    }

    /// The held text of `path`, if any.
    pub fn held(&self, path: &Path) -> Option<String> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(path)
            .cloned()
    }
}
