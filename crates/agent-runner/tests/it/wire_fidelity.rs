//! What goes back to a provider is what it sent: tool call ids echoed exactly (Kimi K2's
//! `functions.read_file:0` included), only empty or repeated ones replaced, and Anthropic's
//! request builder mapping ids it would refuse, call and result alike.

use std::sync::Arc;

use agent_execution::{AssistantContent, InMemoryTraceStore, NewMessage, NewTrace, ToolCall};
use agent_execution::{TraceOutcome, TraceStatus, TraceStore};
use agent_llm::{AnthropicClient, AnthropicConfig, LlmClient, OpenAiClient, OpenAiConfig};
use agent_runner::{AgentRunner, Approval, RunnerOptions};
use agent_test_support::mock_model::{MockModelServer, Turn};
use agent_tools::ToolRegistry;
use serde_json::json;

fn openai(server: &MockModelServer) -> Arc<dyn LlmClient> {
    let config = OpenAiConfig::new(server.openai_base(), Some("sk-test".into()));
    Arc::new(OpenAiClient::new(config).unwrap())
}

fn anthropic(server: &MockModelServer) -> Arc<dyn LlmClient> {
    let config = AnthropicConfig::new(server.anthropic_base(), Some("sk-ant-test".into()));
    Arc::new(AnthropicClient::new(config).unwrap())
}

fn runner(store: Arc<InMemoryTraceStore>, llm: Arc<dyn LlmClient>) -> AgentRunner {
    let workspace = std::env::temp_dir();
    let options = RunnerOptions::new("mock-model", workspace).with_approval(Approval::Allow);
    AgentRunner::new(store, llm, ToolRegistry::with_builtins(), options)
}

#[tokio::test]
async fn kimi_style_call_ids_go_back_exactly_as_sent() {
    let server =
        MockModelServer::with_replies([
            Turn::tool_call("functions.read_progress:0", "read_progress", json!({}))
                .with_tool_call("functions.read_progress:1", "read_progress", json!({})),
            // A server that repeats an id, and one that sends none.
            Turn::tool_call("functions.read_progress:0", "read_progress", json!({}))
                .with_tool_call("", "read_progress", json!({})),
            Turn::text("Done."),
        ])
        .await;
    let store = Arc::new(InMemoryTraceStore::new());
    let outcome = runner(store.clone(), openai(&server))
        .run("Check")
        .await
        .unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let second = &requests[1].body["messages"];
    let calls = second
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(calls["tool_calls"][0]["id"], "functions.read_progress:0");
    assert_eq!(calls["tool_calls"][1]["id"], "functions.read_progress:1");
    let results: Vec<&str> = second
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        results,
        ["functions.read_progress:0", "functions.read_progress:1"]
    );

    // The repeated id of the second turn was replaced; the empty one got the client's
    // positional id, which no other call of the trace has.
    let messages = store.get_trace_messages(&outcome.trace_id).await.unwrap();
    let ids: Vec<String> = messages
        .iter()
        .flat_map(|m| m.content.tool_calls().iter().map(|c| c.id.clone()))
        .collect();
    assert_eq!(
        ids,
        [
            "functions.read_progress:0",
            "functions.read_progress:1",
            "call_t2_1",
            "call_1"
        ]
    );
}

#[tokio::test]
async fn anthropic_gets_ids_it_accepts_and_calls_stay_paired_with_their_results() {
    // A trace begun on a server with Kimi-style ids goes on with Anthropic, which refuses ids
    // outside `^[a-zA-Z0-9_-]+$`.
    let store = Arc::new(InMemoryTraceStore::new());
    let trace = store.create_trace(NewTrace::agent("Check")).await.unwrap();
    let id = trace.trace_id.clone();
    store
        .add_message(&id, NewMessage::user("Check"))
        .await
        .unwrap();
    let calls = vec![
        ToolCall::new("functions.read:0", "read_progress", "{}"),
        ToolCall::new("toolu_01Aa", "read_progress", "{}"),
    ];
    let turn = AssistantContent::new(None, calls);
    store
        .add_message(&id, NewMessage::assistant(turn))
        .await
        .unwrap();
    for call in ["functions.read:0", "toolu_01Aa"] {
        let result = NewMessage::tool(call, "read_progress", "No plan yet.");
        store.add_message(&id, result).await.unwrap();
    }
    let stopped = TraceOutcome::failed("max_iterations: reached the limit of 1 model calls");
    store.finish_trace(&id, stopped).await.unwrap();

    let server = MockModelServer::with_replies([Turn::text("Done.")]).await;
    let outcome = runner(store.clone(), anthropic(&server))
        .resume(&id)
        .await
        .unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let body = &server.requests()[0].body;
    let messages = body["messages"].as_array().unwrap();
    let uses: Vec<&str> = messages[1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    let results: Vec<&str> = messages[2]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(uses, results, "each result names its call");
    assert_eq!(uses[1], "toolu_01Aa", "an id that fits is kept");
    assert!(uses[0].starts_with("functions_read_0_"), "{uses:?}");
    assert_ne!(uses[0], uses[1], "mapped ids stay distinct");
    // The stored trace keeps the ids as they were.
    let stored = store.get_trace_messages(&id).await.unwrap();
    assert_eq!(stored[1].content.tool_calls()[0].id, "functions.read:0");
}
