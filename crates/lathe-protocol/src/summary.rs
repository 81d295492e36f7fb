//! What a finished call found or did, typed: what a front end says in
//! one line (`exit 1`, `3 matches in 2 files`, `lines 1-80 of 200`)
//! without reading the tool's JSON result. The tool that made the
//! result says what it means ([`Summary`] on `tool_call_finished`).

use serde::{Deserialize, Serialize};

/// A successful call's result, in what it means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Summary {
    /// A command ran to its end: how it exited.
    Exited { code: i32 },
    /// A command started in the background, by its handle.
    Background { handle: String },
    /// A background command's output read: how many new lines, and
    /// whether it still runs or how it ended.
    Output {
        lines: u64,
        running: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
    },
    /// Files found by name.
    Files { count: u64 },
    /// Matches found in files.
    Matches { count: u64, files: u64 },
    /// A directory's entries listed.
    Entries { count: u64 },
    /// A file's lines read.
    Lines { start: u64, end: u64, total: u64 },
    /// A change written in part: the hunks written, and those the person
    /// left out.
    Written {
        path: String,
        written: u64,
        left_out: u64,
    },
    /// The person's answer to the model's question (`None`: they left it
    /// to the model).
    Answer {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<String>,
    },
    /// A subagent's work: how many calls it made.
    Task { calls: u64 },
    /// A plan set: steps done of all, and the one in progress.
    Plan {
        done: u64,
        steps: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        current: Option<String>,
    },
    /// What the tool said it did (`created a.py`).
    Said { message: String },
}

impl Summary {
    /// What most results say of themselves, read from the keys every
    /// tool shares: a command's exit code, a change written in part, a
    /// message.
    pub fn generic(result: &serde_json::Value) -> Option<Summary> {
        let int = |k: &str| result.get(k).and_then(serde_json::Value::as_u64);
        if let Some(code) = result
            .get("exit_code")
            .and_then(serde_json::Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
        {
            return Some(Summary::Exited { code });
        }
        if let (Some(written), Some(left)) = (
            int("hunks_applied"),
            result
                .get("not_applied")
                .and_then(serde_json::Value::as_array)
                .map(Vec::len),
        ) && left > 0
        {
            return Some(Summary::Written {
                path: result
                    .get("path")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                written,
                left_out: left as u64,
            });
        }
        result
            .get("message")
            .and_then(serde_json::Value::as_str)
            .map(|m| Summary::Said {
                message: m.to_string(),
            })
    }
}

/// The keys a tool's JSON result shares with every other
/// (docs/headless.md), read in one place so a front end knows no key.
#[derive(Debug, Clone, Copy)]
pub struct Shared<'a>(pub &'a serde_json::Value);

impl<'a> Shared<'a> {
    fn text(self, key: &str) -> Option<&'a str> {
        self.0.get(key).and_then(serde_json::Value::as_str)
    }

    /// Why the call failed (`{"error": …}`).
    pub fn error(self) -> Option<&'a str> {
        self.text("error")
    }

    /// Why the sandbox may be what stopped a command.
    pub fn sandbox(self) -> Option<&'a str> {
        self.text("sandbox")
    }

    /// What a command started in the background printed in its first
    /// moment (a result with a `handle`).
    pub fn background_output(self) -> Option<&'a str> {
        self.0.get("handle")?;
        self.text("output")
    }
}

/// A summary's words came from a result that passed the model's boundary
/// (already redacted); redacted again where it is written, all the same.
impl crate::redact::Redact for Summary {
    fn redact(&mut self, s: &dyn crate::redact::Scrub) {
        match self {
            Summary::Background { handle: t }
            | Summary::Written { path: t, .. }
            | Summary::Said { message: t } => t.redact(s),
            Summary::Answer { answer: t } | Summary::Plan { current: t, .. } => t.redact(s),
            Summary::Exited { .. }
            | Summary::Output { .. }
            | Summary::Files { .. }
            | Summary::Matches { .. }
            | Summary::Entries { .. }
            | Summary::Lines { .. }
            | Summary::Task { .. } => {}
        }
    }
}
