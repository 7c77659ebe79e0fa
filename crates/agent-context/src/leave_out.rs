//! The last resort when a full compaction gets no summary (the summariser failed, or wrote one
//! that was cut) and a request would not fit the window: the oldest exchanges of the
//! conversation are left out of the request, whole, until it fits. The trace keeps them; only
//! what the model is sent this step is shorter. Pure, like the rest of the crate.
//!
//! What always stays: the system messages, the task (the first user message), the newest user
//! message, and the newest exchange (an assistant message with the tool results that answer it).
//! An exchange goes whole, never a tool call without its result, so a request stays valid.

use std::ops::Range;
use std::sync::Arc;

use agent_llm::{ChatMessage, ContextWindow};

use crate::compaction::ContextBudget;
use crate::compaction::{MESSAGE_OVERHEAD, estimate_content};
use crate::context_incremental::SharedView;
use crate::window::{answer_room, thousands};

/// A view with its oldest exchanges left out, and how many messages went.
#[derive(Debug)]
pub struct LeftOut {
    /// The shorter view.
    pub view: SharedView,
    /// How many messages of the view were left out.
    pub messages: usize,
}

/// Leaves out the oldest exchanges of `view` until its estimate is at most `limit` tokens.
/// `None` when it already fits, or when nothing can go (what always stays is over `limit`);
/// otherwise the shorter view, which may still be over `limit` when what stays is.
///
/// ```
/// use std::sync::Arc;
/// use agent_context::context_incremental::SharedView;
/// use agent_context::leave_out::leave_out_oldest;
/// use agent_llm::{ChatMessage, ContextWindow};
///
/// let long = "x".repeat(400);
/// let messages = vec![
///     ChatMessage::System("Be brief.".into()),
///     ChatMessage::User("The task".into()),
///     ChatMessage::Assistant { text: Some(long.clone()), tool_calls: vec![], reasoning: vec![] },
///     ChatMessage::User("Next".into()),
///     ChatMessage::Assistant { text: Some(long.clone()), tool_calls: vec![], reasoning: vec![] },
///     ChatMessage::User("Now this".into()),
/// ];
/// let estimate = |text: &str| text.len() / 4;
/// let view = SharedView {
///     estimated_tokens: 231,
///     messages: Arc::new(messages),
///     needs_full_compaction: true,
///     compacted_goals: vec![],
///     pruned_outputs: 0,
///     summarised_messages: 0,
/// };
/// let left = leave_out_oldest(&view, 150, &estimate).unwrap();
/// // The first answer went; the task and the newest messages stayed.
/// assert_eq!(left.messages, 1);
/// assert!(matches!(&left.view.messages[1], ChatMessage::User(task) if task == "The task"));
/// assert!(left.view.estimated_tokens <= 150);
/// ```
pub fn leave_out_oldest(
    view: &SharedView,
    limit: usize,
    estimate: &dyn Fn(&str) -> usize,
) -> Option<LeftOut> {
    if view.estimated_tokens <= limit {
        return None;
    }
    let chat = view.messages.as_slice();
    let groups = exchanges(chat);
    let is = |group: &Range<usize>, user: bool| match &chat[group.start] {
        ChatMessage::User(_) => user,
        ChatMessage::System(_) => !user,
        _ => false,
    };
    // The system messages, the task, the newest user message and the last exchange stay.
    let task = groups.iter().position(|g| is(g, true));
    let newest_user = groups.iter().rposition(|g| is(g, true));
    let last = groups.len().checked_sub(1);
    let mut estimated = view.estimated_tokens;
    let mut dropped = vec![false; groups.len()];
    for (index, group) in groups.iter().enumerate() {
        if estimated <= limit {
            break;
        }
        if is(group, false) || [task, newest_user, last].contains(&Some(index)) {
            continue;
        }
        let weight: usize = chat[group.clone()]
            .iter()
            .map(|m| MESSAGE_OVERHEAD + estimate_content(m, estimate))
            .sum();
        estimated = estimated.saturating_sub(weight);
        dropped[index] = true;
    }
    let kept: Vec<ChatMessage> = groups
        .iter()
        .zip(&dropped)
        .filter(|(_, dropped)| !**dropped)
        .flat_map(|(group, _)| chat[group.clone()].iter().cloned())
        .collect();
    let messages = chat.len() - kept.len();
    (messages > 0).then(|| LeftOut {
        view: SharedView {
            messages: Arc::new(kept),
            estimated_tokens: estimated,
            ..view.clone()
        },
        messages,
    })
}

/// [`leave_out_oldest`] for a request in `window` with room for the answer, and what the run
/// is told the first time it leaves messages out (`told` says whether it was).
pub fn leave_out_for(
    view: &SharedView,
    (budget, window): (&ContextBudget, ContextWindow),
    told: &mut bool,
    estimate: &dyn Fn(&str) -> usize,
) -> Option<(SharedView, Option<String>)> {
    let limit = window.tokens.saturating_sub(answer_room(budget));
    let left = leave_out_oldest(view, limit, estimate)?;
    let notice = (!std::mem::replace(told, true))
        .then(|| left_out_notice(left.messages, view.estimated_tokens, &left.view, window));
    Some((left.view, notice))
}

/// What a run is told the first time it leaves messages out: how many, the request's estimate
/// before and after, and the window.
fn left_out_notice(
    messages: usize,
    before: usize,
    left: &SharedView,
    window: ContextWindow,
) -> String {
    format!(
        "no summary of the conversation could be had, so its {messages} oldest messages are \
         left out of the request (the trace keeps them): about {} tokens instead of {}, for the \
         model's {}-token window ({}). Older parts of the conversation are left out the same \
         way while it does not fit; a larger window keeps more of it in view",
        thousands(left.estimated_tokens),
        thousands(before),
        thousands(window.tokens),
        window.source.describe(),
    )
}

/// The view cut into what goes or stays whole: each system or user message alone, each
/// assistant message with the tool results after it.
fn exchanges(chat: &[ChatMessage]) -> Vec<Range<usize>> {
    let mut groups: Vec<Range<usize>> = Vec::new();
    for (index, message) in chat.iter().enumerate() {
        match message {
            ChatMessage::Tool { .. } if let Some(last) = groups.last_mut() => last.end = index + 1,
            _ => groups.push(index..index + 1),
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use agent_llm::ToolCall;

    use super::*;

    fn estimate(text: &str) -> usize {
        text.len() / 4
    }

    fn assistant(text: &str, calls: &[&str]) -> ChatMessage {
        ChatMessage::Assistant {
            text: Some(text.to_owned()),
            tool_calls: calls
                .iter()
                .map(|id| ToolCall {
                    id: (*id).to_owned(),
                    name: "read_file".to_owned(),
                    arguments: "{}".to_owned(),
                })
                .collect(),
            reasoning: Vec::new(),
        }
    }

    fn tool(id: &str, text: &str) -> ChatMessage {
        ChatMessage::tool_result(id, text)
    }

    fn view_of(messages: Vec<ChatMessage>) -> SharedView {
        let estimated_tokens = messages
            .iter()
            .map(|m| MESSAGE_OVERHEAD + estimate_content(m, &estimate))
            .sum();
        SharedView {
            messages: Arc::new(messages),
            estimated_tokens,
            needs_full_compaction: true,
            compacted_goals: Vec::new(),
            pruned_outputs: 0,
            summarised_messages: 0,
        }
    }

    #[test]
    fn a_call_goes_with_its_results_and_what_always_stays_stays() {
        let big = "y".repeat(4_000);
        let view = view_of(vec![
            ChatMessage::System("system".into()),
            ChatMessage::User("task".into()),
            assistant("", &["a", "b"]),
            tool("a", &big),
            tool("b", &big),
            ChatMessage::User("second".into()),
            assistant("", &["c"]),
            tool("c", &big),
            assistant("", &["d"]),
            tool("d", "small"),
        ]);
        let left = leave_out_oldest(&view, 500, &estimate).unwrap();
        let kept = left.view.messages.as_slice();
        // The first exchange (a call and its two results) and the next one went: 5 messages.
        assert_eq!(left.messages, 5, "{kept:?}");
        assert!(matches!(&kept[0], ChatMessage::System(_)));
        assert!(matches!(&kept[1], ChatMessage::User(t) if t == "task"));
        assert!(matches!(&kept[2], ChatMessage::User(t) if t == "second"));
        assert!(matches!(&kept[4], ChatMessage::Tool { tool_call_id, .. } if tool_call_id == "d"));
        // No result is left without its call.
        for (index, message) in kept.iter().enumerate() {
            if let ChatMessage::Tool { tool_call_id, .. } = message {
                assert!(kept[..index].iter().any(|m| matches!(m,
                    ChatMessage::Assistant { tool_calls, .. }
                        if tool_calls.iter().any(|c| &c.id == tool_call_id))));
            }
        }
        assert_eq!(
            left.view.estimated_tokens,
            view_of(kept.to_vec()).estimated_tokens
        );
        assert!(left.view.estimated_tokens <= 500);
    }

    #[test]
    fn a_view_that_fits_or_has_nothing_to_leave_out_is_left_alone() {
        let view = view_of(vec![
            ChatMessage::System("system".into()),
            ChatMessage::User("x".repeat(8_000)),
            assistant("", &["a"]),
            tool("a", "result"),
        ]);
        assert!(leave_out_oldest(&view, view.estimated_tokens, &estimate).is_none());
        // Only the task and the newest exchange: nothing may go.
        assert!(leave_out_oldest(&view, 10, &estimate).is_none());
    }
}
