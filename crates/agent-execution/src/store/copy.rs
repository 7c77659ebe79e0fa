//! Copying a trace from one store to another, events included: the destination gets the same
//! events with the same ids, the same messages and the same state, in one commit.

use crate::store::{Commit, StoreError, TraceState, TraceStore};

/// What [`copy_trace`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copied {
    /// The trace was copied, with this many events.
    Events(usize),
    /// The destination has a trace with this id already; nothing was written.
    AlreadyThere,
}

/// Copies one trace (not its sub-traces, which are traces of their own) from `from` to `to`:
/// its events are replayed to rebuild its state exactly as the source wrote it, and written to
/// the destination as one commit with its messages. A trace whose events do not replay is
/// refused as [`StoreError::Corrupt`] and nothing is written.
pub async fn copy_trace(
    from: &dyn TraceStore,
    to: &dyn TraceStore,
    trace_id: &str,
) -> Result<Copied, StoreError> {
    let events = from.get_events(trace_id, 0).await?;
    let state = TraceState::replay_all(&events)
        .map_err(|error| StoreError::Corrupt {
            path: format!("events of trace {trace_id}").into(),
            detail: error.to_string(),
        })?
        .ok_or_else(|| StoreError::NotFound {
            trace_id: trace_id.to_owned(),
        })?;
    // Read after the events: a source still being written may hold messages the events read
    // do not describe yet, which the copy leaves out.
    let messages: Vec<_> = from
        .get_trace_messages(trace_id)
        .await?
        .into_iter()
        .filter(|message| message.sequence <= state.last_sequence)
        .collect();
    let mut txn = match to.begin_new(trace_id).await {
        Ok(txn) => txn,
        Err(StoreError::AlreadyExists { .. }) => return Ok(Copied::AlreadyThere),
        Err(error) => return Err(error),
    };
    let count = events.len();
    let commit = Commit {
        created: Some(state),
        events,
        messages,
        trace_changed: true,
        goal_tree_changed: true,
    };
    txn.commit(commit).await?;
    drop(txn);
    to.release_writer(trace_id).await?;
    Ok(Copied::Events(count))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::{InMemoryTraceStore, NewMessage, NewTrace};

    #[tokio::test]
    async fn a_copy_has_the_same_events_messages_and_state() {
        let from = InMemoryTraceStore::new();
        let to = Arc::new(InMemoryTraceStore::new());
        let id = from
            .create_trace(NewTrace::agent("t"))
            .await
            .unwrap()
            .trace_id;
        for i in 0..5 {
            from.add_message(&id, NewMessage::user(format!("m{i}")))
                .await
                .unwrap();
        }
        assert_eq!(
            copy_trace(&from, to.as_ref(), &id).await.unwrap(),
            Copied::Events(6)
        );
        assert_eq!(
            to.get_events(&id, 0).await.unwrap(),
            from.get_events(&id, 0).await.unwrap()
        );
        assert_eq!(
            to.get_trace_messages(&id).await.unwrap(),
            from.get_trace_messages(&id).await.unwrap()
        );
        assert_eq!(
            to.get_trace(&id).await.unwrap(),
            from.get_trace(&id).await.unwrap()
        );
        // The copy takes writes as its origin does.
        to.add_message(&id, NewMessage::user("after"))
            .await
            .unwrap();
        assert_eq!(to.get_events(&id, 0).await.unwrap().len(), 7);
        assert_eq!(
            copy_trace(&from, to.as_ref(), &id).await.unwrap(),
            Copied::AlreadyThere
        );
    }
}
