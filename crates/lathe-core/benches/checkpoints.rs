//! The checkpoint before a command, in a workspace of 10,000 files (with
//! a `.gitignore`d build directory): cold (a new shadow repository, every
//! file read) and warm (200 files added since the last checkpoint; 200
//! untracked files already checkpointed and one file edited), the
//! snapshot alone and with the listing of ignored entries that names what
//! no checkpoint holds (target: under 50 ms warm).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use lathe_core::session::checkpoints::Store;

fn tree() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    for d in 0..100 {
        let dir = ws.path().join(format!("src/m{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(
                dir.join(format!("f{f}.rs")),
                format!("fn f{d}_{f}() -> u32 {{\n    {f}\n}}\n"),
            )
            .unwrap();
        }
    }
    std::fs::write(ws.path().join(".gitignore"), "build/\n").unwrap();
    std::fs::create_dir_all(ws.path().join("build/out")).unwrap();
    for i in 0..500 {
        std::fs::write(ws.path().join(format!("build/out/o{i}")), "obj").unwrap();
    }
    ws
}

fn checkpoints(c: &mut Criterion) {
    let ws = tree();
    let mut group = c.benchmark_group("checkpoint_10k_files");
    group.sample_size(10);
    group.bench_function("cold", |b| {
        b.iter_batched(
            || tempfile::tempdir().unwrap(),
            |data| {
                let store = Store::open(data.path(), ws.path()).unwrap();
                store.snapshot().unwrap();
                data
            },
            BatchSize::PerIteration,
        );
    });
    let data = tempfile::tempdir().unwrap();
    let store = Store::open(data.path(), ws.path()).unwrap();
    store.snapshot().unwrap();
    let batch = AtomicUsize::new(0);
    // 200 files new since the last checkpoint, as a command leaves them
    // (those of the batch before gone: the tree stays at its size).
    let add = || {
        let n = batch.fetch_add(1, Ordering::Relaxed);
        let _ = std::fs::remove_dir_all(ws.path().join("new"));
        let dir = ws.path().join(format!("new/b{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..200 {
            std::fs::write(dir.join(format!("n{i}.txt")), format!("{n} {i}\n")).unwrap();
        }
    };
    group.bench_function("warm_200_new", |b| {
        b.iter_batched(add, |()| store.snapshot().unwrap(), BatchSize::PerIteration);
    });
    group.bench_function("warm_200_new_and_ignored", |b| {
        b.iter_batched(
            add,
            |()| {
                store.snapshot().unwrap();
                store.ignored().unwrap()
            },
            BatchSize::PerIteration,
        );
    });
    // The case as written: 200 untracked files, already in the
    // last checkpoint and unchanged since (one file edited).
    group.bench_function("warm_200_untracked_one_edit", |b| {
        b.iter_batched(
            || {
                let n = batch.fetch_add(1, Ordering::Relaxed);
                std::fs::write(ws.path().join("src/m0/f0.rs"), format!("// {n}\n")).unwrap();
            },
            |()| store.snapshot().unwrap(),
            BatchSize::PerIteration,
        );
    });
    group.bench_function("ignored_listing", |b| {
        b.iter(|| store.ignored().unwrap());
    });
    group.finish();
}

criterion_group!(benches, checkpoints);
criterion_main!(benches);
