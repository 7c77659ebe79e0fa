//! The real model: the agent's own time per model call against the server's time, with
//! llama.cpp's own server (`llama-server`) running SmolLM2-135M-Instruct on the CPU
//! (`scripts/setup-llamacpp.sh` installs it; see `agent_test_support::llamacpp`).
//!
//! Each run is one `agent run` process (the binary next to this program) with a short task
//! against the server, through the recording proxy, which pins sampling (temperature 0, a seed,
//! a 32-token cap) and times every request from its forwarding to the answer's last byte: the
//! server's time. The agent's own time is the rest of the process's wall time (starting,
//! building each request, parsing the answer, writing the trace), counted against the agent,
//! proxy included. A quick run without the installation skips the section; a full run needs it.

use std::process::{Command, Stdio};
use std::time::Instant;

use agent_test_support::llamacpp::{Install, Proxy, Server, ServerOptions};
use anyhow::{Result, bail};
use serde_json::json;

use crate::stats::{Sample, seconds};

/// The target: the agent's time per model call as a share of the server's.
const TARGET_PERCENT: f64 = 5.0;

/// What was measured, or why not.
pub(crate) enum RealModel {
    /// Not run, and why.
    Skipped(String),
    /// The runs' figures.
    Ran(Figures),
}

/// Per run: model calls, the server's and the agent's own seconds per call, and their ratio.
pub(crate) struct Figures {
    /// Model calls per run.
    pub(crate) calls: Sample,
    /// The server's seconds per call.
    pub(crate) server: Sample,
    /// The agent's own seconds per call.
    pub(crate) own: Sample,
    /// The agent's own time as a percentage of the server's.
    pub(crate) share: Sample,
}

/// Runs `runs` agent processes against the server; skipped in quick mode without the
/// installation.
pub(crate) fn measure(quick: bool, runs: usize) -> Result<RealModel> {
    let install = match Install::find() {
        Ok(install) => install,
        Err(why) if quick => return Ok(RealModel::Skipped(why)),
        Err(why) => bail!("the real-model section needs the llama.cpp server: {why}"),
    };
    let agent = crate::blackbox::agent_binary()?;
    eprintln!("agent-bench: the real model (llama.cpp server, SmolLM2-135M)");
    let server = Server::start(&install, &ServerOptions::default());
    let proxy = Proxy::start(
        server.address(),
        json!({"temperature": 0.0, "seed": 1, "max_tokens": 32}),
    );
    let mut figures = Figures {
        calls: Sample::default(),
        server: Sample::default(),
        own: Sample::default(),
        share: Sample::default(),
    };
    // One run first that is not counted: the server's first answer loads its prompt cache.
    for run in 0..=runs {
        let dir = tempfile::tempdir()?;
        let before = proxy.completions().len();
        let started = Instant::now();
        let status = Command::new(&agent)
            .args([
                "run",
                "--provider",
                "openai",
                "--base-url",
                &proxy.base_url(),
            ])
            .args(["--api-key", "none", "--model", "smollm2"])
            .args(["--context-window", "4096", "--max-iterations", "2"])
            .args(["--no-instructions", "--yes", "--workspace"])
            .arg(dir.path())
            .arg("--trace-dir")
            .arg(dir.path().join(".traces"))
            .arg("Say hello in one word.")
            .env("HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path())
            .env("NO_COLOR", "1")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        let wall = started.elapsed().as_secs_f64();
        if !matches!(status.code(), Some(0 | 3)) {
            bail!("agent run against the real model ended with {status}");
        }
        let calls = &proxy.completions()[before..];
        if calls.is_empty() {
            bail!("agent run sent the real model no request");
        }
        if run == 0 {
            continue;
        }
        let server_seconds: f64 = calls.iter().map(|c| c.seconds).sum();
        let n = calls.len() as f64;
        figures.calls.push(n);
        figures.server.push(server_seconds / n);
        let own = (wall - server_seconds).max(0.0);
        figures.own.push(own / n);
        figures.share.push(100.0 * own / server_seconds.max(1e-9));
    }
    Ok(RealModel::Ran(figures))
}

/// The row of the report's summary table.
pub(crate) fn summary_rows(real: &RealModel) -> String {
    match real {
        RealModel::Skipped(_) => {
            "| 7. real model | agent's own time per model call / server's time (llama.cpp, SmolLM2-135M) | skipped | — | not installed |\n".into()
        }
        RealModel::Ran(f) => format!(
            "| 7. real model | agent's own time per model call / server's time (llama.cpp, SmolLM2-135M) | {}% | < {TARGET_PERCENT}% | {} own, {} server per call |\n",
            f.share.show(|v| format!("{v:.1}")),
            seconds(f.own.median()),
            seconds(f.server.median()),
        ),
    }
}

/// The report's section: the figures and how they are measured.
pub(crate) fn section(real: &RealModel) -> String {
    let body = match real {
        RealModel::Skipped(why) => format!("Skipped in this run: {why}.\n"),
        RealModel::Ran(f) => {
            let share = f.share.median();
            format!(
                "| model calls per run | server's time per call | agent's own time per call | share | target | met |\n\
                 |---:|---:|---:|---:|---:|---|\n\
                 | {} | {} | {} | {} | < {TARGET_PERCENT}% | {} |\n",
                f.calls.show(|v| format!("{v:.0}")),
                f.server.show(seconds),
                f.own.show(seconds),
                f.share.show(|v| format!("{v:.1}%")),
                if share < TARGET_PERCENT { "yes" } else { "no" },
            )
        }
    };
    format!(
        "\n## 7. The real model\n\n\
         `agent run` against llama.cpp's OpenAI-compatible server (`llama-server`) running \
         SmolLM2-135M-Instruct (Q4 GGUF) on this machine's CPU, with a 4,096-token window and \
         the agent's ten tool schemas in every request. A recording proxy pins sampling \
         (temperature 0, seed 1, at most 32 tokens an answer) and times each request from its \
         forwarding to the answer's last byte: the server's time. The agent's own time is the \
         rest of the process's wall time (starting, the trace folder, building each request, \
         reading the answer, the commits), divided by its model calls. One warm-up run is not \
         counted. A tiny model on a CPU answers in a second or two; a real deployment's model \
         takes longer, so the share there is smaller. Where the agent's own time goes: the \
         process's start, the trace folder's first commits, the run-start snapshot (`git` \
         processes: creating the store once per trace, listing the files, writing the tree, the \
         commit and the ref) before the first model call, and the run-end snapshot after the \
         last. The o200k token encoding the first context estimate needs is a table the build \
         writes and the program maps in a few milliseconds, on a thread of its own started as \
         the run begins.\n\n{body}"
    )
}
