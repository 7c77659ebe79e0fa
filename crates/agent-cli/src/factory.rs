//! The runner factory of `agent serve` and `agent worker`: runs started over HTTP or claimed
//! from the run queue get this process's model, credentials, profiles, MCP tools and
//! workspace, and checkpoints when traces are kept in a folder. The worker reaches it without
//! going through the HTTP server.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use agent_execution::TraceStore;
use agent_llm::{ChatRequest, ChatStream, LlmClient, LlmError};
use agent_mcp::McpServers;
use agent_runner::approval_rules::ApprovalRules;
use agent_runner::{AgentRunner, AgentTypeConfig, RunnerOptions};
use agent_tools::sandbox::{SandboxConfig, SandboxMode};
use agent_worker::{
    BuildChoices, FactoryError, RunnerFactory, SandboxChoice, WorkspaceError, WorkspaceRoots,
};
use anyhow::{Context, Result};

use crate::cli::ServeModelArgs;
use crate::config::{self, FileConfig};
use crate::exit::UsageError;
use crate::provider;

/// Builds runners for runs started over HTTP, on the configured model and workspace, with the
/// tools of the enabled MCP servers (started once, shared by every run).
pub(crate) struct CliFactory {
    llm: Arc<dyn LlmClient>,
    mcp: Arc<McpServers>,
    pub(crate) model: String,
    /// The provider and base URL, recorded with each new trace (see
    /// `agent_execution::Trace::model_settings`).
    provider: (&'static str, Option<String>),
    workspace: PathBuf,
    context_window: Option<usize>,
    /// `[models."NAME"] max_tokens` and `temperature` of the model.
    sampling: (Option<u32>, Option<f32>),
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
    /// Snapshots of each run's workspace, when traces are kept in a folder.
    checkpoints: Option<crate::checkpoint::Unattended>,
}

impl RunnerFactory for CliFactory {
    fn options(&self) -> RunnerOptions {
        let mut options = RunnerOptions::new(self.model.clone(), self.workspace.clone());
        options.provider = Some(self.provider.0.to_owned());
        options.base_url = self.provider.1.clone();
        options.sub_agents.agent_types = self.profiles.clone();
        options.sub_agents.enabled = true;
        // The approval policy is the API's: the server's --approval mode, or a stricter one a
        // request asks for; the rules of agent.toml apply before it.
        options.approval_rules = self.approval_rules.clone();
        options.clients = self.clients.clone();
        options.context_window = self.context_window;
        (options.max_tokens, options.temperature) = self.sampling;
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
        self.build_with(store, options, &BuildChoices::default())
    }

    fn build_with(
        &self,
        store: Arc<dyn TraceStore>,
        options: RunnerOptions,
        choices: &BuildChoices,
    ) -> Result<AgentRunner, FactoryError> {
        let sandbox = sandbox_for(choices.sandbox)?;
        let llm: Arc<dyn LlmClient> = match choices.stream {
            Some(false) => Arc::new(WholeAnswers(self.llm.clone())),
            _ => self.llm.clone(),
        };
        let mut options = options;
        if choices.stream == Some(false) {
            options.clients = options
                .clients
                .into_iter()
                .map(|(name, client)| {
                    let whole: Arc<dyn LlmClient> = Arc::new(WholeAnswers(client));
                    (name, whole)
                })
                .collect();
        }
        if !options.workspace.is_dir() {
            return Err(FactoryError::Rejected(format!(
                "the workspace {} is not a folder on the server",
                options.workspace.display()
            )));
        }
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
        if options.checkpoints.is_none()
            && let Some(checkpoints) = &self.checkpoints
        {
            options.checkpoints = Some(checkpoints.options(&options.workspace));
        }
        // What the MCP servers say about their tools goes with the tools.
        let tools = crate::mcp::tools_in(&self.mcp, sandbox);
        options.instructions.extend(tools.instructions);
        Ok(AgentRunner::new(store, llm, tools.registry, options))
    }
}

/// The sandbox of a run: this process's, or the stricter one a request chose (a looser one is
/// refused).
fn sandbox_for(choice: Option<SandboxChoice>) -> Result<SandboxConfig, FactoryError> {
    let own = crate::sandbox::current();
    let Some(choice) = choice else {
        return Ok(own);
    };
    let own_choice = choice_of(own.mode);
    if choice < own_choice {
        return Err(FactoryError::Rejected(format!(
            "this node's sandbox is `{own_choice}`: a run may ask for a stricter one, not \
             `{choice}`"
        )));
    }
    let mode = match choice {
        SandboxChoice::Off => SandboxMode::Off,
        SandboxChoice::WorkspaceWrite => SandboxMode::WorkspaceWrite,
        SandboxChoice::ReadOnly => SandboxMode::ReadOnly,
    };
    Ok(SandboxConfig { mode, ..own })
}

/// A sandbox mode as the API and the run queue name it.
pub(crate) fn choice_of(mode: SandboxMode) -> SandboxChoice {
    match mode {
        SandboxMode::Off => SandboxChoice::Off,
        SandboxMode::WorkspaceWrite => SandboxChoice::WorkspaceWrite,
        SandboxMode::ReadOnly => SandboxChoice::ReadOnly,
    }
}

/// A client that asks for whole answers, never streams: a run started with `stream: false`.
struct WholeAnswers(Arc<dyn LlmClient>);

#[async_trait::async_trait]
impl LlmClient for WholeAnswers {
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        let mut request = request;
        request.stream = Some(false);
        self.0.stream(request).await
    }

    fn model_info(&self, model: &str) -> agent_llm::ModelInfo {
        self.0.model_info(model)
    }

    async fn learn_window(&self, model: &str) -> Option<agent_llm::ContextWindow> {
        self.0.learn_window(model).await
    }

    fn known_window(&self, model: &str) -> Option<agent_llm::ContextWindow> {
        self.0.known_window(model)
    }
}

/// The runner factory of runs started over HTTP or taken from the queue, with the MCP servers
/// its runs use (started here with what `client` offers them, listed again when they say their
/// tools changed).
pub(crate) async fn build_factory(
    model: &ServeModelArgs,
    file: &FileConfig,
    workspace: PathBuf,
    provider_config: config::ProviderConfig,
    store: &Arc<dyn TraceStore>,
    location: &crate::store::Location,
    client: agent_mcp::ClientOptions,
) -> Result<(Arc<CliFactory>, Arc<McpServers>)> {
    let approval_rules = crate::approve::rules(file.approvals.as_ref(), file.path.as_deref())?;
    let mut profiles = crate::agents::load(file, &workspace)?;
    let clients = crate::agents::clients(&mut profiles, None, &provider_config, file);
    let mcp = Arc::new(crate::mcp::start(file, &[], client).await?);
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
        provider: (
            provider_config.kind.name(),
            provider_config.base_url.clone(),
        ),
        workspace,
        context_window: provider_config.context_window,
        sampling: (provider_config.max_tokens, provider_config.temperature),
        max_iterations: file.max_iterations,
        max_cost: file.max_cost,
        prices: Arc::new(file.prices()?),
        instructions: !model.no_instructions && file.instructions != Some(false),
        closing_report: !model.no_report && file.report != Some(false),
        approval_rules,
        otel: crate::otel::exporter(model.otel.as_deref(), Some(provider_config.kind))?
            .map(|exporter| (Arc::new(exporter), store.clone())),
        checkpoints: crate::checkpoint::Unattended::new(location, file),
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
    let usage = |error: WorkspaceError| UsageError(format!("{flag}: {error}"));
    // Itself first: a missing or non-folder workspace is said as such.
    let own = WorkspaceRoots::new(std::slice::from_ref(&workspace)).map_err(|_| {
        usage(if workspace.is_file() {
            WorkspaceError::NotAFolder(shown.clone())
        } else {
            WorkspaceError::Missing(shown.clone())
        })
    })?;
    if args.workspace_roots.is_empty() {
        let workspace = own.roots().first().cloned().unwrap_or(workspace);
        return Ok((workspace, own));
    }
    let roots = WorkspaceRoots::new(&args.workspace_roots)
        .map_err(|error| UsageError(format!("--workspace-root: {error}")))?;
    let workspace = roots.check(&workspace, &shown).map_err(|error| {
        let outside = matches!(error, WorkspaceError::Outside(_));
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
pub(crate) fn roots_text(roots: &WorkspaceRoots) -> String {
    let names: Vec<String> = roots
        .roots()
        .iter()
        .map(|root| root.display().to_string())
        .collect();
    format!("workspace roots {}", names.join(", "))
}
