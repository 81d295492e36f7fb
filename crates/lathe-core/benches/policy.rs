//! What consent costs per shell call: parsing a line with tree-sitter-bash
//! into simple commands (with program resolution on `PATH`), then the
//! denylist, the deny rules and the per-operation assessment the pipeline
//! runs before anything executes.
//!
//! - `analyze/*`: `policy::shell::analyze` alone, on a one-word command, a
//!   typical chain, a loop with a pipeline, and a 200-command script.
//! - `judge/*`: analysis plus guardrail (denylist, deny rules) plus the
//!   authorize stage's assessment, as `agent::dispatch` runs them.
//! - `covers/refresh_10k`: the look for the files read rules cover that
//!   runs before every sandboxed command, in a workspace of 10,000 files.
//! - `redact/*`: the redactor with one key on 64 KiB of a tool's output
//!   with no key in it (source code with numbers, an `od` dump): what
//!   every result pays; `code_64k_after_a_login`: the same once an MCP
//!   login's tokens were learned.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use lathe_core::policy::{Assessor, Guardrails, Operation, RuleOrigin, Rules, Workspace, shell};
use lathe_core::protocol::{ApprovalMode, Effect};
use serde_json::json;

const LINES: &[(&str, &str)] = &[
    ("single", "ls"),
    (
        "chain",
        "cargo build 2>&1 | tail -n 20 && git status --short",
    ),
    (
        "loop",
        "for f in src/*.rs; do grep -c TODO \"$f\" | sed 's/^/  /'; done > counts.txt",
    ),
];

fn script() -> String {
    (0..200)
        .map(|i| format!("echo step {i} && test -f file{i}.txt || touch file{i}.txt"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    let ws = Arc::new(Workspace::new(dir.path()).unwrap());
    let long = script();
    let mut lines: Vec<(&str, &str)> = LINES.to_vec();
    lines.push(("script_200", &long));
    let mut group = c.benchmark_group("analyze");
    for (name, line) in &lines {
        group.bench_function(*name, |b| b.iter(|| shell::analyze(line, &ws)));
    }
    group.finish();

    let rules = Arc::new(
        Rules::parse(
            &[
                "exec_shell(cargo test*)".into(),
                "exec_shell(git status*)".into(),
            ],
            &["exec_shell(git push*)".into()],
            &["exec_shell(rm -rf *)".into(), "read_file(.env)".into()],
            RuleOrigin::User,
        )
        .unwrap(),
    );
    let rails = Guardrails::new(ws.clone(), rules.clone(), 300);
    let mut group = c.benchmark_group("judge");
    for (name, line) in &lines {
        let args = json!({ "command": line });
        group.bench_function(*name, |b| {
            b.iter(|| {
                let ops = vec![Operation::Exec(shell::analyze(line, &ws))];
                let verdict = rails.check(
                    "exec_shell",
                    lathe_core::protocol::ToolKind::Shell,
                    &args,
                    &ops,
                );
                let assessment = Assessor {
                    mode: ApprovalMode::Ask,
                    rules: &rules,
                    workspace: &ws,
                    protected: &[],
                }
                .assess("exec_shell", Effect::Exec, &ops);
                (verdict, assessment)
            });
        });
    }
    group.finish();
}

fn redact(c: &mut Criterion) {
    let key = "sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678".to_string();
    let redactor = lathe_core::policy::Redactor::new([key]);
    let code: String = (0..)
        .map(|i| format!("    let x{i} = compute({i}, 0x{i:04x}, \"label {i}\"); // step {i}\n"))
        .take_while(|_| true)
        .take(1200)
        .collect::<String>()
        .chars()
        .take(64 * 1024)
        .collect();
    let dump: String = (0..4096)
        .map(|i| {
            format!(
                "{:07o} {:06o} {:06o} {:06o} {:06o}\n",
                i * 16,
                i % 65536,
                (i * 7) % 65536,
                (i * 13) % 65536,
                (i * 31) % 65536
            )
        })
        .collect::<String>()
        .chars()
        .take(64 * 1024)
        .collect();
    // A workspace's `.env` of thirty values, short and long, beside the key.
    let env: Vec<String> = (0..30)
        .map(|i| match i % 3 {
            0 => format!("pw{i:06}"),
            1 => format!("secret-value-{i}-{}", "x".repeat(i)),
            _ => format!("postgres://user:p4ss{i}@db.internal:5432/app{i}"),
        })
        .chain(["sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678".to_string()])
        .collect();
    let many = lathe_core::policy::Redactor::new(env.clone());
    // A text full of them: every tenth line holds one.
    let leaky: String = (0..1200)
        .map(|i| {
            if i % 10 == 0 {
                format!("DATABASE_URL={}\n", env[i / 10 % env.len()])
            } else {
                format!("    let x{i} = compute({i}); // step {i}\n")
            }
        })
        .collect::<String>()
        .chars()
        .take(64 * 1024)
        .collect();
    let mut group = c.benchmark_group("redact");
    for (name, text) in [("code_64k", &code), ("od_dump_64k", &dump)] {
        group.bench_function(name, |b| b.iter(|| redactor.redact_str(text)));
    }
    group.bench_function("code_64k_31_secrets", |b| b.iter(|| many.redact_str(&code)));
    group.bench_function("leaky_64k_31_secrets", |b| {
        b.iter(|| many.redact_str(&leaky))
    });
    // After an MCP login: its tokens are learned late (a refresh brings
    // new ones), and every matcher looks for them too.
    lathe_core::policy::redactor::learn([
        "mcp-access-token-0123456789abcdef".to_string(),
        "mcp-refresh-token-fedcba9876543210".to_string(),
    ]);
    group.bench_function("code_64k_after_a_login", |b| {
        b.iter(|| redactor.redact_str(&code))
    });
    group.finish();
    // What a start pays: the matcher for one key, for the key and a
    // `.env`, and for the longest secret a property test tries.
    let mut group = c.benchmark_group("redactor_new");
    group.sample_size(10);
    group.bench_function("one_key", |b| {
        b.iter(|| lathe_core::policy::Redactor::new([env[30].clone()]))
    });
    group.bench_function("key_and_env_31", |b| {
        b.iter(|| lathe_core::policy::Redactor::new(env.clone()))
    });
    let long: String = (0u32..200)
        .map(|i| char::from_u32(33 + (i * 7919 + i * i) % 94).unwrap_or('x'))
        .collect();
    group.bench_function("secret_200_bytes", |b| {
        b.iter(|| lathe_core::policy::Redactor::new([long.clone()]))
    });
    // A `.env` holding a blob of 250,000 characters (it stalled the start
    // for over a minute).
    let blob: String = (0u32..250_000)
        .map(|i| char::from_u32(48 + (i.wrapping_mul(2_654_435_761) >> 7) % 75).unwrap_or('x'))
        .collect();
    group.bench_function("blob_250k", |b| {
        b.iter(|| lathe_core::policy::Redactor::new([blob.clone()]))
    });
    group.finish();
}

fn covers(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    for d in 0..100 {
        let sub = dir.path().join(format!("src/m{d}"));
        std::fs::create_dir_all(&sub).unwrap();
        for f in 0..100 {
            std::fs::write(sub.join(format!("f{f}.rs")), "fn main() {}\n").unwrap();
        }
    }
    std::fs::create_dir(dir.path().join("private")).unwrap();
    std::fs::write(dir.path().join("private/plan.md"), "plan\n").unwrap();
    let ws = Arc::new(Workspace::new(dir.path()).unwrap());
    let rules = Arc::new(
        Rules::parse(
            &[],
            &[],
            &["read_file(private/**)".into()],
            RuleOrigin::User,
        )
        .unwrap(),
    );
    let rails = Guardrails::new(ws, rules, 300);
    let mut group = c.benchmark_group("covers");
    group.bench_function("refresh_10k", |b| b.iter(|| rails.reads().refresh()));
    group.finish();
}

criterion_group!(benches, bench, redact, covers);
criterion_main!(benches);
