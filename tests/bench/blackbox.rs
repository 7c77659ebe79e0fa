//! The command line as a user runs it: `agent run --provider scripted` on the filesystem store
//! (its default, fsync), N steps of a `read_file` call each (the next line of a file), then an
//! answer. Measured from
//! outside: the wall time of the process and its peak resident memory (`getrusage` of a
//! small Python parent whose only child it is). Each scripted turn reports its token usage, as a provider's answer does, so
//! the scripted model does not tokenize the whole conversation on every call — a cost of the
//! test double, not of the runtime.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use serde_json::json;

use crate::stats::Sample;

/// One N over several runs.
pub(crate) struct BlackBoxRow {
    /// Steps of the run.
    pub(crate) n: usize,
    /// Seconds per step, per run.
    pub(crate) step_seconds: Sample,
    /// Peak resident memory, MB, per run.
    pub(crate) peak_mb: Sample,
}

/// The `agent` binary built next to this program (same profile).
pub(crate) fn agent_binary() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let dir = exe
        .parent()
        .context("the benchmark program has no folder")?;
    let agent = dir.join("agent");
    if !agent.is_file() {
        bail!(
            "{} is missing: build it first (`cargo build -p goaltree-cli`, with --release for a full run)",
            agent.display()
        );
    }
    Ok(agent)
}

/// Runs every N `runs` times.
pub(crate) fn measure(ns: &[usize], runs: usize) -> Result<Vec<BlackBoxRow>> {
    let agent = agent_binary()?;
    let mut rows: Vec<BlackBoxRow> = ns
        .iter()
        .map(|&n| BlackBoxRow {
            n,
            step_seconds: Sample::default(),
            peak_mb: Sample::default(),
        })
        .collect();
    for run in 0..runs {
        for row in &mut rows {
            eprintln!(
                "agent-bench: agent run --provider scripted, N = {} (run {} of {runs})",
                row.n,
                run + 1
            );
            let (seconds, peak) = one_run(&agent, row.n)?;
            row.step_seconds.push(seconds / row.n as f64);
            row.peak_mb.push(peak);
        }
    }
    Ok(rows)
}

/// One process run: its wall time in seconds and its peak resident memory in MB.
fn one_run(agent: &Path, steps: usize) -> Result<(f64, f64)> {
    let dir = tempfile::tempdir()?;
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work)?;
    // One line per step, each step reading the next: no two calls alike, as a real run's are.
    let notes: String = (1..=steps).map(|i| format!("note {i}\n")).collect();
    std::fs::write(work.join("notes.txt"), notes)?;
    let usage = json!({"prompt_tokens": 1000, "completion_tokens": 20});
    let mut turns: Vec<_> = (0..steps)
        .map(|i| {
            let read = json!({"path": "notes.txt", "offset": i + 1, "limit": 1});
            json!({"tool_calls": [{"name": "read_file", "arguments": read}], "usage": usage})
        })
        .collect();
    turns.push(json!({"text": "Read it.", "usage": usage}));
    let script = dir.path().join("script.json");
    std::fs::write(&script, json!({ "turns": turns }).to_string())?;
    let mut command = Command::new("python3");
    command
        .args(["-c", MEASURE])
        .arg(agent)
        .args(["run", "--provider", "scripted", "--script"])
        .arg(&script)
        .arg("--workspace")
        .arg(&work)
        .arg("--trace-dir")
        .arg(dir.path().join("traces"))
        .args(["--max-iterations", &(steps + 10).to_string(), "--yes"])
        .arg("Read the notes")
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .env("NO_COLOR", "1")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    let output = command.output()?;
    let report = String::from_utf8_lossy(&output.stdout);
    let mut fields = report.split_whitespace();
    let (Some(code), Some(seconds), Some(kilobytes)) =
        (fields.next(), fields.next(), fields.next())
    else {
        bail!("measuring agent run printed {report:?}");
    };
    if code != "0" {
        bail!("agent run of {steps} steps ended with exit code {code}");
    }
    Ok((seconds.parse()?, kilobytes.parse::<f64>()? / 1024.0))
}

/// Runs the command its arguments name and prints its exit code, wall time in seconds and
/// peak resident memory in kilobytes (Linux's unit): `getrusage` of its own children, which is
/// the measured process alone.
const MEASURE: &str = "import resource, subprocess, sys, time\n\
start = time.monotonic()\n\
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n\
seconds = time.monotonic() - start\n\
print(code, seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n";
