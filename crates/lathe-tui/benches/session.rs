//! Sessions' speed.
//!
//! - `history/append`: what recording one item costs a turn (queueing it
//!   for the recorder thread). Target: under 20 µs.
//! - `history/append_written_1000`: 1,000 items queued and on disk
//!   (flushed and synced), per batch, for the writer's own pace.
//! - `resume/first_frame_10k`: a 10,000-item session file read, the
//!   conversation rebuilt, the app made with its transcript, and the first
//!   frame drawn. Target: under 200 ms.
//! - `request/body/N`: the provider request built and serialized from a
//!   history of N messages: it must grow in proportion to N (the body
//!   borrows the history; serializing is the one pass over it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use lathe_core::protocol::{ApprovalMode, Usage};
use lathe_core::provider::{ChatRequest, Message, ToolCall, ToolOutput};
use lathe_core::session::history::{self, Item, Recorder};
use lathe_tui::app::{App, AppInit, SessionInit};
use lathe_tui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// One turn's items: six of them.
fn turn_items(turn: u64) -> Vec<Item> {
    let id = format!("call-{turn}");
    vec![
        Item::User {
            images: Vec::new(),
            turn,
            text: format!("please look at src/module_{turn}.rs and fix the bug in it"),
            note: None,
        },
        Item::Request { turn },
        Item::Assistant {
            turn,
            text: "Let me read it first.".into(),
            tool_calls: vec![ToolCall {
                id: id.clone(),
                name: "read_file".into(),
                arguments: format!("{{\"path\":\"src/module_{turn}.rs\"}}"),
            }],
            usage: Usage {
                input_tokens: 1200,
                output_tokens: 40,
                ..Default::default()
            },
            reasoning: String::new(),
            carried: Vec::new(),
            model: String::new(),
        },
        Item::Approved {
            call_id: id.clone(),
        },
        Item::ToolOutput(ToolOutput {
            call_id: id,
            content: format!(
                "{{\"content\":\"{}\",\"total_lines\":40}}",
                "fn handler() -> Result<(), Error> { todo!() }\\n".repeat(20)
            ),
            is_error: false,
        }),
        Item::TurnEnd { turn },
    ]
}

/// A session file of at least `items` items, and its id.
fn session_file(dir: &Path, items: usize) -> String {
    let id = "bench-session".to_string();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let rec = Recorder::open(
            dir,
            &id,
            std::sync::Arc::new(lathe_core::policy::Redactor::default()),
        )
        .unwrap();
        rec.append(Item::Session {
            base_url: None,
            wire: None,
            key_hint: None,
            effort: None,
            workspace: PathBuf::from("/work/project"),
            provider: "openai".into(),
            model: "bench".into(),
            version: "0".into(),
        })
        .await;
        let mut n = 1;
        let mut turn = 1;
        while n < items {
            for item in turn_items(turn) {
                rec.append(item).await;
                n += 1;
            }
            turn += 1;
        }
        rec.sync().await;
    });
    id
}

fn recording(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rec = rt.block_on(async {
        Recorder::open(
            dir.path(),
            "append",
            std::sync::Arc::new(lathe_core::policy::Redactor::default()),
        )
        .unwrap()
    });
    let items = turn_items(7);
    let mut group = c.benchmark_group("history");
    let mut i = 0;
    group.bench_function("append", |b| {
        b.iter(|| {
            let item = items[i % items.len()].clone();
            i += 1;
            rt.block_on(rec.append(item));
        });
    });
    group.throughput(Throughput::Elements(1000));
    group.bench_function("append_written_1000", |b| {
        b.iter(|| {
            rt.block_on(async {
                for k in 0..1000 {
                    rec.append(items[k % items.len()].clone()).await;
                }
                rec.sync().await;
            });
        });
    });
    group.finish();
}

fn resume(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let id = session_file(dir.path(), 10_000);
    let path = history::history_path(dir.path(), &id);
    let theme = Theme::load("dark", None, false).unwrap();
    let mut group = c.benchmark_group("resume");
    group.sample_size(20);
    group.bench_function("first_frame_10k", |b| {
        b.iter(|| {
            let records = history::read(&path).unwrap();
            assert!(records.len() >= 10_000);
            let rebuilt = history::rebuild(&records, &lathe_core::policy::Redactor::default());
            let mut app = App::new(
                AppInit {
                    model: "bench".into(),
                    workspace: PathBuf::from("/work/project"),
                    approval: ApprovalMode::Ask,
                    theme: theme.clone(),
                    notices: vec![],
                    trust: None,
                    session: SessionInit {
                        id: id.clone(),
                        dir: None,
                        prompts: None,
                        resumed: Some(rebuilt),
                        pick: false,
                        ..Default::default()
                    },
                },
                Instant::now(),
            );
            let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
            term.draw(|f| app.draw(f)).unwrap();
        });
    });
    group.finish();
}

/// A conversation of `n` messages (user, assistant with a call, results).
fn conversation(n: usize) -> Vec<Message> {
    let mut out = Vec::with_capacity(n);
    let mut k = 0;
    while out.len() < n {
        out.push(Message::User(format!("fix the bug in module {k}")));
        out.push(Message::assistant(
            "Reading it.",
            vec![ToolCall {
                id: format!("c{k}"),
                name: "read_file".into(),
                arguments: format!("{{\"path\":\"src/m{k}.rs\"}}"),
            }],
        ));
        out.push(Message::ToolResults(vec![ToolOutput {
            call_id: format!("c{k}"),
            content: "fn handler() -> Result<(), Error> { todo!() }\n".repeat(20),
            is_error: false,
        }]));
        k += 1;
    }
    out.truncate(n);
    out
}

fn request(c: &mut Criterion) {
    let mut group = c.benchmark_group("request/body");
    for n in [100usize, 1_000, 10_000] {
        let messages = conversation(n);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                let req = ChatRequest::new("bench", "You are a coding assistant.", &messages, &[]);
                let options = lathe_core::provider::openai::BodyOptions::default();
                let body = lathe_core::provider::openai::request_body(&req, &options, true);
                serde_json::to_vec(&body).unwrap().len()
            });
        });
    }
    group.finish();
}

criterion_group!(benches, recording, resume, request);
criterion_main!(benches);
