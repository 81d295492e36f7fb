//! The conversation as a durable record: `sessions/<id>.history.jsonl`.
//!
//! One line per model-facing item (the person's message, the model's
//! answer with its tool calls and their raw arguments, each tool output
//! exactly as the model saw it, a turn's end or abort) and per intent (a
//! request about to be sent, an approved call about to run), each with a
//! sequence number and its causal parent. A recorder on a thread of its
//! own writes them, so the turn never waits on the disk but for an
//! intent, which is written before its step starts; a turn's end is
//! synced to the disk. Reading ignores a torn last line (a killed
//! process) and rebuilds the conversation exactly: every tool call gets
//! an answer, the recorded one or an "interrupted" one (a call approved
//! but unanswered is never run again).

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

use super::checkpoints::TurnTrees;
use crate::policy::grants::GrantKey;
use crate::protocol::Usage;
use crate::protocol::redact::{Redact, Scrub};
use crate::provider::{Message, ToolCall, ToolOutput};

mod redact;
mod spent;

pub use redact::key_hint;
pub use spent::spent_by_agent;
use spent::usage_by_model;

/// How many items may wait for the recorder before a turn waits.
const QUEUE: usize = 1024;

/// One model-facing item or intent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Item {
    /// The first line: what the session is.
    Session {
        workspace: PathBuf,
        provider: String,
        model: String,
        version: String,
        /// Where the session's model is served, and the wire it speaks
        /// (a resumed session goes back to them).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base_url: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wire: Option<crate::provider::WireApi>,
        /// Which key was sent there (a short one-way hint, see
        /// [`key_hint`]): a resumed session sends the key it finds only
        /// where that same key went before.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key_hint: Option<String>,
        /// How hard the model was asked to think (`--effort`, the config).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        effort: Option<crate::protocol::Effort>,
    },
    /// The person chose another model (`/model`).
    Model {
        model: String,
    },
    /// The person chose how hard the model thinks (`/effort`; none: the
    /// config's or the server's).
    Effort {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        effort: Option<crate::protocol::Effort>,
    },
    /// What the person sent while turn `turn` ran, as the model got it
    /// with its next request.
    Steer {
        turn: u64,
        text: String,
    },
    User {
        turn: u64,
        /// The person's message (with the files it attached).
        text: String,
        /// What Lathe told the model before it (how the last turn ended, a
        /// rewind): the model reads it first; it is never shown as the
        /// person's words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        /// The images that went with it, as they were sent.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<crate::provider::image::Image>,
    },
    /// A request is about to be sent.
    Request {
        turn: u64,
    },
    Assistant {
        turn: u64,
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        #[serde(default)]
        usage: Usage,
        /// What the model thought, as shown.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        reasoning: String,
        /// What goes back to the server verbatim (thinking signatures,
        /// encrypted reasoning).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        carried: Vec<crate::provider::Carried>,
        /// The model that answered.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        model: String,
    },
    /// What an agent other than the conversation's own model spent (a
    /// subagent, the judge, compaction): for `/cost` and the caps after a
    /// resume.
    Spent(crate::protocol::budget::AgentSpend),
    /// The model refused turn `turn`: the turn is left out of the
    /// conversation (or the model keeps refusing what follows).
    Refused {
        turn: u64,
    },
    /// A call was approved and is about to run.
    Approved {
        call_id: String,
    },
    ToolOutput(crate::provider::ToolOutput),
    TurnEnd {
        turn: u64,
    },
    /// A turn that did not end well: interrupted, failed, cut short.
    TurnAborted {
        turn: u64,
        reason: String,
    },
    /// `/clear`: what came before is not part of the conversation.
    Clear,
    /// The person approved these operations for the conversation, until
    /// `expires_ms` (milliseconds since the Unix epoch).
    Grant {
        keys: Vec<GrantKey>,
        expires_ms: u64,
    },
    /// The person revoked the grant of this operation.
    Revoke {
        key: Box<GrantKey>,
    },
    /// The conversation so far became `summary` and its last `kept`
    /// messages (see [`apply_compaction`]).
    Compacted {
        summary: String,
        kept: usize,
        reason: String,
    },
    /// The workspace's files before turn `turn` first changed them
    /// (`before`), and when it ended (`after`; absent while it runs), as
    /// trees of the checkpoint repository.
    Checkpoint {
        turn: u64,
        before: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<String>,
    },
    /// The person rewound to before turn `turn`: its files (those
    /// `restored` and `removed`), the conversation, or both.
    Rewind {
        turn: u64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        restored: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        removed: Vec<String>,
        files: bool,
        conversation: bool,
    },
}

/// A line: an item with its place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub seq: u64,
    /// The item that led to this one (0: none).
    pub parent: u64,
    /// Milliseconds since the Unix epoch.
    pub ts: u64,
    #[serde(flatten)]
    pub item: Item,
}

#[derive(Debug)]
enum Cmd {
    /// An item; `true`: its answer and reasoning were redacted as they
    /// streamed (see [`Recorder::append_shown`]).
    Append(Item, Option<oneshot::Sender<()>>, bool),
    /// Flush and sync; answered when done.
    Sync(oneshot::Sender<()>),
}

/// Sends items to the recorder thread.
#[derive(Debug, Clone)]
pub struct Recorder {
    tx: mpsc::Sender<Cmd>,
    path: PathBuf,
}

impl Recorder {
    /// Appends to `<dir>/<session_id>.history.jsonl` (created 0600),
    /// numbering on from what it holds; every item passes `scrub` first.
    pub fn open(
        dir: &Path,
        session_id: &str,
        scrub: std::sync::Arc<dyn Scrub + Send + Sync>,
    ) -> std::io::Result<Self> {
        super::journal::private_dir(dir)?;
        let path = history_path(dir, session_id);
        let existing = read(&path).unwrap_or_default();
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)?;
        // A torn last line (a killed process) stays a line of its own.
        if ends_torn(&path) {
            file.write_all(b"\n")?;
        }
        let (tx, rx) = mpsc::channel(QUEUE);
        let state = Writer::new(file, &existing, scrub);
        std::thread::Builder::new()
            .name("lathe-recorder".into())
            .spawn(move || state.run(rx))?;
        Ok(Self { tx, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues `item` (waits only when the queue is full).
    pub async fn append(&self, item: Item) {
        let _ = self.tx.send(Cmd::Append(item, None, false)).await;
    }

    /// Queues a response whose answer and reasoning are as they were
    /// shown, redacted already as they streamed: the rest of it is
    /// redacted, they are not gone over again.
    pub async fn append_shown(&self, item: Item) {
        let _ = self.tx.send(Cmd::Append(item, None, true)).await;
    }

    /// Queues `item` without waiting (from code that cannot): dropped,
    /// and logged, if the queue is full.
    pub fn append_detached(&self, item: Item) {
        if self.tx.try_send(Cmd::Append(item, None, false)).is_err() {
            tracing::warn!("the session history is behind; an item was dropped");
        }
    }

    /// Writes `item` before returning (an intent, before its step).
    pub async fn append_now(&self, item: Item) {
        let (ack, done) = oneshot::channel();
        if self
            .tx
            .send(Cmd::Append(item, Some(ack), false))
            .await
            .is_ok()
        {
            let _ = done.await;
        }
    }

    /// Makes everything so far durable (a turn's end).
    pub async fn sync(&self) {
        let (ack, done) = oneshot::channel();
        if self.tx.send(Cmd::Sync(ack)).await.is_ok() {
            let _ = done.await;
        }
    }
}

/// Whether a file's last byte is not a line break.
fn ends_torn(path: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = File::open(path) else {
        return false;
    };
    if f.seek(SeekFrom::End(-1)).is_err() {
        return false;
    }
    let mut last = [0u8; 1];
    f.read_exact(&mut last).is_ok() && last[0] != b'\n'
}

/// Milliseconds since the Unix epoch (0 before it).
pub fn epoch_ms(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The history file of a session.
pub fn history_path(dir: &Path, session_id: &str) -> PathBuf {
    dir.join(format!("{session_id}.history.jsonl"))
}

struct Writer {
    out: Option<BufWriter<File>>,
    /// Every item passes it before it is kept.
    scrub: std::sync::Arc<dyn Scrub + Send + Sync>,
    seq: u64,
    last: u64,
    /// The intent of each approved call, for its output's parent.
    approved: HashMap<String, u64>,
    /// The assistant message of each call.
    asked: HashMap<String, u64>,
}

impl Writer {
    fn new(
        file: File,
        existing: &[Record],
        scrub: std::sync::Arc<dyn Scrub + Send + Sync>,
    ) -> Self {
        let seq = existing.last().map_or(0, |r| r.seq);
        Self {
            out: Some(BufWriter::new(file)),
            scrub,
            seq,
            last: seq,
            approved: HashMap::new(),
            asked: HashMap::new(),
        }
    }

    fn parent_of(&self, item: &Item) -> u64 {
        match item {
            Item::Approved { call_id } => self.asked.get(call_id).copied().unwrap_or(self.last),
            Item::ToolOutput(ToolOutput { call_id, .. }) => self
                .approved
                .get(call_id)
                .or_else(|| self.asked.get(call_id))
                .copied()
                .unwrap_or(self.last),
            _ => self.last,
        }
    }

    fn write(&mut self, mut item: Item, shown: bool) {
        redact::redact_item(&mut item, &*self.scrub, shown);
        self.seq += 1;
        let seq = self.seq;
        let parent = self.parent_of(&item);
        match &item {
            Item::Assistant { tool_calls, .. } => {
                for c in tool_calls {
                    self.asked.insert(c.id.clone(), seq);
                }
            }
            Item::Approved { call_id } => {
                self.approved.insert(call_id.clone(), seq);
            }
            _ => {}
        }
        if !matches!(item, Item::Approved { .. } | Item::ToolOutput { .. }) {
            self.last = seq;
        }
        let ts = epoch_ms(std::time::SystemTime::now());
        let record = Record {
            seq,
            parent,
            ts,
            item,
        };
        let Some(out) = self.out.as_mut() else {
            return;
        };
        let result = serde_json::to_writer(&mut *out, &record)
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"));
        if let Err(e) = result {
            tracing::warn!(error = %e, "the session history cannot be written; it stops here");
            self.out = None;
        }
    }

    fn flush(&mut self, sync: bool) {
        if let Some(out) = self.out.as_mut() {
            let result = out.flush().and_then(|()| {
                if sync {
                    out.get_ref().sync_data()
                } else {
                    Ok(())
                }
            });
            if let Err(e) = result {
                tracing::warn!(error = %e, "the session history cannot be written; it stops here");
                self.out = None;
            }
        }
    }

    fn run(mut self, mut rx: mpsc::Receiver<Cmd>) {
        while let Some(cmd) = rx.blocking_recv() {
            match cmd {
                Cmd::Append(item, ack, shown) => {
                    self.write(item, shown);
                    if let Some(ack) = ack {
                        self.flush(false);
                        let _ = ack.send(());
                    } else if rx.is_empty() {
                        // Nothing more waiting: to the OS, so a kill loses
                        // nothing written.
                        self.flush(false);
                    }
                }
                Cmd::Sync(ack) => {
                    self.flush(true);
                    let _ = ack.send(());
                }
            }
        }
        self.flush(true);
    }
}

/// Every readable record of a history file, in order; a line that does
/// not parse (a torn last line) is left out.
pub fn read(path: &Path) -> std::io::Result<Vec<Record>> {
    let file = File::open(path)?;
    let mut out = Vec::new();
    for line in BufReader::new(file).split(b'\n') {
        let line = line?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Record>(&line) {
            Ok(r) => out.push(r),
            Err(e) => tracing::debug!(error = %e, "a history line that does not parse is left out"),
        }
    }
    Ok(out)
}

/// A conversation rebuilt from its history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rebuilt {
    pub messages: Vec<Message>,
    pub usage: Usage,
    /// What each model used over the whole session (clears included).
    pub by_model: std::collections::BTreeMap<String, Usage>,
    /// The same, by agent (main, each subagent, the judge, compaction).
    pub by_agent: Vec<crate::protocol::budget::AgentSpend>,
    pub turns: u64,
    /// A note for the model about how the last turn ended, if it did not
    /// end well (prefixed to the next message).
    pub aborted: Option<String>,
    /// The conversation's grants with when they expire (milliseconds
    /// since the Unix epoch); expired ones included, the agent skips them.
    pub grants: Vec<(GrantKey, u64)>,
    /// The conversation as a transcript shows it.
    pub shown: Vec<Shown>,
    /// The turns whose file changes can be undone, oldest first.
    pub checkpoints: Vec<TurnTrees>,
    /// The files before the session first changed them (`/diff`).
    pub start_tree: Option<String>,
    /// Each turn of the conversation with the person's message, oldest
    /// first: what a conversation can be rewound to.
    pub prompts: Vec<(u64, String)>,
    /// The tool-call log as the session's journal kept it (every call,
    /// subagents' too, with its verdict, approval and end), then the last
    /// list of background commands: what a resumed session shows again.
    pub log: Vec<crate::protocol::AgentEvent>,
}

/// One piece of a resumed conversation, for the transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    User(String),
    /// What the person sent while a turn ran (not a turn of its own).
    Steer(String),
    Assistant(String),
    /// What the model thought before it answered.
    Reasoning(String),
    Tool {
        call_id: String,
        name: String,
        arguments: String,
        /// What the model saw, and whether it was an error.
        content: String,
        is_error: bool,
        /// What the person saw of it (the journal's), when known.
        seen: Option<Box<super::journal::Seen>>,
        /// What it found or did, as its tool reads its result (a
        /// successful call of a tool that says).
        summary: Option<crate::protocol::Summary>,
        /// What kind of work its tool does (a built-in tool's; any other:
        /// `Other`).
        kind: crate::protocol::ToolKind,
    },
    /// How a turn ended, when not well.
    Note(String),
}

/// Adds the person's message; one that repeats the message before it,
/// which never got an answer (its turn failed), takes its place rather
/// than being sent twice.
pub fn push_user(messages: &mut Vec<Message>, text: String) {
    if let Some(Message::User(last)) = messages.last_mut()
        && without_note(last) == without_note(&text)
    {
        *last = text;
        return;
    }
    messages.push(Message::User(text));
}

/// Adds what the person sent while the model worked, marked so: to the
/// person's message before it, or as a message of its own (after tool
/// results).
pub fn push_steering(messages: &mut Vec<Message>, text: &str) {
    let marked = format!(
        "[The person sent this while you were working. It comes before your next step: take \
         it into account now.]\n\n{text}"
    );
    match messages.last_mut() {
        Some(Message::User(last)) => {
            last.push_str("\n\n");
            last.push_str(&marked);
        }
        _ => messages.push(Message::User(marked)),
    }
}

/// What the model reads in place of the turns a compaction folded away.
pub const SUMMARY_HEADING: &str = "[Lathe summarized the earlier part of this conversation to \
     free context. The summary:]";

/// The conversation after a compaction: the summary, as the person's
/// message, then the last `kept` messages. A kept part that starts with
/// the person's message takes the summary in front of it (one message,
/// so roles still alternate).
pub fn apply_compaction(messages: &mut Vec<Message>, summary: &str, kept: usize) {
    let kept = kept.min(messages.len());
    let tail = messages.split_off(messages.len() - kept);
    messages.clear();
    let head = format!("{SUMMARY_HEADING}\n\n{}", summary.trim());
    let mut tail = tail.into_iter().peekable();
    match tail.peek() {
        Some(Message::User(text)) => {
            let merged = format!("{head}\n\n[The conversation goes on:]\n\n{text}");
            tail.next();
            messages.push(Message::User(merged));
        }
        _ => messages.push(Message::User(head)),
    }
    messages.extend(tail);
}

/// A message without the note about how the turn before it ended.
fn without_note(text: &str) -> &str {
    // Records written before notes were kept apart had them in front.
    if (text.starts_with("[the previous turn") || text.starts_with("[the person "))
        && let Some((_, rest)) = text.split_once("]\n\n")
    {
        return rest;
    }
    text
}

/// How the note of a plan-mode turn begins (`agent::turn::PLAN_MODE`).
pub const PLAN_MODE_MARK: &str = "[Plan mode:";

/// What the model was sent for a message: Lathe's note first, then the
/// person's words.
pub fn with_note(note: Option<&str>, text: &str) -> String {
    match note {
        Some(note) => format!("{note}\n\n{text}"),
        None => text.to_string(),
    }
}

/// The records of the conversation as it is after every rewind: a
/// conversation rewound to before turn N goes on from the records before
/// that turn's message (the rewind itself stays, to be told).
pub(super) fn conversation_records(records: &[Record]) -> Vec<&Record> {
    let mut kept: Vec<&Record> = Vec::with_capacity(records.len());
    for r in records {
        let rewound = match &r.item {
            Item::Rewind {
                turn,
                conversation: true,
                ..
            }
            | Item::Refused { turn } => Some(*turn),
            _ => None,
        };
        if let Some(turn) = rewound
            && let Some(at) = kept
                .iter()
                .rposition(|k| matches!(&k.item, Item::User { turn: t, .. } if *t == turn))
        {
            kept.truncate(at);
        }
        kept.push(r);
    }
    kept
}

/// The rounds of calls whose file changes can still be undone, oldest
/// first, each with its turn: those that changed something, less those a
/// rewind of the files undid. A round Lathe was stopped in (no tree
/// after it) is left out: what it changed is not known.
pub fn checkpoints(records: &[Record]) -> Vec<TurnTrees> {
    let mut out: Vec<TurnTrees> = Vec::new();
    for r in records {
        match &r.item {
            Item::Checkpoint {
                turn,
                before,
                after,
            } => match out
                .iter_mut()
                .find(|t| t.turn == *turn && t.before == *before && t.after.is_none())
            {
                Some(t) => t.after = after.clone(),
                None => out.push(TurnTrees {
                    turn: *turn,
                    before: before.clone(),
                    after: after.clone(),
                }),
            },
            Item::Rewind {
                turn, files: true, ..
            } => out.retain(|t| t.turn < *turn),
            _ => {}
        }
    }
    out.retain(|t| t.after.as_ref().is_some_and(|a| *a != t.before));
    out
}

/// File names in a note, at most 20 and how many more. A name is the
/// person's or the model's: written so that no name can pass for more of
/// the note.
fn name_list(v: &[String]) -> String {
    const SHOWN: usize = 20;
    let mut s = v
        .iter()
        .take(SHOWN)
        .map(|p| {
            if p.chars()
                .any(|c| c.is_control() || c == ',' || c == ']' || c == '[')
            {
                format!("{p:?}")
            } else {
                p.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    if v.len() > SHOWN {
        s.push_str(&format!(" and {} more", v.len() - SHOWN));
    }
    s
}

/// What a rewind did to the files, in words: `restored a.py`, `removed b.py`.
fn files_put_back(restored: &[String], removed: &[String]) -> Vec<String> {
    let mut done = Vec::new();
    if !restored.is_empty() {
        done.push(format!("restored {}", name_list(restored)));
    }
    if !removed.is_empty() {
        done.push(format!("removed {}", name_list(removed)));
    }
    done
}

/// What the model is told of a rewind.
pub fn rewind_note(
    turn: u64,
    restored: &[String],
    removed: &[String],
    files: bool,
    conversation: bool,
) -> String {
    let what = files_put_back(restored, removed);
    let changes = if what.is_empty() {
        "no file needed it".to_string()
    } else {
        what.join("; ")
    };
    match (files, conversation) {
        (true, false) => format!(
            "[the person undid the file changes made since turn {turn} began: {changes}. \
             Those files are as they were before that turn (files git ignores, build \
             directories, .git and nested repositories are not checkpointed: a change there \
             stays); read them again before relying on what you saw since]"
        ),
        (true, true) => format!(
            "[the person rewound the conversation and the files to before turn {turn}: \
             {changes}]"
        ),
        _ => format!(
            "[the person rewound the conversation to before turn {turn}; this changed no file: \
             they are as they are now, which may differ from what you saw. Read them again \
             before relying on them]"
        ),
    }
}

/// A rewind as the person is told of it (the model's note says more).
fn rewind_shown(
    turn: u64,
    restored: &[String],
    removed: &[String],
    files: bool,
    conversation: bool,
) -> String {
    let mut done = files_put_back(restored, removed);
    if files && done.is_empty() {
        done.push("no file needed restoring".into());
    }
    let what = if conversation {
        format!("↶ rewound to before turn {turn}")
    } else {
        format!("↶ undid the file changes of turn {turn}")
    };
    if done.is_empty() {
        what
    } else {
        format!("{what}: {}", done.join("; "))
    }
}

/// Where the files a message mentions (`@path`) begin, after its text.
pub const ATTACHED: &str = "\n\n[The person mentioned these workspace files; their contents:]";

/// Where the MCP resources a message mentions (`@server:uri`) begin.
pub const RESOURCES: &str = "\n\n[The person mentioned these MCP resources; their contents:]";

/// A message as the person wrote it: without the files and resources it
/// attached.
pub fn as_written(text: &str) -> &str {
    let end = [ATTACHED, RESOURCES]
        .iter()
        .filter_map(|m| text.find(m))
        .min()
        .unwrap_or(text.len());
    &text[..end]
}

/// What the model is told for a call with no recorded output.
pub const INTERRUPTED: &str = "interrupted: this call has no recorded result (Lathe stopped \
     while it ran, or before it started); it was not run again. Check its effects before \
     calling it again.";

/// The conversation `records` hold (from the last `/clear` on): messages
/// in order, every tool call answered, in the order the model asked;
/// every text passes `scrub` (a record kept before redaction reached it
/// sends no secret back).
pub fn rebuild(records: &[Record], scrub: &dyn Scrub) -> Rebuilt {
    let records: Vec<Record> = records
        .iter()
        .cloned()
        .map(|mut r| {
            r.item.redact(scrub);
            r
        })
        .collect();
    rebuild_redacted(&records)
}

fn rebuild_redacted(records: &[Record]) -> Rebuilt {
    let mut out = Rebuilt {
        by_agent: spent_by_agent(records),
        by_model: usage_by_model(records),
        // Turn ids never repeat, whatever was cleared or rewound.
        turns: records
            .iter()
            .filter_map(|r| match &r.item {
                Item::User { turn, .. } => Some(*turn),
                _ => None,
            })
            .max()
            .unwrap_or(0),
        checkpoints: checkpoints(records),
        start_tree: records.iter().find_map(|r| match &r.item {
            Item::Checkpoint { before, .. } => Some(before.clone()),
            _ => None,
        }),
        ..Rebuilt::default()
    };
    let records = conversation_records(records);
    let records = records.as_slice();
    let start = records
        .iter()
        .rposition(|r| matches!(r.item, Item::Clear))
        .map_or(0, |i| i + 1);
    let mut outputs: HashMap<&str, (&str, bool)> = HashMap::new();
    for r in &records[start..] {
        if let Item::ToolOutput(ToolOutput {
            call_id,
            content,
            is_error,
        }) = &r.item
        {
            outputs
                .entry(call_id.as_str())
                .or_insert((content, *is_error));
        }
    }
    let mut open_turn: Option<u64> = None;
    let mut ended: HashSet<u64> = HashSet::new();
    for r in &records[start..] {
        match &r.item {
            Item::User {
                turn,
                text,
                note,
                images,
            } => {
                open_turn = Some(*turn);
                out.user(*turn, text, note.as_deref(), images);
            }
            Item::Assistant {
                text,
                tool_calls,
                usage,
                reasoning,
                carried,
                ..
            } => {
                out.assistant(text, tool_calls, *usage, reasoning, carried, &outputs);
            }
            Item::Steer { text, .. } => {
                push_steering(&mut out.messages, text);
                out.shown.push(Shown::Steer(text.clone()));
            }
            Item::TurnEnd { turn } => {
                ended.insert(*turn);
                open_turn = None;
            }
            Item::Refused { turn } => out.shown.push(Shown::Note(format!(
                "the model refused turn {turn}; it was left out of the conversation"
            ))),
            Item::TurnAborted { turn, reason } => {
                ended.insert(*turn);
                open_turn = None;
                out.aborted = Some(format!("[the previous turn did not finish: {reason}]"));
                out.shown
                    .push(Shown::Note(format!("turn {turn} did not finish: {reason}")));
            }
            Item::Grant { keys, expires_ms } => {
                for key in keys {
                    out.grants.retain(|(k, _)| k != key);
                    out.grants.push((key.clone(), *expires_ms));
                }
            }
            Item::Revoke { key } => out.grants.retain(|(k, _)| k != key.as_ref()),
            Item::Compacted { summary, kept, .. } => {
                apply_compaction(&mut out.messages, summary, *kept);
                out.shown.push(Shown::Note(
                    "the earlier conversation was summarized to free context".into(),
                ));
            }
            Item::Rewind {
                turn,
                restored,
                removed,
                files,
                conversation,
            } => {
                out.shown.push(Shown::Note(rewind_shown(
                    *turn,
                    restored,
                    removed,
                    *files,
                    *conversation,
                )));
                out.aborted = Some(rewind_note(*turn, restored, removed, *files, *conversation));
            }
            _ => {}
        }
    }
    if let Some(turn) = open_turn.filter(|t| !ended.contains(t)) {
        out.aborted = Some(format!(
            "[the previous turn ({turn}) was cut off: Lathe stopped before it ended]"
        ));
        out.shown.push(Shown::Note(format!(
            "turn {turn} was cut off: Lathe stopped before it ended"
        )));
    }
    out
}

impl Rebuilt {
    /// The person's message of `turn`, as the model had it (Lathe's note
    /// first) and as shown (the person's words alone).
    fn user(
        &mut self,
        turn: u64,
        text: &str,
        note: Option<&str>,
        images: &[crate::provider::image::Image],
    ) {
        let shown = without_note(text);
        let text = &with_note(note, text);
        self.prompts.push((turn, shown.to_string()));
        // The note was for this message, and is in its text.
        self.aborted = None;
        self.shown.push(Shown::User(as_written(shown).to_string()));
        // A turn in plan mode says so again, as it did.
        if note.is_some_and(|n| n.contains(PLAN_MODE_MARK)) {
            self.shown.push(Shown::Note(
                "plan mode: the model looks with read-only tools and proposes a plan; nothing \
                 changes until you approve it"
                    .into(),
            ));
        }
        if images.is_empty() {
            push_user(&mut self.messages, text.to_string());
        } else {
            self.messages.push(Message::UserImages {
                text: text.to_string(),
                images: images.to_vec(),
            });
            for i in images {
                self.shown.push(Shown::Note(i.label()));
            }
        }
    }

    /// A response, and the results its calls got (`outputs`, by call id;
    /// a call without one was interrupted).
    fn assistant(
        &mut self,
        text: &str,
        tool_calls: &[ToolCall],
        usage: Usage,
        reasoning: &str,
        carried: &[crate::provider::Carried],
        outputs: &HashMap<&str, (&str, bool)>,
    ) {
        self.usage.add(usage);
        let calls: Vec<ToolCall> = tool_calls
            .iter()
            .map(|c| ToolCall {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect();
        self.messages.push(Message::Assistant {
            text: text.to_string(),
            tool_calls: calls.clone(),
            reasoning: reasoning.to_string(),
            carried: carried.to_vec(),
        });
        if !reasoning.trim().is_empty() {
            self.shown.push(Shown::Reasoning(reasoning.to_string()));
        }
        if !text.trim().is_empty() {
            self.shown.push(Shown::Assistant(text.to_string()));
        }
        if !calls.is_empty() {
            let results = calls
                .iter()
                .map(|c| match outputs.get(c.id.as_str()) {
                    Some((content, is_error)) => ToolOutput {
                        call_id: c.id.clone(),
                        content: (*content).to_string(),
                        is_error: *is_error,
                    },
                    None => ToolOutput {
                        call_id: c.id.clone(),
                        content: serde_json::json!({ "error": INTERRUPTED }).to_string(),
                        is_error: true,
                    },
                })
                .collect::<Vec<ToolOutput>>();
            for (c, r) in calls.iter().zip(&results) {
                let (kind, summary) = crate::tools::builtin::described(&c.name, r);
                self.shown.push(Shown::Tool {
                    call_id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                    content: r.content.clone(),
                    is_error: r.is_error,
                    seen: None,
                    summary,
                    kind,
                });
            }
            self.messages.push(Message::ToolResults(results));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What must go back to the server verbatim survives the record: the
    /// conversation rebuilt from it is the one that was sent, reasoning,
    /// signatures, encrypted items and images included.
    #[test]
    fn carried_reasoning_and_images_survive_the_record() {
        use crate::provider::{Carried, WireApi};
        let carried = vec![
            Carried {
                wire: WireApi::Anthropic,
                call_id: None,
                item: serde_json::json!({"type": "thinking", "thinking": "t", "signature": "s"}),
                model: "claude-sonnet-4-5".into(),
                server: "https://api.anthropic.com".into(),
            },
            Carried {
                wire: WireApi::Chat,
                call_id: Some("c1".into()),
                item: serde_json::json!({"extra_content": {"google": {"thought_signature": "x"}}}),
                model: String::new(),
                server: "http://127.0.0.1:8080/v1".into(),
            },
        ];
        let image = crate::provider::image::Image {
            name: "shot.png".into(),
            media_type: "image/png".into(),
            data: "iVBORw0K".into(),
            width: 2,
            height: 1,
        };
        let records = [
            rec(
                1,
                Item::User {
                    turn: 1,
                    text: "look".into(),
                    note: None,
                    images: vec![image.clone()],
                },
            ),
            rec(
                2,
                Item::Assistant {
                    turn: 1,
                    text: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "read_file".into(),
                        arguments: "{}".into(),
                    }],
                    usage: Usage::default(),
                    reasoning: "t".into(),
                    carried: carried.clone(),
                    model: "claude-sonnet-4-5".into(),
                },
            ),
        ];
        // Through the file's text, as a resumed session reads it.
        let text: String = records
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        let read: Vec<Record> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let r = rebuild(&read, &crate::policy::Redactor::default());
        assert_eq!(
            r.messages[0],
            Message::UserImages {
                text: "look".into(),
                images: vec![image]
            }
        );
        let Message::Assistant {
            reasoning,
            carried: back,
            ..
        } = &r.messages[1]
        else {
            panic!("{:?}", r.messages[1]);
        };
        assert_eq!(reasoning, "t");
        assert_eq!(back, &carried);
        assert!(r.shown.contains(&Shown::Reasoning("t".into())));
    }

    fn rec(seq: u64, item: Item) -> Record {
        Record {
            seq,
            parent: seq.saturating_sub(1),
            ts: 0,
            item,
        }
    }

    #[test]
    fn every_call_gets_an_answer_and_a_cut_turn_is_said() {
        let records = vec![
            rec(
                1,
                Item::User {
                    images: Vec::new(),
                    turn: 1,
                    text: "fix it".into(),
                    note: None,
                },
            ),
            rec(2, Item::Request { turn: 1 }),
            rec(
                3,
                Item::Assistant {
                    reasoning: String::new(),
                    carried: Vec::new(),
                    model: String::new(),
                    turn: 1,
                    text: String::new(),
                    tool_calls: vec![
                        ToolCall {
                            id: "a".into(),
                            name: "read_file".into(),
                            arguments: "{}".into(),
                        },
                        ToolCall {
                            id: "b".into(),
                            name: "exec_shell".into(),
                            arguments: "{\"command\":\"make\"}".into(),
                        },
                    ],
                    usage: Usage {
                        input_tokens: 10,
                        output_tokens: 2,
                        ..Default::default()
                    },
                },
            ),
            rec(
                4,
                Item::ToolOutput(ToolOutput {
                    call_id: "a".into(),
                    content: "{\"content\":\"x\"}".into(),
                    is_error: false,
                }),
            ),
            rec(
                5,
                Item::Approved {
                    call_id: "b".into(),
                },
            ),
        ];
        let r = rebuild(&records, &crate::policy::Redactor::default());
        assert_eq!(r.messages.len(), 3);
        let Message::ToolResults(results) = &r.messages[2] else {
            panic!("{r:?}")
        };
        assert_eq!(results[0].content, "{\"content\":\"x\"}");
        assert!(results[1].is_error && results[1].content.contains("not run again"));
        assert!(r.aborted.as_deref().unwrap().contains("cut off"));
        assert_eq!(r.usage.input_tokens, 10);
        assert_eq!(r.turns, 1);
        // The transcript's view: the message, each call with its result
        // (the cut one as interrupted), and the note.
        assert!(matches!(&r.shown[0], Shown::User(t) if t == "fix it"));
        let tools: Vec<(&str, bool)> = r
            .shown
            .iter()
            .filter_map(|s| match s {
                Shown::Tool {
                    call_id, is_error, ..
                } => Some((call_id.as_str(), *is_error)),
                _ => None,
            })
            .collect();
        assert_eq!(tools, [("a", false), ("b", true)]);
        assert!(matches!(r.shown.last(), Some(Shown::Note(n)) if n.contains("cut off")));
    }

    #[test]
    fn a_failed_turn_resent_is_sent_once_and_the_record_is_taken_as_written() {
        let records = vec![
            rec(
                1,
                Item::User {
                    images: Vec::new(),
                    turn: 1,
                    text: "deploy".into(),
                    note: None,
                },
            ),
            rec(
                2,
                Item::TurnAborted {
                    turn: 1,
                    reason: "provider error: HTTP 503".into(),
                },
            ),
            rec(
                3,
                Item::User {
                    images: Vec::new(),
                    turn: 2,
                    text: "deploy".into(),
                    note: None,
                },
            ),
            rec(4, Item::TurnEnd { turn: 2 }),
        ];
        let r = rebuild(&records, &crate::policy::Redactor::default());
        assert_eq!(r.messages, vec![Message::User("deploy".into())]);
        assert_eq!(
            r.aborted, None,
            "the note was for the message that followed"
        );
        let mut live = Vec::new();
        push_user(&mut live, "deploy".into());
        push_user(
            &mut live,
            "[the previous turn did not finish: x]\n\ndeploy".into(),
        );
        assert_eq!(live.len(), 1, "{live:?}");
        push_user(&mut live, "something else".into());
        assert_eq!(live.len(), 2);
    }

    #[test]
    fn grants_come_back_as_granted_less_the_revoked_and_cleared() {
        let key = |p: &str| GrantKey::FileWrite { path: p.into() };
        let records = vec![
            rec(
                1,
                Item::Grant {
                    keys: vec![key("old")],
                    expires_ms: 5,
                },
            ),
            rec(2, Item::Clear),
            rec(
                3,
                Item::Grant {
                    keys: vec![key("a"), key("b")],
                    expires_ms: 10,
                },
            ),
            rec(
                4,
                Item::Revoke {
                    key: Box::new(key("a")),
                },
            ),
            rec(
                5,
                Item::Grant {
                    keys: vec![key("b")],
                    expires_ms: 20,
                },
            ),
        ];
        let r = rebuild(&records, &crate::policy::Redactor::default());
        assert_eq!(r.grants, vec![(key("b"), 20)]);
        // As a line of the file, and back.
        let line = serde_json::to_string(&records[2]).unwrap();
        assert_eq!(serde_json::from_str::<Record>(&line).unwrap(), records[2]);
    }

    /// Lathe's note to the model (a rewind, an unfinished turn) goes to
    /// the model before the person's next message, and is shown as a
    /// notice once: never as the person's words. `/undo` says it undid.
    #[test]
    fn notes_to_the_model_are_never_the_persons_words() {
        let user = |seq, turn, text: &str, note: Option<String>| {
            rec(
                seq,
                Item::User {
                    turn,
                    text: text.into(),
                    note,
                    images: Vec::new(),
                },
            )
        };
        let undo = rewind_note(1, &["a.py".into()], &[], true, false);
        assert!(
            undo.starts_with("[the person undid the file changes"),
            "{undo}"
        );
        let back = rewind_note(1, &[], &[], false, true);
        assert!(back.contains("this changed no file"), "{back}");
        let records = vec![
            user(1, 1, "fix it", None),
            rec(2, Item::TurnEnd { turn: 1 }),
            rec(
                3,
                Item::Rewind {
                    turn: 1,
                    restored: vec!["a.py".into()],
                    removed: Vec::new(),
                    files: true,
                    conversation: false,
                },
            ),
            user(4, 2, "and what about the docs?", Some(undo.clone())),
            rec(5, Item::TurnEnd { turn: 2 }),
        ];
        let r = rebuild(&records, &crate::policy::Redactor::default());
        let Message::User(sent) = &r.messages[1] else {
            panic!("{:?}", r.messages)
        };
        assert_eq!(sent, &format!("{undo}\n\nand what about the docs?"));
        let people: Vec<&str> = r
            .shown
            .iter()
            .filter_map(|s| match s {
                Shown::User(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(people, ["fix it", "and what about the docs?"]);
        let notes = r
            .shown
            .iter()
            .filter(|s| matches!(s, Shown::Note(n) if n.contains("undid")))
            .count();
        assert_eq!(notes, 1, "{:?}", r.shown);
        assert!(
            r.shown.iter().any(
                |s| matches!(s, Shown::Note(n) if n == "↶ undid the file changes of turn 1: restored a.py")
            ),
            "{:?}",
            r.shown
        );
        assert_eq!(r.prompts[1].1, "and what about the docs?");
    }

    #[test]
    fn a_clear_starts_over() {
        let records = vec![
            rec(
                1,
                Item::User {
                    images: Vec::new(),
                    turn: 1,
                    text: "old".into(),
                    note: None,
                },
            ),
            rec(2, Item::TurnEnd { turn: 1 }),
            rec(3, Item::Clear),
            rec(
                4,
                Item::User {
                    images: Vec::new(),
                    turn: 2,
                    text: "new".into(),
                    note: None,
                },
            ),
            rec(
                5,
                Item::Assistant {
                    reasoning: String::new(),
                    carried: Vec::new(),
                    model: String::new(),
                    turn: 2,
                    text: "hi".into(),
                    tool_calls: vec![],
                    usage: Usage::default(),
                },
            ),
            rec(6, Item::TurnEnd { turn: 2 }),
        ];
        let r = rebuild(&records, &crate::policy::Redactor::default());
        assert_eq!(
            r.messages,
            vec![
                Message::User("new".into()),
                Message::assistant("hi", vec![])
            ]
        );
        assert_eq!(r.aborted, None);
    }

    #[tokio::test]
    async fn the_recorder_numbers_links_and_survives_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let rec = Recorder::open(
            dir.path(),
            "s1",
            std::sync::Arc::new(crate::policy::Redactor::default()),
        )
        .unwrap();
        rec.append(Item::User {
            images: Vec::new(),
            turn: 1,
            text: "hi".into(),
            note: None,
        })
        .await;
        rec.append(Item::Assistant {
            reasoning: String::new(),
            carried: Vec::new(),
            model: String::new(),
            turn: 1,
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: "c".into(),
                name: "t".into(),
                arguments: "{}".into(),
            }],
            usage: Usage::default(),
        })
        .await;
        rec.append_now(Item::Approved {
            call_id: "c".into(),
        })
        .await;
        rec.append(Item::ToolOutput(ToolOutput {
            call_id: "c".into(),
            content: "ok".into(),
            is_error: false,
        }))
        .await;
        rec.sync().await;
        let path = rec.path().to_path_buf();
        // A torn line at the end, as a kill leaves it.
        use std::io::Write as _;
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"seq\":5,\"par")
            .unwrap();
        let records = read(&path).unwrap();
        assert_eq!(records.len(), 4);
        assert_eq!(records[2].parent, 2, "the approval follows its call");
        assert_eq!(records[3].parent, 3, "the output follows its approval");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        // Opened again, it numbers on.
        drop(rec);
        let rec = Recorder::open(
            dir.path(),
            "s1",
            std::sync::Arc::new(crate::policy::Redactor::default()),
        )
        .unwrap();
        rec.append(Item::TurnEnd { turn: 1 }).await;
        rec.sync().await;
        let records = read(&path).unwrap();
        assert_eq!(records.last().unwrap().seq, 5);
    }

    /// A response recorded as shown: its answer and reasoning (redacted
    /// as they streamed) are kept as they are, everything else of it
    /// still passes the matcher.
    #[tokio::test]
    async fn a_response_recorded_as_shown_keeps_its_text_and_redacts_the_rest() {
        const KEY: &str = "lm-studio-local-key-0123456789";
        let dir = tempfile::tempdir().unwrap();
        let redactor = crate::policy::Redactor::new([KEY.to_string()]);
        let rec = Recorder::open(dir.path(), "s1", std::sync::Arc::new(redactor)).unwrap();
        rec.append_shown(Item::Assistant {
            reasoning: "thought about [REDACTED]".into(),
            carried: Vec::new(),
            model: format!("model-{KEY}"),
            turn: 1,
            text: "the key is [REDACTED]".into(),
            tool_calls: vec![ToolCall {
                id: "c".into(),
                name: "t".into(),
                arguments: format!("{{\"k\":\"{KEY}\"}}"),
            }],
            usage: Usage::default(),
        })
        .await;
        rec.sync().await;
        let raw = std::fs::read_to_string(rec.path()).unwrap();
        assert!(!raw.contains(KEY), "{raw}");
        let records = read(rec.path()).unwrap();
        let Item::Assistant {
            text, reasoning, ..
        } = &records[0].item
        else {
            panic!("{:?}", records[0].item);
        };
        assert_eq!(text, "the key is [REDACTED]");
        assert_eq!(reasoning, "thought about [REDACTED]");
    }

    /// A turn in plan mode comes back with the note that said so.
    #[test]
    fn a_plan_mode_turn_says_so_again() {
        assert!(crate::agent::plan_mode_note().starts_with(PLAN_MODE_MARK));
        let records = vec![rec(
            1,
            Item::User {
                turn: 1,
                text: "look at the parser".into(),
                note: Some(crate::agent::plan_mode_note().to_string()),
                images: vec![],
            },
        )];
        let r = rebuild_redacted(&records);
        assert_eq!(r.shown[0], Shown::User("look at the parser".into()));
        assert!(
            matches!(&r.shown[1], Shown::Note(n) if n.starts_with("plan mode:")),
            "{:?}",
            r.shown
        );
    }
}
