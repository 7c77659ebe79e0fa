//! The run queue on its own: one claim per run however many workers ask at once, a lease that
//! runs out hands the run to another worker, one active run per trace, and what any node sends
//! (a cancel, a message, a decision) reaches the worker's side.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use agent_execution::queue::{
    Decided, Decision, QueueError, QueuedRun, RunKind, RunQueue, WaitingCall,
};
use agent_store_pg::PgRunQueue;
use agent_test_support::postgres::Cluster;
use serde_json::json;

fn run(trace_id: &str, kind: RunKind) -> QueuedRun {
    QueuedRun {
        trace_id: trace_id.to_owned(),
        kind,
        settings: json!({"approval": "ask"}),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_run_is_claimed_once_however_many_workers_ask() {
    let cluster = Cluster::start();
    let queue = Arc::new(PgRunQueue::connect(&cluster.url("postgres")).await.unwrap());
    for i in 0..40 {
        queue
            .enqueue(&run(&format!("t{i}"), RunKind::Start))
            .await
            .unwrap();
    }
    let mut workers = Vec::new();
    for w in 0..8 {
        let queue = queue.clone();
        workers.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(claimed) = queue
                .claim(&format!("w{w}"), Duration::from_secs(30))
                .await
                .unwrap()
            {
                mine.push(claimed.run.trace_id);
            }
            mine
        }));
    }
    let mut all = Vec::new();
    for worker in workers {
        all.extend(worker.await.unwrap());
    }
    let distinct: HashSet<_> = all.iter().cloned().collect();
    assert_eq!(all.len(), 40, "{all:?}");
    assert_eq!(distinct.len(), 40);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_that_runs_out_hands_the_run_to_another_worker() {
    let cluster = Cluster::start();
    let queue = PgRunQueue::connect(&cluster.url("postgres")).await.unwrap();
    queue
        .enqueue(&run("t", RunKind::Continue("go on".into())))
        .await
        .unwrap();
    // One active run per trace.
    match queue.enqueue(&run("t", RunKind::Resume)).await {
        Err(QueueError::Busy(trace_id)) => assert_eq!(trace_id, "t"),
        other => panic!("expected Busy, got {other:?}"),
    }
    let first = queue
        .claim("a", Duration::from_secs(1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.run.kind, RunKind::Continue("go on".into()));
    assert_eq!(first.run.settings, json!({"approval": "ask"}));
    assert_eq!(first.attempts, 1);
    assert!(
        queue
            .claim("b", Duration::from_secs(1))
            .await
            .unwrap()
            .is_none()
    );
    assert!(queue.active("t").await.unwrap());
    // The first worker stops renewing; after its lease, the second takes the run over.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !queue.active("t").await.unwrap(),
        "a run whose lease ran out is not active"
    );
    let second = queue
        .claim("b", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((second.run_id, second.attempts), (first.run_id, 2));
    // The first worker learns it lost the run; its finish changes nothing.
    assert!(
        !queue
            .heartbeat(first.run_id, "a", Duration::from_secs(30))
            .await
            .unwrap()
            .kept
    );
    queue.finish(first.run_id, "a", Some("late")).await.unwrap();
    assert!(queue.active("t").await.unwrap());
    assert!(
        queue
            .heartbeat(second.run_id, "b", Duration::from_secs(30))
            .await
            .unwrap()
            .kept
    );
    queue.finish(second.run_id, "b", None).await.unwrap();
    assert!(!queue.active("t").await.unwrap());
    queue.enqueue(&run("t", RunKind::Resume)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancels_messages_and_decisions_reach_the_worker() {
    let cluster = Cluster::start();
    let url = cluster.url("postgres");
    let node = PgRunQueue::connect(&url).await.unwrap();
    let worker = PgRunQueue::connect(&url).await.unwrap();
    assert!(
        !node.send("t", "early").await.unwrap(),
        "no run, no message kept"
    );
    assert!(!node.cancel("t").await.unwrap());
    node.enqueue(&run("t", RunKind::Start)).await.unwrap();
    let claimed = worker
        .claim("w", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();

    let mut changes = futures::StreamExt::boxed(worker.run_changes("t"));
    assert!(node.send("t", "first").await.unwrap());
    assert!(node.send("t", "second").await.unwrap());
    tokio::time::timeout(
        Duration::from_secs(10),
        futures::StreamExt::next(&mut changes),
    )
    .await
    .expect("the worker hears of the message");
    assert_eq!(
        worker.take_messages("t").await.unwrap(),
        ["first", "second"]
    );
    assert!(worker.take_messages("t").await.unwrap().is_empty());

    let call = WaitingCall {
        tool_call_id: "c1".into(),
        tool_name: "bash".into(),
        arguments: "{\"command\":\"ls\u{0}\"}".into(),
        requested_at: "2026-01-01T00:00:00Z".into(),
        warning: Some("the rule `bash(rm -rf)` cannot check this command".into()),
    };
    worker.ask("t", &call).await.unwrap();
    let waiting = node.waiting("t").await.unwrap();
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].tool_name, "bash");
    // Every node lists the call with its warning.
    assert_eq!(waiting[0].warning, call.warning);
    assert!(worker.decision("t", "c1").await.unwrap().is_none());
    let no = Decision {
        approve: false,
        reason: "not now".into(),
    };
    assert_eq!(
        node.decide("t", "c1", &no).await.unwrap(),
        Decided::Recorded
    );
    assert_eq!(
        node.decide("t", "c1", &no).await.unwrap(),
        Decided::AlreadyDecided
    );
    assert_eq!(
        node.decide("t", "c9", &no).await.unwrap(),
        Decided::NotWaiting
    );
    assert_eq!(worker.decision("t", "c1").await.unwrap(), Some(no));
    assert!(node.waiting("t").await.unwrap().is_empty());

    assert!(node.cancel("t").await.unwrap());
    let lease = worker
        .heartbeat(claimed.run_id, "w", Duration::from_secs(30))
        .await
        .unwrap();
    assert!(lease.kept && lease.cancel_requested);
}
