//! `grep` over a tree of 100,000 files (2,000 directories, a few lines
//! each, one in a thousand holding the needle), against ripgrep on the
//! same tree when `rg` is installed (target: within 2x of it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use lathe_core::policy::Workspace;
use lathe_core::tools::builtin::Grep;
use lathe_core::tools::{Tool, ToolContext};
use serde_json::json;

fn tree() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    for d in 0..2_000 {
        let dir = ws.path().join(format!("m{}/d{d}", d % 50));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..50 {
            let n = d * 50 + f;
            let body = if n % 1000 == 0 {
                format!("fn f{n}() {{\n    let needle_xyz = {n};\n}}\n")
            } else {
                format!("fn f{n}() {{\n    let other = {n};\n    other + 1\n}}\n")
            };
            std::fs::write(dir.join(format!("f{f}.rs")), body).unwrap();
        }
    }
    ws
}

fn grep(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let ws = tree();
    let workspace = Arc::new(Workspace::new(ws.path()).unwrap());
    let mut group = c.benchmark_group("grep_100k_files");
    group.sample_size(10);
    group.bench_function("lathe", |b| {
        b.iter(|| {
            rt.block_on(async {
                let ctx = ToolContext::standalone(workspace.clone());
                let v = Grep
                    .execute(json!({"pattern": "needle_[a-z]+"}), &ctx)
                    .await
                    .unwrap();
                assert_eq!(v["count"], 100);
            })
        });
    });
    let have_rg = std::process::Command::new("rg")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if have_rg {
        group.bench_function("ripgrep", |b| {
            b.iter(|| {
                let out = std::process::Command::new("rg")
                    .args(["-n", "needle_[a-z]+"])
                    .current_dir(ws.path())
                    .output()
                    .unwrap();
                assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 100);
            });
        });
    } else {
        eprintln!("rg not installed: no ripgrep figure to compare with");
    }
    group.finish();
}

criterion_group!(benches, grep);
criterion_main!(benches);
