//! `agent demo`: a realistic task run offline by a built-in scripted model, in a temporary
//! workspace, recorded as a real trace — then the viewer is served so it can be looked at.
//!
//! The task: make a small word counter also report the most common word. The model plans three
//! goals, reads the code, tries a regex tokenizer and abandons it, explores two ways of counting
//! in parallel (two sub-traces), implements the chosen one, writes a test and runs it. Finished
//! goals leave the model's context as their summaries (goal compaction) as it goes, and the run
//! ends with a closing report built from every goal's summary.

use std::path::Path;
use std::sync::Arc;

use agent_execution::watch_live;
use agent_llm::ScriptedClient;
use agent_runner::{AgentRunner, Approval, RunnerOptions};
use agent_tools::ToolRegistry;
use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use crate::cli::DemoArgs;
use crate::config::FileConfig;
use crate::exit::ExitCode;
use crate::exit::exit_code;
use crate::output::{note, print};
use crate::progress::{self, ProgressMode};

/// The scripted model's answers: the main line's turns, and one route per explored branch.
const SCRIPT: &str = include_str!("../demo/script.json");
/// The files of the demo workspace.
const FILES: &[(&str, &str)] = &[
    ("src/wordcount.py", include_str!("../demo/wordcount.py")),
    ("README.md", include_str!("../demo/README.md")),
];
/// The demo's task.
pub(crate) const TASK: &str = "Make src/wordcount.py also report the most common word and how \
often it appears, and add a test for it.";

/// Runs the demo; serves the viewer afterwards unless `--no-serve`.
pub(crate) async fn demo(args: DemoArgs) -> Result<ExitCode> {
    let workspace = tempfile::Builder::new().prefix("agent-demo-").tempdir()?;
    seed(workspace.path())?;
    let file = FileConfig::load()?;
    let opened = crate::store::open(&args.trace_dir, &file).await?;
    let (store, location) = (opened.store, opened.location);
    let llm = Arc::new(
        ScriptedClient::from_json_str(SCRIPT)
            .context("the built-in demo script is invalid")?
            .keeping_requests(0),
    );
    // The demo works in a temporary folder of its own, so its risky tools run unasked.
    let options = RunnerOptions::new("scripted-demo", workspace.path())
        .with_approval(Approval::Allow)
        .with_sub_agents()
        .with_closing_report(true);
    let runner = AgentRunner::new(store.clone(), llm, ToolRegistry::with_builtins(), options);

    note(&format!(
        "demo task: {TASK}\nworkspace: {} (temporary)\n",
        workspace.path().display()
    ));
    // Spans go where OTEL_EXPORTER_OTLP_ENDPOINT says, as for any run.
    let otel = crate::otel::exporter(None, Some(crate::cli::ProviderKind::Scripted))?;
    let trace_id = runner.create(TASK).await?;
    let progress = tokio::spawn(progress::follow(
        watch_live(store.clone(), &trace_id, 0),
        progress::Shown {
            mode: ProgressMode::Auto,
            show_reasoning: false,
            show_edits: false,
        },
    ));
    let outcome = runner.drive(&trace_id, CancellationToken::new()).await?;
    let streamed = match tokio::time::timeout(std::time::Duration::from_secs(2), progress).await {
        Ok(Ok(streamed)) => streamed,
        _ => String::new(),
    };
    crate::otel::send(otel.as_ref(), store.as_ref(), &trace_id).await;

    // The answer streamed on stdout; what did not (a progress that fell behind) is printed.
    let answer = outcome.response.as_deref().unwrap_or_default();
    if !streamed.contains(answer.trim()) {
        print(answer);
    }
    let subs = store.get_sub_traces(&trace_id).await?;
    note(&format!(
        "\ntrace {trace_id}: {:?}, {} messages, {} sub-traces, stored in {}\n  inspect it: agent show {trace_id} {}",
        outcome.status,
        outcome.stats.total_messages,
        subs.len(),
        match location.folder() {
            Some(dir) => dir.join(&trace_id).display().to_string(),
            None => location.to_string(),
        },
        location.flag(),
    ));
    if args.no_serve {
        return Ok(exit_code(&outcome));
    }
    crate::serve::viewer(store, args.port, &trace_id).await?;
    Ok(exit_code(&outcome))
}

/// Writes the demo workspace's files.
fn seed(root: &Path) -> Result<()> {
    for (path, content) in FILES {
        let path = root.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, content)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
