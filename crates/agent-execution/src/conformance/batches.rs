//! Conformance checks of batches: a batch is one commit, written whole or not at all, with
//! consecutive event ids and every event but the last marked as continuing the commit.

use std::sync::Arc;

use serde_json::json;

use super::{assert_consistent, assistant, command};
use crate::message::NewMessage;
use crate::store::{StoreError, TraceStore, WriteOp, WriteOutput};
use crate::trace::{NewTrace, TraceUpdate};

/// A batch is one commit: all or nothing, consecutive ids, all but the last event marked.
pub async fn batches_are_atomic_and_ordered<S: TraceStore>(store: Arc<S>) {
    let id = store
        .create_trace(NewTrace::agent("task"))
        .await
        .unwrap()
        .trace_id;
    store
        .apply_goal_command(&id, command(json!({"add": "A", "focus": "1"})))
        .await
        .unwrap();
    let before = store.get_events(&id, 0).await.unwrap();
    let failed = store
        .batch(
            &id,
            vec![
                WriteOp::AddMessage(NewMessage::user("hello").goal("1")),
                WriteOp::Goal(command(json!({"focus": "7"}))),
            ],
        )
        .await;
    assert!(matches!(failed, Err(StoreError::Goal(_))));
    assert_eq!(
        store.get_events(&id, 0).await.unwrap(),
        before,
        "nothing was written"
    );
    assert_eq!(
        store.get_trace(&id).await.unwrap().unwrap().total_messages,
        0
    );

    let outputs = store
        .batch(
            &id,
            vec![
                WriteOp::AddMessage(assistant(Some("Working."), &["goal"]).goal("1")),
                WriteOp::Goal(command(json!({"done": "finished"}))),
                WriteOp::AddMessage(NewMessage::tool("call_0", "goal", "ok").goal("1")),
                WriteOp::UpdateTrace(TraceUpdate {
                    model: Some("m2".into()),
                    ..TraceUpdate::default()
                }),
            ],
        )
        .await
        .unwrap();
    assert_eq!(outputs.len(), 4);
    assert!(matches!(&outputs[0], WriteOutput::Message(m) if m.sequence == 1));
    assert!(matches!(&outputs[1], WriteOutput::GoalOutcome(_)));
    assert!(matches!(&outputs[2], WriteOutput::Message(m) if m.sequence == 2));
    assert!(matches!(&outputs[3], WriteOutput::Trace(t) if t.model.as_deref() == Some("m2")));
    let events = store.get_events(&id, before.len() as u64).await.unwrap();
    assert!(events.len() >= 4);
    let (last, rest) = events.split_last().unwrap();
    assert!(rest.iter().all(|e| e.commit_continues));
    assert!(!last.commit_continues);
    assert_eq!(
        store
            .get_events(&id, 2)
            .await
            .unwrap()
            .first()
            .map(|e| e.event_id),
        Some(3),
        "events since an id start right after it"
    );
    assert!(store.get_events(&id, 10_000).await.unwrap().is_empty());
    assert_consistent(&*store, &id).await;
}
