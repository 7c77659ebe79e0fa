//! A writer continues from the state its last commit left, without reading the trace's row
//! again: what stops it from writing over a change it did not see.

use agent_execution::{NewMessage, NewTrace, TraceStore};
use agent_store_pg::PgTraceStore;
use agent_test_support::postgres::Cluster;

/// Connects a plain client, as a tool outside the store would.
async fn client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

async fn count(client: &tokio_postgres::Client, sql: &str, id: &str) -> i64 {
    client.query_one(sql, &[&id]).await.unwrap().get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_over_a_change_it_did_not_see_fails_and_keeps_nothing() {
    let cluster = Cluster::start();
    let url = cluster.url("postgres");
    let store = PgTraceStore::connect(&url).await.unwrap();
    let id = store
        .create_trace(NewTrace::agent("fenced"))
        .await
        .unwrap()
        .trace_id;
    store
        .add_message(&id, NewMessage::user("one"))
        .await
        .unwrap();
    // Another writer appends an event behind the store's back (as one that took the trace over
    // while this store's lock connection was gone, before it noticed, would).
    let other = client(&url).await;
    other
        .execute(
            "WITH last AS (UPDATE agent_traces SET last_event_id = last_event_id + 1 \
             WHERE trace_id = $1 RETURNING last_event_id) \
             INSERT INTO agent_events (trace_id, event_id, event) \
             SELECT $1, last.last_event_id, jsonb_set(e.event::jsonb, '{event_id}', \
             to_jsonb(last.last_event_id))::json \
             FROM last, agent_events e \
             WHERE e.trace_id = $1 AND e.event_id = last.last_event_id - 1",
            &[&id],
        )
        .await
        .unwrap();
    let events = "SELECT count(*) FROM agent_events WHERE trace_id = $1";
    let messages = "SELECT count(*) FROM agent_messages WHERE trace_id = $1";
    let (events_before, messages_before) = (
        count(&other, events, &id).await,
        count(&other, messages, &id).await,
    );

    let refused = store.add_message(&id, NewMessage::user("two")).await;
    let error = refused.expect_err("a write over an unseen change is refused");
    assert!(
        error.to_string().contains("another writer"),
        "the error says why: {error}"
    );
    assert_eq!(count(&other, events, &id).await, events_before);
    assert_eq!(count(&other, messages, &id).await, messages_before);

    // The next write reads the trace again and continues after the other writer's event.
    store
        .add_message(&id, NewMessage::user("two"))
        .await
        .unwrap();
    let ids: Vec<u64> = store
        .get_events(&id, 0)
        .await
        .unwrap()
        .iter()
        .map(|event| event.event_id)
        .collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    assert_eq!(count(&other, messages, &id).await, messages_before + 1);
    let texts: Vec<String> = store
        .get_trace_messages(&id)
        .await
        .unwrap()
        .iter()
        .map(|message| message.content.text().to_owned())
        .collect();
    assert_eq!(texts, ["one", "two"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_whose_lock_was_lost_reads_the_trace_again() {
    let cluster = Cluster::start();
    let url = cluster.url("postgres");
    let first = PgTraceStore::connect(&url).await.unwrap();
    let second = PgTraceStore::connect(&url).await.unwrap();
    let id = first
        .create_trace(NewTrace::agent("handed over"))
        .await
        .unwrap()
        .trace_id;
    first
        .add_message(&id, NewMessage::user("one"))
        .await
        .unwrap();
    // The first store's lock connection goes away; the second takes the trace and writes.
    let admin = client(&url).await;
    admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks \
             WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()",
            &[],
        )
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match second.add_message(&id, NewMessage::user("two")).await {
            Ok(_) => break,
            Err(error) if std::time::Instant::now() < deadline => {
                assert!(error.to_string().contains("lock"), "{error}");
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            Err(error) => panic!("the second store never got the trace: {error}"),
        }
    }
    second.release_writer(&id).await.unwrap();
    // The first store's state from before is stale: its next write starts from the database.
    first
        .add_message(&id, NewMessage::user("three"))
        .await
        .unwrap();
    let texts: Vec<String> = first
        .get_trace_messages(&id)
        .await
        .unwrap()
        .iter()
        .map(|message| message.content.text().to_owned())
        .collect();
    assert_eq!(texts, ["one", "two", "three"]);
    let tree_total = first.get_trace(&id).await.unwrap().unwrap().total_messages;
    assert_eq!(tree_total, 3);
}
