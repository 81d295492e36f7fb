//! What the sandbox costs a command: `exec_shell` running `true`, from the
//! call to its result, with the Landlock sandbox (`workspace-write`) and
//! without it (`off`; the warden that contains processes still runs), and
//! a bare `bash -c true` spawn for reference. The difference between the
//! first two is the sandbox's own cost (target: under 5 ms).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use lathe::policy::Workspace;
use lathe::sandbox::Mode;
use lathe::tools::builtin::ExecShell;
use lathe::tools::{BuiltinSettings, Tool, ToolContext};
use serde_json::json;

fn shell(mode: Mode) -> ExecShell {
    let mut settings = BuiltinSettings::default();
    settings.sandbox.mode = mode;
    settings.sandbox.helper = Some(env!("CARGO_BIN_EXE_lathe").into());
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

criterion_group!(benches, start);
criterion_main!(benches);
