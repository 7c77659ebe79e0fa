//! The benchmark program behind `cargo xtask bench`, in four parts measured in one run:
//!
//! 1. framework overhead of the runner against LangGraph on the same trajectory, and against the
//!    raw cost of appending the same bytes (`overhead`, `peer`);
//! 2. the context economy of the compaction strategies on one long scripted task (`economy`);
//! 3. the filesystem store on a large trace against reading and writing the same bytes raw
//!    (`scale`);
//! 4. the live API under load (`api`);
//! 5. prompt caching (`cache`);
//! 6. PostgreSQL and workers: steps, watchers on a second node, runs through the queue
//!    (`distributed`);
//! 7. the command line from outside (`blackbox`);
//! 8. checkpoints: snapshot time and store size of a large workspace (`checkpoints`);
//! 9. the agent's own time per model call against a real model server's (`real_model`).
//!
//! Usage: `agent-bench [--quick] [--out FILE]`. The summary table goes to stdout; the whole
//! report (summary, method, details, machine line) to FILE, with its plots as SVG files next to
//! it (`bench-overhead.svg`, `bench-context.svg`). Without FILE the whole report goes to stdout
//! and no plot is written. `--quick` runs small sizes once, without the LangGraph peer, to check
//! that the suite works. A failed check (a lost event, a summary missing from the last request)
//! is written into the report and makes the program exit with an error.
//!
//! `--only PART` (overhead, scale, api, distributed or real_model) runs one part alone and prints its
//! figures without writing a report, optionally with `--runs R`, `--ns N,N,...` (overhead) and
//! `--messages M` (scale): for working on one figure without the whole run.

use std::io::Write as _;
use std::path::Path;

use agent_execution::TraceStatus;
use anyhow::{Context, Result, bail};

mod api;
mod blackbox;
mod build_size;
mod cache;
mod checkpoints;
mod distributed;
mod economy;
mod only;
mod overhead;
mod peer;
mod pg_costs;
mod real_model;
mod report;
mod scale;
mod stats;
mod svg;
mod targets;

/// The sizes and repeats of a run.
pub(crate) struct Plan {
    /// A quick smoke run.
    pub(crate) quick: bool,
    /// Runs per figure.
    pub(crate) runs: usize,
    /// Runs per figure of the parts whose runs take seconds and whose ratios move most with the
    /// disk's noise: our overhead runs, the store's scale, PostgreSQL and `agent run` from
    /// outside.
    pub(crate) short_runs: usize,
    /// Trajectory lengths of our overhead runs.
    pub(crate) ns: Vec<usize>,
    /// Steps of the black-box `agent run`s (the smallest first).
    pub(crate) blackbox_ns: Vec<usize>,
    /// Trajectory lengths run by both us and the peer.
    pub(crate) peer_ns: Vec<usize>,
    /// Goals and calls per goal of the long task.
    pub(crate) goals: usize,
    /// Calls per goal of the long task.
    pub(crate) calls: usize,
    /// Messages of the large trace.
    pub(crate) messages: usize,
    /// Goals of the large trace.
    pub(crate) message_goals: usize,
    /// Messages appended in fsync mode to the large trace.
    pub(crate) fsync_appends: usize,
    /// Files of the checkpointed workspace.
    pub(crate) checkpoint_files: usize,
}

impl Plan {
    fn new(quick: bool) -> Self {
        if quick {
            Self {
                quick,
                runs: 1,
                short_runs: 1,
                ns: vec![20, 50],
                blackbox_ns: vec![20, 50],
                peer_ns: Vec::new(),
                goals: 4,
                calls: 8,
                messages: 5_000,
                message_goals: 10,
                fsync_appends: 20,
                checkpoint_files: 1_000,
            }
        } else {
            Self {
                quick,
                runs: 3,
                short_runs: 5,
                ns: vec![100, 200, 500, 1_000, 2_000, 10_000],
                blackbox_ns: vec![200, 2_000],
                peer_ns: vec![200, 1_000],
                goals: 10,
                calls: 20,
                messages: 100_000,
                message_goals: 100,
                fsync_appends: 500,
                checkpoint_files: 10_000,
            }
        }
    }
}

const USAGE: &str = "usage: agent-bench [--quick] [--out FILE] [--only PART [--runs R] [--ns N,N,...] [--messages M]]";

struct Args {
    quick: bool,
    out: Option<String>,
    /// Run only this part (see `only.rs`).
    only: Option<String>,
    runs: Option<usize>,
    ns: Option<Vec<usize>>,
    messages: Option<usize>,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        quick: false,
        out: None,
        only: None,
        runs: None,
        ns: None,
        messages: None,
    };
    let mut it = std::env::args().skip(1);
    let number = |value: Option<String>, flag: &str| -> Result<usize> {
        value
            .and_then(|v| v.parse().ok())
            .with_context(|| format!("{flag} needs a number; {USAGE}"))
    };
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => args.quick = true,
            "--out" => args.out = Some(it.next().context("--out needs a file")?),
            "--only" => args.only = Some(it.next().context("--only needs a part")?),
            "--runs" => args.runs = Some(number(it.next(), "--runs")?),
            "--messages" => args.messages = Some(number(it.next(), "--messages")?),
            "--ns" => {
                let list = it.next().context("--ns needs a list")?;
                let ns = list
                    .split(',')
                    .map(|n| number(Some(n.to_owned()), "--ns"))
                    .collect::<Result<Vec<_>>>()?;
                args.ns = Some(ns);
            }
            other => bail!("unknown argument {other:?}; {USAGE}"),
        }
    }
    if args.only.is_none() && (args.runs.is_some() || args.ns.is_some() || args.messages.is_some())
    {
        bail!("--runs, --ns and --messages go with --only; {USAGE}");
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = parse_args()?;
    let mut plan = Plan::new(args.quick);
    if let Some(part) = &args.only {
        plan.runs = args.runs.unwrap_or(plan.runs);
        plan.ns = args.ns.clone().unwrap_or(plan.ns);
        plan.messages = args.messages.unwrap_or(plan.messages);
        let figures = only::run(part, &plan).await?;
        std::io::stdout().write_all(figures.as_bytes())?;
        return Ok(());
    }

    let load = load_average();
    let ours = overhead::measure(&plan.ns, plan.short_runs).await?;
    eprintln!("agent-bench: context building with and without the memo");
    let context_cost =
        overhead::context_cost(plan.ns.iter().copied().max().unwrap_or(1), plan.runs).await?;
    eprintln!("agent-bench: small files written through a rename");
    let mut small_file = stats::Sample::default();
    for _ in 0..plan.runs {
        small_file.push(overhead::small_file_cost(200)?);
    }
    let langgraph = if plan.quick {
        peer::Peer::Unavailable("not run in quick mode".into())
    } else {
        match peer::run(&plan.peer_ns, plan.runs)? {
            peer::Peer::Unavailable(why) => {
                bail!("the LangGraph peer must run in a full benchmark, but {why}")
            }
            ran => ran,
        }
    };
    let context = economy::measure(plan.goals, plan.calls).await?;
    let store = scale::measure(
        plan.messages,
        plan.message_goals,
        plan.fsync_appends,
        plan.short_runs,
    )
    .await?;
    let api = api::measure(plan.quick, plan.runs).await?;

    let results = report::Results {
        plan: &plan,
        machine: format!(
            "{}; load average {load} when the run started",
            machine_line()
        ),
        context_cost: &context_cost,
        small_file: &small_file,
        commit: git_commit(),
        overhead: &ours,
        peer: &langgraph,
        economy: &context,
        scale: &store,
        api: &api,
    };
    let caching = cache::measure(plan.goals, plan.calls).await?;
    let distributed = distributed::measure(plan.quick, plan.short_runs).await?;
    let blackbox = blackbox::measure(&plan.blackbox_ns, plan.short_runs)?;
    let checkpoints = checkpoints::measure(plan.checkpoint_files, plan.runs)?;
    let real = real_model::measure(plan.quick, plan.runs)?;
    let build = build_size::measure(!plan.quick)?;
    let (mut summary, mut failures) = report::summary(&results)?;
    summary.push_str(&cache::summary_rows(&caching));
    summary.push_str(&distributed::summary_rows(&distributed));
    summary.push_str(&checkpoints::summary_rows(&checkpoints));
    failures.extend(distributed.failures());
    summary.push_str(&real_model::summary_rows(&real));
    summary.push_str(&build_size::summary_rows(&build));
    summary.push_str(&targets::section(&results, &blackbox, &distributed));
    let sections = format!(
        "{}{}{}{}{}{}",
        cache::section(&caching),
        distributed::section(&distributed),
        targets::blackbox_section(&blackbox),
        checkpoints::section(&checkpoints),
        real_model::section(&real),
        build_size::section(&build)
    );
    let full = report::full(&results, &summary, &failures, &sections)?;
    match &args.out {
        Some(out) => {
            let out = Path::new(out);
            std::fs::write(out, &full).with_context(|| format!("writing {}", out.display()))?;
            let dir = out.parent().unwrap_or(Path::new("."));
            for (name, svg) in report::plots(&results) {
                let path = dir.join(name);
                std::fs::write(&path, svg)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            let mut stdout = std::io::stdout();
            writeln!(stdout, "{summary}")?;
            writeln!(stdout, "Report: {}", out.display())?;
        }
        None => std::io::stdout().write_all(full.as_bytes())?,
    }
    if !failures.is_empty() {
        bail!(
            "the benchmark's checks failed:\n- {}",
            failures.join("\n- ")
        );
    }
    Ok(())
}

/// Fails unless a benchmark run completed.
pub(crate) fn check_completed(status: TraceStatus) -> Result<()> {
    if status != TraceStatus::Completed {
        bail!("the benchmark run ended {status:?} instead of completed");
    }
    Ok(())
}

/// Cores, CPU model, memory, OS and architecture of this machine.
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
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| format!("{:.0} GiB memory, ", kb / 1024.0 / 1024.0))
        .unwrap_or_default();
    let build = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    format!(
        "{cores} cores, {cpu}, {memory}{} {}, {build} build",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

/// The 1, 5 and 15 minute load averages, as /proc/loadavg gives them.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

/// The short hash of the checked-out commit, when git can tell.
fn git_commit() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .filter(|s| !s.is_empty())
}
