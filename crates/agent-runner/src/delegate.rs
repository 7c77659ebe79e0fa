//! `delegate(task, agent?, background?)`: one sub-trace runs a task to completion; its final
//! answer and plan are the tool result. With `background`, the call answers at once with the
//! sub-trace's id and the sub-trace runs on beside its caller, whose loop is told how it ended
//! (`turns.rs`) before its next model call, and waits for it before it ends.
//!
//! The delegate starts from the task alone (it does not inherit the caller's conversation: the
//! point of delegating is to keep that small), with the tools, prompt, model and limits of the
//! `delegate` agent type, or of the profile `agent` names. The sub-trace gets a store-generated
//! id `{parent}@{profile}-…` and `parent_goal_id` = the caller's current goal.

use serde::Deserialize;
use serde_json::Value;

use crate::agents::DELEGATE;
use crate::engine::Start;
use crate::report::CallOutcome;
use crate::subagents::{Adoption, SubAgents};
use agent_execution::background::started;
use agent_execution::store::StoreError;
use agent_execution::trace::{NewTrace, TraceStatus};
use agent_tools::ToolContext;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DelegateArgs {
    task: String,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    background: bool,
}

/// Runs a `delegate` call; never fails, every problem becomes an error result.
pub(crate) async fn run(
    agents: &SubAgents,
    args: Value,
    ctx: &ToolContext,
    adoption: Option<&mut Adoption>,
) -> CallOutcome {
    match delegate(agents, args, ctx, adoption).await {
        Ok(outcome) => outcome,
        Err(error) => CallOutcome::error(format!("delegate could not be recorded: {error}")),
    }
}

async fn delegate(
    agents: &SubAgents,
    args: Value,
    ctx: &ToolContext,
    adoption: Option<&mut Adoption>,
) -> Result<CallOutcome, StoreError> {
    let args: DelegateArgs = match serde_json::from_value(args) {
        Ok(args) => args,
        Err(e) => {
            return Ok(CallOutcome::error(format!(
                "invalid arguments for delegate: {e}; send {{\"task\": \"<the task, with all the \
                 context it needs>\"}}"
            )));
        }
    };
    let task = args.task.trim();
    if task.is_empty() {
        return Ok(CallOutcome::error("delegate needs a non-empty task"));
    }
    let profile = match agents.profile_for(DELEGATE, args.agent.as_deref()) {
        Ok(profile) => profile,
        Err(message) => return Ok(CallOutcome::error(message)),
    };
    let parent = ctx.trace_id.as_str();
    let background = &agents.engine.background;
    if let Some(refusal) = background.refusal(parent).filter(|_| args.background) {
        return Ok(CallOutcome::error(refusal));
    }
    let adopted = match adoption {
        Some(adoption) => {
            let call = (ctx.goal_id.as_deref(), task, profile.as_str());
            adopt(agents, parent, call, adoption).await?
        }
        None => None,
    };
    let (trace_id, start) = match adopted {
        Some(trace_id) => {
            let start = agents
                .continue_sub_trace(&trace_id, || first_message(task))
                .await?;
            (trace_id, start)
        }
        None => {
            let new = NewTrace::sub_trace(parent, ctx.goal_id.clone(), &profile, task);
            let trace_id = agents.create_sub_trace(new, first_message(task)).await?;
            (trace_id, Start::Fresh)
        }
    };

    let cancel = ctx.cancel.child_token();
    let run = agents.spawn(&profile, trace_id.clone(), start, cancel.clone(), None);
    if args.background {
        background.start(parent, &trace_id, cancel, run);
        return Ok(CallOutcome::done(started(&trace_id), false, &[]));
    }
    // A panicked run leaves its trace as it was; the report shows it unfinished.
    let _ = run.await;

    let report = agents.report(&trace_id).await?;
    if ctx.cancel.is_cancelled() && report.status == TraceStatus::Cancelled {
        return Ok(CallOutcome::interrupted(format!(
            "delegate was cancelled: sub-trace {trace_id} was stopped; resuming the run resumes \
             it"
        )));
    }
    let (content, is_error) = report.delegate_result();
    Ok(CallOutcome::done(
        agents.bounded(&content),
        is_error,
        &[&report],
    ))
}

/// Finds the delegate an interrupted call started: a sub-trace of the same profile for the same
/// task and goal (`call`), created since the interrupted turn and not taken by another call.
async fn adopt(
    agents: &SubAgents,
    parent: &str,
    call: (Option<&str>, &str, &str),
    adoption: &mut Adoption,
) -> Result<Option<String>, StoreError> {
    let (goal_id, task, profile) = call;
    let mut subs = agents.store.get_sub_traces(parent).await?;
    // Oldest first, so calls of one turn take their sub-traces in order.
    subs.reverse();
    let found = subs.into_iter().find(|sub| {
        sub.agent_type.as_deref() == Some(profile)
            && sub.task == task
            && sub.parent_goal_id.as_deref() == goal_id
            && sub.created_at >= adoption.since
            && !adoption.claimed.contains(&sub.trace_id)
    });
    Ok(found.map(|sub| {
        adoption.claimed.insert(sub.trace_id.clone());
        sub.trace_id
    }))
}

/// The first message of a delegate: what it is, then the task (last).
fn first_message(task: &str) -> String {
    format!(
        "Another agent delegated this task to you. Do it completely, keep a plan with the \
         `goal` tool, and finish with a final answer and no tool calls: what you did, what you \
         found, and what the other agent needs to know. Your final answer is all it will see of \
         your work.\n\n## Task\n\n{task}"
    )
}
