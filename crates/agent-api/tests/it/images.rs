//! Pictures over HTTP: a run's task and a message that starts the next turn carry `images`
//! (base64), which reach the model as image parts (the mock model server records the requests,
//! through the OpenAI-compatible client); bytes that are not a picture are a 400 naming the
//! entry, and a model without vision is a 400 `no_vision` before anything is stored.

use std::sync::Arc;

use agent_api::{AppState, FactoryError, RunnerFactory};
use agent_execution::{InMemoryTraceStore, TraceStatus, TraceStore};
use agent_llm::{OpenAiClient, OpenAiConfig};
use agent_runner::{AgentRunner, RunnerOptions};
use agent_test_support::TINY_PNG;
use agent_test_support::mock_model::{MockModelServer, Turn};
use agent_tools::ToolRegistry;
use serde_json::json;

use crate::common::{get, post_json, wait_for_status};

/// Runners of `model` on the mock model server.
struct MockFactory {
    base: String,
    model: &'static str,
    workspace: std::path::PathBuf,
}

impl RunnerFactory for MockFactory {
    fn options(&self) -> RunnerOptions {
        RunnerOptions::new(self.model, &self.workspace).with_approval(agent_runner::Approval::Allow)
    }

    fn build(
        &self,
        store: Arc<dyn TraceStore>,
        options: RunnerOptions,
    ) -> Result<AgentRunner, FactoryError> {
        let config = OpenAiConfig::new(self.base.clone(), Some("sk-test".into()));
        let llm = OpenAiClient::new(config).map_err(|e| FactoryError::Rejected(e.to_string()))?;
        Ok(AgentRunner::new(
            store,
            Arc::new(llm),
            ToolRegistry::with_builtins(),
            options,
        ))
    }
}

fn png_base64() -> String {
    // The standard base64 of TINY_PNG, written out so the test does not encode it itself.
    let encoded = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGP4z8AAQQxwFgBB0gX7h/C5SAAAAABJRU5ErkJggg==";
    assert_eq!(encoded.len(), TINY_PNG.len().div_ceil(3) * 4);
    encoded.to_owned()
}

fn state_for(
    server: &MockModelServer,
    model: &'static str,
    workspace: &std::path::Path,
) -> (AppState, Arc<dyn TraceStore>) {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let factory = MockFactory {
        base: server.openai_base(),
        model,
        workspace: workspace.to_path_buf(),
    };
    let state = AppState::builder(store.clone())
        .runner_factory(Arc::new(factory))
        .build()
        .unwrap();
    (state, store)
}

#[tokio::test]
async fn a_task_and_a_next_message_carry_pictures_to_the_model() {
    let workspace = tempfile::tempdir().unwrap();
    let server =
        MockModelServer::with_replies([Turn::text("A red square."), Turn::text("Still red.")])
            .await;
    let (state, store) = state_for(&server, "gpt-4o-mini", workspace.path());
    let picture = json!({"data": png_base64(), "name": "shot.png"});

    let bad = json!({"task": "Look", "images": [{"data": "aGVsbG8="}]});
    let refused = post_json(&state, "/api/traces", bad).await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    assert_eq!(refused.code(), "invalid_picture", "{}", refused.text);
    assert!(
        refused.text.contains("images[0]: not a PNG"),
        "{}",
        refused.text
    );
    assert!(server.requests().is_empty());

    let started = post_json(
        &state,
        "/api/traces",
        json!({"task": "What is this?", "images": [picture]}),
    )
    .await;
    assert_eq!(started.status, 201, "{}", started.text);
    let trace_id = started.json["trace_id"].as_str().unwrap().to_owned();
    wait_for_status(&store, &trace_id, TraceStatus::Completed).await;
    let url = format!("data:image/png;base64,{}", png_base64());
    assert!(server.requests()[0].body.to_string().contains(&url));

    // The viewer's thumbnail: the picture by its hash, as the file it was sent as.
    let id = agent_execution::message::ChatImage::from_bytes(TINY_PNG, None)
        .unwrap()
        .id;
    let picture = get(&state, &format!("/api/traces/{trace_id}/pictures/{id}")).await;
    assert_eq!(picture.status, 200, "{}", picture.text);
    assert_eq!(picture.headers["content-type"], "image/png");
    assert_eq!(picture.headers["x-content-type-options"], "nosniff");
    assert_eq!(&picture.bytes[..], TINY_PNG);
    let other = "0".repeat(64);
    let missing = get(&state, &format!("/api/traces/{trace_id}/pictures/{other}")).await;
    assert_eq!(
        (missing.status.as_u16(), missing.code()),
        (404, "not_found")
    );
    let bad = get(
        &state,
        &format!("/api/traces/{trace_id}/pictures/..%2Fmeta.json"),
    )
    .await;
    assert_eq!(
        (bad.status.as_u16(), bad.code()),
        (400, "invalid_picture_id"),
        "{}",
        bad.text
    );

    let next = json!({"content": "And this?", "images": [{"data": png_base64()}]});
    let sent = post_json(&state, &format!("/api/traces/{trace_id}/messages"), next).await;
    assert_eq!(sent.status, 202, "{}", sent.text);
    wait_for_status(&store, &trace_id, TraceStatus::Completed).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let second = requests[1].body.to_string();
    assert_eq!(
        second.matches("\"type\":\"image_url\"").count(),
        2,
        "both pictures: {second}"
    );
}

#[tokio::test]
async fn a_model_without_vision_is_a_client_error() {
    let workspace = tempfile::tempdir().unwrap();
    let server = MockModelServer::with_replies([Turn::text("Seen.")]).await;
    let (state, store) = state_for(&server, "deepseek-chat", workspace.path());
    let body = json!({"task": "What is this?", "images": [{"data": png_base64()}]});
    let refused = post_json(&state, "/api/traces", body).await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    assert_eq!(refused.code(), "no_vision", "{}", refused.text);
    assert!(
        refused.text.contains("deepseek-chat does not take images"),
        "{}",
        refused.text
    );
    assert!(server.requests().is_empty());
    assert!(
        store
            .list_traces(&Default::default())
            .await
            .unwrap()
            .is_empty()
    );
}
