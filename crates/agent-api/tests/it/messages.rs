//! `POST /api/traces/{trace_id}/messages` with a scripted model: an ended trace continues with
//! the message under its id; a running one gets it queued before its next model call.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{ScriptedFactory, post_json, read_only, short_script, wait_for_status};
use agent_api::AppState;
use agent_execution::{InMemoryTraceStore, TraceStatus, TraceStore};
use agent_llm::{ChatMessage, Role, ScriptedClient, ScriptedTurn};
use axum::http::StatusCode;
use serde_json::json;

fn state(turns: Vec<ScriptedTurn>, workspace: &std::path::Path) -> (AppState, ScriptedClient) {
    let client = ScriptedClient::new(turns).with_fallback("done");
    let factory = ScriptedFactory {
        client: client.clone(),
        workspace: workspace.to_path_buf(),
        ended: Default::default(),
    };
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let state = AppState::builder(store)
        .runner_factory(Arc::new(factory))
        .build()
        .unwrap();
    (state, client)
}

fn last_user(messages: &[ChatMessage]) -> &str {
    messages
        .iter()
        .rev()
        .find(|m| m.role() == Role::User)
        .unwrap()
        .text()
}

#[tokio::test]
async fn a_message_to_an_ended_trace_starts_its_next_turn() {
    let workspace = tempfile::tempdir().unwrap();
    let (state, client) = state(short_script(), workspace.path());
    let store = state.store().clone();
    let started = post_json(&state, "/api/traces", json!({"task": "Read"})).await;
    let trace_id = started.json["trace_id"].as_str().unwrap().to_owned();
    wait_for_status(&store, &trace_id, TraceStatus::Completed).await;

    let uri = format!("/api/traces/{trace_id}/messages");
    let answer = post_json(&state, &uri, json!({"content": "And the tests?"})).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text);
    assert_eq!(answer.json["trace_id"], trace_id.as_str());
    assert_eq!(answer.json["queued"], false);
    wait_for_status(&store, &trace_id, TraceStatus::Completed).await;
    let request = client.last_request().unwrap();
    assert_eq!(last_user(&request.messages), "And the tests?");
    assert_eq!(request.messages.last().unwrap().role(), Role::User);
    assert_eq!(client.requests().len(), 4);
}

#[tokio::test]
async fn a_message_to_a_running_trace_is_queued_for_its_next_model_call() {
    let workspace = tempfile::tempdir().unwrap();
    let turns = vec![
        ScriptedTurn::tool_call("read_progress", json!({})).with_delay(Duration::from_secs(1)),
        ScriptedTurn::text("Answered the question."),
    ];
    let (state, client) = state(turns, workspace.path());
    let store = state.store().clone();
    let started = post_json(&state, "/api/traces", json!({"task": "Slow"})).await;
    let trace_id = started.json["trace_id"].as_str().unwrap().to_owned();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while client.requests().is_empty() {
        assert!(tokio::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let uri = format!("/api/traces/{trace_id}/messages");
    let answer = post_json(&state, &uri, json!({"content": "Also check the docs"})).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text);
    assert_eq!(answer.json["queued"], true);
    wait_for_status(&store, &trace_id, TraceStatus::Completed).await;
    let requests = client.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(last_user(&requests[1].messages), "Also check the docs");
    let trace = store.get_trace(&trace_id).await.unwrap().unwrap();
    assert_eq!(trace.summary.as_deref(), Some("Answered the question."));
}

#[tokio::test]
async fn empty_unknown_and_read_only_messages_are_refused() {
    let workspace = tempfile::tempdir().unwrap();
    let (state, _) = state(short_script(), workspace.path());
    let store = state.store().clone();
    let started = post_json(&state, "/api/traces", json!({"task": "Read"})).await;
    let trace_id = started.json["trace_id"].as_str().unwrap().to_owned();
    wait_for_status(&store, &trace_id, TraceStatus::Completed).await;
    let uri = format!("/api/traces/{trace_id}/messages");

    let empty = post_json(&state, &uri, json!({"content": "  "})).await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST);
    let missing = post_json(&state, &uri, json!({})).await;
    assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    let unknown = post_json(
        &state,
        "/api/traces/7d1e2c58-0000-4000-8000-000000000000/messages",
        json!({"content": "hi"}),
    )
    .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.text);
    let read_only = read_only(store);
    let refused = post_json(&read_only, &uri, json!({"content": "hi"})).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.text);
    assert_eq!(refused.code(), "runs_unavailable");
}
