//! The conversation part of an incremental view: the stored messages turned into chat messages
//! one by one, as goal compaction and the chat conversion of the pure function would, with the
//! running sums prune works on.

use std::borrow::Borrow;
use std::collections::{HashMap, HashSet};

use agent_execution::message::{Message, Role};
use agent_llm::ChatMessage;

use crate::compaction::{
    CompactionStrategy, GoalKey, PROTECTED_TOOLS, PRUNED_MARKER, is_compaction,
};
use crate::context::{ContextMemo, INTERRUPTED_RESULT, stored_chat};

/// One element of the view while it is built (as `Item` in the pure function).
enum Piece<'a> {
    Stored(&'a Message),
    Summary(&'a str),
}

/// The conversation part of the view (after the system messages), before prune, with what
/// the next messages and prune need to know.
#[derive(Default)]
pub(super) struct Conversation {
    /// How many stored messages it was built from, and the sequence and id of the last one.
    pub(super) consumed: usize,
    pub(super) last: Option<(u64, String)>,
    /// The sequence of the task (the first user message).
    pub(super) task: Option<u64>,
    /// The sequence of the latest full-compaction summary.
    pub(super) compaction: Option<u64>,
    pub(super) summarised_messages: usize,
    /// Call id → the goal whose summary stands for the call's turn.
    unit_rep: HashMap<String, Option<String>>,
    pub(super) compacted_goals: Vec<String>,
    pub(super) chat: Vec<ChatMessage>,
    /// The estimate of each message's text, in step with `chat`, and their sum.
    pub(super) tokens: Vec<usize>,
    pub(super) total: usize,
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
    pub(super) assistants: Vec<usize>,
    /// The tool outputs prune may replace: where each is in `chat`, and its estimate.
    pub(super) outputs: Vec<(usize, usize)>,
    /// Running sums over `outputs`: entry `k` is over the first `k` outputs.
    pub(super) prefix: Vec<Sums>,
    /// The first message of `chat` changed in place (a summary joined to the one before it)
    /// or added since the view was last handed out.
    pub(super) changed_from: usize,
}

/// Running sums over the first outputs of a conversation.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Sums {
    /// Their estimates.
    pub(super) tokens: usize,
    /// The estimates of their prune markers (of the non-empty ones: an empty output is never
    /// replaced).
    pub(super) markers: usize,
    /// How many are not empty.
    pub(super) non_empty: usize,
}

impl Conversation {
    /// An empty conversation for `messages`, knowing their task and latest full-compaction
    /// summary.
    pub(super) fn start<M: Borrow<Message>>(messages: &[M]) -> Self {
        Conversation {
            task: messages
                .iter()
                .map(Borrow::borrow)
                .find(|m: &&Message| m.role == Role::User)
                .map(|m| m.sequence),
            compaction: latest_compaction(messages),
            prefix: vec![Sums::default()],
            ..Conversation::default()
        }
    }

    /// True when `messages` extends the messages this was built from.
    pub(super) fn follows<M: Borrow<Message>>(&self, messages: &[M]) -> bool {
        if self.consumed > messages.len() {
            return false;
        }
        match (&self.last, self.consumed.checked_sub(1)) {
            (Some((sequence, id)), Some(index)) => {
                let message: &Message = messages[index].borrow();
                message.sequence == *sequence && message.message_id == *id
            }
            (None, None) => true,
            _ => false,
        }
    }

    fn push_chat(&mut self, message: ChatMessage, tokens: usize, cx: &mut Estimates<'_>) {
        let index = self.chat.len();
        if let ChatMessage::Tool {
            tool_call_id,
            content,
            ..
        } = &message
        {
            let name = self.names.get(tool_call_id).map_or("", String::as_str);
            if !content.starts_with(PRUNED_MARKER) && !PROTECTED_TOOLS.contains(&name) {
                let mut sums = self.prefix.last().copied().unwrap_or_default();
                sums.tokens += tokens;
                if tokens > 0 {
                    sums.markers += cx.marker_tokens(tokens);
                    sums.non_empty += 1;
                }
                self.outputs.push((index, tokens));
                self.prefix.push(sums);
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
    pub(super) fn close_turn(&mut self, cx: &mut Estimates<'_>, provisional: bool) {
        let pending = if provisional {
            self.pending.clone()
        } else {
            std::mem::take(&mut self.pending)
        };
        for id in pending {
            if !provisional {
                self.interrupted.insert(id.clone());
            }
            let message = ChatMessage::tool_result(id, INTERRUPTED_RESULT);
            self.push_chat(message, cx.interrupted, cx);
        }
    }

    /// Forgets the messages pushed after the conversation had `len` messages and `outputs`
    /// prunable outputs.
    pub(super) fn truncate(&mut self, len: usize, outputs: usize) {
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
    pub(super) fn push_message(
        &mut self,
        message: &Message,
        key: &GoalKey,
        cx: &mut Estimates<'_>,
    ) {
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
            self.close_turn(cx, false);
        }
        match piece {
            Piece::Summary(text) => match self.chat.last_mut() {
                Some(ChatMessage::User(previous)) if follows_summary => {
                    previous.push('\n');
                    previous.push_str(text);
                    let tokens = (cx.estimate)(previous);
                    let at = self.chat.len() - 1;
                    self.changed_from = self.changed_from.min(at);
                    if let Some(slot) = self.tokens.last_mut() {
                        self.total = self.total - *slot + tokens;
                        *slot = tokens;
                    }
                }
                _ => {
                    let tokens = (cx.estimate)(text);
                    self.push_chat(ChatMessage::User(text.to_owned()), tokens, cx);
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
                let tokens =
                    (cx.memo).content_tokens(&chat, Some(message), (cx.estimate, cx.images));
                self.push_chat(chat, tokens, cx);
            }
        }
    }
}

/// What adding messages needs besides the conversation.
pub(super) struct Estimates<'a> {
    pub(super) memo: &'a mut ContextMemo,
    pub(super) estimate: &'a dyn Fn(&str) -> usize,
    /// How the model's provider counts pictures.
    pub(super) images: agent_llm::ImageTokens,
    /// An output's estimate → the estimate of the marker that replaces it.
    pub(super) markers: &'a mut HashMap<usize, usize>,
    /// The estimate of [`INTERRUPTED_RESULT`].
    pub(super) interrupted: usize,
    /// Set when a message made an earlier part of the view change.
    pub(super) retro: bool,
}

impl Estimates<'_> {
    fn marker_tokens(&mut self, size: usize) -> usize {
        let estimate = self.estimate;
        *self
            .markers
            .entry(size)
            .or_insert_with(|| estimate(&pruned_marker(size)))
    }
}

/// The text that replaces a pruned tool output of `size` tokens.
pub(super) fn pruned_marker(size: usize) -> String {
    format!("{PRUNED_MARKER}: about {size} tokens; run the tool again to see it]")
}

/// The sequence of the latest full-compaction summary of `messages`.
pub(super) fn latest_compaction<M: Borrow<Message>>(messages: &[M]) -> Option<u64> {
    messages
        .iter()
        .map(Borrow::borrow)
        .rev()
        .find(|m: &&Message| is_compaction(m))
        .map(|m| m.sequence)
}
