use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use super::*;

/// The records and the view over them, as the app holds them.
struct Log {
    calls: CallLog,
    view: ToolLog,
}

impl Log {
    fn new(started: Instant) -> Self {
        Self {
            calls: CallLog::new(started),
            view: ToolLog::default(),
        }
    }

    fn on_event(&mut self, ev: &AgentEvent, now: Instant) {
        self.calls.on_event(ev, now);
    }

    fn decided(&mut self, call_id: &str, how: &str) {
        self.calls.decided(call_id, how);
    }

    fn len(&self) -> usize {
        self.calls.len()
    }

    /// Opens it anew, as the app does: a fresh view over the records.
    fn open(&mut self) {
        self.view = ToolLog::default();
    }

    fn handle_key(&mut self, key: KeyEvent) -> LogAction {
        self.view.handle_key(key, &self.calls)
    }

    fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        self.view.render(&self.calls, area, buf, theme);
    }
}

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

fn started(id: &str, tool: &str, args: Value) -> AgentEvent {
    AgentEvent::ToolCallStarted {
        kind: Some(crate::components::cells::kind_as_the_core_says(tool)),
        turn_id: 1,
        call_id: id.into(),
        tool: tool.into(),
        arguments: args,
        effect: None,
        parent: None,
    }
}

fn finished(id: &str, tool: &str, status: ToolStatus, content: Value, ms: u64) -> AgentEvent {
    AgentEvent::ToolCallFinished {
        call_id: id.into(),
        tool: tool.into(),
        status,
        // As the agent says it: a command's exit code beside its status.
        exit_code: content
            .get("exit_code")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok()),
        summary: crate::protocol::Summary::generic(&content),
        content,
        metadata: ResultMetadata {
            bytes: 2300,
            duration_ms: ms,
            truncated: status == ToolStatus::Ok && ms > 100,
            mime: None,
            error_kind: (status != ToolStatus::Ok).then(|| "permission_denied".into()),
            redactions: 0,
        },
        diff: None,
        change: None,
    }
}

fn guard(id: &str, verdict: GuardrailOutcome) -> AgentEvent {
    AgentEvent::GuardrailVerdict {
        call_id: id.into(),
        tool: String::new(),
        verdict,
        reason: None,
        operations: vec![],
    }
}

fn log() -> Log {
    let t0 = Instant::now();
    let mut l = Log::new(t0);
    let at = |ms| t0 + Duration::from_millis(ms);
    l.on_event(
        &started("c1", "read_file", json!({"path": "src/lib.rs"})),
        at(1200),
    );
    l.on_event(&guard("c1", GuardrailOutcome::Allow), at(1200));
    l.on_event(
        &finished(
            "c1",
            "read_file",
            ToolStatus::Ok,
            json!({"content": "fn a() {}\nfn b() {}"}),
            4,
        ),
        at(1210),
    );
    l.on_event(
        &started("c2", "exec_shell", json!({"command": "cargo test"})),
        at(2500),
    );
    l.on_event(&guard("c2", GuardrailOutcome::Allow), at(2500));
    l.on_event(
        &AgentEvent::ApprovalRequested(crate::protocol::ApprovalRequest {
            call_id: "c2".into(),
            tool: "exec_shell".into(),
            arguments: json!({}),
            effect: crate::protocol::Effect::Exec,
            operations: vec![],
            needs: vec![],
            reason: String::new(),
            grant: None,
            diff: None,
            change: None,
            round: None,
        }),
        at(2500),
    );
    l.on_event(
        &AgentEvent::ApprovalDecided {
            call_id: "c2".into(),
            tool: "exec_shell".into(),
            decision: ApprovalDecision::ApproveOnce,
            source: DecisionSource::User,
        },
        at(3000),
    );
    l.on_event(
        &finished(
            "c2",
            "exec_shell",
            ToolStatus::Ok,
            json!({"exit_code": 101, "stdout": "test result: FAILED\n"}),
            1500,
        ),
        at(4500),
    );
    l.on_event(
        &started("c3", "read_file", json!({"path": "../etc/passwd"})),
        at(5000),
    );
    l.on_event(&guard("c3", GuardrailOutcome::Deny), at(5000));
    l.on_event(
        &finished(
            "c3",
            "read_file",
            ToolStatus::Denied,
            json!({"error": "invalid path: outside"}),
            0,
        ),
        at(5000),
    );
    l.on_event(
        &started("c4", "exec_shell", json!({"command": "sleep 5"})),
        at(6000),
    );
    l
}

fn draw(l: &Log, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| l.render(f.area(), f.buffer_mut(), &Theme::plain()))
        .unwrap();
    term.backend().to_string()
}

#[test]
fn the_list_shows_every_call_with_its_verdict_and_status() {
    let l = log();
    assert_eq!(l.len(), 4);
    assert_snapshot!("tool_log_list", draw(&l, 110, 9));
}

/// At 80 columns the arguments keep room to be read: the size and the
/// cut mark give way.
#[test]
fn a_narrow_list_keeps_the_arguments_readable() {
    let l = log();
    assert_snapshot!("tool_log_list_80", draw(&l, 80, 9));
}

#[test]
fn enter_opens_the_full_arguments_and_result() {
    let mut l = log();
    l.handle_key(key(KeyCode::Up));
    l.handle_key(key(KeyCode::Up));
    l.handle_key(key(KeyCode::Up));
    l.handle_key(key(KeyCode::Enter));
    assert_snapshot!("tool_log_detail", draw(&l, 70, 18));
    l.handle_key(key(KeyCode::Esc));
    assert!(draw(&l, 110, 9).contains("Enter details"));
    assert_eq!(l.handle_key(key(KeyCode::Esc)), LogAction::Close);
}

#[test]
fn slash_filters_by_tool_or_status() {
    let mut l = log();
    l.handle_key(key(KeyCode::Char('/')));
    for c in "denied".chars() {
        l.handle_key(key(KeyCode::Char(c)));
    }
    l.handle_key(key(KeyCode::Enter));
    let screen = draw(&l, 110, 9);
    assert!(screen.contains("1 of 4, filter: denied"), "{screen}");
    assert!(
        screen.contains("../etc/passwd") && !screen.contains("cargo test"),
        "{screen}"
    );
    // Esc from a filtered list closes the log, which opens whole again.
    assert_eq!(l.handle_key(key(KeyCode::Esc)), LogAction::Close);
    l.open();
    assert!(draw(&l, 110, 9).contains("Tool calls (4)"));
    // Esc while the filter is typed clears it; a second one closes.
    for c in "/den".chars() {
        l.handle_key(key(KeyCode::Char(c)));
    }
    assert_eq!(l.handle_key(key(KeyCode::Esc)), LogAction::None);
    assert!(draw(&l, 110, 9).contains("Tool calls (4)"));
    assert_eq!(l.handle_key(key(KeyCode::Esc)), LogAction::Close);
}

/// A `/command` typed in the log runs the command; a filter that merely
/// starts like one (`/q`, `/dif`) stays a filter.
#[test]
fn a_command_typed_in_the_log_runs() {
    use crate::components::composer::SlashCommand;
    let mut l = log();
    for c in "/diff".chars() {
        l.handle_key(key(KeyCode::Char(c)));
    }
    assert!(draw(&l, 110, 9).contains("Enter runs /diff"));
    assert_eq!(
        l.handle_key(key(KeyCode::Enter)),
        LogAction::Command(SlashCommand::Diff)
    );
    l.open();
    for text in ["/q", "/dif"] {
        for c in text.chars() {
            l.handle_key(key(KeyCode::Char(c)));
        }
        assert!(draw(&l, 110, 9).contains("filter:"));
        assert_eq!(l.handle_key(key(KeyCode::Enter)), LogAction::None);
        l.open();
    }
    for c in "/model gpt-5".chars() {
        l.handle_key(key(KeyCode::Char(c)));
    }
    assert_eq!(
        l.handle_key(key(KeyCode::Enter)),
        LogAction::Command(SlashCommand::Model(Some("gpt-5".into())))
    );
}

/// The newest call is selected when the log opens, so the first ↑ moves
/// to the one before it.
#[test]
fn the_newest_call_is_selected_and_up_moves_first() {
    let mut l = log();
    l.open();
    l.handle_key(key(KeyCode::Enter));
    let newest = draw(&l, 110, 30);
    l.handle_key(key(KeyCode::Esc));
    l.open();
    l.handle_key(key(KeyCode::Up));
    l.handle_key(key(KeyCode::Enter));
    let before = draw(&l, 110, 30);
    assert_ne!(newest, before);
    assert!(
        newest.contains("c4") && before.contains("c3"),
        "{newest}\n{before}"
    );
}

#[test]
fn the_detail_shows_what_the_call_does_and_what_needed_approval() {
    use crate::protocol::operation::{Access, FileOp, Operation};
    use crate::protocol::operation::{ExecOp, Program, SimpleCommand, Stdin, Word};
    let t0 = Instant::now();
    let mut l = Log::new(t0);
    let cmd = |argv: &[&str], path: &str| SimpleCommand {
        argv: argv.iter().map(|a| Word::literal(*a)).collect(),
        wrappers: vec![],
        program: Program::Path {
            path: path.into(),
            found: None,
            stamp: None,
        },
        subcommand: None,
        script: None,
        redirects: vec![],
        assignments: vec![],
        cwd: None,
        stdin: Stdin::Inherited,
        extra_args: false,
        per_found: false,
    };
    let exec = Operation::Exec(ExecOp {
        line: "git status && rm -v x > log.txt".into(),
        commands: vec![
            cmd(&["git", "status"], "/usr/bin/git"),
            cmd(&["rm", "-v", "x"], "/usr/bin/rm"),
        ],
        files: vec![FileOp {
            path: "log.txt".into(),
            access: Access::Write,
            outside: false,
            named: false,
            deletes: false,
        }],
        ..ExecOp::default()
    });
    l.on_event(
        &started(
            "c1",
            "exec_shell",
            json!({"command": "git status && rm -v x > log.txt"}),
        ),
        t0,
    );
    l.on_event(
        &AgentEvent::GuardrailVerdict {
            call_id: "c1".into(),
            tool: "exec_shell".into(),
            verdict: GuardrailOutcome::Allow,
            reason: None,
            operations: vec![exec],
        },
        t0,
    );
    l.on_event(
        &AgentEvent::ApprovalRequested(crate::protocol::ApprovalRequest {
            call_id: "c1".into(),
            tool: "exec_shell".into(),
            arguments: json!({}),
            effect: crate::protocol::Effect::Exec,
            operations: vec![],
            needs: vec![crate::protocol::ApprovalNeed {
                what: "run `rm -v x`".into(),
                reason: "approval mode ask".into(),
            }],
            reason: String::new(),
            grant: None,
            diff: None,
            change: None,
            round: None,
        }),
        t0,
    );
    l.decided("c1", "n");
    l.decided("c1", "y, 2.4 s after it showed");
    l.open();
    l.handle_key(key(KeyCode::Enter));
    assert_snapshot!("tool_log_detail_operations", draw(&l, 70, 18));
}

/// The detail shows arguments as they ran: backslashes, escaped quotes
/// and tabs stay as JSON writes them, and a line break is only shown
/// after a real `\n`.
#[test]
fn the_detail_shows_arguments_exactly() {
    let t0 = Instant::now();
    let mut l = Log::new(t0);
    let args = json!({"command": "printf 'a\\nb' | grep \"x\"\tdone", "content": "one\ntwo"});
    l.on_event(&started("c1", "exec_shell", args), t0);
    l.open();
    l.handle_key(key(KeyCode::Enter));
    let screen = draw(&l, 90, 20);
    assert!(
        screen.contains(r#""command": "printf 'a\\nb' | grep \"x\"\tdone","#),
        "{screen}"
    );
    assert!(screen.contains(r#""content": "one\n"#), "{screen}");
    assert!(screen.contains(r#"│ two""#), "{screen}");
}

/// A 5 MB argument: the detail is laid out once, scrolls to its end, and
/// never past it.
#[test]
fn a_huge_argument_scrolls_without_overscroll() {
    let t0 = Instant::now();
    let mut l = Log::new(t0);
    let content = format!("{}THE END", "x".repeat(5 * 1024 * 1024));
    l.on_event(
        &started(
            "c1",
            "write_file",
            json!({"path": "big", "content": content}),
        ),
        t0,
    );
    l.open();
    l.handle_key(key(KeyCode::Enter));
    draw(&l, 80, 20);
    l.handle_key(key(KeyCode::End));
    let end = draw(&l, 80, 20);
    assert!(end.contains("THE END"), "{end}");
    for _ in 0..50 {
        l.handle_key(key(KeyCode::Down));
    }
    l.handle_key(key(KeyCode::Up));
    let up = draw(&l, 80, 20);
    assert_ne!(up, end, "one key up moves at once");
}

/// Arguments with flags, ZWJ emoji, conjuncts and wide characters: every
/// column after them still starts where the header's does.
#[test]
fn wide_graphemes_keep_the_columns_aligned() {
    let t0 = Instant::now();
    let mut l = Log::new(t0);
    let paths = [
        "src/🇯🇵🇫🇷🇩🇪/flags.txt",
        "docs/👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧.md",
        "hi/क्षिक्षिक्षिक्षिक्षिक्षि.txt",
        "漢字/漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字.rs",
        "plain/ascii.txt",
    ];
    for (i, p) in paths.iter().enumerate() {
        let id = format!("c{i}");
        l.on_event(&started(&id, "read_file", json!({ "path": p })), t0);
        l.on_event(&guard(&id, GuardrailOutcome::Allow), t0);
    }
    let screen = draw(&l, 100, 10);
    let mut columns = Vec::new();
    for row in screen.lines().skip(2).take(paths.len()) {
        // The column (in cells) where the verdict starts, counted as the
        // buffer counts: one per grapheme cluster, two for wide ones.
        let row = row.trim_matches('"');
        let at = row
            .find("auto")
            .unwrap_or_else(|| panic!("no verdict: {row}"));
        columns.push(crate::width::of(&row[..at]));
    }
    assert_eq!(columns.len(), paths.len(), "{screen}");
    assert!(
        columns.windows(2).all(|w| w[0] == w[1]),
        "{columns:?}\n{screen}"
    );
    crate::width::assert_no_ghosts(&screen);
    assert_snapshot!("tool_log_wide_graphemes", screen);
}
