//! `agent serve`, `agent run --serve` and the demo's viewer: the HTTP API and the viewer over a
//! trace folder, with a runner factory when a model is configured (and the folder can be
//! written) so runs can be started and resumed over HTTP.
//!
//! Runs started over HTTP get the server's `--approval` mode (`ask` by default: risky calls wait
//! for a decision over the API) and work only under the `--workspace-root` folders (the current
//! folder by default), which the server's own workspace must lie under too.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_api::{
    ApiConfig, AppState, ApprovalMode, FactoryError, RunnerFactory, Server, WorkspaceRoots,
};
use agent_execution::TraceStore;
use agent_llm::LlmClient;
use agent_mcp::McpServers;
use agent_runner::approval_rules::ApprovalRules;
use agent_runner::{AgentRunner, AgentTypeConfig, RunnerOptions};
use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use crate::cli::{ServeArgs, ServeModelArgs};
use crate::config::{self, FileConfig};
use crate::exit::{ExitCode, UsageError};
use crate::output::note;
use crate::provider;
use crate::run::Setup;

/// Builds runners for runs started over HTTP, on the configured model and workspace, with the
/// tools of the enabled MCP servers (started once, shared by every run).
pub(crate) struct CliFactory {
    llm: Arc<dyn LlmClient>,
    mcp: Arc<McpServers>,
    model: String,
    workspace: PathBuf,
    context_window: Option<usize>,
    max_iterations: Option<u32>,
    max_cost: Option<f64>,
    /// The built-in prices with those of agent.toml's `[models."NAME"]`.
    prices: Arc<agent_llm::PriceTable>,
    /// The agent profiles `explore` and `delegate` calls may name, and their clients.
    profiles: BTreeMap<String, AgentTypeConfig>,
    clients: BTreeMap<String, Arc<dyn LlmClient>>,
    /// Whether each run's prompt carries the instruction files of its workspace and the
    /// environment block.
    instructions: bool,
    /// Whether runs end with a closing report when their plan is done.
    closing_report: bool,
    /// `[approvals]` of agent.toml: calls allowed or denied before the `--approval` mode is
    /// asked (in `never` mode the API keeps only the deny rules).
    approval_rules: ApprovalRules,
    /// Where each run's spans go when it ends, and the store they are read from.
    otel: Option<(Arc<crate::otel::Exporter>, Arc<dyn TraceStore>)>,
}

impl RunnerFactory for CliFactory {
    fn options(&self) -> RunnerOptions {
        let mut options = RunnerOptions::new(self.model.clone(), self.workspace.clone());
        options.sub_agents.agent_types = self.profiles.clone();
        options.sub_agents.enabled = true;
        // The approval policy is the API's: the server's --approval mode, or a stricter one a
        // request asks for; the rules of agent.toml apply before it.
        options.approval_rules = self.approval_rules.clone();
        options.clients = self.clients.clone();
        options.context_window = self.context_window;
        if let Some(max) = self.max_iterations {
            options.limits.max_iterations = max;
        }
        options.limits.max_cost = self.max_cost;
        options.prices = self.prices.clone();
        options.closing_report = self.closing_report;
        options
    }

    fn run_ended(&self, trace_id: &str) {
        if let Some((exporter, store)) = &self.otel {
            let (exporter, store, id) = (exporter.clone(), store.clone(), trace_id.to_owned());
            tokio::spawn(async move {
                crate::otel::send(Some(&exporter), store.as_ref(), &id).await;
            });
        }
    }

    fn build(
        &self,
        store: Arc<dyn TraceStore>,
        options: RunnerOptions,
    ) -> Result<AgentRunner, FactoryError> {
        if !options.workspace.is_dir() {
            return Err(FactoryError::Rejected(format!(
                "the workspace {} is not a folder on the server",
                options.workspace.display()
            )));
        }
        let mut options = options;
        if self.instructions && options.instructions.is_empty() {
            // Read for the run's own workspace, which a request may choose.
            let today = chrono::Local::now().format("%Y-%m-%d").to_string();
            let found = crate::instructions::gather(
                &options.workspace,
                config::user_dir().as_deref(),
                &today,
            )
            .map_err(|error| FactoryError::Rejected(format!("{error:#}")))?;
            if let Some(warning) = &found.warning {
                tracing::warn!("{warning}");
            }
            options.instructions = found.instructions;
        }
        // What the MCP servers say about their tools goes with the tools.
        let tools = crate::mcp::tools(&self.mcp);
        options.instructions.extend(tools.instructions);
        Ok(AgentRunner::new(
            store,
            self.llm.clone(),
            tools.registry,
            options,
        ))
    }
}

/// `agent serve`: serves until Ctrl-C.
pub(crate) async fn serve(args: ServeArgs) -> Result<ExitCode> {
    let file = FileConfig::load()?;
    crate::agents::check_limits(&file)?;
    let (workspace, roots) = workspaces(&args.model, &file)?;
    let opened = crate::store::open(&args.trace_dir, &file).await?;
    let (store, location) = (opened.store, opened.location);
    let queue = crate::worker::queue_for(&location).await?;
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
    let config = ApiConfig {
        host,
        port: args.port,
        token: args.token.clone(),
        approval,
        workspace_roots: roots.roots().to_vec(),
        ..ApiConfig::default()
    };
    let mut builder = AppState::builder(store.clone()).config(config);
    let mut mcp = Arc::new(McpServers::default());
    let mut factory = None;
    let provider = config::resolve_provider(&args.model.llm, &file);
    let writable = location.folder().is_none_or(|dir| writable(dir));
    match provider {
        Some(provider_config) if writable => {
            let kind = provider_config.kind;
            let built =
                build_factory(&args.model, &file, workspace, provider_config, &store).await?;
            mcp = built.1;
            note(&format!(
                "runs started over HTTP use {} ({kind:?}) in {}; risky tool calls {}",
                built.0.model,
                roots_text(&roots),
                match approval {
                    ApprovalMode::Ask => "wait for approval over the API (--approval ask)",
                    ApprovalMode::Auto => "run without asking (--approval auto)",
                    ApprovalMode::Never => "are refused (--approval never)",
                }
            ));
            builder = builder.runner_factory(built.0.clone());
            factory = Some(built.0);
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
    let state = builder.build().map_err(|e| UsageError(e.to_string()))?;
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

/// The runner factory of runs started over HTTP or taken from the queue, with the MCP servers
/// its runs use (started here, listed again when they say their tools changed).
pub(crate) async fn build_factory(
    model: &ServeModelArgs,
    file: &FileConfig,
    workspace: PathBuf,
    provider_config: config::ProviderConfig,
    store: &Arc<dyn TraceStore>,
) -> Result<(Arc<CliFactory>, Arc<McpServers>)> {
    let approval_rules = crate::approve::rules(file.approvals.as_ref(), file.path.as_deref())?;
    let mut profiles = crate::agents::load(file, &workspace)?;
    let clients = crate::agents::clients(&mut profiles, None, &provider_config, file);
    let mcp = Arc::new(crate::mcp::start(file, &[], crate::mcp::unattended(None)).await?);
    // Runs take the servers' tools as listed when they start: list them again when a server
    // says they changed.
    let servers = mcp.clone();
    tokio::spawn(async move { servers.follow_tool_changes(|_| {}).await });
    let factory = CliFactory {
        profiles,
        clients,
        llm: provider::client(&provider_config)?,
        mcp: mcp.clone(),
        model: provider_config.model.clone(),
        workspace,
        context_window: provider_config.context_window,
        max_iterations: file.max_iterations,
        max_cost: file.max_cost,
        prices: Arc::new(file.prices()?),
        instructions: !model.no_instructions && file.instructions != Some(false),
        closing_report: !model.no_report && file.report != Some(false),
        approval_rules,
        otel: crate::otel::exporter(model.otel.as_deref(), Some(provider_config.kind))?
            .map(|exporter| (Arc::new(exporter), store.clone())),
    };
    Ok((Arc::new(factory), mcp))
}

/// The server's own workspace (canonical) and the workspace roots. `--workspace` (else
/// agent.toml's, else the current folder) must be an existing folder (a usage error, exit code 2,
/// otherwise); the roots are the `--workspace-root` folders, under one of which it must then lie,
/// or, when none is given, that workspace itself (so the default is the folder `agent serve` was
/// started in, and naming a workspace never opens more than that folder to requests).
pub(crate) fn workspaces(
    args: &ServeModelArgs,
    file: &FileConfig,
) -> Result<(PathBuf, WorkspaceRoots)> {
    let (workspace, flag) = match (&args.workspace, &file.workspace) {
        (Some(dir), _) => (dir.clone(), "--workspace"),
        (None, Some(dir)) => (dir.clone(), "agent.toml's `workspace`"),
        (None, None) => (
            std::env::current_dir().context("cannot read the current folder")?,
            "the current folder",
        ),
    };
    let shown = workspace.display().to_string();
    let usage = |error: agent_api::WorkspaceError| UsageError(format!("{flag}: {error}"));
    // Itself first: a missing or non-folder workspace is said as such.
    let own = WorkspaceRoots::new(std::slice::from_ref(&workspace)).map_err(|_| {
        usage(if workspace.is_file() {
            agent_api::WorkspaceError::NotAFolder(shown.clone())
        } else {
            agent_api::WorkspaceError::Missing(shown.clone())
        })
    })?;
    if args.workspace_roots.is_empty() {
        let workspace = own.roots().first().cloned().unwrap_or(workspace);
        return Ok((workspace, own));
    }
    let roots = WorkspaceRoots::new(&args.workspace_roots)
        .map_err(|error| UsageError(format!("--workspace-root: {error}")))?;
    let workspace = roots.check(&workspace, &shown).map_err(|error| {
        let outside = matches!(error, agent_api::WorkspaceError::Outside(_));
        let mut message = usage(error).0;
        if outside {
            message.push_str(&format!(
                " ({}); add `--workspace-root {shown}` to let runs work there",
                roots_text(&roots)
            ));
        }
        UsageError(message)
    })?;
    Ok((workspace, roots))
}

/// The roots, for messages.
fn roots_text(roots: &WorkspaceRoots) -> String {
    let names: Vec<String> = roots
        .roots()
        .iter()
        .map(|root| root.display().to_string())
        .collect();
    format!("workspace roots {}", names.join(", "))
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

/// Starts the API and viewer on loopback `port` while a run goes on.
pub(crate) async fn background(setup: &Setup, port: u16) -> Result<Background> {
    let store: Arc<dyn TraceStore> = setup.store.clone();
    let config = ApiConfig {
        port,
        ..ApiConfig::default()
    };
    let state = AppState::builder(store)
        .config(config)
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
