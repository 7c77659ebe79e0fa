//! Regressions found by schemathesis against `agent serve` (see `tests/it/hostile_http.rs`): the
//! document must describe what the server does, and the server must take what the document
//! allows.

use std::sync::Arc;

use crate::common::{get, post_json, state_with, wait_for_status};
use agent_api::ApiConfig;
use agent_execution::{InMemoryTraceStore, TraceStatus, TraceStore};
use agent_llm::ScriptedTurn;
use axum::http::StatusCode;
use serde_json::{Value, json};

/// A resume body of JSON `null` means "no overrides", as the document allows (it was refused
/// with 400 `invalid_request`).
#[tokio::test]
async fn a_null_resume_body_is_no_overrides() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let workspace = tempfile::tempdir().unwrap();
    let turns = vec![
        ScriptedTurn::text("first"),
        ScriptedTurn::text("Resumed and done."),
    ];
    let state = state_with(store.clone(), turns, workspace.path(), ApiConfig::default());
    let started = post_json(&state, "/api/traces", json!({"task": "Twice"})).await;
    let trace_id = started.json["trace_id"].as_str().unwrap().to_owned();
    wait_for_status(&store, &trace_id, TraceStatus::Completed).await;
    // A completed trace cannot resume, but the body itself is taken.
    let done = post_json(
        &state,
        &format!("/api/traces/{trace_id}/resume"),
        Value::Null,
    )
    .await;
    assert_eq!(done.status, StatusCode::CONFLICT, "{}", done.text);
    assert_eq!(done.code(), "already_completed");
    // The same with a body of the wrong type still names the body.
    let wrong = post_json(&state, &format!("/api/traces/{trace_id}/resume"), json!(7)).await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST, "{}", wrong.text);
    assert_eq!(wrong.code(), "invalid_request");
}

/// Every parameter that carries a trace id states the ids that exist, every operation that
/// takes a body documents 413 and 415, and the texts the server refuses when blank say so.
#[tokio::test]
async fn the_document_states_what_the_server_refuses() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let workspace = tempfile::tempdir().unwrap();
    let state = state_with(store, Vec::new(), workspace.path(), ApiConfig::default());
    let doc = get(&state, "/api/openapi.json").await.json;
    let mut trace_id_params = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            for parameter in operation["parameters"].as_array().into_iter().flatten() {
                let name = parameter["name"].as_str().unwrap();
                if name == "trace_id" || name == "parent_trace_id" {
                    let schema = &parameter["schema"];
                    assert_eq!(schema["maxLength"], 255, "{method} {path} {name}");
                    assert!(schema["pattern"].is_string(), "{method} {path} {name}");
                    trace_id_params += 1;
                }
            }
            if operation.get("requestBody").is_some() {
                for status in ["413", "415"] {
                    assert!(
                        operation["responses"].get(status).is_some(),
                        "{method} {path} does not document {status}"
                    );
                }
            }
        }
    }
    assert_eq!(trace_id_params, 22);
    let start = &doc["components"]["schemas"]["StartRun"]["properties"];
    for field in ["task", "model", "workspace"] {
        assert!(start[field]["pattern"].is_string(), "StartRun.{field}");
    }
}
