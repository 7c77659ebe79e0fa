//! A step per agent: a goal that names an agent profile (`agent` in `goal.json`, `@reviewer` in
//! the plan text) is carried out by a sub-trace of that profile.
//!
//! After each turn, when the focused goal names a profile other than the run's own and has no
//! sub-trace of that profile yet, the runner hands it over, recording what it does as turns of
//! the conversation so the model (and a resume) sees them like any other:
//!
//! 1. an assistant message with a `delegate` call (id `handoff_<goal id>`): the goal's
//!    description as the task, with the mission and the finished goals' summaries as context,
//!    and the goal's profile as `agent`; the call runs as a `delegate` call does (the sub-trace's
//!    `parent_goal_id` is the goal), and its result is recorded;
//! 2. an assistant message with a `goal` call that completes the goal with the sub-trace's
//!    final answer as its summary, or abandons it with the reason it did not complete.
//!
//! A run killed between the two is resumed as any interrupted `delegate` call is (the
//! sub-trace is taken over); the goal then stays focused for the model to finish, and is not
//! handed over twice.

use std::sync::Arc;

use agent_execution::AssistantContent;
use agent_execution::message::{Message, NewMessage};
use agent_execution::store::WriteOp;
use agent_execution::trace::TraceStatus;
use agent_goal::{Goal, GoalStatus, GoalTree, GoalType, PLANNING_AGENT};
use agent_llm::ToolCall;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::act::{run_tools, tool_context};
use crate::agent::Agent;
use crate::delegate;
use crate::error::StepError;
use crate::goal_tools::MAX_GOAL_TEXT_CHARS;
use crate::record::{record, tool_message};

/// The metadata key that marks the assistant messages the runner wrote for a handoff.
pub(crate) const HANDOFF_KEY: &str = agent_execution::meta::HANDOFF;

/// Hands the focused goal of `trace_id` to its agent when it names one (see the module
/// documentation); the recorded messages are appended to `messages`.
pub(crate) async fn after_turn(
    agent: &Agent,
    trace_id: &str,
    messages: &mut Vec<Arc<Message>>,
    cancel: &CancellationToken,
) -> Result<(), StepError> {
    let store = agent.store();
    let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
    let Some(goal) = tree.current().filter(|goal| wants_handoff(agent, goal)) else {
        return Ok(());
    };
    let profile = goal.agent.clone().unwrap_or_default();
    let handed = store.get_sub_traces(trace_id).await?.iter().any(|sub| {
        sub.parent_goal_id.as_deref() == Some(goal.id.as_str())
            && sub.agent_type.as_deref() == Some(profile.as_str())
    });
    if handed {
        return Ok(());
    }
    let goal_id = goal.id.clone();
    let call = ToolCall {
        id: format!("handoff_{goal_id}"),
        name: "delegate".into(),
        arguments: json!({"task": task(&tree, goal), "agent": profile}).to_string(),
    };
    messages.extend(assistant(agent, trace_id, &goal_id, call.clone()).await?);

    let ctx = tool_context(agent, trace_id, Some(&goal_id), cancel);
    let args = serde_json::from_str(&call.arguments).unwrap_or_default();
    let Some(answer) = delegate::run(&agent.sub_agents, args, &ctx, None)
        .await
        .into_answer()
    else {
        // Cancelled with the sub-trace left to resume: the resume finishes the call.
        return Ok(());
    };
    let recorded = record(
        store,
        trace_id,
        vec![tool_message(&call, answer, Some(goal_id.clone()))],
    );
    messages.extend(recorded.await?);
    if cancel.is_cancelled() {
        return Err(StepError::Cancelled);
    }

    let finish = match finished_sub_trace(agent, trace_id, &goal_id, &profile).await? {
        Ok(summary) => json!({"done": bounded(&summary)}),
        Err(reason) => json!({"abandon": bounded(&reason)}),
    };
    let call = ToolCall {
        id: format!("handoff_{goal_id}_goal"),
        name: "goal".into(),
        arguments: finish.to_string(),
    };
    messages.extend(assistant(agent, trace_id, &goal_id, call.clone()).await?);
    let answers = run_tools(
        agent,
        trace_id,
        Some(&goal_id),
        std::slice::from_ref(&call),
        cancel,
    )
    .await?;
    if let Some(Some(answer)) = answers.into_iter().next() {
        let op = tool_message(&call, answer, Some(goal_id));
        messages.extend(record(store, trace_id, vec![op]).await?);
    }
    Ok(())
}

/// Whether `goal`, the focused one, is to be handed to the profile it names.
fn wants_handoff(agent: &Agent, goal: &Goal) -> bool {
    let Some(profile) = goal.agent.as_deref() else {
        return false;
    };
    goal.status == GoalStatus::InProgress
        && goal.goal_type == GoalType::Normal
        && profile != PLANNING_AGENT
        && profile != agent.spec.name
}

/// The task of the sub-trace: the goal, then what it is part of.
fn task(tree: &GoalTree, goal: &Goal) -> String {
    let mut task = goal.description.clone();
    task.push_str(&format!(
        "\n\nThis is one goal of a larger task: {}",
        tree.mission()
    ));
    let done: Vec<String> = tree
        .goals()
        .iter()
        .filter(|g| g.status == GoalStatus::Completed && g.goal_type == GoalType::Normal)
        .filter_map(|g| Some(format!("- {}: {}", g.description, g.summary.as_deref()?)))
        .collect();
    if !done.is_empty() {
        task.push_str("\n\nDone so far:\n");
        task.push_str(&done.join("\n"));
    }
    task
}

/// Records an assistant message, marked as the runner's, with `call` as its only tool call.
async fn assistant(
    agent: &Agent,
    trace_id: &str,
    goal_id: &str,
    call: ToolCall,
) -> Result<Vec<Arc<Message>>, StepError> {
    let content = AssistantContent {
        tool_calls: vec![call],
        ..AssistantContent::default()
    };
    let mut message = NewMessage::assistant(content);
    message.goal_id = Some(goal_id.to_owned());
    message.metadata.insert(HANDOFF_KEY.to_owned(), json!(true));
    record(agent.store(), trace_id, vec![WriteOp::AddMessage(message)]).await
}

/// The final answer of the goal's sub-trace, or why it has none.
async fn finished_sub_trace(
    agent: &Agent,
    trace_id: &str,
    goal_id: &str,
    profile: &str,
) -> Result<Result<String, String>, StepError> {
    let subs = agent.store().get_sub_traces(trace_id).await?;
    let sub = subs.into_iter().find(|sub| {
        sub.parent_goal_id.as_deref() == Some(goal_id) && sub.agent_type.as_deref() == Some(profile)
    });
    Ok(match sub {
        None => Err(format!(
            "@{profile} could not take the goal over (see the delegate result)"
        )),
        Some(sub) if sub.status == TraceStatus::Completed => {
            let summary = sub.summary.unwrap_or_default();
            if summary.trim().is_empty() {
                Ok(format!("@{profile} finished the goal"))
            } else {
                Ok(summary)
            }
        }
        Some(sub) => Err(format!(
            "@{profile} did not complete the goal ({:?}): {}",
            sub.status,
            sub.error.unwrap_or_else(|| "no error recorded".into())
        )),
    })
}

/// `text` cut to what a goal summary may hold.
fn bounded(text: &str) -> String {
    let limit = MAX_GOAL_TEXT_CHARS / 2;
    if text.chars().count() <= limit {
        return text.trim().to_owned();
    }
    let cut: String = text.chars().take(limit - 1).collect();
    format!("{}…", cut.trim_end())
}
