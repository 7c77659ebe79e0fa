//! `agent worker`, and the worker `agent serve --worker` runs beside the API: runs queued in a
//! PostgreSQL store are claimed and executed here, with this process's model, credentials
//! (flags, environment, agent.toml: never the database) and workspace, built by the one factory
//! every door uses (`agent_app::AppFactory`).

use std::sync::Arc;
use std::time::Duration;

use agent_app::store::Opened;
use agent_app::{App, AppFactory};
use agent_execution::TraceStore;
use agent_execution::queue::RunQueue;
use agent_mcp::McpServers;
use agent_tools::SandboxMode;
use agent_worker::{Worker, WorkerConfig};
use anyhow::Result;
use tokio_util::sync::CancellationToken;

use crate::cli::{WorkOptions, WorkerArgs};
use crate::exit::{ExitCode, UsageError};
use crate::output::note;

/// A worker over `queue` with these options, named after this host and process.
pub(crate) fn worker_for(
    options: &WorkOptions,
    queue: Arc<dyn RunQueue>,
    store: Arc<dyn TraceStore>,
    factory: Arc<AppFactory>,
) -> Worker {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|name| !name.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|name| name.trim().to_owned())
        })
        .unwrap_or_else(|| "worker".to_owned());
    // The process id and a random tag: a restarted worker never takes its old self's runs for
    // its own.
    let tag: String = agent_execution::ids::new_trace_id()
        .chars()
        .take(8)
        .collect();
    let mut config = WorkerConfig::new(format!("{host}:{}:{tag}", std::process::id()));
    config.concurrency = options.concurrency as usize;
    config.lease = Duration::from_secs(options.lease);
    config.poll = Duration::from_millis(500).min(config.lease / 3);
    Worker::new(queue, store, factory, config)
}

/// `agent worker`: executes queued runs until Ctrl-C, then stops the runs it executes (their
/// traces end `cancelled`, and can be resumed like any cancelled trace) and exits. Its runs are
/// built by the one factory, with the same settings as `agent run`.
pub(crate) async fn worker(args: WorkerArgs, sandbox: Option<SandboxMode>) -> Result<ExitCode> {
    let app = crate::settings::app(crate::settings::served(
        &args.model,
        &args.trace_dir,
        sandbox,
    ))?;
    agent_app::profiles::check_limits(app.file())?;
    let (location, _) = app.store_location();
    if location.folder().is_some() {
        return Err(UsageError(
            "agent worker executes the runs queued in a PostgreSQL store: give --store \
             postgres://… (or AGENT_STORE)"
                .into(),
        )
        .into());
    }
    let (workspace, _) = agent_app::factory::workspace_roots(&app, &args.model.workspace_roots)?;
    let mut overrides = app.overrides().clone();
    overrides.workspace = Some(workspace.clone());
    let app = app.with_overrides(overrides);
    let provider = app
        .provider()
        .ok_or_else(|| UsageError(agent_app::provider::NO_PROVIDER.into()))?;
    let opened = agent_app::store::open(location).await?;
    let Some(queue) = agent_app::store::queue(&opened.location).await? else {
        return Err(UsageError("this build of agent has no PostgreSQL store".into()).into());
    };
    let sandbox = app.sandbox(&opened.location)?;
    crate::settings::say(sandbox.notices.clone());
    let (servers, notices) = app
        .start_mcp(crate::mcp::unattended(&app, &workspace), &sandbox)
        .await?;
    crate::settings::say(notices);
    let mcp = Arc::new(servers);
    let shown = opened.location.clone();
    let store = opened.store.clone();
    let factory = served_factory(&app, opened, sandbox, mcp.clone(), &args.model.otel)?;
    let worker = worker_for(&args.work, queue, store, factory);
    note(&format!(
        "agent worker: executing runs queued in {shown} with {}, {} at a time — Ctrl-C to stop",
        provider.model, args.work.concurrency
    ));
    let stop = CancellationToken::new();
    let stopping = stop.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        stopping.cancel();
    });
    worker.run(stop).await;
    mcp.shutdown().await;
    Ok(ExitCode::Completed)
}

/// The factory of the runs a server or a worker executes: the one factory, sending each run's
/// spans where `--otel` (else the environment) says when it ends.
pub(crate) fn served_factory(
    app: &App,
    opened: Opened,
    sandbox: agent_app::sandbox::Sandbox,
    mcp: Arc<McpServers>,
    otel: &Option<String>,
) -> Result<Arc<AppFactory>> {
    let store = opened.store.clone();
    let factory = agent_app::AppFactory::new(app.clone(), opened, sandbox, mcp)?;
    // A mistake in agent.toml or a profile shows now, with exit code 2, not at the first run.
    crate::settings::say(factory.check()?);
    let kind = app.provider().map(|provider| provider.kind);
    let factory = match crate::otel::exporter(otel.as_deref(), kind)? {
        Some(exporter) => {
            let exporter = Arc::new(exporter);
            factory.on_run_ended(Arc::new(move |trace_id: &str| {
                let (exporter, store, id) = (exporter.clone(), store.clone(), trace_id.to_owned());
                tokio::spawn(async move {
                    crate::otel::send(Some(&exporter), store.as_ref(), &id).await;
                });
            }))
        }
        None => factory,
    };
    Ok(Arc::new(factory))
}
