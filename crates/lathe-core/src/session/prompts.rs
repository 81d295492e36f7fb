//! The messages a person sent in a workspace, for Up in the composer
//! across runs: `<data>/prompts/<workspace>-<hash>.jsonl`, one JSON
//! string per line, the newest last. Reading keeps the last [`KEEP`] and
//! skips a torn line; a file grown past twice that is rewritten
//! (atomically) with the last [`KEEP`].

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// How many messages are remembered per workspace.
pub const KEEP: usize = 1000;
/// The longest message remembered (a pasted log is not).
const MAX_LEN: usize = 64 * 1024;

#[derive(Debug, Clone)]
pub struct PromptLog {
    path: PathBuf,
}

impl PromptLog {
    /// The log of `workspace` under `data_dir`.
    pub fn new(data_dir: &Path, workspace: &Path) -> Self {
        let name = crate::config::paths::workspace_slug(workspace);
        Self {
            path: data_dir.join("prompts").join(format!("{name}.jsonl")),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The remembered messages, oldest first.
    pub fn load(&self) -> Vec<String> {
        let Ok(file) = std::fs::File::open(&self.path) else {
            return Vec::new();
        };
        let mut all: Vec<String> = BufReader::new(file)
            .split(b'\n')
            .map_while(Result::ok)
            .filter_map(|line| serde_json::from_slice::<String>(&line).ok())
            .collect();
        let grown = all.len() > 2 * KEEP;
        if all.len() > KEEP {
            all.drain(..all.len() - KEEP);
        }
        if grown && let Err(e) = self.rewrite(&all) {
            tracing::warn!(error = %e, "cannot trim the prompt history");
        }
        all
    }

    /// Remembers `text` (a message just sent).
    pub fn append(&self, text: &str) -> std::io::Result<()> {
        if text.trim().is_empty() || text.len() > MAX_LEN {
            return Ok(());
        }
        if let Some(dir) = self.path.parent() {
            super::journal::private_dir(dir)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .mode(0o600)
            .open(&self.path)?;
        // After a torn line (a full disk, a kill), a line of its own.
        let mut line = if ends_torn(&mut file) {
            b"\n".to_vec()
        } else {
            Vec::new()
        };
        // A key pasted into a message is not kept on disk for Up.
        let clean = crate::policy::Redactor::default().redact_str(text);
        let text = clean.as_deref().unwrap_or(text);
        serde_json::to_writer(&mut line, text).map_err(std::io::Error::from)?;
        line.push(b'\n');
        // One write: a line is whole or, if the disk is full, torn and
        // skipped on reading.
        file.write_all(&line)
    }

    fn rewrite(&self, kept: &[String]) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        for text in kept {
            serde_json::to_writer(&mut tmp, text).map_err(std::io::Error::from)?;
            tmp.write_all(b"\n")?;
        }
        tmp.as_file().sync_data()?;
        tmp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

fn ends_torn(file: &mut std::fs::File) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let mut last = [0u8; 1];
    file.seek(SeekFrom::End(-1)).is_ok() && file.read_exact(&mut last).is_ok() && last[0] != b'\n'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_come_back_in_order_per_workspace() {
        let data = tempfile::tempdir().unwrap();
        let a = PromptLog::new(data.path(), Path::new("/w/a"));
        let b = PromptLog::new(data.path(), Path::new("/w/b"));
        a.append("first").unwrap();
        a.append("second\nwith two lines").unwrap();
        a.append("   ").unwrap();
        b.append("other").unwrap();
        assert_eq!(a.load(), vec!["first", "second\nwith two lines"]);
        assert_eq!(b.load(), vec!["other"]);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the history is the person's alone");
    }

    /// A key pasted into a message is not written to disk for Up.
    #[test]
    fn a_pasted_key_is_not_kept() {
        let data = tempfile::tempdir().unwrap();
        let log = PromptLog::new(data.path(), Path::new("/w"));
        log.append("try AKIAABCDEFGHIJKLMNOP now").unwrap();
        assert_eq!(log.load(), ["try [REDACTED] now"]);
    }

    #[test]
    fn a_torn_line_is_skipped_and_the_file_is_trimmed() {
        let data = tempfile::tempdir().unwrap();
        let log = PromptLog::new(data.path(), Path::new("/w"));
        for i in 0..(2 * KEEP + 5) {
            log.append(&format!("m{i}")).unwrap();
        }
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(log.path())
            .unwrap();
        f.write_all(b"\"torn").unwrap();
        let small = PromptLog::new(data.path(), Path::new("/small"));
        small.append("one").unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(small.path())
            .unwrap()
            .write_all(b"\"to")
            .unwrap();
        small.append("two").unwrap();
        assert_eq!(small.load(), vec!["one", "two"]);
        let got = log.load();
        assert_eq!(got.len(), KEEP);
        assert_eq!(got.last().map(String::as_str), Some("m2004"));
        let lines = std::fs::read_to_string(log.path()).unwrap().lines().count();
        assert_eq!(lines, KEEP, "trimmed on disk");
        log.append("after").unwrap();
        assert_eq!(log.load().last().map(String::as_str), Some("after"));
    }
}
