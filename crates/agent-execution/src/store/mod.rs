//! The `TraceStore` trait: where traces, goal trees, messages and events live.
//!
//! A store implements a few primitives — lock a trace for a write ([`TraceStore::begin`],
//! [`TraceStore::begin_new`]), persist a [`Commit`] through the returned [`TraceTxn`], and the
//! reads. Everything that changes a trace is a provided method built on them and on
//! [`plan_commit`], so statistics roll-up, trace totals, goal events and `affected_goals` are
//! computed in one place for every store, and committed events are published on the store's
//! [`EventBus`] while the trace is still locked.
//!
//! A batch of [`WriteOp`]s ([`TraceStore::batch`]) is one commit: atomic, and durable with one
//! sync in stores that sync.

mod apply;
mod copy;
mod diff;
mod error;
mod memory;
mod state;
mod undo;

use std::collections::HashMap;
use std::sync::Arc;

use agent_goal::{Goal, GoalCommand, GoalOutcome, GoalTree};
use async_trait::async_trait;
use serde_json::{Map, Value};

pub use apply::{WriteOp, WriteOutput, messages_to_read, plan_commit};
pub use copy::{Copied, copy_trace};
pub use error::StoreError;
pub use memory::InMemoryTraceStore;
pub use state::{Commit, ReplayError, TraceState};
pub use undo::{Undo, commit_ops};

use crate::bus::EventBus;
use crate::event::{Event, EventKind};
use crate::ids::{new_trace_id, now_rfc3339, split_message_id, sub_trace_id, validate_trace_id};
use crate::message::{Message, MessageUpdate, NewMessage};
use crate::trace::{NewTrace, Trace, TraceFilter, TraceOutcome, TraceStatus, TraceUpdate};

/// See [`TraceStore::changes`].
pub type Doorbell = futures::stream::BoxStream<'static, ()>;

/// A trace locked for one write. Dropping it without committing writes nothing.
#[async_trait]
pub trait TraceTxn: Send {
    /// The trace's current state; `None` for a trace being created, before its first commit.
    fn state(&self) -> Option<&TraceState>;

    /// The same state, to plan a write in: [`plan_commit`] changes it in place into the state
    /// after the write, which the store serves once [`commit`](TraceTxn::commit) succeeds.
    fn state_mut(&mut self) -> Option<&mut TraceState>;

    /// The current version of the message with this sequence number.
    async fn read_message(&mut self, sequence: u64) -> Result<Option<Message>, StoreError>;

    /// Makes a planned write durable (per the store's durability policy) as one unit: appends
    /// its events, stores its messages, and from then on serves the state planned in
    /// [`state_mut`](TraceTxn::state_mut) (or, for the commit that creates the trace, the state
    /// in [`Commit::created`]). On error nothing of the commit may be kept, and the caller puts
    /// the state back as it was before the write (with the [`Undo`] of its plan).
    ///
    /// The commit is taken by value, so a store keeps its messages without copying them; it
    /// hands back the committed events, which the caller publishes.
    async fn commit(&mut self, commit: Commit) -> Result<Vec<Event>, StoreError>;
}

/// Storage of traces, their goal trees, messages and events.
///
/// Every method validates the ids it is given. Reads of a trace that does not exist return
/// `Ok(None)` where the result is optional and [`StoreError::NotFound`] otherwise.
#[async_trait]
pub trait TraceStore: Send + Sync {
    /// Locks an existing trace for one write; [`StoreError::NotFound`] if there is none.
    async fn begin(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError>;

    /// Reserves a new trace id and locks it; the first commit creates the trace.
    /// [`StoreError::AlreadyExists`] if the id is taken.
    async fn begin_new(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError>;

    /// The bus committed events are published on (see [`crate::watch`]).
    fn event_bus(&self) -> &EventBus;

    /// A doorbell for commits this store instance does not publish: it rings (yields `()`)
    /// when the trace may have changed through another process or node, and the watchers of
    /// [`crate::watch`] then read the store after the last event they yielded — so a missed or
    /// extra ring loses or repeats nothing. `None` (the default) when every commit goes through
    /// this instance's [`EventBus`].
    fn changes(&self, _trace_id: &str) -> Option<Doorbell> {
        None
    }

    /// Whether a writer is at work on the trace: `Some(false)` when the store can tell that
    /// none is (a trace left `running` by a process that died), `Some(true)` when one is, `None`
    /// (the default) when the store cannot tell.
    async fn writer_alive(&self, _trace_id: &str) -> Result<Option<bool>, StoreError> {
        Ok(None)
    }

    /// Gives up this instance's claim to be the trace's one writer (see
    /// [`writer_alive`](TraceStore::writer_alive)), so that another process or node may write
    /// it — e.g. a server that created a trace for a run a worker will execute. The next write
    /// through this instance claims it again. Does nothing (the default) in stores whose claim
    /// lasts only as long as each write.
    async fn release_writer(&self, _trace_id: &str) -> Result<(), StoreError> {
        Ok(())
    }

    /// A trace.
    async fn get_trace(&self, trace_id: &str) -> Result<Option<Trace>, StoreError>;

    /// Traces matching the filter, newest first, at most `filter.limit`. A trace whose files are
    /// damaged is left out (and logged) so the others stay listable.
    async fn list_traces(&self, filter: &TraceFilter) -> Result<Vec<Trace>, StoreError>;

    /// A trace's goal tree.
    async fn get_goal_tree(&self, trace_id: &str) -> Result<Option<GoalTree>, StoreError>;

    /// All messages of a trace in sequence order.
    async fn get_trace_messages(&self, trace_id: &str) -> Result<Vec<Message>, StoreError>;

    /// The messages attached directly to one goal, in sequence order.
    async fn get_messages_by_goal(
        &self,
        trace_id: &str,
        goal_id: &str,
    ) -> Result<Vec<Message>, StoreError>;

    /// All messages of a trace in sequence order, shared rather than copied: a store that keeps
    /// parsed messages hands out the ones it keeps, so reading them costs no copy of their text.
    /// For readers that do not change what they read (an API response, a rendering); the same
    /// messages as [`get_trace_messages`](Self::get_trace_messages).
    async fn get_trace_messages_shared(
        &self,
        trace_id: &str,
    ) -> Result<Vec<Arc<Message>>, StoreError> {
        let messages = self.get_trace_messages(trace_id).await?;
        Ok(messages.into_iter().map(Arc::new).collect())
    }

    /// The messages of one goal, shared rather than copied: the same messages as
    /// [`get_messages_by_goal`](Self::get_messages_by_goal), see
    /// [`get_trace_messages_shared`](Self::get_trace_messages_shared).
    async fn get_messages_by_goal_shared(
        &self,
        trace_id: &str,
        goal_id: &str,
    ) -> Result<Vec<Arc<Message>>, StoreError> {
        let messages = self.get_messages_by_goal(trace_id, goal_id).await?;
        Ok(messages.into_iter().map(Arc::new).collect())
    }

    /// One message, by its id (`{trace_id}-{sequence:04}`).
    async fn get_message(&self, message_id: &str) -> Result<Option<Message>, StoreError>;

    /// The events of a trace with an id greater than `since_event_id`, in order.
    async fn get_events(
        &self,
        trace_id: &str,
        since_event_id: u64,
    ) -> Result<Vec<Event>, StoreError>;

    /// Creates a trace with an empty goal tree for its task.
    ///
    /// A main trace gets a UUID v4 id unless one is given. A sub-trace gets
    /// `{parent}@{agent_type}-{YYYYMMDDHHMMSS}-{seq:03}` (seq counts the parent's sub-traces from
    /// 1), and `sub_trace_started` is appended to the parent.
    async fn create_trace(&self, new: NewTrace) -> Result<Trace, StoreError> {
        let Some(link) = new.parent.clone() else {
            let trace_id = new.trace_id.clone().unwrap_or_else(new_trace_id);
            return create_one(self, &trace_id, &new).await;
        };
        validate_trace_id(&link.trace_id)?;
        let mut parent = self.begin(&link.trace_id).await?;
        let count = parent
            .state()
            .map(|state| state.sub_trace_count)
            .ok_or_else(|| StoreError::NotFound {
                trace_id: link.trace_id.clone(),
            })?;
        let mut attempt = 0;
        let trace = loop {
            let trace_id = match &new.trace_id {
                Some(id) => id.clone(),
                None => sub_trace_id(
                    &link.trace_id,
                    &link.agent_type,
                    chrono::Utc::now(),
                    count + 1 + attempt,
                ),
            };
            match create_one(self, &trace_id, &new).await {
                // A crash between creating a sub-trace and recording it in the parent leaves an
                // id the count does not know about; take the next number.
                Err(StoreError::AlreadyExists { .. })
                    if new.trace_id.is_none() && attempt < 1000 =>
                {
                    attempt += 1;
                }
                result => break result?,
            }
        };
        let started = EventKind::SubTraceStarted {
            trace_id: trace.trace_id.clone(),
            parent_goal_id: link.goal_id.clone(),
            agent_type: link.agent_type.clone(),
            task: trace.task.clone(),
        };
        write_ops(
            self.event_bus(),
            parent.as_mut(),
            vec![WriteOp::AppendEvent(started)],
        )
        .await?;
        Ok(trace)
    }

    /// Applies a batch of writes to one trace atomically (one commit, one sync), returning one
    /// output per op. On any error — a refused goal command included — nothing is written.
    ///
    /// This is how the runner records a step cheaply: e.g. all tool results of a step together
    /// with the trace update. Finishing a sub-trace also appends `sub_trace_completed` to the
    /// parent (a separate commit). When a subscriber of the trace on the store's bus has fallen
    /// [`MAKE_WAY_AFTER`](crate::feed::MAKE_WAY_AFTER) items behind, the write then yields once
    /// to the runtime ([`EventBus::make_way_for_watchers`]); it never waits for a watcher.
    async fn batch(
        &self,
        trace_id: &str,
        ops: Vec<WriteOp>,
    ) -> Result<Vec<WriteOutput>, StoreError> {
        validate_trace_id(trace_id)?;
        let finishes = ops.iter().any(|op| matches!(op, WriteOp::FinishTrace(_)));
        let mut txn = self.begin(trace_id).await?;
        let outputs = write_ops(self.event_bus(), txn.as_mut(), ops).await?;
        let finished = txn
            .state()
            .filter(|_| finishes)
            .map(|state| state.trace.clone());
        drop(txn);
        if finishes
            && let Some(trace) = finished
            && let Some(parent_id) = &trace.parent_trace_id
        {
            let completed = EventKind::SubTraceCompleted {
                trace_id: trace.trace_id.clone(),
                status: trace.status,
                summary: trace.summary.clone(),
                stats: trace.stats(),
            };
            let mut parent = self.begin(parent_id).await?;
            write_ops(
                self.event_bus(),
                parent.as_mut(),
                vec![WriteOp::AppendEvent(completed)],
            )
            .await?;
        }
        self.event_bus().make_way_for_watchers(trace_id).await;
        Ok(outputs)
    }

    /// Records a message: assigns id, sequence, description and time, rolls its tokens, cost
    /// and tool calls into its goal and the goal's ancestors and into the trace totals, and
    /// appends `message_added` with the affected goals.
    async fn add_message(
        &self,
        trace_id: &str,
        message: NewMessage,
    ) -> Result<Message, StoreError> {
        match single(
            self.batch(trace_id, vec![WriteOp::AddMessage(message)])
                .await?,
        ) {
            WriteOutput::Message(message) => Ok(message),
            other => Err(unexpected(&other)),
        }
    }

    /// Changes a recorded message (e.g. adds a compaction note); appends `message_updated`.
    async fn update_message(
        &self,
        message_id: &str,
        update: MessageUpdate,
    ) -> Result<Message, StoreError> {
        let (trace_id, _) = split_message_id(message_id)?;
        let op = WriteOp::UpdateMessage {
            message_id: message_id.to_owned(),
            update,
        };
        match single(self.batch(trace_id, vec![op]).await?) {
            WriteOutput::Message(message) => Ok(message),
            other => Err(unexpected(&other)),
        }
    }

    /// Applies a goal tool call: persists the tree, appends `goal_added` / `goal_updated` /
    /// `goal_removed` and `goal_tree_updated`, mirrors the current goal into the trace. A refused
    /// command returns [`StoreError::Goal`] and writes nothing.
    async fn apply_goal_command(
        &self,
        trace_id: &str,
        command: GoalCommand,
    ) -> Result<GoalOutcome, StoreError> {
        match single(self.batch(trace_id, vec![WriteOp::Goal(command)]).await?) {
            WriteOutput::GoalOutcome(outcome) => Ok(outcome),
            other => Err(unexpected(&other)),
        }
    }

    /// Starts an exploration under the current goal; returns the `explore_start` goal's id.
    async fn start_explore(
        &self,
        trace_id: &str,
        description: &str,
        branch_ids: Vec<String>,
    ) -> Result<String, StoreError> {
        let op = WriteOp::StartExplore {
            description: description.to_owned(),
            branch_ids,
        };
        match single(self.batch(trace_id, vec![op]).await?) {
            WriteOutput::GoalId(id) => Ok(id),
            other => Err(unexpected(&other)),
        }
    }

    /// Merges an exploration; returns the `explore_merge` goal's id.
    async fn finish_explore(
        &self,
        trace_id: &str,
        explore_start_id: &str,
        merge_summary: &str,
        selected_branch: Option<String>,
    ) -> Result<String, StoreError> {
        let op = WriteOp::FinishExplore {
            explore_start_id: explore_start_id.to_owned(),
            merge_summary: merge_summary.to_owned(),
            selected_branch,
        };
        match single(self.batch(trace_id, vec![op]).await?) {
            WriteOutput::GoalId(id) => Ok(id),
            other => Err(unexpected(&other)),
        }
    }

    /// Replaces a trace's goal tree, with the events describing the difference.
    async fn update_goal_tree(&self, trace_id: &str, tree: GoalTree) -> Result<(), StoreError> {
        self.batch(trace_id, vec![WriteOp::ReplaceGoalTree(tree)])
            .await
            .map(drop)
    }

    /// Adds one goal as given; appends `goal_added`.
    async fn add_goal(&self, trace_id: &str, goal: Goal) -> Result<(), StoreError> {
        self.batch(trace_id, vec![WriteOp::AddGoal(goal)])
            .await
            .map(drop)
    }

    /// Changes fields of a goal given by their JSON names; appends `goal_updated`.
    async fn update_goal(
        &self,
        trace_id: &str,
        goal_id: &str,
        updates: Map<String, Value>,
    ) -> Result<Goal, StoreError> {
        let op = WriteOp::UpdateGoal {
            goal_id: goal_id.to_owned(),
            updates,
        };
        match single(self.batch(trace_id, vec![op]).await?) {
            WriteOutput::Goal(goal) => Ok(goal),
            other => Err(unexpected(&other)),
        }
    }

    /// Changes a trace's status, model, error or current goal; appends `trace_updated`.
    async fn update_trace(&self, trace_id: &str, update: TraceUpdate) -> Result<Trace, StoreError> {
        match single(
            self.batch(trace_id, vec![WriteOp::UpdateTrace(update)])
                .await?,
        ) {
            WriteOutput::Trace(trace) => Ok(trace),
            other => Err(unexpected(&other)),
        }
    }

    /// Finishes a trace: appends `trace_updated` and `trace_completed`, and for a sub-trace
    /// `sub_trace_completed` to the parent.
    async fn finish_trace(
        &self,
        trace_id: &str,
        outcome: TraceOutcome,
    ) -> Result<Trace, StoreError> {
        match single(
            self.batch(trace_id, vec![WriteOp::FinishTrace(outcome)])
                .await?,
        ) {
            WriteOutput::Trace(trace) => Ok(trace),
            other => Err(unexpected(&other)),
        }
    }

    /// Appends an informational event (`sub_trace_started` or `sub_trace_completed`); returns its
    /// id. The other kinds are produced by the methods that make the change.
    async fn append_event(&self, trace_id: &str, kind: EventKind) -> Result<u64, StoreError> {
        match single(
            self.batch(trace_id, vec![WriteOp::AppendEvent(kind)])
                .await?,
        ) {
            WriteOutput::EventId(id) => Ok(id),
            other => Err(unexpected(&other)),
        }
    }

    /// The sub-traces of a trace, newest first.
    async fn get_sub_traces(&self, trace_id: &str) -> Result<Vec<Trace>, StoreError> {
        validate_trace_id(trace_id)?;
        let filter = TraceFilter {
            parent_trace_id: Some(trace_id.to_owned()),
            ..TraceFilter::default()
        };
        self.list_traces(&filter).await
    }
}

/// Plans `ops` against the locked trace, commits them and publishes the events while the lock
/// is still held.
async fn write_ops(
    bus: &EventBus,
    txn: &mut (dyn TraceTxn + '_),
    ops: Vec<WriteOp>,
) -> Result<Vec<WriteOutput>, StoreError> {
    let Some(state) = txn.state() else {
        return Err(StoreError::Internal(
            "a new trace must be created first".into(),
        ));
    };
    let trace_id = state.trace.trace_id.clone();
    let mut stored = HashMap::new();
    for sequence in messages_to_read(state, &ops) {
        if let Some(message) = txn.read_message(sequence).await? {
            stored.insert(sequence, message);
        }
    }
    let (events, outputs) = commit_ops(txn, ops, &stored, &now_rfc3339()).await?;
    bus.publish(&trace_id, &events);
    Ok(outputs)
}

/// Creates one trace with the given id.
async fn create_one<S: TraceStore + ?Sized>(
    store: &S,
    trace_id: &str,
    new: &NewTrace,
) -> Result<Trace, StoreError> {
    validate_trace_id(trace_id)?;
    let now = now_rfc3339();
    let parent = new.parent.as_ref();
    let trace = Trace {
        trace_id: trace_id.to_owned(),
        mode: new.mode,
        task: new.task.clone(),
        parent_trace_id: parent.map(|link| link.trace_id.clone()),
        parent_goal_id: parent.and_then(|link| link.goal_id.clone()),
        agent_type: parent
            .map(|link| link.agent_type.clone())
            .or_else(|| new.agent_type.clone()),
        status: TraceStatus::Running,
        total_messages: 0,
        total_tokens: 0,
        total_cost: 0.0,
        current_goal_id: None,
        created_at: now.clone(),
        updated_at: now,
        model: new.model.clone(),
        error: None,
        summary: None,
        limits: new.limits,
        forked_from: new.forked_from.clone(),
        model_settings: new.model_settings.clone(),
    };
    let mut txn = store.begin_new(trace_id).await?;
    let commit = Commit::create(trace.clone(), GoalTree::new(new.task.clone()));
    let events = txn.commit(commit).await?;
    store.event_bus().publish(trace_id, &events);
    Ok(trace)
}

fn single(outputs: Vec<WriteOutput>) -> WriteOutput {
    outputs.into_iter().next().unwrap_or(WriteOutput::Done)
}

fn unexpected(output: &WriteOutput) -> StoreError {
    StoreError::Internal(format!("unexpected write output {output:?}"))
}
