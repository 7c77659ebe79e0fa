//! Section 6: PostgreSQL and workers, on a throwaway cluster started for the run (`initdb` and
//! `pg_ctl` of the installed server, `fsync` on, as a database that keeps its promises):
//!
//! - steps per second of section 1's trajectory recorded in PostgreSQL against the filesystem
//!   store in fsync mode, in the same run, with what PostgreSQL's steps waited for: the
//!   server's WAL flushes and a bare round trip ([`crate::pg_costs`]);
//! - the lag of 100 watchers on a second store instance (another node: its own connections,
//!   woken by `NOTIFY`) while a writer records 10,000 events, from each commit's return to each
//!   watcher's receipt;
//! - runs per second through the queue: 1,000 runs created and queued as `agent serve` queues
//!   them, 16 at a time, executed by 4 in-process workers claiming with `FOR UPDATE SKIP
//!   LOCKED`; none may be lost or executed twice.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_api::QueuedSettings;
use agent_api::{FactoryError, RunnerFactory};
use agent_e2e::{AddTool, ListModel, answer};
use agent_execution::queue::{QueuedRun, RunKind};
use agent_execution::{NewMessage, NewTrace, TraceStatus, TraceStore, watch};
use agent_runner::{AgentRunner, RunnerOptions};
use agent_store_fs::{Durability, FileSystemTraceStore};
use agent_store_pg::{PgRunQueue, PgTraceStore};
use agent_test_support::postgres::Cluster;
use agent_tools::ToolRegistry;
use agent_worker::{Worker, WorkerConfig};
use anyhow::{Context, Result, bail, ensure};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::stats::{Sample, count, percentile, rate, ratio, seconds};
use crate::{check_completed, pg_costs};

/// The sizes of the section.
struct Sizes {
    steps: usize,
    watchers: usize,
    events: usize,
    runs: usize,
    workers: usize,
}

/// What the section measured.
pub(crate) struct Distributed {
    steps: usize,
    postgres: Sample,
    filesystem: Sample,
    /// Seconds per WAL flush of the server during each PostgreSQL steps run.
    flush: Sample,
    /// WAL flushes per step of each PostgreSQL steps run.
    flushes_per_step: Sample,
    /// Seconds per bare round trip to the server.
    round_trip: Sample,
    watchers: usize,
    events: usize,
    lag_p50: Sample,
    lag_p99: Sample,
    lost: usize,
    out_of_order: usize,
    runs: usize,
    workers: usize,
    runs_per_second: Sample,
}

impl Distributed {
    /// The checks that failed (events lost or out of order).
    pub(crate) fn failures(&self) -> Vec<String> {
        let mut failures = Vec::new();
        if self.lost > 0 || self.out_of_order > 0 {
            failures.push(format!(
                "watchers on a second PostgreSQL store lost {} events and got {} out of order",
                self.lost, self.out_of_order
            ));
        }
        failures
    }
}

/// Runs the section `repeats` times.
pub(crate) async fn measure(quick: bool, repeats: usize) -> Result<Distributed> {
    let sizes = if quick {
        Sizes {
            steps: 20,
            watchers: 10,
            events: 300,
            runs: 12,
            workers: 4,
        }
    } else {
        Sizes {
            steps: 200,
            watchers: 100,
            events: 10_000,
            runs: 1_000,
            workers: 4,
        }
    };
    let cluster = tokio::task::spawn_blocking(|| {
        Cluster::start_with(&["-c", "fsync=on", "-c", "track_wal_io_timing=on"])
    })
    .await?;
    let mut result = Distributed {
        steps: sizes.steps,
        postgres: Sample::default(),
        filesystem: Sample::default(),
        flush: Sample::default(),
        flushes_per_step: Sample::default(),
        round_trip: Sample::default(),
        watchers: sizes.watchers,
        events: sizes.events,
        lag_p50: Sample::default(),
        lag_p99: Sample::default(),
        lost: 0,
        out_of_order: 0,
        runs: sizes.runs,
        workers: sizes.workers,
        runs_per_second: Sample::default(),
    };
    for repeat in 0..repeats {
        let url = cluster.create_database(&format!("bench_{repeat}"));
        eprintln!(
            "agent-bench: PostgreSQL steps (run {} of {repeats})",
            repeat + 1
        );
        let store = Arc::new(PgTraceStore::connect(&url).await?);
        let probe = pg_costs::connect(&url).await?;
        result
            .round_trip
            .push(pg_costs::round_trip(&probe, 500).await?);
        let before = pg_costs::wal_flushes(&probe).await?;
        result
            .postgres
            .push(steps_per_second(store, sizes.steps).await?);
        let after = pg_costs::wal_flushes(&probe).await?;
        let flushes = (after.0 - before.0).max(1) as f64;
        result.flush.push((after.1 - before.1) / flushes);
        result
            .flushes_per_step
            .push(flushes / sizes.steps.max(1) as f64);
        let dir = tempfile::tempdir()?;
        let fs = FileSystemTraceStore::open(dir.path())?.with_durability(Durability::Fsync);
        result
            .filesystem
            .push(steps_per_second(Arc::new(fs), sizes.steps).await?);
        eprintln!(
            "agent-bench: PostgreSQL watchers (run {} of {repeats})",
            repeat + 1
        );
        let (p50, p99, lost, disorder) = lag(&url, sizes.watchers, sizes.events).await?;
        result.lag_p50.push(p50);
        result.lag_p99.push(p99);
        result.lost += lost;
        result.out_of_order += disorder;
        eprintln!(
            "agent-bench: PostgreSQL queue (run {} of {repeats})",
            repeat + 1
        );
        result
            .runs_per_second
            .push(queue(&url, sizes.runs, sizes.workers).await?);
    }
    Ok(result)
}

/// Section 1's trajectory on `store`: tool-call iterations per second.
async fn steps_per_second(store: Arc<dyn TraceStore>, steps: usize) -> Result<f64> {
    let workspace = tempfile::tempdir()?;
    let runner = crate::overhead::runner(store, steps, workspace.path());
    let started = Instant::now();
    let outcome = runner.run("overhead").await?;
    let elapsed = started.elapsed();
    check_completed(outcome.status)?;
    Ok(steps as f64 / elapsed.as_secs_f64().max(1e-9))
}

/// A writer on one store instance records `events` events (one message each) while `watchers`
/// watch the trace through another; returns the lag p50 and p99 in seconds, and how many events
/// were lost and out of order over all watchers.
async fn lag(url: &str, watchers: usize, events: usize) -> Result<(f64, f64, usize, usize)> {
    let writer = Arc::new(PgTraceStore::connect(url).await?);
    let node = Arc::new(PgTraceStore::connect(url).await?);
    let trace_id = writer.create_trace(NewTrace::agent("lag")).await?.trace_id;
    let committed: Arc<Mutex<HashMap<u64, Instant>>> = Arc::default();
    let mut tasks = Vec::new();
    for _ in 0..watchers {
        let mut feed = watch(node.clone(), &trace_id, 1);
        let committed = committed.clone();
        tasks.push(tokio::spawn(async move {
            let mut lags = Vec::with_capacity(events);
            let (mut next, mut disorder) = (2u64, 0usize);
            while lags.len() < events {
                let Ok(Some(Ok(event))) =
                    tokio::time::timeout(Duration::from_secs(60), feed.next()).await
                else {
                    break;
                };
                let arrived = Instant::now();
                if event.event_id != next {
                    disorder += 1;
                }
                next = event.event_id + 1;
                // The writer notes the time right after the commit returns; an event can
                // arrive before that note, which counts as no lag.
                let at = committed.lock().map(|c| c.get(&event.event_id).copied());
                let lag = match at {
                    Ok(Some(at)) => arrived.saturating_duration_since(at),
                    _ => Duration::ZERO,
                };
                lags.push(lag);
            }
            (lags, disorder)
        }));
    }
    // Let every watcher subscribe before the writer starts.
    tokio::time::sleep(Duration::from_millis(500)).await;
    for i in 0..events {
        let message = writer
            .add_message(&trace_id, NewMessage::user(format!("event {i}")))
            .await?;
        let event_id = message.sequence + 1;
        if let Ok(mut committed) = committed.lock() {
            committed.insert(event_id, Instant::now());
        }
    }
    let mut all = Vec::new();
    let (mut lost, mut disorder) = (0, 0);
    for task in tasks {
        let (lags, out_of_order) = task.await?;
        lost += events - lags.len();
        disorder += out_of_order;
        all.extend(lags);
    }
    all.sort();
    let p50 = percentile(&all, 0.50).as_secs_f64();
    let p99 = percentile(&all, 0.99).as_secs_f64();
    Ok((p50, p99, lost, disorder))
}

/// Runners for the queue's runs: a model that answers at once.
struct Factory {
    workspace: std::path::PathBuf,
    answers: usize,
}

impl RunnerFactory for Factory {
    fn options(&self) -> RunnerOptions {
        RunnerOptions::new("bench", &self.workspace)
    }

    fn build(
        &self,
        store: Arc<dyn TraceStore>,
        options: RunnerOptions,
    ) -> Result<AgentRunner, FactoryError> {
        let llm = Arc::new(ListModel::new(
            vec![answer("done"); self.answers],
            1_000_000_000,
            false,
        ));
        let mut tools = ToolRegistry::new();
        let _ = tools.register(Arc::new(AddTool));
        Ok(AgentRunner::new(store, llm, tools, options))
    }
}

/// `runs` runs queued as `agent serve` queues them and executed by `workers` workers: runs per
/// second from the first queued to the last completed.
async fn queue(url: &str, runs: usize, workers: usize) -> Result<f64> {
    let workspace = tempfile::tempdir()?;
    let store: Arc<dyn TraceStore> = Arc::new(PgTraceStore::connect(url).await?);
    let api_queue: Arc<dyn agent_api::RunQueue> = Arc::new(PgRunQueue::connect(url).await?);
    let factory: Arc<dyn RunnerFactory> = Arc::new(Factory {
        workspace: workspace.path().to_owned(),
        answers: 1,
    });
    let stop = CancellationToken::new();
    let mut running = Vec::new();
    for i in 0..workers {
        let mut config = WorkerConfig::new(format!("bench-{i}"));
        config.poll = Duration::from_millis(50);
        let worker = Worker::new(api_queue.clone(), store.clone(), factory.clone(), config);
        running.push(tokio::spawn(worker.run(stop.clone())));
    }
    let started = Instant::now();
    // Queued from several tasks at once, as concurrent clients of `agent serve` would.
    let queued: Vec<Result<String>> = futures::stream::iter(0..runs)
        .map(|i| {
            let (store, api_queue) = (store.clone(), api_queue.clone());
            async move {
                let task = format!("run {i}");
                let trace = store.create_trace(NewTrace::agent(&task)).await?;
                store
                    .add_message(&trace.trace_id, NewMessage::user(&task))
                    .await?;
                store.release_writer(&trace.trace_id).await?;
                api_queue
                    .enqueue(&QueuedRun {
                        trace_id: trace.trace_id.clone(),
                        kind: RunKind::Start,
                        settings: QueuedSettings::default().to_json(),
                    })
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                Ok(trace.trace_id)
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let ids = queued.into_iter().collect::<Result<Vec<_>>>()?;
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut messages = HashMap::new();
    for id in &ids {
        loop {
            let trace = store
                .get_trace(id)
                .await?
                .context("a queued trace vanished")?;
            if trace.status == TraceStatus::Completed {
                *messages.entry(trace.total_messages).or_insert(0) += 1;
                break;
            }
            if trace.status.is_finished() || Instant::now() > deadline {
                bail!("a queued run ended {:?}: {:?}", trace.status, trace.error);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    // A run executed twice records its answer twice: every trace must hold as many messages.
    ensure!(
        messages.len() == 1,
        "the queued runs' traces hold different numbers of messages (a run executed twice?): \
         {messages:?}"
    );
    let elapsed = started.elapsed();
    stop.cancel();
    for worker in running {
        worker.await?;
    }
    Ok(runs as f64 / elapsed.as_secs_f64().max(1e-9))
}

/// The summary rows of the section.
/// The section's targets: measure, target, this run's figure, met. PostgreSQL's iterations/s
/// within 2× of the filesystem store's in fsync mode; every queued run executed exactly once
/// (the run fails otherwise, so a figure here means it held).
pub(crate) fn targets(d: &Distributed) -> Vec<(String, &'static str, String, bool)> {
    let (pg, fs) = (d.postgres.median(), d.filesystem.median());
    vec![
        (
            format!(
                "PostgreSQL iterations/s at N = {}: filesystem (fsync) / PostgreSQL",
                d.steps
            ),
            "≤ 2×",
            format!("{} ({} / {})", ratio(fs / pg.max(1e-9)), rate(fs), rate(pg)),
            fs <= 2.0 * pg,
        ),
        (
            format!(
                "{} runs through the queue, {} workers: none lost or executed twice",
                count(d.runs as f64),
                d.workers
            ),
            "every run once",
            format!("{} runs/s", rate(d.runs_per_second.median())),
            true,
        ),
    ]
}

pub(crate) fn summary_rows(d: &Distributed) -> String {
    format!(
        "| 6. PostgreSQL | iterations/s, N = {}: PostgreSQL vs filesystem, fsync | {} | {} | {} |\n\
         | 6. PostgreSQL | {} watchers on a second node × {} events: lag p50 / p99 | {} / {} | — | lost {}, out of order {} |\n\
         | 6. PostgreSQL | runs/s through the queue, {} workers | {} | — | {} runs |\n",
        d.steps,
        rate(d.postgres.median()),
        rate(d.filesystem.median()),
        relative(d.postgres.median(), d.filesystem.median()),
        d.watchers,
        count(d.events as f64),
        millis(d.lag_p50.median()),
        millis(d.lag_p99.median()),
        d.lost,
        d.out_of_order,
        d.workers,
        rate(d.runs_per_second.median()),
        d.runs,
    )
}

/// The report's section.
pub(crate) fn section(d: &Distributed) -> String {
    format!(
        "\n## 6. PostgreSQL and workers\n\n\
         A throwaway PostgreSQL cluster on this machine (`initdb` and `pg_ctl` of the installed \
         server, `fsync` on), one database per run. Steps: section 1's trajectory (N = {steps}) \
         recorded in PostgreSQL (`PgTraceStore`: one transaction per commit) and, in the same \
         run, in the filesystem store in fsync mode. Lag: a writer on one store instance adds \
         {events} messages (one event each) while {watchers} watchers follow the trace through a \
         second instance, which hears of each commit by `NOTIFY` and reads `event_id > cursor`; \
         the lag runs from the commit's return to the watcher's receipt. Queue: {runs} runs are \
         created and queued as `agent serve` queues them, 16 at a time, and {workers} in-process \
         workers claim them (`FOR UPDATE SKIP LOCKED`, 30 s leases) and execute them with a model \
         that answers at once; runs/s counts from the first queued to the last completed. Every \
         run must complete, and every trace must hold the same number of messages (a run \
         executed twice would record its answer twice), or the benchmark fails.\n\n\
         | measure | median (min–max) |\n|---|---:|\n\
         | iterations/s, PostgreSQL | {pg} |\n\
         | iterations/s, filesystem, fsync | {fs} |\n\
         | WAL flush of the server, per flush (`pg_stat_wal`) | {flush} |\n\
         | WAL flushes per step | {flushes} |\n\
         | bare round trip (`SELECT 1`) | {trip} |\n\
         | lag p50, ms | {p50} |\n\
         | lag p99, ms | {p99} |\n\
         | runs/s through the queue | {rps} |\n\n\
         Lost events: {lost}; out of order: {disorder}.\n\n{costs}",
        steps = d.steps,
        events = count(d.events as f64),
        watchers = d.watchers,
        runs = d.runs,
        workers = d.workers,
        pg = d.postgres.show(rate),
        fs = d.filesystem.show(rate),
        flush = d.flush.show(seconds),
        flushes = d.flushes_per_step.show(|n| format!("{n:.2}")),
        trip = d.round_trip.show(seconds),
        costs = costs(d),
        p50 = d.lag_p50.show(|s| format!("{:.2}", s * 1e3)),
        p99 = d.lag_p99.show(|s| format!("{:.2}", s * 1e3)),
        rps = d.runs_per_second.show(rate),
        lost = d.lost,
        disorder = d.out_of_order,
    )
}

/// Where a PostgreSQL step's time goes, against the filesystem store's step.
fn costs(d: &Distributed) -> String {
    let (pg, fs) = (
        1.0 / d.postgres.median().max(1e-9),
        1.0 / d.filesystem.median().max(1e-9),
    );
    let flushing = d.flush.median() * d.flushes_per_step.median();
    let trips = 2.0 * d.round_trip.median();
    format!(
        "Where a step's time goes (medians). A step makes two commits. On PostgreSQL each is \
         one statement, which travels to the server and back, runs, and returns once the server \
         has flushed its WAL: a step took {pg}, of which {flushing} waiting for WAL flushes and \
         at least {trips} in two round trips (as long as two bare ones), leaving {rest} for \
         executing the statements, committing and the loop. In the filesystem store a step \
         took {fs}: two appends of the log, each with its `fdatasync`, and the loop. \
         PostgreSQL's flushes and bare round trips alone come to {share} the filesystem's \
         whole step, before a statement has run.\n",
        pg = seconds(pg),
        flushing = seconds(flushing),
        trips = seconds(trips),
        rest = seconds((pg - flushing - trips).max(0.0)),
        fs = seconds(fs),
        share = ratio((flushing + trips) / fs.max(1e-9)),
    )
}

fn millis(seconds: f64) -> String {
    format!("{:.2} ms", seconds * 1e3)
}

/// "1.5× slower" or "1.2× faster": ours (PostgreSQL) against the reference.
fn relative(ours: f64, reference: f64) -> String {
    if ours >= reference {
        format!("{} faster", ratio(ours / reference.max(1e-9)))
    } else {
        format!("{} slower", ratio(reference / ours.max(1e-9)))
    }
}
