//! `session/load`: a stored trace's history as the session updates a client would have seen.

use std::collections::HashMap;
use std::path::Path;

use agent_client_protocol::v1::schema::{SessionUpdate, ToolCallStatus};
use agent_execution::{Content, Message, TraceStore};
use agent_llm::Role;

use crate::plan::plan_of;
use crate::updates::{GOAL_TOOL, announce, result_update, text};

/// The updates that replay `trace_id`: each user message, the model's reasoning and text, each
/// tool call with its result (a call without one shows as it was left: pending), then the
/// plan. System messages and the results of goal calls are left out.
pub(crate) async fn history(
    store: &dyn TraceStore,
    trace_id: &str,
    cwd: &Path,
) -> Result<Vec<SessionUpdate>, agent_execution::StoreError> {
    // Only read: the store's kept messages, not copies of them.
    let messages = store.get_trace_messages_shared(trace_id).await?;
    let results: HashMap<&str, &Message> = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| Some((m.tool_call_id.as_deref()?, &**m)))
        .collect();
    let mut updates = Vec::new();
    for message in &messages {
        match (&message.role, &message.content) {
            (Role::User, Content::Text(said)) => {
                updates.push(SessionUpdate::UserMessageChunk(text(said)));
            }
            (Role::Assistant, Content::Assistant(turn)) => {
                let reasoning = turn.reasoning_text();
                if !reasoning.is_empty() {
                    updates.push(SessionUpdate::AgentThoughtChunk(text(reasoning)));
                }
                if let Some(answer) = turn.text.as_deref().filter(|t| !t.is_empty()) {
                    updates.push(SessionUpdate::AgentMessageChunk(text(answer)));
                }
                for call in turn.tool_calls.iter().filter(|c| c.name != GOAL_TOOL) {
                    let result = results.get(call.id.as_str()).and_then(|m| result_update(m));
                    let mut announced = announce(call, cwd, false);
                    if let Some(result) = result {
                        announced = announced
                            .status(result.fields.status.unwrap_or(ToolCallStatus::Completed));
                        updates.push(SessionUpdate::ToolCall(announced));
                        updates.push(SessionUpdate::ToolCallUpdate(result));
                    } else {
                        updates.push(SessionUpdate::ToolCall(announced));
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(tree) = store.get_goal_tree(trace_id).await?
        && !tree.goals().is_empty()
    {
        updates.push(SessionUpdate::Plan(plan_of(&tree)));
    }
    Ok(updates)
}
