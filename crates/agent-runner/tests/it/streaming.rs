//! The runner streams each model answer: its text reaches watchers as live deltas while the
//! model is still sending it, and the deltas are never stored.

use std::sync::Arc;
use std::time::Duration;

use agent_execution::{
    DeltaKind, EventKind, InMemoryTraceStore, LiveEvent, Role, TraceStatus, TraceStore, watch_live,
};
use agent_llm::{LlmClient, OpenAiClient, OpenAiConfig};
use agent_runner::{AgentRunner, RunnerOptions};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use agent_tools::ToolRegistry;
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

const ANSWER: &str = "The answer streams in three pieces.";

#[tokio::test]
async fn text_deltas_reach_watchers_before_the_message_and_are_not_stored() {
    let workspace = tempfile::tempdir().unwrap();
    // The text comes in three pieces, 200 ms apart.
    let server = MockModelServer::with_replies([
        Reply::from(Turn::text(ANSWER)).with_pause(Duration::from_millis(200))
    ])
    .await;
    let config = OpenAiConfig::new(server.openai_base(), Some("sk-test".into()));
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(config).unwrap());
    let store = Arc::new(InMemoryTraceStore::new());
    let options = RunnerOptions::new("mock-model", workspace.path());
    let runner = AgentRunner::new(store.clone(), llm, ToolRegistry::new(), options);

    let trace_id = runner.create("Answer in pieces").await.unwrap();
    let mut feed = watch_live(store.clone(), &trace_id, 0);
    let driven = {
        let id = trace_id.clone();
        tokio::spawn(async move { runner.drive(&id, CancellationToken::new()).await })
    };

    let mut seen = Vec::new();
    while let Some(item) = feed.next().await {
        let item = item.unwrap();
        let end = matches!(&item, LiveEvent::Stored(e) if matches!(e.kind, EventKind::TraceCompleted { .. }));
        seen.push(item);
        if end {
            break;
        }
    }
    let outcome = driven.await.unwrap().unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed);

    let deltas: Vec<_> = seen
        .iter()
        .filter_map(|item| match item {
            LiveEvent::Delta(delta) => Some(delta),
            LiveEvent::Stored(_) => None,
        })
        .collect();
    assert!(deltas.len() >= 2, "the text came in pieces: {deltas:?}");
    assert!(deltas.iter().all(|d| d.kind == DeltaKind::Text));
    assert!(deltas.iter().all(|d| d.trace_id == trace_id));
    let joined: String = deltas.iter().map(|d| d.delta.as_str()).collect();
    assert_eq!(joined, ANSWER);

    // Every delta comes before the stored assistant message it belongs to.
    let last_delta = seen
        .iter()
        .rposition(|item| matches!(item, LiveEvent::Delta(_)))
        .unwrap();
    let message = seen
        .iter()
        .position(|item| {
            matches!(item, LiveEvent::Stored(e) if matches!(&e.kind, EventKind::MessageAdded { message, .. } if message.role == Role::Assistant))
        })
        .expect("the assistant message was added");
    assert!(last_delta < message, "{seen:?}");

    // The stored events are exactly the trace's events: no delta was written.
    let stored: Vec<u64> = seen
        .iter()
        .filter_map(|item| match item {
            LiveEvent::Stored(event) => Some(event.event_id),
            LiveEvent::Delta(_) => None,
        })
        .collect();
    let events: Vec<u64> = store
        .get_events(&trace_id, 0)
        .await
        .unwrap()
        .iter()
        .map(|e| e.event_id)
        .collect();
    assert_eq!(stored, events);
    assert_eq!(events, (1..=events.len() as u64).collect::<Vec<_>>());
}
