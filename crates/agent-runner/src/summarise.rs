//! The full compaction's model call: the `compaction` profile summarises the conversation, and
//! the summary is recorded so that the view starts there.

use std::time::Instant;

use agent_execution::message::Message;
use agent_execution::store::WriteOp;
use agent_goal::GoalTree;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::agents::COMPACTION;
use crate::budget::Budget;
use crate::compaction::{COMPACTION_PROMPT, summary_message, summary_request};
use crate::context::ContextView;
use crate::error::StepError;
use crate::model;
use crate::record::record;

/// Summarises the conversation into one stored message that hides everything before it. The
/// `compaction` profile gives the request (its prompt), the model and the client.
pub(crate) async fn compact(
    agent: &Agent,
    trace_id: &str,
    tree: &GoalTree,
    messages: &mut Vec<Message>,
    view: &ContextView,
    budget: &Budget,
    cancel: &CancellationToken,
) -> Result<(), StepError> {
    let engine = &agent.engine;
    let profile = engine.config(COMPACTION);
    let prompt = profile
        .and_then(|p| p.system_prompt.as_deref())
        .unwrap_or(COMPACTION_PROMPT);
    let summariser_model = profile
        .and_then(|p| p.model.clone())
        .unwrap_or_else(|| agent.spec.model.clone());
    let llm = match engine.root.clients.get(COMPACTION) {
        Some(llm) => llm.clone(),
        None => agent.llm.clone(),
    };
    let started = Instant::now();
    let chat = summary_request(&view.messages, prompt);
    let request = model::request(&agent.spec, &summariser_model, chat, Vec::new());
    let response = model::call(llm.as_ref(), &agent.spec, request, cancel).await?;
    let usage = model::usage_of(&response, view.estimated_tokens);
    let cost = engine.root.prices.cost(&summariser_model, &usage);
    let summary = response.text.unwrap_or_default();
    let message = summary_message(&summary, tree.current_id().map(str::to_owned))
        .usage(usage.prompt_tokens + usage.completion_tokens, cost)
        .duration_ms(started.elapsed().as_millis() as u64);
    let recorded = record(agent.store(), trace_id, vec![WriteOp::AddMessage(message)]).await?;
    messages.extend(recorded);
    budget.add(cost);
    Ok(())
}
