//! The scripted client: turns in order, recorded requests, fallbacks, scripted errors, files.

use std::sync::Arc;
use std::time::Duration;

use agent_llm::{
    ChatEvent, ChatMessage, ChatRequest, LlmClient, LlmError, ScriptedClient, ScriptedErrorKind,
    ScriptedTurn, Usage,
};
use futures::StreamExt;
use serde_json::json;

fn ask(text: &str) -> ChatRequest {
    ChatRequest::new(
        "scripted",
        vec![ChatMessage::system("sys"), ChatMessage::user(text)],
    )
}

#[tokio::test]
async fn turns_are_answered_in_order_and_requests_recorded() {
    let scripted = ScriptedClient::new(vec![
        ScriptedTurn::tool_call("goal", json!({"add": "A, B"}))
            .with_tool_call("read_file", json!({"path": "x"}))
            .with_usage(Usage::new(100, 20)),
        ScriptedTurn::text("done"),
    ]);
    let client: Arc<dyn LlmClient> = Arc::new(scripted.clone());
    let first = client.complete(ask("one")).await.unwrap();
    assert_eq!(first.tool_calls.len(), 2);
    assert_eq!(first.tool_calls[1].id, "call_1_2");
    assert_eq!(first.tool_calls[1].arguments, r#"{"path":"x"}"#);
    assert_eq!(first.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(first.usage, Some(Usage::new(100, 20)));
    assert_eq!(scripted.served(), 1);
    assert_eq!(scripted.remaining(), 1);

    let second = client.complete(ask("two")).await.unwrap();
    assert_eq!(second.text.as_deref(), Some("done"));
    let usage = second.usage.unwrap();
    assert!(usage.prompt_tokens > 0 && usage.completion_tokens > 0);

    let error = client.complete(ask("three")).await.unwrap_err();
    assert_eq!(error, LlmError::ScriptExhausted { served: 2 });
    let requests = scripted.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].messages[1], ChatMessage::user("two"));
    assert_eq!(scripted.last_request().unwrap().messages[1].text(), "three");
}

#[tokio::test]
async fn the_stream_is_split_like_a_real_one() {
    let client = ScriptedClient::new(vec![
        ScriptedTurn::text("a b c").with_tool_call("f", json!({"k": "v"})),
    ]);
    let events: Vec<ChatEvent> = client
        .stream(ask("x"))
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    let texts: Vec<&ChatEvent> = events
        .iter()
        .filter(|e| matches!(e, ChatEvent::Text(_)))
        .collect();
    assert_eq!(texts.len(), 3);
    let fragments = events
        .iter()
        .filter(|e| matches!(e, ChatEvent::ToolCallArgs { .. }))
        .count();
    assert_eq!(fragments, 2);
    assert!(matches!(events.last(), Some(ChatEvent::Finish { reason }) if reason == "tool_calls"));
}

#[tokio::test]
async fn fallbacks_errors_and_raw_arguments() {
    let client = ScriptedClient::from_json(json!([
        {"tool_calls": [{"id": "mine", "name": "edit_file", "arguments": "{not json"}]},
        {"error": {"kind": "rate_limited", "message": "slow", "retry_after_ms": 20}},
    ]))
    .unwrap()
    .with_fallback("all done")
    .with_context_window(1_000);
    let first = client.complete(ask("x")).await.unwrap();
    assert_eq!(first.tool_calls[0].id, "mine");
    assert_eq!(first.tool_calls[0].arguments, "{not json");
    assert!(first.tool_calls[0].parse_arguments().is_err());
    assert_eq!(
        client.complete(ask("x")).await.unwrap_err(),
        LlmError::RateLimited {
            retry_after: Some(Duration::from_millis(20)),
            message: "slow".into()
        }
    );
    for _ in 0..2 {
        assert_eq!(
            client.complete(ask("x")).await.unwrap().text.as_deref(),
            Some("all done")
        );
    }
    assert_eq!(client.model_info("gpt-4o").context_window, 1_000);
}

#[tokio::test]
async fn scripts_load_from_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.json");
    std::fs::write(
        &path,
        r#"{"turns": [{"text": "hello"}], "fallback": "bye", "context_window": 4096}"#,
    )
    .unwrap();
    let client = ScriptedClient::from_file(&path).unwrap();
    assert_eq!(
        client.complete(ask("x")).await.unwrap().text.as_deref(),
        Some("hello")
    );
    assert_eq!(
        client.complete(ask("x")).await.unwrap().text.as_deref(),
        Some("bye")
    );
    assert_eq!(client.model_info("any").context_window, 4096);
    assert!(matches!(
        ScriptedClient::from_file(dir.path().join("missing.json")),
        Err(LlmError::Config { .. })
    ));
    assert!(matches!(
        ScriptedClient::from_json(json!({"turns": 3})),
        Err(LlmError::Config { .. })
    ));
}

#[tokio::test]
async fn a_delayed_turn_can_be_cancelled_by_dropping_the_future() {
    let client = ScriptedClient::new(vec![
        ScriptedTurn::text("slow").with_delay(Duration::from_secs(30)),
        ScriptedTurn::error(ScriptedErrorKind::ContextWindowExceeded, "too long"),
    ]);
    let result = tokio::time::timeout(Duration::from_millis(50), client.complete(ask("x"))).await;
    assert!(result.is_err(), "the delayed turn is still pending");
    assert!(matches!(
        client.complete(ask("y")).await,
        Err(LlmError::ContextWindowExceeded { .. })
    ));
}

#[test]
fn messages_round_trip_through_json() {
    let messages = vec![
        ChatMessage::system("s"),
        ChatMessage::user("u"),
        ChatMessage::assistant(
            Some("t".into()),
            vec![agent_llm::ToolCall::new("c", "n", "{}")],
        ),
        ChatMessage::assistant(None, vec![]),
        ChatMessage::tool_result("c", "r"),
    ];
    let json = serde_json::to_value(&messages).unwrap();
    assert_eq!(json[0], json!({"role": "system", "content": "s"}));
    assert_eq!(
        json[2],
        json!({"role": "assistant", "text": "t", "tool_calls": [{"id": "c", "name": "n", "arguments": "{}"}]})
    );
    assert_eq!(
        json[4],
        json!({"role": "tool", "tool_call_id": "c", "content": "r"})
    );
    let back: Vec<ChatMessage> = serde_json::from_value(json).unwrap();
    assert_eq!(back, messages);
}
