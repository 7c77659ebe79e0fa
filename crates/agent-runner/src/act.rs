//! The act part of a step: running a turn's tool calls, with approvals, and handing `explore`
//! and `delegate` calls to the sub-agents.

use agent_llm::ToolCall;
use agent_tools::{Risk, ToolContext};
use futures::future::join_all;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::approve::{approve, error_result};
use crate::checkpoints;
use crate::error::StepError;
use crate::goal_checks;
use crate::record::Answer;
use crate::spec::AgentSpec;
use crate::subagent_tools::run_call;
use agent_tools::hooks;

/// Tools whose calls change or read the run's own state: they run alone, in call order.
const STATEFUL_TOOLS: &[&str] = &["goal", "read_progress", "explore", "delegate"];

/// The context a turn's tool calls run in.
pub(crate) fn tool_context(
    agent: &Agent,
    trace_id: &str,
    goal_id: Option<&str>,
    cancel: &CancellationToken,
) -> ToolContext {
    ToolContext {
        workspace: agent.spec.workspace.clone(),
        trace_id: trace_id.to_owned(),
        goal_id: goal_id.map(str::to_owned),
        call_id: None,
        cancel: cancel.clone(),
        limits: agent.spec.tool_limits.clone(),
    }
}

/// Runs a turn's tool calls: read-only calls side by side, stateful and risky ones alone and in
/// order. Answers come back in call order; `None` leaves a call unanswered, which only happens
/// to an `explore` or `delegate` call that a cancel interrupted with sub-traces left to resume:
/// resuming the trace finishes it. Calls past the per-turn limit are answered with an error
/// without running.
pub(crate) async fn run_tools(
    agent: &Agent,
    trace_id: &str,
    goal_id: Option<&str>,
    all_calls: &[ToolCall],
    cancel: &CancellationToken,
) -> Result<Vec<Option<Answer>>, StepError> {
    let ctx = tool_context(agent, trace_id, goal_id, cancel);
    let (calls, refused) = all_calls.split_at(runnable_calls(&agent.spec, all_calls.len()));
    let mut answers: Vec<Option<Answer>> = Vec::with_capacity(all_calls.len());
    let mut index = 0;
    while index < calls.len() {
        let alone = runs_alone(agent, &calls[index].name);
        let end = if alone {
            index + 1
        } else {
            index
                + calls[index..]
                    .iter()
                    .take_while(|c| !runs_alone(agent, &c.name))
                    .count()
        };
        let group = &calls[index..end];
        let outputs = join_all(group.iter().map(|call| run_timed(agent, call, &ctx))).await;
        for output in outputs {
            answers.push(output?);
        }
        index = end;
    }
    let limit = calls.len();
    for call in refused {
        answers.push(Some(error_result(format!(
            "{} was not run: this turn made {} tool calls and at most {limit} run per turn; \
             make fewer calls per turn",
            call.name,
            all_calls.len()
        ))));
    }
    Ok(answers)
}

/// How many of a turn's `count` calls run: the first ones, up to the per-turn limit.
pub(crate) fn runnable_calls(spec: &AgentSpec, count: usize) -> usize {
    count.min(spec.limits.max_tool_calls_per_turn.max(1))
}

fn runs_alone(agent: &Agent, name: &str) -> bool {
    STATEFUL_TOOLS.contains(&name) || agent.tools.risk(name) == Some(Risk::Risky)
}

/// Runs one call (see [`run_one`]) and notes how long it took.
async fn run_timed(
    agent: &Agent,
    call: &ToolCall,
    ctx: &ToolContext,
) -> Result<Option<Answer>, StepError> {
    let started = std::time::Instant::now();
    let plan = match call.name.as_str() {
        "goal" => checkpoints::before_goal_call(agent, &ctx.trace_id).await,
        _ => None,
    };
    let mut answer = run_one(agent, call, ctx).await?;
    if let Some(note) = checkpoints::after_goal_call(agent, &ctx.trace_id, plan).await
        && let Some(answer) = &mut answer
    {
        answer.result.content.push_str("\n\n");
        answer.result.content.push_str(&note);
    }
    if let Some(answer) = &mut answer {
        let elapsed = started.elapsed().as_millis();
        answer.duration_ms = Some(u64::try_from(elapsed).unwrap_or(u64::MAX));
    }
    Ok(answer)
}

/// Runs one call; a risky one runs only as the agent's [`Approval`] says. A `goal` call that
/// marks a goal with a check done runs the check first (see `goal_checks.rs`).
///
/// `explore` and `delegate` go to the sub-agents without an approval of their own: the risky
/// calls their sub-traces make are approved one by one.
async fn run_one(
    agent: &Agent,
    call: &ToolCall,
    ctx: &ToolContext,
) -> Result<Option<Answer>, StepError> {
    if let Some(outcome) = run_call(&agent.sub_agents, call, ctx, None).await {
        return Ok(outcome.into_answer());
    }
    if let Some(answer) = goal_checks::before_goal_call(agent, call, ctx).await? {
        return Ok(Some(answer));
    }
    if let Some(refused) = approve(agent, call, ctx, None).await? {
        return Ok(Some(refused));
    }
    // The call's own context: a tool that asks about it (a rerun without the sandbox) names it.
    let ctx = ToolContext {
        call_id: Some(call.id.clone()),
        ..ctx.clone()
    };
    let hooks = agent.engine.root.hooks.as_deref();
    let result = hooks::execute(hooks, &agent.tools, &call.name, &call.arguments, &ctx).await;
    Ok(Some(result.into()))
}
