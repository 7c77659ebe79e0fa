//! The report: one summary table, then each part with its method, its tables and what the
//! figures mean (including where we are slower than the peer or far from the raw limit, and
//! why), the machine line, and the two plots.

use std::fmt::Write as _;

use agent_store_fs::Durability;
use anyhow::Result;

use crate::Plan;
use crate::api::ApiResults;
use crate::economy::{EconomyRow, OUTPUT_BYTES};
use crate::overhead::{ContextCost, OverheadRow, Store};
use crate::peer::{Peer, PeerRun};
use crate::scale::ScaleRow;
use crate::stats::{Sample, count, rate, ratio, seconds};
use crate::svg::{Chart, Series};

/// Everything measured in one run.
pub(crate) struct Results<'a> {
    /// Sizes and repeats.
    pub(crate) plan: &'a Plan,
    /// The machine line.
    pub(crate) machine: String,
    /// The commit measured, when known.
    pub(crate) commit: Option<String>,
    /// Our overhead rows.
    pub(crate) overhead: &'a [OverheadRow],
    /// Context building with and without the memo.
    pub(crate) context_cost: &'a ContextCost,
    /// Seconds per small file written through a temporary file and a rename, per run.
    pub(crate) small_file: &'a Sample,
    /// The LangGraph peer.
    pub(crate) peer: &'a Peer,
    /// The context economy per strategy.
    pub(crate) economy: &'a [EconomyRow],
    /// The store at scale.
    pub(crate) scale: &'a [ScaleRow],
    /// The live API.
    pub(crate) api: &'a ApiResults,
}

impl Results<'_> {
    pub(crate) fn ours(&self, store: Store, n: usize) -> Option<&OverheadRow> {
        self.overhead.iter().find(|r| r.store == store && r.n == n)
    }

    fn largest_n(&self) -> usize {
        self.plan.ns.iter().copied().max().unwrap_or(0)
    }

    pub(crate) fn langgraph(&self) -> Option<&PeerRun> {
        match self.peer {
            Peer::Ran(run) => Some(run),
            Peer::Unavailable(_) => None,
        }
    }
}

/// The pairs compared with LangGraph: our store, its checkpointer, and what they share.
const PAIRS: [(Store, &str, &str); 2] = [
    (
        Store::Fs(Durability::Fsync),
        "sqlite",
        "durable: every step synced to disk (our fsync mode; SqliteSaver in WAL mode with synchronous=FULL)",
    ),
    (
        Store::Memory,
        "none",
        "no persistence (our in-memory store; LangGraph without a checkpointer)",
    ),
];

fn iterations(sample: &Sample, n: usize) -> Sample {
    let n = n as f64;
    sample.map(|s| n / s.max(1e-9))
}

/// The summary table, and the checks that failed.
pub(crate) fn summary(results: &Results<'_>) -> Result<(String, Vec<String>)> {
    let mut failures = Vec::new();
    let mut out = String::new();
    writeln!(
        out,
        "| part | measurement | ours | reference | ours against the reference |"
    )?;
    writeln!(out, "|---|---|---:|---:|---|")?;

    // 1. Overhead against LangGraph and the raw limit.
    match results.peer {
        Peer::Ran(run) => {
            for &n in &results.plan.peer_ns {
                for (store, checkpointer, _) in PAIRS {
                    let (Some(ours), Some(theirs)) =
                        (results.ours(store, n), run.best(checkpointer, n))
                    else {
                        continue;
                    };
                    let ours_rate = ours.iterations_per_second().median();
                    let theirs_rate = iterations(&theirs.seconds, n).median();
                    writeln!(
                        out,
                        "| 1. overhead | iterations/s, N = {}: {} vs LangGraph {} ({}) | {} | {} | {} |",
                        count(n as f64),
                        store.name(),
                        checkpointer_name(checkpointer),
                        theirs.variant,
                        rate(ours_rate),
                        rate(theirs_rate),
                        faster_or_slower(ours_rate / theirs_rate.max(1e-9)),
                    )?;
                }
            }
        }
        Peer::Unavailable(why) => {
            writeln!(out, "| 1. overhead | LangGraph | — | not run: {why} | — |")?;
        }
    }
    let n = results.largest_n();
    for store in [
        Store::Fs(Durability::Buffered),
        Store::Fs(Durability::Fsync),
    ] {
        let Some(row) = results.ours(store, n) else {
            continue;
        };
        let (Some(raw), Some(over)) = (&row.raw_seconds, &row.over_raw) else {
            continue;
        };
        writeln!(
            out,
            "| 1. overhead | time per step, N = {}, {} vs appending the same bytes raw | {} | {} | {} the raw time |",
            count(n as f64),
            store.name(),
            seconds(row.seconds.median() / n as f64),
            seconds(raw.median() / n as f64),
            ratio(over.median()),
        )?;
    }

    let cost = results.context_cost;
    writeln!(
        out,
        "| 1. overhead | building one step's context of {} messages: extending the run's view vs estimating every message again | {} | {} | {} the time |",
        count(cost.messages as f64),
        seconds(cost.incremental.median()),
        seconds(cost.fresh.median()),
        ratio(cost.incremental.median() / cost.fresh.median().max(1e-12)),
    )?;

    // 2. Context economy.
    if let [ours, others @ ..] = results.economy {
        for other in others {
            writeln!(
                out,
                "| 2. context | total prompt tokens, {} vs {} | {} | {} | {} the tokens |",
                short(ours.name),
                short(other.name),
                count(ours.total() as f64),
                count(other.total() as f64),
                ratio(ours.total() as f64 / other.total().max(1) as f64),
            )?;
            writeln!(
                out,
                "| 2. context | peak prompt tokens, {} vs {} | {} | {} | {} the tokens |",
                short(ours.name),
                short(other.name),
                count(ours.peak() as f64),
                count(other.peak() as f64),
                ratio(ours.peak() as f64 / other.peak().max(1) as f64),
            )?;
        }
    }
    for row in results.economy {
        let kept = row.finished - row.missing.len();
        writeln!(
            out,
            "| 2. context | finished goals whose summary is in the last request, {} | {kept} of {} | all | {} |",
            short(row.name),
            row.finished,
            if row.missing.is_empty() {
                "pass"
            } else {
                "**FAIL**"
            },
        )?;
        if !row.missing.is_empty() {
            failures.push(format!(
                "{}: the last request lacks the summaries {:?}",
                row.name, row.missing
            ));
        }
    }

    // 3. Store scale.
    for row in results.scale {
        writeln!(
            out,
            "| 3. store | {} | {} | {} | {} the raw time |",
            row.name,
            seconds(row.ours.median()),
            seconds(row.raw.median()),
            ratio(row.ratio.median()),
        )?;
    }

    // 4. Live API.
    for row in &results.api.get {
        writeln!(
            out,
            "| 4. API | `GET /api/traces/{{id}}` requests/s, {} store | {} | — | p99 latency {} |",
            row.name,
            count(row.per_second.median()),
            seconds(row.p99.median()),
        )?;
    }
    for row in &results.api.fan_out {
        writeln!(
            out,
            "| 4. API | WebSocket fan-out, {} × {} events ({}): lag p50 / p99 | {} / {} | — | lost {}, out of order {} |",
            row.watchers,
            count(row.events as f64),
            row.writer,
            seconds(row.p50.median()),
            seconds(row.p99.median()),
            row.lost,
            row.disorder,
        )?;
        if row.lost > 0 || row.disorder > 0 {
            failures.push(format!(
                "WebSocket fan-out ({}): {} events lost, {} out of order",
                row.writer, row.lost, row.disorder
            ));
        }
    }
    Ok((out, failures))
}

/// The whole report.
/// `more` holds sections measured outside `results` (prompt caching); they go before
/// "Running it".
pub(crate) fn full(
    results: &Results<'_>,
    summary: &str,
    failures: &[String],
    more: &str,
) -> Result<String> {
    let plan = results.plan;
    let mut out = String::new();
    writeln!(out, "# Benchmarks\n")?;
    writeln!(
        out,
        "Generated by `cargo xtask bench{}`{}. Every figure is the median of {} with the smallest and largest run in parentheses; every comparison is a ratio of two figures measured in the same run of the command. Machine: {}. The machine may be shared with other work while the suite runs (the load average says how busy it was): the min–max ranges show how much that moved a figure, and ratios of figures measured side by side move less.\n",
        if plan.quick { " --quick" } else { "" },
        results
            .commit
            .as_deref()
            .map(|c| format!(" at commit `{c}`"))
            .unwrap_or_default(),
        if plan.runs == 1 {
            "1 run (quick mode: this only checks that the suite works; its figures mean little)"
                .to_owned()
        } else {
            format!(
                "{} runs ({} for our overhead runs, the store's scale, PostgreSQL and `agent run` \
                 from outside)",
                plan.runs, plan.short_runs
            )
        },
        results.machine
    )?;
    if !failures.is_empty() {
        writeln!(out, "**Failed checks:**\n")?;
        for failure in failures {
            writeln!(out, "- {failure}")?;
        }
        writeln!(out)?;
    }
    writeln!(out, "## Summary\n")?;
    out.push_str(summary);
    out.push_str(&overhead_section(results)?);
    out.push_str(&economy_section(results)?);
    out.push_str(&scale_section(results)?);
    out.push_str(&crate::api::section(results.api)?);
    out.push_str(more);
    writeln!(out, "\n## Running it\n")?;
    writeln!(
        out,
        "`cargo xtask bench` builds the program in release mode, creates the LangGraph virtualenv under `target/langgraph-venv` from the pinned `tests/bench/langgraph-requirements.txt` (once; again when the file changes), and runs `tests/bench/main.rs` (crate `agent-e2e`, binary `agent-bench`), which writes this file and the plots. `cargo xtask bench --quick` runs small sizes once without LangGraph; `cargo xtask ci` runs that in a debug build to check the suite still works. The peer script is `tests/bench/langgraph_peer.py` (or `AGENT_BENCH_PEER`) and run with the virtualenv's interpreter (or `AGENT_BENCH_PYTHON`); a full run fails when it cannot run."
    )?;
    Ok(out)
}

fn overhead_section(results: &Results<'_>) -> Result<String> {
    let plan = results.plan;
    let short = count(crate::overhead::SHORT_REPEATS as f64);
    let mut out = String::new();
    writeln!(
        out,
        "\n## 1. Framework overhead against LangGraph and the raw limit\n"
    )?;
    writeln!(
        out,
        "The trajectory of the peer script: a model that answers at once emits N tool calls, one per turn, then a final answer; a trivial tool answers each call. An iteration is one model turn that asked for a tool plus the tool's execution, so iterations/s = N / wall time of the run. Ours: `AgentRunner::run` with a zero-latency scripted model and the same trivial tool (`add(a: i, b: 1)`), on the in-memory store and on the filesystem store in each durability mode (buffered: no syncs, survives a process crash; fsync: one `fdatasync` per commit, survives power loss); the runner is built before the clock starts, the trace is created after. An in-memory run of N < {short} steps lasts a few milliseconds, so each round's in-memory sample at such an N is the mean of ⌈{short} / N⌉ runs made one after another; every other row, and LangGraph, is one run per round. Every step builds the context, calls the model, records the assistant message (one commit), runs the tool and records its result (one commit). LangGraph: the peer script `tests/bench/langgraph_peer.py`, which times `graph.invoke()` of `create_react_agent` (prebuilt) and of a hand-written `StateGraph` with `ToolNode` (handgraph) with `GenericFakeChatModel`, for each checkpointer; the comparison uses the faster of the two variants.\n"
    )?;
    writeln!(
        out,
        "![iterations per second against N](bench-overhead.svg)\n\n![time per step against N, every store](bench-steps.svg)\n"
    )?;
    writeln!(out, "Iterations per second:\n")?;
    let mut header = String::from("| N |");
    let mut rule = String::from("|---:|");
    for store in Store::ALL {
        write!(header, " ours, {} |", store.name())?;
        rule.push_str("---:|");
    }
    let langgraph = results.langgraph();
    if langgraph.is_some() {
        for checkpointer in ["none", "memory", "sqlite"] {
            write!(header, " LangGraph, {} |", checkpointer_name(checkpointer))?;
            rule.push_str("---:|");
        }
    }
    writeln!(out, "{header}\n{rule}")?;
    let mut ns = plan.ns.clone();
    ns.extend(plan.peer_ns.iter().copied());
    ns.sort_unstable();
    ns.dedup();
    for &n in &ns {
        let mut line = format!("| {} |", count(n as f64));
        for store in Store::ALL {
            let cell = results
                .ours(store, n)
                .map_or("—".to_owned(), |r| r.iterations_per_second().show(rate));
            write!(line, " {cell} |")?;
        }
        if let Some(run) = langgraph {
            for checkpointer in ["none", "memory", "sqlite"] {
                let cell = run.best(checkpointer, n).map_or("—".to_owned(), |r| {
                    format!("{} ({})", iterations(&r.seconds, n).show(rate), r.variant)
                });
                write!(line, " {cell} |")?;
            }
        }
        writeln!(out, "{line}")?;
    }

    match results.peer {
        Peer::Ran(run) => {
            writeln!(
                out,
                "\nOurs against LangGraph (iterations/s, ours over theirs):\n"
            )?;
            writeln!(out, "| pair | N | ours | LangGraph | ours / LangGraph |")?;
            writeln!(out, "|---|---:|---:|---:|---:|")?;
            for (store, checkpointer, what) in PAIRS {
                for &n in &plan.peer_ns {
                    let (Some(ours), Some(theirs)) =
                        (results.ours(store, n), run.best(checkpointer, n))
                    else {
                        continue;
                    };
                    let ours_rate = ours.iterations_per_second().median();
                    let theirs_rate = iterations(&theirs.seconds, n).median();
                    writeln!(
                        out,
                        "| {what} | {} | {} | {} | {} |",
                        count(n as f64),
                        rate(ours_rate),
                        rate(theirs_rate),
                        ratio(ours_rate / theirs_rate.max(1e-9))
                    )?;
                }
            }
            writeln!(
                out,
                "\nEvery row of the peer (`{}`; wall time of `graph.invoke()`):\n",
                run.header
            )?;
            writeln!(out, "| variant | checkpointer | N | iterations/s | time |")?;
            writeln!(out, "|---|---|---:|---:|---:|")?;
            for row in &run.rows {
                writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    row.variant,
                    checkpointer_name(&row.checkpointer),
                    count(row.n as f64),
                    iterations(&row.seconds, row.n).show(rate),
                    row.seconds.show(seconds)
                )?;
            }
        }
        Peer::Unavailable(why) => {
            writeln!(out, "\nLangGraph was not run: {why}.")?;
        }
    }

    writeln!(
        out,
        "\nOur time per step against the raw limit: the raw baseline appends the bytes the run wrote to the trace's `events.jsonl`, in the same commits, to one plain file with one `write` per commit (and one `fdatasync` per commit in fsync mode). It is the least any durable record of this trajectory costs. The loop share is the in-memory store's time per step (no I/O at all); the rest of the filesystem store's time is the store's.\n"
    )?;
    writeln!(
        out,
        "| store | N | time per step | raw baseline per step | ours / raw | loop share (in-memory) |"
    )?;
    writeln!(out, "|---|---:|---:|---:|---:|---:|")?;
    for &n in &plan.ns {
        let memory = results.ours(Store::Memory, n);
        for store in [
            Store::Fs(Durability::Buffered),
            Store::Fs(Durability::Fsync),
        ] {
            let Some(row) = results.ours(store, n) else {
                continue;
            };
            let (Some(raw), Some(over)) = (&row.raw_seconds, &row.over_raw) else {
                continue;
            };
            let per = |s: &Sample| s.map(|v| v / n as f64);
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                store.name(),
                count(n as f64),
                per(&row.seconds).show(seconds),
                per(raw).show(seconds),
                over.show(ratio),
                memory.map_or("—".to_owned(), |m| per(&m.seconds).show(seconds)),
            )?;
        }
    }
    let cost = results.context_cost;
    writeln!(
        out,
        "\nBuilding the context was the loop's main cost, when a step built it from every kept message. First the runner kept a memo of each stored message's token estimate across the steps of a run (`ContextMemo`, passed to `build_context_with`), so a step estimated only the messages recorded since the previous one; now it keeps the view itself (`IncrementalContext`), extends it with the new messages and shares it with the request instead of copying it, so a step's context costs about the same at any length. The view is the same every way (property-tested after every step of random histories, and checked here). One context of the N = {} trace ({} messages), built in this run from scratch without and with the memo, and as the last step of the run built it, from the view of the step before:\n",
        count(results.largest_n() as f64),
        count(cost.messages as f64),
    )?;
    writeln!(out, "| build | time per context | vs. without memo |")?;
    writeln!(out, "|---|---:|---:|")?;
    writeln!(
        out,
        "| without memo: every message estimated | {} | 1× |",
        cost.fresh.show(seconds)
    )?;
    writeln!(
        out,
        "| with the run's memo | {} | {} |",
        cost.memo.show(seconds),
        ratio(cost.memo.median() / cost.fresh.median().max(1e-12))
    )?;
    writeln!(
        out,
        "| extending the view of the step before | {} | {} |",
        cost.incremental.show(seconds),
        ratio(cost.incremental.median() / cost.fresh.median().max(1e-12))
    )?;
    writeln!(
        out,
        "\nEnd to end, when the memo was introduced (the commit that added `ContextMemo`), the bench program built without and with it, run alternately on this machine (10 runs each, under a load average of 6 to 8 from other work), gave medians of {} → {} iterations/s on the in-memory store at N = 1,000 ({}), {} → {} at N = 200 ({}), and {} → {} on the buffered filesystem store at N = 1,000 ({}), whose store work the memo does not touch.",
        count(172.0),
        count(494.0),
        ratio(494.0 / 172.0),
        count(2_232.0),
        count(6_527.0),
        ratio(6_527.0 / 2_232.0),
        count(143.0),
        count(219.0),
        ratio(219.0 / 143.0),
    )?;
    out.push_str(&overhead_findings(results)?);
    Ok(out)
}

/// What the overhead figures mean, with the numbers of this run.
fn overhead_findings(results: &Results<'_>) -> Result<String> {
    let mut out = String::new();
    let n = results.largest_n();
    let small = results.plan.ns.iter().copied().min().unwrap_or(0);
    let per_step = |store: Store| {
        results
            .ours(store, n)
            .map_or(0.0, |r| r.seconds.median() / n.max(1) as f64)
    };
    let raw = |store: Store| {
        results
            .ours(store, n)
            .and_then(|r| r.raw_seconds.as_ref())
            .map_or(0.0, |s| s.median() / n.max(1) as f64)
    };
    let over_raw = |store: Store| {
        results
            .ours(store, n)
            .and_then(|r| r.over_raw.as_ref())
            .map_or(0.0, Sample::median)
    };
    let memory_rate = |n: usize| {
        results
            .ours(Store::Memory, n)
            .map_or(0.0, |r| r.iterations_per_second().median())
    };
    let buffered = Store::Fs(Durability::Buffered);
    let fsync = Store::Fs(Durability::Fsync);
    writeln!(out, "\nWhat this shows:\n")?;
    if let Some(run) = results.langgraph() {
        let mut ratios = Vec::new();
        for (store, checkpointer, _) in PAIRS {
            for &pn in &results.plan.peer_ns {
                let (Some(ours), Some(theirs)) =
                    (results.ours(store, pn), run.best(checkpointer, pn))
                else {
                    continue;
                };
                let r = ours.iterations_per_second().median()
                    / iterations(&theirs.seconds, pn).median().max(1e-9);
                ratios.push(r);
                if r < 1.0 {
                    writeln!(
                        out,
                        "- **LangGraph is faster** with {} at N = {} (we reach {} of its speed): our steps do work its loop does not do here: each estimates the tokens of the new messages and rebuilds the context with goal compaction and prune, and each commit records the message as its own record with statistics and events.",
                        checkpointer_name(checkpointer),
                        count(pn as f64),
                        ratio(r)
                    )?;
                }
            }
        }
        let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios.iter().copied().fold(0.0_f64, f64::max);
        let lg = |checkpointer: &str, n: usize| {
            run.best(checkpointer, n)
                .map_or(0.0, |r| iterations(&r.seconds, n).median())
        };
        let (first, last) = (
            results.plan.peer_ns.first().copied().unwrap_or(0),
            results.plan.peer_ns.last().copied().unwrap_or(0),
        );
        if lo >= 1.0 && !ratios.is_empty() {
            writeln!(
                out,
                "- **Against LangGraph** we are {} to {} faster in every pair measured, durable or not. Its time per iteration grows with N, and faster with a checkpointer: a checkpoint stores the channel values, so the whole message list is serialised again at every superstep (SqliteSaver goes from {} iterations/s at N = {} to {} at N = {}; without a checkpointer, {} to {}).",
                ratio(lo),
                ratio(hi),
                rate(lg("sqlite", first)),
                count(first as f64),
                rate(lg("sqlite", last)),
                count(last as f64),
                rate(lg("none", first)),
                rate(lg("none", last)),
            )?;
        }
    }
    // Slower only when the rate falls by more than a tenth: the in-memory rates of one run
    // spread by about that much.
    let (heading, verb, rest) = if memory_rate(n) < 0.9 * memory_rate(small) {
        (
            "Our steps also get slower as the trace grows",
            "fall",
            "; the memo above removed the larger part of it (estimating tokens), what is left is copying and walking.",
        )
    } else {
        (
            "Our steps do not get measurably slower as the trace grows",
            "go",
            ", but at these sizes that walk is lost beside the rest of a step: the memo above removed the larger part of it (estimating tokens), and what is left is copying references and walking.",
        )
    };
    writeln!(
        out,
        "- **{heading}**: on the in-memory store, iterations/s {verb} from {} at N = {} to {} at N = {}. A step still walks every kept message: it turns each into the request (a copy of the conversation, which a provider needs in full anyway) and checks it for goal compaction and prune, and the runner reads the ids of every earlier call to keep call ids unique. That is O(messages) per step and O(N²) per run{rest}",
        rate(memory_rate(small)),
        count(small as f64),
        rate(memory_rate(n)),
        count(n as f64),
    )?;
    writeln!(
        out,
        "- **Without fsync.** At N = {}, a buffered step costs {} against {} for appending its bytes raw ({} the raw time, median of the runs' ratios). The loop itself (in-memory store, no I/O) takes {} of it, the store {}. A commit costs its log append (the baseline's share) and the bookkeeping around it; the mirror files are not written on the step's path: a commit notes which message files fell behind and the store's flusher thread writes them in batches (`meta.json` / `goal.json` are written at most every 250 ms unless a commit changed more than statistics). On this machine's disk one small file written through a temporary file and a rename costs {} (measured in this run, 200 files per run); the flusher pays it for every message, outside the step. The in-memory row is the bound without any I/O.",
        count(n as f64),
        seconds(per_step(buffered)),
        seconds(raw(buffered)),
        ratio(over_raw(buffered)),
        seconds(per_step(Store::Memory)),
        seconds((per_step(buffered) - per_step(Store::Memory)).max(0.0)),
        results.small_file.show(seconds),
    )?;
    let ours_sync = (per_step(fsync) - per_step(buffered)).max(0.0);
    let raw_sync = (raw(fsync) - raw(buffered)).max(0.0);
    writeln!(
        out,
        "- **Close to the limit with fsync.** A step makes two commits, so two `fdatasync` calls, and they dominate: {} per step against {} for the raw appends with the same syncs ({} the raw time, median of the runs' ratios). A ratio below 1× in the table is noise of the disk: both sides make one `fdatasync` per commit, and how long one takes varies from call to call. Syncing adds {} to our step (fsync against buffered) and {} to the raw appends ({} as much): the raw appends sync back to back, while each of our syncs waits between steps of work, and on this machine a sync that follows a pause takes longer than one that follows another sync, and the code that runs after a wait for the disk runs slower than the same code in the buffered run.",
        seconds(per_step(fsync)),
        seconds(raw(fsync)),
        ratio(over_raw(fsync)),
        seconds(ours_sync),
        seconds(raw_sync),
        ratio(ours_sync / raw_sync.max(1e-12)),
    )?;
    Ok(out)
}

fn economy_section(results: &Results<'_>) -> Result<String> {
    let plan = results.plan;
    let mut out = String::new();
    writeln!(out, "\n## 2. Context economy\n")?;
    writeln!(
        out,
        "One scripted task (`agent_e2e::long_task`): a plan of {} goals, each worked through with {} tool calls returning ~{} KB of distinct text, then finished with a summary; goal 3 is abandoned halfway and redone at the end; halfway through goal {} the model explores two branches, each making {} tool calls of its own. The same task runs once per strategy (the model is scripted and the token estimate is deterministic, so every run gives the same counts): **goal compaction + prune** (ours, the full pipeline of SPEC §6: finished goals' messages replaced by their summaries, then prune), **prune only** (OpenCode's method: old tool outputs beyond the newest 40,000 tokens replaced by a marker), and **no compaction**. Prompt tokens are the o200k estimate of each request the model receives (messages and tool specs), for every main-line call; branch calls are counted apart. The context window is set large enough that full compaction never triggers, so the strategies differ only in the steps above.\n",
        plan.goals,
        plan.calls,
        OUTPUT_BYTES / 1_000,
        explored_goal(plan.goals),
        (plan.calls / 4).clamp(1, 5),
    )?;
    writeln!(out, "![prompt tokens per model call](bench-context.svg)\n")?;
    writeln!(
        out,
        "| strategy | model calls | total prompt tokens | peak prompt tokens | total vs. no compaction | branch calls: prompt tokens | summaries in the last request |"
    )?;
    writeln!(out, "|---|---:|---:|---:|---:|---:|---:|")?;
    let baseline = results.economy.last().map_or(1, |r| r.total().max(1));
    for row in results.economy {
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} calls: {} | {} of {} |",
            row.name,
            row.main.len(),
            count(row.total() as f64),
            count(row.peak() as f64),
            ratio(row.total() as f64 / baseline as f64),
            row.branches.iter().map(Vec::len).sum::<usize>(),
            count(row.branch_total() as f64),
            row.finished - row.missing.len(),
            row.finished
        )?;
    }
    if let [ours, prune, nothing] = results.economy {
        writeln!(
            out,
            "\nGoal compaction keeps the prompt bounded by the current goal's work: it peaks at {} tokens where prune only reaches {} and no compaction {}, and the whole task costs {} of the tokens of prune only and {} of no compaction. Prune only is a sawtooth: outputs pile up until 20,000 prunable tokens sit beyond the protected 40,000, then drop to a marker. The retention check reads the last request (system prompt with the plan, and every message) and looks for the summary of every goal of the plan that finished (completed or abandoned); a missing one fails the benchmark.",
            count(ours.peak() as f64),
            count(prune.peak() as f64),
            count(nothing.peak() as f64),
            ratio(ours.total() as f64 / prune.total().max(1) as f64),
            ratio(ours.total() as f64 / nothing.total().max(1) as f64),
        )?;
    }
    Ok(out)
}

/// The goal the long task explores in (mirrors `long_task`).
fn explored_goal(goals: usize) -> usize {
    match (goals / 2).max(1) {
        3 => 4,
        g => g,
    }
}

fn scale_section(results: &Results<'_>) -> Result<String> {
    let plan = results.plan;
    let mut out = String::new();
    writeln!(out, "\n## 3. Store scale\n")?;
    writeln!(
        out,
        "A trace of {} messages (~230 bytes of text each) over {} goals on the filesystem store, built by appending one message per commit (as the runner records them) in buffered mode; then read back. Every run builds a new trace in a new folder. Each operation is timed next to a raw baseline over the same bytes, measured right after it; reads hit the page cache, as they would for a trace that was just written.\n",
        count(plan.messages as f64),
        plan.message_goals
    )?;
    writeln!(
        out,
        "| operation | ours | per item | raw baseline | raw | ours / raw |"
    )?;
    writeln!(out, "|---|---:|---:|---|---:|---:|")?;
    for row in results.scale {
        let items = row.items.max(1) as f64;
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            row.name,
            row.ours.show(seconds),
            seconds(row.ours.median() / items),
            row.raw_name,
            row.raw.show(seconds),
            row.ratio.show(ratio)
        )?;
    }
    writeln!(
        out,
        "\nWhere the store is far from the raw figure, the difference is work the raw baseline skips: an append writes the event line (the baseline's share) after the shared code has planned the commit (the new statistics of the trace and of the goals the message touches), and leaves the message's own file to the store's flusher thread; a cold open reads the index checkpoint (`events.index`) the writer saved and replays only the commits after it, where the baseline reads the whole log; reading messages reads their event lines (nearby lines with one read) and parses each message's JSON, where the baseline reads a file holding exactly those bytes. Parsed messages are kept and shared: the shared reads (`get_trace_messages_shared`, `get_messages_by_goal_shared`, which the runner at the start of a run, the API's messages route, ACP's `session/load`, `agent show` and the OpenTelemetry export use) hand out the kept messages themselves, so the goal read that follows the read of all messages neither parses nor copies them. The runner only appends to the messages it read, so it holds them shared (`Arc<Message>`) rather than as copies of its own. The reads that return copies of the caller's own (`get_trace_messages`, `get_messages_by_goal`, for a caller that changes or writes what it reads, as `agent import` does) are timed on a new store instance, with no target: the read of all messages parses them and copies each one, and the goal read that follows copies its messages out of the kept ones. A copy is bound by fresh memory more than by work: the vector of 100,000 copied messages alone is 35 MB (352 bytes a message, before their strings), and touching 35 MB of new memory for the first time takes about 18 ms on this machine, more than half the raw read; a shared read hands out 8-byte references. Listing reads only `meta.json` files, so it does not grow with the number of messages. The fsync append and its baseline both make one `fdatasync` per commit; a ratio below 1× there is noise of the disk."
    )?;
    Ok(out)
}

/// The plots: file name and SVG text.
pub(crate) fn plots(results: &Results<'_>) -> Vec<(&'static str, String)> {
    const COLORS: [&str; 3] = ["#1f77b4", "#2ca02c", "#d62728"];
    // One line per store of our overhead rows, each row's figure given by `figure`.
    let stores = |figure: &dyn Fn(&OverheadRow) -> Sample| -> Vec<Series> {
        Store::ALL
            .into_iter()
            .zip(COLORS)
            .map(|(store, color)| Series {
                name: format!("ours, {}", store.name()),
                color,
                dashed: false,
                markers: true,
                points: results
                    .plan
                    .ns
                    .iter()
                    .filter_map(|&n| results.ours(store, n))
                    .map(|row| {
                        let s = figure(row);
                        (row.n as f64, s.median(), Some((s.min(), s.max())))
                    })
                    .collect(),
            })
            .collect()
    };
    let mut series = stores(&OverheadRow::iterations_per_second);
    if let Some(run) = results.langgraph() {
        for (checkpointer, color) in ["none", "memory", "sqlite"]
            .into_iter()
            .zip(["#1f77b4", "#9467bd", "#d62728"])
        {
            series.push(Series {
                name: format!("LangGraph, {}", checkpointer_name(checkpointer)),
                color,
                dashed: true,
                markers: true,
                points: results
                    .plan
                    .peer_ns
                    .iter()
                    .filter_map(|&n| run.best(checkpointer, n).map(|r| (n, r)))
                    .map(|(n, r)| {
                        let s = iterations(&r.seconds, n);
                        (n as f64, s.median(), Some((s.min(), s.max())))
                    })
                    .collect(),
            });
        }
    }
    let steps = Chart {
        title: "Time per step against N, every store (log scale)".into(),
        x_label: "N (tool calls in the trajectory)".into(),
        y_label: "ms per step".into(),
        log_y: true,
        series: stores(&|row| row.seconds.map(|s| s * 1e3 / row.n as f64)),
    };
    let overhead = Chart {
        title: "Framework overhead: iterations per second against N (log scale)".into(),
        x_label: "N (tool calls in the trajectory)".into(),
        y_label: "iterations / s".into(),
        log_y: true,
        series,
    };
    let context = Chart {
        title: "Context economy: prompt tokens of each model call of the long task".into(),
        x_label: "model call (main line)".into(),
        y_label: "prompt tokens (o200k estimate)".into(),
        log_y: false,
        series: results
            .economy
            .iter()
            .zip(COLORS)
            .enumerate()
            .map(|(i, (row, color))| Series {
                name: short(row.name).to_owned(),
                color,
                // Dashed, so a line it covers (the strategies agree until prune starts) shows.
                dashed: i > 0,
                markers: false,
                points: row
                    .main
                    .iter()
                    .enumerate()
                    .map(|(i, t)| ((i + 1) as f64, *t as f64, None))
                    .collect(),
            })
            .collect(),
    };
    vec![
        ("bench-overhead.svg", overhead.render()),
        ("bench-steps.svg", steps.render()),
        ("bench-context.svg", context.render()),
    ]
}

fn checkpointer_name(checkpointer: &str) -> &str {
    match checkpointer {
        "none" => "no checkpointer",
        "memory" => "InMemorySaver",
        "sqlite" => "SqliteSaver",
        other => other,
    }
}

/// A strategy's name without its parenthesis.
fn short(name: &str) -> &str {
    name.split(" (").next().unwrap_or(name)
}

fn faster_or_slower(ratio_value: f64) -> String {
    if ratio_value >= 1.0 {
        format!("{} faster", ratio(ratio_value))
    } else {
        format!("**{} slower**", ratio(1.0 / ratio_value.max(1e-9)))
    }
}
