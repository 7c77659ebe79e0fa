//! What every command that runs the agent builds first: the store, the model client, the
//! profile and the runner, resolved from flags, environment and agent.toml (`agent run`,
//! `resume`, `chat`, `plan`, `acp`, `serve --with` a run).

use std::sync::Arc;

use agent_execution::TraceStore;
use agent_runner::agents::DEFAULT;
use agent_runner::{AgentRunner, RunnerOptions};
use anyhow::{Context, Result};

use crate::cli::ModelArgs;
use crate::config::{self, FileConfig, ProviderConfig};
use crate::exit::UsageError;
use crate::output::note;
use crate::{agents, approve, instructions, mcp, provider};

/// Everything a run needs, resolved from flags, environment and agent.toml.
pub(crate) struct Setup {
    pub(crate) store: Arc<dyn TraceStore>,
    pub(crate) runner: AgentRunner,
    pub(crate) provider: ProviderConfig,
    /// Whether progress prints reasoning in full (`--show-reasoning`, or agent.toml).
    pub(crate) show_reasoning: bool,
    /// Whether progress shows the changes of file edits (`--yes`: no approval showed them).
    pub(crate) show_edits: bool,
    /// The terminal approver, when risky calls are asked about (not with `--yes`).
    pub(crate) approver: Option<Arc<approve::TerminalApprover>>,
    /// Where the run's spans go when it ends (`--otel`, `OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub(crate) otel: Option<crate::otel::Exporter>,
}

impl Setup {
    /// How a run of this setup is shown, with progress in `mode`.
    pub(crate) fn shown(&self, mode: crate::progress::ProgressMode) -> crate::progress::Shown {
        crate::progress::Shown {
            mode,
            show_reasoning: self.show_reasoning,
            show_edits: self.show_edits,
        }
    }

    /// Says on stderr how many risky calls were refused for lack of a terminal since the last
    /// time, and how to allow them.
    pub(crate) fn report_refusals(&self) {
        let refused = self.approver.as_ref().map_or(0, |a| a.take_refused());
        if refused > 0 {
            let calls = if refused == 1 {
                "call was"
            } else {
                "calls were"
            };
            note(&format!(
                "agent: {refused} risky tool {calls} refused: there was no terminal to ask on. \
                 Rerun with --yes to approve them, or allow them in agent.toml, e.g. \
                 [approvals] allow = [\"bash(cargo test)\", \"write_file(src/**)\"]"
            ));
        }
    }
}

/// Resolves the configuration and builds the store and runner for `args`, running as the
/// profile `--agent` names, else `agent`, else `default`. The store is opened last, once the
/// configuration has been checked.
pub(crate) async fn setup(
    args: &ModelArgs,
    tools: mcp::RunTools,
    agent: Option<&str>,
) -> Result<Setup> {
    setup_asking(args, tools, agent, None).await
}

/// Like [`setup`], with risky calls decided by `approval` when given (the full-screen UI's
/// modal) instead of the terminal prompt; `--yes` still approves everything.
pub(crate) async fn setup_asking(
    args: &ModelArgs,
    tools: mcp::RunTools,
    agent: Option<&str>,
    approval: Option<agent_runner::Approval>,
) -> Result<Setup> {
    // The token encoding loads on a thread of its own while the configuration is read, the
    // store opened and the workspace snapshotted, instead of when the first step needs it.
    agent_llm::prepare_token_estimates();
    let file = FileConfig::load()?;
    let mut prepared = prepare(args, tools, agent, approval, &file)?;
    let opened = crate::store::open_for_run(args, &file).await?;
    let workspace = prepared.options.workspace.clone();
    prepared.options.checkpoints = crate::checkpoint::options(
        &opened.location,
        &workspace,
        &file,
        prepared.abandon_rollback,
    );
    Ok(prepared.with_store(opened.store))
}

/// Like [`setup`], with risky calls decided by `approval` when given (an editor asking its
/// user, for `agent acp`) instead of the terminal or `--yes`, recording into `store` (one store
/// per process, so no two instances hold locks on the same traces).
pub(crate) fn setup_with(
    args: &ModelArgs,
    tools: mcp::RunTools,
    agent: Option<&str>,
    approval: Option<agent_runner::Approval>,
    store: Arc<dyn TraceStore>,
) -> Result<Setup> {
    let file = FileConfig::load()?;
    Ok(prepare(args, tools, agent, approval, &file)?.with_store(store))
}

/// A run's settings, resolved and checked, waiting for the store to record into.
struct Prepared {
    client: Arc<dyn agent_llm::LlmClient>,
    registry: agent_tools::ToolRegistry,
    options: RunnerOptions,
    provider: ProviderConfig,
    show_reasoning: bool,
    show_edits: bool,
    approver: Option<Arc<approve::TerminalApprover>>,
    otel: Option<crate::otel::Exporter>,
    /// The profile's `abandon_rollback`, over agent.toml's top-level one.
    abandon_rollback: Option<agent_checkpoint::AbandonRollback>,
}

impl Prepared {
    fn with_store(self, store: Arc<dyn TraceStore>) -> Setup {
        let runner = AgentRunner::new(store.clone(), self.client, self.registry, self.options);
        Setup {
            store,
            runner,
            provider: self.provider,
            show_reasoning: self.show_reasoning,
            show_edits: self.show_edits,
            approver: self.approver,
            otel: self.otel,
        }
    }
}

/// Everything of [`setup`] but the store.
fn prepare(
    args: &ModelArgs,
    tools: mcp::RunTools,
    agent: Option<&str>,
    approval: Option<agent_runner::Approval>,
    file: &FileConfig,
) -> Result<Prepared> {
    let workspace = match args.workspace.clone().or_else(|| file.workspace.clone()) {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    check_workspace(&workspace)?;
    let mut profiles = agents::load(file, &workspace)?;
    let name = args.agent.as_deref().or(agent).unwrap_or(DEFAULT);
    if args.agent.is_none()
        && let Some(recorded) = agent
        && !profiles.contains_key(recorded)
    {
        return Err(UsageError(format!(
            "the trace ran as the agent profile {recorded:?}, which is not defined any more; \
             pass --agent NAME to continue it as another (see `agent agents`)"
        ))
        .into());
    }
    let profile = agents::get(&profiles, name)?;
    let abandon_rollback = agents::abandon_rollback(file, &workspace, name)?;
    let provider = config::resolve_provider(&agents::provider_args(&args.llm, profile), file)
        .ok_or_else(|| UsageError(config::NO_PROVIDER.into()))?;
    let client = provider::client(&provider)?;
    let otel = crate::otel::exporter(args.otel.as_deref(), Some(provider.kind))?;
    let mut options = RunnerOptions::new(provider.model.clone(), workspace);
    options.clients = agents::clients(&mut profiles, Some(name), &provider, file);
    options.sub_agents.agent_types = profiles;
    // The profile's limits are the defaults; the flags given override them and the limits a
    // resumed trace stored.
    let mut options = options
        .with_agent(name)
        .map_err(|error| UsageError(format!("--agent: {error}")))?;
    options.model = provider.model.clone();
    // Recorded with each new trace, so that a resume reaches the same model.
    options.provider = Some(provider.kind.name().to_owned());
    options.base_url = provider.base_url.clone();
    if let Some(max) = args.max_iterations {
        if max == 0 {
            return Err(UsageError("--max-iterations must be at least 1".into()).into());
        }
        options = options.with_max_iterations(max);
    }
    if let Some(cost) = args.max_cost {
        if !cost.is_finite() || cost < 0.0 {
            return Err(
                UsageError(format!("--max-cost {cost} is not an amount of dollars")).into(),
            );
        }
        options = options.with_max_cost(cost);
    }
    options.prices = Arc::new(file.prices()?);
    options.context_window = provider.context_window;
    options.max_tokens = provider.max_tokens;
    options.temperature = provider.temperature;
    // Flags (and their environment variables), then the file; a profile's own values win for
    // its sub-traces and fill in what the main trace leaves unset.
    options.reasoning_effort = args
        .reasoning_effort
        .or(file.reasoning_effort)
        .map(|effort| effort.as_str().to_owned());
    options.thinking_budget = args.thinking_budget.or(file.thinking_budget);
    if options.thinking_budget.is_some_and(|budget| budget < 1024) {
        return Err(UsageError("thinking_budget: must be at least 1024 tokens".into()).into());
    }
    let (policy, approver) = approve::policy(args.yes, options.workspace.clone());
    let (approval, approver) = match approval {
        Some(approval) if !args.yes => (approval, None),
        _ => (policy, approver),
    };
    options.approval = approval;
    let mut registry = tools.registry;
    if let Some(approver) = &approver {
        // Asked on the terminal: so is a rerun of a command the sandbox refused.
        crate::sandbox::ask_reruns(approver.clone());
        registry = mcp::asking_reruns(registry);
    }
    options.approval_rules = approve::rules(file.approvals.as_ref(), file.path.as_deref())?;
    if !args.no_instructions && file.instructions != Some(false) {
        let today = chrono::Local::now().format("%Y-%m-%d").to_string();
        let found =
            instructions::gather(&options.workspace, config::user_dir().as_deref(), &today)?;
        if let Some(warning) = &found.warning {
            note(warning);
        }
        options.instructions = found.instructions;
    }
    // What the MCP servers say about their tools goes with the tools, whatever --no-instructions.
    options.instructions.extend(tools.instructions);
    options.closing_report = !args.no_report && file.report != Some(false);
    options.sub_agents.enabled = true;
    Ok(Prepared {
        client,
        registry,
        options,
        provider,
        show_reasoning: args.show_reasoning || file.show_reasoning == Some(true),
        show_edits: args.yes,
        approver,
        otel,
        abandon_rollback,
    })
}

/// A workspace that is missing or not a folder is a usage error (exit 2) that says which.
pub(crate) fn check_workspace(workspace: &std::path::Path) -> Result<(), UsageError> {
    match std::fs::metadata(workspace) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(UsageError(format!(
            "the workspace {} is not a folder",
            workspace.display()
        ))),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Err(UsageError(format!(
            "the workspace {} does not exist",
            workspace.display()
        ))),
        Err(error) => Err(UsageError(format!(
            "the workspace {} cannot be read: {error}",
            workspace.display()
        ))),
    }
}
