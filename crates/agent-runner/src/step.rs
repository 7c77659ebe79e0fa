//! The loop: build the context, call the model, record, run tools, repeat — until the model
//! answers without tool calls, a limit is hit, the run is cancelled or the model fails.

use std::sync::Arc;
use std::time::Instant;

use agent_execution::AssistantContent;
use agent_execution::message::{Message, NewMessage};
use agent_execution::store::WriteOp;
use agent_execution::trace::{TraceOutcome, TraceUpdate};
use agent_goal::GoalTree;
use agent_llm::LlmError;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::act::run_tools;
use crate::agent::Agent;
use crate::closing;
use crate::compaction::ContextBudget;
use crate::context::ContextInput;
use crate::context_incremental::{IncrementalContext, SharedView};
use crate::error::{RunError, StepError};
use crate::goal_budgets;
use crate::handoff;
use crate::interrupted::{Arrived, keep_interrupted};
use crate::model;
use crate::notice::{self, notice};
use crate::record::{record, tool_message};
use crate::resume::finish_sub_agent_calls;
use crate::stuck;
use crate::summarise::{Trigger, compact};
use crate::turns::{take_background, take_queued};
use crate::window;
use agent_context::prompt_watch::{self, PromptWatch};
use agent_execution::budget::{self, Budget};
use agent_execution::call_ids::CallIds;
use agent_execution::continuation::{AfterAnswer, CutAnswer, is_cut};
use agent_execution::empty_answer;
use agent_execution::followthrough::{self, Hold};
use agent_execution::meta::usage_is_estimated;
use agent_execution::outcome::{RunOutcome, StopReason};
use agent_execution::stats_with_sub_traces;
use agent_execution::{DeltaSink, NoticeKind};
use agent_goal::PendingGoal;
use agent_tools::{sandbox::RunTempDir, shells::RunShells};

use crate::model::USAGE_KEY;

/// How one pass of the loop ended.
enum Next {
    Continue,
    Stop(StopReason, TraceOutcome, Option<String>),
}

/// Runs the loop on an existing trace until it ends, and records how it ended.
///
/// Before the first model call, `explore` and `delegate` calls that a crash or a cancel left
/// without a result are finished (see `resume.rs`).
pub(crate) async fn run_loop(
    agent: &Agent,
    trace_id: &str,
    cancel: CancellationToken,
) -> Result<RunOutcome, RunError> {
    // The first step estimates tokens: the encoding loads while the run starts and the
    // workspace is snapshotted.
    agent_llm::prepare_token_estimates();
    // What the run's commands left (their temporary folder, background shells) goes with it.
    let (_temp_dir, shells) = (RunTempDir::for_run(trace_id), RunShells::for_run(trace_id));
    let store = agent.store();
    let limits = &agent.spec.limits;
    // A cost budget without the model's price cannot stop the run: its calls count as free.
    // Info, not a warning: front ends say it their own way (the CLI before the run).
    let model = &agent.spec.model;
    if agent.spec.limits.max_cost.is_some() && agent.engine.root.prices.price(model).is_none() {
        tracing::info!(%model, "the cost of model {model} is unknown: max_cost cannot be enforced");
    }
    let root = &agent.engine.root;
    let spending = budget::open(
        &agent.engine.budgets,
        store,
        trace_id,
        (limits.max_cost, Some(limits.max_iterations)),
        |stored| root.limits.for_trace(stored, &root.overrides).max_cost,
    )
    .await?;
    // Shared with the store's kept messages: the run only appends to what it read.
    let mut messages = store.get_trace_messages_shared(trace_id).await?;
    agent.hooks(trace_id).session_start().await;
    crate::checkpoints::at_run_start(agent, trace_id, &messages).await;
    // The model's window, from its server when it says (and recorded), before the first call.
    if let Err(StepError::Run(error)) = notice::learn_window(agent, trace_id).await {
        return Err(error);
    }
    let mut state = RunState::default();
    let mut iterations = 0;
    let mut interrupted_calls_done = false;
    let mut model_error = None;
    let (stop, mut outcome, response) = loop {
        if cancel.is_cancelled() {
            break (StopReason::Cancelled, TraceOutcome::cancelled(), None);
        }
        let result = if interrupted_calls_done {
            // The model calls of this run and of the sub-traces under it, against this run's
            // limit and those of the runs above it.
            if let Some(stop) = spending.calls_exceeded() {
                break (StopReason::MaxIterations, stop, None);
            }
            if let Some(stop) = spending.exceeded() {
                break (StopReason::MaxCost, stop, None);
            }
            iterations += 1;
            spending.add_call();
            step(
                agent,
                trace_id,
                &mut messages,
                &mut state,
                &spending,
                &cancel,
            )
            .await
        } else {
            interrupted_calls_done = true;
            finish_sub_agent_calls(agent, trace_id, &mut messages, &cancel)
                .await
                .map(|()| Next::Continue)
        };
        match result {
            Ok(Next::Continue) => {}
            Ok(Next::Stop(stop, outcome, response)) => break (stop, outcome, response),
            Err(StepError::Llm(error)) => {
                let outcome = TraceOutcome::failed(format!("model error: {error}"));
                model_error = Some(error);
                break (StopReason::ModelError, outcome, None);
            }
            Err(StepError::Cancelled) => {
                break (StopReason::Cancelled, TraceOutcome::cancelled(), None);
            }
            Err(StepError::WindowTooSmall(error)) => {
                break (
                    StopReason::WindowTooSmall,
                    TraceOutcome::failed(error),
                    None,
                );
            }
            Err(StepError::Run(error)) => {
                // Recording failed: say so in the trace if the store still takes writes.
                let failed = TraceOutcome::failed(format!("store error: {error}"));
                let _ = store.finish_trace(trace_id, failed).await;
                return Err(error);
            }
        }
    };
    crate::checkpoints::at_run_end(agent, trace_id).await;
    let _ = agent_execution::shell_logs::keep(store, &messages, shells.finish().await).await;
    // Background delegates still running end with the run, and the trace says how.
    let stopped = agent.engine.background.stop(trace_id).await;
    let _ = take_background(agent, trace_id, None, &mut messages).await;
    outcome.error = agent_execution::background::name_stopped(outcome.error, &stopped);
    let trace = store.finish_trace(trace_id, outcome).await?;
    agent.hooks(trace_id).run_ended().await;
    let stats_with_sub_traces = stats_with_sub_traces(store, trace_id).await?;
    let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
    // The trace's totals are estimates, in part, when any of its calls was estimated.
    let tokens_estimated = messages.iter().any(|m| usage_is_estimated(m));
    let mut outcome = RunOutcome::new(trace.trace_id.clone(), trace.status, stop);
    outcome.response = response;
    outcome.report = state.report.take();
    outcome.error = trace.error.clone();
    outcome.iterations = iterations;
    outcome.stats = trace.stats();
    outcome.stats_with_sub_traces = stats_with_sub_traces;
    outcome.tokens_estimated = tokens_estimated;
    outcome.model_error = model_error;
    outcome.pending_goals = PendingGoal::of(&tree);
    Ok(outcome)
}

/// What the steps of a run carry from one to the next.
#[derive(Default)]
struct RunState {
    /// The view of the messages, extended with those recorded step by step.
    context: IncrementalContext,
    /// The call ids the messages used.
    call_ids: CallIds,
    /// Set once a full compaction got no summary: the rest of the run does without.
    summariser_failed: bool,
    /// An answer cut at the length limit, being continued.
    cut: CutAnswer,
    /// The closing report written after the final answer.
    report: Option<String>,
    /// The tool specs of the last step and their tokens.
    tools_memo: model::ToolsMemo,
    /// The window a refusal stated, and whether the floor's notice was given.
    windows: window::Windows,
    /// The server's prompt counts against the estimates (see `prompt_watch.rs`).
    prompts: PromptWatch,
    /// The estimated tokens of the tool results recorded since the last call.
    new_results: usize,
    /// Whether the model was asked again after an empty answer.
    empty_asked: bool,
    /// Messages in a row that sent the model back to its open goals.
    reminders: u32,
}

/// One think–act–observe step.
async fn step(
    agent: &Agent,
    trace_id: &str,
    messages: &mut Vec<Arc<Message>>,
    state: &mut RunState,
    spending: &Budget,
    cancel: &CancellationToken,
) -> Result<Next, StepError> {
    let RunState {
        context,
        call_ids,
        summariser_failed,
        cut,
        report,
        tools_memo,
        windows,
        prompts,
        new_results,
        empty_asked,
        reminders,
    } = state;
    let spec = &agent.spec;
    let tree = agent
        .store()
        .get_goal_tree(trace_id)
        .await?
        .unwrap_or_default();
    // The ends of background delegates and the messages sent while the run works are the
    // newest user turns of this call.
    take_background(agent, trace_id, tree.current_id(), messages).await?;
    take_queued(agent, trace_id, tree.current_id(), messages).await?;
    let window = window::current(spec, agent.llm.as_ref(), &spec.model, windows.refused);
    let (tools, budget) = tools_memo.budget(spec, window, &agent.tools);
    let tool_count = tools.len();

    let mut view = view_of(agent, &tree, messages, &budget, context);
    // Compaction cannot make the request smaller than what it always carries.
    let floor = window::Floor::of(&view.messages, &budget, tool_count);
    let fits = floor.check(&budget, window);
    fits.map_err(StepError::WindowTooSmall)?;
    if !windows.floor_told && window::pruning_only(&floor, &budget) {
        windows.floor_told = true;
        let told = window::pruning_only_notice(&floor, &budget, window);
        notice(agent, trace_id, NoticeKind::WindowFloor, told, None).await?;
    }
    if window::compaction_due(view.estimated_tokens, &floor, &budget) && !*summariser_failed {
        let why = (&view, Trigger::Estimate, window);
        if compact(agent, trace_id, &tree, messages, why, spending, cancel).await? {
            view = view_of(agent, &tree, messages, &budget, context);
        } else {
            *summariser_failed = true;
        }
    }
    // Without a summary, the oldest exchanges are left out of a request that would not fit.
    let (run, told) = ((agent, trace_id), &mut windows.left_out_told);
    if *summariser_failed
        && let Some(left) = notice::leave_out(run, &view, (&budget, window), told).await?
    {
        view = left;
    }

    let started = Instant::now();
    let goal_id = tree.current_id().map(str::to_owned);
    let sink = DeltaSink::answer(agent.store().event_bus(), trace_id, goal_id.as_deref());
    // The request shares the view's messages, and drops them before the next step extends
    // them; the rare retry below builds the view again.
    let mut estimated_tokens = view.estimated_tokens;
    let request = model::request(spec, &spec.model, view.messages, tools);
    let called = match model::call(agent.llm.as_ref(), spec, request, Some(&sink), cancel).await {
        Err(StepError::Llm(error @ LlmError::ContextWindowExceeded { .. })) => {
            // The estimate, or the window, was too low for this provider: take the window the
            // refusal states, compact and try once more.
            let refused = &mut windows.refused;
            notice::after_refusal(agent, trace_id, &error, (window, estimated_tokens), refused)
                .await?;
            let window = window::current(spec, agent.llm.as_ref(), &spec.model, *refused);
            let (_, budget) = tools_memo.budget(spec, window, &agent.tools);
            let view = view_of(agent, &tree, messages, &budget, context);
            let floor = window::Floor::of(&view.messages, &budget, tool_count);
            floor
                .check(&budget, window)
                .map_err(StepError::WindowTooSmall)?;
            let why = (&view, Trigger::Refused, window);
            // A summariser that failed once this run is not asked again.
            let compacted = !*summariser_failed
                && compact(agent, trace_id, &tree, messages, why, spending, cancel).await?;
            let mut view = view_of(agent, &tree, messages, &budget, context);
            let (run, told) = ((agent, trace_id), &mut windows.left_out_told);
            if !compacted {
                // Without a summary, the oldest exchanges are left out, to fit the window as
                // the server counts.
                *summariser_failed = true;
                let fit = window::as_estimated(window, &error.to_string(), estimated_tokens);
                match notice::leave_out(run, &view, (&budget, fit), told).await? {
                    Some(left) => view = left,
                    None => return Err(StepError::Llm(error)),
                }
            }
            if view.estimated_tokens >= estimated_tokens {
                // The same request again would be refused again.
                let error = window::not_smaller(&floor, estimated_tokens, window);
                return Err(StepError::WindowTooSmall(error));
            }
            estimated_tokens = view.estimated_tokens;
            let tools = tools_memo.specs();
            let request = model::request(spec, &spec.model, view.messages, tools);
            model::call(agent.llm.as_ref(), spec, request, Some(&sink), cancel).await
        }
        other => other,
    };
    let mut response = match called {
        Err(StepError::Cancelled) => {
            let arrived = Arrived {
                text: sink.arrived(),
                goal_id: goal_id.clone(),
                started,
                prompt_tokens: estimated_tokens,
            };
            keep_interrupted(agent, trace_id, messages, arrived, spending).await?;
            return Err(StepError::Cancelled);
        }
        other => other?,
    };
    let watched = prompt_watch::Call {
        reported: response.usage.map(|usage| usage.prompt_tokens),
        estimated: estimated_tokens,
        tools: budget.request_tokens,
        tool_count,
        results: std::mem::take(new_results),
    };
    for (kind, told) in prompts.after(watched) {
        notice(agent, trace_id, kind, told, None).await?;
    }
    let duration_ms = started.elapsed().as_millis() as u64;
    call_ids.assign(&mut response.tool_calls, messages);

    let usage = response.usage_or_estimate(estimated_tokens);
    let cost = agent.engine.root.prices.cost(&spec.model, &usage);
    let mut content = AssistantContent::new(response.text.clone(), response.tool_calls.clone());
    content.reasoning = std::mem::take(&mut response.reasoning);
    let mut assistant = NewMessage::assistant(content)
        .usage(usage.prompt_tokens + usage.completion_tokens, cost)
        .duration_ms(duration_ms);
    assistant.goal_id = goal_id.clone();
    // What the provider counted, cache reads included, for the cache share of a trace; or,
    // from a server that reported nothing, the estimate of the whole request (tool specs
    // included) marked `estimated`, so that every display can say so.
    assistant
        .metadata
        .insert(USAGE_KEY.to_owned(), json!(usage));
    let store = agent.store();
    let mut ops = vec![WriteOp::AddMessage(assistant)];
    if let Some(answered) = response.model.as_ref().filter(|m| !m.is_empty()) {
        // The trace names the model that answered (a server may serve the name asked for as
        // another); the store changes nothing when it is already the one named.
        ops.push(WriteOp::UpdateTrace(TraceUpdate {
            model: Some(answered.clone()),
            ..TraceUpdate::default()
        }));
    }
    let recorded = record(store, trace_id, ops).await?;
    messages.extend(recorded);
    spending.add(cost);

    if response.tool_calls.is_empty() {
        // A message that arrived during the call, or a background delegate's end (waited
        // for), is answered before the run ends.
        let background = &agent.engine.background;
        let waited = !background.running(trace_id).is_empty();
        if agent.engine.inbox.has_queued(trace_id) || background.wait_ended(trace_id, cancel).await
        {
            return Ok(Next::Continue);
        }
        if waited && cancel.is_cancelled() {
            return Err(StepError::Cancelled);
        }
        if !is_cut(&response) && empty_answer::is_empty(response.text.as_deref()) {
            let asked = notice::after_empty(agent, trace_id, messages, empty_asked, goal_id);
            return Ok(match asked.await? {
                None => Next::Continue,
                Some(outcome) => Next::Stop(StopReason::EmptyAnswer, outcome, None),
            });
        }
        let text = response.text.as_deref().unwrap_or_default();
        let text = match cut.take(text, is_cut(&response), goal_id, spec.max_tokens) {
            AfterAnswer::Done(text) => text,
            AfterAnswer::Continue(ask) => {
                messages.extend(record(store, trace_id, vec![WriteOp::AddMessage(*ask)]).await?);
                return Ok(Next::Continue);
            }
            AfterAnswer::Truncated(text, outcome) => {
                return Ok(Next::Stop(StopReason::Truncated, outcome, Some(text)));
            }
        };
        // Goals left open send the model back to them, then end the run `incomplete`.
        let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
        let allowed = spec.limits.goal_reminders;
        let (stop, outcome) = match followthrough::after_answer(&tree, &text, *reminders, allowed) {
            Hold::SendBack(message) => {
                *reminders += 1;
                let ops = vec![WriteOp::AddMessage(*message)];
                messages.extend(record(store, trace_id, ops).await?);
                return Ok(Next::Continue);
            }
            Hold::Resolved => (StopReason::Completed, TraceOutcome::completed("")),
            Hold::Left(outcome) => (StopReason::Incomplete, outcome),
        };
        // A Stop hook may send the model back once more, with its reason.
        if let Some(back) = agent.hooks(trace_id).stop().await {
            let back = WriteOp::AddMessage(NewMessage::user(back));
            messages.extend(record(store, trace_id, vec![back]).await?);
            return Ok(Next::Continue);
        }
        // The answer stays the run's response; the report, written with it in view, is the
        // trace's summary when there is one.
        *report = closing::report(agent, trace_id, &text, messages, (spending, cancel)).await?;
        let summary = report.as_deref().unwrap_or(&text).trim().to_owned();
        let outcome = TraceOutcome {
            summary: Some(summary),
            ..outcome
        };
        return Ok(Next::Stop(stop, outcome, Some(text)));
    }

    cut.reset();
    *reminders = 0;
    let calls = &response.tool_calls;
    let answers = run_tools(agent, trace_id, goal_id.as_deref(), calls, cancel).await?;
    // A goal check's judge is a model call of its own, counted with the call it answered.
    spending.add(
        answers
            .iter()
            .flatten()
            .filter_map(|a| a.usage)
            .map(|u| u.1)
            .sum(),
    );
    let ops: Vec<WriteOp> = calls
        .iter()
        .zip(answers)
        .filter_map(|(call, answer)| Some(tool_message(call, answer?, goal_id.clone())))
        .collect();
    if !ops.is_empty() {
        let recorded = record(store, trace_id, ops).await?;
        *new_results = recorded.iter().filter_map(|m| m.tokens).sum::<u64>() as usize;
        messages.extend(recorded);
    }
    if cancel.is_cancelled() {
        return Err(StepError::Cancelled);
    }
    handoff::after_turn(agent, trace_id, messages, cancel).await?;
    if let Some(stop) = stuck::after_turn(agent, trace_id, messages, goal_id).await? {
        return Ok(Next::Stop(StopReason::Stuck, stop, None));
    }
    goal_budgets::after_turn(agent, trace_id, messages).await?;
    Ok(Next::Continue)
}

/// The context the model would see now; `context` keeps the view between steps.
pub(crate) fn view_of(
    agent: &Agent,
    tree: &GoalTree,
    messages: &[Arc<Message>],
    budget: &ContextBudget,
    context: &mut IncrementalContext,
) -> SharedView {
    context.build_shared(&ContextInput {
        system_prompt: &agent.spec.system_prompt,
        tree,
        messages,
        budget,
        strategy: agent.spec.strategy,
        estimate: &agent_llm::estimate_tokens,
    })
}
