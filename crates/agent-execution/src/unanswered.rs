//! What a trace's messages leave unanswered, as a resume reads it: tool calls without a
//! recorded result, an answer a cancellation interrupted, the newest turn.

use std::collections::HashSet;
use std::sync::Arc;

use agent_llm::ToolCall;

use crate::message::{Message, Role};

/// Whether the trace's last message is an answer a cancellation interrupted.
pub fn ends_interrupted(messages: &[Arc<Message>]) -> bool {
    messages.last().is_some_and(|last| {
        last.role == Role::Assistant && crate::meta::MessageMeta::of(last).interrupted
    })
}

/// Tool calls of assistant messages that have no recorded result, with their goal.
pub fn dangling_calls(messages: &[Arc<Message>]) -> Vec<(ToolCall, Option<String>)> {
    let answered = answered_ids(messages);
    messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| {
            m.content
                .tool_calls()
                .to_vec()
                .into_iter()
                .map(move |call| (call, m.goal_id.clone()))
        })
        .filter(|(call, _)| !answered.contains(call.id.as_str()))
        .collect()
}

/// The ids of the calls that have a recorded result.
pub fn answered_ids(messages: &[Arc<Message>]) -> HashSet<&str> {
    messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect()
}

/// The newest assistant message.
pub fn last_turn(messages: &[Arc<Message>]) -> Option<&Message> {
    messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map(|m| &**m)
}
