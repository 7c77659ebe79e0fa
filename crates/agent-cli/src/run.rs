//! `agent run` and `agent resume`: build a runner from the configuration, run or continue a
//! trace with live progress, print the answer, and exit with a code that says how it ended.

use agent_execution::meta::{MessageMeta, ToolOutcome};
use agent_execution::{TraceStatus, watch_live};
use agent_runner::{RunOutcome, StopReason, recorded_agents};
use anyhow::Result;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use agent_app::App;
use agent_app::provider::ProviderConfig;
use agent_app::recorded::Recorded;
use agent_tools::SandboxMode;

use crate::cli::{ModelArgs, OutputFormat, ResumeArgs, RunArgs};
use crate::exit::{ExitCode, UsageError, exit_code};
use crate::output::{note, print};
use crate::progress::{self, ProgressMode, status_word};
use crate::setup::{self, Setup};
use crate::{ids, plan, task};

/// `agent run`.
pub(crate) async fn run(args: RunArgs, sandbox: Option<SandboxMode>) -> Result<ExitCode> {
    // Loads while the task is read and MCP servers start.
    agent_llm::prepare_token_estimates();
    let app = crate::settings::app(crate::settings::overrides(&args.model, sandbox))?;
    if args.continue_trace.is_some() || args.last {
        return continue_run(&args, app).await;
    }
    let task = task::read(args.task.as_deref(), args.task_file.as_deref()).await?;
    let serve = args.model.serve.is_some();
    let door = setup::door(app, None, |app, workspace| {
        crate::mcp::for_run(app, workspace, serve)
    })
    .await?;
    let setup = setup::setup(
        &door,
        None,
        args.model.yes,
        None,
        args.model.otel.as_deref(),
    )?;
    let trace_id = match (&args.trace, &args.plan, task) {
        (Some(given), _, _) => {
            let trace_id = ids::resolve(setup.store.as_ref(), given).await?;
            // The plan runs as this run's profile, whichever wrote it, and resumes as it.
            plan::prepare_run(&setup.runner, &trace_id).await?;
            trace_id
        }
        (None, Some(template), task) => {
            plan::start_from_template(&setup.runner, template, &args.vars, task).await?
        }
        (None, None, Some(task)) => {
            // `/name args` of a custom command is its prompt.
            let task = door.factory.prompt(&task, &args.images, None)?;
            setup
                .runner
                .create(agent_execution::message::UserInput {
                    text: &task.text,
                    images: &task.images,
                })
                .await?
        }
        (None, None, None) => {
            return Err(UsageError("a task is needed, or --trace TRACE_ID".into()).into());
        }
    };
    let code = execute(&setup, &trace_id, &args.model, None, args.print).await;
    door.mcp.shutdown().await;
    code
}

/// `agent run --continue [ID]` (or `--last`): the trace (named by a unique prefix, else the
/// newest of the project) takes the task as its next user message and runs again with what it
/// ran with (profile, model, limits), as `agent resume` would run it. One value and no task
/// (`agent run -c "next message"`) is the message to the newest trace, unless it names a trace.
async fn continue_run(args: &RunArgs, app: App) -> Result<ExitCode> {
    let opened = app.open_store().await?;
    let store = opened.store.clone();
    let mut given = args
        .continue_trace
        .clone()
        .filter(|given| !given.is_empty());
    let mut task = args.task.clone();
    if task.is_none()
        && args.task_file.is_none()
        && let Some(value) = given.take()
    {
        let names_a_trace =
            ids::looks_like_id(&value) && ids::resolve(store.as_ref(), &value).await.is_ok();
        if names_a_trace {
            given = Some(value);
        } else {
            task = Some(value);
        }
    }
    let message = task::read(task.as_deref(), args.task_file.as_deref())
        .await?
        .unwrap_or_default();
    if message.trim().is_empty() {
        return Err(UsageError(
            "--continue needs a message: agent run --continue [ID] \"...\"".into(),
        )
        .into());
    }
    let trace_id = ids::continued(store.as_ref(), given.as_deref(), args.last).await?;
    let (app, recorded) = with_recorded(app, store.as_ref(), &trace_id).await?;
    let serve = args.model.serve.is_some();
    let door = setup::door(app, Some(opened), |app, workspace| {
        crate::mcp::for_run(app, workspace, serve)
    })
    .await?;
    let setup = setup::setup(
        &door,
        recorded.profile.as_deref(),
        args.model.yes,
        None,
        args.model.otel.as_deref(),
    )?;
    let message = door.factory.expand(&message, None)?;
    let code = execute(
        &setup,
        &trace_id,
        &args.model,
        Some(message.as_str()),
        args.print,
    )
    .await;
    door.mcp.shutdown().await;
    code
}

/// `app` with what the trace `trace_id` recorded filling what its overrides leave unset (says
/// on stderr which overrides set something else), and what it recorded.
pub(crate) async fn with_recorded(
    app: App,
    store: &dyn agent_execution::TraceStore,
    trace_id: &str,
) -> Result<(App, Recorded)> {
    let recorded = agent_app::recorded::read(store, trace_id).await?;
    let (overrides, notice) = recorded.apply(app.overrides());
    if let Some(notice) = notice {
        note(&notice);
    }
    Ok((app.with_overrides(overrides), recorded))
}

/// `agent resume [ID]`: a trace resumes with what its main trace was started with (profile,
/// provider, model, base URL, limits; a sub-trace keeps its own agent type below it), unless
/// flags name others. Without an id, the trace is chosen from a list (on a terminal). A
/// completed trace has nothing to resume: the error names the command that continues it.
pub(crate) async fn resume(args: ResumeArgs, sandbox: Option<SandboxMode>) -> Result<ExitCode> {
    let app = crate::settings::app(crate::settings::overrides(&args.model, sandbox))?;
    let opened = app.open_store().await?;
    let store = opened.store.clone();
    let trace_id = match &args.trace_id {
        Some(given) => ids::resolve(store.as_ref(), given).await?,
        None => crate::pick::pick(store.as_ref(), "agent resume").await?,
    };
    if let Some(trace) = store.get_trace(&trace_id).await?
        && trace.status == TraceStatus::Completed
    {
        return Err(UsageError(format!(
            "trace {trace_id} has completed: there is nothing to resume. To give it another \
             turn, run: agent run --continue {} \"<message>\"",
            crate::ids::short(&trace_id)
        ))
        .into());
    }
    let (app, recorded) = with_recorded(app, store.as_ref(), &trace_id).await?;
    let serve = args.model.serve.is_some();
    let door = setup::door(app, Some(opened), |app, workspace| {
        crate::mcp::for_run(app, workspace, serve)
    })
    .await?;
    let setup = setup::setup(
        &door,
        recorded.profile.as_deref(),
        args.model.yes,
        None,
        args.model.otel.as_deref(),
    )?;
    let code = execute(&setup, &trace_id, &args.model, None, false).await;
    door.mcp.shutdown().await;
    code
}

/// Runs the trace (new, stopped and resumed, or continued with `message`) with progress and
/// Ctrl-C handling, then reports.
async fn execute(
    setup: &Setup,
    trace_id: &str,
    args: &ModelArgs,
    message: Option<&str>,
    headless: bool,
) -> Result<ExitCode> {
    let cancel = CancellationToken::new();
    let since = setup
        .store
        .get_events(trace_id, 0)
        .await?
        .last()
        .map_or(0, |e| e.event_id);
    let messages_before = setup.store.get_trace_messages_shared(trace_id).await?.len();
    let progress = tokio::spawn(progress::follow(
        watch_live(setup.store.clone(), trace_id, since),
        setup.shown(match args.output() {
            OutputFormat::Text if headless => ProgressMode::Off,
            OutputFormat::Text => ProgressMode::Auto,
            OutputFormat::Json => ProgressMode::Off,
            OutputFormat::StreamJson => ProgressMode::StreamJson,
        }),
    ));
    let interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            // Cancelled first: an approval question being asked ends at once, and the note
            // can then be written.
            interrupt.cancel();
            tokio::task::block_in_place(|| {
                note("cancelling the run (the trace can be resumed)...");
            });
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
    let streamed = match tokio::time::timeout(std::time::Duration::from_secs(2), progress).await {
        Ok(Ok(streamed)) => streamed,
        _ => String::new(),
    };
    crate::otel::send(setup.otel.as_ref(), setup.store.as_ref(), trace_id).await;
    let mut code = exit_code(&outcome);
    if headless {
        print_answer(&outcome);
        code = refused_is_failed(setup, trace_id, messages_before, code).await?;
    } else {
        report(&outcome, args.output(), &setup.provider, &streamed);
    }
    setup.report_refusals();
    if let Some(server) = &server {
        // The open viewer keeps the result: serve until Ctrl-C.
        note(&format!(
            "the run ended; still serving {} — Ctrl-C to stop",
            server.page(trace_id)
        ));
        let _ = tokio::signal::ctrl_c().await;
    }
    Ok(code)
}

/// `-p`: a run that completed although some of its tool calls were refused (by the approval
/// policy, a rule or the sandbox; nobody is asked) did not do what it was asked, as far as a
/// script can tell: it says so and exits 1 instead of `code`. Only the run's own calls count,
/// those recorded after the `before` messages the trace had.
async fn refused_is_failed(
    setup: &Setup,
    trace_id: &str,
    before: usize,
    code: ExitCode,
) -> Result<ExitCode> {
    if code != ExitCode::Completed {
        return Ok(code);
    }
    let messages = setup.store.get_trace_messages_shared(trace_id).await?;
    let refused = messages
        .iter()
        .skip(before)
        .filter(|m| MessageMeta::of(m).outcome == Some(ToolOutcome::Refused))
        .count();
    if refused == 0 {
        return Ok(code);
    }
    let calls = if refused == 1 {
        "call was"
    } else {
        "calls were"
    };
    note(&format!(
        "agent: {refused} tool {calls} refused, so the task may not be done (exit code 1); \
         `agent show {trace_id}` says which"
    ));
    Ok(ExitCode::Failed)
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

/// Prints the outcome: one JSON object with `--json` (the last line of `stream-json`, as its
/// `result` event), with the final answer as `response` and the closing report as `report`;
/// as text, the answer (and on a terminal the report) streamed already, so only what did not
/// stream is printed, and how the run ended on stderr.
fn report(outcome: &RunOutcome, format: OutputFormat, provider: &ProviderConfig, streamed: &str) {
    if format != OutputFormat::Text {
        let mut value = json!({
            "trace_id": outcome.trace_id,
            "status": status_word(outcome.status),
            "response": outcome.response,
            "report": outcome.report,
            "error": outcome.error,
            "stop": outcome.stop,
            "iterations": outcome.iterations,
            "pending_goals": outcome.pending_goals,
            "tokens_estimated": outcome.tokens_estimated,
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
    // What the model wrote before its length limit cut it off is shown as an answer is.
    let answer = match (outcome.status, outcome.stop) {
        (TraceStatus::Completed | TraceStatus::Incomplete, _) | (_, StopReason::Truncated) => {
            outcome.response.as_deref()
        }
        _ => None,
    };
    if let Some(answer) = answer.filter(|answer| !streamed.contains(answer.trim())) {
        print(&crate::output::clean(answer));
    }
    if outcome.status != TraceStatus::Completed {
        note(&crate::failure::explain(outcome, provider));
    }
    let total = &outcome.stats_with_sub_traces;
    let mut line = format!(
        "trace {} · {} messages · {} · ${:.4}",
        outcome.trace_id,
        total.total_messages,
        tokens_text(total.total_tokens, outcome.tokens_estimated),
        total.total_cost
    );
    if total != &outcome.stats {
        line.push_str(&format!(
            " with sub-traces (the main trace alone: {} messages · ${:.4})",
            outcome.stats.total_messages, outcome.stats.total_cost
        ));
    }
    note(&line);
}

/// `--print`: the final answer alone on stdout; a run that did not complete says why in one
/// line on stderr (its exit code says how it ended).
fn print_answer(outcome: &RunOutcome) {
    if let Some(answer) = outcome.response.as_deref().filter(|a| !a.trim().is_empty()) {
        print(&crate::output::clean(answer));
    }
    if outcome.stop == StopReason::Incomplete {
        note(&crate::failure::left_open(outcome));
    } else if outcome.status != TraceStatus::Completed {
        note(&format!(
            "agent: the run ended {}: {}",
            status_word(outcome.status),
            outcome.error.as_deref().unwrap_or("no error recorded")
        ));
    }
}

/// A token count as shown: `N tokens`, or `~N tokens (estimated)` when the server reported no
/// counts and they are the agent's estimate.
pub(crate) fn tokens_text(tokens: u64, estimated: bool) -> String {
    if estimated {
        format!("~{tokens} tokens (estimated)")
    } else {
        format!("{tokens} tokens")
    }
}
