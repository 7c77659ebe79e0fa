//! One run of the loop: build the context, call the model, record, run tools, repeat.

use std::collections::HashSet;
use std::time::Instant;

use agent_goal::GoalTree;
use agent_llm::{ChatMessage, ChatRequest, ChatResponse, LlmError, ToolCall, ToolSpec, Usage};
use futures::future::join_all;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::approval::{ApprovalDecision, ApprovalRequest};
use super::context::{
    COMPACTION_KEY, ContextBudget, ContextInput, ContextView, INTERRUPTED_RESULT, assistant_calls,
    build_context,
};
use super::{AgentRunner, RunError, RunOutcome};
use crate::message::{Message, NewMessage, Role};
use crate::store::{WriteOp, WriteOutput};
use crate::tools::{Risk, ToolContext, ToolResult};
use crate::trace::{NewTrace, TraceOutcome, TraceStatus, TraceUpdate};

/// The request that asks the model to summarise the conversation for a full compaction.
pub(crate) const COMPACTION_PROMPT: &str = "Provide a detailed prompt for continuing our \
conversation above. Focus on information that would be helpful for continuing it: what we did, \
what we are doing, which files we are working on, what we found, and what we are going to do \
next. Keep every decision, file name and number that later steps need.";

/// Tools whose calls change or read the run's own state: they run alone, in call order.
const STATEFUL_TOOLS: &[&str] = &["goal", "read_progress", "explore", "delegate"];

/// Creates the trace for a task and records the task as its first user message.
pub(super) async fn create_trace(runner: &AgentRunner, task: &str) -> Result<String, RunError> {
    check_workspace(runner)?;
    let store = &runner.store;
    let trace = store
        .create_trace(NewTrace::agent(task).with_model(&runner.options.model))
        .await?;
    store
        .add_message(&trace.trace_id, NewMessage::user(task))
        .await?;
    Ok(trace.trace_id)
}

fn check_workspace(runner: &AgentRunner) -> Result<(), RunError> {
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

/// Readies a stopped trace for more work: answers dangling tool calls and marks it running.
pub(super) async fn prepare_resume(runner: &AgentRunner, trace_id: &str) -> Result<(), RunError> {
    check_workspace(runner)?;
    let store = &runner.store;
    let trace =
        store
            .get_trace(trace_id)
            .await?
            .ok_or_else(|| crate::store::StoreError::NotFound {
                trace_id: trace_id.to_owned(),
            })?;
    if trace.status == TraceStatus::Completed {
        return Err(RunError::AlreadyCompleted {
            trace_id: trace_id.to_owned(),
        });
    }
    let messages = store.get_trace_messages(trace_id).await?;
    let mut ops: Vec<WriteOp> = dangling_calls(&messages)
        .into_iter()
        .map(|(call, goal_id)| {
            let mut message = NewMessage::tool(call.id, call.name, INTERRUPTED_RESULT);
            message.goal_id = goal_id;
            WriteOp::AddMessage(message)
        })
        .collect();
    ops.push(WriteOp::UpdateTrace(TraceUpdate {
        status: Some(TraceStatus::Running),
        error: Some(None),
        ..TraceUpdate::default()
    }));
    store.batch(trace_id, ops).await?;
    Ok(())
}

/// Tool calls of assistant messages that have no recorded result, with their goal.
fn dangling_calls(messages: &[Message]) -> Vec<(ToolCall, Option<String>)> {
    let answered: HashSet<&str> = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| {
            assistant_calls(&m.content)
                .into_iter()
                .map(move |call| (call, m.goal_id.clone()))
        })
        .filter(|(call, _)| !answered.contains(call.id.as_str()))
        .collect()
}

/// How one pass of the loop ended.
enum Next {
    Continue,
    Stop(TraceOutcome, Option<String>),
}

/// Runs the loop on an existing trace until it ends, and records how it ended.
pub(super) async fn run_loop(
    runner: &AgentRunner,
    trace_id: &str,
    cancel: CancellationToken,
) -> Result<RunOutcome, RunError> {
    let mut messages = runner.store.get_trace_messages(trace_id).await?;
    let mut iterations = 0;
    let (outcome, response) = loop {
        if cancel.is_cancelled() {
            break (cancelled(), None);
        }
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
        match step(runner, trace_id, &mut messages, &cancel).await {
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

enum StepError {
    Llm(LlmError),
    Cancelled,
    Run(RunError),
}

impl From<RunError> for StepError {
    fn from(error: RunError) -> Self {
        Self::Run(error)
    }
}

impl From<crate::store::StoreError> for StepError {
    fn from(error: crate::store::StoreError) -> Self {
        Self::Run(RunError::Store(error))
    }
}

/// One think–act–observe step.
async fn step(
    runner: &AgentRunner,
    trace_id: &str,
    messages: &mut Vec<Message>,
    cancel: &CancellationToken,
) -> Result<Next, StepError> {
    let store = &runner.store;
    let options = &runner.options;
    let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
    let budget = budget(runner);
    let tools = tool_specs(runner);

    let mut view = view_of(runner, &tree, messages, &budget);
    if view.needs_full_compaction {
        compact(runner, trace_id, &tree, messages, &view, cancel).await?;
        view = view_of(runner, &tree, messages, &budget);
    }

    let started = Instant::now();
    let request = request_of(runner, view.messages.clone(), tools.clone());
    let response = match call_model(runner, request, cancel).await {
        Err(StepError::Llm(LlmError::ContextWindowExceeded { .. })) => {
            // The estimate was too low for this provider: compact and try once more.
            compact(runner, trace_id, &tree, messages, &view, cancel).await?;
            let view = view_of(runner, &tree, messages, &budget);
            call_model(runner, request_of(runner, view.messages, tools), cancel).await?
        }
        other => other?,
    };
    let duration_ms = started.elapsed().as_millis() as u64;

    let usage = usage_of(&response, view.estimated_tokens);
    let cost = options.prices.cost(&options.model, &usage);
    let goal_id = tree.current_id.clone();
    let content = json!({
        "text": response.text,
        "tool_calls": response.tool_calls.iter().map(|c| json!({
            "id": c.id, "name": c.name, "arguments": c.arguments,
        })).collect::<Vec<Value>>(),
    });
    let mut assistant = NewMessage::assistant(content)
        .usage(usage.prompt_tokens + usage.completion_tokens, cost)
        .duration_ms(duration_ms);
    assistant.goal_id = goal_id.clone();
    let recorded = record(runner, trace_id, vec![WriteOp::AddMessage(assistant)]).await?;
    messages.extend(recorded);

    if response.tool_calls.is_empty() {
        let text = response.text.clone().unwrap_or_default();
        let summary = text.trim().to_owned();
        return Ok(Next::Stop(TraceOutcome::completed(summary), Some(text)));
    }

    let results = run_tools(
        runner,
        trace_id,
        goal_id.as_deref(),
        &response.tool_calls,
        cancel,
    )
    .await?;
    let ops = response
        .tool_calls
        .iter()
        .zip(results)
        .map(|(call, result)| {
            let mut message =
                NewMessage::tool(call.id.clone(), call.name.clone(), result.content.clone());
            message.goal_id = goal_id.clone();
            message.tokens = Some(agent_llm::estimate_tokens(&result.content) as u64);
            WriteOp::AddMessage(message)
        })
        .collect();
    let recorded = record(runner, trace_id, ops).await?;
    messages.extend(recorded);
    if cancel.is_cancelled() {
        return Err(StepError::Cancelled);
    }
    Ok(Next::Continue)
}

async fn record(
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

fn budget(runner: &AgentRunner) -> ContextBudget {
    let window = runner
        .options
        .context_window
        .unwrap_or_else(|| runner.llm.model_info(&runner.options.model).context_window);
    ContextBudget::for_window(window)
}

fn view_of(
    runner: &AgentRunner,
    tree: &GoalTree,
    messages: &[Message],
    budget: &ContextBudget,
) -> ContextView {
    build_context(&ContextInput {
        system_prompt: &runner.options.system_prompt,
        tree,
        messages,
        budget,
        strategy: runner.options.strategy,
        estimate: &agent_llm::estimate_tokens,
    })
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
    let mut chat = view.messages.clone();
    chat.push(ChatMessage::User(COMPACTION_PROMPT.to_owned()));
    let started = Instant::now();
    let response = call_model(runner, request_of(runner, chat, Vec::new()), cancel).await?;
    let usage = usage_of(&response, view.estimated_tokens);
    let cost = runner.options.prices.cost(&runner.options.model, &usage);
    let summary = response.text.unwrap_or_default();
    let mut message = NewMessage::user(format!("Summary of the conversation so far:\n{summary}"))
        .usage(usage.prompt_tokens + usage.completion_tokens, cost)
        .duration_ms(started.elapsed().as_millis() as u64);
    message.goal_id = tree.current_id.clone();
    message
        .metadata
        .insert(COMPACTION_KEY.to_owned(), Value::Bool(true));
    let recorded = record(runner, trace_id, vec![WriteOp::AddMessage(message)]).await?;
    messages.extend(recorded);
    Ok(())
}

/// Runs a turn's tool calls: read-only calls side by side, stateful and risky ones alone and in
/// order. Results come back in call order.
async fn run_tools(
    runner: &AgentRunner,
    trace_id: &str,
    goal_id: Option<&str>,
    calls: &[ToolCall],
    cancel: &CancellationToken,
) -> Result<Vec<ToolResult>, StepError> {
    let ctx = ToolContext {
        workspace: runner.options.workspace.clone(),
        trace_id: trace_id.to_owned(),
        goal_id: goal_id.map(str::to_owned),
        cancel: cancel.clone(),
        limits: runner.options.tool_limits.clone(),
    };
    let mut results: Vec<ToolResult> = Vec::with_capacity(calls.len());
    let mut index = 0;
    while index < calls.len() {
        let alone = runs_alone(runner, &calls[index].name);
        let end = if alone {
            index + 1
        } else {
            index
                + calls[index..]
                    .iter()
                    .take_while(|c| !runs_alone(runner, &c.name))
                    .count()
        };
        let group = &calls[index..end];
        let outputs = join_all(group.iter().map(|call| run_one(runner, call, &ctx))).await;
        for output in outputs {
            results.push(output?);
        }
        index = end;
    }
    Ok(results)
}

fn runs_alone(runner: &AgentRunner, name: &str) -> bool {
    STATEFUL_TOOLS.contains(&name) || runner.tools.risk(name) == Some(Risk::Risky)
}

/// Runs one call, asking for approval first when it is risky and a handler is set.
async fn run_one(
    runner: &AgentRunner,
    call: &ToolCall,
    ctx: &ToolContext,
) -> Result<ToolResult, StepError> {
    if runner.tools.risk(&call.name) == Some(Risk::Risky)
        && let Some(handler) = &runner.options.approval
    {
        let store = &runner.store;
        let waiting = TraceUpdate {
            status: Some(TraceStatus::Waiting),
            ..TraceUpdate::default()
        };
        store.update_trace(&ctx.trace_id, waiting).await?;
        let request = ApprovalRequest {
            trace_id: ctx.trace_id.clone(),
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            arguments: call.arguments.clone(),
        };
        let decision = tokio::select! {
            decision = handler.decide(request) => Some(decision),
            () = ctx.cancel.cancelled() => None,
        };
        let running = TraceUpdate {
            status: Some(TraceStatus::Running),
            ..TraceUpdate::default()
        };
        store.update_trace(&ctx.trace_id, running).await?;
        match decision {
            None => {
                return Ok(error_result(format!(
                    "{} was not run because the run was cancelled",
                    call.name
                )));
            }
            Some(ApprovalDecision::Reject { reason }) => {
                let why = if reason.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {reason}")
                };
                return Ok(error_result(format!(
                    "the user rejected this {} call{why}",
                    call.name
                )));
            }
            Some(ApprovalDecision::Approve) => {}
        }
    }
    Ok(runner.tools.execute(&call.name, &call.arguments, ctx).await)
}

fn error_result(message: String) -> ToolResult {
    ToolResult {
        content: format!("error: {message}"),
        is_error: true,
    }
}
