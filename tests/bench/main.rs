//! The benchmark program behind `cargo xtask bench`: framework overhead of the runner against
//! the raw cost of appending the same bytes, the context economy of the compaction strategies
//! on one long scripted task, and the API under load (`api`) — all measured in the same run.
//!
//! Usage: `agent-bench [--quick] [--out FILE]`. The report is Markdown on stdout (and in FILE).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_e2e::{EmitTool, ListModel, NoopTool, answer, call, long_task};
use agent_execution::runner::{AgentRunner, CompactionStrategy, RunnerOptions};
use agent_execution::tools::ToolRegistry;
use agent_execution::{InMemoryTraceStore, TraceStatus, TraceStore};
use agent_store_fs::{Durability, FileSystemTraceStore};
use anyhow::{Context, Result, bail};
use serde_json::json;

mod api;

struct Args {
    quick: bool,
    out: Option<String>,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        quick: false,
        out: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => args.quick = true,
            "--out" => args.out = Some(it.next().context("--out needs a file")?),
            other => bail!("unknown argument {other:?}; usage: agent-bench [--quick] [--out FILE]"),
        }
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = parse_args()?;
    let steps = if args.quick { 200 } else { 1_000 };
    let mut report = String::new();
    writeln!(report, "# Benchmarks\n")?;
    writeln!(
        report,
        "Produced by `cargo xtask bench{}`; every row of a table is measured in the same run.\n",
        if args.quick { " --quick" } else { "" }
    )?;
    writeln!(report, "Machine: {}.\n", machine_line())?;

    writeln!(report, "## Framework overhead\n")?;
    writeln!(
        report,
        "A zero-latency model makes {steps} tool calls, one per turn (a no-op tool), then answers. Each step records an assistant message and a tool result (two commits). The raw baseline appends the same bytes as the trace's `events.jsonl`, in the same commits, to one plain file with the same sync policy.\n"
    )?;
    writeln!(
        report,
        "| store | steps/s | time | raw baseline | ours / raw |"
    )?;
    writeln!(report, "|---|---:|---:|---:|---:|")?;
    let memory = overhead_in_memory(steps).await?;
    writeln!(
        report,
        "| in-memory | {:.0} | {} | — | — |",
        steps as f64 / memory.as_secs_f64(),
        ms(memory)
    )?;
    for durability in [Durability::Buffered, Durability::Fsync] {
        let (ours, raw) = overhead_fs(steps, durability).await?;
        writeln!(
            report,
            "| filesystem, {durability:?} | {:.0} | {} | {} | {:.1}× |",
            steps as f64 / ours.as_secs_f64(),
            ms(ours),
            ms(raw),
            ours.as_secs_f64() / raw.as_secs_f64().max(1e-9)
        )?;
    }

    let (goals, calls) = if args.quick { (4, 8) } else { (10, 20) };
    writeln!(report, "\n## Context economy\n")?;
    writeln!(
        report,
        "One scripted task: {goals} goals × {calls} tool calls with ~2 KB outputs each, one goal abandoned halfway and redone. Prompt tokens are estimated (o200k) for every model call.\n"
    )?;
    writeln!(
        report,
        "| strategy | model calls | total prompt tokens | peak prompt tokens | total vs. keep-everything |"
    )?;
    writeln!(report, "|---|---:|---:|---:|---:|")?;
    let mut rows = Vec::new();
    for (name, strategy) in [
        ("goal compaction + prune", CompactionStrategy::GoalsAndPrune),
        ("prune only", CompactionStrategy::PruneOnly),
        ("keep everything", CompactionStrategy::Nothing),
    ] {
        rows.push((name, economy(goals, calls, strategy).await?));
    }
    let baseline: usize = rows.last().map(|(_, t)| t.iter().sum()).unwrap_or(1);
    for (name, tokens) in &rows {
        let total: usize = tokens.iter().sum();
        let peak = tokens.iter().copied().max().unwrap_or(0);
        writeln!(
            report,
            "| {name} | {} | {total} | {peak} | {:.2} |",
            tokens.len(),
            total as f64 / baseline.max(1) as f64
        )?;
    }

    report.push_str(&api::section(args.quick).await?);

    std::io::stdout().write_all(report.as_bytes())?;
    if let Some(out) = args.out {
        std::fs::write(&out, &report).with_context(|| format!("writing {out}"))?;
    }
    Ok(())
}

fn ms(duration: Duration) -> String {
    format!("{:.0} ms", duration.as_secs_f64() * 1000.0)
}

fn machine_line() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!(
        "{cores} cores, {cpu}, {} {}",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

fn overhead_script(steps: usize) -> Vec<agent_llm::ChatResponse> {
    let mut script: Vec<_> = (1..=steps).map(|i| call(i, "noop", json!({}))).collect();
    script.push(answer("done"));
    script
}

fn overhead_runner(store: Arc<dyn TraceStore>, steps: usize, workspace: &Path) -> AgentRunner {
    let llm = Arc::new(ListModel::new(overhead_script(steps), 1_000_000_000, false));
    let mut tools = ToolRegistry::new();
    // The registry is new, so the name cannot clash.
    let _ = tools.register(Arc::new(NoopTool));
    let mut options = RunnerOptions::new("bench", workspace);
    options.limits.max_iterations = steps as u32 + 10;
    AgentRunner::new(store, llm, tools, options)
}

async fn overhead_in_memory(steps: usize) -> Result<Duration> {
    let workspace = tempfile::tempdir()?;
    let runner = overhead_runner(Arc::new(InMemoryTraceStore::new()), steps, workspace.path());
    let started = Instant::now();
    let outcome = runner.run("overhead").await?;
    let elapsed = started.elapsed();
    check(outcome.status)?;
    Ok(elapsed)
}

async fn overhead_fs(steps: usize, durability: Durability) -> Result<(Duration, Duration)> {
    let workspace = tempfile::tempdir()?;
    let dir = tempfile::tempdir()?;
    let store = FileSystemTraceStore::open(dir.path())?.with_durability(durability);
    let runner = overhead_runner(Arc::new(store), steps, workspace.path());
    let started = Instant::now();
    let outcome = runner.run("overhead").await?;
    let elapsed = started.elapsed();
    check(outcome.status)?;
    let log = std::fs::read_to_string(dir.path().join(&outcome.trace_id).join("events.jsonl"))?;
    let raw = raw_append(&log, durability, dir.path())?;
    Ok((elapsed, raw))
}

/// Appends the log's commits to one plain file with the same sync policy, and times it.
fn raw_append(log: &str, durability: Durability, dir: &Path) -> Result<Duration> {
    let mut commits: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in log.lines() {
        current.push_str(line);
        current.push('\n');
        if !line.contains("\"commit_continues\":true") {
            commits.push(std::mem::take(&mut current));
        }
    }
    let path = dir.join("raw-baseline.log");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)?;
    let started = Instant::now();
    for commit in &commits {
        file.write_all(commit.as_bytes())?;
        if durability == Durability::Fsync {
            file.sync_data()?;
        }
    }
    Ok(started.elapsed())
}

async fn economy(goals: usize, calls: usize, strategy: CompactionStrategy) -> Result<Vec<usize>> {
    let workspace = tempfile::tempdir()?;
    let llm = Arc::new(ListModel::new(long_task(goals, calls), 1_000_000_000, true));
    let mut tools = ToolRegistry::new();
    let _ = tools.register(Arc::new(EmitTool { bytes: 2_000 }));
    let mut options = RunnerOptions::new("bench", workspace.path());
    options.strategy = strategy;
    options.limits.max_iterations = 10_000;
    let runner = AgentRunner::new(
        Arc::new(InMemoryTraceStore::new()),
        llm.clone(),
        tools,
        options,
    );
    let outcome = runner.run("A long task in many parts").await?;
    check(outcome.status)?;
    Ok(llm.prompt_tokens())
}

fn check(status: TraceStatus) -> Result<()> {
    if status != TraceStatus::Completed {
        bail!("the benchmark run ended {status:?} instead of completed");
    }
    Ok(())
}
