//! Context building: what the model sees on each call, as a pure function of the stored
//! messages, the goal tree and a token budget. The compaction steps it applies are in
//! [`crate::compaction`].
//!
//! The steps, in order (SPEC §6):
//! 1. the system prompt with the plan (`GoalTree::to_prompt`) at its end, as two system
//!    messages: the prompt, which stays byte-identical from call to call so that providers can
//!    cache it, then the plan, which changes whenever the plan does (held to an eighth of the
//!    window, see `plan_fit.rs`); the task (the first user message) is always kept;
//! 2. the latest full-compaction summary, when there is one, replaces everything before it
//!    except the task;
//! 3. **goal compaction**: the messages of a finished goal that is neither the current goal nor
//!    one of its ancestors are replaced by one summary line per goal, placed where its messages
//!    were, so the first message of the goal that follows an abandoned one comes right after
//!    the abandoned branch's reason;
//! 4. **prune**: walking back from the newest message, the last [`ContextBudget::protected_turns`]
//!    turns and the newest `prune_protect` tokens of tool output are kept; older tool outputs
//!    are replaced by a marker when that frees at least `prune_minimum` tokens; outputs of
//!    [`PROTECTED_TOOLS`](crate::compaction::PROTECTED_TOOLS) are never pruned;
//! 5. the estimate is compared with the compaction threshold, and the view says whether a
//!    full compaction (a summarising model call, made by the runner) is needed.
//!
//! An assistant message and the results of its tool calls form one unit: every step keeps or
//! drops them together, and a call whose result was never recorded gets an "interrupted" result,
//! so the view is always a valid conversation. The store is never changed: only the view shrinks.
//!
//! Estimating tokens is most of the cost of building a context, and a run builds one per step
//! over a history that only grows. [`build_context_with`] takes a [`ContextMemo`] that keeps the
//! estimate of every stored message between steps, so each step estimates only the messages
//! recorded since the last one (and the few texts it makes itself: the system prompt with the
//! plan, goal summaries, prune markers). The view is the same with or without a memo.
//!
//! The loop goes further: its [`IncrementalContext`](crate::context_incremental::IncrementalContext)
//! keeps the view itself between steps and extends it with the new messages, and this pure
//! function is the reference it is tested against.

use std::borrow::Borrow;
use std::collections::{HashMap, HashSet};

use agent_execution::message::{Message, Role};
use agent_goal::GoalTree;
use agent_llm::ChatMessage;

use crate::compaction::{
    CompactionStrategy, ContextBudget, Item, MESSAGE_OVERHEAD, compact_goals,
    estimate_content_with, is_compaction, is_same, prune, sent_reasoning,
};
pub use crate::compaction::{estimate_chat, render_transcript};

/// The result shown for a tool call whose result was never recorded.
pub const INTERRUPTED_RESULT: &str =
    "error: interrupted: the run stopped before this tool call returned a result";

/// Everything the context is a function of.
///
/// The messages are the caller's own (`Message`, the default) or shared with a store that keeps
/// them (`Arc<Message>`, as [`TraceStore::get_trace_messages_shared`] hands them out): anything
/// that borrows as a [`Message`].
///
/// [`TraceStore::get_trace_messages_shared`]: agent_execution::TraceStore::get_trace_messages_shared
pub struct ContextInput<'a, M = Message> {
    /// The system prompt without the plan.
    pub system_prompt: &'a str,
    /// The goal tree; its `to_prompt()` is appended to the system prompt.
    pub tree: &'a GoalTree,
    /// Every stored message of the trace, in sequence order.
    pub messages: &'a [M],
    /// The limits.
    pub budget: &'a ContextBudget,
    /// Which compaction steps run.
    pub strategy: CompactionStrategy,
    /// Estimates the tokens of a text.
    pub estimate: &'a dyn Fn(&str) -> usize,
}

/// The messages the model will see, with what was done to build them.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextView {
    /// The chat messages: the system prompt and the plan (two system messages, see
    /// [`system_messages`]), then the conversation.
    pub messages: Vec<ChatMessage>,
    /// Estimated tokens of the request: `messages` and the budget's `request_tokens` (the
    /// tool specs).
    pub estimated_tokens: usize,
    /// True when the estimate exceeds the compaction threshold.
    pub needs_full_compaction: bool,
    /// Ids of the goals whose messages were replaced by their summary.
    pub compacted_goals: Vec<String>,
    /// How many tool outputs were replaced by the prune marker.
    pub pruned_outputs: usize,
    /// How many stored messages a full-compaction summary hides.
    pub summarised_messages: usize,
}

/// What the context builder remembers between the steps of one run: the estimated tokens of
/// each stored message as the model sees it before any prune.
///
/// A memo belongs to one estimator, and it assumes a stored message keeps its content: an entry
/// is reused only for a message of the same sequence and id whose text has the same length, so
/// a message edited to a text of another length is estimated again. The runner keeps one memo per run of
/// its loop, over a message list that only grows.
#[derive(Debug, Clone, Default)]
pub struct ContextMemo {
    /// Message sequence → (message id, bytes of its text as sent, estimated tokens of that text).
    tokens: HashMap<u64, (String, usize, usize)>,
}

impl ContextMemo {
    /// An empty memo.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many messages it remembers.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// True when it remembers nothing.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The estimated tokens of the text of `message` (without the per-message overhead), from
    /// the memo when `origin` (the stored message it was made from, unchanged) is known there.
    pub(crate) fn content_tokens(
        &mut self,
        message: &ChatMessage,
        origin: Option<&Message>,
        (estimate, rule): (&dyn Fn(&str) -> usize, agent_llm::ImageTokens),
    ) -> usize {
        let Some(origin) = origin else {
            return estimate_content_with(message, estimate, rule);
        };
        let bytes = content_bytes(message);
        if let Some((id, known_bytes, tokens)) = self.tokens.get(&origin.sequence)
            && *known_bytes == bytes
            && *id == origin.message_id
        {
            return *tokens;
        }
        let tokens = estimate_content_with(message, estimate, rule);
        self.tokens
            .insert(origin.sequence, (origin.message_id.clone(), bytes, tokens));
        tokens
    }
}

/// Builds the context the model sees. Pure: the same input always gives the same view.
pub fn build_context<M: Borrow<Message>>(input: &ContextInput<'_, M>) -> ContextView {
    build_context_with(input, &mut ContextMemo::new())
}

/// [`build_context`] with a memo of the estimates of earlier calls: the same view, computed
/// faster when the memo already knows most messages. It learns the messages it did not know.
pub fn build_context_with<M: Borrow<Message>>(
    input: &ContextInput<'_, M>,
    memo: &mut ContextMemo,
) -> ContextView {
    let messages = || input.messages.iter().map(Borrow::borrow);
    let task = messages().find(|m| m.role == Role::User);
    let compaction = messages().rev().find(|m| is_compaction(m));

    // Step 2: a full-compaction summary hides everything before it but the task.
    let start_after = compaction.map(|c| c.sequence);
    let mut summarised_messages = 0;
    let visible: Vec<&Message> = messages()
        .filter(|m| m.role != Role::System)
        .filter(|m| {
            let kept = match start_after {
                Some(seq) => m.sequence >= seq || is_same(m, task),
                None => true,
            };
            if !kept {
                summarised_messages += 1;
            }
            kept
        })
        .collect();

    // Step 3: goal compaction.
    let (items, compacted_goals) = match input.strategy {
        CompactionStrategy::GoalsAndPrune => compact_goals(input.tree, &visible, task),
        CompactionStrategy::PruneOnly | CompactionStrategy::Nothing => (
            visible.iter().map(|m| Item::Stored(m)).collect(),
            Vec::new(),
        ),
    };

    let system = system_messages_of(input);
    let (mut chat, origins) = to_chat(system, &items);
    // The estimate of each message's text, in step with `chat`.
    let mut tokens: Vec<usize> = chat
        .iter()
        .zip(&origins)
        .map(|(message, origin)| {
            let rule = input.budget.image_tokens;
            memo.content_tokens(message, *origin, (input.estimate, rule))
        })
        .collect();

    // Step 4: prune old tool outputs.
    let pruned_outputs = match input.strategy {
        CompactionStrategy::Nothing => 0,
        _ => prune(&mut chat, &mut tokens, input.budget, input.estimate),
    };

    let estimated_tokens =
        input.budget.request_tokens + tokens.iter().map(|t| MESSAGE_OVERHEAD + t).sum::<usize>();
    ContextView {
        messages: chat,
        estimated_tokens,
        needs_full_compaction: estimated_tokens > input.budget.compaction_threshold(),
        compacted_goals,
        pruned_outputs,
        summarised_messages,
    }
}

/// The system prompt, then the plan as a second system message. Joined with a blank line they
/// are the system prompt with the plan at its end; apart, the first is a prefix that does not
/// change while the plan does. An empty prompt leaves the plan alone.
pub fn system_messages(system_prompt: &str, tree: &GoalTree) -> Vec<ChatMessage> {
    with_plan(system_prompt, plan_prompt(tree))
}

/// [`system_messages`] of a context: the plan held to its share of the window
/// ([`crate::plan_fit`]).
pub(crate) fn system_messages_of<M>(input: &ContextInput<'_, M>) -> Vec<ChatMessage> {
    let plan = crate::plan_fit::plan_within(
        plan_prompt(input.tree),
        crate::plan_fit::plan_chars(input.budget),
    );
    with_plan(input.system_prompt, plan)
}

fn with_plan(system_prompt: &str, plan: String) -> Vec<ChatMessage> {
    let prompt = system_prompt.trim_end();
    let plan = ChatMessage::System(plan);
    if prompt.is_empty() {
        vec![plan]
    } else {
        vec![ChatMessage::System(prompt.to_owned()), plan]
    }
}

/// The longest mission the plan carries whole, in characters.
pub const MISSION_PROMPT_CHARS: usize = 300;

/// What the plan says after a mission it cut.
pub const MISSION_CUT_NOTE: &str = "… [cut here: the whole task is the first user message]";

/// The plan as the model sees it: `GoalTree::to_prompt`, with a mission longer than
/// [`MISSION_PROMPT_CHARS`] cut and pointing to the task. The mission is the task, which the
/// context keeps whole as its first user message: a long task is carried once, not twice.
pub fn plan_prompt(tree: &GoalTree) -> String {
    let plan = tree.to_prompt();
    const HEAD: &str = "## Current Plan\n**Mission**: ";
    if tree.mission().chars().count() <= MISSION_PROMPT_CHARS {
        return plan;
    }
    let Some(end) = plan.strip_prefix(HEAD).and_then(|rest| rest.find('\n')) else {
        return plan;
    };
    let mission = &plan[HEAD.len()..HEAD.len() + end];
    let kept: String = mission.chars().take(MISSION_PROMPT_CHARS).collect();
    format!(
        "{HEAD}{}{MISSION_CUT_NOTE}{}",
        kept.trim_end(),
        &plan[HEAD.len() + end..]
    )
}

/// The conversation of a context: its messages after the leading system messages.
pub fn conversation(chat: &[ChatMessage]) -> &[ChatMessage] {
    let start = chat
        .iter()
        .position(|m| !matches!(m, ChatMessage::System(_)))
        .unwrap_or(chat.len());
    &chat[start..]
}

/// Bytes of pictures' ids: a picture changes a memo entry's size as a new text would.
fn images_bytes(images: &[agent_llm::ChatImage]) -> usize {
    images.iter().map(|image| image.id.len() + 1).sum()
}

/// Bytes of the texts `estimate_content` estimates: what a memo entry is checked against.
fn content_bytes(message: &ChatMessage) -> usize {
    match message {
        ChatMessage::System(text) | ChatMessage::User(text) => text.len(),
        ChatMessage::UserWithImages { text, images } => text.len() + images_bytes(images),
        ChatMessage::Assistant {
            text,
            tool_calls,
            reasoning,
        } => {
            text.as_deref().map_or(0, str::len)
                + tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.len())
                    .sum::<usize>()
                + reasoning
                    .iter()
                    .map(|r| sent_reasoning(r).len())
                    .sum::<usize>()
        }
        ChatMessage::Tool {
            content, images, ..
        } => content.len() + images_bytes(images),
    }
}

/// Turns the kept items into chat messages after the `system` messages: summaries next to each
/// other become one user message, and every tool call gets a result (an "interrupted" one when
/// none was recorded). Returns, in step with the messages, the stored message each one shows
/// unchanged (`None` for the system messages, summaries and made-up results).
fn to_chat<'a>(
    system: Vec<ChatMessage>,
    items: &[Item<'a>],
) -> (Vec<ChatMessage>, Vec<Option<&'a Message>>) {
    let answered: HashSet<&str> = items
        .iter()
        .filter_map(|item| match item {
            Item::Stored(m) if m.role == Role::Tool => m.tool_call_id.as_deref(),
            _ => None,
        })
        .collect();
    let mut chat: Vec<ChatMessage> = Vec::with_capacity(items.len() + 1);
    let mut origins: Vec<Option<&'a Message>> = Vec::with_capacity(items.len() + 1);
    for message in system {
        chat.push(message);
        origins.push(None);
    }
    let mut open_calls: HashSet<&'a str> = HashSet::new();
    let mut pending: Vec<&'a str> = Vec::new();
    let mut last_was_summary = false;
    for item in items {
        let follows_summary = last_was_summary;
        last_was_summary = matches!(item, Item::Summary(_));
        // Results for calls that the history never answered go right after their turn.
        let closes_turn = !matches!(item, Item::Stored(m) if m.role == Role::Tool);
        if closes_turn {
            close_turn(&mut chat, &mut origins, &mut pending);
        }
        match item {
            Item::Summary(text) => match chat.last_mut() {
                Some(ChatMessage::User(previous)) if follows_summary => {
                    previous.push('\n');
                    previous.push_str(text);
                }
                _ => {
                    chat.push(ChatMessage::User(text.clone()));
                    origins.push(None);
                }
            },
            Item::Stored(message) => match message.role {
                Role::System => {}
                Role::User => {
                    chat.push(stored_chat(message));
                    origins.push(Some(message));
                }
                Role::Assistant => {
                    for id in message.content.tool_calls().iter().map(|c| c.id.as_str()) {
                        open_calls.insert(id);
                        if !answered.contains(id) {
                            pending.push(id);
                        }
                    }
                    chat.push(stored_chat(message));
                    origins.push(Some(message));
                }
                Role::Tool => {
                    let Some(id) = message.tool_call_id.as_deref() else {
                        continue;
                    };
                    // A result whose call is not in the view would be rejected by providers.
                    if open_calls.remove(id) {
                        chat.push(stored_chat(message));
                        origins.push(Some(message));
                    }
                }
            },
        }
    }
    close_turn(&mut chat, &mut origins, &mut pending);
    (chat, origins)
}

/// The chat message that shows a stored user, assistant or tool message as it is.
pub(crate) fn stored_chat(message: &Message) -> ChatMessage {
    match message.role {
        Role::Assistant => {
            let turn = message.content.as_assistant();
            ChatMessage::Assistant {
                text: turn
                    .and_then(|turn| turn.text.clone())
                    .filter(|t| !t.is_empty()),
                tool_calls: message.content.tool_calls().to_vec(),
                reasoning: turn.map(|turn| turn.reasoning.clone()).unwrap_or_default(),
            }
        }
        Role::Tool => ChatMessage::Tool {
            tool_call_id: message.tool_call_id.clone().unwrap_or_default(),
            content: message.content.text().to_owned(),
            images: agent_execution::meta::images(&message.metadata),
        },
        Role::User | Role::System => ChatMessage::user_with_images(
            message.content.text(),
            agent_execution::meta::images(&message.metadata),
        ),
    }
}

fn close_turn<'a>(
    chat: &mut Vec<ChatMessage>,
    origins: &mut Vec<Option<&'a Message>>,
    pending: &mut Vec<&'a str>,
) {
    for id in pending.drain(..) {
        chat.push(ChatMessage::tool_result(id, INTERRUPTED_RESULT));
        origins.push(None);
    }
}

#[cfg(test)]
#[path = "context_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "context_memo_tests.rs"]
mod memo_tests;
