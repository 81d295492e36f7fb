//! Where Lathe keeps its files: `$LATHE_HOME` when set (config.toml,
//! sessions/, logs/ directly under it), else the platform directories from
//! `directories` (on Linux: ~/.config/lathe/config.toml and
//! ~/.local/share/lathe/{sessions,logs}).

use std::path::PathBuf;

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
