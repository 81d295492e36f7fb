//! The terminal UI's speed, with ratatui's `TestBackend` (the terminal's
//! own write cost is left out; crossterm writes only the changed cells).
//!
//! - `frame/N`: one frame while an answer streams (a delta arrives, the app
//!   lays out what changed and draws) with N messages in the transcript:
//!   the figure must stay flat as N grows.
//! - `delta_to_frame`: the work between an `assistant_delta` reaching the UI
//!   and the frame that shows it, at 10,000 messages. The event loop adds at
//!   most one frame interval (16 ms) of pacing on top.
//! - `startup/first_frame`: configuration, theme, agent start, app and the
//!   first frame.
//!
//! - `diff_dialog/first_frame_20k`: a 20,000-line diff reaches the UI until
//!   the dialog is on screen (parsing and the first frame; highlighting runs
//!   on its own thread and is not on this path). Target: under 150 ms.
//! - `diff_dialog/scroll_key_20k`: a PgDn in that dialog and its frame.
//!   Target: within one frame (16 ms).
//! - `diff_dialog/colours_first_screen_20k`: from that dialog on screen to
//!   its first screen in colour (the colouring thread does the lines in
//!   view and 200 more, then waits for a scroll: the dialog's CPU after it
//!   shows).
//! - `diff_dialog/highlight_20k`: highlighting the whole diff, for scale
//!   (what the dialog cost after it showed before colours were made as
//!   far as they are looked at).
//! - `stream/code_line_at_2000`: one delta (a line) into a code block that
//!   has 2,000 lines, and its frame. At 20 deltas a second, under 10 % of
//!   a core means under 5 ms.
//!
//! Before the timings, the resident memory of a 10,000-message transcript
//! and of a 50,000-line answer is printed (`memory:` lines; target for the
//! answer: under 60 MB).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use lathe_core::config::Overrides;
use lathe_core::launch::load_config;
use lathe_core::protocol::change::FileChange;
use lathe_core::protocol::{
    AgentEvent, ApprovalMode, ApprovalNeed, Effect, GrantOffer, ResultMetadata, ToolStatus,
};
use lathe_tui::app::{App, AppInit};
use lathe_tui::components::diff_view::DiffView;
use lathe_tui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

const ANSWER: &str = "Here is what I changed:\n\n1. **Parser**: `parse_args` now rejects empty input.\n2. Tests cover the new case.\n\n```rust\nfn parse_args(input: &str) -> Result<Args, Error> {\n    if input.is_empty() {\n        return Err(Error::Empty);\n    }\n    Ok(Args::new(input))\n}\n```\n\nRun `cargo test` to check.";

fn app_with(messages: usize) -> App {
    let t0 = Instant::now();
    let theme = Theme::load("dark", None, false).unwrap();
    let mut app = App::new(
        AppInit {
            model: "bench".into(),
            workspace: PathBuf::from("/work/project"),
            approval: ApprovalMode::Ask,
            theme,
            notices: vec![],
            trust: None,
            session: Default::default(),
        },
        t0,
    );
    for i in 0..messages {
        let ev = match i % 3 {
            0 => AgentEvent::AssistantMessage {
                turn_id: 1,
                text: format!("{ANSWER} ({i})"),
            },
            1 => AgentEvent::ToolCallStarted {
                kind: None,
                turn_id: 1,
                call_id: format!("c{i}"),
                tool: "read_file".into(),
                arguments: json!({"path": format!("src/file_{i}.rs")}),
                effect: None,
                parent: None,
            },
            _ => AgentEvent::ToolCallFinished {
                call_id: format!("c{}", i - 1),
                tool: "read_file".into(),
                status: ToolStatus::Ok,
                exit_code: None,
                content: json!({"start_line": 1, "end_line": 40, "total_lines": 40}),
                metadata: ResultMetadata {
                    bytes: 1200,
                    duration_ms: 2,
                    ..ResultMetadata::default()
                },
                diff: None,
                change: None,
                summary: Some(lathe_core::protocol::Summary::Lines {
                    start: 1,
                    end: 40,
                    total: 40,
                }),
            },
        };
        app.on_agent_event(ev, t0);
    }
    app.on_agent_event(
        AgentEvent::AssistantDelta {
            turn_id: 2,
            text: "Streaming ".into(),
        },
        t0,
    );
    app
}

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(120, 40)).unwrap()
}

fn rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

fn memory_report() {
    let before = rss_mb().unwrap_or(0.0);
    let mut app = app_with(10_000);
    let mut term = terminal();
    term.draw(|f| app.draw(f)).unwrap();
    let after = rss_mb().unwrap_or(0.0);
    eprintln!(
        "memory: process RSS {after:.1} MB with 10,000 messages laid out ({:.1} MB for the transcript)",
        after - before
    );
    drop(app);
}

/// A long answer: paragraphs, lists and code blocks, `lines` lines.
fn long_answer(lines: usize) -> String {
    let mut text = String::new();
    let mut n = 0;
    while n < lines {
        text.push_str("Some prose about the change, with `code` and **emphasis**.\n\n- one\n- two\n\n```rust\n");
        for i in 0..40 {
            text.push_str(&format!("    let value_{i} = compute({i}, \"text\");\n"));
        }
        text.push_str("```\n\n");
        n += 48;
    }
    text
}

fn memory_report_long_answer() {
    let before = rss_mb().unwrap_or(0.0);
    let mut app = app_with(0);
    let mut term = terminal();
    let t0 = Instant::now();
    // Streamed in as a model sends it, a frame now and then.
    for (i, chunk) in long_answer(50_000).as_bytes().chunks(4096).enumerate() {
        app.on_agent_event(
            AgentEvent::AssistantDelta {
                turn_id: 2,
                text: String::from_utf8_lossy(chunk).into_owned(),
            },
            t0,
        );
        if i % 16 == 0 {
            term.draw(|f| app.draw(f)).unwrap();
        }
    }
    term.draw(|f| app.draw(f)).unwrap();
    let after = rss_mb().unwrap_or(0.0);
    eprintln!(
        "memory: process RSS {after:.1} MB with a 50,000-line answer laid out ({:.1} MB for it)",
        after - before
    );
}

fn frames(c: &mut Criterion) {
    memory_report_long_answer();
    memory_report();
    let mut group = c.benchmark_group("frame");
    for n in [1_000usize, 10_000, 20_000] {
        let mut app = app_with(n);
        let mut term = terminal();
        term.draw(|f| app.draw(f)).unwrap();
        let t0 = Instant::now();
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                app.on_agent_event(
                    AgentEvent::AssistantDelta {
                        turn_id: 2,
                        text: "word ".into(),
                    },
                    t0,
                );
                term.draw(|f| app.draw(f)).unwrap();
            });
        });
    }
    group.finish();
}

fn delta_to_frame(c: &mut Criterion) {
    let mut app = app_with(10_000);
    let mut term = terminal();
    term.draw(|f| app.draw(f)).unwrap();
    let t0 = Instant::now();
    c.bench_function("delta_to_frame", |b| {
        b.iter(|| {
            app.on_agent_event(
                AgentEvent::AssistantDelta {
                    turn_id: 2,
                    text: "token ".into(),
                },
                t0,
            );
            term.draw(|f| app.draw(f)).unwrap();
            assert!(
                term.backend()
                    .buffer()
                    .content
                    .iter()
                    .any(|c| c.symbol() == "t")
            );
        });
    });
}

fn startup(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let home_s = home.path().display().to_string();
    let overrides = Overrides {
        base_url: Some("http://127.0.0.1:9/v1".into()),
        workspace: Some(ws.path().to_path_buf()),
        ..Overrides::default()
    };
    // The same with three MCP servers, one of which cannot start and two
    // that never answer: they start in the background, so the first
    // frame does not wait for them.
    let mcp_home = tempfile::tempdir().unwrap();
    std::fs::write(
        mcp_home.path().join("config.toml"),
        "[mcp_servers.slow1]\ncommand = \"sleep\"\nargs = [\"30\"]\nstartup_timeout_secs = 1\n\
         [mcp_servers.slow2]\ncommand = \"sleep\"\nargs = [\"30\"]\nstartup_timeout_secs = 1\n\
         [mcp_servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n",
    )
    .unwrap();
    let mcp_home_s = mcp_home.path().display().to_string();
    let mut group = c.benchmark_group("startup");
    group.measurement_time(Duration::from_secs(5));
    for (name, home_s) in [
        ("first_frame", &home_s),
        ("first_frame_3_mcp_servers", &mcp_home_s),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let _guard = rt.enter();
                let config =
                    load_config(&overrides, &|k| (k == "LATHE_HOME").then(|| home_s.clone()))
                        .unwrap();
                let theme = Theme::load(&config.theme, None, false).unwrap();
                let launched = lathe_core::launch::spawn_agent(
                    &config,
                    None,
                    lathe_core::launch::Trust::default(),
                )
                .unwrap();
                let mut app = App::new(
                    AppInit {
                        model: config.model.clone(),
                        workspace: config.workspace.clone(),
                        approval: config.approval,
                        theme,
                        notices: vec![],
                        trust: None,
                        session: Default::default(),
                    },
                    Instant::now(),
                );
                let mut term = terminal();
                term.draw(|f| app.draw(f)).unwrap();
                launched.handle.task.abort();
            });
        });
    }
    group.finish();
}

fn approval_with_diff(change: FileChange) -> AgentEvent {
    AgentEvent::ApprovalRequested(lathe_core::protocol::ApprovalRequest {
        call_id: "big".into(),
        tool: "write_file".into(),
        arguments: json!({"path": "src/big.rs"}),
        effect: Effect::Write,
        operations: vec![],
        needs: vec![ApprovalNeed {
            what: "write src/big.rs".into(),
            reason: "approval mode ask".into(),
        }],
        reason: "approval mode ask".into(),
        grant: Some(GrantOffer {
            covers: vec!["writes to src/big.rs".into()],
            ttl_secs: 300,
        }),
        diff: Some(change.unified()),
        change: Some(Box::new(change)),
        round: None,
    })
}

fn diff_dialog(c: &mut Criterion) {
    let old: String = (0..20_000)
        .map(|i| format!("    let value_{i} = compute({i}, \"old\");\n"))
        .collect();
    let new: String = (0..20_000)
        .map(|i| format!("    let value_{i} = compute({}, \"new\");\n", i + 1))
        .collect();
    let change = FileChange::new("src/big.rs", "/w/src/big.rs".into(), Some(&old), &new);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("diff_dialog");
    group.sample_size(10);
    group.bench_function("first_frame_20k", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut app = app_with(0);
                let mut term = terminal();
                let event = approval_with_diff(change.clone());
                let start = Instant::now();
                app.on_agent_event(event, start);
                term.draw(|f| app.draw(f)).unwrap();
                total += start.elapsed();
                // Wait for the colours, off the clock.
                rt.block_on(async {
                    if let Some(w) = app.next_event().await {
                        app.on_app_event(w);
                    }
                });
            }
            total
        });
    });
    group.bench_function("colours_first_screen_20k", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut app = app_with(0);
                let mut term = terminal();
                app.on_agent_event(approval_with_diff(change.clone()), Instant::now());
                term.draw(|f| app.draw(f)).unwrap();
                // From the dialog on screen to its first screen coloured.
                let start = Instant::now();
                rt.block_on(async {
                    if let Some(w) = app.next_event().await {
                        app.on_app_event(w);
                    }
                });
                term.draw(|f| app.draw(f)).unwrap();
                total += start.elapsed();
            }
            total
        });
    });
    let mut app = app_with(0);
    let mut term = terminal();
    let t0 = Instant::now();
    app.on_agent_event(approval_with_diff(change.clone()), t0);
    term.draw(|f| app.draw(f)).unwrap();
    rt.block_on(async {
        if let Some(w) = app.next_event().await {
            app.on_app_event(w);
        }
    });
    term.draw(|f| app.draw(f)).unwrap();
    let mut down = true;
    let mut steps = 0;
    group.sample_size(50);
    group.bench_function("scroll_key_20k", |b| {
        b.iter(|| {
            // Back and forth through the whole diff.
            steps += 1;
            if steps % 4000 == 0 {
                down = !down;
            }
            let code = if down {
                KeyCode::PageDown
            } else {
                KeyCode::PageUp
            };
            app.on_terminal_event(
                Event::Key(KeyEvent::new(code, KeyModifiers::NONE)),
                Instant::now(),
            );
            term.draw(|f| app.draw(f)).unwrap();
        });
    });
    let view = DiffView::from_change(&change);
    let theme = Theme::load("dark", None, false).unwrap();
    let hl = lathe_tui::highlight::Highlighter::new(theme.syntax_theme.as_deref());
    group.sample_size(10);
    group.bench_function("highlight_20k", |b| {
        b.iter(|| view.highlight_job(&theme, &hl)().unwrap());
    });
    group.finish();
}

fn stream(c: &mut Criterion) {
    let mut app = app_with(0);
    let mut term = terminal();
    let t0 = Instant::now();
    let mut block = String::from("Here is the file:\n\n```rust\n");
    for i in 0..2_000 {
        block.push_str(&format!("    let value_{i} = compute({i}, \"text\");\n"));
    }
    app.on_agent_event(
        AgentEvent::AssistantDelta {
            turn_id: 2,
            text: block,
        },
        t0,
    );
    term.draw(|f| app.draw(f)).unwrap();
    let mut i = 2_000;
    c.bench_function("stream/code_line_at_2000", |b| {
        b.iter(|| {
            i += 1;
            app.on_agent_event(
                AgentEvent::AssistantDelta {
                    turn_id: 2,
                    text: format!("    let value_{i} = compute({i}, \"text\");\n"),
                },
                t0,
            );
            term.draw(|f| app.draw(f)).unwrap();
        });
    });
}

/// A delta of prose and a delta of thinking, each at the end of a cell
/// 2,000 lines long, to its frame: thinking costs no more than text.
fn text_and_thinking_deltas(c: &mut Criterion) {
    let mut group = c.benchmark_group("delta_at_2000");
    for thinking in [false, true] {
        let mut app = app_with(0);
        let mut term = terminal();
        let t0 = Instant::now();
        let event = |text: String| {
            if thinking {
                AgentEvent::ReasoningDelta { turn_id: 2, text }
            } else {
                AgentEvent::AssistantDelta { turn_id: 2, text }
            }
        };
        let mut start = String::new();
        for i in 0..2_000 {
            start.push_str(&format!(
                "Line {i} of what the model says, in plain words.\n"
            ));
        }
        app.on_agent_event(event(start), t0);
        term.draw(|f| app.draw(f)).unwrap();
        let mut i = 2_000;
        let name = if thinking { "thinking" } else { "text" };
        group.bench_function(name, |b| {
            b.iter(|| {
                i += 1;
                app.on_agent_event(event(format!("Line {i} of what the model ")), t0);
                app.on_agent_event(event("says, in plain words.\n".into()), t0);
                term.draw(|f| app.draw(f)).unwrap();
            });
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    frames,
    delta_to_frame,
    diff_dialog,
    stream,
    text_and_thinking_deltas,
    startup
);
criterion_main!(benches);
