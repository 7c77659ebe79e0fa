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

/// What opens the user message of a summarising call, before the conversation.
pub const SUMMARY_INTRO: &str = "Here is our conversation so far, as a transcript:\n\n";

/// The messages of a summarising call for a view: the plan (the view's last leading system
/// message; the agent's own prompt, which tells it how to use its tools, is left out), then one
/// user message with the conversation as a transcript ([`render_transcript`]) followed by
/// `prompt`.
///
/// No tool call or tool result travels as such, so the request needs no tool specs on any
/// provider: it is sent without tools, is smaller than the view by their specs, and leaves the
/// model nothing to call but an answer.
pub fn summary_request(view: &[ChatMessage], prompt: &str) -> Vec<ChatMessage> {
    let leading = view
        .iter()
        .take_while(|m| matches!(m, ChatMessage::System(_)))
        .count();
    let mut chat = Vec::with_capacity(2);
    if let Some(plan) = leading.checked_sub(1).map(|last| &view[last]) {
        chat.push(plan.clone());
    }
    let transcript = render_transcript(&view[leading..]);
    chat.push(ChatMessage::User(format!(
        "{SUMMARY_INTRO}{transcript}\n{prompt}"
    )));
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
    // A summary is written from words: each picture becomes its placeholder.
    if let Some(images) = message.images_mut().filter(|images| !images.is_empty()) {
        let names: Vec<String> = images.drain(..).map(|image| image.placeholder()).collect();
        cut += names.len();
        match message {
            ChatMessage::UserWithImages { text, .. } => {
                *message = ChatMessage::user(format!("{text}\n{}", names.join("\n")));
            }
            ChatMessage::Tool { content, .. } => {
                content.push_str(&format!("\n{}", names.join("\n")))
            }
            _ => {}
        }
    }
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

/// Renders chat messages as stable, readable lines (one block per message), for snapshots of
/// what the model sees and for showing a context to a person.
pub fn render_transcript(chat: &[ChatMessage]) -> String {
    let mut out = String::new();
    for message in chat {
        match message {
            ChatMessage::System(text) => push_block(&mut out, "system", text),
            ChatMessage::User(text) => push_block(&mut out, "user", text),
            ChatMessage::UserWithImages { text, images } => {
                push_block(&mut out, "user", text);
                for image in images {
                    push_block(&mut out, "picture", &image.placeholder());
                }
            }
            ChatMessage::Assistant {
                text, tool_calls, ..
            } => {
                if let Some(text) = text {
                    push_block(&mut out, "assistant", text);
                }
                for call in tool_calls {
                    let line = format!("{}({}) [{}]", call.name, call.arguments, call.id);
                    push_block(&mut out, "assistant call", &line);
                }
            }
            ChatMessage::Tool {
                tool_call_id,
                content,
                images,
            } => {
                push_block(&mut out, &format!("tool [{tool_call_id}]"), content);
                for image in images {
                    push_block(&mut out, "picture", &image.placeholder());
                }
            }
        }
    }
    out
}

fn push_block(out: &mut String, label: &str, text: &str) {
    out.push_str(label);
    out.push_str(": ");
    out.push_str(&text.replace('\n', "\n    "));
    out.push('\n');
}
/// What the summariser is told when its answer had no text.
pub const SUMMARY_WITHOUT_TEXT: &str = "Your answer had no text. Answer with the summary itself, \
as plain text, without calling any tool.";

/// What the summariser is told when its answer was cut at the length limit (a small model that
/// echoes its template fills any room it is given): a cut summary is not taken.
pub const SUMMARY_CUT: &str = "Your summary was cut off at the length limit. Write a much \
shorter one: only what is needed to continue, in a few short paragraphs.";

/// Why a full compaction stored no summary after two answers that were not one: cut at the
/// length limit `cut` (when one was), or without text.
pub fn summary_failed(cut: Option<u32>) -> String {
    match cut {
        Some(cap) => format!(
            "the summariser's answers were not a summary (cut at the length limit of {cap} \
             tokens, or without text) twice; no summary was stored: the context keeps goal \
             compaction and prune, and leaves the oldest exchanges out of a request that would \
             not fit"
        ),
        None => "the summariser answered twice without text; no summary was stored: the \
                 context keeps goal compaction and prune, and leaves the oldest exchanges out \
                 of a request that would not fit"
            .to_owned(),
    }
}
