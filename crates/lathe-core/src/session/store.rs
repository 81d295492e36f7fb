//! The sessions on disk: which belong to a workspace, the newest, and
//! one loaded back.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::history::{self, Item, Rebuilt};

/// One session as `lathe sessions` lists it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SessionInfo {
    pub id: String,
    pub workspace: PathBuf,
    /// Milliseconds since the Unix epoch.
    pub started: u64,
    pub last_activity: u64,
    pub first_prompt: String,
    /// The person's turns its conversation holds (after `/clear` and
    /// rewinds).
    pub turns: u64,
    /// The person said something in it (a session that was only opened
    /// is not listed).
    #[serde(skip)]
    pub said: bool,
    /// The provider, server, wire and model the session used last (a
    /// resumed session goes back to them).
    pub provider: String,
    pub model: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wire: Option<crate::provider::WireApi>,
    /// The hint of the key sent to `base_url` (never shown).
    #[serde(skip)]
    pub key_hint: Option<String>,
    /// How hard the model was asked to think, last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effort: Option<crate::protocol::Effort>,
    /// What the session used and cost, over all its turns (its
    /// subagents', the judge's and compaction's included).
    pub usage: crate::protocol::Usage,
    /// The same, by agent and model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_agent: Vec<crate::protocol::budget::AgentSpend>,
}

/// Why a session cannot be resumed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no session `{0}` (see `lathe sessions`)")]
    Unknown(String),
    #[error("session `{id}` belongs to {workspace}, not this workspace; run it there (-C)")]
    OtherWorkspace { id: String, workspace: String },
    #[error("no earlier session in this workspace (see `lathe sessions --all`)")]
    NoneHere,
    #[error("session `{0}` cannot be read: {1}")]
    Unreadable(String, String),
}

/// Whether `id` can name a session: letters, digits, `-` and `_`, as
/// Lathe makes them (so no id names a file outside the sessions).
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn id_of(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let id = name.strip_suffix(".history.jsonl")?;
    valid_id(id).then(|| id.to_string())
}

fn info(path: &Path) -> Option<SessionInfo> {
    let id = id_of(path)?;
    let records = history::read(path).ok()?;
    let first = records.first()?;
    let Item::Session {
        workspace,
        provider,
        model,
        base_url,
        wire,
        key_hint,
        effort,
        ..
    } = &first.item
    else {
        return None;
    };
    let mut model = model.clone();
    let mut effort = *effort;
    for r in &records {
        match &r.item {
            Item::Model { model: m } => m.clone_into(&mut model),
            Item::Effort { effort: e } => effort = *e,
            _ => {}
        }
    }
    let by_agent = history::spent_by_agent(&records);
    let mut usage = crate::protocol::Usage::default();
    for s in &by_agent {
        usage.add(s.usage);
    }
    let first_prompt = records
        .iter()
        .find_map(|r| match &r.item {
            Item::User { text, .. } => Some(text.lines().next().unwrap_or("").to_string()),
            _ => None,
        })
        .unwrap_or_default();
    let said = records.iter().any(|r| matches!(r.item, Item::User { .. }));
    // The turns its conversation holds, as resuming it shows them.
    let turns = turns_of(&records);
    Some(SessionInfo {
        id,
        workspace: workspace.clone(),
        started: first.ts,
        last_activity: records.last().map_or(first.ts, |r| r.ts),
        first_prompt,
        turns,
        said,
        provider: provider.clone(),
        model,
        base_url: base_url.clone(),
        wire: *wire,
        key_hint: key_hint.clone(),
        effort,
        usage,
        by_agent,
    })
}

/// What `lathe resume`, `--continue` and `/resume` need to know of a
/// session before opening it: where it was served and by which model.
pub fn info_of(dir: &Path, id: &str) -> Option<SessionInfo> {
    if !valid_id(id) {
        return None;
    }
    info(&history::history_path(dir, id))
}

/// How many of the person's turns the conversation of `records` holds
/// (from the last `/clear`, rewinds applied): what the listing, the
/// resume notice and `/resume` say.
fn turns_of(records: &[history::Record]) -> u64 {
    let records = history::conversation_records(records);
    let start = records
        .iter()
        .rposition(|r| matches!(r.item, Item::Clear))
        .map_or(0, |i| i + 1);
    records[start..]
        .iter()
        .filter(|r| matches!(r.item, Item::User { .. }))
        .count() as u64
}

/// The sessions in `dir` (of `workspace`, or all), newest activity first.
pub fn list(dir: &Path, workspace: Option<&Path>) -> Vec<SessionInfo> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<SessionInfo> = entries
        .flatten()
        .filter_map(|e| info(&e.path()))
        .filter(|s| workspace.is_none_or(|w| s.workspace == w))
        .filter(|s| s.said)
        .collect();
    out.sort_by(|a, b| b.last_activity.cmp(&a.last_activity).then(b.id.cmp(&a.id)));
    out
}

/// Whether session `id` (of `workspace`) can be gone on with: what a front
/// end asks before it starts one (the engine loads it, redacted).
pub fn check(dir: &Path, id: &str, workspace: &Path) -> Result<SessionInfo, StoreError> {
    let (info, _) = records_of(dir, id, workspace)?;
    Ok(info)
}

/// The session `id` (of `workspace`), rebuilt, every text passed through
/// `scrub`.
pub fn load(
    dir: &Path,
    id: &str,
    workspace: &Path,
    scrub: &dyn crate::protocol::redact::Scrub,
) -> Result<(SessionInfo, Rebuilt), StoreError> {
    let (info, records) = records_of(dir, id, workspace)?;
    let mut rebuilt = history::rebuild(&records, scrub);
    sweep_interrupted_writes(&rebuilt.shown, workspace);
    let journal = super::journal::journal_path(dir, id);
    attach_seen(&mut rebuilt.shown, &journal);
    rebuilt.log = super::journal::logged(&journal);
    for event in &mut rebuilt.log {
        crate::protocol::redact::Redact::redact(event, scrub);
        // A journal written before events said what kind each tool is.
        if let crate::protocol::AgentEvent::ToolCallStarted {
            tool,
            kind: kind @ None,
            ..
        } = event
        {
            *kind = Some(crate::tools::builtin::kind_of(tool));
        }
        // ... or what each finished call found.
        if let crate::protocol::AgentEvent::ToolCallFinished {
            tool,
            status: crate::protocol::ToolStatus::Ok,
            content,
            summary: summary @ None,
            ..
        } = event
        {
            *summary = crate::tools::builtin::summary_of(tool, content);
        }
    }
    Ok((info, rebuilt))
}

/// A write killed between naming its new contents and renaming them over
/// the file leaves that name beside it: each call the record holds as
/// interrupted has its directory swept of such names (never outside the
/// workspace).
fn sweep_interrupted_writes(shown: &[history::Shown], workspace: &Path) {
    let Ok(root) = workspace.canonicalize() else {
        return;
    };
    for item in shown {
        let history::Shown::Tool {
            arguments, content, ..
        } = item
        else {
            continue;
        };
        if !content.contains(history::INTERRUPTED) {
            continue;
        }
        let Some(path) = serde_json::from_str::<serde_json::Value>(arguments)
            .ok()
            .and_then(|a| a.get("path").and_then(|p| p.as_str()).map(str::to_owned))
        else {
            continue;
        };
        let Some(dir) = root.join(path).parent().and_then(|d| d.canonicalize().ok()) else {
            continue;
        };
        if dir.starts_with(&root) {
            crate::tools::fs::atomic::sweep_leftovers(&dir);
        }
    }
}

/// The records of session `id`, if it is one of `workspace`'s.
fn records_of(
    dir: &Path,
    id: &str,
    workspace: &Path,
) -> Result<(SessionInfo, Vec<history::Record>), StoreError> {
    // The id as given, not the file it leads to: `../x` names nothing.
    if !valid_id(id) {
        return Err(StoreError::Unknown(
            crate::protocol::visible::name(id).into_owned(),
        ));
    }
    let path = history::history_path(dir, id);
    if !path.is_file() {
        return Err(StoreError::Unknown(id.to_string()));
    }
    let records =
        history::read(&path).map_err(|e| StoreError::Unreadable(id.to_string(), e.to_string()))?;
    let info = info(&path)
        .ok_or_else(|| StoreError::Unreadable(id.to_string(), "it has no header".into()))?;
    if info.workspace != workspace {
        return Err(StoreError::OtherWorkspace {
            id: id.to_string(),
            workspace: info.workspace.display().to_string(),
        });
    }
    Ok((info, records))
}

/// Each call of a resumed transcript with what the person saw of it, from
/// the session's journal: by its id, and where a server reused ids, the
/// first not yet taken that started with the same arguments.
fn attach_seen(shown: &mut [history::Shown], journal: &Path) {
    let mut seen = super::journal::seen(journal);
    for item in shown {
        let history::Shown::Tool {
            call_id,
            arguments,
            seen: slot,
            ..
        } = item
        else {
            continue;
        };
        let Some(candidates) = seen.get_mut(call_id.as_str()).filter(|c| !c.is_empty()) else {
            continue;
        };
        let args = serde_json::from_str::<serde_json::Value>(arguments).ok();
        let at = candidates
            .iter()
            .position(|c| Some(&c.arguments) == args.as_ref())
            .unwrap_or(0);
        *slot = Some(Box::new(candidates.remove(at)));
    }
}

/// The newest session of `workspace`.
pub fn newest(dir: &Path, workspace: &Path) -> Result<String, StoreError> {
    list(dir, Some(workspace))
        .into_iter()
        .next()
        .map(|s| s.id)
        .ok_or(StoreError::NoneHere)
}

/// The flags for going on with `session`: its provider, server, wire and
/// model, unless a flag names others. A flag that points at another
/// provider or server drops the session's (its model may not be served
/// there); `--model` alone keeps the session's server.
pub fn resume_flags(
    flags: &crate::config::Overrides,
    session: &SessionInfo,
) -> crate::config::Overrides {
    use crate::provider::{ProviderKind, WireApi};
    let provider = session.provider.parse::<ProviderKind>().ok();
    let same_provider = flags.provider.is_none() || flags.provider == provider;
    let same_server = match (&flags.base_url, &session.base_url) {
        (None, _) => true,
        (Some(a), Some(b)) => crate::provider::server::same(a, b),
        (Some(_), None) => false,
    };
    let mut o = flags.clone();
    o.effort = o.effort.or(session.effort);
    if same_provider && same_server && provider.is_some() {
        o.provider = o.provider.or(provider);
        o.base_url = o.base_url.or_else(|| session.base_url.clone());
        if provider == Some(ProviderKind::OpenAi) {
            o.wire = o.wire.or(session.wire.filter(|w| *w != WireApi::Anthropic));
        }
        if !session.model.is_empty() {
            o.model = o.model.or_else(|| Some(session.model.clone()));
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An id names a session in the sessions directory, nothing else:
    /// `--resume ../../x` does not load a record from elsewhere.
    #[test]
    fn ids_that_lead_out_of_the_sessions_are_unknown() {
        let root = tempfile::tempdir().unwrap();
        let sessions = root.path().join("sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let ws = root.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let record = |path: &Path| {
            let r = history::Record {
                seq: 1,
                parent: 0,
                ts: 0,
                item: Item::Session {
                    workspace: ws.clone(),
                    provider: "openai".into(),
                    model: "m".into(),
                    version: "0".into(),
                    base_url: None,
                    wire: None,
                    key_hint: None,
                    effort: None,
                },
            };
            std::fs::write(path, serde_json::to_string(&r).unwrap() + "\n").unwrap();
        };
        record(&root.path().join("x.history.jsonl"));
        record(&sessions.join("ok-1.history.jsonl"));
        for id in [
            "../x",
            "../../x",
            "/tmp/x",
            "x/../../x",
            "a b",
            "",
            "é",
            "..",
        ] {
            assert!(
                matches!(check(&sessions, id, &ws), Err(StoreError::Unknown(_))),
                "{id:?}"
            );
            assert!(info_of(&sessions, id).is_none(), "{id:?}");
        }
        assert!(check(&sessions, "ok-1", &ws).is_ok());
        assert!(!valid_id(&"a".repeat(129)));
    }

    /// The listing, the resume notice and `/resume` count the same turns
    /// (the conversation's, after `/clear`); a session only opened is not
    /// listed; loading brings the journal's log back, redacted.
    #[test]
    fn every_listing_counts_the_same_turns_and_the_log_comes_back() {
        use crate::protocol::AgentEvent;
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let items = vec![
            Item::Session {
                workspace: ws.clone(),
                provider: "openai".into(),
                model: "m".into(),
                version: "0".into(),
                base_url: None,
                wire: None,
                key_hint: None,
                effort: None,
            },
            Item::User {
                turn: 1,
                text: "first".into(),
                note: None,
                images: vec![],
            },
            Item::TurnEnd { turn: 1 },
            Item::Clear,
            Item::User {
                turn: 2,
                text: "second".into(),
                note: None,
                images: vec![],
            },
            Item::TurnEnd { turn: 2 },
            Item::User {
                turn: 3,
                text: "third".into(),
                note: None,
                images: vec![],
            },
            Item::TurnEnd { turn: 3 },
        ];
        let lines: String = items
            .into_iter()
            .enumerate()
            .map(|(i, item)| {
                let r = history::Record {
                    seq: i as u64 + 1,
                    parent: 0,
                    ts: i as u64,
                    item,
                };
                serde_json::to_string(&r).unwrap() + "\n"
            })
            .collect();
        std::fs::write(history::history_path(root.path(), "s-1"), &lines).unwrap();
        let first_line = lines.lines().next().unwrap().to_string() + "\n";
        std::fs::write(history::history_path(root.path(), "s-empty"), first_line).unwrap();
        let mut journal = crate::session::journal::Journal::create(root.path(), "s-1").unwrap();
        journal.record(&AgentEvent::ToolCallStarted {
            kind: None,
            turn_id: 3,
            call_id: "c1".into(),
            tool: "read_file".into(),
            arguments: serde_json::json!({"path": "sk-live-0123456789abcdefXYZ.txt"}),
            effect: None,
            parent: None,
        });
        journal.record(&AgentEvent::AssistantMessage {
            turn_id: 3,
            text: "not for the log".into(),
        });
        drop(journal);
        let listed = list(root.path(), Some(&ws));
        assert_eq!(listed.len(), 1, "{listed:?}");
        struct Key;
        impl crate::protocol::redact::Scrub for Key {
            fn scrub(&self, text: &str) -> Option<String> {
                text.contains("sk-live-0123456789abcdefXYZ")
                    .then(|| text.replace("sk-live-0123456789abcdefXYZ", "[REDACTED]"))
            }
        }
        let (info, rebuilt) = load(root.path(), "s-1", &ws, &Key).unwrap();
        assert_eq!(listed[0].turns, 2);
        assert_eq!(info.turns, rebuilt.prompts.len() as u64);
        assert_eq!(rebuilt.log.len(), 1, "{:?}", rebuilt.log);
        let logged = serde_json::to_string(&rebuilt.log[0]).unwrap();
        assert!(
            logged.contains("[REDACTED]") && !logged.contains("sk-live"),
            "{logged}"
        );
    }

    #[test]
    fn a_resume_sweeps_what_an_interrupted_write_left_and_nothing_else() {
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("ws");
        std::fs::create_dir_all(ws.join("out")).unwrap();
        let outside = root.path().join("elsewhere");
        std::fs::create_dir_all(&outside).unwrap();
        // Pids past the kernel's largest: never running.
        let left = ws.join("out/.lathe-4194305-0.tmp");
        let beyond = outside.join(".lathe-4194305-0.tmp");
        let untouched = ws.join(".lathe-4194305-1.tmp");
        for p in [&left, &beyond, &untouched] {
            std::fs::write(p, "whole").unwrap();
        }
        let call = |id: &str, path: &str| crate::provider::ToolCall {
            id: id.into(),
            name: "write_file".into(),
            arguments: serde_json::json!({ "path": path, "content": "x" }).to_string(),
        };
        let items = vec![
            Item::Session {
                workspace: ws.clone(),
                provider: "openai".into(),
                model: "m".into(),
                version: "0".into(),
                base_url: None,
                wire: None,
                key_hint: None,
                effort: None,
            },
            Item::User {
                turn: 1,
                text: "write".into(),
                note: None,
                images: vec![],
            },
            Item::Assistant {
                turn: 1,
                text: String::new(),
                tool_calls: vec![
                    call("c1", "out/data.txt"),
                    call("c2", "../elsewhere/data.txt"),
                    call("c3", "done.txt"),
                ],
                usage: crate::protocol::Usage::default(),
                reasoning: String::new(),
                carried: vec![],
                model: "m".into(),
            },
            Item::Approved {
                call_id: "c1".into(),
            },
            Item::Approved {
                call_id: "c2".into(),
            },
            Item::ToolOutput(crate::provider::ToolOutput {
                call_id: "c3".into(),
                content: "wrote".into(),
                is_error: false,
            }),
        ];
        let lines: String = items
            .into_iter()
            .enumerate()
            .map(|(i, item)| {
                let r = history::Record {
                    seq: i as u64 + 1,
                    parent: 0,
                    ts: i as u64,
                    item,
                };
                serde_json::to_string(&r).unwrap() + "\n"
            })
            .collect();
        std::fs::write(history::history_path(root.path(), "s-1"), &lines).unwrap();
        load(root.path(), "s-1", &ws, &crate::policy::Redactor::default()).unwrap();
        assert!(!left.exists(), "the interrupted write's leftover is swept");
        assert!(beyond.exists(), "nothing outside the workspace is touched");
        assert!(
            untouched.exists(),
            "a finished call's directory is left as it is"
        );
    }
}
