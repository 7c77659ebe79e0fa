//! Two store instances on one database, as two processes or nodes would have: what one writes
//! the other reads and watches live, one writes a trace at a time, and a writer that goes away
//! leaves a trace another may resume.

use std::time::Duration;

use agent_execution::{NewMessage, NewTrace, StoreError, TraceStore, watch};
use agent_store_pg::{PgTraceStore, SCHEMA_VERSION};
use agent_test_support::postgres::Cluster;
use futures::StreamExt;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_on_another_node_gets_every_event_live_in_order() {
    let cluster = Cluster::start();
    let url = cluster.url("postgres");
    let writer = Arc::new(PgTraceStore::connect(&url).await.unwrap());
    let reader = Arc::new(PgTraceStore::connect(&url).await.unwrap());
    let id = writer
        .create_trace(NewTrace::agent("watch me"))
        .await
        .unwrap()
        .trace_id;
    let mut feed = watch(reader.clone(), &id, 0);
    assert_eq!(feed.next().await.unwrap().unwrap().event_id, 1);
    let writing = tokio::spawn({
        let writer = writer.clone();
        let id = id.clone();
        async move {
            for step in 0..200 {
                writer
                    .add_message(&id, NewMessage::user(format!("step {step}")))
                    .await
                    .unwrap();
            }
        }
    });
    let seen: Vec<u64> = tokio::time::timeout(
        Duration::from_secs(60),
        feed.by_ref()
            .take(200)
            .map(|e| e.unwrap().event_id)
            .collect::<Vec<_>>(),
    )
    .await
    .expect("the other node's events arrive");
    writing.await.unwrap();
    assert_eq!(seen, (2..=201).collect::<Vec<_>>());
    assert_eq!(reader.get_trace_messages(&id).await.unwrap().len(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_trace_has_one_writer_and_a_dead_writer_frees_it() {
    let cluster = Cluster::start();
    let url = cluster.url("postgres");
    let first = PgTraceStore::connect(&url).await.unwrap();
    let second = PgTraceStore::connect(&url).await.unwrap();
    let id = first
        .create_trace(NewTrace::agent("mine"))
        .await
        .unwrap()
        .trace_id;
    assert_eq!(second.writer_alive(&id).await.unwrap(), Some(true));
    match second.add_message(&id, NewMessage::user("theirs")).await {
        Err(StoreError::Locked { trace_id, .. }) => assert_eq!(trace_id, id),
        other => panic!("expected Locked, got {other:?}"),
    }
    // The first writer goes away (its connections close, as a killed process's would).
    drop(first);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while second.writer_alive(&id).await.unwrap() != Some(false) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the lock outlived its writer"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    second
        .add_message(&id, NewMessage::user("resumed"))
        .await
        .unwrap();
    assert_eq!(second.get_trace_messages(&id).await.unwrap().len(), 1);
    assert_eq!(second.get_events(&id, 0).await.unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_with_a_newer_schema_is_refused() {
    let cluster = Cluster::start();
    let url = cluster.url("postgres");
    drop(PgTraceStore::connect(&url).await.unwrap());
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .execute(
            "UPDATE agent_schema SET version = $1",
            &[&(SCHEMA_VERSION + 1)],
        )
        .await
        .unwrap();
    let error = PgTraceStore::connect(&url).await.unwrap_err().to_string();
    assert!(error.contains("newer"), "{error}");
    // Connecting again at the known version migrates nothing and works.
    client
        .execute("UPDATE agent_schema SET version = $1", &[&SCHEMA_VERSION])
        .await
        .unwrap();
    PgTraceStore::connect(&url).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_with_nul_characters_is_stored_as_written() {
    let cluster = Cluster::start();
    let store = PgTraceStore::connect(&cluster.url("postgres"))
        .await
        .unwrap();
    let task = "find \u{0} in the output";
    let id = store
        .create_trace(NewTrace::agent(task))
        .await
        .unwrap()
        .trace_id;
    let message = store
        .add_message(&id, NewMessage::user("a NUL: \u{0}, then more"))
        .await
        .unwrap();
    assert_eq!(store.get_trace(&id).await.unwrap().unwrap().task, task);
    let read = store
        .get_message(&message.message_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read, message);
    assert_eq!(store.get_events(&id, 0).await.unwrap().len(), 2);
    let running = agent_execution::TraceFilter {
        status: Some(agent_execution::TraceStatus::Running),
        ..Default::default()
    };
    assert_eq!(store.list_traces(&running).await.unwrap().len(), 1);
}
