//! `agent worker`, and the worker `agent serve --worker` runs beside the API: runs queued in a
//! PostgreSQL store are claimed and executed here, with this process's model, credentials
//! (flags, environment, agent.toml: never the database) and workspace.

use std::sync::Arc;
use std::time::Duration;

use agent_execution::TraceStore;
use agent_execution::queue::RunQueue;
use agent_worker::{Worker, WorkerConfig};
use anyhow::Result;
use tokio_util::sync::CancellationToken;

use crate::cli::{WorkOptions, WorkerArgs};
use crate::config::{self, FileConfig};
use crate::exit::{ExitCode, UsageError};
use crate::factory::CliFactory;
use crate::output::note;
use crate::store::Location;

/// The run queue of a store that has one (a PostgreSQL database); `None` for a folder.
pub(crate) async fn queue_for(location: &Location) -> Result<Option<Arc<dyn RunQueue>>> {
    match location {
        Location::Folder(_) => Ok(None),
        #[cfg(feature = "postgres")]
        Location::Postgres(url) => {
            let queue = agent_store_pg::PgRunQueue::connect(url)
                .await
                .map_err(|error| {
                    anyhow::anyhow!("cannot open the run queue of {location}: {error}")
                })?;
            Ok(Some(Arc::new(queue)))
        }
        #[cfg(not(feature = "postgres"))]
        Location::Postgres(_) => Ok(None),
    }
}

/// A worker over `queue` with these options, named after this host and process.
pub(crate) fn worker_for(
    options: &WorkOptions,
    queue: Arc<dyn RunQueue>,
    store: Arc<dyn TraceStore>,
    factory: Arc<CliFactory>,
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
/// traces end `cancelled`, and can be resumed like any cancelled trace) and exits.
pub(crate) async fn worker(args: WorkerArgs) -> Result<ExitCode> {
    let file = FileConfig::load()?;
    crate::agents::check_limits(&file)?;
    let location = Location::resolve(&args.trace_dir, &file);
    if location.folder().is_some() {
        return Err(UsageError(
            "agent worker executes the runs queued in a PostgreSQL store: give --store \
             postgres://… (or AGENT_STORE)"
                .into(),
        )
        .into());
    }
    let (workspace, _) = crate::factory::workspaces(&args.model, &file)?;
    let provider = config::resolve_provider(&args.model.llm, &file)
        .ok_or_else(|| UsageError(config::NO_PROVIDER.into()))?;
    let model = provider.model.clone();
    let opened = crate::store::open_at(location).await?;
    let Some(queue) = queue_for(&opened.location).await? else {
        return Err(UsageError("this build of agent has no PostgreSQL store".into()).into());
    };
    let (factory, mcp) = crate::factory::build_factory(
        &args.model,
        &file,
        workspace,
        provider,
        &opened.store,
        &opened.location,
        crate::mcp::unattended(None),
    )
    .await?;
    let worker = worker_for(&args.work, queue, opened.store, factory);
    note(&format!(
        "agent worker: executing runs queued in {} with {model}, {} at a time — Ctrl-C to stop",
        opened.location, args.work.concurrency
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
