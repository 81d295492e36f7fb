//! What the read rules cover stays out of what the model is told, however
//! it got there. A file covered at the start of a command is not there
//! for it (the sandbox hides it); one that comes to be covered while a
//! command or a background job runs (a key a program generates, a file a
//! dev server writes under `private/`, a server that serves the
//! workspace) is not hidden from that command, so its text is kept out
//! of the command's result instead: every covered file's lines, in the
//! forms a program would print them (as they are, spaced or cased, in
//! hex or base64), join the secrets the model's boundary hides.
//! Rebuilt only when the covered files change.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use super::Redactor;
use crate::protocol::redact::Scrub;

/// The most of one covered file read for its lines.
const PER_FILE: u64 = 256 * 1024;
/// The most lines looked for in all.
const MAX_LINES: usize = 20_000;

/// The text of the covered files, as a matcher.
#[derive(Debug, Default)]
pub struct Withheld {
    /// Each covered file as last read: path, size, change time.
    seen: Mutex<Vec<(PathBuf, u64, i64, i64)>>,
    matcher: RwLock<Arc<Redactor>>,
}

impl Withheld {
    /// Reads `files` (the covered files now) again if any changed, came
    /// or went since the last look.
    pub fn update(&self, files: &[PathBuf]) {
        let mut now: Vec<(PathBuf, u64, i64, i64)> = files
            .iter()
            .filter_map(|f| {
                let m = std::fs::symlink_metadata(f).ok()?;
                m.is_file()
                    .then(|| (f.clone(), m.len(), m.mtime(), m.mtime_nsec()))
            })
            .collect();
        now.sort();
        let Ok(mut seen) = self.seen.lock() else {
            return;
        };
        if *seen == now {
            return;
        }
        let mut lines: Vec<String> = Vec::new();
        for (file, ..) in &now {
            let Ok((bytes, _)) = crate::fs::read_capped(file, PER_FILE) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            lines.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| l.len() >= super::redactor::forms::MIN_FORM)
                    .map(str::to_string),
            );
            if lines.len() >= MAX_LINES {
                tracing::warn!(
                    "the files the read rules cover hold more lines than are looked for"
                );
                lines.truncate(MAX_LINES);
                break;
            }
        }
        lines.sort();
        lines.dedup();
        let matcher = Arc::new(Redactor::for_content(&lines));
        if let Ok(mut m) = self.matcher.write() {
            *m = matcher;
        }
        *seen = now;
    }

    fn current(&self) -> Arc<Redactor> {
        self.matcher
            .read()
            .map(|m| m.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }
}

impl Scrub for Withheld {
    fn scrub(&self, text: &str) -> Option<String> {
        self.current().redact_str(text)
    }
}
