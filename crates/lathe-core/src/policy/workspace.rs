//! Workspace containment: every path a tool touches must resolve inside the
//! workspace root.
//!
//! A path is joined to the canonical root, then canonicalized so `..` and
//! symlinks are resolved before the check. A path that does not exist yet
//! (a new file) is checked through its deepest existing ancestor; the
//! components below it must be plain names. A symlink whose target lies
//! outside the workspace is refused for reads, writes and listings alike,
//! and so is a dangling symlink, since writing through it would create its
//! target wherever it points. Used by the guardrail stage and by the file
//! tools themselves.

use std::io;
use std::path::{Component, Path, PathBuf};

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("{0}")]
    Invalid(String),
    #[error("{path} is outside the workspace {root}")]
    Escapes { path: String, root: String },
    #[error("{0} does not exist")]
    NotFound(String),
}

/// The directory the agent works in. Its root is canonical.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    /// Directories outside it that the file tools may read, never write:
    /// the skills in use (a person's skill lives beside their config).
    readable: std::sync::Arc<std::sync::RwLock<Vec<PathBuf>>>,
    /// The person's editor, when Lathe runs in one: the file tools read
    /// and write through it.
    editor: super::editor::Editor,
}

impl PartialEq for Workspace {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
    }
}

impl Eq for Workspace {}

impl Workspace {
    /// Opens a workspace at `root`, which must be an existing directory.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = root.as_ref().canonicalize()?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(Self {
            root,
            readable: std::sync::Arc::default(),
            editor: super::editor::Editor::default(),
        })
    }

    /// The same workspace, its files read and written through `editor`.
    #[must_use]
    pub fn with_editor(mut self, editor: super::editor::Editor) -> Self {
        self.editor = editor;
        self
    }

    /// The person's editor (nothing goes through it outside one).
    pub fn editor(&self) -> &super::editor::Editor {
        &self.editor
    }

    /// Lets the file tools read `dir`, never write it: the directory
    /// found at the start, canonical, taken as it is. Refused (`false`)
    /// when it no longer is where it was: a link put in its place since
    /// (which would hand over wherever it leads) is not followed.
    pub fn allow_reading(&self, dir: &Path) -> bool {
        if !dir.is_absolute() || dir.canonicalize().ok().as_deref() != Some(dir) {
            return false;
        }
        if dir.starts_with(&self.root) {
            return true;
        }
        let mut readable = self
            .readable
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !readable.iter().any(|d| d == dir) {
            readable.push(dir.to_path_buf());
        }
        true
    }

    /// Where `canonical` lies in a directory [`Self::allow_reading`] let
    /// the file tools read.
    fn readable(&self, canonical: &Path) -> bool {
        self.readable
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .any(|d| canonical.starts_with(d))
    }

    /// Resolves a path that must exist, to read: in the workspace, or in
    /// a directory it lets the file tools read.
    pub fn resolve_readable(&self, user_path: &str) -> Result<PathBuf, PathError> {
        match self.resolve_existing(user_path) {
            Err(PathError::Escapes { .. }) => {
                let joined = self.join(user_path)?;
                match joined.canonicalize() {
                    Ok(c) if self.readable(&c) => Ok(c),
                    _ => self.resolve_existing(user_path),
                }
            }
            other => other,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path that must already exist (reads, listings, edits).
    pub fn resolve_existing(&self, user_path: &str) -> Result<PathBuf, PathError> {
        let joined = self.join(user_path)?;
        match joined.canonicalize() {
            Ok(canonical) => self.contain(user_path, canonical),
            Err(_) => {
                // Either missing, or a dangling symlink somewhere on the way.
                // Check the part that exists, so an escape is reported as one.
                let (existing, _) = self.deepest_existing(user_path, &joined)?;
                self.contain(user_path, existing)?;
                Err(PathError::NotFound(user_path.to_string()))
            }
        }
    }

    /// Resolves a path that may not exist yet (writes). The deepest existing
    /// ancestor is canonicalized and checked; the rest must be plain names.
    pub fn resolve_for_write(&self, user_path: &str) -> Result<PathBuf, PathError> {
        let joined = self.join(user_path)?;
        if let Ok(canonical) = joined.canonicalize() {
            return self.contain(user_path, canonical);
        }
        let (existing, rest) = self.deepest_existing(user_path, &joined)?;
        let mut target = self.contain(user_path, existing)?;
        for part in rest {
            // A new name must be one a person can read: a newline or an
            // escape sequence in it could spoof the lines around it
            // wherever it is shown.
            let text = part.to_string_lossy();
            if let Some(c) = crate::protocol::visible::first_hidden(&text) {
                return Err(PathError::Invalid(format!(
                    "{}: a new file name may not hold U+{:04X} (a control or invisible \
                     character); choose a name without it",
                    crate::protocol::visible::name(user_path),
                    u32::from(c)
                )));
            }
            target.push(part);
        }
        Ok(target)
    }

    /// Whether `user_path` resolves inside the workspace, whether or not it exists.
    pub fn check(&self, user_path: &str) -> Result<PathBuf, PathError> {
        self.resolve_for_write(user_path)
    }

    /// A path relative to the root, for messages and grant scopes.
    pub fn display_relative(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    fn join(&self, user_path: &str) -> Result<PathBuf, PathError> {
        if user_path.trim().is_empty() {
            return Err(PathError::Invalid("path is empty".into()));
        }
        if user_path.contains('\0') {
            return Err(PathError::Invalid("path contains a NUL byte".into()));
        }
        let expanded = expand_home(user_path);
        let p = Path::new(&expanded);
        Ok(if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.root.join(p)
        })
    }

    /// Walks up from `joined` to the deepest ancestor that exists, returning
    /// it canonicalized, plus the plain names below it (outermost first).
    fn deepest_existing(
        &self,
        user_path: &str,
        joined: &Path,
    ) -> Result<(PathBuf, Vec<std::ffi::OsString>), PathError> {
        let mut rest = Vec::new();
        let mut current = joined;
        loop {
            if current.symlink_metadata().is_ok() {
                let canonical = current.canonicalize().map_err(|_| {
                    PathError::Invalid(format!(
                        "{user_path}: {} is a dangling symlink",
                        self.display_relative(current)
                    ))
                })?;
                rest.reverse();
                return Ok((canonical, rest));
            }
            match current.components().next_back() {
                Some(Component::Normal(name)) => rest.push(name.to_os_string()),
                Some(Component::CurDir) => {}
                _ => {
                    return Err(PathError::Invalid(format!(
                        "{user_path}: `..` is not allowed below a directory that does not exist"
                    )));
                }
            }
            current = current.parent().ok_or_else(|| {
                PathError::Invalid(format!("{user_path}: no existing ancestor directory"))
            })?;
        }
    }

    fn contain(&self, user_path: &str, canonical: PathBuf) -> Result<PathBuf, PathError> {
        if canonical.starts_with(&self.root) {
            Ok(canonical)
        } else {
            Err(PathError::Escapes {
                path: user_path.to_string(),
                root: self.root.display().to_string(),
            })
        }
    }
}

/// `~/x` means the home directory, as in a shell; it is then checked like any
/// other absolute path.
fn expand_home(p: &str) -> String {
    if let Some(rest) = p.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return Path::new(&home).join(rest).display().to_string();
    }
    p.to_string()
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
