//! [`Undo`]: what a write planned in place changed in a trace's state, kept so that a refused op
//! or a failed commit puts the state back as it was; and [`commit_ops`], which plans a write,
//! commits it and undoes it on failure.
//!
//! A write is planned on the state the locked trace holds, not on a copy of it: most commits add
//! a message, which changes a few counters, the trace's totals and the statistics of the
//! message's goal and its ancestors, and copying the whole goal tree for that would cost more
//! than the rest of the commit. The undo keeps the first version of each part the write
//! touches: the counters always, the trace's totals (or the whole trace record once something
//! else in it changes), each goal whose statistics a message changed (or the whole tree once
//! its shape changes).

use std::collections::HashMap;

use agent_goal::{Goal, GoalTree};

use crate::event::Event;
use crate::message::Message;
use crate::store::{StoreError, TraceState, TraceTxn, WriteOp, WriteOutput, plan_commit};
use crate::trace::Trace;

/// The versions before a planned write of everything it changed in a [`TraceState`]; see
/// [`restore`](Undo::restore).
#[derive(Debug, Clone, PartialEq)]
#[must_use = "an undo not restored on failure leaves the planned state in place"]
pub struct Undo {
    last_event_id: u64,
    last_sequence: u64,
    sub_trace_count: u64,
    /// The trace record before its first change other than its totals.
    trace: Option<Trace>,
    /// The totals and `updated_at` before the first message, when taken before `trace`.
    totals: Option<Totals>,
    /// The goal tree before its first change other than message statistics.
    goal_tree: Option<GoalTree>,
    /// Goals as they were before a message first changed their statistics, taken before
    /// `goal_tree`.
    goals: Vec<Goal>,
}

#[derive(Debug, Clone, PartialEq)]
struct Totals {
    total_messages: u64,
    total_tokens: u64,
    total_cost: f64,
    updated_at: String,
}

impl Undo {
    /// Starts the undo of a write about to be planned on `state`.
    pub(crate) fn new(state: &TraceState) -> Self {
        Self {
            last_event_id: state.last_event_id,
            last_sequence: state.last_sequence,
            sub_trace_count: state.sub_trace_count,
            trace: None,
            totals: None,
            goal_tree: None,
            goals: Vec::new(),
        }
    }

    /// Keeps the trace's totals before a message changes them.
    pub(crate) fn save_totals(&mut self, trace: &Trace) {
        if self.trace.is_none() && self.totals.is_none() {
            self.totals = Some(Totals {
                total_messages: trace.total_messages,
                total_tokens: trace.total_tokens,
                total_cost: trace.total_cost,
                updated_at: trace.updated_at.clone(),
            });
        }
    }

    /// Keeps the trace record before another change of it.
    pub(crate) fn save_trace(&mut self, trace: &Trace) {
        if self.trace.is_none() {
            self.trace = Some(trace.clone());
        }
    }

    /// Keeps `before`, the trace record as it was before a change already made.
    pub(crate) fn keep_trace(&mut self, before: Trace) {
        if self.trace.is_none() {
            self.trace = Some(before);
        }
    }

    /// Keeps `before`, the goal tree as it was before a change already made.
    pub(crate) fn keep_goal_tree(&mut self, before: GoalTree) {
        if self.goal_tree.is_none() {
            self.goal_tree = Some(before);
        }
    }

    /// Keeps the goals whose statistics a message of `goal_id` changes: the goal and its
    /// ancestors.
    pub(crate) fn save_goal_chain(&mut self, tree: &GoalTree, goal_id: &str) {
        if self.goal_tree.is_some() {
            return;
        }
        let mut next = tree.get(goal_id);
        // Bounded: a damaged tree may link its goals in a circle.
        for _ in 0..=tree.goals().len() {
            let Some(goal) = next else {
                break;
            };
            if !self.goals.iter().any(|kept| kept.id == goal.id) {
                self.goals.push(goal.clone());
            }
            next = goal
                .parent_id
                .as_deref()
                .and_then(|parent| tree.get(parent));
        }
    }

    /// Puts back in `state` everything the write changed.
    pub fn restore(self, state: &mut TraceState) {
        state.last_event_id = self.last_event_id;
        state.last_sequence = self.last_sequence;
        state.sub_trace_count = self.sub_trace_count;
        if let Some(trace) = self.trace {
            state.trace = trace;
        }
        if let Some(totals) = self.totals {
            let trace = &mut state.trace;
            trace.total_messages = totals.total_messages;
            trace.total_tokens = totals.total_tokens;
            trace.total_cost = totals.total_cost;
            trace.updated_at = totals.updated_at;
        }
        if let Some(goal_tree) = self.goal_tree {
            state.goal_tree = goal_tree;
        }
        for goal in self.goals {
            // Every kept goal is in the tree as it is now: none was removed without the whole
            // tree being kept first, and a goal never changes its parent.
            let _ = state.goal_tree.replace(goal);
        }
    }
}

/// Plans `ops` in the locked trace's state ([`plan_commit`]) and commits them: the one way a
/// write reaches a store. Returns the committed events, for the caller to publish, and one output
/// per op. On any error — a refused op or a failed commit — the trace's state is put back as it
/// was and nothing is written. A batch that produces no event commits nothing.
///
/// `stored` holds the current versions of the messages that `UpdateMessage` ops name, read
/// through the transaction before; `now` stamps what the batch creates or changes.
pub async fn commit_ops(
    txn: &mut (dyn TraceTxn + '_),
    ops: Vec<WriteOp>,
    stored: &HashMap<u64, Message>,
    now: &str,
) -> Result<(Vec<Event>, Vec<WriteOutput>), StoreError> {
    let Some(state) = txn.state_mut() else {
        return Err(StoreError::Internal(
            "a new trace must be created first".into(),
        ));
    };
    let trace_id = state.trace.trace_id.clone();
    let (commit, outputs, undo) = plan_commit(state, ops, stored, now)?;
    if commit.events.is_empty() {
        return Ok((Vec::new(), outputs));
    }
    match txn.commit(commit).await {
        Ok(events) => Ok((events, outputs)),
        Err(error) => {
            match txn.state_mut() {
                Some(state) => undo.restore(state),
                None => tracing::error!(
                    %trace_id,
                    "a failed commit lost the trace's state; the trace must be opened again"
                ),
            }
            Err(error)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use agent_goal::GoalCommand;

    use crate::store::{WriteOp, plan_commit};
    use crate::{
        InMemoryTraceStore, NewMessage, NewTrace, TraceOutcome, TraceStatus, TraceStore,
        TraceUpdate,
    };

    const NOW: &str = "2030-01-01T00:00:00.000000Z";

    fn goal(json: &str) -> WriteOp {
        WriteOp::Goal(serde_json::from_str::<GoalCommand>(json).unwrap())
    }

    fn message(goal_id: Option<&str>) -> WriteOp {
        let message = NewMessage::user("m").usage(7, 0.25);
        WriteOp::AddMessage(match goal_id {
            Some(id) => message.goal(id),
            None => message,
        })
    }

    fn model(name: &str) -> WriteOp {
        WriteOp::UpdateTrace(TraceUpdate {
            model: Some(name.into()),
            ..TraceUpdate::default()
        })
    }

    #[tokio::test]
    async fn a_refused_op_or_a_failed_commit_leaves_the_state_as_it_was() {
        let store = InMemoryTraceStore::new();
        let id = store
            .create_trace(NewTrace::agent("t"))
            .await
            .unwrap()
            .trace_id;
        for json in [
            r#"{"add": "A, B"}"#,
            r#"{"focus": "1"}"#,
            r#"{"add": "A1"}"#,
        ] {
            let command = serde_json::from_str(json).unwrap();
            store.apply_goal_command(&id, command).await.unwrap();
        }
        store
            .add_message(&id, NewMessage::user("first").goal("3").usage(3, 0.5))
            .await
            .unwrap();
        let mut txn = store.begin(&id).await.unwrap();
        let before = txn.state().unwrap().clone();
        // Every kind of change, alone and mixed in different orders.
        let batches = vec![
            vec![message(Some("3"))],
            vec![message(None), message(Some("2"))],
            vec![
                message(Some("3")),
                goal(r#"{"focus": "2"}"#),
                message(Some("2")),
            ],
            vec![goal(r#"{"add": "C"}"#), message(Some("1")), model("m1")],
            vec![
                model("m2"),
                message(Some("3")),
                goal(r#"{"focus": "1.1"}"#),
                goal(r#"{"done": "A1 is done"}"#),
                message(Some("1")),
            ],
            vec![message(Some("1")), model("m3"), message(Some("3"))],
            vec![WriteOp::FinishTrace(TraceOutcome::completed("done"))],
        ];
        let refusals = [
            WriteOp::UpdateMessage {
                message_id: format!("{id}-9999"),
                update: crate::MessageUpdate::default(),
            },
            WriteOp::FinishTrace(TraceOutcome {
                status: TraceStatus::Running,
                summary: None,
                error: None,
            }),
            message(Some("99")),
        ];
        for (number, ops) in batches.into_iter().enumerate() {
            for (kind, refusal) in refusals.iter().enumerate() {
                let mut refused = ops.clone();
                refused.push(refusal.clone());
                let state = txn.state_mut().unwrap();
                let planned = plan_commit(state, refused, &HashMap::new(), NOW);
                assert!(planned.is_err(), "batch {number}, refusal {kind}");
                assert_eq!(txn.state().unwrap(), &before, "batch {number} refused");
            }
            let state = txn.state_mut().unwrap();
            let (commit, _, undo) = plan_commit(state, ops, &HashMap::new(), NOW).unwrap();
            assert!(!commit.events.is_empty());
            assert_ne!(
                txn.state().unwrap(),
                &before,
                "batch {number} changes nothing"
            );
            // As after a failed commit.
            undo.restore(txn.state_mut().unwrap());
            assert_eq!(txn.state().unwrap(), &before, "batch {number} undone");
        }
    }
}
