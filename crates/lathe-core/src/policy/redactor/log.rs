//! The log file passes the secret matcher too: [`Scrubbed`] wraps the
//! file the log is written to and redacts every line with the secrets the
//! running conversation knows (set by the launch of each conversation,
//! [`know`]), so an error body, a header or a command line that carries a
//! key is kept without it.

use std::io::Write;
use std::sync::{Arc, LazyLock, RwLock};

use super::Redactor;

/// What the log is redacted with: credential shapes from the start, the
/// conversation's own secrets once it is launched.
static LOG_REDACTOR: LazyLock<RwLock<Arc<Redactor>>> =
    LazyLock::new(|| RwLock::new(Arc::new(Redactor::default())));

/// The log is redacted with `redactor` from now on.
pub fn know(redactor: &Redactor) {
    if let Ok(mut current) = LOG_REDACTOR.write() {
        *current = Arc::new(redactor.clone());
    }
}

fn current() -> Arc<Redactor> {
    LOG_REDACTOR
        .read()
        .map(|r| r.clone())
        .unwrap_or_else(|poisoned| poisoned.into_inner().clone())
}

/// A log file whose every write is redacted first (a log line is one
/// write).
pub struct Scrubbed<W> {
    inner: W,
    /// Its own matcher (tests); none: the conversation's.
    with: Option<Arc<Redactor>>,
}

impl<W> Scrubbed<W> {
    /// `inner`, redacted with what the running conversation knows.
    pub fn new(inner: W) -> Self {
        Self { inner, with: None }
    }
}

impl<W: Write> Write for Scrubbed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let redactor = self.with.clone().unwrap_or_else(current);
        match redactor.redact_str(&text) {
            Some(clean) => self.inner.write_all(clean.as_bytes())?,
            None => self.inner.write_all(buf)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_line_with_a_known_key_is_written_without_it() {
        let key = "lm-studio";
        let mut out = Scrubbed {
            inner: Vec::new(),
            with: Some(Arc::new(Redactor::new([key.to_string()]))),
        };
        out.write_all(b"WARN request failed: bad key lm-studio (401)\n")
            .unwrap();
        let written = String::from_utf8(out.inner).unwrap();
        assert!(!written.contains(key), "{written}");
        assert!(written.contains("[REDACTED]") && written.ends_with("(401)\n"));
    }
}
