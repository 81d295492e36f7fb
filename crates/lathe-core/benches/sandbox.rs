//! What the sandbox costs a command: `exec_shell` running `true`, from the
//! call to its result, with the Landlock sandbox (`workspace-write`) and
//! without it (`off`; the warden that contains processes still runs), and
//! a bare `bash -c true` spawn for reference. The difference between the
//! first two is the sandbox's own cost (target: under 5 ms). And the
//! look for armed git repositories that follows every sandboxed command.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use lathe_core::policy::Workspace;
use lathe_core::sandbox::{Mode, sweep_git_traps};
use lathe_core::tools::builtin::ExecShell;
use lathe_core::tools::{BuiltinSettings, Tool, ToolContext};
use serde_json::json;

fn shell(mode: Mode) -> ExecShell {
    let mut settings = BuiltinSettings::default();
    settings.sandbox.mode = mode;
    settings.sandbox.helper = Some(env!("CARGO_BIN_EXE_lathe-sandbox-helper").into());
    ExecShell::new(&settings)
}

fn start(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let workspace = Arc::new(Workspace::new(ws.path()).unwrap());
    let mut group = c.benchmark_group("command_start");
    group.sample_size(40);
    for (name, mode) in [("sandboxed", Mode::WorkspaceWrite), ("off", Mode::Off)] {
        let tool = shell(mode);
        group.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let ctx = ToolContext::standalone(workspace.clone());
                    let v = tool
                        .execute(json!({"command": "true"}), &ctx)
                        .await
                        .unwrap();
                    assert_eq!(v["exit_code"], 0);
                })
            });
        });
    }
    group.bench_function("bare_bash", |b| {
        b.iter(|| {
            let status = std::process::Command::new("bash")
                .args(["-c", "true"])
                .current_dir(ws.path())
                .status()
                .unwrap();
            assert!(status.success());
        });
    });
    group.finish();
}

/// The look for armed git repositories after each command, over a
/// workspace of 20,000 files in 2,000 directories (a mid-sized project
/// with its dependencies vendored), nothing found.
fn sweep(c: &mut Criterion) {
    let ws = tempfile::tempdir().unwrap();
    for d in 0..2_000 {
        let dir = ws.path().join(format!("m{}/d{d}", d % 40));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..10 {
            std::fs::write(dir.join(format!("f{f}.rs")), "x").unwrap();
        }
    }
    let settings = BuiltinSettings::default();
    let policy = settings.sandbox.policy(ws.path(), vec!["true".into()]);
    let since = std::time::SystemTime::now();
    let mut group = c.benchmark_group("git_sweep");
    group.sample_size(20);
    group.bench_function("20k_files", |b| {
        b.iter(|| {
            let found = sweep_git_traps(&policy, since);
            assert!(found.traps.is_empty());
        })
    });
    group.finish();
}

/// What watching the opens costs (read rules in force: every open for
/// reading waits for the warden): a command that reads 2,000 files, with
/// and without a read rule.
fn opens(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let ws = tempfile::tempdir().unwrap();
    for d in 0..20 {
        let dir = ws.path().join(format!("src/m{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(dir.join(format!("f{f}.rs")), "fn main() {}\n").unwrap();
        }
    }
    let workspace = Arc::new(Workspace::new(ws.path()).unwrap());
    let tool = shell(Mode::WorkspaceWrite);
    let mut group = c.benchmark_group("opens_2000");
    group.sample_size(10);
    for (name, rules) in [
        ("unwatched", Vec::new()),
        ("watched", vec!["read_file(private/**)".to_string()]),
    ] {
        let rules = Arc::new(
            lathe_core::policy::Rules::parse(
                &[],
                &[],
                &rules,
                lathe_core::policy::RuleOrigin::User,
            )
            .unwrap(),
        );
        let reads = lathe_core::policy::guardrails::ReadDenials::of(workspace.clone(), rules);
        group.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let mut ctx = ToolContext::standalone(workspace.clone());
                    ctx.read_denials = reads.clone();
                    let v = tool
                        .execute(json!({"command": "cat src/*/*.rs | wc -l"}), &ctx)
                        .await
                        .unwrap();
                    assert_eq!(v["exit_code"], 0, "{v}");
                })
            });
        });
    }
    group.finish();
}

criterion_group!(benches, start, sweep, opens);
criterion_main!(benches);
