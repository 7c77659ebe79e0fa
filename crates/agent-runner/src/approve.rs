//! Who may run a call: the approval rules first, then, for a risky tool, the agent's
//! approval policy (`Approval::decide`: refuse, run, or ask its handler, with the trace
//! `waiting` meanwhile). The act
//! step asks it for every call, and a goal's check for the command it runs as the model's.

use agent_execution::trace::{TraceStatus, TraceUpdate};
use agent_llm::ToolCall;
use agent_tools::approval::{ApprovalDecision, ApprovalHandler, ApprovalRequest, Decision};
use agent_tools::{ToolContext, ToolResult};

use crate::agent::Agent;
use crate::error::StepError;
use crate::record::Answer;

/// Decides whether `call` may run: the approval rules first, then, for a risky tool, the
/// agent's [`Approval`] (asking with `note` when it asks). The answer to record when it may
/// not; `None` when it may.
pub(crate) async fn approve(
    agent: &Agent,
    call: &ToolCall,
    ctx: &ToolContext,
    note: Option<String>,
) -> Result<Option<Answer>, StepError> {
    let rules = &agent.engine.root.approval_rules;
    let asked = (call.name.as_str(), call.arguments.as_str());
    let risk = agent.tools.risk(&call.name);
    match agent
        .spec
        .approval
        .decide(rules, (asked.0, asked.1, risk), &ctx.workspace, note)
    {
        Decision::Run => Ok(None),
        Decision::Refuse(why) => Ok(Some(error_result(why))),
        Decision::Ask(handler, note) => ask(agent, handler, call, ctx, note).await,
    }
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

pub(crate) fn error_result(message: String) -> Answer {
    ToolResult::new(format!("error: {message}"), true).into()
}
