use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use super::*;
use crate::tools::preview::unified_diff;

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

fn edit(id: &str) -> PendingApproval {
    let old = "fn main() {\n    println!(\"helo\");\n}\n";
    let new = "fn main() {\n    println!(\"hello\");\n}\n";
    PendingApproval {
        call_id: id.into(),
        tool: "edit_file".into(),
        arguments: json!({"path": "src/main.rs", "old_text": "helo", "new_text": "hello"}),
        effect: Effect::Write,
        needs: vec![ApprovalNeed {
            what: "write src/main.rs".into(),
            reason: "approval mode ask: file changes need approval".into(),
        }],
        reason: "approval mode ask: file changes need approval".into(),
        grant: Some(GrantOffer {
            covers: vec!["writes to src/main.rs".into()],
            ttl_secs: 300,
        }),
        diff: Some(DiffView::parse(&unified_diff(
            "src/main.rs",
            Some(old),
            new,
        ))),
    }
}

fn shell(id: &str) -> PendingApproval {
    PendingApproval {
        call_id: id.into(),
        tool: "exec_shell".into(),
        arguments: json!({"command": "cargo test --all"}),
        effect: Effect::Exec,
        needs: vec![ApprovalNeed {
            what: "run `cargo test --all`".into(),
            reason: "approval mode ask: commands that may change things need approval".into(),
        }],
        reason: "approval mode ask: commands that may change things need approval".into(),
        grant: Some(GrantOffer {
            covers: vec!["`cargo test` (/usr/bin/cargo)".into()],
            ttl_secs: 300,
        }),
        diff: None,
    }
}

fn later(t: Instant) -> Instant {
    t + ARMING_DELAY + Duration::from_millis(1)
}

#[test]
fn keys_are_ignored_just_after_the_dialog_opens() {
    let t0 = Instant::now();
    let mut o = ApprovalOverlay::new();
    o.push(edit("c1"), t0);
    assert_eq!(
        o.handle_key(key(KeyCode::Char('y')), t0 + Duration::from_millis(100)),
        ApprovalAction::None
    );
    assert!(o.is_active());
    assert_eq!(
        o.handle_key(key(KeyCode::Char('y')), later(t0)),
        ApprovalAction::Decide {
            call_id: "c1".into(),
            decision: ApprovalDecision::ApproveOnce
        }
    );
    assert!(!o.is_active());
}

#[test]
fn enter_and_space_never_approve() {
    let t0 = Instant::now();
    let mut o = ApprovalOverlay::new();
    o.push(shell("c1"), t0);
    for k in [
        KeyCode::Enter,
        KeyCode::Char(' '),
        KeyCode::Char('x'),
        KeyCode::Tab,
    ] {
        assert_eq!(o.handle_key(key(k), later(t0)), ApprovalAction::None);
    }
    assert!(o.is_active());
}

#[test]
fn queued_requests_show_one_at_a_time_each_armed_again() {
    let t0 = Instant::now();
    let mut o = ApprovalOverlay::new();
    o.push(shell("c1"), t0);
    o.push(edit("c2"), t0);
    o.push(shell("c3"), t0);
    assert_eq!(o.len(), 3);
    let t1 = later(t0);
    assert_eq!(
        o.handle_key(key(KeyCode::Char('a')), t1),
        ApprovalAction::Decide {
            call_id: "c1".into(),
            decision: ApprovalDecision::ApproveForConversation
        }
    );
    // A double press does not decide the next request.
    assert_eq!(
        o.handle_key(key(KeyCode::Char('a')), t1),
        ApprovalAction::None
    );
    assert_eq!(
        o.handle_key(key(KeyCode::Esc), later(t1)),
        ApprovalAction::Decide {
            call_id: "c2".into(),
            decision: ApprovalDecision::Deny { message: None }
        }
    );
    o.remove("c3", later(t1));
    assert!(!o.is_active());
}

#[test]
fn e_denies_with_a_message_for_the_model() {
    let t0 = Instant::now();
    let mut o = ApprovalOverlay::new();
    o.push(shell("c1"), t0);
    let t = later(t0);
    assert_eq!(
        o.handle_key(key(KeyCode::Char('e')), t),
        ApprovalAction::None
    );
    for ch in "use make test".chars() {
        assert_eq!(
            o.handle_key(key(KeyCode::Char(ch)), t),
            ApprovalAction::None,
            "typing never decides"
        );
    }
    assert_eq!(
        o.handle_key(key(KeyCode::Enter), t),
        ApprovalAction::Decide {
            call_id: "c1".into(),
            decision: ApprovalDecision::Deny {
                message: Some("use make test".into())
            }
        }
    );
}

fn draw(o: &ApprovalOverlay, w: u16, h: u16, now: Instant) -> String {
    let theme = Theme::plain();
    let hl = Highlighter::new(None);
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| o.render(f.area(), f.buffer_mut(), &theme, &hl, now))
        .unwrap();
    term.backend().to_string()
}

#[test]
fn the_dialog_shows_the_diff_and_how_many_remain() {
    let t0 = Instant::now();
    let mut o = ApprovalOverlay::new();
    o.push(edit("c1"), t0);
    o.push(shell("c2"), t0);
    assert_snapshot!(
        "approval_edit_with_diff_queued",
        draw(&o, 80, 20, later(t0))
    );
    o.handle_key(key(KeyCode::Char('n')), later(t0));
    assert_snapshot!("approval_shell_narrow", draw(&o, 50, 14, later(later(t0))));
}

#[test]
fn a_call_no_grant_may_cover_offers_no_a() {
    let t0 = Instant::now();
    let mut o = ApprovalOverlay::new();
    o.push(
        PendingApproval {
            needs: vec![ApprovalNeed {
                what: "run the line exactly as written".into(),
                reason: "the line uses command substitution".into(),
            }],
            grant: None,
            arguments: json!({"command": "cargo test $(cat args)"}),
            ..shell("c1")
        },
        t0,
    );
    assert!(
        matches!(
            o.handle_key(key(KeyCode::Char('a')), later(t0)),
            ApprovalAction::Hint(_)
        ),
        "`a` decides nothing when no grant is offered, and says so"
    );
    assert!(o.is_active());
    assert_snapshot!("approval_not_grantable", draw(&o, 72, 14, later(t0)));
    assert!(matches!(
        o.handle_key(key(KeyCode::Char('y')), later(t0)),
        ApprovalAction::Decide {
            decision: ApprovalDecision::ApproveOnce,
            ..
        }
    ));
}
