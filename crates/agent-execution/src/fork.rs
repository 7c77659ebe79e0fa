//! Forking a trace: a new trace whose goal tree and history are those of another at an earlier
//! point, so that the work from there on can be done another way (`agent fork`,
//! `POST /api/traces/{trace_id}/fork`).
//!
//! - [`ForkPoint::Goal`] forks just before a goal started: the history ends before the model
//!   turn whose goal call first put the goal (or one of its sub-goals) in progress, so the goal
//!   is pending again and everything after it is gone from the fork.
//! - [`ForkPoint::Message`] forks after a message; an assistant turn is never split from its
//!   tool results, so a fork after an assistant message with tool calls (or after one of their
//!   results) keeps all the results of that turn.
//!
//! The fork is rebuilt from the original's events, replayed with the store's own replay
//! ([`TraceState`]): the goal tree at each point and each kept message (as it was at the cut,
//! compaction notes included) are written to the new trace in their original order through
//! the store's normal write path, in one commit, so its statistics roll up exactly as the
//! original's did. The original is only read. The fork is stored with status `cancelled` — a
//! stopped run that did not complete — so that resuming or continuing it runs it like any
//! stopped trace; `forked_from` names the original. Sub-traces are not copied: messages that
//! report on them are kept as text, and the fork's own sub-traces start afresh.

use std::collections::{BTreeMap, HashSet};

use crate::event::{Event, EventKind};
use crate::{
    ForkOrigin, Message, NewMessage, NewTrace, Role, StoreError, TraceState, TraceStatus,
    TraceStore, TraceUpdate, WriteOp,
};
use agent_goal::GoalStatus;

/// Where to fork a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForkPoint {
    /// Just before the goal with this display number (e.g. `"2.1"`, numbered as in the
    /// trace's current plan) started.
    Goal(String),
    /// After the message with this sequence number (and the rest of its model turn).
    Message(u64),
}

/// A fork that was made.
#[derive(Debug, Clone, PartialEq)]
pub struct Forked {
    /// The new trace.
    pub trace_id: String,
    /// How many messages it was given.
    pub messages: usize,
}

/// Why a trace could not be forked; nothing was written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ForkError {
    /// No trace has this id.
    #[error("there is no trace {trace_id}")]
    NotFound {
        /// The id that was given.
        trace_id: String,
    },
    /// The trace's plan has no goal with this number.
    #[error("trace {trace_id} has no goal {number}")]
    UnknownGoal {
        /// The trace.
        trace_id: String,
        /// The display number that was given.
        number: String,
    },
    /// The goal exists but never started, so there is nothing to fork away.
    #[error("goal {number} of trace {trace_id} never started; there is nothing to fork")]
    GoalNotStarted {
        /// The trace.
        trace_id: String,
        /// The display number that was given.
        number: String,
    },
    /// The trace has no message with this sequence number.
    #[error("trace {trace_id} has no message {sequence}")]
    UnknownMessage {
        /// The trace.
        trace_id: String,
        /// The sequence number that was given.
        sequence: u64,
    },
    /// The trace's events cannot be replayed.
    #[error("the events of trace {trace_id} cannot be replayed: {detail}")]
    Damaged {
        /// The trace.
        trace_id: String,
        /// What is wrong.
        detail: String,
    },
    /// The store refused or failed a read or write.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ForkError {
    /// True when the request itself is wrong (an unknown goal or message, a goal that never
    /// started), as opposed to a missing trace or a store failure.
    pub fn is_bad_request(&self) -> bool {
        matches!(
            self,
            Self::UnknownGoal { .. } | Self::GoalNotStarted { .. } | Self::UnknownMessage { .. }
        )
    }
}

/// Forks `trace_id` at `point` into a new main trace; see the module docs.
pub async fn fork(
    store: &dyn TraceStore,
    trace_id: &str,
    point: &ForkPoint,
) -> Result<Forked, ForkError> {
    let original = store
        .get_trace(trace_id)
        .await?
        .ok_or_else(|| ForkError::NotFound {
            trace_id: trace_id.to_owned(),
        })?;
    let events = store.get_events(trace_id, 0).await?;
    let damaged = |detail: String| ForkError::Damaged {
        trace_id: trace_id.to_owned(),
        detail,
    };
    let (cut, origin) = match point {
        ForkPoint::Goal(number) => {
            let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
            let goal = tree
                .find_by_display(number)
                .ok_or_else(|| ForkError::UnknownGoal {
                    trace_id: trace_id.to_owned(),
                    number: number.clone(),
                })?;
            let subtree = subtree_ids(&tree, &goal.id);
            let cut = goal_cut(&events, &subtree)
                .map_err(|e| damaged(e.to_string()))?
                .ok_or_else(|| ForkError::GoalNotStarted {
                    trace_id: trace_id.to_owned(),
                    number: number.clone(),
                })?;
            let origin = ForkOrigin {
                trace_id: trace_id.to_owned(),
                goal_id: Some(goal.id.clone()),
                message_sequence: None,
            };
            (cut, origin)
        }
        ForkPoint::Message(sequence) => {
            let cut = message_cut(&events, *sequence).ok_or_else(|| ForkError::UnknownMessage {
                trace_id: trace_id.to_owned(),
                sequence: *sequence,
            })?;
            let origin = ForkOrigin {
                trace_id: trace_id.to_owned(),
                goal_id: None,
                message_sequence: Some(*sequence),
            };
            (cut, origin)
        }
    };
    let kept = events.get(..cut).unwrap_or(&events);
    let mut ops = copy_ops(kept);
    let messages = ops
        .iter()
        .filter(|op| matches!(op, WriteOp::AddMessage(_)))
        .count();
    let mut new = NewTrace::agent(original.task.clone()).with_forked_from(origin);
    new.mode = original.mode;
    new.model = original.model.clone();
    new.agent_type = original.agent_type.clone();
    new.limits = original.limits;
    new.model_settings = original.model_settings.clone();
    let created = store.create_trace(new).await?;
    ops.push(WriteOp::UpdateTrace(TraceUpdate {
        status: Some(TraceStatus::Cancelled),
        ..TraceUpdate::default()
    }));
    store.batch(&created.trace_id, ops).await?;
    Ok(Forked {
        trace_id: created.trace_id,
        messages,
    })
}

/// The goal and all its descendants.
fn subtree_ids(tree: &agent_goal::GoalTree, root: &str) -> HashSet<String> {
    let mut ids: HashSet<String> = HashSet::from([root.to_owned()]);
    // Parents come before their children in the tree's list, but a few passes cost nothing
    // and do not depend on that order.
    loop {
        let before = ids.len();
        for goal in tree.goals() {
            if goal.parent_id.as_ref().is_some_and(|p| ids.contains(p)) {
                ids.insert(goal.id.clone());
            }
        }
        if ids.len() == before {
            return ids;
        }
    }
}

/// How many events the fork before a goal keeps: those before the model turn that started
/// the goal (or one of `subtree`), or before the first message tied to one of them if no model
/// turn came first. `None` if none ever started.
fn goal_cut(
    events: &[Event],
    subtree: &HashSet<String>,
) -> Result<Option<usize>, crate::store::ReplayError> {
    let mut state: Option<TraceState> = None;
    let mut last_assistant = None;
    for (index, event) in events.iter().enumerate() {
        match state.as_mut() {
            None => state = Some(TraceState::from_first_event(event)?),
            Some(state) => state.replay(event)?,
        }
        let tied = match &event.kind {
            EventKind::MessageAdded { message, .. } => {
                if message.role == Role::Assistant {
                    last_assistant = Some(index);
                }
                message
                    .goal_id
                    .as_ref()
                    .is_some_and(|g| subtree.contains(g))
            }
            _ => false,
        };
        let started = state.as_ref().is_some_and(|state| {
            let tree = &state.goal_tree;
            tree.current_id().is_some_and(|id| subtree.contains(id))
                || tree
                    .goals()
                    .iter()
                    .any(|g| subtree.contains(&g.id) && g.status != GoalStatus::Pending)
        });
        if tied || started {
            return Ok(Some(last_assistant.unwrap_or(index)));
        }
    }
    Ok(None)
}

/// How many events the fork after message `sequence` keeps: up to that message, and up to the
/// last result of its model turn. `None` if there is no such message.
fn message_cut(events: &[Event], sequence: u64) -> Option<usize> {
    let added: Vec<(usize, &Message)> = events
        .iter()
        .enumerate()
        .filter_map(|(index, event)| match &event.kind {
            EventKind::MessageAdded { message, .. } => Some((index, message)),
            _ => None,
        })
        .collect();
    let position = added.iter().position(|(_, m)| m.sequence == sequence)?;
    let (mut end, message) = *added.get(position)?;
    // The turn the message belongs to: the message itself if it is an assistant message, the
    // assistant message its result answers if it is a tool result.
    let assistant = match message.role {
        Role::Assistant => Some(message),
        Role::Tool => added
            .get(..position)?
            .iter()
            .rev()
            .map(|(_, m)| *m)
            .find(|m| m.role == Role::Assistant),
        _ => None,
    };
    if let Some(assistant) = assistant {
        let calls: HashSet<&str> = assistant
            .content
            .tool_calls()
            .iter()
            .map(|call| call.id.as_str())
            .collect();
        for (index, later) in added.iter().skip(position + 1) {
            if !later
                .tool_call_id
                .as_deref()
                .is_some_and(|id| calls.contains(id))
            {
                break;
            }
            end = *index;
        }
    }
    Some(end + 1)
}

/// The writes that rebuild `events` in a new trace: each goal tree as it was after a change,
/// each message as it was at the end of `events`, in the original order. Every change of a
/// goal tree is recorded as `goal_tree_updated` (replay relies on it), so these are all of them.
fn copy_ops(events: &[Event]) -> Vec<WriteOp> {
    let mut latest: BTreeMap<u64, &Message> = BTreeMap::new();
    for event in events {
        match &event.kind {
            EventKind::MessageAdded { message, .. } | EventKind::MessageUpdated { message } => {
                latest.insert(message.sequence, message);
            }
            _ => {}
        }
    }
    let mut ops = Vec::new();
    for event in events {
        match &event.kind {
            EventKind::GoalTreeUpdated { goal_tree } => {
                ops.push(WriteOp::ReplaceGoalTree(goal_tree.clone()));
            }
            EventKind::MessageAdded { message, .. } => {
                let message = latest.get(&message.sequence).copied().unwrap_or(message);
                ops.push(WriteOp::AddMessage(new_message(message)));
            }
            _ => {}
        }
    }
    ops
}

/// A recorded message as a message to record again elsewhere.
fn new_message(message: &Message) -> NewMessage {
    NewMessage {
        role: message.role,
        content: message.content.clone(),
        goal_id: message.goal_id.clone(),
        tool_call_id: message.tool_call_id.clone(),
        tool_name: message.tool_name.clone(),
        branch_id: message.branch_id.clone(),
        tokens: message.tokens,
        cost: message.cost,
        duration_ms: message.duration_ms,
        metadata: message.metadata.clone(),
    }
}
