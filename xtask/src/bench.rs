//! `cargo xtask bench [--quick]`: the benchmark program in release mode, writing
//! `docs/benchmarks.md` and its plots.
//!
//! A full run compares the runner with LangGraph through the peer script
//! `tests/bench/langgraph_peer.py` (or the file named by `AGENT_BENCH_PEER`). Its Python
//! packages are installed once into a virtualenv at `target/langgraph-venv`, with the versions
//! pinned in `tests/bench/langgraph-requirements.txt`, and reinstalled when that file changes. A
//! quick run needs neither the virtualenv nor the network.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{cargo_env, workspace_root};

/// The pinned packages of the LangGraph peer.
const REQUIREMENTS: &str = "tests/bench/langgraph-requirements.txt";
/// The LangGraph peer script.
const PEER: &str = "tests/bench/langgraph_peer.py";
/// Where the virtualenv goes.
const VENV: &str = "target/langgraph-venv";
/// The copy of the requirements the virtualenv was built from.
const STAMP: &str = "installed-requirements.txt";

/// Runs the benchmark program in release mode and writes its report to docs/benchmarks.md.
pub(crate) fn bench(quick: bool) -> Result<()> {
    let root = workspace_root();
    let out = root.join("docs").join("benchmarks.md");
    let out = out.to_string_lossy().into_owned();
    let mut env: Vec<(String, String)> = Vec::new();
    if !quick {
        let python = langgraph_venv(&root)?;
        env.push((
            "AGENT_BENCH_PYTHON".into(),
            python.to_string_lossy().into_owned(),
        ));
        let peer = std::env::var("AGENT_BENCH_PEER")
            .map(PathBuf::from)
            .unwrap_or_else(|_| root.join(PEER));
        if !peer.is_file() {
            bail!(
                "the LangGraph peer script {} is missing; set AGENT_BENCH_PEER to its path, or run `cargo xtask bench --quick` without it",
                peer.display()
            );
        }
        env.push((
            "AGENT_BENCH_PEER".into(),
            peer.to_string_lossy().into_owned(),
        ));
    }
    // The `agent` binary the benchmark runs from outside, built in the same profile.
    crate::cargo(&[
        "build",
        "--release",
        "--locked",
        "--quiet",
        "-p",
        "goaltree-cli",
        "--bin",
        "agent",
    ])?;
    let mut args = vec![
        "run",
        "--release",
        "--locked",
        "--quiet",
        "-p",
        "agent-e2e",
        "--bin",
        "agent-bench",
        "--",
    ];
    if quick {
        args.push("--quick");
    }
    args.extend(["--out", out.as_str()]);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    cargo_env(&args, &env)
}

/// The interpreter of the LangGraph virtualenv, creating or updating the virtualenv first when
/// it is missing or was built from other pins.
fn langgraph_venv(root: &Path) -> Result<PathBuf> {
    let requirements_path = root.join(REQUIREMENTS);
    let requirements = std::fs::read_to_string(&requirements_path)
        .with_context(|| format!("reading {}", requirements_path.display()))?;
    let venv = root.join(VENV);
    let python = venv.join("bin").join("python");
    let stamp = venv.join(STAMP);
    if python.is_file() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(&requirements) {
        return Ok(python);
    }
    let system_python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    eprintln!(
        "xtask bench: creating the LangGraph virtualenv {} from {REQUIREMENTS}",
        venv.display()
    );
    run(Command::new(&system_python)
        .args(["-m", "venv", "--clear"])
        .arg(&venv))?;
    run(Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-input",
            "-r",
        ])
        .arg(&requirements_path))?;
    std::fs::write(&stamp, &requirements)
        .with_context(|| format!("writing {}", stamp.display()))?;
    Ok(python)
}

fn run(command: &mut Command) -> Result<()> {
    eprintln!("$ {command:?}");
    let status = command
        .status()
        .with_context(|| format!("could not start {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed with {status}");
    }
    Ok(())
}
