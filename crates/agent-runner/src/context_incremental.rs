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
//!   the pruned older ones is found by a binary search.
//!
//! A few histories make an earlier part of the view depend on a later message: a result
//! recorded for a call that a closed turn already showed as interrupted, or a call id used
//! twice. There the view comes from the pure function, until a full-compaction summary hides
//! that part of the history.

use std::collections::{HashMap, HashSet};

use agent_execution::message::{Message, Role};
use agent_llm::ChatMessage;

use crate::compaction::{
    CompactionStrategy, GoalKey, MESSAGE_OVERHEAD, PROTECTED_TOOLS, PRUNED_MARKER, is_compaction,
};
use crate::context::{
    ContextInput, ContextMemo, ContextView, INTERRUPTED_RESULT, build_context_with, stored_chat,
    system_messages,
};

/// One element of the view while it is built (as `Item` in the pure function).
enum Piece<'a> {
    Stored(&'a Message),
    Summary(&'a str),
}

/// The conversation part of the view (after the system messages), before prune, with what
/// the next messages and prune need to know.
#[derive(Default)]
struct Conversation {
    /// How many stored messages it was built from, and the sequence and id of the last one.
    consumed: usize,
    last: Option<(u64, String)>,
    /// The sequence of the task (the first user message).
    task: Option<u64>,
    /// The sequence of the latest full-compaction summary.
    compaction: Option<u64>,
    summarised_messages: usize,
    /// Call id → the goal whose summary stands for the call's turn.
    unit_rep: HashMap<String, Option<String>>,
    compacted_goals: Vec<String>,
    chat: Vec<ChatMessage>,
    /// The estimate of each message's text, in step with `chat`, and their sum.
    tokens: Vec<usize>,
    total: usize,
    /// Ids of every tool result shown or dropped so far.
    answered: HashSet<String>,
    open_calls: HashSet<String>,
    /// Calls of the open turn without a result so far.
    pending: Vec<String>,
    /// Calls of closed turns that were given an "interrupted" result.
    interrupted: HashSet<String>,
    /// Call id → tool name, over every call in the view.
    names: HashMap<String, String>,
    last_was_summary: bool,
    /// Where the assistant messages are in `chat`.
    assistants: Vec<usize>,
    /// The tool outputs prune may replace: where each is in `chat`, and its estimate.
    outputs: Vec<(usize, usize)>,
    /// `prefix[k]`: the sum of the estimates of the first `k` outputs.
    prefix: Vec<usize>,
}

impl Conversation {
    /// True when `messages` extends the messages this was built from.
    fn follows(&self, messages: &[Message]) -> bool {
        if self.consumed > messages.len() {
            return false;
        }
        match (&self.last, self.consumed.checked_sub(1)) {
            (Some((sequence, id)), Some(index)) => {
                let message = &messages[index];
                message.sequence == *sequence && message.message_id == *id
            }
            (None, None) => true,
            _ => false,
        }
    }

    fn push_chat(&mut self, message: ChatMessage, tokens: usize) {
        let index = self.chat.len();
        if let ChatMessage::Tool {
            tool_call_id,
            content,
        } = &message
        {
            let name = self.names.get(tool_call_id).map_or("", String::as_str);
            if !content.starts_with(PRUNED_MARKER) && !PROTECTED_TOOLS.contains(&name) {
                let sum = self.prefix.last().copied().unwrap_or(0);
                self.outputs.push((index, tokens));
                self.prefix.push(sum + tokens);
            }
        }
        if matches!(message, ChatMessage::Assistant { .. }) {
            self.assistants.push(index);
        }
        self.chat.push(message);
        self.tokens.push(tokens);
        self.total += tokens;
    }

    /// Gives the pending calls an "interrupted" result; `provisional` ones are not remembered.
    fn close_turn(&mut self, interrupted_tokens: usize, provisional: bool) {
        let pending = if provisional {
            self.pending.clone()
        } else {
            std::mem::take(&mut self.pending)
        };
        for id in pending {
            if !provisional {
                self.interrupted.insert(id.clone());
            }
            let message = ChatMessage::Tool {
                tool_call_id: id,
                content: INTERRUPTED_RESULT.to_owned(),
            };
            self.push_chat(message, interrupted_tokens);
        }
    }

    /// Forgets the messages pushed after the conversation had `len` messages and `outputs`
    /// prunable outputs.
    fn truncate(&mut self, len: usize, outputs: usize) {
        for tokens in self.tokens.drain(len..) {
            self.total -= tokens;
        }
        self.chat.truncate(len);
        self.outputs.truncate(outputs);
        self.prefix.truncate(outputs + 1);
        while self.assistants.last().is_some_and(|at| *at >= len) {
            self.assistants.pop();
        }
    }

    /// Adds one visible stored message, as goal compaction and `to_chat` would.
    fn push_message(&mut self, message: &Message, key: &GoalKey, cx: &mut Estimates<'_>) {
        let goals = key.strategy == CompactionStrategy::GoalsAndPrune;
        let rep_of = |goal: Option<&String>| goal.and_then(|g| key.reps.get(g)).cloned();
        let rep = if !goals || self.task == Some(message.sequence) || is_compaction(message) {
            None
        } else if message.role == Role::Tool {
            match message
                .tool_call_id
                .as_ref()
                .and_then(|id| self.unit_rep.get(id))
            {
                Some(rep) => rep.clone(),
                None => rep_of(message.goal_id.as_ref()),
            }
        } else {
            let rep = rep_of(message.goal_id.as_ref());
            if message.role == Role::Assistant {
                for call in message.content.tool_calls() {
                    self.unit_rep.insert(call.id.clone(), rep.clone());
                }
            }
            rep
        };
        match rep {
            None => self.push_piece(Piece::Stored(message), cx),
            Some(goal) => {
                if !self.compacted_goals.contains(&goal) {
                    let text = key.summaries.get(&goal).map_or("", String::as_str);
                    self.push_piece(Piece::Summary(text), cx);
                    self.compacted_goals.push(goal);
                }
            }
        }
    }

    fn push_piece(&mut self, piece: Piece<'_>, cx: &mut Estimates<'_>) {
        let follows_summary = self.last_was_summary;
        self.last_was_summary = matches!(piece, Piece::Summary(_));
        let closes_turn = !matches!(piece, Piece::Stored(m) if m.role == Role::Tool);
        if closes_turn {
            self.close_turn(cx.interrupted, false);
        }
        match piece {
            Piece::Summary(text) => match self.chat.last_mut() {
                Some(ChatMessage::User(previous)) if follows_summary => {
                    previous.push('\n');
                    previous.push_str(text);
                    let tokens = (cx.estimate)(previous);
                    if let Some(slot) = self.tokens.last_mut() {
                        self.total = self.total - *slot + tokens;
                        *slot = tokens;
                    }
                }
                _ => {
                    let tokens = (cx.estimate)(text);
                    self.push_chat(ChatMessage::User(text.to_owned()), tokens);
                }
            },
            Piece::Stored(message) => {
                match message.role {
                    Role::System => return,
                    Role::Assistant => {
                        for call in message.content.tool_calls() {
                            if self.names.contains_key(&call.id) {
                                cx.retro = true;
                            }
                            self.names.insert(call.id.clone(), call.name.clone());
                            self.open_calls.insert(call.id.clone());
                            if !self.answered.contains(&call.id) {
                                self.pending.push(call.id.clone());
                            }
                        }
                    }
                    Role::Tool => {
                        let Some(id) = message.tool_call_id.as_deref() else {
                            return;
                        };
                        self.answered.insert(id.to_owned());
                        if self.interrupted.contains(id) {
                            cx.retro = true;
                        }
                        if !self.open_calls.remove(id) {
                            return;
                        }
                        self.pending.retain(|p| p != id);
                    }
                    Role::User => {}
                }
                let chat = stored_chat(message);
                let tokens = cx.memo.content_tokens(&chat, Some(message), cx.estimate);
                self.push_chat(chat, tokens);
            }
        }
    }
}

/// What adding messages needs besides the conversation.
struct Estimates<'a> {
    memo: &'a mut ContextMemo,
    estimate: &'a dyn Fn(&str) -> usize,
    /// The estimate of [`INTERRUPTED_RESULT`].
    interrupted: usize,
    /// Set when a message made an earlier part of the view change.
    retro: bool,
}

/// The context of a running loop, extended step by step (see the module docs). Each
/// [`build`](Self::build) returns the view [`build_context`](crate::context::build_context)
/// returns for the same input.
///
/// One belongs to one estimator and one message list that only grows; a list that does not
/// extend the one of the last build (another trace, a shorter list) is built from scratch.
#[derive(Default)]
pub struct IncrementalContext {
    memo: ContextMemo,
    key: Option<GoalKey>,
    conversation: Conversation,
    /// Set while the view comes from the pure function: the latest full-compaction summary
    /// when the incremental view could not follow.
    stuck: Option<Option<u64>>,
    /// The system prompt and its estimate, as of the last build.
    prompt: Option<(String, usize)>,
    /// A pruned output's estimate → its marker and the marker's estimate.
    markers: HashMap<usize, (String, usize)>,
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

    /// The view of `input`: the one [`build_context`](crate::context::build_context) builds,
    /// extended from the last build when `input.messages` extends its messages.
    pub fn build(&mut self, input: &ContextInput<'_>) -> ContextView {
        let messages = input.messages;
        if let Some(stuck) = self.stuck {
            if latest_compaction(messages) == stuck {
                return build_context_with(input, &mut self.memo);
            }
            self.stuck = None;
        }
        let key = GoalKey::of(input.tree, input.strategy);
        let conversation = &self.conversation;
        let follows = self.key.as_ref() == Some(&key)
            && conversation.follows(messages)
            && !messages[conversation.consumed..].iter().any(is_compaction);
        if !follows {
            self.conversation = start(messages);
        }
        let interrupted = *self
            .interrupted
            .get_or_insert_with(|| (input.estimate)(INTERRUPTED_RESULT));
        let mut cx = Estimates {
            memo: &mut self.memo,
            estimate: input.estimate,
            interrupted,
            retro: false,
        };
        let conversation = &mut self.conversation;
        for message in &messages[conversation.consumed..] {
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
            return build_context_with(input, &mut self.memo);
        }
        conversation.consumed = messages.len();
        conversation.last = messages.last().map(|m| (m.sequence, m.message_id.clone()));
        self.key = Some(key);
        self.view(input)
    }

    /// The view handed out: the system messages, the conversation with the open turn's
    /// pending calls closed, pruned.
    fn view(&mut self, input: &ContextInput<'_>) -> ContextView {
        let system = system_messages(input.system_prompt, input.tree);
        let mut system_tokens = 0;
        for message in &system {
            let ChatMessage::System(text) = message else {
                continue;
            };
            let prompt_text = input.system_prompt.trim_end();
            system_tokens += if !prompt_text.is_empty() && text == prompt_text {
                match &self.prompt {
                    Some((known, tokens)) if known == text => *tokens,
                    _ => {
                        let tokens = (input.estimate)(text);
                        self.prompt = Some((text.clone(), tokens));
                        tokens
                    }
                }
            } else {
                (input.estimate)(text)
            };
        }

        let conversation = &mut self.conversation;
        let (len, outputs) = (conversation.chat.len(), conversation.outputs.len());
        conversation.close_turn(self.interrupted.unwrap_or(0), true);

        // Prune: the outputs older than the protected turns, newest first, are kept while their
        // sum stays within `prune_protect`; the older ones are replaced when they free enough.
        let budget = input.budget;
        let turns = conversation.assistants.len();
        let boundary = match budget.protected_turns {
            0 => conversation.chat.len(),
            protected if turns >= protected => conversation.assistants[turns - protected],
            _ => 0,
        };
        let eligible = conversation
            .outputs
            .partition_point(|(index, _)| *index < boundary);
        let total = conversation.prefix.get(eligible).copied().unwrap_or(0);
        let keep_from = total.saturating_sub(budget.prune_protect);
        let cut = conversation.prefix[..=eligible].partition_point(|sum| *sum < keep_from);
        let freed = conversation.prefix[cut];
        let pruning =
            input.strategy != CompactionStrategy::Nothing && freed >= budget.prune_minimum;
        let candidates: &[(usize, usize)] = if pruning {
            &conversation.outputs[..cut]
        } else {
            &[]
        };

        let mut chat = system;
        chat.reserve(conversation.chat.len());
        let mut estimated_tokens = system_tokens + conversation.total;
        let mut pruned_outputs = 0;
        let mut next = candidates.iter().filter(|(_, size)| *size > 0).peekable();
        for (index, message) in conversation.chat.iter().enumerate() {
            match (next.peek(), message) {
                (Some((at, size)), ChatMessage::Tool { tool_call_id, .. }) if *at == index => {
                    let (marker, tokens) = self.markers.entry(*size).or_insert_with(|| {
                        let marker = format!(
                            "{PRUNED_MARKER}: about {size} tokens; run the tool again to see it]"
                        );
                        let tokens = (input.estimate)(&marker);
                        (marker, tokens)
                    });
                    chat.push(ChatMessage::Tool {
                        tool_call_id: tool_call_id.clone(),
                        content: marker.clone(),
                    });
                    estimated_tokens = estimated_tokens - size + *tokens;
                    pruned_outputs += 1;
                    next.next();
                }
                _ => chat.push(message.clone()),
            }
        }
        estimated_tokens += MESSAGE_OVERHEAD * chat.len();
        let view = ContextView {
            messages: chat,
            estimated_tokens,
            needs_full_compaction: estimated_tokens > budget.compaction_threshold(),
            compacted_goals: conversation.compacted_goals.clone(),
            pruned_outputs,
            summarised_messages: conversation.summarised_messages,
        };
        conversation.truncate(len, outputs);
        view
    }
}

/// An empty conversation for `messages`, knowing their task and latest full-compaction summary.
fn start(messages: &[Message]) -> Conversation {
    Conversation {
        task: messages
            .iter()
            .find(|m| m.role == Role::User)
            .map(|m| m.sequence),
        compaction: latest_compaction(messages),
        prefix: vec![0],
        ..Conversation::default()
    }
}

fn latest_compaction(messages: &[Message]) -> Option<u64> {
    messages
        .iter()
        .rev()
        .find(|m| is_compaction(m))
        .map(|m| m.sequence)
}

#[cfg(test)]
#[path = "context_incremental_tests.rs"]
mod tests;
