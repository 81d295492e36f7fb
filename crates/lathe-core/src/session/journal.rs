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
        let path = journal_path(dir, session_id);
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
        // A server's prompts and resources (a thousand each, at most) are
        // what it offers now, not what happened: counted, not kept.
        if matches!(event, AgentEvent::McpServerStatus(_)) {
            for key in ["prompts", "resources"] {
                if let Some(Value::Array(items)) = line.remove(key) {
                    line.insert(format!("{key}_count"), Value::from(items.len()));
                }
            }
        }
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

/// What the person saw of one tool call, as the journal kept it: how it
/// ended, the change it wrote, the last lines of its output, how it was
/// approved. A resumed transcript draws the call from it as it was drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// The call's arguments, as it started.
    pub arguments: Value,
    /// What kind of work its tool does (for a journal written before
    /// events said it: the built-in tool's of that name).
    pub kind: crate::protocol::ToolKind,
    pub status: crate::protocol::ToolStatus,
    pub exit_code: Option<i32>,
    pub metadata: crate::protocol::ResultMetadata,
    pub change: Option<Box<crate::protocol::change::FileChange>>,
    /// The last lines of what it printed (at most `TAIL`), and how many
    /// it printed in all.
    pub tail: Vec<String>,
    pub printed: usize,
    /// How its approval was settled, when it asked or a grant covered it.
    pub decided: Option<(
        crate::protocol::ApprovalDecision,
        crate::protocol::DecisionSource,
    )>,
}

/// Lines of a call's output a journal's reader keeps.
pub const TAIL: usize = 200;

/// What the journal at `path` says the person saw of each finished call,
/// by call id (a server that reuses ids has several, oldest first). A
/// journal that cannot be read gives nothing: the calls come back as the
/// record has them.
pub fn seen(path: &Path) -> std::collections::HashMap<String, Vec<Seen>> {
    use std::collections::{HashMap, VecDeque};
    use std::io::BufRead;
    let mut out: HashMap<String, Vec<Seen>> = HashMap::new();
    let Ok(file) = File::open(path) else {
        return out;
    };
    // What a call started with and printed, until it finishes.
    let mut started: HashMap<String, (Value, crate::protocol::ToolKind)> = HashMap::new();
    let mut printed: HashMap<String, (VecDeque<String>, usize)> = HashMap::new();
    let mut decided = HashMap::new();
    for line in io::BufReader::new(file).split(b'\n').map_while(Result::ok) {
        // Only the lines of calls are parsed.
        let wanted = |marker: &[u8]| line.windows(marker.len()).any(|w| w == marker);
        if !(wanted(b"\"tool_call_")
            || wanted(b"\"tool_progress\"")
            || wanted(b"\"approval_decided\""))
        {
            continue;
        }
        let Ok(event) = serde_json::from_slice::<AgentEvent>(&line) else {
            continue;
        };
        match event {
            AgentEvent::ToolCallStarted {
                call_id,
                tool,
                arguments,
                kind,
                ..
            } => {
                let kind = kind.unwrap_or_else(|| crate::tools::builtin::kind_of(&tool));
                started.insert(call_id, (arguments, kind));
            }
            AgentEvent::ToolProgress {
                call_id,
                stream,
                text,
                ..
            } if stream != crate::protocol::NOTIFY_STREAM => {
                let (tail, count) = printed.entry(call_id).or_default();
                for l in text.split('\n') {
                    if tail.len() == TAIL {
                        tail.pop_front();
                    }
                    tail.push_back(l.to_string());
                    *count += 1;
                }
            }
            AgentEvent::ApprovalDecided {
                call_id,
                decision,
                source,
                ..
            } => {
                decided.insert(call_id, (decision, source));
            }
            AgentEvent::ToolCallFinished {
                call_id,
                status,
                exit_code,
                metadata,
                change,
                ..
            } => {
                let (tail, count) = printed.remove(&call_id).unwrap_or_default();
                let (arguments, kind) = started
                    .remove(&call_id)
                    .unwrap_or((Value::Null, crate::protocol::ToolKind::Other));
                let seen = Seen {
                    arguments,
                    kind,
                    status,
                    exit_code,
                    metadata,
                    change,
                    tail: Vec::from(tail),
                    printed: count,
                    decided: decided.remove(&call_id),
                };
                out.entry(call_id).or_default().push(seen);
            }
            _ => {}
        }
    }
    out
}

/// The events of the journal at `path` that the tool-call log is made
/// of (each call's start, verdicts, approvals, end) and the last list of
/// background commands: a resumed session's log and what was running
/// when it ended. A line that cannot be read is passed over.
pub fn logged(path: &Path) -> Vec<AgentEvent> {
    use std::io::BufRead;
    let Ok(file) = File::open(path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut jobs = None;
    for line in io::BufReader::new(file).split(b'\n').map_while(Result::ok) {
        let wanted = |marker: &[u8]| line.windows(marker.len()).any(|w| w == marker);
        if !(wanted(b"\"tool_call_")
            || wanted(b"\"guardrail_verdict\"")
            || wanted(b"\"judged\"")
            || wanted(b"\"approval_")
            || wanted(b"\"jobs\""))
        {
            continue;
        }
        match serde_json::from_slice::<AgentEvent>(&line) {
            Ok(event @ AgentEvent::Jobs { .. }) => jobs = Some(event),
            Ok(
                event @ (AgentEvent::ToolCallStarted { .. }
                | AgentEvent::GuardrailVerdict { .. }
                | AgentEvent::Judged { .. }
                | AgentEvent::ApprovalRequested(_)
                | AgentEvent::ApprovalDecided { .. }
                | AgentEvent::ToolCallFinished { .. }),
            ) => out.push(event),
            _ => {}
        }
    }
    out.extend(jobs);
    out
}

/// The journal of a session.
pub fn journal_path(dir: &Path, session_id: &str) -> PathBuf {
    dir.join(format!("{session_id}.jsonl"))
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

    /// A journal says what kind each call's tool is; one written before
    /// it did gets the built-in tool's kind of that name (reads fold, a
    /// question reads as one), and any other name is `Other`.
    #[test]
    fn each_call_comes_back_with_its_kind() {
        use crate::protocol::{ResultMetadata, ToolKind, ToolStatus};
        let d = tempfile::tempdir().unwrap();
        let path = journal_path(d.path(), "s1");
        let line = |v: Value| format!("{v}\n");
        let old_started = |id: &str, tool: &str| {
            // As a journal of an earlier version wrote it: no `kind`.
            line(
                serde_json::json!({"type": "tool_call_started", "turn_id": 1,
                "call_id": id, "tool": tool, "arguments": {}}),
            )
        };
        let finished = |id: &str, tool: &str| {
            let ev = AgentEvent::ToolCallFinished {
                call_id: id.into(),
                tool: tool.into(),
                status: ToolStatus::Ok,
                content: serde_json::json!({}),
                metadata: ResultMetadata::default(),
                exit_code: None,
                diff: None,
                change: None,
                summary: None,
            };
            line(serde_json::to_value(&ev).unwrap())
        };
        let new_started = AgentEvent::ToolCallStarted {
            kind: Some(ToolKind::Search),
            turn_id: 1,
            call_id: "c3".into(),
            tool: "repo__find".into(),
            arguments: serde_json::json!({}),
            effect: None,
            parent: None,
        };
        let text = [
            old_started("c1", "read_file"),
            finished("c1", "read_file"),
            old_started("c2", "repo__lookup"),
            finished("c2", "repo__lookup"),
            line(serde_json::to_value(&new_started).unwrap()),
            finished("c3", "repo__find"),
        ]
        .concat();
        std::fs::write(&path, text).unwrap();
        let seen = seen(&path);
        assert_eq!(seen["c1"][0].kind, ToolKind::Read);
        assert_eq!(seen["c2"][0].kind, ToolKind::Other);
        assert_eq!(seen["c3"][0].kind, ToolKind::Search);
    }

    /// What a resumed transcript draws a call from: how it ended, its
    /// change, its last output lines, how it was approved; a reused id
    /// keeps each call apart; a torn or foreign line is passed over.
    #[test]
    fn the_calls_come_back_as_they_were_seen() {
        use crate::protocol::change::FileChange;
        use crate::protocol::{ApprovalDecision, DecisionSource, ResultMetadata, ToolStatus};
        let d = tempfile::tempdir().unwrap();
        let mut j = Journal::create(d.path(), "s1").unwrap();
        let change = FileChange::new("a.txt", "/w/a.txt".into(), Some("milk\n"), "eggs\n");
        let started = |id: &str, args: Value| AgentEvent::ToolCallStarted {
            kind: None,
            turn_id: 1,
            call_id: id.into(),
            tool: "t".into(),
            arguments: args,
            effect: None,
            parent: None,
        };
        let finished =
            |id: &str, status, change: Option<&FileChange>| AgentEvent::ToolCallFinished {
                call_id: id.into(),
                tool: "t".into(),
                status,
                content: serde_json::json!({}),
                metadata: ResultMetadata {
                    duration_ms: 24,
                    ..ResultMetadata::default()
                },
                exit_code: None,
                diff: None,
                change: change.cloned().map(Box::new),
                summary: None,
            };
        j.record(&started("e", serde_json::json!({"path": "a.txt"})));
        j.record(&AgentEvent::ApprovalDecided {
            call_id: "e".into(),
            tool: "t".into(),
            decision: ApprovalDecision::ApproveOnce,
            source: DecisionSource::User,
        });
        j.record(&finished("e", ToolStatus::Ok, Some(&change)));
        j.record(&started("x", serde_json::json!({"command": "seq 9"})));
        for n in 1..=9 {
            j.record(&AgentEvent::ToolProgress {
                call_id: "x".into(),
                tool: "t".into(),
                stream: "stdout".into(),
                text: n.to_string(),
            });
        }
        j.record(&finished("x", ToolStatus::Ok, None));
        // The same id again (a server that numbers its calls).
        j.record(&started("x", serde_json::json!({"command": "true"})));
        j.record(&finished("x", ToolStatus::Denied, None));
        drop(j);
        let path = journal_path(d.path(), "s1");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"type\":\"tool_call_finished\",\"call_id\":\"torn\n");
        std::fs::write(&path, text).unwrap();
        let seen = seen(&path);
        assert_eq!(seen.len(), 2);
        let e = &seen["e"][0];
        assert_eq!(
            e.change.as_ref().map(|c| c.git_patch()),
            Some(change.git_patch())
        );
        assert_eq!(e.metadata.duration_ms, 24);
        assert!(matches!(
            e.decided,
            Some((ApprovalDecision::ApproveOnce, DecisionSource::User))
        ));
        let x = &seen["x"];
        assert_eq!(x[0].tail.len(), 9);
        assert_eq!(x[0].printed, 9);
        assert_eq!(x[1].status, ToolStatus::Denied);
        assert_eq!(x[1].arguments, serde_json::json!({"command": "true"}));
        assert!(super::seen(&d.path().join("none.jsonl")).is_empty());
    }

    #[test]
    fn hostile_session_ids_are_refused() {
        let d = tempfile::tempdir().unwrap();
        for id in ["", "../x", "a/b", "a\0b"] {
            assert!(Journal::create(d.path(), id).is_err(), "{id:?}");
        }
    }
}
