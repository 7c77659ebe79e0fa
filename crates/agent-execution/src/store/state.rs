//! The in-memory head of a trace (`TraceState`), a planned write (`Commit`), and replay: how a
//! trace is rebuilt from its events, using the same roll-up code as a live write.

use agent_goal::{GoalTree, StatsDelta};

use crate::event::{Event, EventKind};
use crate::message::Message;
use crate::trace::Trace;

/// What a store keeps in memory for an open trace: everything but the messages and events.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceState {
    /// The trace with its totals.
    pub trace: Trace,
    /// Its goal tree with its statistics.
    pub goal_tree: GoalTree,
    /// The id of the newest event (0 before the first).
    pub last_event_id: u64,
    /// The sequence of the newest message (0 before the first).
    pub last_sequence: u64,
    /// How many sub-traces were started (numbers the next sub-trace id).
    pub sub_trace_count: u64,
}

/// A write planned by [`crate::plan_commit`] that a store must make durable as one unit.
///
/// Everything was computed by shared code: the new state, the events with their ids, and the
/// messages to store. A store appends `events` in order and stores `messages` (new ones and new
/// versions of updated ones). The state after a write to an existing trace was planned in place,
/// in the state the store's [`crate::TraceTxn`] holds; the commit that creates a trace carries
/// the new trace's state in `created`, which the store serves from then on.
#[derive(Debug, Clone, PartialEq)]
pub struct Commit {
    /// The state of the trace this commit creates; `None` for a write to an existing trace.
    pub created: Option<TraceState>,
    /// The events to append, with consecutive ids after the previous newest.
    pub events: Vec<Event>,
    /// Messages added or changed, each once, in sequence order.
    pub messages: Vec<Message>,
    /// True when the trace's own record (`meta.json`) changed.
    pub trace_changed: bool,
    /// True when the goal tree (`goal.json`) changed.
    pub goal_tree_changed: bool,
}

impl Commit {
    /// The commit that creates a trace: one `trace_created` event.
    pub fn create(trace: Trace, goal_tree: GoalTree) -> Self {
        let event = Event {
            event_id: 1,
            kind: EventKind::TraceCreated {
                trace: trace.clone(),
                goal_tree: goal_tree.clone(),
            },
            commit_continues: false,
        };
        Self {
            created: Some(TraceState {
                trace,
                goal_tree,
                last_event_id: 1,
                last_sequence: 0,
                sub_trace_count: 0,
            }),
            events: vec![event],
            messages: Vec::new(),
            trace_changed: true,
            goal_tree_changed: true,
        }
    }
}

/// Rolls a new message into the goal tree (its goal's self stats, its and its ancestors'
/// cumulative stats) and the trace totals. Returns the affected goal ids, the message's goal
/// first. On a goal error nothing changes.
///
/// This is the one place where statistics are computed: live writes and replay both call it.
pub(crate) fn absorb_message(
    trace: &mut Trace,
    goal_tree: &mut GoalTree,
    message: &Message,
) -> Result<Vec<String>, agent_goal::GoalError> {
    let tokens = message.tokens.unwrap_or(0);
    let cost = message.cost.unwrap_or(0.0);
    let affected = match &message.goal_id {
        Some(goal_id) => {
            let delta = StatsDelta {
                tokens,
                cost,
                tools: message.tool_call_names(),
            };
            goal_tree.record_message(goal_id, &delta, &message.created_at)?
        }
        None => Vec::new(),
    };
    trace.total_messages += 1;
    trace.total_tokens += tokens;
    trace.total_cost += cost;
    trace.updated_at.clone_from(&message.created_at);
    Ok(affected)
}

/// Why a sequence of events cannot be replayed into a trace.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event {event_id}: {detail}")]
pub struct ReplayError {
    /// The event that could not be applied.
    pub event_id: u64,
    /// What is wrong with it.
    pub detail: String,
}

impl TraceState {
    /// Starts a replay from a trace's first event, which must be `trace_created` with id 1.
    pub fn from_first_event(event: &Event) -> Result<Self, ReplayError> {
        match &event.kind {
            EventKind::TraceCreated { trace, goal_tree } if event.event_id == 1 => Ok(Self {
                trace: trace.clone(),
                goal_tree: goal_tree.clone(),
                last_event_id: 1,
                last_sequence: 0,
                sub_trace_count: 0,
            }),
            _ => Err(ReplayError {
                event_id: event.event_id,
                detail: format!(
                    "a trace must start with event 1, trace_created, not {}",
                    event.name()
                ),
            }),
        }
    }

    /// Applies the next event of the trace to this state, exactly as the live write did.
    pub fn replay(&mut self, event: &Event) -> Result<(), ReplayError> {
        let fail = |detail: String| ReplayError {
            event_id: event.event_id,
            detail,
        };
        if event.event_id != self.last_event_id + 1 {
            return Err(fail(format!(
                "event ids must be consecutive, but {} follows {}",
                event.event_id, self.last_event_id
            )));
        }
        match &event.kind {
            EventKind::TraceCreated { .. } => {
                return Err(fail(format!("{} in the middle of a trace", event.name())));
            }
            EventKind::TraceUpdated { trace } => self.trace = trace.clone(),
            EventKind::GoalTreeUpdated { goal_tree } => self.goal_tree = goal_tree.clone(),
            EventKind::MessageAdded { message, .. } => {
                if message.sequence != self.last_sequence + 1 {
                    return Err(fail(format!(
                        "message sequence {} follows {}",
                        message.sequence, self.last_sequence
                    )));
                }
                absorb_message(&mut self.trace, &mut self.goal_tree, message)
                    .map_err(|e| fail(format!("message {}: {e}", message.message_id)))?;
                self.last_sequence = message.sequence;
            }
            EventKind::SubTraceStarted { .. } => self.sub_trace_count += 1,
            EventKind::GoalAdded { .. }
            | EventKind::GoalUpdated { .. }
            | EventKind::GoalRemoved { .. }
            | EventKind::MessageUpdated { .. }
            | EventKind::SubTraceCompleted { .. }
            | EventKind::LoopDetected { .. }
            | EventKind::CompactionFailed { .. }
            | EventKind::Notice { .. }
            | EventKind::GoalChecked { .. }
            | EventKind::HookRan { .. }
            | EventKind::TraceCompleted { .. } => {}
        }
        self.last_event_id = event.event_id;
        Ok(())
    }

    /// Rebuilds a trace from all its events, in order.
    pub fn replay_all<'a>(
        events: impl IntoIterator<Item = &'a Event>,
    ) -> Result<Option<Self>, ReplayError> {
        let mut events = events.into_iter();
        let Some(first) = events.next() else {
            return Ok(None);
        };
        let mut state = Self::from_first_event(first)?;
        for event in events {
            state.replay(event)?;
        }
        Ok(Some(state))
    }
}
