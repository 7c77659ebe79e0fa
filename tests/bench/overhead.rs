//! Framework overhead: the trajectory of the LangGraph peer (a zero-latency model makes N tool
//! calls, one per turn, to a trivial tool — `add(a: i, b: 1)` — then answers) run by our runner on the in-memory
//! store and on the filesystem store in each durability mode. Each filesystem run is followed
//! by its raw baseline: the bytes the run appended to `events.jsonl`, appended again in the same
//! commits to one plain file with the same sync policy, which is the least any durable log of
//! this trajectory can cost.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_e2e::{AddTool, ListModel, answer, call};
use agent_execution::{InMemoryTraceStore, TraceStore};
use agent_runner::ContextBudget;
use agent_runner::context::{ContextInput, ContextMemo, build_context, build_context_with};
use agent_runner::context_incremental::IncrementalContext;
use agent_runner::{AgentRunner, CompactionStrategy, DEFAULT_SYSTEM_PROMPT, RunnerOptions};
use agent_store_fs::{Durability, FileSystemTraceStore};
use agent_tools::ToolRegistry;
use anyhow::Result;
use serde_json::json;

use crate::check_completed;
use crate::stats::Sample;

/// Where a run records its trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Store {
    /// `InMemoryTraceStore`: no persistence.
    Memory,
    /// `FileSystemTraceStore` in this durability mode.
    Fs(Durability),
}

impl Store {
    /// Every store measured, in report order.
    pub(crate) const ALL: [Store; 3] = [
        Store::Memory,
        Store::Fs(Durability::Buffered),
        Store::Fs(Durability::Fsync),
    ];

    /// Its name in the report.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Store::Memory => "in-memory",
            Store::Fs(Durability::Buffered) => "filesystem, buffered",
            Store::Fs(Durability::Fsync) => "filesystem, fsync",
        }
    }
}

/// One store at one N over several runs.
pub(crate) struct OverheadRow {
    /// The store.
    pub(crate) store: Store,
    /// Tool calls in the trajectory.
    pub(crate) n: usize,
    /// Wall time of each run, in seconds.
    pub(crate) seconds: Sample,
    /// Wall time of each run's raw baseline, in seconds (filesystem stores only).
    pub(crate) raw_seconds: Option<Sample>,
    /// Each run's time divided by its own baseline's.
    pub(crate) over_raw: Option<Sample>,
}

impl OverheadRow {
    /// Tool-call iterations per second, per run.
    pub(crate) fn iterations_per_second(&self) -> Sample {
        let n = self.n as f64;
        self.seconds.map(|s| n / s.max(1e-9))
    }
}

/// In-memory runs shorter than this many steps are repeated within each round, `SHORT_REPEATS / N`
/// times (rounded up), and the round's sample is their mean.
pub(crate) const SHORT_REPEATS: usize = 1_000;

/// Runs every store at every N, `runs` times, interleaved so that a slow moment of the machine
/// does not land on one row only.
pub(crate) async fn measure(ns: &[usize], runs: usize) -> Result<Vec<OverheadRow>> {
    let mut rows: Vec<OverheadRow> = Vec::new();
    for &n in ns {
        for store in Store::ALL {
            rows.push(OverheadRow {
                store,
                n,
                seconds: Sample::default(),
                raw_seconds: matches!(store, Store::Fs(_)).then(Sample::default),
                over_raw: matches!(store, Store::Fs(_)).then(Sample::default),
            });
        }
    }
    // Warm-up: the token estimator loads its tables and the allocator grows its arenas once per
    // process; neither belongs to the first measured run.
    in_memory(20).await?;
    for run in 0..runs {
        for row in &mut rows {
            eprintln!(
                "agent-bench: overhead {} N = {} (run {} of {runs})",
                row.store.name(),
                row.n,
                run + 1
            );
            let (ours, raw) = match row.store {
                Store::Memory => {
                    // A short run takes a few milliseconds, which one hiccup of a shared
                    // machine can double: the round's sample is the mean of several runs, so
                    // that it rests on about as much time as a run of N = 1,000.
                    let repeats = SHORT_REPEATS.div_ceil(row.n);
                    let mut total = Duration::ZERO;
                    for _ in 0..repeats {
                        total += in_memory(row.n).await?;
                    }
                    (total / repeats as u32, None)
                }
                Store::Fs(durability) => {
                    let (ours, raw) = filesystem(row.n, durability).await?;
                    (ours, Some(raw))
                }
            };
            row.seconds.push(ours.as_secs_f64());
            if let (Some(raw), Some(raw_seconds), Some(over_raw)) =
                (raw, row.raw_seconds.as_mut(), row.over_raw.as_mut())
            {
                raw_seconds.push(raw.as_secs_f64());
                over_raw.push(ours.as_secs_f64() / raw.as_secs_f64().max(1e-9));
            }
        }
    }
    Ok(rows)
}

fn script(steps: usize) -> Vec<agent_llm::ChatResponse> {
    let mut script: Vec<_> = (0..steps)
        .map(|i| call(i + 1, "add", json!({"a": i, "b": 1})))
        .collect();
    script.push(answer(&format!("done after {steps} tool calls")));
    script
}

/// The runner of the trajectory, recording into `store`.
pub(crate) fn runner(store: Arc<dyn TraceStore>, steps: usize, workspace: &Path) -> AgentRunner {
    let llm = Arc::new(ListModel::new(script(steps), 1_000_000_000, false));
    let mut tools = ToolRegistry::new();
    // The registry is new, so the name cannot clash.
    let _ = tools.register(Arc::new(AddTool));
    let mut options = RunnerOptions::new("bench", workspace)
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    options.limits.max_iterations = steps as u32 + 10;
    AgentRunner::new(store, llm, tools, options)
}

/// One run on the in-memory store; the time of `run` only (the runner is built before).
async fn in_memory(steps: usize) -> Result<Duration> {
    let workspace = tempfile::tempdir()?;
    let runner = runner(Arc::new(InMemoryTraceStore::new()), steps, workspace.path());
    let started = Instant::now();
    let outcome = runner.run("overhead").await?;
    let elapsed = started.elapsed();
    check_completed(outcome.status)?;
    Ok(elapsed)
}

/// One run on a new filesystem store, then its raw baseline; both times.
async fn filesystem(steps: usize, durability: Durability) -> Result<(Duration, Duration)> {
    let workspace = tempfile::tempdir()?;
    let dir = tempfile::tempdir()?;
    let store = Arc::new(FileSystemTraceStore::open(dir.path())?.with_durability(durability));
    let runner = runner(store.clone(), steps, workspace.path());
    let started = Instant::now();
    let outcome = runner.run("overhead").await?;
    let elapsed = started.elapsed();
    check_completed(outcome.status)?;
    // The store's flusher writes the message files the run left behind once the trace is
    // quiet: done before the baseline, so that its syncs do not share the disk with them.
    store.flush().await?;
    let log = std::fs::read(dir.path().join(&outcome.trace_id).join("events.jsonl"))?;
    let raw = raw_append(&commits(&log), durability, &dir.path().join("raw.log"))?;
    Ok((elapsed, raw))
}

/// What building one context costs at the end of a run: from scratch, with the memo of token
/// estimates, and as the loop does it, by extending the view of the step before.
pub(crate) struct ContextCost {
    /// Stored messages the context is built from.
    pub(crate) messages: usize,
    /// Seconds per build with a fresh memo: every message estimated, as each step did before
    /// the runner kept a memo.
    pub(crate) fresh: Sample,
    /// Seconds per build with a memo that knows every message, as each step did before the
    /// runner kept its view.
    pub(crate) memo: Sample,
    /// Seconds per build with the run's incremental context: the view of the step before
    /// extended with the messages of the last turn, as a step does now.
    pub(crate) incremental: Sample,
}

/// Builds the context of the N-step trajectory's finished trace, `runs` times each way.
pub(crate) async fn context_cost(n: usize, runs: usize) -> Result<ContextCost> {
    let store = Arc::new(InMemoryTraceStore::new());
    let workspace = tempfile::tempdir()?;
    let outcome = runner(store.clone(), n, workspace.path())
        .run("overhead")
        .await?;
    check_completed(outcome.status)?;
    let messages = store.get_trace_messages(&outcome.trace_id).await?;
    let tree = store
        .get_goal_tree(&outcome.trace_id)
        .await?
        .unwrap_or_default();
    let budget = ContextBudget::for_window(1_000_000_000);
    let input = ContextInput {
        system_prompt: DEFAULT_SYSTEM_PROMPT,
        tree: &tree,
        messages: &messages,
        budget: &budget,
        strategy: CompactionStrategy::default(),
        estimate: &agent_llm::estimate_tokens,
    };
    // The trace as the last step found it: without the last tool result and the answer.
    let input_before = ContextInput {
        messages: &messages[..messages.len().saturating_sub(2)],
        ..input
    };
    let mut memo = ContextMemo::new();
    let expected = build_context_with(&input, &mut memo);
    let mut cost = ContextCost {
        messages: messages.len(),
        fresh: Sample::default(),
        memo: Sample::default(),
        incremental: Sample::default(),
    };
    const BUILDS: u32 = 10;
    for _ in 0..runs {
        let started = Instant::now();
        for _ in 0..BUILDS {
            std::hint::black_box(build_context(&input));
        }
        cost.fresh.push((started.elapsed() / BUILDS).as_secs_f64());
        let started = Instant::now();
        for _ in 0..BUILDS {
            std::hint::black_box(build_context_with(&input, &mut memo));
        }
        cost.memo.push((started.elapsed() / BUILDS).as_secs_f64());
        // Each build starts from a context that has seen all but the last turn, untimed.
        let mut elapsed = Duration::ZERO;
        for _ in 0..BUILDS {
            let mut incremental = IncrementalContext::new();
            drop(incremental.build_shared(&input_before));
            let started = Instant::now();
            std::hint::black_box(incremental.build_shared(&input));
            elapsed += started.elapsed();
        }
        cost.incremental.push((elapsed / BUILDS).as_secs_f64());
    }
    anyhow::ensure!(
        build_context(&input) == expected,
        "the context built with a memo differs from the one built without"
    );
    let mut incremental = IncrementalContext::new();
    incremental.build_shared(&input_before);
    anyhow::ensure!(
        incremental.build(&input) == expected,
        "the context extended from the step before differs from the one built from scratch"
    );
    Ok(cost)
}

/// Seconds per small file written through a temporary file and a rename, as the filesystem
/// store writes its mirror files (`messages/<id>.json`, `meta.json`): `files` of them in a new
/// folder, without syncing.
pub(crate) fn small_file_cost(files: usize) -> Result<f64> {
    let dir = tempfile::tempdir()?;
    let bytes = vec![b'x'; 600];
    let started = Instant::now();
    for i in 0..files {
        let tmp = dir.path().join(format!("{i}.json.tmp"));
        std::fs::write(&tmp, &bytes)?;
        std::fs::rename(&tmp, dir.path().join(format!("{i}.json")))?;
    }
    Ok(started.elapsed().as_secs_f64() / files.max(1) as f64)
}

/// The commits of an `events.jsonl`: every event of a commit but the last carries
/// `"commit_continues":true`.
pub(crate) fn commits(log: &[u8]) -> Vec<&[u8]> {
    let mut commits = Vec::new();
    let mut start = 0;
    let mut end = 0;
    for line in log.split_inclusive(|&b| b == b'\n') {
        end += line.len();
        if !contains(line, b"\"commit_continues\":true") {
            commits.push(&log[start..end]);
            start = end;
        }
    }
    // A commit torn by a crash still counts as bytes written.
    if start < end {
        commits.push(&log[start..end]);
    }
    commits
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Appends each commit to a new plain file with one `write` (and, in fsync mode, one
/// `fdatasync`), and times it.
pub(crate) fn raw_append(
    commits: &[&[u8]],
    durability: Durability,
    path: &Path,
) -> Result<Duration> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let started = Instant::now();
    for commit in commits {
        file.write_all(commit)?;
        if durability == Durability::Fsync {
            file.sync_data()?;
        }
    }
    Ok(started.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_a_log_into_its_commits() {
        let log = b"{\"a\":1,\"commit_continues\":true}\n{\"b\":2}\n{\"c\":3}\n";
        let commits = commits(log);
        assert_eq!(commits.len(), 2);
        assert_eq!(
            commits[0],
            b"{\"a\":1,\"commit_continues\":true}\n{\"b\":2}\n"
        );
        assert_eq!(commits[1], b"{\"c\":3}\n");
        let torn: &[u8] = b"{\"a\":1,\"commit_continues\":true}\n";
        assert_eq!(super::commits(torn), vec![torn]);
    }
}
