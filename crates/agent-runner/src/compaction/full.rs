//! Full compaction (phase 2): the request that asks the model to summarise the conversation,
//! and the stored message that records the summary.

use agent_execution::message::NewMessage;
use agent_llm::ChatMessage;
use serde_json::Value;

use super::{COMPACTION_KEY, MESSAGE_OVERHEAD, estimate_content};

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

/// The share of the window a summary request may fill by the estimate: the rest is a margin
/// for the estimate's error and room for the answer.
pub const SUMMARY_FILL: f64 = 0.6;

/// What a shortened text keeps at each end, in bytes.
const KEEP_BYTES: usize = 1_000;

/// Shortens the largest texts of a conversation, oldest first, until its estimate is at most
/// `target` tokens: tool outputs and tool-call arguments first, then any other message. Each
/// shortened text keeps its head and tail around a marker saying how much was cut; cut
/// arguments stay a JSON object (`{"_cut": "…", "_bytes": N}`), which every provider accepts.
/// Returns how many texts were shortened. The conversation stays valid: nothing is removed.
pub fn fit_for_summary(
    chat: &mut [ChatMessage],
    target: usize,
    estimate: &dyn Fn(&str) -> usize,
) -> usize {
    let mut tokens: Vec<usize> = chat
        .iter()
        .map(|m| MESSAGE_OVERHEAD + estimate_content(m, estimate))
        .collect();
    let mut total: usize = tokens.iter().sum();
    let mut shortened = 0;
    for pass in [Pass::ToolTexts, Pass::Everything] {
        for (message, size) in chat.iter_mut().zip(tokens.iter_mut()) {
            if total <= target {
                return shortened;
            }
            let cut = shorten(message, pass);
            if cut > 0 {
                shortened += cut;
                let now = MESSAGE_OVERHEAD + estimate_content(message, estimate);
                total = total - *size + now;
                *size = now;
            }
        }
    }
    shortened
}

/// Which texts a pass of [`fit_for_summary`] shortens.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    ToolTexts,
    Everything,
}

/// Shortens the long texts of one message; returns how many it cut.
fn shorten(message: &mut ChatMessage, pass: Pass) -> usize {
    let mut cut = 0;
    match message {
        ChatMessage::Tool { content, .. } => cut += usize::from(cut_text(content)),
        ChatMessage::Assistant {
            text, tool_calls, ..
        } => {
            for call in tool_calls {
                if call.arguments.len() > 2 * KEEP_BYTES {
                    let mut kept = call.arguments.clone();
                    cut_text(&mut kept);
                    let bytes = call.arguments.len();
                    call.arguments = serde_json::json!({"_cut": kept, "_bytes": bytes}).to_string();
                    cut += 1;
                }
            }
            if pass == Pass::Everything
                && let Some(text) = text
            {
                cut += usize::from(cut_text(text));
            }
        }
        ChatMessage::User(text) if pass == Pass::Everything => {
            cut += usize::from(cut_text(text));
        }
        _ => {}
    }
    cut
}

/// Keeps the head and tail of a long text around a marker; false when it was short enough.
fn cut_text(text: &mut String) -> bool {
    if text.len() <= 2 * KEEP_BYTES + 200 {
        return false;
    }
    let head = floor_boundary(text, KEEP_BYTES);
    let tail = ceil_boundary(text, text.len() - KEEP_BYTES);
    let removed = tail - head;
    *text = format!(
        "{}\n[… {removed} bytes cut to fit the summary request …]\n{}",
        &text[..head],
        &text[tail..]
    );
    true
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}
