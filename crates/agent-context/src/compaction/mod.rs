//! Compaction: how the context stays small on long tasks.
//!
//! - **Goal compaction** ([`goals`](self)): the messages of a finished goal outside the current
//!   branch are replaced by one summary line per goal ([`goal_summary`]).
//! - **Prune** (OpenCode's phase 1): older tool outputs are replaced by a marker
//!   ([`PRUNED_MARKER`]) once that frees enough tokens ([`ContextBudget`]).
//! - **Full compaction** (phase 2): when the estimate still nears the window, the runner asks the
//!   model for a summary of the conversation ([`COMPACTION_PROMPT`], [`summary_request`]) and
//!   records it as a user message marked [`COMPACTION_KEY`] ([`summary_message`]); the view then
//!   starts at that summary (the task is kept).
//!
//! Everything here is pure: the store is never changed by compaction except by the summary
//! message a full compaction adds; goal compaction and prune only shape the view
//! ([`crate::context`]).

mod full;
mod goals;
mod prune;

use agent_execution::message::Message;
use agent_llm::{ChatMessage, Reasoning};

pub use full::{
    COMPACTION_PROMPT, SUMMARY_CUT, SUMMARY_FILL, SUMMARY_INTRO, SUMMARY_PREFIX,
    SUMMARY_WITHOUT_TEXT, fit_for_summary, render_transcript, summary_failed, summary_message,
    summary_request,
};
pub use goals::goal_summary;
pub(crate) use goals::{GoalKey, Item, compact_goals, is_same};
pub(crate) use prune::prune;

/// Tool output tokens protected from pruning, counted back from the newest message.
pub const PRUNE_PROTECT: usize = 40_000;
/// The least number of tokens a prune must free to be worth it.
pub const PRUNE_MINIMUM: usize = 20_000;
/// Tools whose outputs are never pruned.
pub const PROTECTED_TOOLS: &[&str] = &["goal", "skill"];
/// The metadata key that marks a stored message as a full-compaction summary.
pub const COMPACTION_KEY: &str = agent_execution::meta::COMPACTION;
/// The metadata key of a full-compaction summary's estimate of the view it replaced, in tokens.
pub const TOKENS_BEFORE_KEY: &str = agent_execution::meta::TOKENS_BEFORE;
/// The metadata key of a full-compaction summary's own estimate, in tokens.
pub const TOKENS_AFTER_KEY: &str = agent_execution::meta::TOKENS_AFTER;
/// The text a pruned tool output is replaced with (followed by the size it had).
pub const PRUNED_MARKER: &str = "[tool output pruned from the context";
/// The limits the context is built against.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ContextBudget {
    /// The model's context window, in tokens.
    pub context_window: usize,
    /// The share of the window above which a full compaction is needed (0.7 by default).
    pub compaction_ratio: f64,
    /// Tool output tokens kept, counted back from the newest message.
    pub prune_protect: usize,
    /// The least number of tokens a prune must free.
    pub prune_minimum: usize,
    /// The newest assistant turns (with their tool results) that are never pruned.
    pub protected_turns: usize,
    /// Tokens every request carries besides its messages (the tool specs), by the same
    /// estimate: counted in the view's estimate, so a window that tools nearly fill is
    /// compacted in time.
    pub request_tokens: usize,
    /// Room left in the window for the answer (the request's `max_tokens`, 0 when unset).
    pub answer_tokens: usize,
    /// How the model's provider counts a picture's tokens ([`ContextBudget::for_model`]).
    pub image_tokens: agent_llm::ImageTokens,
}

impl ContextBudget {
    /// The defaults of SPEC §6 for a model with this context window.
    pub fn for_window(context_window: usize) -> Self {
        Self {
            context_window,
            compaction_ratio: 0.7,
            prune_protect: PRUNE_PROTECT,
            prune_minimum: PRUNE_MINIMUM,
            protected_turns: 2,
            request_tokens: 0,
            answer_tokens: 0,
            image_tokens: agent_llm::ImageTokens::default(),
        }
    }

    /// [`for_window`](Self::for_window), its pictures counted by the rule of `model`'s provider
    /// ([`agent_llm::ImageTokens::for_model`]).
    ///
    /// ```
    /// use agent_context::ContextBudget;
    /// use agent_llm::ImageTokens;
    /// assert_eq!(ContextBudget::for_model(128_000, "gpt-4o").image_tokens, ImageTokens::OpenAi);
    /// ```
    pub fn for_model(context_window: usize, model: &str) -> Self {
        Self {
            image_tokens: agent_llm::ImageTokens::for_model(model),
            ..Self::for_window(context_window)
        }
    }

    /// The estimate of a whole request (messages and [`request_tokens`](Self::request_tokens))
    /// above which a full compaction is needed: the compaction ratio of the window, and never
    /// more than leaves room for the answer.
    ///
    /// ```
    /// let mut budget = agent_context::ContextBudget::for_window(2_048);
    /// assert_eq!(budget.compaction_threshold(), 1_433);
    /// budget.answer_tokens = 1_024;
    /// assert_eq!(budget.compaction_threshold(), 1_024);
    /// ```
    pub fn compaction_threshold(&self) -> usize {
        let share = (self.context_window as f64 * self.compaction_ratio) as usize;
        share.min(self.context_window.saturating_sub(self.answer_tokens))
    }
}

/// Goal compaction, pruning, or neither: the strategies the context economy is measured with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompactionStrategy {
    /// Goal compaction, then prune (the default).
    #[default]
    GoalsAndPrune,
    /// Prune only, as tools without a goal tree do.
    PruneOnly,
    /// Keep everything (a baseline for measurements).
    Nothing,
}

/// True when the message is a full-compaction summary.
pub fn is_compaction(message: &Message) -> bool {
    message
        .metadata
        .get(COMPACTION_KEY)
        .is_some_and(|v| v.as_bool() == Some(true))
}

/// Tokens added per message for the chat format's framing.
pub(crate) const MESSAGE_OVERHEAD: usize = 4;

/// Estimated tokens of a list of chat messages.
pub fn estimate_chat(chat: &[ChatMessage], estimate: &dyn Fn(&str) -> usize) -> usize {
    chat.iter()
        .map(|m| MESSAGE_OVERHEAD + estimate_content(m, estimate))
        .sum()
}

/// Estimated tokens of one message's text, without the per-message overhead; its pictures by
/// [`agent_llm::ImageTokens::default`]'s rule.
pub(crate) fn estimate_content(message: &ChatMessage, estimate: &dyn Fn(&str) -> usize) -> usize {
    estimate_content_with(message, estimate, agent_llm::ImageTokens::default())
}

/// [`estimate_content`], its pictures by `rule`.
pub(crate) fn estimate_content_with(
    message: &ChatMessage,
    estimate: &dyn Fn(&str) -> usize,
    rule: agent_llm::ImageTokens,
) -> usize {
    let image_tokens = |images: &[agent_llm::ChatImage]| -> usize {
        (images.iter())
            .map(|image| rule.estimate(image.width, image.height))
            .sum()
    };
    match message {
        ChatMessage::System(text) | ChatMessage::User(text) => estimate(text),
        ChatMessage::UserWithImages { text, images } => estimate(text) + image_tokens(images),
        ChatMessage::Assistant {
            text,
            tool_calls,
            reasoning,
        } => {
            text.as_deref().map_or(0, estimate)
                + tool_calls
                    .iter()
                    .map(|c| estimate(&c.name) + estimate(&c.arguments))
                    .sum::<usize>()
                + reasoning
                    .iter()
                    .map(|r| estimate(sent_reasoning(r)))
                    .sum::<usize>()
        }
        ChatMessage::Tool {
            content, images, ..
        } => estimate(content) + image_tokens(images),
    }
}

/// The text of a piece of reasoning that goes back to its provider and takes room in the
/// context: the reasoning text or thinking, a redacted block's data, a Responses item's
/// encrypted content.
pub(crate) fn sent_reasoning(reasoning: &Reasoning) -> &str {
    match reasoning {
        Reasoning::Text { text, .. } => text,
        Reasoning::Thinking { thinking, .. } => thinking,
        Reasoning::RedactedThinking { data } => data,
        Reasoning::Item {
            encrypted_content, ..
        } => encrypted_content.as_deref().unwrap_or(""),
    }
}
