//! The [`Inbox`]: the main runs going on in this process, each with the messages sent to it
//! and not yet seen by the model (see `turns.rs` for how the loop takes them).

use std::collections::HashMap;
use std::sync::Mutex;

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
    pub(crate) fn take(&self, trace_id: &str) -> Vec<String> {
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
