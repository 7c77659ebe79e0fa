//! One part of the benchmark on its own (`agent-bench --only PART`), for working on one figure
//! without the whole run: the part's figures go to stdout as plain lines, medians with their
//! range, and no report is written.

use std::fmt::Write as _;

use anyhow::{Result, bail};

use crate::stats::{ratio, seconds};
use crate::{Plan, api, distributed, overhead, real_model, scale};

/// The parts that run on their own.
pub(crate) const PARTS: &str = "overhead, scale, api, distributed, real_model, build";

/// Runs one part with the plan's sizes and prints its figures.
pub(crate) async fn run(part: &str, plan: &Plan) -> Result<String> {
    let mut out = String::new();
    match part {
        "overhead" => {
            let rows = overhead::measure(&plan.ns, plan.runs).await?;
            let memory = |n: usize| {
                rows.iter()
                    .find(|row| row.n == n && row.store == overhead::Store::Memory)
                    .map(|row| row.iterations_per_second().median())
            };
            for row in &rows {
                let rate = row.iterations_per_second();
                write!(
                    out,
                    "{} N = {}: {} iterations/s",
                    row.store.name(),
                    row.n,
                    rate.show(crate::stats::rate)
                )?;
                if let Some(over_raw) = &row.over_raw {
                    write!(out, ", {} the raw time", over_raw.show(ratio))?;
                }
                if let Some(memory) = memory(row.n).filter(|_| row.store != overhead::Store::Memory)
                {
                    write!(out, ", {:.2} of in-memory", rate.median() / memory)?;
                }
                writeln!(out)?;
            }
        }
        "scale" => {
            let rows = scale::measure(
                plan.messages,
                plan.message_goals,
                plan.fsync_appends,
                plan.runs,
            )
            .await?;
            for row in &rows {
                writeln!(
                    out,
                    "{}: {} against {} raw, {} the raw time",
                    row.name,
                    row.ours.show(seconds),
                    row.raw.show(seconds),
                    row.ratio.show(ratio)
                )?;
            }
        }
        "api" => {
            let results = api::measure(plan.quick, plan.runs).await?;
            for row in &results.fan_out {
                writeln!(
                    out,
                    "fan-out {} {} × {}: {} writes/s, {} deliveries/s, lag p50 {}, p99 {}, max {}; lost {}, out of order {}",
                    row.writer,
                    row.watchers,
                    row.events,
                    row.writes.show(crate::stats::count),
                    row.deliveries.show(crate::stats::count),
                    row.p50.show(seconds),
                    row.p99.show(seconds),
                    row.max.show(seconds),
                    row.lost,
                    row.disorder
                )?;
            }
            for row in &results.get {
                writeln!(
                    out,
                    "GET {}: {} requests/s, p99 {}",
                    row.name,
                    row.per_second.show(crate::stats::rate),
                    row.p99.show(seconds)
                )?;
            }
            writeln!(out, "load average {} at the end", crate::load_average())?;
        }
        "distributed" => {
            let results = distributed::measure(plan.quick, plan.runs).await?;
            out.push_str(&distributed::section(&results));
            out.push_str(&distributed::summary_rows(&results));
            for (measure, target, measured, met) in distributed::targets(&results) {
                writeln!(
                    out,
                    "target: {measure}: {measured} (target {target}, met: {met})"
                )?;
            }
            for failure in results.failures() {
                writeln!(out, "failed: {failure}")?;
            }
        }
        "real_model" => match real_model::measure(false, plan.runs)? {
            real_model::RealModel::Skipped(why) => writeln!(out, "skipped: {why}")?,
            real_model::RealModel::Ran(f) => writeln!(
                out,
                "{} model calls per run: server {} per call, agent's own {} per call, {}% of the server's (load average {} at the end)",
                f.calls.show(|v| format!("{v:.0}")),
                f.server.show(seconds),
                f.own.show(seconds),
                f.share.show(|v| format!("{v:.1}")),
                crate::load_average(),
            )?,
        },
        "build" => {
            let builds = crate::build_size::measure(!plan.quick)?;
            out.push_str(&crate::build_size::section(&builds));
            out.push_str(&crate::build_size::summary_rows(&builds));
        }
        other => bail!("unknown part {other:?}; one of {PARTS}"),
    }
    Ok(out)
}
