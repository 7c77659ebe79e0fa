//! User turns after the first: continuing an ended trace with a new message, and the queue of
//! messages sent to a run while it works (steering), which the loop puts in front of the model
//! before its next call.
//!
//! Both are recorded as user messages tied to the goal current when they arrive, so their
//! `message_added` events show them in the event stream; their metadata says how they came
//! ([`TURN_KEY`]: `continue` or `queued`).

use std::collections::HashMap;
use std::sync::Mutex;

use agent_execution::message::{Message, NewMessage};
use agent_execution::store::WriteOp;
use serde_json::json;

use crate::agent::Agent;
use crate::error::StepError;
use crate::record::record;

/// The metadata key saying how a user message after the task came: `continue` (it started a
/// new turn of an ended trace) or `queued` (it was sent while a run was going on).
pub const TURN_KEY: &str = "turn";

/// The user message that continues a trace, tied to `goal_id`.
pub(crate) fn continue_message(content: &str, goal_id: Option<&str>) -> WriteOp {
    user_message(content, goal_id, "continue")
}

fn user_message(content: &str, goal_id: Option<&str>, how: &str) -> WriteOp {
    let mut message = NewMessage::user(content);
    message.goal_id = goal_id.map(str::to_owned);
    message.metadata.insert(TURN_KEY.to_owned(), json!(how));
    WriteOp::AddMessage(message)
}

/// The runs going on in this process, each with the messages sent to it and not yet seen by
/// the model. A trace is open here from the start of its run to its end.
#[derive(Default)]
pub(crate) struct Inbox {
    runs: Mutex<HashMap<String, Vec<String>>>,
}

impl Inbox {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, Vec<String>>) -> T) -> T {
        // A panic while holding the lock leaves a map that is still valid.
        let mut runs = self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut runs)
    }

    /// Opens the inbox of a run; false when a run of the trace is already going on.
    pub(crate) fn open(&self, trace_id: &str) -> bool {
        self.with(|runs| {
            if runs.contains_key(trace_id) {
                return false;
            }
            runs.insert(trace_id.to_owned(), Vec::new());
            true
        })
    }

    /// Whether a run of the trace is going on in this process.
    pub(crate) fn is_open(&self, trace_id: &str) -> bool {
        self.with(|runs| runs.contains_key(trace_id))
    }

    /// Queues a message for the trace's run; false when no run of it is going on.
    pub(crate) fn send(&self, trace_id: &str, message: &str) -> bool {
        self.with(|runs| match runs.get_mut(trace_id) {
            Some(queue) => {
                queue.push(message.to_owned());
                true
            }
            None => false,
        })
    }

    /// Takes the queued messages of the trace's run.
    fn take(&self, trace_id: &str) -> Vec<String> {
        self.with(|runs| {
            runs.get_mut(trace_id)
                .map(std::mem::take)
                .unwrap_or_default()
        })
    }

    /// Whether messages wait for the trace's run.
    pub(crate) fn has_queued(&self, trace_id: &str) -> bool {
        self.with(|runs| runs.get(trace_id).is_some_and(|queue| !queue.is_empty()))
    }

    /// Closes the inbox when the run ends and returns what was sent too late for the model.
    pub(crate) fn close(&self, trace_id: &str) -> Vec<String> {
        self.with(|runs| runs.remove(trace_id).unwrap_or_default())
    }
}

/// Records the messages queued for the run as user messages tied to `goal_id`, right before the
/// context of the next model call is built, so the model sees them as the newest user turn.
pub(crate) async fn take_queued(
    agent: &Agent,
    trace_id: &str,
    goal_id: Option<&str>,
    messages: &mut Vec<Message>,
) -> Result<(), StepError> {
    let queued = agent.engine.inbox.take(trace_id);
    if queued.is_empty() {
        return Ok(());
    }
    let ops = queued
        .iter()
        .map(|content| user_message(content, goal_id, "queued"))
        .collect();
    let recorded = record(agent.store(), trace_id, ops).await?;
    messages.extend(recorded);
    Ok(())
}

/// Records messages that arrived after the run's last model call, so that the next turn of the
/// trace sees them.
pub(crate) async fn keep_late(agent: &Agent, trace_id: &str, late: Vec<String>) {
    if late.is_empty() {
        return;
    }
    let ops = late
        .iter()
        .map(|content| user_message(content, None, "queued"))
        .collect();
    if let Err(error) = agent.store().batch(trace_id, ops).await {
        tracing::warn!(trace_id, %error, "could not record the messages sent at the run's end");
    }
}
