//! The engine's own overhead per tool round trip, against the in-process
//! mock LLM on loopback: build the request, POST it, parse the SSE stream,
//! dispatch the tool call through every pipeline stage, and feed the result
//! back. The mock's answers are pre-rendered SSE bodies, so what is timed is
//! Lathe (and loopback HTTP), not the mock.
//!
//! - `turn/text_only`: one request, a text answer (the baseline).
//! - `turn/read_file_small` and `turn/read_file_64k`: two requests with one
//!   `read_file` call between them; minus the baseline, this is the cost of
//!   one tool round trip.
//! - `turn/task_subagent`: a `task` call whose subagent answers at once
//!   (three requests); minus `read_file_small` and one more request, the
//!   cost of starting a subagent.
//! - `jobs/*`: a background command's output into its 1 MiB buffer (what
//!   a command nobody reads costs), and a read of what is new.
//! - `stream/text/*`: one long streamed answer (text in 7-byte deltas, as
//!   real servers send a token or two per event), to show that the cost
//!   grows linearly with the response size.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use lathe_test_support::mock_llm;

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use lathe_core::agent::{Agent, AgentConfig, AgentHandle};
use lathe_core::policy::{HeadlessApprover, Workspace};
use lathe_core::protocol::{ApprovalMode, Op};
use lathe_core::provider::{self, ProviderKind, ProviderSettings};
use lathe_core::tools::{BuiltinSettings, ToolRegistry};
use mock_llm::{MockLlm, Reply, Step, anthropic_events, openai_events};
use serde_json::json;

fn raw(kind: ProviderKind, reply: &Reply) -> Step {
    let events = match kind {
        ProviderKind::OpenAi => openai_events(reply),
        ProviderKind::Anthropic => anthropic_events(reply),
    };
    Step::Raw(events.concat())
}

struct Bench {
    handle: AgentHandle,
    _mock: MockLlm,
    _ws: tempfile::TempDir,
}

async fn setup(kind: ProviderKind, steps: Vec<Step>, file_bytes: usize) -> Bench {
    setup_with(kind, steps, file_bytes, None).await
}

/// As [`setup`], with the person's key known to the redactor (as every
/// real start has one).
async fn setup_with(
    kind: ProviderKind,
    steps: Vec<Step>,
    file_bytes: usize,
    key: Option<&str>,
) -> Bench {
    let ws = tempfile::tempdir().unwrap();
    let line = "the quick brown fox jumps over the lazy dog 0123456789\n";
    let body: String = line.repeat(file_bytes / line.len() + 1)[..file_bytes].to_string();
    std::fs::write(ws.path().join("file.txt"), body).unwrap();
    let mock = MockLlm::cycling(steps).await;
    let url = match kind {
        ProviderKind::OpenAi => mock.openai_url(),
        ProviderKind::Anthropic => mock.anthropic_url(),
    };
    let provider = provider::build(ProviderSettings::new(kind, url)).unwrap();
    let registry = ToolRegistry::with_defaults(&BuiltinSettings::default()).unwrap();
    let mut cfg = AgentConfig::new("bench", "You are a benchmark.");
    cfg.approval = ApprovalMode::FullAuto;
    let workspace = Arc::new(Workspace::new(ws.path()).unwrap());
    let mut agent = Agent::new(cfg, provider, Arc::new(registry), workspace)
        .with_approver(Arc::new(HeadlessApprover));
    if let Some(key) = key {
        agent = agent.with_redactor(lathe_core::policy::Redactor::new([key.to_string()]));
    }
    let handle = agent.spawn();
    Bench {
        handle,
        _mock: mock,
        _ws: ws,
    }
}

/// Runs one turn and waits for its end; the conversation is cleared after.
async fn one_turn(b: &mut Bench) -> Duration {
    let start = Instant::now();
    b.handle
        .ops
        .send(Op::UserInput {
            text: "read file.txt".into(),
        })
        .await
        .unwrap();
    loop {
        let ev = b.handle.events.recv().await.unwrap();
        if ev.ends_turn() {
            assert_eq!(ev.kind(), "turn_completed", "{ev:?}");
            break;
        }
    }
    let took = start.elapsed();
    b.handle.ops.send(Op::Clear).await.unwrap();
    took
}

/// Total time of `iters` turns.
async fn turns_taking(bench: &mut Bench, iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        total += one_turn(bench).await;
    }
    total
}

fn turns(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("turn");
    group.measurement_time(Duration::from_secs(8));
    let tool_step = |kind| {
        raw(
            kind,
            &Reply::tools().call("c1", "read_file", json!({"path": "file.txt"})),
        )
    };
    let cases: Vec<(&str, ProviderKind, Vec<Step>, usize)> = vec![
        (
            "text_only",
            ProviderKind::OpenAi,
            vec![raw(ProviderKind::OpenAi, &Reply::text("Done."))],
            0,
        ),
        (
            "read_file_small",
            ProviderKind::OpenAi,
            vec![
                tool_step(ProviderKind::OpenAi),
                raw(ProviderKind::OpenAi, &Reply::text("Done.")),
            ],
            1024,
        ),
        (
            "read_file_64k",
            ProviderKind::OpenAi,
            vec![
                tool_step(ProviderKind::OpenAi),
                raw(ProviderKind::OpenAi, &Reply::text("Done.")),
            ],
            60 * 1024,
        ),
        // A subagent (`task`) that answers at once: three requests. Minus
        // `read_file_small` and one more `text_only` request, what starting
        // a subagent costs beyond its model calls.
        (
            "task_subagent",
            ProviderKind::OpenAi,
            vec![
                raw(
                    ProviderKind::OpenAi,
                    &Reply::tools().call(
                        "t1",
                        "task",
                        json!({"description": "look", "prompt": "find the file"}),
                    ),
                ),
                raw(ProviderKind::OpenAi, &Reply::text("It is file.txt.")),
                raw(ProviderKind::OpenAi, &Reply::text("Done.")),
            ],
            1024,
        ),
        (
            "anthropic_read_file_small",
            ProviderKind::Anthropic,
            vec![
                tool_step(ProviderKind::Anthropic),
                raw(ProviderKind::Anthropic, &Reply::text("Done.")),
            ],
            1024,
        ),
    ];
    for (name, kind, steps, bytes) in cases {
        let mut bench = rt.block_on(setup(kind, steps, bytes));
        group.bench_function(name, |b| {
            b.iter_custom(|iters| rt.block_on(turns_taking(&mut bench, iters)));
        });
    }
    group.finish();
}

fn streaming(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("stream");
    group.sample_size(20);
    for kb in [64usize, 256, 1024] {
        let text = "word ".repeat(kb * 1024 / 5);
        let step = raw(ProviderKind::OpenAi, &Reply::text(&text));
        let Step::Raw(sse) = &step else {
            unreachable!()
        };
        // Throughput counts SSE bytes on the wire (one event per 7 text bytes).
        group.throughput(Throughput::Bytes(sse.len() as u64));
        let mut bench = rt.block_on(setup(ProviderKind::OpenAi, vec![step.clone()], 0));
        group.bench_with_input(BenchmarkId::new("text", format!("{kb}KiB")), &kb, |b, _| {
            b.iter_custom(|iters| rt.block_on(turns_taking(&mut bench, iters)));
        });
        // With the person's key known: every form of it is looked for.
        let key = "sk-proj-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH";
        let mut bench = rt.block_on(setup_with(ProviderKind::OpenAi, vec![step], 0, Some(key)));
        group.bench_with_input(
            BenchmarkId::new("text_with_key", format!("{kb}KiB")),
            &kb,
            |b, _| {
                b.iter_custom(|iters| rt.block_on(turns_taking(&mut bench, iters)));
            },
        );
    }
    group.finish();
}

/// A background command's output: each line into the buffer (the oldest
/// dropped past 1 MiB), and a read of the newest 32 KiB.
fn jobs(c: &mut Criterion) {
    use lathe_core::tools::jobs::Jobs;
    let mut group = c.benchmark_group("jobs");
    let line = "GET /api/items 200 3.2ms - a dev server's access log line".to_string();
    let jobs = Jobs::new(4);
    let job = jobs
        .reserve(
            "npm run dev",
            &tokio_util::sync::CancellationToken::new(),
            None,
        )
        .unwrap();
    let sink = job.sink();
    // Full already: every line also drops as much from the front.
    for _ in 0..20_000 {
        sink.emit("stdout", line.clone());
    }
    group.bench_function("buffer_1000_lines", |b| {
        b.iter(|| {
            for _ in 0..1000 {
                sink.emit("stdout", line.clone());
            }
        });
    });
    group.bench_function("read_new", |b| {
        b.iter(|| {
            for _ in 0..100 {
                sink.emit("stdout", line.clone());
            }
            job.read()
        });
    });
    group.finish();
}

criterion_group!(benches, turns, streaming, jobs);
criterion_main!(benches);
