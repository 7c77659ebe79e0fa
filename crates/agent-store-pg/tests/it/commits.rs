//! What a commit sends: the goal tree only when it changed (another node still reads the
//! current one), and no notifications back to a store nobody watches through.

use std::sync::Arc;
use std::time::Duration;

use agent_execution::{NewMessage, NewTrace, TraceStore, watch};
use agent_goal::Goal;
use agent_store_pg::PgTraceStore;
use agent_test_support::postgres::Cluster;
use futures::StreamExt;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_that_leave_the_goal_tree_keep_the_one_another_node_reads() {
    let cluster = Cluster::start();
    let url = cluster.url("postgres");
    let writer = PgTraceStore::connect(&url).await.unwrap();
    let id = writer
        .create_trace(NewTrace::agent("goals"))
        .await
        .unwrap()
        .trace_id;
    let created_at = writer.get_trace(&id).await.unwrap().unwrap().created_at;
    writer
        .add_goal(&id, Goal::new("g1", None, "first goal", &created_at))
        .await
        .unwrap();
    // Outside any goal: the tree stays, the trace's record changes.
    for step in 0..3 {
        writer
            .add_message(&id, NewMessage::user(format!("outside {step}")))
            .await
            .unwrap();
    }
    // Inside the goal: its statistics change, so the tree is written again.
    writer
        .add_message(&id, NewMessage::user("inside").goal("g1"))
        .await
        .unwrap();
    writer
        .add_message(&id, NewMessage::user("outside again"))
        .await
        .unwrap();
    let reader = PgTraceStore::connect(&url).await.unwrap();
    let tree = reader.get_goal_tree(&id).await.unwrap().unwrap();
    assert_eq!(tree, writer.get_goal_tree(&id).await.unwrap().unwrap());
    assert_eq!(tree.get("g1").unwrap().description, "first goal");
    assert_eq!(tree.get("g1").unwrap().self_stats.message_count, 1);
    let trace = reader.get_trace(&id).await.unwrap().unwrap();
    assert_eq!(trace, writer.get_trace(&id).await.unwrap().unwrap());
    assert_eq!(trace.total_messages, 5);
    // A writer starting on the other node plans from the database's row.
    drop(writer);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while reader.writer_alive(&id).await.unwrap() != Some(false) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the lock outlived its writer"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    reader
        .add_message(&id, NewMessage::user("second node").goal("g1"))
        .await
        .unwrap();
    let tree = reader.get_goal_tree(&id).await.unwrap().unwrap();
    assert_eq!(tree.get("g1").unwrap().self_stats.message_count, 2);
    assert_eq!(reader.get_trace_messages(&id).await.unwrap().len(), 6);
}

/// The sessions of the cluster listening for trace changes.
async fn listening(url: &str) -> i64 {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN agent_trace_events'",
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_listens_only_once_something_watches_through_it() {
    let cluster = Cluster::start();
    let url = cluster.url("postgres");
    let writer = PgTraceStore::connect(&url).await.unwrap();
    let node = Arc::new(PgTraceStore::connect(&url).await.unwrap());
    let id = writer
        .create_trace(NewTrace::agent("quiet"))
        .await
        .unwrap()
        .trace_id;
    writer
        .add_message(&id, NewMessage::user("one"))
        .await
        .unwrap();
    assert_eq!(node.get_trace_messages(&id).await.unwrap().len(), 1);
    assert_eq!(listening(&url).await, 0);
    let mut feed = watch(node.clone(), &id, 0);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while listening(&url).await != 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the store never listened"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Commits of the other node reach the watcher, after what it read first.
    writer
        .add_message(&id, NewMessage::user("two"))
        .await
        .unwrap();
    let seen = tokio::time::timeout(
        Duration::from_secs(30),
        feed.by_ref().take(3).collect::<Vec<_>>(),
    )
    .await
    .expect("the other node's commit is heard");
    let ids: Vec<u64> = seen.into_iter().map(|e| e.unwrap().event_id).collect();
    assert_eq!(ids, vec![1, 2, 3]);
}
