//! The session journal: an append-only JSONL file per session.
//!
//! Each line is an `AgentEvent` as `--json` prints it, plus `ts` (RFC 3339,
//! UTC). Lines are flushed as they are written, so a killed process loses
//! at most the line in flight. A failed write (a full disk) is logged once
//! and disables the journal; the session itself goes on.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::protocol::AgentEvent;

#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    out: Option<BufWriter<File>>,
}

/// Creates `dir` if needed, readable by its owner only.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

impl Journal {
    /// Opens (creating) `<dir>/<session_id>.jsonl`.
    pub fn create(dir: &Path, session_id: &str) -> io::Result<Self> {
        if session_id.is_empty()
            || session_id.len() > 256
            || !session_id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("invalid session id `{session_id}`"),
            ));
        }
        private_dir(dir)?;
        let path = dir.join(format!("{session_id}.jsonl"));
        // Only its owner may read a conversation.
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)?;
        Ok(Self {
            path,
            out: Some(BufWriter::new(file)),
        })
    }

    #[cfg(any(test, feature = "internals"))]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `event` (text deltas are skipped).
    pub fn record(&mut self, event: &AgentEvent) {
        if matches!(event, AgentEvent::AssistantDelta { .. }) {
            return;
        }
        let Some(out) = self.out.as_mut() else {
            return;
        };
        let mut line = match serde_json::to_value(event) {
            Ok(Value::Object(map)) => map,
            _ => return,
        };
        let ts = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
        line.insert("ts".into(), Value::String(ts));
        let result = serde_json::to_writer(&mut *out, &line)
            .map_err(io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        if let Err(e) = result {
            tracing::warn!(path = %self.path.display(), error = %e, "session journal write failed; journal disabled");
            self.out = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_one_line_per_event_and_skips_deltas() {
        let d = tempfile::tempdir().unwrap();
        let mut j = Journal::create(d.path(), "0190-abc").unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(j.path()), 0o600, "a journal is its owner's only");
            assert_eq!(mode(d.path()), 0o700);
        }
        j.record(&AgentEvent::TurnStarted {
            turn_id: 1,
            prompt: "hi".into(),
        });
        j.record(&AgentEvent::AssistantDelta {
            turn_id: 1,
            text: "h".into(),
        });
        j.record(&AgentEvent::AssistantMessage {
            turn_id: 1,
            text: "hello".into(),
        });
        let text = std::fs::read_to_string(j.path()).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["type"], "turn_started");
        assert!(lines[0]["ts"].as_str().unwrap().ends_with('Z'));
        assert_eq!(lines[1]["text"], "hello");
    }

    #[test]
    fn hostile_session_ids_are_refused() {
        let d = tempfile::tempdir().unwrap();
        for id in ["", "../x", "a/b", "a\0b"] {
            assert!(Journal::create(d.path(), id).is_err(), "{id:?}");
        }
    }
}
