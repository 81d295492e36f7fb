//! A resumed session on screen: its transcript (each call as it ended,
//! a subagent's calls under their task), its log, and what was running
//! in the background when it ended.

use super::*;
use crate::protocol::ToolKind;

impl App {
    /// What the journal of a resumed session kept beyond its transcript:
    /// the log of every call (subagents' too), and the background
    /// commands that were running when it ended, which the quit stopped.
    pub(super) fn replay_earlier(&mut self, logged: &[AgentEvent]) {
        self.calls.replay(logged);
        let stopped = logged.iter().rev().find_map(|e| match e {
            AgentEvent::Jobs { jobs } => Some(jobs),
            _ => None,
        });
        for job in stopped.into_iter().flatten().filter(|j| j.running) {
            self.transcript.push(Cell::Notice(
                NoticeKind::Info,
                format!(
                    "{} `{}` was running in the background when the session ended; it was \
                     stopped then",
                    job.handle,
                    crate::protocol::visible::command(&job.command)
                ),
            ));
        }
    }
}

/// A resumed conversation into the transcript: messages, and each tool
/// call finished as it ended.
/// Returns where each of the person's messages is.
pub(super) fn replay(
    transcript: &mut Transcript,
    shown: &[crate::session::history::Shown],
    logged: &[AgentEvent],
) -> Vec<usize> {
    use crate::protocol::{ResultMetadata, ToolStatus};
    use crate::session::history::Shown;
    let parse = |s: &str| {
        serde_json::from_str::<serde_json::Value>(s)
            .unwrap_or_else(|_| serde_json::Value::String(s.to_string()))
    };
    let mut users = Vec::new();
    for item in shown {
        match item {
            Shown::User(text) => {
                users.push(transcript.len());
                transcript.push(Cell::User(text.clone()));
            }
            Shown::Steer(text) => transcript.push(Cell::User(text.clone())),
            Shown::Assistant(text) => transcript.push(Cell::Assistant(text.clone())),
            Shown::Reasoning(text) => transcript.push(Cell::Thinking(Box::new(
                crate::components::cells::ThinkingCell {
                    text: text.clone(),
                    done: true,
                    ..Default::default()
                },
            ))),
            Shown::Note(text) => transcript.push(Cell::Notice(NoticeKind::Info, text.clone())),
            Shown::Tool {
                call_id,
                name,
                arguments,
                content,
                is_error,
                seen,
                summary,
                kind,
            } => {
                let content_len = content.len();
                let content = parse(content);
                let status = match (
                    *is_error,
                    crate::protocol::summary::Shared(&content).error(),
                ) {
                    _ if let Some(seen) = seen => seen.status,
                    (false, _) => ToolStatus::Ok,
                    (true, Some(e)) if e.starts_with("permission denied") => ToolStatus::Denied,
                    (true, _) => ToolStatus::Error,
                };
                // What kind of tool it is, as the journal says (else as
                // the core knows its built-in tools).
                let kind = seen.as_ref().map_or(*kind, |s| s.kind);
                let mut cell = ToolCell::new(call_id, name, kind, &parse(arguments));
                let metadata = match seen {
                    // As it was drawn: its diff, its output's last lines,
                    // its time, how it was approved.
                    Some(seen) => {
                        cell.change = seen.change.as_deref().cloned();
                        for line in &seen.tail {
                            cell.push_output(line);
                        }
                        cell.printed = seen.printed.max(cell.printed);
                        cell.approval = seen
                            .decided
                            .as_ref()
                            .and_then(|(d, s)| crate::components::cells::approval_words(d, *s));
                        cell.elapsed_ms = seen.metadata.duration_ms;
                        seen.metadata.clone()
                    }
                    None => {
                        cell.earlier = true;
                        ResultMetadata {
                            bytes: content_len,
                            ..ResultMetadata::default()
                        }
                    }
                };
                cell.state = ToolState::Done {
                    status,
                    summary: summarize(status, &content, summary.as_ref()),
                    metadata,
                };
                transcript.push_tool(cell);
                // A subagent's calls, under the task they were made for.
                for sub in subagent_calls(logged, call_id) {
                    transcript.push_tool(sub);
                }
            }
        }
    }
    users
}

/// The calls a subagent made for `task` (its call id), as the journal
/// kept them, each as it ended.
fn subagent_calls(logged: &[AgentEvent], task: &str) -> Vec<ToolCell> {
    let mut cells: Vec<ToolCell> = Vec::new();
    for ev in logged {
        match ev {
            AgentEvent::ToolCallStarted {
                call_id,
                tool,
                arguments,
                kind,
                parent: Some(parent),
                ..
            } if parent == task => {
                let kind = kind.unwrap_or(ToolKind::Other);
                let mut cell = ToolCell::new(call_id, tool, kind, arguments);
                cell.nested = true;
                cell.parent = Some(parent.clone());
                cell.earlier = true;
                cells.push(cell);
            }
            AgentEvent::ToolCallFinished {
                call_id,
                status,
                content,
                metadata,
                change,
                summary,
                ..
            } => {
                if let Some(cell) = cells
                    .iter_mut()
                    .find(|c| c.call_id == *call_id && c.is_running())
                {
                    cell.elapsed_ms = metadata.duration_ms;
                    cell.change = change.as_deref().cloned();
                    cell.state = ToolState::Done {
                        status: *status,
                        summary: summarize(*status, content, summary.as_ref()),
                        metadata: metadata.clone(),
                    };
                }
            }
            _ => {}
        }
    }
    // One that never ended (Lathe stopped while it ran): not running now.
    for cell in cells.iter_mut().filter(|c| c.is_running()) {
        cell.state = ToolState::Done {
            status: crate::protocol::ToolStatus::Error,
            summary: "did not finish: the session ended while it ran".into(),
            metadata: crate::protocol::ResultMetadata::default(),
        };
    }
    cells
}
