//! Benchmarks of `FileSystemTraceStore`, each next to a raw baseline measured in the same run:
//! append throughput in both durability modes (baseline: the same event lines appended to one
//! plain file, synced per message in fsync mode), cold open of a 100,000-message trace (baseline:
//! reading its events.jsonl as one file) and messages-by-goal on that trace (baseline: reading
//! the same message bytes as one file). Each pair prints its ratio.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use agent_execution::{NewMessage, NewTrace, TraceStore, WriteOp};
use agent_goal::GoalCommand;
use agent_store_fs::{Durability, FileSystemTraceStore};
use criterion::{Criterion, criterion_group, criterion_main};
use tokio::runtime::Runtime;

const APPENDS: u64 = 100;
const BIG: u64 = 100_000;
const GOALS: u64 = 100;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn text(step: u64) -> String {
    format!("Step {step}: looked at the file and found the function that needs a change. ")
        .repeat(3)
}

/// Appends `APPENDS` messages to a fresh trace; returns the time and the event lines written.
fn store_append(rt: &Runtime, base: &Path, durability: Durability) -> (Duration, Vec<u8>) {
    let store = FileSystemTraceStore::open(base)
        .unwrap()
        .with_durability(durability);
    let id = rt
        .block_on(store.create_trace(NewTrace::agent("bench")))
        .unwrap()
        .trace_id;
    let start = Instant::now();
    rt.block_on(async {
        for step in 0..APPENDS {
            store
                .add_message(&id, NewMessage::user(text(step)).usage(10, 0.0))
                .await
                .unwrap();
        }
    });
    let elapsed = start.elapsed();
    let lines = fs::read(base.join(&id).join("events.jsonl")).unwrap();
    (elapsed, lines)
}

/// Appends the same lines to one plain file, one write (and sync) per line.
fn raw_append(path: &Path, lines: &[u8], durability: Durability) -> Duration {
    let start = Instant::now();
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for line in lines.split_inclusive(|&b| b == b'\n') {
        file.write_all(line).unwrap();
        if durability == Durability::Fsync {
            file.sync_data().unwrap();
        }
    }
    start.elapsed()
}

fn report(name: &str, store: Duration, raw: Duration) {
    println!(
        "{name}: store {store:?}, raw baseline {raw:?}, ratio {:.1}x",
        store.as_secs_f64() / raw.as_secs_f64().max(1e-9)
    );
}

fn append(c: &mut Criterion) {
    let rt = runtime();
    for (name, durability) in [
        ("buffered", Durability::Buffered),
        ("fsync", Durability::Fsync),
    ] {
        let mut group = c.benchmark_group(format!("append_{APPENDS}_messages_{name}"));
        let mut sample = Vec::new();
        group.bench_function("store", |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let dir = tempfile::tempdir().unwrap();
                    let (elapsed, lines) = store_append(&rt, dir.path(), durability);
                    total += elapsed;
                    sample = lines;
                }
                total
            });
        });
        let lines = sample.clone();
        group.bench_function("raw_baseline", |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let dir = tempfile::tempdir().unwrap();
                    total += raw_append(&dir.path().join("raw.jsonl"), &lines, durability);
                }
                total
            });
        });
        group.finish();
        let dir = tempfile::tempdir().unwrap();
        let (store_time, lines) = store_append(&rt, dir.path(), durability);
        let raw_time = raw_append(&dir.path().join("raw.jsonl"), &lines, durability);
        report(
            &format!("append {APPENDS} messages, {name}"),
            store_time,
            raw_time,
        );
    }
}

/// Builds a trace of `BIG` messages spread over `GOALS` goals, in commits of 1,000 messages.
fn build_big(rt: &Runtime, base: &Path) -> String {
    let store = FileSystemTraceStore::open(base)
        .unwrap()
        .with_durability(Durability::Buffered);
    rt.block_on(async {
        let id = store
            .create_trace(NewTrace::agent("big"))
            .await
            .unwrap()
            .trace_id;
        let names: Vec<String> = (1..=GOALS).map(|g| format!("goal {g}")).collect();
        let add = GoalCommand {
            add: Some(names.join(", ")),
            ..GoalCommand::default()
        };
        store.apply_goal_command(&id, add).await.unwrap();
        for chunk in 0..BIG / 1000 {
            let ops = (0..1000)
                .map(|i| {
                    let step = chunk * 1000 + i;
                    let goal = (step % GOALS + 1).to_string();
                    WriteOp::AddMessage(NewMessage::user(text(step)).goal(goal).usage(10, 0.0))
                })
                .collect();
            store.batch(&id, ops).await.unwrap();
        }
        id
    })
}

fn big_trace(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let built = Instant::now();
    let id = build_big(&rt, dir.path());
    println!("built a {BIG}-message trace in {:?}", built.elapsed());
    let log = dir.path().join(&id).join("events.jsonl");

    let cold_open = || {
        let store = FileSystemTraceStore::open(dir.path()).unwrap();
        let start = Instant::now();
        rt.block_on(store.get_trace(&id)).unwrap().unwrap();
        start.elapsed()
    };
    let raw_read = |path: &Path| {
        let start = Instant::now();
        let mut bytes = Vec::new();
        fs::File::open(path)
            .unwrap()
            .read_to_end(&mut bytes)
            .unwrap();
        std::hint::black_box(bytes);
        start.elapsed()
    };
    let mut group = c.benchmark_group(format!("cold_open_{BIG}_messages"));
    group.bench_function("store", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| cold_open()).sum())
    });
    group.bench_function("raw_baseline", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| raw_read(&log)).sum())
    });
    group.finish();
    report(
        &format!("cold open, {BIG} messages"),
        cold_open(),
        raw_read(&log),
    );

    // Messages of one goal on the opened trace; the baseline reads the same message bytes.
    let store = FileSystemTraceStore::open(dir.path()).unwrap();
    let messages = rt.block_on(store.get_messages_by_goal(&id, "7")).unwrap();
    assert_eq!(messages.len() as u64, BIG / GOALS);
    let same_bytes: Vec<u8> = messages
        .iter()
        .flat_map(|m| {
            let mut line = serde_json::to_vec(m).unwrap();
            line.push(b'\n');
            line
        })
        .collect();
    let plain = dir.path().join("goal-7.jsonl");
    fs::write(&plain, &same_bytes).unwrap();
    let by_goal = || {
        let start = Instant::now();
        std::hint::black_box(rt.block_on(store.get_messages_by_goal(&id, "7")).unwrap());
        start.elapsed()
    };
    let mut group = c.benchmark_group(format!("messages_by_goal_{}_of_{BIG}", BIG / GOALS));
    group.bench_function("store", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| by_goal()).sum())
    });
    group.bench_function("raw_baseline", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| raw_read(&plain)).sum())
    });
    group.finish();
    report(
        &format!("messages by goal, {} of {BIG}", BIG / GOALS),
        by_goal(),
        raw_read(&plain),
    );
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = append, big_trace
}
criterion_main!(benches);
