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
//! Before the timings, the resident memory of a 10,000-message transcript is
//! printed (`memory:` line).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use lathe::config::{Config, Overrides};
use lathe::protocol::{AgentEvent, ApprovalMode, ResultMetadata, ToolStatus};
use lathe::tui::app::{App, AppInit};
use lathe::tui::theme::Theme;
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
                turn_id: 1,
                call_id: format!("c{i}"),
                tool: "read_file".into(),
                arguments: json!({"path": format!("src/file_{i}.rs")}),
                effect: None,
            },
            _ => AgentEvent::ToolCallFinished {
                call_id: format!("c{}", i - 1),
                tool: "read_file".into(),
                status: ToolStatus::Ok,
                content: json!({"start_line": 1, "end_line": 40, "total_lines": 40}),
                metadata: ResultMetadata {
                    bytes: 1200,
                    duration_ms: 2,
                    ..ResultMetadata::default()
                },
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

fn frames(c: &mut Criterion) {
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
    let mut group = c.benchmark_group("startup");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("first_frame", |b| {
        b.iter(|| {
            let _guard = rt.enter();
            let config =
                Config::load(&overrides, &|k| (k == "LATHE_HOME").then(|| home_s.clone())).unwrap();
            let theme = Theme::load(&config.theme, None, false).unwrap();
            let launched = lathe::launch::spawn_agent(&config, None, false).unwrap();
            let mut app = App::new(
                AppInit {
                    model: config.model.clone(),
                    workspace: config.workspace.clone(),
                    approval: config.approval,
                    theme,
                    notices: vec![],
                    trust: None,
                },
                Instant::now(),
            );
            let mut term = terminal();
            term.draw(|f| app.draw(f)).unwrap();
            launched.handle.task.abort();
        });
    });
    group.finish();
}

criterion_group!(benches, frames, delta_to_frame, startup);
criterion_main!(benches);
