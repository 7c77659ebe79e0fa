//! What had arrived of an answer when its run was cancelled, kept as the assistant's: a later
//! turn sends it back, and the trace says what the model had said.

use std::sync::Arc;
use std::time::Instant;

use agent_execution::AssistantContent;
use agent_execution::budget::Budget;
use agent_execution::message::{Message, NewMessage};
use agent_execution::store::WriteOp;
use serde_json::json;

use crate::agent::Agent;
use crate::error::StepError;
use crate::model::USAGE_KEY;
use crate::record::record;

/// What had arrived of an answer when its run was cancelled.
pub(crate) struct Arrived {
    pub(crate) text: String,
    pub(crate) goal_id: Option<String>,
    pub(crate) started: Instant,
    /// The estimate of the request, for the message's usage.
    pub(crate) prompt_tokens: usize,
}

/// Records the text of an answer the run was cancelled in the middle of as an assistant message
/// without tool calls, marked [`meta::INTERRUPTED`](agent_execution::meta::INTERRUPTED), with
/// estimated usage: the trace keeps what the model had said, and a later turn sends it back as
/// the assistant's. Nothing is recorded when no text had arrived.
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
    let usage = agent_llm::Usage::estimate(
        arrived.prompt_tokens as u64,
        agent_llm::estimate_tokens(&arrived.text) as u64,
    );
    let cost = agent.engine.root.prices.cost(&agent.spec.model, &usage);
    let content = AssistantContent::new(Some(arrived.text), Vec::new());
    let mut message = NewMessage::assistant(content)
        .usage(usage.prompt_tokens + usage.completion_tokens, cost)
        .duration_ms(arrived.started.elapsed().as_millis() as u64);
    message.goal_id = arrived.goal_id;
    message.metadata.insert(USAGE_KEY.to_owned(), json!(usage));
    message
        .metadata
        .insert(agent_execution::meta::INTERRUPTED.to_owned(), json!(true));
    let recorded = record(agent.store(), trace_id, vec![WriteOp::AddMessage(message)]).await?;
    messages.extend(recorded);
    spending.add(cost);
    Ok(())
}
