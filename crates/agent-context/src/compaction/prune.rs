//! Prune (OpenCode's phase 1): older tool outputs are replaced by a marker when that frees
//! enough tokens; the newest turns, the newest tool output and protected tools are kept.

use std::collections::HashMap;

use agent_llm::ChatMessage;

use super::{ContextBudget, PROTECTED_TOOLS, PRUNED_MARKER};

/// Replaces old tool outputs by a marker (OpenCode's prune). Returns how many were replaced.
/// `tokens` holds the estimate of each message's text, and is updated for the replaced ones.
pub(crate) fn prune(
    chat: &mut [ChatMessage],
    tokens: &mut [usize],
    budget: &ContextBudget,
    estimate: &dyn Fn(&str) -> usize,
) -> usize {
    let names: HashMap<&str, &str> = chat
        .iter()
        .flat_map(|m| match m {
            ChatMessage::Assistant { tool_calls, .. } => tool_calls.as_slice(),
            _ => &[],
        })
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect();
    let mut turns = 0;
    let mut protected_tokens = 0;
    let mut candidates: Vec<(usize, usize)> = Vec::new();
    for (index, message) in chat.iter().enumerate().rev() {
        match message {
            ChatMessage::Assistant { .. } => turns += 1,
            ChatMessage::Tool {
                tool_call_id,
                content,
                ..
            } => {
                // Tool results come after their assistant turn, so the results of the newest
                // `protected_turns` turns are seen while `turns` is still below the limit.
                if turns < budget.protected_turns || content.starts_with(PRUNED_MARKER) {
                    continue;
                }
                let name = names.get(tool_call_id.as_str()).copied().unwrap_or("");
                if PROTECTED_TOOLS.contains(&name) {
                    continue;
                }
                let size = tokens
                    .get(index)
                    .copied()
                    .unwrap_or_else(|| estimate(content));
                if protected_tokens + size <= budget.prune_protect {
                    protected_tokens += size;
                } else {
                    protected_tokens = budget.prune_protect;
                    candidates.push((index, size));
                }
            }
            _ => {}
        }
    }
    let freed: usize = candidates.iter().map(|(_, size)| size).sum();
    if freed < budget.prune_minimum {
        return 0;
    }
    for (index, size) in &candidates {
        if let Some(ChatMessage::Tool {
            content, images, ..
        }) = chat.get_mut(*index)
        {
            images.clear();
            *content =
                format!("{PRUNED_MARKER}: about {size} tokens; run the tool again to see it]");
            if let Some(slot) = tokens.get_mut(*index) {
                *slot = estimate(content);
            }
        }
    }
    candidates.len()
}
