//! Full compaction (phase 2): the request that asks the model to summarise the conversation,
//! and the stored message that records the summary.

use agent_execution::message::NewMessage;
use agent_llm::ChatMessage;
use serde_json::Value;

use super::COMPACTION_KEY;

/// The request that asks the model to summarise the conversation for a full compaction (the
/// built-in `compaction` profile's prompt).
pub const COMPACTION_PROMPT: &str = "Provide a detailed prompt for continuing our \
conversation above. Focus on information that would be helpful for continuing it: what we did, \
what we are doing, which files we are working on, what we found, and what we are going to do \
next. Keep every decision, file name and number that later steps need.";

/// The start of a stored full-compaction summary.
pub const SUMMARY_PREFIX: &str = "Summary of the conversation so far:\n";

/// The messages of a summarising call: the view as the model saw it, then `prompt` as the
/// newest user message.
pub fn summary_request(view: &[ChatMessage], prompt: &str) -> Vec<ChatMessage> {
    let mut chat = Vec::with_capacity(view.len() + 1);
    chat.extend_from_slice(view);
    chat.push(ChatMessage::User(prompt.to_owned()));
    chat
}

/// The stored message of a summary, tied to `goal_id` and marked as a compaction, so the view
/// starts there from now on.
pub fn summary_message(summary: &str, goal_id: Option<String>) -> NewMessage {
    let mut message = NewMessage::user(format!("{SUMMARY_PREFIX}{summary}"));
    message.goal_id = goal_id;
    message
        .metadata
        .insert(COMPACTION_KEY.to_owned(), Value::Bool(true));
    message
}
