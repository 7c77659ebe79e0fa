//! `agent serve`, `agent run --serve` and the demo's viewer: the HTTP API and the viewer over a
//! trace folder, with a runner factory when a model is configured (and the folder can be
//! written) so runs can be started and resumed over HTTP.
//!
//! Traces kept in a folder get checkpoints, so they can be rewound over HTTP
//! (`POST /api/traces/{id}/rewind`) and their goals' diffs read.
//!
//! Runs started over HTTP get the server's `--approval` mode (`ask` by default: risky calls wait
//! for a decision over the API) and its `--sandbox` (a request may ask for a stricter one) and work only under the `--workspace-root` folders (the current
//! folder by default), which the server's own workspace must lie under too.

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_api::{ApiConfig, AppState, ApprovalMode, HttpElicitations, Server};
use agent_checkpoint::TraceCheckpoints;
use agent_execution::TraceStore;
use agent_mcp::McpServers;
use agent_tools::SandboxMode;
use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use crate::cli::ServeArgs;
use crate::exit::{ExitCode, UsageError};
use crate::output::note;
use crate::setup::Setup;

/// `agent serve`: serves until Ctrl-C.
pub(crate) async fn serve(args: ServeArgs, sandbox: Option<SandboxMode>) -> Result<ExitCode> {
    let app = crate::settings::app(crate::settings::served(
        &args.model,
        &args.trace_dir,
        sandbox,
    ))?;
    agent_app::profiles::check_limits(app.file())?;
    let (workspace, roots) =
        agent_app::factory::workspace_roots(&app, &args.model.workspace_roots)?;
    // Runs work in the canonical workspace the roots were checked against.
    let mut overrides = app.overrides().clone();
    overrides.workspace = Some(workspace.clone());
    let app = app.with_overrides(overrides);
    let opened = app.open_store().await?;
    crate::settings::say(app.store_notice());
    let (store, location) = (opened.store.clone(), opened.location.clone());
    let queue = agent_app::store::queue(&location).await?;
    if args.worker && queue.is_none() {
        return Err(UsageError(
            "--worker executes the runs queued in a PostgreSQL store: give --store postgres://…"
                .into(),
        )
        .into());
    }
    let host: IpAddr = args
        .host
        .parse()
        .map_err(|_| UsageError(format!("--host {:?} is not an IP address", args.host)))?;
    let approval = ApprovalMode::from(args.model.approval);
    let sandbox = app.sandbox(&location)?;
    crate::settings::say(sandbox.notices.clone());
    let limits = app.file().serve.clone().unwrap_or_default();
    let config = ApiConfig {
        host,
        port: args.port,
        token: args.token.clone(),
        approval,
        workspace_roots: roots.roots().to_vec(),
        sandbox: sandbox.mode(),
        max_connections: args
            .max_connections
            .map(|n| n as usize)
            .or(limits.max_connections)
            .unwrap_or(agent_api::config::DEFAULT_MAX_CONNECTIONS),
        header_timeout: args.header_timeout.or(limits.header_timeout).map_or(
            agent_api::config::DEFAULT_HEADER_TIMEOUT,
            Duration::from_secs,
        ),
        ..ApiConfig::default()
    };
    // The questions MCP servers ask during runs started here wait on this board.
    let elicitations = Arc::new(HttpElicitations::default());
    let mut builder = AppState::builder(store.clone())
        .config(config)
        .elicitations(elicitations.clone());
    let mut mcp = Arc::new(McpServers::default());
    let mut factory = None;
    let writable = location.folder().is_none_or(|dir| writable(dir));
    match app.provider() {
        Some(provider) if writable => {
            let client = crate::mcp::served(&app, &workspace, elicitations.clone());
            let (servers, notices) = app.start_mcp(client, &sandbox).await?;
            crate::settings::say(notices);
            mcp = Arc::new(servers);
            let built = crate::worker::served_factory(
                &app,
                opened,
                sandbox,
                mcp.clone(),
                &args.model.otel,
            )?;
            note(&format!(
                "runs started over HTTP use {} ({}) in {}; risky tool calls {}",
                provider.model,
                provider.kind,
                agent_app::factory::roots_text(&roots),
                match approval {
                    ApprovalMode::Ask => "wait for approval over the API (--approval ask)",
                    ApprovalMode::Auto => "run without asking (--approval auto)",
                    ApprovalMode::Never => "are refused (--approval never)",
                }
            ));
            builder = builder.runner_factory(built.clone());
            factory = Some(built);
        }
        Some(_) => note(&format!(
            "the trace folder {location} cannot be written: the server is read-only (runs cannot \
             be started over HTTP)"
        )),
        None if queue.is_some() => note(
            "no model is configured: runs started here are queued for the workers of the database",
        ),
        None => note(
            "no model is configured: the server is read-only (runs cannot be started over HTTP)",
        ),
    }
    if let Some(queue) = &queue {
        builder = builder.run_queue(queue.clone());
    }
    if let Some(folder) = location.folder() {
        let limits = agent_app::checkpoints::limits(app.file());
        builder = builder.checkpoints(TraceCheckpoints::new(folder.clone(), limits));
    }
    let state = builder
        .build()
        .map_err(|e| UsageError(format!("{e}{}", in_file(app.file()))))?;
    let stop_worker = CancellationToken::new();
    let worker = match (args.worker, &queue, factory) {
        (false, _, _) => None,
        (true, Some(queue), Some(factory)) => Some(tokio::spawn(
            crate::worker::worker_for(&args.work, queue.clone(), store.clone(), factory)
                .run(stop_worker.clone()),
        )),
        (true, _, _) => {
            return Err(UsageError(
                "--worker needs a model to run with (see `agent run --help`)".into(),
            )
            .into());
        }
    };
    let server = Server::bind(state)
        .await
        .context("cannot start the server")?;
    note(&format!(
        "serving {location} on {} — Ctrl-C to stop",
        server.url()
    ));
    let served = server.run(ctrl_c()).await;
    stop_worker.cancel();
    if let Some(worker) = worker {
        let _ = worker.await;
    }
    mcp.shutdown().await;
    served?;
    Ok(ExitCode::Completed)
}

/// Where a configuration error may come from, for its message.
fn in_file(file: &agent_app::config::FileConfig) -> String {
    file.path
        .as_ref()
        .map(|path| format!(" (flags, or {})", path.display()))
        .unwrap_or_default()
}

/// Whether this process may create files in the trace folder (a folder shared read-only is
/// served read-only).
fn writable(dir: &Path) -> bool {
    tempfile::Builder::new()
        .prefix(".agent-write-check")
        .tempfile_in(dir)
        .is_ok()
}

async fn ctrl_c() {
    let _ = tokio::signal::ctrl_c().await;
}

/// A server running beside a run (`agent run --serve`); it stops when dropped.
pub(crate) struct Background {
    stop: CancellationToken,
    state: AppState,
    url: String,
}

impl Background {
    /// The server's state, to track the run and take HTTP approvals.
    pub(crate) fn state(&self) -> &AppState {
        &self.state
    }

    /// The viewer's page of a trace.
    pub(crate) fn page(&self, trace_id: &str) -> String {
        format!("{}/#/traces/{trace_id}", self.url)
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Starts the API and viewer on loopback `port` while a run goes on; the MCP servers'
/// questions wait on [`crate::elicit_http::run_board`].
pub(crate) async fn background(setup: &Setup, port: u16) -> Result<Background> {
    let store: Arc<dyn TraceStore> = setup.store.clone();
    let config = ApiConfig {
        port,
        ..ApiConfig::default()
    };
    let state = AppState::builder(store)
        .config(config)
        .elicitations(crate::elicit_http::run_board())
        .build()
        .map_err(|e| UsageError(e.to_string()))?;
    let server = Server::bind(state.clone())
        .await
        .with_context(|| format!("cannot serve on port {port}; pick another with --serve PORT"))?;
    let url = server.url().trim_end_matches('/').to_owned();
    note(&format!("serving the API and viewer on {url}/"));
    let stop = CancellationToken::new();
    let stopped = stop.clone();
    tokio::spawn(async move { server.run(async move { stopped.cancelled().await }).await });
    Ok(Background { stop, state, url })
}

/// Serves a finished trace's folder read-only until Ctrl-C (the demo's last step).
pub(crate) async fn viewer(store: Arc<dyn TraceStore>, port: u16, trace_id: &str) -> Result<()> {
    let config = ApiConfig {
        port,
        ..ApiConfig::default()
    };
    let state = AppState::builder(store)
        .config(config)
        .build()
        .map_err(|e| UsageError(e.to_string()))?;
    let server = Server::bind(state)
        .await
        .with_context(|| format!("cannot serve on port {port}; pass --port PORT or --no-serve"))?;
    note(&format!(
        "viewer: {url}/#/traces/{trace_id}   — Ctrl-C to stop",
        url = server.url().trim_end_matches('/')
    ));
    server.run(ctrl_c()).await?;
    Ok(())
}
