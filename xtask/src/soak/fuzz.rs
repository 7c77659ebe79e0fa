//! The fuzzing step of the soak: `cargo fuzz` (installed pinned when missing) runs each target
//! under libFuzzer for a while, and its statistics are read back for the report.

use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use super::run_cargo;
use crate::{cargo_bin, workspace_root};

/// One libFuzzer target's run.
pub(super) struct FuzzRun {
    pub(super) target: &'static str,
    pub(super) runs: u64,
    pub(super) seconds: f64,
    pub(super) coverage: u64,
    pub(super) corpus: u64,
}

pub(super) const FUZZ_TARGETS: [&str; 4] = [
    "goal_command",
    "events_log",
    "sse_stream",
    "context_builder",
];

/// Makes sure `cargo fuzz` is there, installing it (pinned) when it is not.
fn ensure_cargo_fuzz() -> Result<()> {
    let present = Command::new(cargo_bin())
        .args(["fuzz", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !present {
        run_cargo(
            "install cargo-fuzz",
            &["install", "cargo-fuzz", "--version", "0.13.2", "--locked"],
            &[],
        )?;
    }
    Ok(())
}

/// Runs every fuzz target under libFuzzer for `seconds`; a crash fails the soak and names the
/// input libFuzzer saved.
pub(super) fn fuzz(seconds: u32) -> Result<Vec<FuzzRun>> {
    ensure_cargo_fuzz()?;
    let root = workspace_root();
    // Built once up front, so the run times below are fuzzing only.
    eprintln!("xtask soak: building the fuzz targets");
    let status = Command::new(cargo_bin())
        .args(["fuzz", "build"])
        .env("RUSTC_BOOTSTRAP", "1")
        .current_dir(&root)
        .status()
        .context("could not run cargo fuzz build")?;
    if !status.success() {
        bail!("cargo fuzz build failed ({status})");
    }
    let mut runs = Vec::new();
    for target in FUZZ_TARGETS {
        // The growing corpus stays out of the repository: only the seeds are committed.
        let corpus = root.join("target").join("fuzz-corpus").join(target);
        std::fs::create_dir_all(&corpus)?;
        let seeds = root.join("fuzz").join("corpus").join(target);
        let max_time = format!("-max_total_time={seconds}");
        eprintln!("xtask soak: fuzzing {target} for {seconds} s");
        let started = Instant::now();
        let output = Command::new(cargo_bin())
            .args(["fuzz", "run", target])
            .arg(&corpus)
            .arg(&seeds)
            .args(["--", &max_time, "-print_final_stats=1", "-timeout=30"])
            .env("RUSTC_BOOTSTRAP", "1")
            .current_dir(&root)
            .output()
            .with_context(|| format!("could not run cargo fuzz for {target}"))?;
        let log = String::from_utf8_lossy(&output.stderr).into_owned();
        if !output.status.success() {
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            bail!(
                "fuzz target {target} failed; the input is under fuzz/artifacts/{target}/ — fix \
                 the bug and add the input to fuzz/regressions/{target}/:\n{}",
                tail.join("\n")
            );
        }
        // `stat::number_of_executed_units: 12345`
        let stat = |name: &str| -> u64 {
            log.lines()
                .filter(|l| l.starts_with(name))
                .filter_map(|l| l.rsplit(':').next()?.trim().parse().ok())
                .next_back()
                .unwrap_or(0)
        };
        let coverage = log
            .lines()
            .rev()
            .find_map(|l| {
                let at = l.find("cov: ")?;
                l[at + 5..].split_whitespace().next()?.parse().ok()
            })
            .unwrap_or(0);
        runs.push(FuzzRun {
            target,
            runs: stat("stat::number_of_executed_units"),
            seconds: started.elapsed().as_secs_f64(),
            coverage,
            corpus: std::fs::read_dir(&corpus)
                .map(|d| d.count() as u64)
                .unwrap_or(0),
        });
    }
    Ok(runs)
}
