//! The act part of a step: running a turn's tool calls, with approvals, and handing `explore`
//! and `delegate` calls to the sub-agents.

use agent_execution::trace::{TraceStatus, TraceUpdate};
use agent_llm::ToolCall;
use agent_tools::{Risk, ToolContext, ToolResult};
use futures::future::join_all;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::checkpoints;
use crate::error::StepError;
use crate::record::Answer;
use crate::spec::AgentSpec;
use crate::subagent_tools::run_call;
use agent_tools::approval::{Approval, ApprovalDecision, ApprovalHandler, ApprovalRequest};
use agent_tools::{RuleVerdict, hooks};

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

/// Runs one call; a risky one runs only as the agent's [`Approval`] says.
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
    let rules = &agent.engine.root.approval_rules;
    let verdict = rules.verdict(&call.name, &call.arguments, &ctx.workspace);
    if let Some(RuleVerdict::Deny(rule)) = &verdict {
        return Ok(Some(error_result(format!(
            "{} was not run: the approval rule `{rule}` denies it",
            call.name
        ))));
    }
    if let Some(RuleVerdict::Ask { rule, why }) = &verdict {
        let Approval::Ask(handler) = &agent.spec.approval else {
            return Ok(Some(error_result(format!(
                "{} was not run: the approval rule `{rule}` cannot check it ({why}) and nobody \
                 was asked; write the command so that each program it runs is named plainly",
                call.name
            ))));
        };
        let note = format!("the rule `{rule}` cannot check this command: {why}");
        if let Some(refused) = ask(agent, handler.as_ref(), call, ctx, Some(note)).await? {
            return Ok(Some(refused));
        }
    } else {
        let allowed = matches!(verdict, Some(RuleVerdict::Allow(_)));
        if !allowed && agent.tools.risk(&call.name) == Some(Risk::Risky) {
            match &agent.spec.approval {
                Approval::Allow => {}
                Approval::Refuse(reason) => {
                    return Ok(Some(error_result(format!(
                        "{} was not run: {reason}",
                        call.name
                    ))));
                }
                Approval::Ask(handler) => {
                    if let Some(refused) = ask(agent, handler.as_ref(), call, ctx, None).await? {
                        return Ok(Some(refused));
                    }
                }
            }
        }
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

/// Asks `handler` about a risky call, with the trace `waiting` meanwhile; the answer to record
/// when the call is not to run.
async fn ask(
    agent: &Agent,
    handler: &dyn ApprovalHandler,
    call: &ToolCall,
    ctx: &ToolContext,
    note: Option<String>,
) -> Result<Option<Answer>, StepError> {
    let store = agent.store();
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
        note,
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
    Ok(match decision {
        None => Some(error_result(format!(
            "{} was not run because the run was cancelled",
            call.name
        ))),
        Some(ApprovalDecision::Reject { reason }) => {
            let why = if reason.trim().is_empty() {
                String::new()
            } else {
                format!(": {reason}")
            };
            Some(error_result(format!(
                "the user rejected this {} call{why}",
                call.name
            )))
        }
        Some(ApprovalDecision::Approve) => None,
    })
}

fn error_result(message: String) -> Answer {
    ToolResult {
        content: format!("error: {message}"),
        is_error: true,
    }
    .into()
}
