//! The context of a running loop, kept between its steps: [`IncrementalContext`] holds the
//! view built so far and extends it with the messages recorded since, instead of walking every
//! kept message again. [`build_context`](crate::context::build_context) stays the reference:
//! the incremental view is always the one the pure function builds from the same input.
//!
//! What each step of the pure function becomes here:
//! - the task and the latest full-compaction summary are known from earlier steps; a new summary
//!   starts the view again from it;
//! - goal compaction depends on the goal tree only through which finished goal stands for the
//!   messages of each goal, and the summary line of each such goal (`GoalKey`); while that
//!   stays the same, a new message is either shown or folded into its goal's summary, and when
//!   it changes (a goal finished, the focus moved) the view is rebuilt from the stored messages,
//!   their estimates kept by the memo;
//! - the calls of the newest turn that have no result yet are closed with an "interrupted"
//!   result only in the view handed out, so a result recorded later takes their place;
//! - prune works on running totals: the tool outputs it may replace are kept in order with the
//!   running sum of their estimates, so the boundary between the protected newest outputs and
//!   the pruned older ones is found by a binary search;
//! - the view handed out ([`SharedView`]) is one list shared with the request that carries it:
//!   once the request is gone, the next step changes it in place (the plan, the new messages,
//!   the outputs pruned since) instead of copying the conversation again.
//!
//! A few histories make an earlier part of the view depend on a later message: a result
//! recorded for a call that a closed turn already showed as interrupted, or a call id used
//! twice. There the view comes from the pure function, until a full-compaction summary hides
//! that part of the history.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::sync::Arc;

use agent_execution::message::{Message, Role};
use agent_llm::ChatMessage;

use crate::compaction::{CompactionStrategy, GoalKey, MESSAGE_OVERHEAD, is_compaction};
use crate::context::{
    ContextInput, ContextMemo, ContextView, INTERRUPTED_RESULT, build_context_with,
    system_messages_of,
};

mod conversation;

use conversation::{Conversation, Estimates, Sums, latest_compaction, pruned_marker};

/// A view of the context as the loop sends it: [`ContextView`] with its messages shared.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedView {
    /// The chat messages, shared with the requests that carry them.
    pub messages: Arc<Vec<ChatMessage>>,
    /// Estimated tokens of `messages`.
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

impl SharedView {
    /// The same view with its own copy of the messages.
    pub fn to_view(&self) -> ContextView {
        ContextView {
            messages: self.messages.to_vec(),
            estimated_tokens: self.estimated_tokens,
            needs_full_compaction: self.needs_full_compaction,
            compacted_goals: self.compacted_goals.clone(),
            pruned_outputs: self.pruned_outputs,
            summarised_messages: self.summarised_messages,
        }
    }
}

impl From<ContextView> for SharedView {
    fn from(view: ContextView) -> Self {
        SharedView {
            messages: Arc::new(view.messages),
            estimated_tokens: view.estimated_tokens,
            needs_full_compaction: view.needs_full_compaction,
            compacted_goals: view.compacted_goals,
            pruned_outputs: view.pruned_outputs,
            summarised_messages: view.summarised_messages,
        }
    }
}

/// The messages last handed out, and how far they match the conversation.
#[derive(Debug, Default)]
struct Sent {
    messages: Arc<Vec<ChatMessage>>,
    /// How many system messages lead them.
    system: usize,
    /// How many messages of the conversation follow them as it has them (pruned ones
    /// replaced); the provisional results of the open turn come after.
    conversation: usize,
    /// How many of the conversation's prunable outputs were cut (the non-empty ones replaced).
    cut: usize,
}

/// The context of a running loop, extended step by step (see the module docs). Each build
/// returns the view [`build_context`](crate::context::build_context) returns for the same input.
///
/// One belongs to one estimator and one message list that only grows; a list that does not
/// extend the one of the last build (another trace, a shorter list) is built from scratch.
#[derive(Default)]
pub struct IncrementalContext {
    memo: ContextMemo,
    key: Option<GoalKey>,
    conversation: Conversation,
    sent: Sent,
    /// Set while the view comes from the pure function: the latest full-compaction summary
    /// when the incremental view could not follow.
    stuck: Option<Option<u64>>,
    /// The system prompt and its estimate, as of the last build.
    prompt: Option<(String, usize)>,
    /// An output's estimate → the estimate of its prune marker.
    markers: HashMap<usize, usize>,
    interrupted: Option<usize>,
}

impl std::fmt::Debug for IncrementalContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IncrementalContext")
            .field("messages", &self.conversation.consumed)
            .field("view", &self.conversation.chat.len())
            .finish_non_exhaustive()
    }
}

impl IncrementalContext {
    /// A context that has seen nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The view of `input`, as [`build_shared`](Self::build_shared) builds it, with its own
    /// copy of the messages.
    pub fn build<M: Borrow<Message>>(&mut self, input: &ContextInput<'_, M>) -> ContextView {
        self.build_shared(input).to_view()
    }

    /// The view of `input`: the one [`build_context`](crate::context::build_context) builds,
    /// extended from the last build when `input.messages` extends its messages. Its messages
    /// are changed in place by the next build when nothing else holds them by then.
    pub fn build_shared<M: Borrow<Message>>(&mut self, input: &ContextInput<'_, M>) -> SharedView {
        let messages = input.messages;
        if let Some(stuck) = self.stuck {
            if latest_compaction(messages) == stuck {
                return build_context_with(input, &mut self.memo).into();
            }
            self.stuck = None;
        }
        let key = GoalKey::of(input.tree, input.strategy);
        let conversation = &self.conversation;
        let follows = self.key.as_ref() == Some(&key)
            && conversation.follows(messages)
            && !messages[conversation.consumed..]
                .iter()
                .any(|m| is_compaction(m.borrow()));
        if !follows {
            self.conversation = Conversation::start(messages);
        }
        let interrupted = *self
            .interrupted
            .get_or_insert_with(|| (input.estimate)(INTERRUPTED_RESULT));
        let mut cx = Estimates {
            memo: &mut self.memo,
            estimate: input.estimate,
            images: input.budget.image_tokens,
            markers: &mut self.markers,
            interrupted,
            retro: false,
        };
        let conversation = &mut self.conversation;
        for message in &messages[conversation.consumed..] {
            let message: &Message = message.borrow();
            if message.role == Role::System {
                continue;
            }
            if conversation.task.is_none() && message.role == Role::User {
                conversation.task = Some(message.sequence);
            }
            let hidden = conversation
                .compaction
                .is_some_and(|seq| message.sequence < seq)
                && conversation.task != Some(message.sequence);
            if hidden {
                conversation.summarised_messages += 1;
                continue;
            }
            conversation.push_message(message, &key, &mut cx);
            if cx.retro {
                break;
            }
        }
        if cx.retro {
            self.key = None;
            self.conversation = Conversation::default();
            self.stuck = Some(latest_compaction(messages));
            return build_context_with(input, &mut self.memo).into();
        }
        conversation.consumed = messages.len();
        conversation.last = messages
            .last()
            .map(Borrow::borrow)
            .map(|m: &Message| (m.sequence, m.message_id.clone()));
        self.key = Some(key);

        // The calls of the open turn without a result get one in this view only.
        let (len, outputs) = (conversation.chat.len(), conversation.outputs.len());
        conversation.close_turn(&mut cx, true);
        let view = self.view(input, len);
        self.conversation.truncate(len, outputs);
        view
    }

    /// The view handed out: the system messages, then the conversation (`committed` messages
    /// and the open turn's provisional results after them), pruned.
    fn view<M>(&mut self, input: &ContextInput<'_, M>, committed: usize) -> SharedView {
        let system = system_messages_of(input);
        let system_tokens: usize = system
            .iter()
            .map(|message| match message {
                ChatMessage::System(text) => self.system_tokens(input, text),
                _ => 0,
            })
            .sum();

        // Prune: the outputs older than the protected turns, newest first, are kept while their
        // sum stays within `prune_protect`; the older ones are replaced when they free enough.
        let conversation = &self.conversation;
        let budget = input.budget;
        let turns = conversation.assistants.len();
        let boundary = match budget.protected_turns {
            0 => conversation.chat.len(),
            protected if turns >= protected => conversation.assistants[turns - protected],
            _ => 0,
        };
        let prefix = &conversation.prefix;
        let eligible = conversation
            .outputs
            .partition_point(|(index, _)| *index < boundary);
        let total = prefix[eligible].tokens;
        let keep_from = total.saturating_sub(budget.prune_protect);
        let mut cut = prefix[..=eligible].partition_point(|sums| sums.tokens < keep_from);
        let pruning = input.strategy != CompactionStrategy::Nothing
            && prefix[cut].tokens >= budget.prune_minimum;
        if !pruning {
            cut = 0;
        }
        let Sums {
            tokens: freed,
            markers,
            non_empty: pruned_outputs,
        } = prefix[cut];

        let count = system.len() + conversation.chat.len();
        self.sync(system, committed, cut);
        let estimated_tokens = system_tokens + self.conversation.total - freed
            + markers
            + MESSAGE_OVERHEAD * count
            + budget.request_tokens;
        let conversation = &self.conversation;
        SharedView {
            messages: self.sent.messages.clone(),
            estimated_tokens,
            needs_full_compaction: estimated_tokens > budget.compaction_threshold(),
            compacted_goals: conversation.compacted_goals.clone(),
            pruned_outputs,
            summarised_messages: conversation.summarised_messages,
        }
    }

    /// The estimate of a system message; the prompt's is kept, since it rarely changes.
    fn system_tokens<M>(&mut self, input: &ContextInput<'_, M>, text: &str) -> usize {
        if text != input.system_prompt.trim_end() {
            return (input.estimate)(text);
        }
        match &self.prompt {
            Some((known, tokens)) if known == text => *tokens,
            _ => {
                let tokens = (input.estimate)(text);
                self.prompt = Some((text.to_owned(), tokens));
                tokens
            }
        }
    }

    /// Makes the messages handed out the view: `system`, then the conversation (its first
    /// `committed` messages and the provisional results after them) with the first `cut`
    /// prunable outputs replaced. Only what changed since the last view is written, in place
    /// unless a request still holds the last one.
    fn sync(&mut self, system: Vec<ChatMessage>, committed: usize, cut: usize) {
        let conversation = &mut self.conversation;
        let sent = &mut self.sent;
        let messages = Arc::make_mut(&mut sent.messages);
        // The messages of the last view that still hold.
        let mut keep = sent.conversation.min(conversation.changed_from);
        if cut < sent.cut
            && let Some((index, _)) = conversation.outputs.get(cut)
        {
            // Fewer outputs are pruned now: they are shown again from the first of them.
            keep = keep.min(*index);
        }
        if sent.system == system.len() {
            for (slot, message) in messages.iter_mut().zip(system) {
                if *slot != message {
                    *slot = message;
                }
            }
        } else {
            messages.clear();
            messages.extend(system);
            sent.system = messages.len();
            keep = 0;
        }
        messages.truncate(sent.system + keep);
        let outputs = &conversation.outputs;
        let first_new = outputs.partition_point(|(index, _)| *index < keep);
        // Outputs pruned since the last view, among the messages kept.
        let end = cut.min(first_new);
        for (index, size) in &outputs[sent.cut.min(end)..end] {
            if *size > 0
                && let Some(ChatMessage::Tool { content, .. }) =
                    messages.get_mut(sent.system + index)
            {
                *content = pruned_marker(*size);
            }
        }
        let mut pruned = outputs[first_new.min(cut)..cut]
            .iter()
            .filter(|(_, size)| *size > 0)
            .peekable();
        for (index, message) in conversation.chat.iter().enumerate().skip(keep) {
            match (pruned.peek(), message) {
                (Some((at, size)), ChatMessage::Tool { tool_call_id, .. }) if *at == index => {
                    messages.push(ChatMessage::tool_result(
                        tool_call_id.clone(),
                        pruned_marker(*size),
                    ));
                    pruned.next();
                }
                _ => messages.push(message.clone()),
            }
        }
        sent.conversation = committed;
        sent.cut = cut;
        conversation.changed_from = committed;
    }
}

#[cfg(test)]
mod tests;
