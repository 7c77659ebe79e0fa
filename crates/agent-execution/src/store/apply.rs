//! The one place where writes to a trace are computed: `plan_commit` turns a batch of
//! [`WriteOp`]s and the trace's current state into a [`Commit`] — new state, events with their
//! ids and `affected_goals`, messages with ids, sequences and descriptions — that a store only has
//! to persist. Statistics roll-up, goal events and trace totals therefore cannot differ between
//! store implementations.

use std::collections::{BTreeMap, HashMap};

use agent_goal::{CheckResult, Goal, GoalCheck, GoalCommand, GoalOutcome, GoalTree};
use serde_json::{Map, Value};

use crate::event::{AffectedGoal, Event, EventKind};
use crate::ids::{message_id, split_message_id};
use crate::message::{Message, MessageUpdate, NewMessage, describe};
use crate::store::StoreError;
use crate::store::state::{Commit, TraceState, absorb_message};
use crate::store::undo::Undo;
use crate::trace::{Trace, TraceOutcome, TraceUpdate};

/// One change to a trace; a batch of them is written atomically by [`crate::TraceStore::batch`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum WriteOp {
    /// Records a message → [`WriteOutput::Message`].
    AddMessage(NewMessage),
    /// Changes a recorded message → [`WriteOutput::Message`].
    UpdateMessage {
        /// The message.
        message_id: String,
        /// The change.
        update: MessageUpdate,
    },
    /// Applies a goal tool call → [`WriteOutput::GoalOutcome`].
    Goal(GoalCommand),
    /// Starts an exploration under the current goal → [`WriteOutput::GoalId`].
    StartExplore {
        /// What is being explored.
        description: String,
        /// The sub-trace ids of the branches.
        branch_ids: Vec<String>,
    },
    /// Merges an exploration → [`WriteOutput::GoalId`] of the `explore_merge` goal.
    FinishExplore {
        /// The `explore_start` goal.
        explore_start_id: String,
        /// The merged report.
        merge_summary: String,
        /// The branch whose approach was chosen.
        selected_branch: Option<String>,
    },
    /// Replaces the whole goal tree → [`WriteOutput::Done`].
    ReplaceGoalTree(GoalTree),
    /// Adds one goal as given (its id must be new, its parent must exist) → [`WriteOutput::Done`].
    AddGoal(Goal),
    /// Changes fields of a goal, given as JSON (e.g. `{"status": "completed", "summary": "…"}`)
    /// → [`WriteOutput::Goal`].
    UpdateGoal {
        /// The goal.
        goal_id: String,
        /// The new field values, by their JSON names.
        updates: Map<String, Value>,
    },
    /// Changes the trace's own fields → [`WriteOutput::Trace`].
    UpdateTrace(TraceUpdate),
    /// Finishes the trace → [`WriteOutput::Trace`]; a sub-trace also reports to its parent.
    FinishTrace(TraceOutcome),
    /// Appends an informational event (`sub_trace_started`, `sub_trace_completed`,
    /// `loop_detected`, `compaction_failed` or `goal_checked`; the other kinds are produced by the operations above) →
    /// [`WriteOutput::EventId`].
    AppendEvent(EventKind),
}

impl WriteOp {}

impl WriteOp {
    /// The writes that record a run of `goal_id`'s check: its `goal_checked` event and, for a
    /// failure, the goal's `check_result` (a pass records it with the command that completes
    /// the goal, which the caller adds after these).
    pub fn checked(goal_id: &str, check: GoalCheck, result: CheckResult) -> Vec<WriteOp> {
        let mut ops = Vec::new();
        if !result.passed {
            let mut updates = Map::new();
            updates.insert("check_result".to_owned(), serde_json::json!(result));
            let goal_id = goal_id.to_owned();
            ops.push(WriteOp::UpdateGoal { goal_id, updates });
        }
        let goal_id = goal_id.to_owned();
        ops.push(WriteOp::AppendEvent(EventKind::GoalChecked {
            goal_id,
            check,
            result,
        }));
        ops
    }
}

/// The result of one [`WriteOp`], in the same position of the batch.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum WriteOutput {
    /// The stored message.
    Message(Message),
    /// What a goal command did.
    GoalOutcome(GoalOutcome),
    /// The id of a goal created by an exploration step.
    GoalId(String),
    /// A goal after an update.
    Goal(Goal),
    /// The trace after the change.
    Trace(Trace),
    /// The id of an appended event.
    EventId(u64),
    /// Nothing to report.
    Done,
}

/// Plans a batch of writes against a trace's state, changing `state` in place into the state
/// after the write.
///
/// `stored` holds the current versions of the messages that `UpdateMessage` ops name (by
/// sequence); the store reads them before planning. On any error `state` is put back as it was
/// and nothing is planned, so nothing may be written. On success the returned [`Undo`] puts it
/// back if the commit then fails. `now` stamps everything the batch creates or changes.
pub fn plan_commit(
    state: &mut TraceState,
    ops: Vec<WriteOp>,
    stored: &HashMap<u64, Message>,
    now: &str,
) -> Result<(Commit, Vec<WriteOutput>, Undo), StoreError> {
    let first_event_id = state.last_event_id + 1;
    let mut planner = Planner {
        undo: Undo::new(state),
        state,
        trace_changed: false,
        goal_tree_changed: false,
        kinds: Vec::new(),
        messages: BTreeMap::new(),
        stored,
        now,
    };
    let mut outputs = Vec::with_capacity(ops.len());
    for op in ops {
        match planner.apply(op) {
            Ok(output) => outputs.push(output),
            Err(error) => {
                planner.undo.restore(planner.state);
                return Err(error);
            }
        }
    }
    let Planner {
        state,
        undo,
        trace_changed,
        goal_tree_changed,
        kinds,
        messages,
        ..
    } = planner;
    let count = kinds.len();
    let events: Vec<Event> = kinds
        .into_iter()
        .enumerate()
        .map(|(index, kind)| Event {
            event_id: first_event_id + index as u64,
            kind,
            commit_continues: index + 1 < count,
        })
        .collect();
    state.last_event_id = first_event_id - 1 + count as u64;
    let commit = Commit {
        trace_changed,
        goal_tree_changed,
        created: None,
        events,
        messages: messages.into_values().collect(),
    };
    Ok((commit, outputs, undo))
}

/// The sequences of the stored messages a batch needs to read before it can be planned.
pub fn messages_to_read(state: &TraceState, ops: &[WriteOp]) -> Vec<u64> {
    let mut sequences: Vec<u64> = ops
        .iter()
        .filter_map(|op| match op {
            WriteOp::UpdateMessage { message_id, .. } => split_message_id(message_id)
                .ok()
                .filter(|(trace_id, _)| *trace_id == state.trace.trace_id)
                .map(|(_, sequence)| sequence)
                .filter(|sequence| *sequence <= state.last_sequence),
            _ => None,
        })
        .collect();
    sequences.sort_unstable();
    sequences.dedup();
    sequences
}

struct Planner<'a> {
    /// The state after the ops applied so far: the trace's own, changed in place.
    state: &'a mut TraceState,
    /// What the ops changed in `state`, to put back on an error.
    undo: Undo,
    /// Whether an op changed the trace's record; tracked as the ops apply, so the planned state
    /// need not be compared with the old one.
    trace_changed: bool,
    /// Whether an op changed the goal tree.
    goal_tree_changed: bool,
    kinds: Vec<EventKind>,
    messages: BTreeMap<u64, Message>,
    stored: &'a HashMap<u64, Message>,
    now: &'a str,
}

impl Planner<'_> {
    fn apply(&mut self, op: WriteOp) -> Result<WriteOutput, StoreError> {
        match op {
            WriteOp::AddMessage(message) => self.add_message(message).map(WriteOutput::Message),
            WriteOp::UpdateMessage { message_id, update } => self
                .update_message(&message_id, &update)
                .map(WriteOutput::Message),
            WriteOp::Goal(command) => self
                .change_tree(|tree, now| Ok(tree.apply_at(&command, now)?))
                .map(WriteOutput::GoalOutcome),
            WriteOp::StartExplore {
                description,
                branch_ids,
            } => self
                .change_tree(|tree, now| Ok(tree.start_explore(&description, branch_ids, now)?))
                .map(WriteOutput::GoalId),
            WriteOp::FinishExplore {
                explore_start_id,
                merge_summary,
                selected_branch,
            } => self
                .change_tree(|tree, now| {
                    Ok(tree.finish_explore(
                        &explore_start_id,
                        &merge_summary,
                        selected_branch,
                        now,
                    )?)
                })
                .map(WriteOutput::GoalId),
            WriteOp::ReplaceGoalTree(new_tree) => self
                .change_tree(|tree, _| {
                    *tree = new_tree;
                    Ok(())
                })
                .map(|()| WriteOutput::Done),
            WriteOp::AddGoal(goal) => self
                .change_tree(|tree, _| {
                    // Refusals stay `Invalid`: an id or parent given by the caller, not the model.
                    tree.insert(goal)
                        .map_err(|error| StoreError::Invalid(error.to_string()))
                })
                .map(|()| WriteOutput::Done),
            WriteOp::UpdateGoal { goal_id, updates } => self
                .change_tree(|tree, now| update_goal(tree, &goal_id, updates, now))
                .map(WriteOutput::Goal),
            WriteOp::UpdateTrace(update) => Ok(WriteOutput::Trace(self.update_trace(&update))),
            WriteOp::FinishTrace(outcome) => self.finish_trace(outcome).map(WriteOutput::Trace),
            WriteOp::AppendEvent(kind) => self.append_event(kind).map(WriteOutput::EventId),
        }
    }

    /// Queues an event and returns the id it will get.
    fn push(&mut self, kind: EventKind) -> u64 {
        if matches!(kind, EventKind::SubTraceStarted { .. }) {
            self.state.sub_trace_count += 1;
        }
        self.kinds.push(kind);
        self.state.last_event_id + self.kinds.len() as u64
    }

    fn add_message(&mut self, new: NewMessage) -> Result<Message, StoreError> {
        let sequence = self.state.last_sequence + 1;
        let message = Message {
            message_id: message_id(&self.state.trace.trace_id, sequence),
            trace_id: self.state.trace.trace_id.clone(),
            branch_id: new.branch_id,
            role: new.role,
            sequence,
            goal_id: new.goal_id,
            tool_call_id: new.tool_call_id,
            description: describe(&new.content, new.tool_name.as_deref()),
            tool_name: new.tool_name,
            content: new.content,
            tokens: new.tokens,
            cost: new.cost,
            duration_ms: new.duration_ms,
            created_at: self.now.to_owned(),
            metadata: new.metadata,
        };
        self.undo.save_totals(&self.state.trace);
        if let Some(goal_id) = &message.goal_id {
            self.undo.save_goal_chain(&self.state.goal_tree, goal_id);
        }
        let affected = absorb_message(&mut self.state.trace, &mut self.state.goal_tree, &message)?;
        self.state.last_sequence = sequence;
        self.trace_changed = true;
        self.goal_tree_changed |= !affected.is_empty();
        let affected_goals = affected
            .iter()
            .enumerate()
            .filter_map(|(position, id)| {
                let goal = self.state.goal_tree.get(id)?;
                Some(AffectedGoal {
                    goal_id: goal.id.clone(),
                    self_stats: (position == 0).then(|| goal.self_stats.clone()),
                    cumulative_stats: goal.cumulative_stats.clone(),
                    status: None,
                    summary: None,
                })
            })
            .collect();
        self.push(EventKind::MessageAdded {
            message: message.clone(),
            affected_goals,
        });
        self.messages.insert(sequence, message.clone());
        Ok(message)
    }

    fn update_message(&mut self, id: &str, update: &MessageUpdate) -> Result<Message, StoreError> {
        let (trace_id, sequence) = split_message_id(id)?;
        let not_found = || StoreError::MessageNotFound {
            message_id: id.to_owned(),
        };
        if trace_id != self.state.trace.trace_id {
            return Err(not_found());
        }
        let mut message = self
            .messages
            .get(&sequence)
            .or_else(|| self.stored.get(&sequence))
            .cloned()
            .ok_or_else(not_found)?;
        update.apply_to(&mut message);
        self.push(EventKind::MessageUpdated {
            message: message.clone(),
        });
        self.messages.insert(sequence, message.clone());
        Ok(message)
    }

    /// Runs a change of the goal tree, then queues the events describing it and mirrors the
    /// current goal into the trace.
    fn change_tree<T>(
        &mut self,
        change: impl FnOnce(&mut GoalTree, &str) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let before = self.state.goal_tree.clone();
        let output = match change(&mut self.state.goal_tree, self.now) {
            Ok(output) => output,
            Err(error) => {
                self.state.goal_tree = before;
                return Err(error);
            }
        };
        if self.state.goal_tree != before {
            self.goal_tree_changed = true;
            for kind in super::diff::tree_events(&before, &self.state.goal_tree) {
                self.push(kind);
            }
            self.push(EventKind::GoalTreeUpdated {
                goal_tree: self.state.goal_tree.clone(),
            });
            self.undo.keep_goal_tree(before);
        }
        if self.state.trace.current_goal_id.as_deref() != self.state.goal_tree.current_id() {
            self.undo.save_trace(&self.state.trace);
            self.state.trace.current_goal_id = self.state.goal_tree.current_id().map(str::to_owned);
            self.trace_changed();
        }
        Ok(output)
    }

    /// Stamps the trace and queues a `trace_updated` event carrying it.
    fn trace_changed(&mut self) {
        self.undo.save_trace(&self.state.trace);
        self.trace_changed = true;
        self.state.trace.updated_at = self.now.to_owned();
        self.push(EventKind::TraceUpdated {
            trace: self.state.trace.clone(),
        });
    }

    fn update_trace(&mut self, update: &TraceUpdate) -> Trace {
        let before = self.state.trace.clone();
        let trace = &mut self.state.trace;
        if let Some(status) = update.status {
            trace.status = status;
        }
        if let Some(model) = &update.model {
            trace.model = Some(model.clone());
        }
        if let Some(error) = &update.error {
            trace.error.clone_from(error);
        }
        if let Some(goal_id) = &update.current_goal_id {
            trace.current_goal_id.clone_from(goal_id);
        }
        if let Some(agent_type) = &update.agent_type {
            trace.agent_type.clone_from(agent_type);
        }
        if let Some(limits) = update.limits {
            trace.limits = limits;
        }
        if let Some(settings) = &update.model_settings {
            trace.model_settings = Some(settings.clone());
        }
        if self.state.trace != before {
            self.undo.keep_trace(before);
            self.trace_changed();
        }
        self.state.trace.clone()
    }

    fn finish_trace(&mut self, outcome: TraceOutcome) -> Result<Trace, StoreError> {
        if !outcome.status.is_finished() {
            return Err(StoreError::Invalid(format!(
                "a trace cannot finish with status {:?}",
                outcome.status
            )));
        }
        self.undo.save_trace(&self.state.trace);
        let trace = &mut self.state.trace;
        trace.status = outcome.status;
        trace.summary = outcome.summary;
        if outcome.error.is_some() {
            trace.error = outcome.error;
        }
        self.trace_changed();
        self.push(EventKind::TraceCompleted {
            stats: self.state.trace.stats(),
            status: self.state.trace.status,
        });
        Ok(self.state.trace.clone())
    }

    fn append_event(&mut self, kind: EventKind) -> Result<u64, StoreError> {
        match kind {
            EventKind::SubTraceStarted { .. }
            | EventKind::SubTraceCompleted { .. }
            | EventKind::LoopDetected { .. }
            | EventKind::CompactionFailed { .. }
            | EventKind::Notice { .. }
            | EventKind::GoalChecked { .. }
            | EventKind::HookRan { .. } => Ok(self.push(kind)),
            other => Err(StoreError::Invalid(format!(
                "{} events are produced by the store itself and cannot be appended",
                other.name()
            ))),
        }
    }
}

/// Changes fields of a goal given by their JSON names; the goal keeps its id and parent.
fn update_goal(
    tree: &mut GoalTree,
    goal_id: &str,
    updates: Map<String, Value>,
    now: &str,
) -> Result<Goal, StoreError> {
    let invalid = |detail: String| StoreError::Invalid(format!("goal {goal_id}: {detail}"));
    let current = tree.get(goal_id).ok_or_else(|| {
        StoreError::Goal(agent_goal::GoalError::UnknownId {
            id: goal_id.to_owned(),
        })
    })?;
    let mut value = serde_json::to_value(current).map_err(|e| invalid(e.to_string()))?;
    let Some(fields) = value.as_object_mut() else {
        return Err(invalid("a goal must serialise as an object".to_owned()));
    };
    for (key, new) in updates {
        if matches!(key.as_str(), "id" | "parent_id") {
            return Err(invalid(format!("{key} cannot be changed")));
        }
        fields.insert(key, new);
    }
    fields.insert("updated_at".to_owned(), Value::String(now.to_owned()));
    let goal: Goal = serde_json::from_value(value).map_err(|e| invalid(e.to_string()))?;
    tree.replace(goal.clone())?;
    Ok(goal)
}
