//! What a request may choose about how its run is built: `stream` and `sandbox` reach the
//! factory only when they change something, a sandbox looser than the server's is 403
//! `sandbox_not_allowed`, and a factory that cannot apply a choice refuses it (400
//! `run_rejected`) rather than run differently from what was asked.

use std::sync::Arc;

use crate::common::{post_json, state_with};
use agent_api::{ApiConfig, SandboxMode};
use agent_execution::{InMemoryTraceStore, TraceStore};
use axum::http::StatusCode;
use serde_json::json;

#[tokio::test]
async fn choices_are_checked_and_reach_only_a_factory_that_applies_them() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let workspace = tempfile::tempdir().unwrap();
    let state = state_with(
        store,
        Vec::new(),
        workspace.path(),
        ApiConfig {
            sandbox: SandboxMode::WorkspaceWrite,
            ..ApiConfig::default()
        },
    );
    let start = |body: serde_json::Value| post_json(&state, "/api/traces", body);

    let looser = start(json!({"task": "x", "sandbox": "off"})).await;
    assert_eq!(looser.status, StatusCode::FORBIDDEN, "{}", looser.text);
    assert_eq!(looser.code(), "sandbox_not_allowed");

    let unknown = start(json!({"task": "x", "sandbox": "bubblewrap"})).await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST, "{}", unknown.text);

    // The server's own settings are no choice: the test factory builds the run.
    let same = start(json!({"task": "x", "sandbox": "workspace-write", "stream": true})).await;
    assert_eq!(same.status, StatusCode::CREATED, "{}", same.text);

    // The test factory applies no choice, so it refuses them.
    for body in [
        json!({"task": "x", "stream": false}),
        json!({"task": "x", "sandbox": "read-only"}),
    ] {
        let refused = start(body.clone()).await;
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{body}: {}",
            refused.text
        );
        assert_eq!(refused.code(), "run_rejected");
    }
}
