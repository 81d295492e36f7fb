use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;
use crate::protocol::ApprovalMode;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn with(code: KeyCode, m: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, m)
}

fn typed(c: &mut Composer, text: &str) {
    for ch in text.chars() {
        c.handle_key(key(KeyCode::Char(ch)));
    }
}

fn composer() -> Composer {
    Composer::new(&Theme::plain())
}

#[test]
fn enter_sends_and_alt_or_shift_enter_insert_newlines() {
    let mut c = composer();
    typed(&mut c, "first");
    assert_eq!(
        c.handle_key(with(KeyCode::Enter, KeyModifiers::ALT)),
        ComposerAction::None
    );
    typed(&mut c, "second");
    c.handle_key(with(KeyCode::Enter, KeyModifiers::SHIFT));
    typed(&mut c, "third");
    c.handle_key(with(KeyCode::Char('j'), KeyModifiers::CONTROL));
    typed(&mut c, "fourth");
    assert_eq!(
        c.handle_key(key(KeyCode::Enter)),
        ComposerAction::Submit("first\nsecond\nthird\nfourth".into())
    );
    assert!(c.is_empty());
    assert_eq!(
        c.handle_key(key(KeyCode::Enter)),
        ComposerAction::None,
        "empty input sends nothing"
    );
}

#[test]
fn pasted_multi_line_text_stays_whole() {
    let mut c = composer();
    c.paste("line one\r\nline two\n");
    typed(&mut c, "end");
    assert_eq!(c.text(), "line one\nline two\nend");
}

#[test]
fn editing_keys_work() {
    let mut c = composer();
    typed(&mut c, "hello brave world");
    c.handle_key(with(KeyCode::Char('w'), KeyModifiers::CONTROL));
    assert_eq!(c.text(), "hello brave ");
    c.handle_key(with(KeyCode::Char('a'), KeyModifiers::CONTROL));
    typed(&mut c, ">");
    assert_eq!(c.text(), ">hello brave ");
    c.handle_key(with(KeyCode::Char('e'), KeyModifiers::CONTROL));
    c.handle_key(with(KeyCode::Char('u'), KeyModifiers::CONTROL));
    assert_eq!(c.text(), "");
    typed(&mut c, "one two");
    c.handle_key(with(KeyCode::Left, KeyModifiers::CONTROL));
    typed(&mut c, "X");
    assert_eq!(c.text(), "one Xtwo");
}

#[test]
fn up_and_down_walk_the_history_and_keep_the_draft() {
    let mut c = composer();
    typed(&mut c, "one");
    c.handle_key(key(KeyCode::Enter));
    typed(&mut c, "two");
    c.handle_key(key(KeyCode::Enter));
    typed(&mut c, "draft");
    c.handle_key(key(KeyCode::Up));
    assert_eq!(c.text(), "two");
    c.handle_key(key(KeyCode::Up));
    assert_eq!(c.text(), "one");
    c.handle_key(key(KeyCode::Up));
    assert_eq!(c.text(), "one");
    c.handle_key(key(KeyCode::Down));
    assert_eq!(c.text(), "two");
    c.handle_key(key(KeyCode::Down));
    assert_eq!(c.text(), "draft");
}

#[test]
fn slash_commands_complete_and_run() {
    let mut c = composer();
    typed(&mut c, "/");
    assert_eq!(c.popup().len(), COMMANDS.len());
    typed(&mut c, "q");
    assert_eq!(c.popup(), [("/quit", "exit Lathe")]);
    assert_eq!(
        c.handle_key(key(KeyCode::Enter)),
        ComposerAction::Command(SlashCommand::Quit)
    );

    typed(&mut c, "/mo");
    c.handle_key(key(KeyCode::Tab));
    assert_eq!(c.text(), "/model ");
    assert!(c.popup().is_empty());
    typed(&mut c, "gpt-5");
    assert_eq!(
        c.handle_key(key(KeyCode::Enter)),
        ComposerAction::Command(SlashCommand::Model(Some("gpt-5".into())))
    );

    typed(&mut c, "/");
    c.handle_key(key(KeyCode::Down));
    c.handle_key(key(KeyCode::Enter));
    assert_eq!(c.text(), "", "/clear runs at once");
}

#[test]
fn commands_parse_and_paths_are_messages() {
    assert_eq!(
        parse_command("/approvals full-auto"),
        Some(Ok(SlashCommand::Approvals(Some(ApprovalMode::FullAuto))))
    );
    assert!(matches!(parse_command("/approvals yolo"), Some(Err(_))));
    assert_eq!(parse_command("/etc/hosts is wrong"), None);
    assert!(matches!(parse_command("/frobnicate"), Some(Err(e)) if e.contains("/help")));
    let mut c = composer();
    typed(&mut c, "/etc/hosts is wrong");
    assert_eq!(
        c.handle_key(key(KeyCode::Enter)),
        ComposerAction::Submit("/etc/hosts is wrong".into())
    );
}

#[test]
fn the_popup_renders_above_the_composer() {
    let mut c = composer();
    typed(&mut c, "/");
    c.handle_key(key(KeyCode::Down));
    let theme = Theme::plain();
    let mut term = Terminal::new(TestBackend::new(60, 12)).unwrap();
    term.draw(|f| {
        let area = f.area();
        let h = c.height(area.width);
        let rect = Rect::new(0, area.height - h, area.width, h);
        c.render(rect, f.buffer_mut(), &theme, true);
    })
    .unwrap();
    assert_snapshot!("composer_popup", term.backend().to_string());
}

/// On a wide screen the popup is as wide as its longest line (no help is
/// cut short), and the rows it stands on are cleared across the screen:
/// nothing under it shows beside it.
#[test]
fn the_popup_uses_the_width_and_clears_its_rows() {
    let mut c = composer();
    typed(&mut c, "/");
    let theme = Theme::plain();
    let mut term = Terminal::new(TestBackend::new(140, 30)).unwrap();
    term.draw(|f| {
        let area = f.area();
        // Text under the popup.
        for y in 0..area.height {
            f.buffer_mut().set_string(
                0,
                y,
                "#".repeat(usize::from(area.width)),
                ratatui::style::Style::default(),
            );
        }
        let h = c.height(area.width);
        let rect = Rect::new(0, area.height - h, area.width, h);
        c.render(rect, f.buffer_mut(), &theme, true);
    })
    .unwrap();
    let screen = term.backend().to_string();
    let longest = COMMANDS
        .iter()
        .map(|(_, h)| *h)
        .max_by_key(|h| h.len())
        .unwrap();
    assert!(screen.contains(longest), "{screen}");
    for line in screen
        .lines()
        .filter(|l| l.contains("/help") || l.contains("/quit"))
    {
        assert!(!line.contains('#'), "{line}");
    }
}

#[test]
fn the_composer_grows_with_its_text() {
    let mut c = composer();
    assert_eq!(c.height(40), 3);
    c.paste("a\nb\nc");
    assert_eq!(c.height(40), 5);
    c.paste(&"x\n".repeat(30));
    assert_eq!(c.height(40), 10);
}

fn drawn(c: &Composer, width: u16) -> String {
    let h = c.height(width);
    let mut term = Terminal::new(TestBackend::new(width, h)).unwrap();
    term.draw(|f| c.render(f.area(), f.buffer_mut(), &Theme::plain(), true))
        .unwrap();
    term.backend().to_string()
}

#[test]
fn word_wrapped_text_shows_its_first_row() {
    let mut c = composer();
    // At 20 columns (18 inside), words break early: 4 rows, not the 3
    // that counting columns gives.
    c.paste("alpha bravo charlie delta echo foxtrot golf hotel");
    assert_eq!(c.height(20), 6);
    let shown = drawn(&c, 20);
    assert!(shown.contains("alpha bravo"), "{shown}");
    assert!(shown.contains("hotel"), "{shown}");
    // A line exactly as wide as the box, with the cursor after it.
    let mut c = composer();
    c.paste(&"x".repeat(18));
    let shown = drawn(&c, 20);
    assert!(shown.contains(&"x".repeat(18)), "{shown}");
}

#[test]
fn the_cursor_moves_and_deletes_whole_clusters() {
    for cluster in ["🇯🇵", "👨‍👩‍👧", "क्षि", "e\u{301}", "👍🏽"] {
        let mut c = composer();
        c.paste(&format!("a{cluster}b"));
        c.handle_key(key(KeyCode::Left));
        c.handle_key(key(KeyCode::Left));
        assert_eq!(c.textarea.cursor().1, 1, "{cluster:?}: before the cluster");
        c.handle_key(key(KeyCode::Right));
        assert_eq!(
            c.textarea.cursor().1,
            1 + cluster.chars().count(),
            "{cluster:?}: after it"
        );
        c.handle_key(key(KeyCode::Backspace));
        assert_eq!(c.text(), "ab", "{cluster:?}: backspace takes it whole");
        c.handle_key(with(KeyCode::Char('z'), KeyModifiers::CONTROL));
        c.paste(cluster);
        c.handle_key(key(KeyCode::Left));
        c.handle_key(key(KeyCode::Delete));
        assert_eq!(c.text(), "ab", "{cluster:?}: delete takes it whole");
    }
}

#[test]
fn up_and_down_never_land_inside_a_cluster() {
    let mut c = composer();
    c.paste("abcdefgh\n👨‍👩‍👧👨‍👩‍👧");
    c.handle_key(key(KeyCode::Up));
    c.handle_key(key(KeyCode::End));
    c.handle_key(key(KeyCode::Down));
    let (row, col) = (c.textarea.cursor().0, c.textarea.cursor().1);
    assert_eq!(row, 1);
    assert!(col == 0 || col == 5 || col == 10, "inside a cluster: {col}");
}

#[test]
fn wide_graphemes_render_whole() {
    let mut c = composer();
    c.paste("flags 🇯🇵🇫🇷 family 👨‍👩‍👧 conjunct क्षि e\u{301} 漢字 and more words to wrap");
    assert_snapshot!("composer_wide_graphemes", drawn(&c, 24));
}

/// A flag or a conjunct typed a code point at a time (as terminals send
/// them) in front of other text stays as typed.
#[test]
fn clusters_typed_a_code_point_at_a_time_stay_whole() {
    for (before, new) in [("🇫🇷 QUICK", "🇯🇵"), ("ष", "क्त")] {
        let mut c = composer();
        c.paste(before);
        c.handle_key(key(KeyCode::Home));
        typed(&mut c, new);
        assert_eq!(c.text(), format!("{new}{before}"));
    }
}

/// The cursor on a flag, a family emoji or a conjunct covers the whole
/// cluster; the line is drawn as typed.
#[test]
fn the_cursor_covers_a_whole_cluster() {
    for cluster in ["🇯🇵", "👨‍👩‍👧", "क्षि", "e\u{301}"] {
        let mut c = composer();
        c.paste(&format!("a{cluster}b"));
        c.handle_key(key(KeyCode::Left));
        c.handle_key(key(KeyCode::Left));
        let mut term = Terminal::new(TestBackend::new(20, 3)).unwrap();
        term.draw(|f| c.render(f.area(), f.buffer_mut(), &Theme::plain(), true))
            .unwrap();
        let buf = term.backend().buffer();
        let row: String = (1..19).map(|x| buf[(x, 1)].symbol().to_string()).collect();
        assert!(
            row.starts_with(&format!("a{cluster}")),
            "{cluster:?}: {row:?}"
        );
        assert!(row.contains('b'), "{row:?}");
        let cursor = &buf[(2, 1)];
        assert_eq!(cursor.symbol(), cluster);
        assert!(
            cursor.modifier.contains(ratatui::style::Modifier::REVERSED),
            "{cluster:?}: the cursor is on it"
        );
    }
}

/// A command recalled from history opens no popup that would take Up
/// and Down: the history goes on. A second command as `/model`'s name is
/// refused.
#[test]
fn a_recalled_command_never_traps_the_history() {
    let mut c = composer();
    typed(&mut c, "hello");
    c.handle_key(key(KeyCode::Enter));
    typed(&mut c, "/clear");
    assert_eq!(
        c.handle_key(key(KeyCode::Enter)),
        ComposerAction::Command(SlashCommand::Clear)
    );
    c.handle_key(key(KeyCode::Up));
    assert_eq!(c.text(), "/clear");
    c.handle_key(key(KeyCode::Up));
    assert_eq!(c.text(), "hello", "Up went on through the history");
    c.handle_key(key(KeyCode::Down));
    c.handle_key(key(KeyCode::Down));
    assert_eq!(c.text(), "");
    assert!(matches!(
        parse_command("/model /model gpt-5"),
        Some(Err(e)) if e.contains("not a model name")
    ));
    assert!(matches!(parse_command("/model gpt 5"), Some(Err(_))));
    assert_eq!(
        parse_command("/model gpt-5"),
        Some(Ok(SlashCommand::Model(Some("gpt-5".into()))))
    );
}

/// Tab after `@` completes workspace paths (what .gitignore ignores left
/// out): one match whole, several as far as they agree, listed above.
#[test]
fn at_paths_complete_from_the_workspace() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("src/parser")).unwrap();
    std::fs::write(ws.path().join("src/parser/lexer.rs"), "").unwrap();
    std::fs::write(ws.path().join("src/parser/tokens.rs"), "").unwrap();
    std::fs::write(ws.path().join("README.md"), "").unwrap();
    std::fs::write(ws.path().join(".gitignore"), "target/\n").unwrap();
    std::fs::create_dir_all(ws.path().join("target")).unwrap();
    std::fs::write(ws.path().join("target/README.build"), "").unwrap();
    let mut c = composer();
    c.set_workspace(ws.path().to_path_buf());
    typed(&mut c, "explain @RE");
    c.handle_key(key(KeyCode::Tab));
    assert_eq!(c.text(), "explain @README.md ");
    typed(&mut c, "and @src/p");
    c.handle_key(key(KeyCode::Tab));
    assert_eq!(c.text(), "explain @README.md and @src/parser/");
    assert_eq!(
        c.path_matches(),
        ["src/parser/lexer.rs", "src/parser/tokens.rs"]
    );
    // Tab again goes through the matches, in turn.
    c.handle_key(key(KeyCode::Tab));
    assert_eq!(c.text(), "explain @README.md and @src/parser/lexer.rs");
    c.handle_key(key(KeyCode::Tab));
    assert_eq!(c.text(), "explain @README.md and @src/parser/tokens.rs");
    c.handle_key(key(KeyCode::Tab));
    assert_eq!(c.text(), "explain @README.md and @src/parser/lexer.rs");
    for _ in 0.."lexer.rs".len() {
        c.handle_key(key(KeyCode::Backspace));
    }
    typed(&mut c, "t");
    assert!(c.path_matches().is_empty(), "typing closes the list");
    c.handle_key(key(KeyCode::Tab));
    assert_eq!(c.text(), "explain @README.md and @src/parser/tokens.rs ");
    let mut d = composer();
    d.set_workspace(ws.path().to_path_buf());
    typed(&mut d, "@target/");
    d.handle_key(key(KeyCode::Tab));
    assert_eq!(d.text(), "@target/", "ignored files are not offered");
}

/// `/approvals ` offers the modes; Enter on one switches to it.
#[test]
fn approvals_completes_its_mode() {
    let mut c = composer();
    typed(&mut c, "/approvals ");
    assert_eq!(c.popup().len(), 4);
    typed(&mut c, "a");
    assert_eq!(c.popup()[0].0, "ask");
    c.handle_key(key(KeyCode::Down));
    assert_eq!(
        c.handle_key(key(KeyCode::Enter)),
        ComposerAction::Command(SlashCommand::Approvals(Some(ApprovalMode::AutoEdit)))
    );
    typed(&mut c, "/approvals f");
    c.handle_key(key(KeyCode::Tab));
    assert_eq!(c.text(), "/approvals full-auto");
    let mut d = composer();
    typed(&mut d, "/approvals auto");
    let offered: Vec<&str> = d.popup().iter().map(|(m, _)| *m).collect();
    assert_eq!(offered, ["auto-edit", "full-auto"]);
}

/// The person's own commands are offered in the popup with their first
/// line, and sending one sends its prompt, arguments in place.
#[test]
fn the_persons_own_commands_are_offered_and_sent() {
    use crate::components::custom::Custom;
    let mut c = composer();
    c.set_custom(vec![Custom {
        name: "/review".into(),
        about: "Review a file".into(),
        body: "Review $ARGUMENTS for bugs.".into(),
    }]);
    typed(&mut c, "/rev");
    assert!(c.popup().contains(&("/review", "Review a file")));
    c.set_text("");
    typed(&mut c, "/review src/a.rs");
    assert_eq!(
        c.handle_key(key(KeyCode::Enter)),
        ComposerAction::Submit("Review src/a.rs for bugs.".into())
    );
    // An unknown name is still an error, not a message.
    typed(&mut c, "/revue x");
    assert!(matches!(
        c.handle_key(key(KeyCode::Enter)),
        ComposerAction::Invalid(_)
    ));
}

/// An MCP server's prompts are offered as `/server:prompt` (with what
/// each takes) and sent as typed (the core asks the server); its
/// resources complete after `@`.
#[test]
fn mcp_prompts_are_offered_and_sent_and_resources_complete() {
    let mut c = composer();
    c.set_mcp(
        vec![(
            "/ev:args-prompt".into(),
            "A prompt with arguments · CITY [STATE]".into(),
        )],
        vec![
            "ev:demo://resource/static/document/architecture.md".into(),
            "ev:demo://resource/static/document/features.md".into(),
        ],
    );
    typed(&mut c, "/ev:");
    assert!(
        c.popup()
            .contains(&("/ev:args-prompt", "A prompt with arguments · CITY [STATE]"))
    );
    c.set_text("");
    typed(&mut c, "/ev:args-prompt Paris");
    assert_eq!(
        c.handle_key(key(KeyCode::Enter)),
        ComposerAction::Submit("/ev:args-prompt Paris".into())
    );
    typed(&mut c, "/ev:nope");
    assert!(matches!(
        c.handle_key(key(KeyCode::Enter)),
        ComposerAction::Invalid(_)
    ));
    c.set_text("");
    typed(&mut c, "read @ev:demo://resource/static/document/arch");
    c.handle_key(key(KeyCode::Tab));
    assert_eq!(
        c.text(),
        "read @ev:demo://resource/static/document/architecture.md "
    );
}
