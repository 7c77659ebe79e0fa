//! A full compaction on request (`/compact` in a chat, [`AgentRunner::compact`]): the
//! conversation of an idle trace is summarised now, as the loop would when its context nears
//! the window, so that the next turn starts from the summary.
//!
//! [`AgentRunner::compact`]: crate::AgentRunner::compact

use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::context_incremental::IncrementalContext;
use crate::error::{RunError, StepError};
use crate::model;
use crate::step::view_of;
use crate::summarise::{Trigger, compact};
use agent_execution::budget;

/// Summarises the trace's conversation into one stored message that hides everything before
/// it; its cost counts toward the trace. Returns whether a summary was stored (false when the
/// summariser answered twice without text: a `compaction_failed` event says so).
pub(crate) async fn compact_now(
    agent: &Agent,
    trace_id: &str,
    cancel: &CancellationToken,
) -> Result<bool, RunError> {
    let store = agent.store();
    let root = &agent.engine.root;
    let spending = budget::open(
        &agent.engine.budgets,
        store,
        trace_id,
        (agent.spec.limits.max_cost, None),
        |stored| root.limits.for_trace(stored, &root.overrides).max_cost,
    )
    .await?;
    let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
    let mut messages = store.get_trace_messages_shared(trace_id).await?;
    let tools = model::tool_specs(&agent.tools);
    let window = crate::window::current(&agent.spec, agent.llm.as_ref(), &agent.spec.model, None);
    let budget = model::budget_in(&agent.spec, window, &tools);
    let view = view_of(
        agent,
        &tree,
        &messages,
        &budget,
        &mut IncrementalContext::new(),
    );
    let why = (&view, Trigger::Manual, window);
    match compact(
        agent,
        trace_id,
        &tree,
        &mut messages,
        why,
        &spending,
        cancel,
    )
    .await
    {
        Ok(stored) => Ok(stored),
        Err(StepError::Llm(error)) => Err(RunError::Llm(error)),
        Err(StepError::Cancelled) => Err(RunError::Cancelled),
        Err(StepError::Run(error)) => Err(error),
        Err(StepError::WindowTooSmall(error)) => Err(RunError::WindowTooSmall(error)),
    }
}
