//! A message posted to a running trace, as a watcher of its WebSocket sees it: the queued user
//! message arrives as a `message_added` event, and the text the model streams arrives as
//! `text_delta`s naming the goal they belong to. The model is the mock model server, reached
//! through the OpenAI-compatible client, so the text really streams.

use std::sync::Arc;
use std::time::Duration;

use agent_api::{ApiConfig, AppState, FactoryError, RunnerFactory, Server};
use agent_execution::{InMemoryTraceStore, TraceStatus, TraceStore};
use agent_llm::{OpenAiClient, OpenAiConfig};
use agent_runner::{AgentRunner, RunnerOptions};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use agent_tools::ToolRegistry;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::common::{post_json, wait_for_status};

/// Runners whose model is the mock model server.
struct MockFactory {
    base: String,
    workspace: std::path::PathBuf,
}

impl RunnerFactory for MockFactory {
    fn options(&self) -> RunnerOptions {
        RunnerOptions::new("gpt-4o-mini", &self.workspace)
            .with_approval(agent_runner::Approval::Allow)
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

#[tokio::test]
async fn a_watcher_sees_the_posted_message_and_deltas_that_name_their_goal() {
    let workspace = tempfile::tempdir().unwrap();
    let server = MockModelServer::with_replies([
        // Time for the watcher to connect before the run writes much.
        Reply::from(Turn::tool_call(
            "c1",
            "goal",
            json!({"add": "Look", "focus": "1"}),
        ))
        .with_delay(Duration::from_millis(300)),
        Reply::from(Turn::text("Looking at the code now.")).with_pause(Duration::from_millis(200)),
        // The answer to the message, which also finishes the goal; the final answer follows.
        Reply::from(Turn::text("The docs are fine too.").with_tool_call(
            "c2",
            "goal",
            json!({"done": "looked"}),
        )),
    ])
    .await;
    server.when_empty(|_| Reply::from(Turn::text("Done.")));
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let factory = MockFactory {
        base: server.openai_base(),
        workspace: workspace.path().to_path_buf(),
    };
    let state = AppState::builder(store.clone())
        .runner_factory(Arc::new(factory))
        .config(ApiConfig {
            port: 0,
            ..ApiConfig::default()
        })
        .build()
        .unwrap();
    let listening = Server::bind(state.clone()).await.unwrap();
    let addr = listening.local_addr();
    let serving = tokio::spawn(listening.run(std::future::pending::<()>()));

    let started = post_json(&state, "/api/traces", json!({"task": "Look around"})).await;
    let trace_id = started.json["trace_id"].as_str().unwrap().to_owned();
    let url = format!("ws://{addr}/api/traces/{trace_id}/watch?since_event_id=0");
    let (mut client, _) = tokio_tungstenite::connect_async(url).await.unwrap();

    let mut seen: Vec<Value> = Vec::new();
    let mut posted = false;
    loop {
        let message = tokio::time::timeout(Duration::from_secs(20), client.next())
            .await
            .expect("no message within 20 s")
            .expect("the watch closed")
            .unwrap();
        let Message::Text(text) = message else {
            continue;
        };
        let event: Value = serde_json::from_str(&text).unwrap();
        // While the model streams its answer, a message comes for the run.
        if event["event"] == "text_delta" && !posted {
            posted = true;
            let uri = format!("/api/traces/{trace_id}/messages");
            let answer = post_json(&state, &uri, json!({"content": "Also check the docs"})).await;
            assert_eq!(answer.json["queued"], true, "{}", answer.text);
        }
        let done = event["event"] == "trace_completed";
        seen.push(event);
        if done {
            break;
        }
    }
    wait_for_status(&store, &trace_id, TraceStatus::Completed).await;
    assert!(posted, "no text_delta: {seen:#?}");

    // The queued message is an event, after the answer that was streaming when it came.
    let added = |role: &str, text: &str| {
        seen.iter().position(|e| {
            e["event"] == "message_added"
                && e["message"]["role"] == role
                && e["message"].to_string().contains(text)
        })
    };
    let streamed = added("assistant", "Looking at the code now.").expect("the streamed answer");
    let queued = added("user", "Also check the docs").expect("the queued message is an event");
    let answered = added("assistant", "The docs are fine too.").expect("its answer");
    assert!(streamed < queued && queued < answered, "{seen:#?}");

    // Every delta names the goal it was written under: goal 1 while it was current (the final
    // answer, after it was done, names none).
    let tree = store.get_goal_tree(&trace_id).await.unwrap().unwrap();
    let look = tree.find_by_display("1").unwrap().id.clone();
    let deltas: Vec<&Value> = seen
        .iter()
        .filter(|e| e["event"] == "text_delta" && !e["goal_id"].is_null())
        .collect();
    assert!(deltas.len() >= 2, "{deltas:#?}");
    for delta in &deltas {
        assert_eq!(delta["goal_id"], look.as_str(), "{delta}");
        assert_eq!(delta["trace_id"], trace_id.as_str(), "{delta}");
    }
    assert_eq!(
        seen[queued]["message"]["goal_id"],
        look.as_str(),
        "{:#}",
        seen[queued]
    );
    serving.abort();
}
