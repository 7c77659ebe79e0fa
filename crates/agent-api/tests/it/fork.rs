//! `POST /api/traces/{trace_id}/fork`: a fork at a goal or after a message is created (201,
//! `Location`, `forked_from`) and resumes; wrong bodies, goals and messages are 400, an unknown
//! trace 404, a trace running in this server 409.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{get, post_empty, post_json, state_with, wait_for_status};
use agent_api::ApiConfig;
use agent_execution::{InMemoryTraceStore, TraceStatus, TraceStore};
use agent_llm::ScriptedTurn;
use axum::http::{StatusCode, header};
use serde_json::json;

fn two_goals() -> Vec<ScriptedTurn> {
    vec![
        ScriptedTurn::tool_call("goal", json!({"add": "Read, Write", "focus": "1"})),
        ScriptedTurn::tool_call("goal", json!({"done": "read", "focus": "2"})),
        ScriptedTurn::tool_call("goal", json!({"done": "written"})),
        ScriptedTurn::text("All done."),
    ]
}

#[tokio::test]
async fn a_fork_is_created_named_and_resumable_and_wrong_requests_are_refused() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let workspace = tempfile::tempdir().unwrap();
    let state = state_with(
        store.clone(),
        two_goals(),
        workspace.path(),
        ApiConfig::default(),
    );
    let answer = post_json(&state, "/api/traces", json!({"task": "Read then write"})).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
    let original = answer.json["trace_id"].as_str().unwrap().to_owned();
    wait_for_status(&store, &original, TraceStatus::Completed).await;
    let uri = format!("/api/traces/{original}/fork");

    let answer = post_json(&state, &uri, json!({"goal": "2"})).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
    let forked = answer.json["trace_id"].as_str().unwrap().to_owned();
    assert_eq!(
        answer.headers[header::LOCATION],
        format!("/api/traces/{forked}")
    );
    let detail = get(&state, &format!("/api/traces/{forked}")).await;
    assert_eq!(detail.json["trace"]["status"], "cancelled");
    assert_eq!(
        detail.json["trace"]["forked_from"]["trace_id"],
        original.as_str()
    );
    assert_eq!(detail.json["goal_tree"]["goals"][1]["status"], "pending");
    // The original is as it was.
    let before = get(&state, &format!("/api/traces/{original}")).await;
    assert_eq!(before.json["trace"]["status"], "completed");
    assert!(before.json["trace"].get("forked_from").is_none());

    let answer = post_json(&state, &uri, json!({"message_sequence": 1})).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
    let after_task = answer.json["trace_id"].as_str().unwrap().to_owned();
    let detail = get(&state, &format!("/api/traces/{after_task}")).await;
    assert_eq!(detail.json["trace"]["total_messages"], 1);
    assert_eq!(detail.json["trace"]["forked_from"]["message_sequence"], 1);

    for (body, code) in [
        (json!({"goal": "9"}), "unknown_fork_point"),
        (json!({"message_sequence": 999}), "unknown_fork_point"),
        (json!({}), "invalid_body"),
        (json!({"goal": "1", "message_sequence": 1}), "invalid_body"),
    ] {
        let answer = post_json(&state, &uri, body.clone()).await;
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{body}: {}",
            answer.text
        );
        assert_eq!(answer.code(), code, "{body}");
    }
    let answer = post_json(&state, &uri, json!({"goal": 2, "extra": true})).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.text);
    let unknown = "/api/traces/00000000-0000-4000-8000-000000000000/fork";
    let answer = post_json(&state, unknown, json!({"goal": "1"})).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND, "{}", answer.text);

    // The fork runs on like any stopped trace; its goals are open again and the model only
    // answers, so it ends with them left open.
    let answer = post_empty(&state, &format!("/api/traces/{forked}/resume")).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text);
    wait_for_status(&store, &forked, TraceStatus::Incomplete).await;
}

#[tokio::test]
async fn a_trace_running_in_this_server_is_not_forked() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let workspace = tempfile::tempdir().unwrap();
    let slow = vec![ScriptedTurn::text("late").with_delay(Duration::from_secs(60))];
    let state = state_with(store.clone(), slow, workspace.path(), ApiConfig::default());
    let answer = post_json(&state, "/api/traces", json!({"task": "Take your time"})).await;
    let trace_id = answer.json["trace_id"].as_str().unwrap().to_owned();
    let answer = post_json(
        &state,
        &format!("/api/traces/{trace_id}/fork"),
        json!({"message_sequence": 1}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::CONFLICT, "{}", answer.text);
    assert_eq!(answer.code(), "run_in_progress");
    post_empty(&state, &format!("/api/traces/{trace_id}/cancel")).await;
    wait_for_status(&store, &trace_id, TraceStatus::Cancelled).await;
}
