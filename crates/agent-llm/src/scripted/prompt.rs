//! The prompt tokens a scripted answer reports when its turn gives no `usage`: estimated from the
//! request, message by message, remembering each conversation's messages and their counts, so a
//! request costs the tokenising of the messages that are new since the conversation's previous
//! one. A conversation only grows between requests (or changes near its end, when it is
//! compacted), so a long run tokenises each message once rather than the whole conversation at
//! every call.

use std::collections::HashMap;
use std::sync::Arc;

use crate::tokens::{estimate_message_tokens, estimate_tools_tokens};
use crate::types::{ChatMessage, ChatRequest, ToolSpec};

/// The counts of the previous request of every conversation (the main queue and each route).
#[derive(Debug, Default)]
pub(super) struct PromptCounts {
    conversations: HashMap<Option<usize>, Conversation>,
}

/// One conversation's previous request: its messages with their counts, and its tools.
#[derive(Debug, Default)]
struct Conversation {
    messages: Vec<(ChatMessage, usize)>,
    tools: Option<(Arc<Vec<ToolSpec>>, usize)>,
}

impl PromptCounts {
    /// The estimated prompt tokens of `request`, answered by `route` (`None`: the main queue);
    /// the same figure as [`crate::estimate_request_tokens`].
    pub(super) fn estimate(&mut self, route: Option<usize>, request: &ChatRequest) -> usize {
        let known = self.conversations.entry(route).or_default();
        // The messages the previous request shared with this one, from the start; comparing
        // them costs far less than tokenising them again.
        let same = known
            .messages
            .iter()
            .zip(request.messages.iter())
            .take_while(|((message, _), new)| message == *new)
            .count();
        known.messages.truncate(same);
        known.messages.extend(
            request.messages[same..]
                .iter()
                .map(|message| (message.clone(), estimate_message_tokens(message))),
        );
        let tools = match &known.tools {
            Some((tools, count))
                if Arc::ptr_eq(tools, &request.tools) || *tools == request.tools =>
            {
                *count
            }
            _ => {
                let count = estimate_tools_tokens(&request.tools);
                known.tools = Some((request.tools.clone(), count));
                count
            }
        };
        known.messages.iter().map(|(_, count)| count).sum::<usize>() + tools
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::estimate_request_tokens;

    #[test]
    fn counts_as_the_whole_request_would_be_counted() {
        let mut counts = PromptCounts::default();
        let mut messages = vec![ChatMessage::system("Be brief."), ChatMessage::user("Hi")];
        for step in 0..20 {
            messages.push(ChatMessage::user(format!("step {step}: ").repeat(step + 1)));
            if step % 7 == 6 {
                // A compaction rewrites an earlier message.
                messages[1] = ChatMessage::user(format!("summary up to step {step}"));
            }
            let request = ChatRequest::new("scripted", messages.clone());
            assert_eq!(
                counts.estimate(None, &request),
                estimate_request_tokens(&request),
                "step {step}"
            );
        }
        // Another conversation keeps its own counts.
        let other = ChatRequest::new("scripted", vec![ChatMessage::user("other")]);
        assert_eq!(
            counts.estimate(Some(0), &other),
            estimate_request_tokens(&other)
        );
    }
}
