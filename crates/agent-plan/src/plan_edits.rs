//! People's edits of a stored plan (the HTTP API, the viewer): a list of [`PlanEdit`]s applied
//! to a trace's goal tree by [`apply`], all or nothing, through `agent-goal`'s own rules
//! ([`GoalTree::apply_plan_edit_at`]): only pending goals are reworded, moved or deleted, a
//! started one can only be abandoned.
//!
//! The edits are one commit of the store, made while the trace is locked, so a run cannot start
//! between reading the tree and writing it. Each edit is recorded as the events every change of
//! a goal tree gets (`goal_added`, `goal_updated`, `goal_removed`, then `goal_tree_updated` with
//! the whole tree in its new order), so watchers see every edit; no event kind is added.
//!
//! ```
//! use agent_execution::{InMemoryTraceStore, NewTrace, TraceStatus, TraceStore, TraceUpdate};
//! use agent_plan::plan_edits::{self, PlanEdit};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = InMemoryTraceStore::new();
//! let trace = store.create_trace(NewTrace::agent("Add a cache")).await?;
//! let planned = TraceUpdate { status: Some(TraceStatus::Planned), ..TraceUpdate::default() };
//! store.update_trace(&trace.trace_id, planned).await?;
//! let add = |description: &str| PlanEdit::Add {
//!     description: description.into(),
//!     parent_id: None,
//!     index: None,
//!     agent: None,
//!     check: None,
//!     judge: None,
//!     budget: None,
//! };
//! let tree = plan_edits::apply(&store, &trace.trace_id, &[add("Read"), add("Write")]).await?;
//! assert_eq!(tree.to_todo_string(), "[ ] 1. Read\n[ ] 2. Write\n");
//! # Ok(())
//! # }
//! ```

use std::collections::HashMap;

use agent_execution::{StoreError, TraceStatus, TraceStore, WriteOp, commit_ops};
use agent_goal::now_rfc3339;

use agent_runner::{MAX_GOAL_TEXT_CHARS, MAX_PLAN_GOALS};

/// What [`apply`] takes and gives, for callers that depend on this crate only.
pub use agent_goal::{GoalError, GoalTree, PlanEdit};

/// Edits one call of [`apply`] may make. Each edit is recorded with the whole tree after it, so
/// a list must not be able to make the event log huge.
pub const MAX_EDITS_PER_CALL: usize = 50;

/// Why edits of a plan were not applied; nothing was written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanEditError {
    /// No trace has this id.
    #[error("there is no trace {trace_id}")]
    NotFound {
        /// The id that was given.
        trace_id: String,
    },
    /// A run of the trace is going on (status `running` or `waiting`): its plan belongs to the
    /// model until the run ends.
    #[error("trace {trace_id} is running; edit its plan once the run has ended")]
    Running {
        /// The trace.
        trace_id: String,
    },
    /// The goal tree refused an edit (e.g. rewording a goal that already started); none of
    /// the edits was applied.
    #[error("edit {index} was refused: {source}")]
    Refused {
        /// The position of the refused edit in the list, from 0.
        index: usize,
        /// Why the goal tree refused it.
        source: GoalError,
    },
    /// The list is longer than [`MAX_EDITS_PER_CALL`], an edit's text is longer than
    /// [`MAX_GOAL_TEXT_CHARS`], or the plan would hold more than
    /// [`MAX_PLAN_GOALS`] goals; nothing was applied.
    #[error("{0}")]
    TooLarge(String),
    /// The store refused or failed the read or the write.
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for PlanEditError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound { trace_id } => Self::NotFound { trace_id },
            other => Self::Store(other),
        }
    }
}

/// Applies `edits`, in order, to the goal tree of trace `trace_id` and returns the new tree.
///
/// All or nothing: the first edit the goal tree refuses is [`PlanEditError::Refused`] naming
/// its position, and nothing is written. A trace whose run is going on is refused
/// ([`PlanEditError::Running`]), whatever its plan; any other trace (a stored plan, or one that
/// stopped or ended) may be edited within the goal tree's rules. An empty list writes nothing
/// and returns the tree as it is.
pub async fn apply(
    store: &dyn TraceStore,
    trace_id: &str,
    edits: &[PlanEdit],
) -> Result<GoalTree, PlanEditError> {
    agent_execution::validate_trace_id(trace_id).map_err(StoreError::from)?;
    check_sizes(edits)?;
    let mut txn = store.begin(trace_id).await?;
    let Some(state) = txn.state() else {
        return Err(PlanEditError::NotFound {
            trace_id: trace_id.to_owned(),
        });
    };
    if matches!(
        state.trace.status,
        TraceStatus::Running | TraceStatus::Waiting
    ) {
        return Err(PlanEditError::Running {
            trace_id: trace_id.to_owned(),
        });
    }
    let now = now_rfc3339();
    let mut tree = state.goal_tree.clone();
    let mut ops = Vec::with_capacity(edits.len());
    for (index, edit) in edits.iter().enumerate() {
        tree.apply_plan_edit_at(edit, &now)
            .map_err(|source| PlanEditError::Refused { index, source })?;
        if tree.goals().len() > MAX_PLAN_GOALS {
            return Err(PlanEditError::TooLarge(format!(
                "edit {index}: a plan holds at most {MAX_PLAN_GOALS} goals"
            )));
        }
        // One op per edit, so each edit is its own events in the one commit.
        ops.push(WriteOp::ReplaceGoalTree(tree.clone()));
    }
    if ops.is_empty() {
        return Ok(tree);
    }
    let (events, _) = commit_ops(txn.as_mut(), ops, &HashMap::new(), &now).await?;
    store.event_bus().publish(trace_id, &events);
    Ok(tree)
}

/// Refuses a list of edits, or a text in one, over the limits.
fn check_sizes(edits: &[PlanEdit]) -> Result<(), PlanEditError> {
    if edits.len() > MAX_EDITS_PER_CALL {
        return Err(PlanEditError::TooLarge(format!(
            "{} edits in one change; at most {MAX_EDITS_PER_CALL}",
            edits.len()
        )));
    }
    for (index, edit) in edits.iter().enumerate() {
        let texts = match edit {
            PlanEdit::Add {
                description,
                agent,
                check,
                judge,
                ..
            } => vec![
                Some(description),
                agent.as_ref(),
                check.as_ref(),
                judge.as_ref(),
            ],
            PlanEdit::Update {
                description,
                agent,
                check,
                judge,
                ..
            } => vec![
                description.as_ref(),
                agent.as_ref(),
                check.as_ref(),
                judge.as_ref(),
            ],
            PlanEdit::Abandon { reason, .. } => vec![Some(reason)],
            PlanEdit::Move { .. } | PlanEdit::Delete { .. } => Vec::new(),
        };
        if texts
            .into_iter()
            .flatten()
            .any(|text| text.chars().count() > MAX_GOAL_TEXT_CHARS)
        {
            return Err(PlanEditError::TooLarge(format!(
                "edit {index}: a text is longer than {MAX_GOAL_TEXT_CHARS} characters"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "plan_edits_tests.rs"]
mod tests;
