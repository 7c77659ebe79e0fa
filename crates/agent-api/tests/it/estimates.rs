//! `tokens_estimated` on a trace's detail: true when a model call of the trace or of a
//! sub-trace recorded estimated usage (a server that reported none), false otherwise.

use std::sync::Arc;

use crate::common::{get, read_only};
use agent_execution::{AssistantContent, InMemoryTraceStore, NewMessage, NewTrace, TraceStore};
use serde_json::json;

fn answer(estimated: bool) -> NewMessage {
    let mut message = NewMessage::assistant(AssistantContent {
        text: Some("Done.".into()),
        ..AssistantContent::default()
    })
    .usage(1_200, 0.0);
    let mut usage = json!({"prompt_tokens": 1_000, "completion_tokens": 200, "cached_tokens": 0});
    if estimated {
        usage["estimated"] = json!(true);
    }
    message.metadata.insert("usage".into(), usage);
    message
}

#[tokio::test]
async fn a_trace_says_when_its_token_counts_are_estimates() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let reported = store
        .create_trace(NewTrace::agent("Reported"))
        .await
        .unwrap();
    store
        .add_message(&reported.trace_id, answer(false))
        .await
        .unwrap();
    let estimated = store
        .create_trace(NewTrace::agent("Estimated"))
        .await
        .unwrap();
    store
        .add_message(&estimated.trace_id, answer(true))
        .await
        .unwrap();
    // A parent whose only estimate is in its sub-trace.
    let parent = store.create_trace(NewTrace::agent("Parent")).await.unwrap();
    store
        .add_message(&parent.trace_id, answer(false))
        .await
        .unwrap();
    let sub = store
        .create_trace(NewTrace::sub_trace(
            parent.trace_id.clone(),
            None,
            "explore",
            "Branch",
        ))
        .await
        .unwrap();
    let state = read_only(store.clone());
    let flag = |id: String| {
        let state = state.clone();
        async move {
            let detail = get(&state, &format!("/api/traces/{id}")).await;
            assert_eq!(detail.status, axum::http::StatusCode::OK, "{}", detail.text);
            detail.json["tokens_estimated"].clone()
        }
    };
    assert_eq!(flag(reported.trace_id.clone()).await, json!(false));
    assert_eq!(flag(estimated.trace_id.clone()).await, json!(true));
    assert_eq!(flag(parent.trace_id.clone()).await, json!(false));
    store
        .add_message(&sub.trace_id, answer(true))
        .await
        .unwrap();
    assert_eq!(flag(parent.trace_id.clone()).await, json!(true));
}
