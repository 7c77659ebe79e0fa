//! Two store instances on one trace folder, as two processes would have: the writer's commits
//! reach a watcher of the other instance through the doorbell, every event once and in order;
//! the lock probe tells a live writer from a gone one.

use std::sync::Arc;
use std::time::Duration;

use agent_execution::{NewMessage, NewTrace, TraceStore, watch};
use agent_store_fs::{Durability, FileSystemTraceStore};
use futures::StreamExt;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_of_another_instance_gets_every_commit_live() {
    let base = tempfile::tempdir().unwrap();
    let writer = FileSystemTraceStore::open(base.path())
        .unwrap()
        .with_durability(Durability::Buffered);
    let trace = writer.create_trace(NewTrace::agent("Count")).await.unwrap();
    let id = trace.trace_id.clone();

    let reader = Arc::new(FileSystemTraceStore::open(base.path()).unwrap());
    assert_eq!(reader.writer_alive(&id).await.unwrap(), Some(true));
    assert_eq!(writer.writer_alive(&id).await.unwrap(), Some(true));
    let mut events = watch(reader.clone(), &id, 0);
    // The first event is read at once; every later commit needs the doorbell.
    let first = events.next().await.unwrap().unwrap();
    let mut seen = vec![first.event_id];
    let writer = Arc::new(writer);
    let writing = {
        let writer = writer.clone();
        let id = id.clone();
        tokio::spawn(async move {
            for i in 0..50 {
                writer
                    .add_message(&id, NewMessage::user(format!("message {i}")))
                    .await
                    .unwrap();
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    writing.await.unwrap();
    let newest = writer
        .get_events(&id, 0)
        .await
        .unwrap()
        .last()
        .unwrap()
        .event_id;
    while seen.last() != Some(&newest) {
        let event = tokio::time::timeout(Duration::from_secs(10), events.next())
            .await
            .expect("the watcher heard nothing for 10 s")
            .unwrap()
            .unwrap();
        seen.push(event.event_id);
    }
    assert_eq!(seen, (1..=newest).collect::<Vec<_>>());

    // The writer goes away: its lock with it.
    drop(Arc::try_unwrap(writer).unwrap());
    assert_eq!(reader.writer_alive(&id).await.unwrap(), Some(false));
}
