//! `agent demo`: a realistic task run offline by a built-in scripted model, in a temporary
//! workspace, recorded as a real trace — then the viewer is served so it can be looked at.
//!
//! The task: make a small word counter also report the most common word. The model plans three
//! goals, reads the code, tries a regex tokenizer and abandons it, explores two ways of counting
//! in parallel (two sub-traces), implements the chosen one, writes a test and runs it. Finished
//! goals leave the model's context as their summaries (goal compaction) as it goes, and the run
//! ends with a closing report built from every goal's summary. Its traces are kept in a project
//! of their own unless a store is named, so the demo never becomes the project's newest trace.

use std::path::Path;
use std::sync::Arc;

use agent_app::factory::RunRequest;
use agent_app::store::{Location, Origin};
use agent_app::{App, Config};
use agent_execution::watch_live;
use agent_runner::Approval;
use agent_tools::SandboxMode;
use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use crate::cli::DemoArgs;
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
pub(crate) async fn demo(args: DemoArgs, sandbox: Option<SandboxMode>) -> Result<ExitCode> {
    let workspace = tempfile::Builder::new().prefix("agent-demo-").tempdir()?;
    seed(workspace.path())?;
    // The script of the built-in model, outside the workspace its tools see.
    let script = tempfile::Builder::new()
        .prefix("agent-demo-script-")
        .suffix(".json")
        .tempfile()?;
    std::fs::write(script.path(), SCRIPT).context("cannot write the demo's script")?;
    let named = crate::settings::app(crate::settings::traces(&args.trace_dir))?;
    let location = demo_location(&named, workspace.path());
    // The demo is the same agent as any run (the one factory: tools, sandbox, protections),
    // with a scripted model in a temporary workspace, and none of the user's agent.toml: a
    // showcase that a configuration cannot break.
    let mut overrides = agent_app::Overrides::default();
    overrides.provider.kind = Some(agent_llm::ProviderKind::Scripted);
    overrides.provider.script = Some(script.path().to_path_buf());
    overrides.provider.model = Some("scripted-demo".into());
    overrides.workspace = Some(workspace.path().to_path_buf());
    overrides.sandbox = sandbox;
    overrides.store.store = Some(match &location {
        Location::Folder(dir) => dir.display().to_string(),
        Location::Postgres(url) => url.clone(),
    });
    let config = Config::from_layers(None, None, named.config().env().clone());
    let app = App::new(config, overrides);
    let app = match std::env::current_exe() {
        Ok(exe) => app.with_sandbox_helper(exe),
        Err(_) => app,
    };
    let opened = app.open_store().await?;
    let store = opened.store.clone();
    let sandbox = app.sandbox(&opened.location)?;
    crate::settings::say(sandbox.notices.clone());
    let factory = agent_app::AppFactory::new(app.clone(), opened, sandbox, Arc::default())?;
    // The demo works in a temporary folder of its own, so its risky tools run unasked.
    let built = factory.runner(RunRequest::new().approval(Approval::Allow))?;
    let runner = built.runner;

    note(&format!(
        "demo task: {TASK}\nworkspace: {} (temporary)\n",
        workspace.path().display()
    ));
    // Spans go where OTEL_EXPORTER_OTLP_ENDPOINT says, as for any run.
    let otel = crate::otel::exporter(None, Some(agent_llm::ProviderKind::Scripted))?;
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

/// Where the demo keeps its traces: the store the flags, the environment or agent.toml name,
/// else a project of its own in the user's data folder (`traces/demo`), so that the demo never
/// becomes the newest trace of the project it was started in (`-c` would continue it with the
/// scripted model).
fn demo_location(app: &App, workspace: &std::path::Path) -> Location {
    match app.store_location() {
        (location, Origin::Project(_)) => match app.config().env().data_dir() {
            Some(data) => Location::Folder(data.join("traces").join("demo")),
            None => match location {
                Location::Folder(_) => Location::Folder(workspace.join(".trace")),
                other => other,
            },
        },
        (location, _) => location,
    }
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
