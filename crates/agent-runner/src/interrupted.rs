//! What had arrived of an answer when its run was cancelled, kept as the assistant's
//! ([`interrupted_answer`]): a later turn sends it back, and the trace says what the model said.

use std::sync::Arc;
use std::time::Instant;

use agent_execution::budget::Budget;
use agent_execution::continuation::interrupted_answer;
use agent_execution::message::Message;
use agent_execution::store::WriteOp;

use crate::agent::Agent;
use crate::error::StepError;
use crate::record::record;

/// What had arrived of an answer when its run was cancelled.
pub(crate) struct Arrived {
    pub(crate) text: String,
    pub(crate) goal_id: Option<String>,
    pub(crate) started: Instant,
    /// The estimate of the request, for the message's usage.
    pub(crate) prompt_tokens: usize,
}

/// Records the text that had arrived, with estimated usage; nothing when none had.
pub(crate) async fn keep_interrupted(
    agent: &Agent,
    trace_id: &str,
    messages: &mut Vec<Arc<Message>>,
    arrived: Arrived,
    spending: &Budget,
) -> Result<(), StepError> {
    if arrived.text.trim().is_empty() {
        return Ok(());
    }
    let tokens = agent_llm::estimate_tokens(&arrived.text) as u64;
    let usage = agent_llm::Usage::estimate(arrived.prompt_tokens as u64, tokens);
    let cost = agent.engine.root.prices.cost(&agent.spec.model, &usage);
    let message = interrupted_answer(arrived.text, usage, cost, arrived.goal_id)
        .duration_ms(arrived.started.elapsed().as_millis() as u64);
    let recorded = record(agent.store(), trace_id, vec![WriteOp::AddMessage(message)]).await?;
    messages.extend(recorded);
    spending.add(cost);
    Ok(())
}
