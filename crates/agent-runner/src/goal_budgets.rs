//! Budgets of goals, acted on after each turn of tool calls: what
//! [`agent_execution::goal_budget::check`] finds is recorded in one commit.

use std::sync::Arc;

use agent_execution::goal_budget;
use agent_execution::message::Message;

use crate::agent::Agent;
use crate::error::StepError;
use crate::record::record;

/// Measures the current goal and its ancestors against their budgets after a turn, and records
/// what is to be done.
pub(crate) async fn after_turn(
    agent: &Agent,
    trace_id: &str,
    messages: &mut Vec<Arc<Message>>,
) -> Result<(), StepError> {
    let tree = agent.store().get_goal_tree(trace_id).await?;
    if let Some(verdict) = tree.and_then(|tree| goal_budget::check(&tree, messages)) {
        messages.extend(record(agent.store(), trace_id, verdict.into_ops()).await?);
    }
    Ok(())
}
