//! Lathe's events as ACP's: pure functions from what the engine says to
//! what an editor shows (tool calls with their kind, title, locations and
//! content; plans; modes; the permission options), and back (a chosen
//! option as Lathe's decision).

use std::path::Path;

use agent_client_protocol::v1::schema::{
    self as acp, ContentBlock, ContentChunk, Diff, PermissionOption, PermissionOptionKind, Plan,
    PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionMode, SessionModeState, TextContent,
    ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdateFields,
};
use serde_json::Value;

use crate::protocol::change::FileChange;
use crate::protocol::{
    ApprovalDecision, ApprovalMode, ApprovalRequest, PlanStep, StepStatus, ToolKind, ToolStatus,
};

/// The most of a call's output or result an update carries (its tail).
pub const SHOWN_OUTPUT: usize = 16 * 1024;

/// Text from elsewhere on one line, at most `max` characters.
pub fn short(text: &str, max: usize) -> String {
    let line = crate::protocol::visible::one_line(text);
    if line.chars().count() <= max {
        return line;
    }
    let mut cut: String = line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Text as a content block.
pub fn text(s: impl Into<String>) -> ContentBlock {
    ContentBlock::Text(TextContent::new(s.into()))
}

/// Text as a chunk of a message.
pub fn chunk(s: impl Into<String>) -> ContentChunk {
    ContentChunk::new(text(s))
}

/// ACP's kind of a call: from Lathe's kind, and the tool where Lathe's
/// kind says less than ACP's (a deletion and a move are edits to Lathe).
pub fn kind(tool: &str, kind: Option<ToolKind>) -> acp::ToolKind {
    match (tool, kind) {
        ("delete_file", _) => acp::ToolKind::Delete,
        ("move_file", _) => acp::ToolKind::Move,
        (_, Some(ToolKind::Read | ToolKind::List)) => acp::ToolKind::Read,
        (_, Some(ToolKind::Search)) => acp::ToolKind::Search,
        (_, Some(ToolKind::Shell)) => acp::ToolKind::Execute,
        (_, Some(ToolKind::Edit)) => acp::ToolKind::Edit,
        (_, Some(ToolKind::Web)) => acp::ToolKind::Fetch,
        (_, Some(ToolKind::Plan | ToolKind::Task)) => acp::ToolKind::Think,
        _ => acp::ToolKind::Other,
    }
}

/// A call's title: a command as it is, else the tool and what it works on.
pub fn title(tool: &str, arguments: &Value) -> String {
    let key = crate::protocol::humanize::key_argument(arguments, 200);
    match (tool, key.is_empty()) {
        ("exec_shell", false) => key,
        (_, true) => tool.to_string(),
        _ => format!("{tool} {key}"),
    }
}

/// The files a call works on, absolute (the editor follows along), with
/// a line where the arguments name one.
pub fn locations(workspace: &Path, arguments: &Value) -> Vec<ToolCallLocation> {
    let line = ["offset", "line", "start_line"]
        .iter()
        .find_map(|k| arguments.get(k).and_then(Value::as_u64))
        .and_then(|l| u32::try_from(l).ok());
    ["path", "file_path", "from", "to"]
        .iter()
        .filter_map(|k| arguments.get(k).and_then(Value::as_str))
        .filter(|p| !p.is_empty())
        .map(|p| ToolCallLocation::new(workspace.join(p)).line(line))
        .collect()
}

/// A call as it starts: pending until it runs (or is asked about).
pub fn started(
    workspace: &Path,
    call_id: &str,
    tool: &str,
    arguments: &Value,
    tool_kind: Option<ToolKind>,
) -> ToolCall {
    ToolCall::new(call_id.to_string(), title(tool, arguments))
        .kind(kind(tool, tool_kind))
        .status(ToolCallStatus::Pending)
        .locations(locations(workspace, arguments))
        .raw_input(arguments.clone())
}

/// A change as ACP diffs, one per hunk (what the person reviews: the
/// lines around each change, as Lathe shows them, secrets hidden).
pub fn diffs(workspace: &Path, change: &FileChange) -> Vec<ToolCallContent> {
    let path = workspace.join(&change.path);
    if change.hunks.is_empty() {
        // A move, or a new empty file: nothing changes within.
        let shown = match &change.from {
            Some(from) => format!("{from} → {}", change.path),
            None => change.path.clone(),
        };
        return vec![ToolCallContent::from(text(shown))];
    }
    change
        .hunks
        .iter()
        .map(|h| {
            let mut old = String::new();
            let mut new = String::new();
            for line in &h.lines {
                let (tag, rest) = line.split_at(line.chars().next().map_or(0, char::len_utf8));
                match tag {
                    " " => {
                        old.push_str(rest);
                        old.push('\n');
                        new.push_str(rest);
                        new.push('\n');
                    }
                    "-" => {
                        old.push_str(rest);
                        old.push('\n');
                    }
                    "+" => {
                        new.push_str(rest);
                        new.push('\n');
                    }
                    _ => {}
                }
            }
            let created = matches!(change.kind, crate::protocol::change::ChangeKind::Create);
            ToolCallContent::Diff(Diff::new(path.clone(), new).old_text((!created).then_some(old)))
        })
        .collect()
}

/// The tail of `s`, at most `max` bytes, cut at a character boundary.
pub fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// How a finished call shows: its status, and its content (the change's
/// diffs, else what it printed or returned).
pub fn finished(
    workspace: &Path,
    status: ToolStatus,
    content: &Value,
    change: Option<&FileChange>,
    printed: &str,
) -> ToolCallUpdateFields {
    let acp_status = if status == ToolStatus::Ok {
        ToolCallStatus::Completed
    } else {
        ToolCallStatus::Failed
    };
    let shown = if let Some(c) = change.filter(|_| status == ToolStatus::Ok) {
        diffs(workspace, c)
    } else {
        let result = match content {
            Value::String(s) => s.clone(),
            other => crate::protocol::summary::Shared(other)
                .error()
                .map(str::to_string)
                .unwrap_or_else(|| serde_json::to_string_pretty(other).unwrap_or_default()),
        };
        let body = if printed.is_empty() || status != ToolStatus::Ok {
            result
        } else {
            printed.to_string()
        };
        vec![ToolCallContent::from(text(fenced(tail(
            &body,
            SHOWN_OUTPUT,
        ))))]
    };
    ToolCallUpdateFields::new()
        .status(acp_status)
        .content(shown)
        .raw_output(content.clone())
}

/// Output in a fence longer than any run of backticks inside it (an
/// editor renders message text as Markdown).
pub fn fenced(body: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{}\n{fence}", body.trim_end_matches('\n'))
}

/// The plan as ACP entries (all of it, each time).
pub fn plan(steps: &[PlanStep]) -> Plan {
    Plan::new(
        steps
            .iter()
            .map(|s| {
                PlanEntry::new(
                    s.step.clone(),
                    PlanEntryPriority::Medium,
                    match s.status {
                        StepStatus::Pending => PlanEntryStatus::Pending,
                        StepStatus::InProgress => PlanEntryStatus::InProgress,
                        StepStatus::Done => PlanEntryStatus::Completed,
                    },
                )
            })
            .collect(),
    )
}

/// The approval modes as session modes, `current` chosen.
pub fn modes(current: ApprovalMode) -> SessionModeState {
    SessionModeState::new(
        current.as_str().to_string(),
        ApprovalMode::ALL
            .into_iter()
            .map(|m| {
                SessionMode::new(m.as_str().to_string(), mode_name(m))
                    .description(mode_about(m).to_string())
            })
            .collect(),
    )
}

fn mode_name(m: ApprovalMode) -> String {
    match m {
        ApprovalMode::ReadOnly => "Read-only",
        ApprovalMode::Ask => "Ask",
        ApprovalMode::AutoEdit => "Auto-edit",
        ApprovalMode::FullAuto => "Full-auto",
    }
    .to_string()
}

fn mode_about(m: ApprovalMode) -> &'static str {
    match m {
        ApprovalMode::ReadOnly => "reads only: nothing is changed or run",
        ApprovalMode::Ask => "asks before every change, command or network call",
        ApprovalMode::AutoEdit => "edits files in the workspace; asks before commands",
        ApprovalMode::FullAuto => "edits and runs in the sandbox without asking",
    }
}

/// The options of a permission request, as the terminal UI's answers.
pub const ALLOW_ONCE: &str = "allow_once";
pub const ALLOW_ALWAYS: &str = "allow_for_conversation";
pub const REJECT: &str = "reject_once";
pub const REJECT_WHY: &str = "reject_with_reason";

/// What the person may answer to an approval: once, for the conversation
/// (when a grant may cover the call, saying what it covers), reject, and
/// reject saying why (when the editor can ask for the words).
pub fn options(req: &ApprovalRequest, can_ask_why: bool) -> Vec<PermissionOption> {
    let mut out = vec![PermissionOption::new(
        ALLOW_ONCE.to_string(),
        "Allow once",
        PermissionOptionKind::AllowOnce,
    )];
    if let Some(g) = &req.grant {
        let covers = g.covers.join(", ");
        out.push(PermissionOption::new(
            ALLOW_ALWAYS.to_string(),
            if covers.is_empty() {
                "Allow for this conversation".to_string()
            } else {
                format!("Allow for this conversation: {}", short(&covers, 200))
            },
            PermissionOptionKind::AllowAlways,
        ));
    }
    out.push(PermissionOption::new(
        REJECT.to_string(),
        "Reject",
        PermissionOptionKind::RejectOnce,
    ));
    if can_ask_why {
        out.push(PermissionOption::new(
            REJECT_WHY.to_string(),
            "Reject and tell the model why",
            PermissionOptionKind::RejectOnce,
        ));
    }
    out
}

/// The decision an option means (`None`: the editor cancelled, or named
/// no option Lathe offered: a denial, as a person who answers nothing).
pub fn decision(option: Option<&str>, reason: Option<String>) -> ApprovalDecision {
    match option {
        Some(ALLOW_ONCE) => ApprovalDecision::ApproveOnce,
        Some(ALLOW_ALWAYS) => ApprovalDecision::ApproveForConversation,
        Some(REJECT_WHY) => ApprovalDecision::Deny { message: reason },
        _ => ApprovalDecision::Deny { message: None },
    }
}

/// An approval's tool call as the permission request shows it: its
/// title, why it asks, and the change as diffs.
pub fn asking(workspace: &Path, req: &ApprovalRequest) -> ToolCallUpdateFields {
    let mut content = vec![ToolCallContent::from(text(req.reason.clone()))];
    if let Some(c) = &req.change {
        content.extend(diffs(workspace, c));
    }
    ToolCallUpdateFields::new()
        .title(title(&req.tool, &req.arguments))
        .content(content)
        .locations(locations(workspace, &req.arguments))
}

/// Lathe's stop reason as ACP's: a cap or a loop is a turn that hit its
/// limit.
pub fn stop_reason(r: crate::protocol::StopReason) -> acp::StopReason {
    use crate::protocol::StopReason as S;
    match r {
        S::MaxTokens => acp::StopReason::MaxTokens,
        S::Refusal | S::ContentFilter => acp::StopReason::Refusal,
        S::Budget | S::Loop => acp::StopReason::MaxTurnRequests,
        _ => acp::StopReason::EndTurn,
    }
}

/// What a prompt's blocks say, as Lathe's message: text as it is; a file
/// link in the workspace as an `@path` mention (attached as the terminal
/// UI attaches it); an embedded text resource in a fence after the text,
/// with its URI; other links named. Images are returned to attach.
pub fn prompt(workspace: &Path, blocks: &[ContentBlock]) -> (String, Vec<(String, String)>) {
    let mut text = String::new();
    let mut after = String::new();
    let mut images = Vec::new();
    for b in blocks {
        match b {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::ResourceLink(l) => {
                let mention = file_path(&l.uri)
                    .and_then(|p| p.strip_prefix(workspace).ok().map(Path::to_path_buf))
                    .map(|rel| rel.display().to_string())
                    .filter(|rel| !rel.is_empty() && !rel.contains(char::is_whitespace));
                match mention {
                    Some(rel) => text.push_str(&format!(" @{rel} ")),
                    None => text.push_str(&format!(" {} ", l.uri)),
                }
            }
            ContentBlock::Resource(r) => match &r.resource {
                acp::EmbeddedResourceResource::TextResourceContents(t) => {
                    after.push_str(&format!("\n\n{}:\n{}", t.uri, fenced(&t.text)));
                }
                acp::EmbeddedResourceResource::BlobResourceContents(b) => {
                    after.push_str(&format!("\n\n({} is binary: not read)", b.uri));
                }
                _ => {}
            },
            ContentBlock::Image(i) => images.push((i.data.clone(), i.mime_type.clone())),
            _ => {}
        }
    }
    (format!("{}{after}", text.trim_end()), images)
}

/// The path of a `file://` URI (percent-escapes decoded), if it is one.
fn file_path(uri: &str) -> Option<std::path::PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = rest.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    use std::os::unix::ffi::OsStringExt;
    Some(std::ffi::OsString::from_vec(out).into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_say_what_acp_can() {
        assert_eq!(kind("read_file", Some(ToolKind::Read)), acp::ToolKind::Read);
        assert_eq!(
            kind("list_directory", Some(ToolKind::List)),
            acp::ToolKind::Read
        );
        assert_eq!(kind("grep", Some(ToolKind::Search)), acp::ToolKind::Search);
        assert_eq!(
            kind("exec_shell", Some(ToolKind::Shell)),
            acp::ToolKind::Execute
        );
        assert_eq!(kind("edit_file", Some(ToolKind::Edit)), acp::ToolKind::Edit);
        assert_eq!(
            kind("delete_file", Some(ToolKind::Edit)),
            acp::ToolKind::Delete
        );
        assert_eq!(kind("move_file", Some(ToolKind::Edit)), acp::ToolKind::Move);
        assert_eq!(kind("web_fetch", Some(ToolKind::Web)), acp::ToolKind::Fetch);
        assert_eq!(
            kind("update_plan", Some(ToolKind::Plan)),
            acp::ToolKind::Think
        );
        assert_eq!(kind("mystery", None), acp::ToolKind::Other);
    }

    #[test]
    fn titles_and_locations_name_what_a_call_touches() {
        let ws = Path::new("/w");
        assert_eq!(
            title("exec_shell", &json!({"command": "cargo test"})),
            "cargo test"
        );
        assert_eq!(
            title("read_file", &json!({"path": "src/a.rs"})),
            "read_file src/a.rs"
        );
        assert_eq!(title("update_plan", &json!({})), "update_plan");
        let locs = locations(ws, &json!({"path": "src/a.rs", "offset": 12}));
        assert_eq!(locs.len(), 1);
        assert_eq!(locs[0].path, Path::new("/w/src/a.rs"));
        assert_eq!(locs[0].line, Some(12));
        let moved = locations(ws, &json!({"from": "a", "to": "b"}));
        assert_eq!(moved.len(), 2);
        assert!(locations(ws, &json!({"path": 3})).is_empty());
    }

    #[test]
    fn a_change_is_a_diff_per_hunk_with_old_and_new() {
        let old = (1..=40).map(|i| format!("line {i}\n")).collect::<String>();
        let new = old
            .replace("line 3\n", "line three\n")
            .replace("line 30\n", "line thirty\n");
        let c = FileChange::new("src/a.txt", "/w/src/a.txt".into(), Some(&old), &new);
        let shown = diffs(Path::new("/w"), &c);
        assert_eq!(shown.len(), 2);
        let ToolCallContent::Diff(d) = &shown[0] else {
            panic!("not a diff: {shown:?}")
        };
        assert_eq!(d.path, Path::new("/w/src/a.txt"));
        assert!(d.old_text.as_deref().unwrap_or("").contains("line 3\n"));
        assert!(d.new_text.contains("line three\n"));
        assert!(!d.new_text.contains("line 3\n"));
        let created = FileChange::new("n.txt", "/w/n.txt".into(), None, "hello\n");
        let ToolCallContent::Diff(d) = &diffs(Path::new("/w"), &created)[0] else {
            panic!("not a diff")
        };
        assert_eq!(d.old_text, None);
        assert_eq!(d.new_text, "hello\n");
    }

    #[test]
    fn options_mean_what_the_terminal_answers_mean() {
        let mut req = ApprovalRequest {
            call_id: "c1".into(),
            tool: "exec_shell".into(),
            arguments: json!({"command": "make"}),
            effect: crate::protocol::Effect::Exec,
            operations: vec![],
            needs: vec![],
            reason: "runs make".into(),
            grant: None,
            diff: None,
            change: None,
            round: None,
        };
        let ids = |o: Vec<PermissionOption>| {
            o.into_iter()
                .map(|o| o.option_id.0.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(options(&req, false)), [ALLOW_ONCE, REJECT]);
        req.grant = Some(crate::protocol::GrantOffer {
            covers: vec!["make".into()],
            ttl_secs: 3600,
        });
        assert_eq!(
            ids(options(&req, true)),
            [ALLOW_ONCE, ALLOW_ALWAYS, REJECT, REJECT_WHY]
        );
        assert_eq!(
            decision(Some(ALLOW_ONCE), None),
            ApprovalDecision::ApproveOnce
        );
        assert_eq!(
            decision(Some(ALLOW_ALWAYS), None),
            ApprovalDecision::ApproveForConversation
        );
        assert_eq!(
            decision(Some(REJECT_WHY), Some("use just".into())),
            ApprovalDecision::Deny {
                message: Some("use just".into())
            }
        );
        // Cancelled, or an option Lathe never offered: denied.
        for o in [None, Some("allow_everything")] {
            assert_eq!(decision(o, None), ApprovalDecision::Deny { message: None });
        }
    }

    #[test]
    fn output_is_fenced_whatever_it_holds_and_cut_at_a_boundary() {
        let f = fenced("a ``` b");
        assert!(f.starts_with("````\n"));
        assert!(f.ends_with("\n````"));
        let s = "é".repeat(20_000);
        let t = tail(&s, SHOWN_OUTPUT);
        assert!(t.len() <= SHOWN_OUTPUT);
        assert!(t.chars().all(|c| c == 'é'));
    }

    #[test]
    fn a_prompt_mentions_workspace_files_and_fences_what_is_embedded() {
        let blocks: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "text", "text": "look at"},
            {"type": "resource_link", "uri": "file:///w/src/my%20file.rs", "name": "x"},
            {"type": "resource_link", "uri": "file:///w/src/a.rs", "name": "a.rs"},
            {"type": "resource_link", "uri": "file:///etc/passwd", "name": "passwd"},
            {"type": "resource", "resource": {"uri": "file:///w/b.md", "text": "B ``` body"}},
            {"type": "image", "data": "aGk=", "mimeType": "image/png"}
        ]))
        .unwrap();
        let (text, images) = prompt(Path::new("/w"), &blocks);
        assert!(text.starts_with("look at"), "{text}");
        assert!(text.contains("@src/a.rs"), "{text}");
        // A name with a blank is not a mention (it would be cut there).
        assert!(!text.contains("@src/my"), "{text}");
        assert!(text.contains("file:///etc/passwd"), "{text}");
        assert!(!text.contains("@/etc"), "{text}");
        assert!(
            text.contains("file:///w/b.md:\n````\nB ``` body\n````"),
            "{text}"
        );
        assert_eq!(images, [("aGk=".to_string(), "image/png".to_string())]);
    }

    #[test]
    fn modes_are_the_approval_modes() {
        let m = modes(ApprovalMode::Ask);
        assert_eq!(&*m.current_mode_id.0, "ask");
        let ids: Vec<String> = m
            .available_modes
            .iter()
            .map(|m| m.id.0.to_string())
            .collect();
        assert_eq!(ids, ["read-only", "ask", "auto-edit", "full-auto"]);
    }
}
