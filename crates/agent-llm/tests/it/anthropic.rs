//! The Anthropic client against a mock server speaking the Messages wire format: a tool-use
//! round trip streamed and not, errors, retries and the request shape.

use std::time::Duration;

use crate::fast_retry;
use agent_llm::{
    AnthropicClient, AnthropicConfig, ChatMessage, ChatRequest, LlmClient, LlmError, TimeoutKind,
    Timeouts, ToolCall, ToolSpec, Usage,
};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn, Usage as MockUsage, sse_event};
use serde_json::{Value, json};

fn client(
    server: &MockModelServer,
    configure: impl FnOnce(AnthropicConfig) -> AnthropicConfig,
) -> AnthropicClient {
    let config = AnthropicConfig::new(server.anthropic_base(), Some("sk-ant-test".into()))
        .with_retry(fast_retry(3))
        .with_header("anthropic-beta", "tools-2024-05-16");
    AnthropicClient::new(configure(config)).unwrap()
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec::new(
        "get_weather",
        "Current weather of a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )]
}

fn message_start(id: &str, input_tokens: u64) -> Value {
    json!({"type": "message_start", "message": {
        "id": id, "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5-20250929",
        "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1, "cache_read_input_tokens": 10},
    }})
}

fn tool_use_stream() -> Reply {
    Reply::anthropic_stream(&[
        message_start("msg_1", 400),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me "}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "check."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"ci"}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "ty\": \"Par"}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "is\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 35}}),
        json!({"type": "message_stop"}),
    ])
}

fn final_answer_stream() -> Reply {
    Reply::anthropic_stream(&[
        message_start("msg_2", 500),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Sunny, 21°C."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 6}}),
        json!({"type": "message_stop"}),
    ])
}

#[tokio::test]
async fn a_streamed_tool_use_round_trip() {
    let server =
        MockModelServer::with_replies(vec![tool_use_stream(), final_answer_stream()]).await;
    let client = client(&server, |c| c);
    let mut messages = vec![
        ChatMessage::system("You answer weather questions."),
        ChatMessage::user("Weather in Paris?"),
    ];
    let first = client
        .complete(ChatRequest::new("claude-sonnet-4-5", messages.clone()).with_tools(tools()))
        .await
        .unwrap();
    assert_eq!(first.text.as_deref(), Some("Let me check."));
    assert_eq!(
        first.tool_calls,
        vec![ToolCall::new(
            "toolu_01",
            "get_weather",
            r#"{"city": "Paris"}"#
        )]
    );
    assert_eq!(first.finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        first.usage,
        Some(Usage {
            prompt_tokens: 410,
            completion_tokens: 35,
            cached_tokens: 10,
            estimated: false,
        })
    );
    assert_eq!(first.response_id.as_deref(), Some("msg_1"));

    messages.push(first.to_message());
    messages.push(ChatMessage::tool_result("toolu_01", "sunny, 21"));
    let second = client
        .complete(ChatRequest::new("claude-sonnet-4-5", messages).with_tools(tools()))
        .await
        .unwrap();
    assert_eq!(second.text.as_deref(), Some("Sunny, 21°C."));
    assert!(second.tool_calls.is_empty());
    assert_eq!(second.finish_reason.as_deref(), Some("end_turn"));

    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    for request in &sent {
        assert_eq!(request.path, "/v1/messages");
        assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));
        assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(request.header("anthropic-beta"), Some("tools-2024-05-16"));
        assert_eq!(request.header("authorization"), None);
        let body = &request.body;
        assert_eq!(body["model"], "claude-sonnet-4-5");
        assert_eq!(body["stream"], true);
        // Prompt caching is on by default: breakpoints on the system prompt, the last tool and
        // the newest message.
        let cached = json!({"type": "ephemeral"});
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": "You answer weather questions.", "cache_control": cached}])
        );
        assert_eq!(body["max_tokens"], 8192);
        assert_eq!(
            body["tools"],
            json!([{"name": "get_weather", "description": "Current weather of a city.",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                "cache_control": cached}])
        );
    }
    let cached = json!({"type": "ephemeral"});
    assert_eq!(
        sent[0].body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "Weather in Paris?", "cache_control": cached}]}])
    );
    assert_eq!(
        sent[1].body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}},
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "sunny, 21", "cache_control": cached}]},
        ])
    );
}

#[tokio::test]
async fn a_non_streamed_tool_use() {
    let server = MockModelServer::with_replies(vec![Reply::json(json!({
        "id": "msg_9", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {"city": "Oslo"}},
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 20, "output_tokens": 9, "cache_creation_input_tokens": 5},
    }))])
    .await;
    let mut request =
        ChatRequest::new("claude-haiku-4-5", vec![ChatMessage::user("Oslo?")]).with_tools(tools());
    request.max_tokens = Some(256);
    request.stop = vec!["\n\nHuman:".into()];
    let response = client(&server, |c| c.with_streaming(false))
        .complete(request)
        .await
        .unwrap();
    assert_eq!(response.text.as_deref(), Some("Checking."));
    assert_eq!(
        response.tool_calls,
        vec![ToolCall::new(
            "toolu_9",
            "get_weather",
            r#"{"city":"Oslo"}"#
        )]
    );
    assert_eq!(response.usage, Some(Usage::new(25, 9)));
    let body = &server.requests()[0].body;
    assert!(body.get("stream").is_none());
    assert!(body.get("system").is_none());
    assert_eq!(body["max_tokens"], 256);
    assert_eq!(body["stop_sequences"], json!(["\n\nHuman:"]));
}

#[tokio::test]
async fn prompt_is_too_long_maps_to_the_context_window_variant() {
    let server = MockModelServer::with_replies(vec![Reply::error(
        400,
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 208310 tokens > 200000 maximum"}}),
    )])
    .await;
    let error = client(&server, |c| c)
        .complete(ChatRequest::new(
            "claude-sonnet-4-5",
            vec![ChatMessage::user("x")],
        ))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        LlmError::ContextWindowExceeded {
            message: "prompt is too long: 208310 tokens > 200000 maximum".into()
        }
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn overloaded_is_retried_and_auth_errors_are_final() {
    let server = MockModelServer::with_replies(vec![
        Reply::error(529, json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})),
        final_answer_stream(),
        Reply::error(401, json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})),
    ])
    .await;
    let client = client(&server, |c| c);
    let request = ChatRequest::new("claude-sonnet-4-5", vec![ChatMessage::user("x")]);
    assert_eq!(
        client
            .complete(request.clone())
            .await
            .unwrap()
            .text
            .as_deref(),
        Some("Sunny, 21°C.")
    );
    assert_eq!(
        client.complete(request).await.unwrap_err(),
        LlmError::Authentication {
            status: 401,
            message: "invalid x-api-key".into()
        }
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn an_error_event_mid_stream_is_reported() {
    let server = MockModelServer::with_replies(vec![Reply::anthropic_stream(&[
        message_start("msg_3", 10),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ])])
    .await;
    let error = client(&server, |c| c)
        .complete(ChatRequest::new(
            "claude-sonnet-4-5",
            vec![ChatMessage::user("x")],
        ))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        LlmError::Server {
            status: 529,
            message: "Overloaded".into()
        }
    );
}

#[tokio::test]
async fn a_silent_stream_hits_the_idle_timeout() {
    let server = MockModelServer::with_replies(vec![
        Reply::sse([sse_event(&message_start("msg_4", 10))]).then_hang(),
    ])
    .await;
    let timeouts = Timeouts {
        idle: Duration::from_millis(200),
        ..Timeouts::default()
    };
    let error = client(&server, |c| c.with_timeouts(timeouts))
        .complete(ChatRequest::new(
            "claude-sonnet-4-5",
            vec![ChatMessage::user("x")],
        ))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        LlmError::Timeout {
            kind: TimeoutKind::Idle,
            after: Duration::from_millis(200)
        }
    );
}

#[test]
fn the_default_base_has_no_version_path() {
    let client = AnthropicClient::new(AnthropicConfig::default()).unwrap();
    assert_eq!(client.config().base_url, "https://api.anthropic.com");
    assert_eq!(client.model_info("claude-opus-4-1").context_window, 200_000);
}

#[tokio::test]
async fn prompt_cache_breakpoints_and_cache_usage() {
    let answer = |id: &str, read: u64, written: u64| {
        Reply::json(json!({
            "id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 30, "output_tokens": 2,
                "cache_read_input_tokens": read, "cache_creation_input_tokens": written},
        }))
    };
    let server =
        MockModelServer::with_replies(vec![answer("msg_a", 0, 1500), answer("msg_b", 1500, 40)])
            .await;
    let client = client(&server, |c| c.with_streaming(false));
    // What the runner sends: its static system prompt, then the plan as a second system message.
    let ask = |conversation: Vec<ChatMessage>| {
        let mut messages = vec![
            ChatMessage::system("You are an agent. Long static instructions."),
            ChatMessage::system("## Current Plan\n**Mission**: Weather"),
        ];
        messages.extend(conversation);
        ChatRequest::new("claude-sonnet-4-5", messages).with_tools(tools())
    };
    let first = client
        .complete(ask(vec![ChatMessage::user("Weather in Paris?")]))
        .await
        .unwrap();
    let second = client
        .complete(ask(vec![
            ChatMessage::user("Weather in Paris?"),
            ChatMessage::assistant_text("ok"),
            ChatMessage::user("And in Oslo?"),
        ]))
        .await
        .unwrap();
    // Cache writes and reads count as prompt tokens; reads are `cached_tokens`.
    assert_eq!(
        first.usage,
        Some(Usage {
            prompt_tokens: 1530,
            completion_tokens: 2,
            cached_tokens: 0,
            estimated: false,
        })
    );
    assert_eq!(second.usage.unwrap().cached_tokens, 1500);

    let cached = json!({"type": "ephemeral"});
    let sent = server.requests();
    for request in &sent {
        let body = &request.body;
        assert_eq!(
            body["system"],
            json!([
                {"type": "text", "text": "You are an agent. Long static instructions.", "cache_control": cached},
                {"type": "text", "text": "## Current Plan\n**Mission**: Weather"},
            ]),
            "the plan is a separate block without a breakpoint"
        );
        assert_eq!(body["tools"][0]["cache_control"], cached);
        let messages = body["messages"].as_array().unwrap();
        let last = messages.last().unwrap()["content"].as_array().unwrap();
        assert_eq!(last.last().unwrap()["cache_control"], cached);
        assert_eq!(body.to_string().matches("cache_control").count(), 3);
    }
    // The second request starts with the first one's messages, without the old breakpoint.
    assert_eq!(
        sent[1].body["messages"][0],
        json!({"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]})
    );
}

#[tokio::test]
async fn a_scripted_turn_reads_the_same_streamed_and_not() {
    let turn = || {
        Turn::text("Checking both.")
            .with_tool_call("toolu_1", "get_weather", json!({"city": "Paris"}))
            .with_tool_call("toolu_2", "get_weather", json!({"city": "Oslo"}))
            .with_usage(
                MockUsage::new(30, 9)
                    .with_cache_read(1500)
                    .with_cache_write(40),
            )
    };
    let server = MockModelServer::with_replies([turn(), turn()]).await;
    let request = ChatRequest::new("claude-sonnet-4-5", vec![ChatMessage::user("Weather?")])
        .with_tools(tools());
    let streamed = client(&server, |c| c)
        .complete(request.clone())
        .await
        .unwrap();
    let whole = client(&server, |c| c.with_streaming(false))
        .complete(request)
        .await
        .unwrap();
    for response in [&streamed, &whole] {
        assert_eq!(response.text.as_deref(), Some("Checking both."));
        assert_eq!(
            response.tool_calls,
            vec![
                ToolCall::new("toolu_1", "get_weather", r#"{"city":"Paris"}"#),
                ToolCall::new("toolu_2", "get_weather", r#"{"city":"Oslo"}"#),
            ]
        );
        assert_eq!(
            response.usage,
            Some(Usage {
                prompt_tokens: 1570,
                completion_tokens: 9,
                cached_tokens: 1500,
                estimated: false,
            })
        );
        assert_eq!(response.finish_reason.as_deref(), Some("tool_use"));
    }
}
