//! The performance targets the runtime holds itself to, each read from this run's figures:
//! the measure, its target, what this run measured, and whether it is met.

use agent_store_fs::Durability;

use crate::blackbox::BlackBoxRow;
use crate::overhead::Store;
use crate::report::Results;
use crate::stats::{count, rate, ratio, seconds};

/// One target.
struct Target {
    measure: String,
    target: &'static str,
    measured: String,
    met: Option<bool>,
}

/// The section: a table of every target.
pub(crate) fn section(
    results: &Results<'_>,
    blackbox: &[BlackBoxRow],
    distributed: &crate::distributed::Distributed,
) -> String {
    let mut rows = Vec::new();
    let memory: Vec<_> = results
        .plan
        .ns
        .iter()
        .filter_map(|&n| results.ours(Store::Memory, n))
        .collect();
    if !memory.is_empty() {
        let rates: Vec<String> = memory
            .iter()
            .map(|row| {
                format!(
                    "N = {}: {}",
                    count(row.n as f64),
                    rate(row.iterations_per_second().median())
                )
            })
            .collect();
        let lowest = memory
            .iter()
            .map(|row| row.iterations_per_second().median())
            .fold(f64::INFINITY, f64::min);
        rows.push(Target {
            measure: "in-memory iterations/s at every N".into(),
            target: "≥ 10,000",
            measured: rates.join(", "),
            met: Some(lowest >= 10_000.0),
        });
    }
    let step = |n: usize| blackbox.iter().find(|row| row.n == n);
    if let (Some(small), Some(large)) = (blackbox.first(), blackbox.last())
        && large.n > small.n
    {
        let growth = large.step_seconds.median() / small.step_seconds.median().max(1e-12);
        rows.push(Target {
            measure: format!(
                "time per step at N = {} / at N = {} (`agent run --provider scripted`, filesystem store)",
                count(large.n as f64),
                count(small.n as f64)
            ),
            target: "≤ 1.2×",
            measured: format!(
                "{} ({} / {})",
                ratio(growth),
                seconds(large.step_seconds.median()),
                seconds(small.step_seconds.median())
            ),
            met: Some(growth <= 1.2),
        });
        let peaks: Vec<String> = blackbox
            .iter()
            .map(|row| {
                format!(
                    "N = {}: {:.0} MB",
                    count(row.n as f64),
                    row.peak_mb.median()
                )
            })
            .collect();
        rows.push(Target {
            measure: format!("peak memory of the {}-step run", count(large.n as f64)),
            target: "≤ 150 MB, growing linearly",
            measured: peaks.join(", "),
            met: step(large.n).map(|row| row.peak_mb.median() <= 150.0),
        });
    }
    let n = 1_000;
    if let Some(fsync) = results.ours(Store::Fs(Durability::Fsync), n)
        && let Some(over) = &fsync.over_raw
    {
        rows.push(Target {
            measure: format!(
                "filesystem, fsync, N = {}: time per step / raw fsync'd append of the same bytes",
                count(n as f64)
            ),
            target: "≤ 1.5×",
            measured: ratio(over.median()),
            met: Some(over.median() <= 1.5),
        });
    }
    if let (Some(buffered), Some(memory)) = (
        results.ours(Store::Fs(Durability::Buffered), n),
        results.ours(Store::Memory, n),
    ) {
        let share = buffered.iterations_per_second().median()
            / memory.iterations_per_second().median().max(1e-9);
        rows.push(Target {
            measure: format!(
                "filesystem, buffered: iterations/s / in-memory iterations/s, N = {}",
                count(n as f64)
            ),
            target: "≥ 0.6",
            measured: format!("{share:.2}"),
            met: Some(share >= 0.6),
        });
    }
    if let (Some(ours), Some(theirs)) = (
        results.ours(Store::Fs(Durability::Fsync), n),
        results.langgraph().and_then(|run| run.best("sqlite", n)),
    ) {
        let theirs = n as f64 / theirs.seconds.median().max(1e-9);
        let times = ours.iterations_per_second().median() / theirs.max(1e-9);
        rows.push(Target {
            measure: format!(
                "durable iterations/s vs LangGraph + SqliteSaver, N = {}",
                count(n as f64)
            ),
            target: "≥ 20×",
            measured: ratio(times),
            met: Some(times >= 20.0),
        });
    }
    let scale = |prefix: &str| {
        results
            .scale
            .iter()
            .find(|row| row.name.starts_with(prefix))
    };
    // `None`: measured and shown, with no target (see the copies' rows).
    for (prefix, measure, target, limit) in [
        (
            "cold open",
            "100k-message trace: cold open / raw read of its log",
            "≤ 2×",
            Some(2.0),
        ),
        (
            "shared: all messages",
            "all messages, shared (as the runner, the API, ACP, `agent show` and the exporter \
             read them) / raw read of the same bytes",
            "≤ 3×",
            Some(3.0),
        ),
        (
            "shared: messages of one goal",
            "one goal's messages, shared / raw read of the same bytes",
            "≤ 10×",
            Some(10.0),
        ),
        (
            "copies: all messages",
            "all messages, copies (`get_trace_messages`) / raw read of the same bytes",
            "none since the runner reads shared (was ≤ 3×, not met while it copied)",
            None,
        ),
        (
            "copies: messages of one goal",
            "one goal's messages, copies (`get_messages_by_goal`) / raw read of the same bytes",
            "none since the runner reads shared (was ≤ 10×, met while it copied)",
            None,
        ),
        (
            "append",
            "append 100,000 messages buffered / raw",
            "≤ 10×",
            Some(10.0),
        ),
    ] {
        if let Some(row) = scale(prefix) {
            rows.push(Target {
                measure: measure.into(),
                target,
                measured: ratio(row.ratio.median()),
                met: limit.map(|limit| row.ratio.median() <= limit),
            });
        }
    }
    if let Some(burst) = results.api.fan_out.iter().find(|row| row.writer == "burst") {
        rows.push(Target {
            measure: format!(
                "{} WebSocket watchers × {} events, burst: lag p99",
                burst.watchers,
                count(burst.events as f64)
            ),
            target: "< 50 ms",
            measured: seconds(burst.p99.median()),
            met: Some(burst.p99.median() < 0.050),
        });
    }
    for (measure, target, measured, met) in crate::distributed::targets(distributed) {
        rows.push(Target {
            measure,
            target,
            measured,
            met: Some(met),
        });
    }
    let mut out = String::from(
        "\n## Targets\n\nEach target read from this run's figures (medians); the sections below \
         say how each was measured.\n\n| measure | target | this run | met |\n|---|---:|---:|---|\n",
    );
    for row in rows {
        let met = match row.met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "—",
        };
        out.push_str(&format!(
            "| {} | {} | {} | {met} |\n",
            row.measure, row.target, row.measured
        ));
    }
    out
}

/// The black-box section: time per step and peak memory of `agent run` at each N.
pub(crate) fn blackbox_section(rows: &[BlackBoxRow]) -> String {
    let mut table = String::new();
    for row in rows {
        table.push_str(&format!(
            "| {} | {} | {} |\n",
            count(row.n as f64),
            row.step_seconds.show(seconds),
            row.peak_mb.show(|mb| format!("{mb:.0} MB")),
        ));
    }
    format!(
        "\n## 7. The command line from outside\n\n\
         `agent run --provider scripted` as a user runs it (the `agent` binary of the same build, \
         its default filesystem store in fsync mode): N steps of a `read_file` call each (the next \
         line of a file), then an answer. Each scripted turn reports its token usage, as a provider's answer does, so the \
         scripted model does not tokenize the conversation on every call (a cost of the test \
         double, not of the runtime). Time per step is the process's wall time over N, start-up \
         included; peak memory is the process's peak resident set (`getrusage` of a small \
         Python parent whose only child it is).\n\n| N | time per step | peak memory |\n|---:|---:|---:|\n{table}"
    )
}
