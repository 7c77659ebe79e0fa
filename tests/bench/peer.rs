//! The performance peer: LangGraph running the same trajectory, through the peer script
//! `tests/bench/langgraph_peer.py` in the virtualenv that `cargo xtask bench` creates with
//! pinned versions.
//!
//! The script prints a header line (`python … langgraph … repeats=N`), a column line, then one
//! line per variant, checkpointer and N: `handgraph sqlite 200 0.669 299.0 599.5 (0.65, 0.67, …)`,
//! where the numbers in parentheses are the wall times of every run in seconds.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::stats::Sample;

/// Where the Python interpreter of the virtualenv is; `cargo xtask bench` sets it.
pub(crate) const PYTHON_ENV: &str = "AGENT_BENCH_PYTHON";
/// Where the peer script is; by default `tests/bench/langgraph_peer.py` in the workspace.
pub(crate) const PEER_ENV: &str = "AGENT_BENCH_PEER";

/// One line of the peer's output.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PeerRow {
    /// `prebuilt` (`create_react_agent`) or `handgraph` (a hand-written `StateGraph`).
    pub(crate) variant: String,
    /// `none`, `memory` (`InMemorySaver`) or `sqlite` (`SqliteSaver` on a file).
    pub(crate) checkpointer: String,
    /// Tool calls in the trajectory.
    pub(crate) n: usize,
    /// Wall time of every run, in seconds.
    pub(crate) seconds: Sample,
}

/// What the peer printed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PeerRun {
    /// Its header: interpreter and library versions, repeats.
    pub(crate) header: String,
    /// Its measurements.
    pub(crate) rows: Vec<PeerRow>,
}

impl PeerRun {
    /// The faster variant's row for a checkpointer and N (by median time).
    pub(crate) fn best(&self, checkpointer: &str, n: usize) -> Option<&PeerRow> {
        self.rows
            .iter()
            .filter(|r| r.checkpointer == checkpointer && r.n == n)
            .min_by(|a, b| a.seconds.median().total_cmp(&b.seconds.median()))
    }
}

/// The peer's outcome: it ran, or why it could not.
pub(crate) enum Peer {
    /// It ran.
    Ran(PeerRun),
    /// It was not run, and why.
    Unavailable(String),
}

/// The interpreter and the script, from the environment or the default places.
fn locations() -> (PathBuf, PathBuf) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let python = std::env::var_os(PYTHON_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/langgraph-venv/bin/python"));
    let peer = std::env::var_os(PEER_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("tests/bench/langgraph_peer.py"));
    (python, peer)
}

/// Runs the peer for these trajectory lengths, `repeats` times each. When the interpreter or the
/// script is missing the outcome says so; a peer that starts and then fails is an error.
pub(crate) fn run(ns: &[usize], repeats: usize) -> Result<Peer> {
    let (python, peer) = locations();
    if !peer.is_file() {
        return Ok(Peer::Unavailable(format!(
            "the peer script {} is missing (set {PEER_ENV})",
            peer.display()
        )));
    }
    if !python.is_file() {
        return Ok(Peer::Unavailable(format!(
            "no Python with LangGraph at {} (`cargo xtask bench` creates it; or set {PYTHON_ENV})",
            python.display()
        )));
    }
    eprintln!(
        "agent-bench: LangGraph peer: {} {} {}",
        python.display(),
        peer.display(),
        ns.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut child = Command::new(&python)
        .arg(&peer)
        .args(ns.iter().map(usize::to_string))
        .env("REPEATS", repeats.to_string())
        .env("PYTHONUNBUFFERED", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {}", python.display()))?;
    let stdout = child.stdout.take().context("the peer's output")?;
    let mut output = String::new();
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        eprintln!("  langgraph | {line}");
        output.push_str(&line);
        output.push('\n');
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("the LangGraph peer failed with {status}");
    }
    let run = parse(&output)?;
    for n in ns {
        if run.best("none", *n).is_none() {
            bail!("the LangGraph peer printed no row for N = {n}");
        }
    }
    Ok(Peer::Ran(run))
}

/// Reads the peer's output.
pub(crate) fn parse(output: &str) -> Result<PeerRun> {
    let mut header = String::new();
    let mut rows = Vec::new();
    for line in output.lines() {
        let line = line.trim();
        if line.starts_with("python ") {
            header = line.split_whitespace().collect::<Vec<_>>().join(" ");
            continue;
        }
        let Some((fields, runs)) = line.split_once('(') else {
            continue;
        };
        let fields: Vec<&str> = fields.split_whitespace().collect();
        let [variant, checkpointer, n, ..] = fields.as_slice() else {
            continue;
        };
        let Ok(n) = n.parse::<usize>() else {
            continue;
        };
        let seconds: Vec<f64> = runs
            .trim_end_matches(')')
            .split(',')
            .map(|s| s.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .with_context(|| format!("reading the run times of {line:?}"))?;
        rows.push(PeerRow {
            variant: (*variant).to_owned(),
            checkpointer: (*checkpointer).to_owned(),
            n,
            seconds: Sample::of(seconds),
        });
    }
    if rows.is_empty() {
        bail!("the LangGraph peer printed no measurement:\n{output}");
    }
    Ok(PeerRun { header, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "\
python 3.11.7  langgraph 1.2.22  langchain-core 1.7.2  checkpoint-sqlite 3.1.2  repeats=3
variant    ckpt        N  median_s    iter/s  supersteps/s  (all runs s)
prebuilt   none      200     0.799     250.4         502.0  (0.799, 0.812, 0.790)
handgraph  none      200     0.669     299.0         599.5  (0.669, 0.700, 0.650)
handgraph  sqlite   1000    34.522      29.0          58.0  (34.522, 35.000, 34.100)
";

    #[test]
    fn reads_the_header_and_every_run() {
        let run = parse(OUTPUT).unwrap_or_else(|e| panic!("{e}"));
        assert!(run.header.starts_with("python 3.11.7 langgraph 1.2.22"));
        assert_eq!(run.rows.len(), 3);
        let sqlite = &run.rows[2];
        assert_eq!((sqlite.checkpointer.as_str(), sqlite.n), ("sqlite", 1000));
        assert_eq!(sqlite.seconds.runs(), 3);
        assert_eq!(sqlite.seconds.median(), 34.522);
        let best = run.best("none", 200).map(|r| r.variant.as_str());
        assert_eq!(best, Some("handgraph"));
    }

    #[test]
    fn output_without_rows_is_an_error() {
        assert!(parse("Traceback (most recent call last):\n").is_err());
    }
}
