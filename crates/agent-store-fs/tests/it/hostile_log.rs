//! Trace folders that were tampered with: a log copied into another trace's folder must not
//! answer for that trace (found by the `events_log` fuzz target: the store returned a trace
//! whose id was not the one asked for, while listing left it out).

use std::fs;
use std::sync::Arc;

use agent_execution::{NewMessage, NewTrace, StoreError, TraceFilter, TraceStore};
use agent_store_fs::FileSystemTraceStore;

#[tokio::test]
async fn a_log_copied_into_another_folder_is_reported_not_served() {
    let base = tempfile::tempdir().unwrap();
    let store = Arc::new(FileSystemTraceStore::open(base.path()).unwrap());
    let original = store
        .create_trace(NewTrace::agent("the original"))
        .await
        .unwrap()
        .trace_id;
    store
        .add_message(&original, NewMessage::user("hello"))
        .await
        .unwrap();
    store.flush().await.unwrap();
    drop(store);

    // A copy of the folder under another (valid) trace id, as `cp -r` would make it.
    let copy = "7d1e2c58-0000-4000-8000-000000000000";
    fs::create_dir(base.path().join(copy)).unwrap();
    for file in ["events.jsonl", "meta.json", "goal.json"] {
        fs::copy(
            base.path().join(&original).join(file),
            base.path().join(copy).join(file),
        )
        .unwrap();
    }
    // And one holding only the log, so no mirror file can give it away.
    let bare = "7d1e2c58-0000-4000-8000-000000000001";
    fs::create_dir(base.path().join(bare)).unwrap();
    fs::copy(
        base.path().join(&original).join("events.jsonl"),
        base.path().join(bare).join("events.jsonl"),
    )
    .unwrap();

    let store = FileSystemTraceStore::open(base.path()).unwrap();
    for id in [copy, bare] {
        match store.get_trace(id).await {
            Err(StoreError::Corrupt { path, detail }) => {
                assert!(path.starts_with(base.path().join(id)), "{path:?}");
                assert!(detail.contains(&original), "{detail}");
            }
            other => panic!("{id}: expected a corrupt trace, got {other:?}"),
        }
        assert!(store.add_message(id, NewMessage::user("x")).await.is_err());
    }
    // The original is untouched and still the only trace listed.
    let listed = store.list_traces(&TraceFilter::default()).await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|t| t.trace_id.as_str()).collect();
    assert_eq!(ids, [original.as_str()]);
    assert_eq!(store.get_trace_messages(&original).await.unwrap().len(), 1);
}
