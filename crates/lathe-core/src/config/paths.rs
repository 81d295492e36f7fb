//! Where Lathe keeps its files: `$LATHE_HOME` when set (config.toml,
//! sessions/, logs/ directly under it), else the platform directories from
//! `directories` (on Linux: ~/.config/lathe/config.toml and
//! ~/.local/share/lathe/{sessions,logs}).

use std::path::{Path, PathBuf};

use super::ConfigError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    pub config_file: PathBuf,
    /// Lathe's own data (sessions, logs, which workspaces' hooks are trusted).
    pub data_dir: PathBuf,
    pub sessions_dir: PathBuf,
    pub logs_dir: PathBuf,
}

impl Paths {
    /// Finds the directories; `lathe_home` is the value of `$LATHE_HOME`.
    pub fn discover(lathe_home: Option<&str>) -> Result<Self, ConfigError> {
        if let Some(home) = lathe_home.filter(|h| !h.trim().is_empty()) {
            let home = PathBuf::from(home);
            return Ok(Self::under(&home));
        }
        let dirs = directories::ProjectDirs::from("dev", "lathe", "lathe").ok_or_else(|| {
            ConfigError::Invalid(
                "no home directory found; set LATHE_HOME to a directory Lathe may use".into(),
            )
        })?;
        Ok(Self {
            config_file: dirs.config_dir().join("config.toml"),
            data_dir: dirs.data_dir().to_path_buf(),
            sessions_dir: dirs.data_dir().join("sessions"),
            logs_dir: dirs.data_dir().join("logs"),
        })
    }

    /// The layout under one directory.
    pub fn under(home: &std::path::Path) -> Self {
        Self {
            config_file: home.join("config.toml"),
            data_dir: home.to_path_buf(),
            sessions_dir: home.join("sessions"),
            logs_dir: home.join("logs"),
        }
    }
}

/// A file name for a workspace's own data: its directory's name (safe
/// characters only) and a hash of its whole path, `lathe-3f9a0c1d2e4b`.
pub fn workspace_slug(workspace: &Path) -> String {
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        workspace.as_os_str().as_encoded_bytes(),
    );
    let hash: String = digest.as_ref()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{name}-{hash}")
}
