//! `agent run` and `agent resume`: build a runner from the configuration, run or continue a
//! trace with live progress, print the answer, and exit with a code that says how it ended.

use std::io::IsTerminal;
use std::sync::Arc;

use agent_execution::{TraceStatus, TraceStore, watch_live};
use agent_runner::agents::DEFAULT;
use agent_runner::{AgentRunner, RunOutcome, RunnerOptions, StopReason, recorded_agents};
use anyhow::{Context, Result};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::cli::{ModelArgs, OutputFormat, ResumeArgs, RunArgs};
use crate::config::{self, FileConfig, ProviderConfig};
use crate::exit::{ExitCode, UsageError};
use crate::output::{note, print};
use crate::progress::{self, ProgressMode, status_word};
use crate::{agents, approve, ids, instructions, mcp, plan, provider, task};

/// Everything a run needs, resolved from flags, environment and agent.toml.
pub(crate) struct Setup {
    pub(crate) store: Arc<dyn TraceStore>,
    pub(crate) runner: AgentRunner,
    pub(crate) provider: ProviderConfig,
    /// Whether progress prints reasoning in full (`--show-reasoning`, or agent.toml).
    pub(crate) show_reasoning: bool,
    /// The terminal approver, when risky calls are asked about (not with `--yes`).
    pub(crate) approver: Option<Arc<approve::TerminalApprover>>,
    /// Where the run's spans go when it ends (`--otel`, `OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub(crate) otel: Option<crate::otel::Exporter>,
}

impl Setup {
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
    let file = FileConfig::load()?;
    let prepared = prepare(args, tools, agent, None, &file)?;
    let store = crate::store::open(&args.trace_dir, &file).await?.store;
    Ok(prepared.with_store(store))
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
    approver: Option<Arc<approve::TerminalApprover>>,
    otel: Option<crate::otel::Exporter>,
}

impl Prepared {
    fn with_store(self, store: Arc<dyn TraceStore>) -> Setup {
        let runner = AgentRunner::new(store.clone(), self.client, self.registry, self.options);
        Setup {
            store,
            runner,
            provider: self.provider,
            show_reasoning: self.show_reasoning,
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
        registry: tools.registry,
        options,
        provider,
        show_reasoning: args.show_reasoning || file.show_reasoning == Some(true),
        approver,
        otel,
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

/// `agent run`.
pub(crate) async fn run(args: RunArgs) -> Result<ExitCode> {
    let task = task::read(args.task.as_deref(), args.task_file.as_deref()).await?;
    if let Some(given) = &args.continue_trace {
        return continue_run(&args, given, task).await;
    }
    let mcp = mcp::start(
        &FileConfig::load()?,
        &args.model.mcp,
        mcp::on_terminal(args.model.workspace.as_deref()),
    )
    .await?;
    let setup = setup(&args.model, mcp::tools(&mcp), None).await?;
    let trace_id = match (&args.trace, &args.plan, task) {
        (Some(trace_id), _, _) => {
            // The plan runs as this run's profile, whichever wrote it, and resumes as it.
            plan::prepare_run(&setup.runner, trace_id).await?;
            trace_id.clone()
        }
        (None, Some(template), task) => {
            plan::start_from_template(&setup.runner, template, &args.vars, task).await?
        }
        (None, None, Some(task)) => setup.runner.create(&task).await?,
        (None, None, None) => {
            return Err(UsageError("a task is needed, or --trace TRACE_ID".into()).into());
        }
    };
    let code = execute(&setup, &trace_id, &args.model, None).await;
    mcp.shutdown().await;
    code
}

/// `agent run --continue`: the trace (named by a unique prefix, or the newest with `--last`)
/// takes the task as its next user message and runs again under the profile it was started
/// with, as `agent resume` would run it.
async fn continue_run(args: &RunArgs, given: &str, message: Option<String>) -> Result<ExitCode> {
    let message = message.unwrap_or_default();
    if message.trim().is_empty() {
        return Err(UsageError(
            "--continue needs a message: agent run --continue ID \"...\"".into(),
        )
        .into());
    }
    let file = FileConfig::load()?;
    let store = crate::store::open(&args.model.trace_dir, &file)
        .await?
        .store;
    let trace_id = match (given.is_empty(), args.last) {
        (true, true) => ids::last(store.as_ref()).await?,
        (false, false) => ids::resolve(store.as_ref(), given).await?,
        (true, false) => {
            return Err(UsageError("--continue needs a trace id, or --last".into()).into());
        }
        (false, true) => {
            return Err(UsageError("give --continue a trace id or --last, not both".into()).into());
        }
    };
    let profile = recorded_agents(store.as_ref(), &trace_id).await?.main;
    drop(store);
    let mcp = mcp::start(
        &file,
        &args.model.mcp,
        mcp::on_terminal(args.model.workspace.as_deref()),
    )
    .await?;
    let setup = setup(&args.model, mcp::tools(&mcp), profile.as_deref()).await?;
    let code = execute(&setup, &trace_id, &args.model, Some(message.as_str())).await;
    mcp.shutdown().await;
    code
}

/// `agent resume`: a trace resumes under the profile its main trace was started with (a
/// sub-trace keeps its own agent type below it), unless `--agent` names another.
pub(crate) async fn resume(args: ResumeArgs) -> Result<ExitCode> {
    let file = FileConfig::load()?;
    let store = crate::store::open(&args.model.trace_dir, &file)
        .await?
        .store;
    let trace_id = ids::resolve(store.as_ref(), &args.trace_id).await?;
    let profile = recorded_agents(store.as_ref(), &trace_id).await?.main;
    drop(store);
    let mcp = mcp::start(
        &file,
        &args.model.mcp,
        mcp::on_terminal(args.model.workspace.as_deref()),
    )
    .await?;
    let setup = setup(&args.model, mcp::tools(&mcp), profile.as_deref()).await?;
    let code = execute(&setup, &trace_id, &args.model, None).await;
    mcp.shutdown().await;
    code
}

/// Runs the trace (new, stopped and resumed, or continued with `message`) with progress and
/// Ctrl-C handling, then reports.
async fn execute(
    setup: &Setup,
    trace_id: &str,
    args: &ModelArgs,
    message: Option<&str>,
) -> Result<ExitCode> {
    let cancel = CancellationToken::new();
    let since = setup
        .store
        .get_events(trace_id, 0)
        .await?
        .last()
        .map_or(0, |e| e.event_id);
    let progress = tokio::spawn(progress::follow(
        watch_live(setup.store.clone(), trace_id, since),
        match args.output() {
            OutputFormat::Text => ProgressMode::Auto,
            OutputFormat::Json => ProgressMode::Off,
            OutputFormat::StreamJson => ProgressMode::StreamJson,
        },
        setup.show_reasoning,
    ));
    let interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            note("cancelling the run (the trace can be resumed)...");
            interrupt.cancel();
        }
    });
    let server = match args.serve {
        Some(port) => Some(crate::serve::background(setup, port).await?),
        None => None,
    };
    if let Some(server) = &server {
        note(&format!("this run: {}", server.page(trace_id)));
    }
    warn_if_unpriced(setup, trace_id).await?;
    // A new trace has nothing to answer, so resuming it simply starts it.
    let handle = match message {
        Some(message) => {
            setup
                .runner
                .continue_in_background(trace_id, message, cancel)
                .await?
        }
        None => setup.runner.resume_in_background(trace_id, cancel).await?,
    };
    let outcome = match &server {
        Some(server) => match server.state().runs().track(handle).wait().await {
            Some(result) => result?,
            None => anyhow::bail!("the run's task ended abnormally"),
        },
        None => handle.wait().await?,
    };
    // Progress ends at trace_completed; give it a moment to print the last lines.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), progress).await;
    crate::otel::send(setup.otel.as_ref(), setup.store.as_ref(), trace_id).await;
    report(&outcome, args.output(), &setup.provider);
    setup.report_refusals();
    if let Some(server) = &server {
        // The open viewer keeps the result: serve until Ctrl-C.
        note(&format!(
            "the run ended; still serving {} — Ctrl-C to stop",
            server.page(trace_id)
        ));
        let _ = tokio::signal::ctrl_c().await;
    }
    Ok(exit_code(&outcome))
}

/// Warns on stderr when the run has a cost budget (a flag, the profile, or the one the trace
/// stored) but its model has no price, so its spending cannot be counted.
async fn warn_if_unpriced(setup: &Setup, trace_id: &str) -> Result<()> {
    let options = setup.runner.options();
    let model = &setup.runner.spec().model;
    if options.prices.price(model).is_some() {
        return Ok(());
    }
    let stored = recorded_agents(setup.store.as_ref(), trace_id)
        .await?
        .main_limits;
    let limits = options
        .limits
        .for_trace(stored.as_ref(), &options.overrides);
    if limits.max_cost.is_some() {
        note(&unpriced_warning(model));
    }
    Ok(())
}

/// The warning for a cost budget on a model without a price.
pub(crate) fn unpriced_warning(model: &str) -> String {
    format!(
        "agent: warning: the cost of model {model} is unknown: set [models.\"{model}\"] input/output \
         prices in agent.toml; --max-cost cannot be enforced"
    )
}

/// Prints the outcome: the answer on stdout, or one JSON object with `--json` (the last line of
/// `stream-json`, as its `result` event).
fn report(outcome: &RunOutcome, format: OutputFormat, provider: &ProviderConfig) {
    if format != OutputFormat::Text {
        let mut value = json!({
            "trace_id": outcome.trace_id,
            "status": status_word(outcome.status),
            "response": outcome.response,
            "error": outcome.error,
            "iterations": outcome.iterations,
            "model": provider.model,
            "totals": {
                "messages": outcome.stats.total_messages,
                "tokens": outcome.stats.total_tokens,
                "cost": outcome.stats.total_cost,
            },
            "totals_with_sub_traces": {
                "messages": outcome.stats_with_sub_traces.total_messages,
                "tokens": outcome.stats_with_sub_traces.total_tokens,
                "cost": outcome.stats_with_sub_traces.total_cost,
            },
        });
        if format == OutputFormat::StreamJson {
            value["event"] = json!("result");
        }
        print(&value.to_string());
        return;
    }
    match outcome.status {
        // When stdout and stderr are both the terminal, the answer was just shown as it
        // streamed: printing it again would show it twice. Piped, stdout carries it.
        TraceStatus::Completed
            if std::io::stdout().is_terminal() && std::io::stderr().is_terminal() => {}
        TraceStatus::Completed => print(&crate::output::clean(
            outcome.response.as_deref().unwrap_or_default(),
        )),
        _ => {
            let error = outcome.error.as_deref().unwrap_or("no error recorded");
            note(&format!(
                "agent: the run ended {}: {error}\n  trace {} can be continued with `agent resume {}`",
                status_word(outcome.status),
                outcome.trace_id,
                outcome.trace_id
            ));
        }
    }
    let total = &outcome.stats_with_sub_traces;
    let mut line = format!(
        "trace {} · {} messages · {} tokens · ${:.4}",
        outcome.trace_id, total.total_messages, total.total_tokens, total.total_cost
    );
    if total != &outcome.stats {
        line.push_str(&format!(
            " with sub-traces (the main trace alone: {} messages · ${:.4})",
            outcome.stats.total_messages, outcome.stats.total_cost
        ));
    }
    note(&line);
}

/// The exit code of an outcome: 0 completed, 1 failed, 3 limit hit, 130 cancelled.
pub(crate) fn exit_code(outcome: &RunOutcome) -> ExitCode {
    match outcome.stop {
        StopReason::Completed => ExitCode::Completed,
        StopReason::Cancelled => ExitCode::Cancelled,
        stop if stop.is_limit() => ExitCode::Limit,
        _ => ExitCode::Failed,
    }
}
