//! User turns after the first: continuing an ended trace with a new message, and the queue of
//! messages sent to a run while it works (steering), which the loop puts in front of the model
//! before its next call.
//!
//! Both are recorded as user messages tied to the goal current when they arrive, so their
//! `message_added` events show them in the event stream; their metadata says how they came
//! ([`TURN_KEY`]: `continue` or `queued`, or `background` for how a background delegate ended).

use std::sync::Arc;

use agent_execution::message::{Message, NewMessage};
use agent_execution::meta::Turn;
use agent_execution::store::WriteOp;
use serde_json::json;

use crate::agent::Agent;
use crate::error::StepError;
use crate::record::record;
use agent_execution::background::end_text;

/// The metadata key saying how a user message after the task came: `continue` (it started a
/// new turn of an ended trace) or `queued` (it was sent while a run was going on).
pub const TURN_KEY: &str = agent_execution::meta::TURN;

/// The user message that continues a trace, tied to `goal_id`.
pub(crate) fn continue_message(content: &str, goal_id: Option<&str>) -> WriteOp {
    user_message(content, goal_id, Turn::Continue.as_str())
}

fn user_message(content: &str, goal_id: Option<&str>, how: &str) -> WriteOp {
    let mut message = NewMessage::user(content);
    message.goal_id = goal_id.map(str::to_owned);
    message.metadata.insert(TURN_KEY.to_owned(), json!(how));
    WriteOp::AddMessage(message)
}

/// Records the messages queued for the run as user messages tied to `goal_id`, right before the
/// context of the next model call is built, so the model sees them as the newest user turn.
pub(crate) async fn take_queued(
    agent: &Agent,
    trace_id: &str,
    goal_id: Option<&str>,
    messages: &mut Vec<Arc<Message>>,
) -> Result<(), StepError> {
    let queued = agent.engine.inbox.take(trace_id);
    let queued = agent.hooks(trace_id).admitted(queued).await;
    if queued.is_empty() {
        return Ok(());
    }
    let ops = queued
        .iter()
        .map(|content| user_message(content, goal_id, Turn::Queued.as_str()))
        .collect();
    let recorded = record(agent.store(), trace_id, ops).await?;
    messages.extend(recorded);
    Ok(())
}

/// Records how the background delegates of the run that ended since the last look ended, and
/// those a crash left without an end, as user messages tied to `goal_id`, so the next model call
/// (and a resumed or forked trace) has them.
pub(crate) async fn take_background(
    agent: &Agent,
    trace_id: &str,
    goal_id: Option<&str>,
    messages: &mut Vec<Arc<Message>>,
) -> Result<(), StepError> {
    let mut ops = Vec::new();
    let recorded = messages.iter().map(AsRef::as_ref);
    for (id, lost) in agent.engine.background.take_ends(trace_id, recorded) {
        let report = agent.sub_agents.report(&id).await.ok();
        let sub_agents = &agent.sub_agents;
        let text = sub_agents.bounded(&end_text(&id, report.as_ref(), lost));
        ops.push(user_message(&text, goal_id, Turn::Background.as_str()));
    }
    if !ops.is_empty() {
        messages.extend(record(agent.store(), trace_id, ops).await?);
    }
    Ok(())
}

/// Records messages that arrived after the run's last model call, so that the next turn of the
/// trace sees them.
pub(crate) async fn keep_late(agent: &Agent, trace_id: &str, late: Vec<String>) {
    let late = agent.hooks(trace_id).admitted(late).await;
    if late.is_empty() {
        return;
    }
    let ops = late
        .iter()
        .map(|content| user_message(content, None, Turn::Queued.as_str()))
        .collect();
    if let Err(error) = agent.store().batch(trace_id, ops).await {
        tracing::warn!(trace_id, %error, "could not record the messages sent at the run's end");
    }
}
