//! What consent costs per shell call: parsing a line with tree-sitter-bash
//! into simple commands (with program resolution on `PATH`), then the
//! denylist, the deny rules and the per-operation assessment the pipeline
//! runs before anything executes.
//!
//! - `analyze/*`: `policy::shell::analyze` alone, on a one-word command, a
//!   typical chain, a loop with a pipeline, and a 200-command script.
//! - `judge/*`: analysis plus guardrail (denylist, deny rules) plus the
//!   authorize stage's assessment, as `agent::dispatch` runs them.
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
                let verdict = rails.check("exec_shell", &args, &ops);
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

criterion_group!(benches, bench);
criterion_main!(benches);
