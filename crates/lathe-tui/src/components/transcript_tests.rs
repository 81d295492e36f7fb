use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use super::*;
use crate::components::cells::{NoticeKind, ToolState};
use crate::protocol::{ResultMetadata, ToolStatus};

fn draw(t: &mut Transcript, width: u16, height: u16) -> String {
    let theme = Theme::plain();
    let hl = Highlighter::new(None);
    t.prepare(width, height, &theme, &hl);
    let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
    term.draw(|f| f.render_widget(&*t, f.area())).unwrap();
    term.backend().to_string()
}

fn done(status: ToolStatus, summary: &str, ms: u64) -> ToolState {
    ToolState::Done {
        status,
        metadata: ResultMetadata {
            bytes: 1536,
            duration_ms: ms,
            ..ResultMetadata::default()
        },
        summary: summary.into(),
    }
}

fn conversation() -> Transcript {
    let mut t = Transcript::new();
    t.push(Cell::User("fix the failing test in src/lib.rs".into()));
    t.push(Cell::Assistant("I'll read the file first.".into()));
    let mut read = ToolCell::new(
        "c1",
        "read_file",
        crate::protocol::ToolKind::Read,
        &json!({"path": "src/lib.rs"}),
    );
    read.state = done(ToolStatus::Ok, "lines 1-40 of 40", 3);
    t.push(Cell::Tool(Box::new(read)));
    let mut edit = ToolCell::new(
        "c2",
        "edit_file",
        crate::protocol::ToolKind::Edit,
        &json!({"path": "src/lib.rs"}),
    );
    edit.state = done(
        ToolStatus::Error,
        "invalid arguments: old_text occurs 0 times in src/lib.rs",
        1,
    );
    t.push(Cell::Tool(Box::new(edit)));
    let mut write = ToolCell::new(
        "c3",
        "write_file",
        crate::protocol::ToolKind::Edit,
        &json!({"path": "notes.txt"}),
    );
    write.state = done(ToolStatus::Denied, "the user denied this call", 0);
    t.push(Cell::Tool(Box::new(write)));
    let mut run = ToolCell::new(
        "c4",
        "exec_shell",
        crate::protocol::ToolKind::Shell,
        &json!({"command": "cargo test"}),
    );
    run.elapsed_ms = 2300;
    run.push_output("running 3 tests\ntest a ... ok\ntest b ... ok");
    t.push(Cell::Tool(Box::new(run)));
    t
}

#[test]
fn tool_cells_running_done_failed_denied() {
    let mut t = conversation();
    assert_snapshot!("transcript_tools_wide", draw(&mut t, 80, 16));
    assert_snapshot!("transcript_tools_narrow", draw(&mut t, 40, 24));
}

#[test]
fn a_streaming_message_renders_markdown_as_it_grows() {
    let mut t = Transcript::new();
    t.push(Cell::User("explain".into()));
    t.append_assistant("## Plan\n\n1. Read `main.rs`\n2. Fix the **bug**\n\n```rust\nfn main() {\n    println!(\"hi\");");
    assert_snapshot!("transcript_streaming", draw(&mut t, 50, 14));
    t.append_assistant("\n}\n```\nDone.");
    let text = draw(&mut t, 50, 14);
    assert!(text.contains("Done."), "{text}");
}

#[test]
fn notices_show_errors_and_warnings() {
    let mut t = Transcript::new();
    t.push(Cell::Notice(
        NoticeKind::Warning,
        "retry 1/4 in 0.5 s: HTTP 503".into(),
    ));
    t.push(Cell::Notice(
        NoticeKind::Error,
        "provider error: HTTP 401 Unauthorized".into(),
    ));
    assert_snapshot!("transcript_notices", draw(&mut t, 60, 5));
}

#[test]
fn the_view_follows_the_bottom_until_scrolled_up() {
    let mut t = Transcript::new();
    for i in 0..50 {
        t.push(Cell::User(format!("message {i}")));
    }
    let screen = draw(&mut t, 30, 6);
    assert!(screen.contains("message 49"), "{screen}");
    t.scroll_up(10);
    let before = draw(&mut t, 30, 6);
    assert!(!t.is_following());
    t.push(Cell::User("new one".into()));
    let after = draw(&mut t, 30, 6);
    assert_eq!(before, after, "scrolled-up view stays put");
    t.scroll_to_bottom();
    assert!(draw(&mut t, 30, 6).contains("new one"));
    t.scroll_to_top();
    assert!(draw(&mut t, 30, 6).contains("message 0"));
}

#[test]
fn resizing_rewraps_and_long_transcripts_stay_consistent() {
    let mut t = Transcript::new();
    for i in 0..10_000 {
        t.push(Cell::Assistant(format!(
            "answer number {i} with some words to wrap around"
        )));
    }
    draw(&mut t, 100, 20);
    let wide = t.total_lines();
    let screen = draw(&mut t, 20, 20);
    assert!(t.total_lines() > wide, "narrower means more lines");
    assert!(screen.contains("9999"), "{screen}");
    t.scroll_to_top();
    assert!(draw(&mut t, 20, 20).contains("answer number 0"));
}

/// Scrolled back, a resize keeps the same line at the top of the view.
#[test]
fn a_resize_while_scrolled_back_keeps_the_place() {
    let mut t = Transcript::new();
    for i in 0..200 {
        t.push(Cell::User(format!(
            "message {i} with a few words that wrap"
        )));
    }
    draw(&mut t, 60, 8);
    t.scroll_up(150);
    let top = |screen: &str| {
        let line = screen.lines().next().unwrap_or("");
        line.trim_matches('"').trim().to_string()
    };
    let before = top(&draw(&mut t, 60, 8));
    assert!(before.starts_with("› message"), "{before}");
    let narrow = draw(&mut t, 24, 8);
    let head = before.split(" with").next().unwrap();
    assert!(
        top(&narrow).starts_with(&format!("{head} with")),
        "{narrow}"
    );
    let wide = draw(&mut t, 60, 8);
    assert_eq!(top(&wide), before);
    assert!(!t.is_following());
}

/// Tabs keep Go and Makefile indentation; flags, ZWJ emoji, conjuncts and
/// wide characters wrap whole and leave no ghosts.
#[test]
fn tabs_and_wide_graphemes_show_as_they_are() {
    let mut t = Transcript::new();
    t.push(Cell::User("flags 🇯🇵🇫🇷🇩🇪 family 👨‍👩‍👧 conjunct क्षि漢字".into()));
    t.push(Cell::Assistant(
        "Indented with tabs:\n\n```make\nall:\n\tgo build ./...\n\t@echo 👍🏽 done\n```\n\n\
         A long line of emoji 👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧 and flags 🇯🇵🇫🇷🇩🇪🇯🇵🇫🇷🇩🇪🇯🇵🇫🇷🇩🇪🇯🇵🇫🇷🇩🇪."
            .into(),
    ));
    let screen = draw(&mut t, 30, 16);
    assert!(screen.contains("    go build"), "{screen}");
    crate::width::assert_no_ghosts(&screen);
    assert_snapshot!("transcript_tabs_and_graphemes", screen);
}

/// A written change stays under its call as a compact diff: the changed
/// lines, then how many more.
#[test]
fn written_changes_stay_as_compact_diffs() {
    let mut t = Transcript::new();
    let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let new = old.replace("line 2\n", "line two\n");
    let small =
        crate::protocol::change::FileChange::new("a.txt", "/w/a.txt".into(), Some(&old), &new);
    let mut edit = ToolCell::new(
        "c1",
        "edit_file",
        crate::protocol::ToolKind::Edit,
        &json!({"path": "a.txt"}),
    );
    edit.state = done(ToolStatus::Ok, "edited a.txt at line 2", 2);
    edit.change = Some(small);
    t.push(Cell::Tool(Box::new(edit)));
    let big_new: String = (1..=30).map(|i| format!("row {i}\n")).collect();
    let big =
        crate::protocol::change::FileChange::new("b.txt", "/w/b.txt".into(), Some(&old), &big_new);
    let mut write = ToolCell::new(
        "c2",
        "write_file",
        crate::protocol::ToolKind::Edit,
        &json!({"path": "b.txt"}),
    );
    write.state = done(ToolStatus::Ok, "overwrote b.txt", 2);
    write.change = Some(big);
    t.push(Cell::Tool(Box::new(write)));
    let shown = draw(&mut t, 70, 24);
    assert_snapshot!("transcript_compact_diffs", shown);
    assert!(
        shown.contains("┊ -line 2") && shown.contains("┊ +line two"),
        "{shown}"
    );
    assert!(
        shown.contains("… 49 more lines (Enter or a click opens it)"),
        "{shown}"
    );
    // A click opens it whole.
    assert!(t.toggle_open(1));
    let open = draw(&mut t, 70, 80);
    assert!(
        open.contains("┊ +row 30") && !open.contains("more lines"),
        "{open}"
    );
    assert!(!t.toggle_open(5), "only a change opens");
}

/// A change of line endings or of the final newline is visible in the
/// compact diff too, not a `-x` `+x` that looks like nothing.
#[test]
fn compact_diffs_show_endings_and_the_final_newline() {
    let mut t = Transcript::new();
    let c = crate::protocol::change::FileChange::new(
        "a.txt",
        "/w/a.txt".into(),
        Some("one\r\ntwo\n"),
        "one\ntwo",
    );
    let mut write = ToolCell::new(
        "c1",
        "write_file",
        crate::protocol::ToolKind::Edit,
        &json!({"path": "a.txt"}),
    );
    write.state = done(ToolStatus::Ok, "overwrote a.txt", 7);
    write.change = Some(c);
    t.push(Cell::Tool(Box::new(write)));
    let shown = draw(&mut t, 70, 12);
    assert!(shown.contains("┊ -one␍"), "{shown}");
    assert!(shown.contains("┊ \\ No newline at end of file"), "{shown}");
}

/// Thinking streams dimmed under `thinking…`, then folds to one line
/// that says how long it took; Ctrl-O shows it whole again.
#[test]
fn thinking_streams_then_folds_and_unfolds() {
    let mut t = Transcript::new();
    t.push(Cell::User("why does the test fail?".into()));
    for piece in [
        "The test expects ",
        "an empty list,\nbut parse() returns ",
        "None on blank input.\nI should read src/lib.rs",
    ] {
        t.append_thinking(piece);
    }
    assert_snapshot!("transcript_thinking_streaming", draw(&mut t, 60, 8));
    t.end_thinking(12_400);
    t.append_assistant("`parse` returns `None` for blank input.");
    assert_snapshot!("transcript_thinking_folded", draw(&mut t, 60, 8));
    assert!(t.toggle_thinking());
    let open = draw(&mut t, 60, 10);
    assert!(open.contains("I should read src/lib.rs"), "{open}");
    assert!(open.contains("Ctrl-O hides it"), "{open}");
    assert!(t.toggle_thinking());
    assert!(!draw(&mut t, 60, 10).contains("I should read"));
}

/// A thinking cell laid out delta by delta is the same as one laid out
/// whole: only its last line is made again as it grows.
#[test]
fn thinking_laid_out_piece_by_piece_matches_whole() {
    let text = "first line\nsecond line that is long enough to wrap at this width\n\nthird";
    let mut pieces = Transcript::new();
    let mut rest = text;
    while !rest.is_empty() {
        let cut = rest.char_indices().nth(3).map_or(rest.len(), |(i, _)| i);
        pieces.append_thinking(&rest[..cut]);
        // A frame between deltas, as the UI draws them.
        let _ = draw(&mut pieces, 30, 12);
        rest = &rest[cut..];
    }
    let mut whole = Transcript::new();
    whole.append_thinking(text);
    assert_eq!(draw(&mut pieces, 30, 12), draw(&mut whole, 30, 12));
}

/// What a model thinks cannot drive the terminal: no escape sequence or
/// control character of it reaches the screen.
#[test]
fn thinking_text_draws_no_control_characters() {
    let mut t = Transcript::new();
    t.append_thinking("plan\x1b]0;pwned\x07 it\x1b[2J\r\n\x08next");
    let shown = draw(&mut t, 40, 6);
    assert!(
        !shown.contains('\x1b') && !shown.contains('\x07'),
        "{shown:?}"
    );
    assert!(shown.contains("plan]0;pwned it[2J"), "{shown}");
    assert!(shown.contains("next"), "{shown}");
}

/// A reasoning summary's heading shows as a heading, not as asterisks.
#[test]
fn thinking_headings_show_without_their_markers() {
    let mut t = Transcript::new();
    t.append_thinking("**Reading the parser**\n\nIt returns None on **blank** input.");
    let shown = draw(&mut t, 50, 6);
    assert!(shown.contains("  Reading the parser"), "{shown}");
    assert!(!shown.contains("**Reading"), "{shown}");
    assert!(
        shown.contains("**blank**"),
        "inline text stays as written: {shown}"
    );
}

/// Reads and searches that follow one another fold into one line; a call
/// of another kind ends the run; the folded calls still update (by their
/// id) and Enter's cell opens them.
#[test]
fn reads_in_a_row_fold_and_open() {
    let mut t = Transcript::new();
    t.push(Cell::User("why do the tests fail?".into()));
    t.push_tool(ToolCell::new(
        "r1",
        "glob",
        crate::protocol::ToolKind::Search,
        &json!({"pattern": "**/*.py"}),
    ));
    t.push_tool(ToolCell::new(
        "r2",
        "read_file",
        crate::protocol::ToolKind::Read,
        &json!({"path": "app.py"}),
    ));
    t.push_tool(ToolCell::new(
        "r3",
        "grep",
        crate::protocol::ToolKind::Search,
        &json!({"pattern": "top_words"}),
    ));
    for (id, summary) in [("r1", "6 files"), ("r2", "lines 1-9 of 9")] {
        if let Some(c) = t.tool_mut(id) {
            c.state = done(ToolStatus::Ok, summary, 2);
        }
    }
    let running = draw(&mut t, 80, 6);
    assert!(
        running.contains("Exploring: read 1 file, searched 2 patterns"),
        "{running}"
    );
    if let Some(c) = t.tool_mut("r3") {
        c.state = done(ToolStatus::Ok, "3 matches in 2 files", 2);
    }
    t.push_tool(ToolCell::new(
        "x",
        "exec_shell",
        crate::protocol::ToolKind::Shell,
        &json!({"command": "pytest"}),
    ));
    t.push_tool(ToolCell::new(
        "r4",
        "read_file",
        crate::protocol::ToolKind::Read,
        &json!({"path": "b.py"}),
    ));
    let shown = draw(&mut t, 80, 8);
    assert!(
        shown.contains("✓ Explored: read 1 file, searched 2 patterns · Enter or a click opens"),
        "{shown}"
    );
    assert!(shown.contains("exec_shell pytest"), "{shown}");
    // One read alone is its own line, not a fold.
    assert!(shown.contains("read_file b.py"), "{shown}");
    assert_eq!(t.last_openable_in_view(), Some(1));
    assert!(t.toggle_open(1));
    let open = draw(&mut t, 80, 10);
    assert!(open.contains("  ✓ glob **/*.py · 6 files"), "{open}");
    assert!(
        open.contains("  ✓ grep top_words · 3 matches in 2 files"),
        "{open}"
    );
}

/// The whole message after its deltas: what streamed is not laid out
/// again; a message that differs from what streamed (a server whose final
/// text is not its deltas) is shown as it is, not over the old layout.
#[test]
fn the_whole_message_after_its_deltas_lays_out_only_what_changed() {
    let mut t = Transcript::new();
    t.push(Cell::User("explain".into()));
    let text = "# Title\n\nSome **bold** words.\n\n```rust\nfn a() {}\n```\n\nThe end.\n";
    for piece in text.as_bytes().chunks(7) {
        t.append_assistant(std::str::from_utf8(piece).unwrap());
        draw(&mut t, 60, 20);
    }
    let streamed = draw(&mut t, 60, 20);
    let done_before = t.entries[1].stream.as_ref().map(|s| s.done);
    assert!(t.set_last_assistant(text));
    assert!(!t.entries[1].changed, "the same text is not laid out again");
    assert_eq!(draw(&mut t, 60, 20), streamed);
    assert_eq!(t.entries[1].stream.as_ref().map(|s| s.done), done_before);
    // More than streamed: only the rest is added.
    assert!(t.set_last_assistant(&format!("{text}And one more line.\n")));
    assert!(draw(&mut t, 60, 20).contains("And one more line."));
    // Other text: laid out from the start.
    assert!(t.set_last_assistant("# Title\n\nSome [REDACTED] words.\n"));
    let shown = draw(&mut t, 60, 20);
    assert!(shown.contains("Some [REDACTED] words."), "{shown}");
    assert!(
        !shown.contains("bold") && !shown.contains("The end."),
        "{shown}"
    );
}
