//! Whether a request can fit the model's window at all: what every request of an agent carries
//! whatever compaction does (the tool specs, the system prompt, the plan and the task), against
//! the window less the room kept for the answer.
//!
//! A window smaller than that cannot be helped by compacting: the run stops at once with an
//! error that names the figures and the setting to change, rather than sending requests the
//! server refuses, or summarising again and again.

use agent_llm::ChatMessage;

use crate::compaction::{ContextBudget, estimate_chat};
use crate::error::StepError;

/// The tokens of a view that no compaction removes: the budget's `request_tokens` (tool specs),
/// the leading system messages (prompt and plan) and the first message after them (the task).
pub(crate) fn floor(view: &[ChatMessage], budget: &ContextBudget) -> usize {
    let leading = view
        .iter()
        .take_while(|m| matches!(m, ChatMessage::System(_)))
        .count();
    let kept = (leading + 1).min(view.len());
    budget.request_tokens + estimate_chat(&view[..kept], &agent_llm::estimate_tokens)
}

/// Fails when the part of `view` that compaction keeps does not fit the window with room for
/// the answer.
pub(crate) fn check(view: &[ChatMessage], budget: &ContextBudget) -> Result<(), StepError> {
    let needed = floor(view, budget);
    if needed + budget.answer_tokens <= budget.context_window {
        return Ok(());
    }
    Err(too_small(needed, budget))
}

/// The error of a window too small for what every request carries (`needed` tokens by the
/// estimate).
pub(crate) fn too_small(needed: usize, budget: &ContextBudget) -> StepError {
    let window = budget.context_window;
    let answer = match budget.answer_tokens {
        0 => String::new(),
        n => format!(" and {n} kept for the answer (max_tokens)"),
    };
    StepError::WindowTooSmall(format!(
        "context_window: this window is too small for the tools and the system prompt \
         ({needed} tokens{answer}, of a window of {window}): raise the context window \
         (--context-window, or context_window in agent.toml) or offer fewer tools"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_the_tools_and_prompt_fill_is_refused_with_its_figures() {
        let view = vec![
            ChatMessage::System("You are an agent. ".repeat(20)),
            ChatMessage::System("## Current Plan".into()),
            ChatMessage::User("Do it".into()),
            ChatMessage::User("A long conversation. ".repeat(500)),
        ];
        let mut budget = ContextBudget::for_window(2_048);
        budget.request_tokens = 1_450;
        let needed = floor(&view, &budget);
        assert!((1_450..1_700).contains(&needed), "{needed}");
        assert!(check(&view, &budget).is_ok());
        budget.answer_tokens = 512;
        let Err(StepError::WindowTooSmall(error)) = check(&view, &budget) else {
            panic!("the tools, the prompt and the answer do not fit 2,048 tokens");
        };
        assert!(
            error.contains(&format!("({needed} tokens and 512 kept")),
            "{error}"
        );
        assert!(error.contains("--context-window"), "{error}");
    }
}
