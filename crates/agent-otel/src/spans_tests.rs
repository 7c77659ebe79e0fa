//! Tests of the span mapping on an in-memory trace: the tree, contents only when asked, ids
//! that repeat.

use agent_execution::{AssistantContent, InMemoryTraceStore, NewMessage, NewTrace, TraceStore};
use agent_llm::ToolCall;
use opentelemetry::Value as OtelValue;
use serde_json::json;

use super::*;

async fn trace_with_a_tool_call() -> (InMemoryTraceStore, String) {
    let store = InMemoryTraceStore::new();
    let trace = store
        .create_trace(NewTrace::agent("Read it").with_model("gpt-4o"))
        .await
        .unwrap();
    let id = trace.trace_id.clone();
    store
        .add_message(&id, NewMessage::user("Read it"))
        .await
        .unwrap();
    let call = ToolCall::new("call_1", "read_file", r#"{"path":"a.txt"}"#);
    let turn = AssistantContent::new(Some("Reading.".into()), vec![call]);
    store
        .add_message(&id, NewMessage::assistant(turn))
        .await
        .unwrap();
    store
        .add_message(&id, NewMessage::tool("call_1", "read_file", "secret text"))
        .await
        .unwrap();
    (store, id)
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a OtelValue> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

#[tokio::test]
async fn a_trace_is_an_agent_span_with_its_calls_under_it() {
    let (store, id) = trace_with_a_tool_call().await;
    let options = SpanOptions {
        provider: Some("openai".into()),
        ..SpanOptions::default()
    };
    let spans = spans_of(&store, &id, &options).await.unwrap();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "invoke_agent agent",
            "chat gpt-4o",
            "execute_tool read_file"
        ]
    );
    let root = spans[0].span_context.span_id();
    assert_eq!(spans[0].parent_span_id, SpanId::INVALID);
    assert!(spans[1..].iter().all(|s| s.parent_span_id == root));
    assert_eq!(
        attribute(&spans[1], "gen_ai.provider.name"),
        Some(&OtelValue::from("openai"))
    );
    assert_eq!(
        attribute(&spans[2], "gen_ai.tool.call.id"),
        Some(&OtelValue::from("call_1"))
    );
    // Contents stay out unless asked for.
    assert!(
        spans
            .iter()
            .all(|s| attribute(s, "gen_ai.output.messages").is_none()
                && attribute(s, "gen_ai.tool.call.result").is_none())
    );

    // Exported again: the same ids.
    let again = spans_of(&store, &id, &options).await.unwrap();
    let ids = |spans: &[SpanData]| -> Vec<SpanContext> {
        spans.iter().map(|s| s.span_context.clone()).collect()
    };
    assert_eq!(ids(&spans), ids(&again));
}

#[tokio::test]
async fn contents_are_recorded_when_asked() {
    let (store, id) = trace_with_a_tool_call().await;
    let options = SpanOptions {
        capture_content: true,
        provider: None,
    };
    let spans = spans_of(&store, &id, &options).await.unwrap();
    let output = attribute(&spans[1], "gen_ai.output.messages")
        .unwrap()
        .as_str();
    let output: Value = serde_json::from_str(&output).unwrap();
    assert_eq!(output[0]["parts"][0]["content"], "Reading.");
    assert_eq!(output[0]["parts"][1]["name"], "read_file");
    let input = attribute(&spans[1], "gen_ai.input.messages")
        .unwrap()
        .as_str();
    assert!(input.contains("Read it"), "{input}");
    assert_eq!(
        attribute(&spans[2], "gen_ai.tool.call.result"),
        Some(&OtelValue::from("secret text"))
    );
}

#[tokio::test]
async fn an_unknown_trace_is_not_found() {
    let store = InMemoryTraceStore::new();
    let error = spans_of(&store, "nope", &SpanOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::NotFound { .. }), "{error}");
}

#[tokio::test]
async fn a_full_compaction_is_a_summariser_call_and_an_event_with_its_weights() {
    let (store, id) = trace_with_a_tool_call().await;
    let mut summary = NewMessage::user("Summary of the conversation so far:\nRead a.txt.");
    summary.metadata.insert("compaction".into(), json!(true));
    summary.metadata.insert("tokens_before".into(), json!(9000));
    summary.metadata.insert("tokens_after".into(), json!(300));
    store.add_message(&id, summary).await.unwrap();
    let spans = spans_of(&store, &id, &SpanOptions::default())
        .await
        .unwrap();
    let summariser = spans.last().unwrap();
    assert_eq!(summariser.name, "chat gpt-4o");
    assert_eq!(
        attribute(summariser, "agent.compaction"),
        Some(&OtelValue::Bool(true))
    );
    let event = &spans[0].events.events[0];
    assert_eq!(event.name, "compaction");
    let weights: Vec<(String, OtelValue)> = event
        .attributes
        .iter()
        .map(|kv| (kv.key.to_string(), kv.value.clone()))
        .collect();
    assert_eq!(
        weights,
        [
            (
                "agent.compaction.tokens_before".to_owned(),
                OtelValue::I64(9000)
            ),
            (
                "agent.compaction.tokens_after".to_owned(),
                OtelValue::I64(300)
            ),
        ]
    );
}
