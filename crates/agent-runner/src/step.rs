//! One run of the loop: build the context, call the model, record, run tools, repeat.

use std::collections::HashSet;
use std::time::Instant;

use agent_goal::GoalTree;
use agent_llm::{
    ChatMessage, ChatRequest, ChatResponse, LlmClient, LlmError, ToolCall, ToolSpec, Usage,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::act::{Answer, run_tools};
use super::agents::DEFAULT;
use super::context::{
    COMPACTION_KEY, ContextBudget, ContextInput, ContextMemo, ContextView, build_context_with,
};
use super::profiles::summariser;
use super::resume::finish_sub_agent_calls;
use super::stuck;
use super::{AgentRunner, RunError, RunOutcome, RunnerOptions};
use agent_execution::AssistantContent;
use agent_execution::message::{Message, NewMessage, Role};
use agent_execution::store::{WriteOp, WriteOutput};
use agent_execution::trace::{NewTrace, TraceOutcome, TraceStatus};

/// The request that asks the model to summarise the conversation for a full compaction.
pub const COMPACTION_PROMPT: &str = "Provide a detailed prompt for continuing our \
conversation above. Focus on information that would be helpful for continuing it: what we did, \
what we are doing, which files we are working on, what we found, and what we are going to do \
next. Keep every decision, file name and number that later steps need.";

/// The metadata key of the token counts a provider reported for an assistant message
/// (`{prompt_tokens, completion_tokens, cached_tokens}`).
pub const USAGE_KEY: &str = "usage";

/// Creates the trace for a task and records the task as its first user message.
pub(super) async fn create_trace(runner: &AgentRunner, task: &str) -> Result<String, RunError> {
    check_workspace(runner)?;
    let store = &runner.store;
    let mut new = NewTrace::agent(task).with_model(&runner.options.model);
    if let Some(agent) = runner.options.agent.as_deref().filter(|a| *a != DEFAULT) {
        new = new.with_agent_type(agent);
    }
    let trace = store.create_trace(new).await?;
    store
        .add_message(&trace.trace_id, NewMessage::user(task))
        .await?;
    Ok(trace.trace_id)
}

pub(super) fn check_workspace(runner: &AgentRunner) -> Result<(), RunError> {
    let path = &runner.options.workspace;
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(RunError::Workspace {
            path: path.clone(),
            message: "not a folder".into(),
        }),
        Err(e) => Err(RunError::Workspace {
            path: path.clone(),
            message: e.to_string(),
        }),
    }
}

/// How one pass of the loop ended.
enum Next {
    Continue,
    Stop(TraceOutcome, Option<String>),
}

/// Runs the loop on an existing trace until it ends, and records how it ended.
///
/// Before the first model call, `explore` and `delegate` calls that a crash or a cancel left
/// without a result are finished (see `resume.rs`).
pub(super) async fn run_loop(
    runner: &AgentRunner,
    trace_id: &str,
    cancel: CancellationToken,
) -> Result<RunOutcome, RunError> {
    let mut messages = runner.store.get_trace_messages(trace_id).await?;
    // The token estimates of the messages above and of those recorded below, kept across steps.
    let mut memo = ContextMemo::new();
    let mut iterations = 0;
    let mut interrupted_calls_done = false;
    let (outcome, response) = loop {
        if cancel.is_cancelled() {
            break (cancelled(), None);
        }
        let result = if interrupted_calls_done {
            if iterations >= runner.options.limits.max_iterations {
                let limit = runner.options.limits.max_iterations;
                break (
                    TraceOutcome::failed(format!(
                        "max_iterations: reached the limit of {limit} model calls"
                    )),
                    None,
                );
            }
            if let Some(stop) = over_budget(runner, trace_id).await? {
                break (stop, None);
            }
            iterations += 1;
            step(runner, trace_id, &mut messages, &mut memo, &cancel).await
        } else {
            interrupted_calls_done = true;
            finish_sub_agent_calls(runner, trace_id, &mut messages, &cancel)
                .await
                .map(|()| Next::Continue)
        };
        match result {
            Ok(Next::Continue) => {}
            Ok(Next::Stop(outcome, response)) => break (outcome, response),
            Err(StepError::Llm(error)) => {
                break (TraceOutcome::failed(format!("model error: {error}")), None);
            }
            Err(StepError::Cancelled) => break (cancelled(), None),
            Err(StepError::Run(error)) => {
                // Recording failed: say so in the trace if the store still takes writes.
                let _ = runner
                    .store
                    .finish_trace(
                        trace_id,
                        TraceOutcome::failed(format!("store error: {error}")),
                    )
                    .await;
                return Err(error);
            }
        }
    };
    let trace = runner.store.finish_trace(trace_id, outcome).await?;
    Ok(RunOutcome {
        trace_id: trace.trace_id.clone(),
        status: trace.status,
        response,
        error: trace.error.clone(),
        iterations,
        stats: trace.stats(),
    })
}

fn cancelled() -> TraceOutcome {
    TraceOutcome {
        status: TraceStatus::Cancelled,
        summary: None,
        error: Some("cancelled: the run was cancelled".into()),
    }
}

async fn over_budget(
    runner: &AgentRunner,
    trace_id: &str,
) -> Result<Option<TraceOutcome>, RunError> {
    let Some(max_cost) = runner.options.limits.max_cost else {
        return Ok(None);
    };
    let cost = runner
        .store
        .get_trace(trace_id)
        .await?
        .map_or(0.0, |t| t.total_cost);
    Ok((cost >= max_cost).then(|| {
        TraceOutcome::failed(format!(
            "max_cost: spent ${cost:.4} of the ${max_cost:.4} budget"
        ))
    }))
}

/// Why a step could not go on.
pub(super) enum StepError {
    Llm(LlmError),
    Cancelled,
    Run(RunError),
}

impl From<RunError> for StepError {
    fn from(error: RunError) -> Self {
        Self::Run(error)
    }
}

impl From<agent_execution::store::StoreError> for StepError {
    fn from(error: agent_execution::store::StoreError) -> Self {
        Self::Run(RunError::Store(error))
    }
}

/// One think–act–observe step.
async fn step(
    runner: &AgentRunner,
    trace_id: &str,
    messages: &mut Vec<Message>,
    memo: &mut ContextMemo,
    cancel: &CancellationToken,
) -> Result<Next, StepError> {
    let store = &runner.store;
    let options = &runner.options;
    let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
    let budget = budget(runner);
    let tools = tool_specs(runner);

    let mut view = view_of(runner, &tree, messages, &budget, memo);
    if view.needs_full_compaction {
        compact(runner, trace_id, &tree, messages, &view, cancel).await?;
        view = view_of(runner, &tree, messages, &budget, memo);
    }

    let started = Instant::now();
    let request = request_of(runner, view.messages.clone(), tools.clone());
    let mut response = match call_model(runner, request, cancel).await {
        Err(StepError::Llm(LlmError::ContextWindowExceeded { .. })) => {
            // The estimate was too low for this provider: compact and try once more.
            compact(runner, trace_id, &tree, messages, &view, cancel).await?;
            let view = view_of(runner, &tree, messages, &budget, memo);
            call_model(runner, request_of(runner, view.messages, tools), cancel).await?
        }
        other => other?,
    };
    let duration_ms = started.elapsed().as_millis() as u64;
    unique_call_ids(&mut response.tool_calls, messages);

    let usage = usage_of(&response, view.estimated_tokens);
    let cost = options.prices.cost(&options.model, &usage);
    let goal_id = tree.current_id().map(str::to_owned);
    let content = AssistantContent::new(response.text.clone(), response.tool_calls.clone());
    let mut assistant = NewMessage::assistant(content)
        .usage(usage.prompt_tokens + usage.completion_tokens, cost)
        .duration_ms(duration_ms);
    assistant.goal_id = goal_id.clone();
    if let Some(reported) = response.usage {
        // What the provider counted, cache reads included, for the cache share of a trace.
        assistant
            .metadata
            .insert(USAGE_KEY.to_owned(), json!(reported));
    }
    let recorded = record(runner, trace_id, vec![WriteOp::AddMessage(assistant)]).await?;
    messages.extend(recorded);

    if response.tool_calls.is_empty() {
        let text = response.text.clone().unwrap_or_default();
        let summary = text.trim().to_owned();
        return Ok(Next::Stop(TraceOutcome::completed(summary), Some(text)));
    }

    let answers = run_tools(
        runner,
        trace_id,
        goal_id.as_deref(),
        &response.tool_calls,
        cancel,
    )
    .await?;
    let ops: Vec<WriteOp> = response
        .tool_calls
        .iter()
        .zip(answers)
        .filter_map(|(call, answer)| Some(tool_message(call, answer?, goal_id.clone())))
        .collect();
    if !ops.is_empty() {
        let recorded = record(runner, trace_id, ops).await?;
        messages.extend(recorded);
    }
    if cancel.is_cancelled() {
        return Err(StepError::Cancelled);
    }
    if let Some(stop) = stuck::after_turn(runner, trace_id, messages, goal_id).await? {
        return Ok(Next::Stop(stop, None));
    }
    Ok(Next::Continue)
}

/// Gives each tool call an id that no other call of the trace has, made of at most 128 ASCII
/// letters, digits, `_` and `-`, before the turn is recorded.
///
/// Results are paired with their calls by id, in the context and on resume, and the id names
/// the call in the API's approval path. Providers do not always deliver that: servers that send
/// no id get `call_0` on every turn, and a model's output can carry empty, repeated or odd ids.
/// A call whose id is already taken or unfit gets `call_t<turn>_<position>` instead.
pub(super) fn unique_call_ids(calls: &mut [ToolCall], messages: &[Message]) {
    let previous: Vec<&Message> = messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .collect();
    let mut used: HashSet<String> = previous
        .iter()
        .flat_map(|m| m.content.tool_calls().to_vec())
        .map(|call| call.id)
        .collect();
    let turn = previous.len() + 1;
    for (position, call) in calls.iter_mut().enumerate() {
        let fit = (1..=128).contains(&call.id.len())
            && call
                .id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if fit && used.insert(call.id.clone()) {
            continue;
        }
        let base = format!("call_t{turn}_{}", position + 1);
        let mut id = base.clone();
        let mut again = 1;
        while used.contains(&id) {
            again += 1;
            id = format!("{base}_{again}");
        }
        used.insert(id.clone());
        call.id = id;
    }
}

/// The write that records a tool call's answer, tied to `goal_id`.
pub(super) fn tool_message(call: &ToolCall, answer: Answer, goal_id: Option<String>) -> WriteOp {
    let content = answer.result.content;
    let tokens = agent_llm::estimate_tokens(&content) as u64;
    let mut message = if answer.result.is_error {
        NewMessage::tool_error(call.id.clone(), call.name.clone(), content)
    } else {
        NewMessage::tool(call.id.clone(), call.name.clone(), content)
    };
    message.goal_id = goal_id;
    message.tokens = Some(tokens);
    message.metadata = answer.metadata;
    WriteOp::AddMessage(message)
}

/// Records a batch of writes and returns the messages it stored.
pub(super) async fn record(
    runner: &AgentRunner,
    trace_id: &str,
    ops: Vec<WriteOp>,
) -> Result<Vec<Message>, StepError> {
    let outputs = runner.store.batch(trace_id, ops).await?;
    Ok(outputs
        .into_iter()
        .filter_map(|output| match output {
            WriteOutput::Message(message) => Some(message),
            _ => None,
        })
        .collect())
}

/// The context budget of the runner's model.
pub(super) fn budget(runner: &AgentRunner) -> ContextBudget {
    budget_for(&runner.options, runner.llm.as_ref())
}

/// The context budget of the model of `options`.
pub(super) fn budget_for(options: &RunnerOptions, llm: &dyn LlmClient) -> ContextBudget {
    let window = options
        .context_window
        .unwrap_or_else(|| llm.model_info(&options.model).context_window);
    ContextBudget::for_window(window)
}

/// The context the model would see now; `memo` keeps token estimates between steps.
pub(super) fn view_of(
    runner: &AgentRunner,
    tree: &GoalTree,
    messages: &[Message],
    budget: &ContextBudget,
    memo: &mut ContextMemo,
) -> ContextView {
    build_context_with(
        &ContextInput {
            system_prompt: &runner.options.system_prompt,
            tree,
            messages,
            budget,
            strategy: runner.options.strategy,
            estimate: &agent_llm::estimate_tokens,
        },
        memo,
    )
}

fn tool_specs(runner: &AgentRunner) -> Vec<ToolSpec> {
    runner
        .tools
        .definitions()
        .into_iter()
        .map(|d| ToolSpec {
            name: d.name,
            description: d.description,
            parameters: d.parameters,
        })
        .collect()
}

fn request_of(
    runner: &AgentRunner,
    messages: Vec<ChatMessage>,
    tools: Vec<ToolSpec>,
) -> ChatRequest {
    let mut request = ChatRequest::new(runner.options.model.clone(), messages);
    request.tools = tools;
    request.temperature = runner.options.temperature;
    request.max_tokens = runner.options.max_tokens;
    request
}

/// Calls the model, bounded by the request timeout and the run's cancellation.
async fn call_model(
    runner: &AgentRunner,
    request: ChatRequest,
    cancel: &CancellationToken,
) -> Result<ChatResponse, StepError> {
    let timeout = runner.options.limits.llm_timeout;
    tokio::select! {
        result = tokio::time::timeout(timeout, runner.llm.complete(request)) => match result {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(error)) => Err(StepError::Llm(error)),
            Err(_) => Err(StepError::Llm(LlmError::Timeout {
                kind: agent_llm::TimeoutKind::Request,
                after: timeout,
            })),
        },
        () = cancel.cancelled() => Err(StepError::Cancelled),
    }
}

fn usage_of(response: &ChatResponse, estimated_prompt: usize) -> Usage {
    response.usage.unwrap_or_else(|| {
        let mut completion = response
            .text
            .as_deref()
            .map_or(0, agent_llm::estimate_tokens);
        completion += response
            .tool_calls
            .iter()
            .map(|c| agent_llm::estimate_tokens(&c.name) + agent_llm::estimate_tokens(&c.arguments))
            .sum::<usize>();
        Usage {
            prompt_tokens: estimated_prompt as u64,
            completion_tokens: completion as u64,
            cached_tokens: 0,
        }
    })
}

/// Summarises the conversation into one stored message that hides everything before it.
async fn compact(
    runner: &AgentRunner,
    trace_id: &str,
    tree: &GoalTree,
    messages: &mut Vec<Message>,
    view: &ContextView,
    cancel: &CancellationToken,
) -> Result<(), StepError> {
    // The `compaction` profile gives the request, the model and its client.
    let summariser = summariser(runner);
    let mut chat = view.messages.clone();
    chat.push(ChatMessage::User(summariser.options.system_prompt.clone()));
    let started = Instant::now();
    let request = request_of(&summariser, chat, Vec::new());
    let response = call_model(&summariser, request, cancel).await?;
    let usage = usage_of(&response, view.estimated_tokens);
    let model = &summariser.options.model;
    let cost = runner.options.prices.cost(model, &usage);
    let summary = response.text.unwrap_or_default();
    let mut message = NewMessage::user(format!("Summary of the conversation so far:\n{summary}"))
        .usage(usage.prompt_tokens + usage.completion_tokens, cost)
        .duration_ms(started.elapsed().as_millis() as u64);
    message.goal_id = tree.current_id().map(str::to_owned);
    message
        .metadata
        .insert(COMPACTION_KEY.to_owned(), Value::Bool(true));
    let recorded = record(runner, trace_id, vec![WriteOp::AddMessage(message)]).await?;
    messages.extend(recorded);
    Ok(())
}
