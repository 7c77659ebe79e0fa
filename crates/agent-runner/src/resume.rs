//! Resuming a stopped trace: answering tool calls left without a result, finishing the
//! `explore` and `delegate` calls a crash or a cancel interrupted, and asking the model to go on
//! with an answer a cancel cut short (kept as an interrupted assistant message), and sending a
//! run that ended `incomplete` back to the goals it left open.
//!
//! A call that never returned gets an "interrupted" result, so the model decides what to do
//! about it — except an `explore` or `delegate` call of the last turn: its sub-traces hold work
//! worth keeping, so the resumed run finishes the call before the next model call. Branches
//! that completed or failed keep their outcome, unfinished ones (running when the process died,
//! or cancelled with their parent) are resumed, and branches never created are created with the
//! ids the `explore_start` goal already lists. A call whose exploration was already merged is
//! answered with the recorded report, without running anything again.

use std::collections::HashSet;
use std::sync::Arc;

use agent_execution::message::{Message, NewMessage, UserInput};
use agent_execution::store::{StoreError, WriteOp};
use agent_execution::trace::{TraceStatus, TraceUpdate};
use agent_execution::unanswered::{answered_ids, dangling_calls, ends_interrupted, last_turn};
use agent_llm::ToolCall;
use tokio_util::sync::CancellationToken;

use crate::act::{runnable_calls, tool_context};
use crate::agent::Agent;
use crate::context::INTERRUPTED_RESULT;
use crate::error::{RunError, StepError};
use crate::record::{check_workspace, record, tool_message};
use crate::subagent_tools::run_call;
use crate::subagents::Adoption;
use crate::turns::continue_message;
use agent_execution::continuation::{CONTINUATION_KEY, INTERRUPTED_PROMPT};
use agent_execution::followthrough;
use agent_goal::PendingGoal;

/// Readies a stopped trace for more work: answers dangling tool calls (but the sub-agent calls
/// of the last turn, which the run finishes) and marks it running.
pub(crate) async fn prepare_resume(agent: &Agent, trace_id: &str) -> Result<(), RunError> {
    prepare(agent, trace_id, None).await
}

/// Readies an ended trace (completed included) for its next turn: answers every dangling tool
/// call with an "interrupted" result, records `message` as the newest user message, tied to
/// the current goal, and marks the trace running — in one commit.
pub(crate) async fn prepare_continue(
    agent: &Agent,
    trace_id: &str,
    message: UserInput<'_>,
) -> Result<(), RunError> {
    let refused = agent.hooks(trace_id).prompt(message.text).await;
    refused.map_err(RunError::Refused)?;
    prepare(agent, trace_id, Some(message)).await
}

async fn prepare(
    agent: &Agent,
    trace_id: &str,
    message: Option<UserInput<'_>>,
) -> Result<(), RunError> {
    check_workspace(&agent.spec)?;
    let store = agent.store();
    let trace = store
        .get_trace(trace_id)
        .await?
        .ok_or_else(|| StoreError::NotFound {
            trace_id: trace_id.to_owned(),
        })?;
    if message.is_none() && trace.status == TraceStatus::Completed {
        return Err(RunError::AlreadyCompleted {
            trace_id: trace_id.to_owned(),
        });
    }
    let messages = store.get_trace_messages_shared(trace_id).await?;
    // A new user message must follow the answers of every call, so a continued trace finishes
    // no interrupted sub-agent call: the model sees it interrupted and decides.
    let resumable: HashSet<String> = match message {
        Some(_) => HashSet::new(),
        None => resumable_calls(agent, &messages)
            .into_iter()
            .map(|call| call.id)
            .collect(),
    };
    let mut ops: Vec<WriteOp> = dangling_calls(&messages)
        .into_iter()
        .filter(|(call, _)| !resumable.contains(&call.id))
        .map(|(call, goal_id)| {
            let mut message = NewMessage::tool_error(call.id, call.name, INTERRUPTED_RESULT);
            message.goal_id = goal_id;
            WriteOp::AddMessage(message)
        })
        .collect();
    let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
    match message {
        Some(input) => {
            let mut message = continue_message(input.text, tree.current_id());
            if let WriteOp::AddMessage(new) = &mut message {
                let images = crate::record::pictures(&agent.spec, input)?;
                agent_execution::meta::set_images(&mut new.metadata, &images);
            }
            ops.push(message);
        }
        // The conversation never ends on the assistant's words when a model is called again.
        None if ends_interrupted(&messages) => {
            let mut go_on = NewMessage::user(INTERRUPTED_PROMPT);
            go_on.goal_id = tree.current_id().map(str::to_owned);
            go_on
                .metadata
                .insert(CONTINUATION_KEY.to_owned(), serde_json::Value::from(1));
            ops.push(WriteOp::AddMessage(go_on));
        }
        // A run that ended with goals open takes them up again where it stopped.
        None if trace.status == TraceStatus::Incomplete => {
            let (open, allowed) = (PendingGoal::of(&tree), agent.spec.limits.goal_reminders);
            if !open.is_empty() {
                let message = followthrough::reminder(&tree, &open, 0, allowed);
                ops.push(WriteOp::AddMessage(message));
            }
        }
        None => {}
    }
    // A main trace keeps the limits this run applies (the stored ones, or those its caller
    // set instead), so that the next run of it starts from them.
    let limits = trace
        .parent_trace_id
        .is_none()
        .then(|| Some(agent.spec.limits.stored()))
        .filter(|limits| *limits != trace.limits);
    ops.push(WriteOp::UpdateTrace(TraceUpdate {
        status: Some(TraceStatus::Running),
        error: Some(None),
        limits,
        ..TraceUpdate::default()
    }));
    store.batch(trace_id, ops).await?;
    Ok(())
}

/// The unanswered calls of the last turn that the sub-agents finish on resume (never one past
/// the per-turn limit, which the run would not have started).
fn resumable_calls(agent: &Agent, messages: &[Arc<Message>]) -> Vec<ToolCall> {
    let Some(last) = last_turn(messages) else {
        return Vec::new();
    };
    let answered = answered_ids(messages);
    let calls = last.content.tool_calls().to_vec();
    let runnable = runnable_calls(&agent.spec, calls.len());
    calls
        .into_iter()
        .take(runnable)
        .filter(|call| !answered.contains(call.id.as_str()))
        .filter(|call| agent.spec.resumes(&call.name))
        .collect()
}

/// Finishes the interrupted sub-agent calls of the last turn and records their results; called
/// when a run starts, before the first model call. Does nothing for a trace without any.
pub(crate) async fn finish_sub_agent_calls(
    agent: &Agent,
    trace_id: &str,
    messages: &mut Vec<Arc<Message>>,
    cancel: &CancellationToken,
) -> Result<(), StepError> {
    let calls = resumable_calls(agent, messages);
    let Some(last) = last_turn(messages).filter(|_| !calls.is_empty()) else {
        return Ok(());
    };
    let goal_id = last.goal_id.clone();
    let ctx = tool_context(agent, trace_id, goal_id.as_deref(), cancel);
    let mut adoption = Adoption::since(&last.created_at);
    let mut ops = Vec::new();
    for call in &calls {
        if cancel.is_cancelled() {
            break;
        }
        let Some(outcome) = run_call(&agent.sub_agents, call, &ctx, Some(&mut adoption)).await
        else {
            continue;
        };
        if let Some(answer) = outcome.into_answer() {
            ops.push(tool_message(call, answer, goal_id.clone()));
        }
    }
    if !ops.is_empty() {
        let recorded = record(agent.store(), trace_id, ops).await?;
        messages.extend(recorded);
    }
    if cancel.is_cancelled() {
        return Err(StepError::Cancelled);
    }
    Ok(())
}
