//! The OpenAI-compatible client against a mock server speaking the chat-completions wire
//! format, streamed and not: answers, tool calls, usage, errors, retries and deadlines.

use std::time::{Duration, Instant};

use crate::fast_retry;
use agent_llm::{
    ChatEvent, ChatMessage, ChatRequest, LlmClient, LlmError, OpenAiClient, OpenAiConfig,
    RetryPolicy, TimeoutKind, Timeouts, ToolCall, ToolSpec, Usage,
};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn, Usage as MockUsage, sse_data};
use futures::StreamExt;
use serde_json::{Value, json};

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-42",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
}

fn usage_chunk(prompt: u64, completion: u64, cached: u64) -> Value {
    json!({
        "id": "chatcmpl-42",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o-2024-08-06",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    })
}

fn tool_start(index: usize, id: &str, name: &str) -> Value {
    chunk(
        json!({"tool_calls": [{"index": index, "id": id, "type": "function",
            "function": {"name": name, "arguments": ""}}]}),
        None,
    )
}

fn tool_args(index: usize, fragment: &str) -> Value {
    chunk(
        json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}),
        None,
    )
}

fn client(
    server: &MockModelServer,
    configure: impl FnOnce(OpenAiConfig) -> OpenAiConfig,
) -> OpenAiClient {
    let config = OpenAiConfig::new(server.openai_base(), Some("sk-test".into()))
        .with_retry(fast_retry(3))
        .with_header("X-Trace", "t-1");
    OpenAiClient::new(configure(config)).unwrap()
}

fn request() -> ChatRequest {
    let mut request = ChatRequest::new(
        "gpt-4o",
        vec![
            ChatMessage::system("You are terse."),
            ChatMessage::user("Read a.rs"),
            ChatMessage::assistant(
                Some("Reading.".into()),
                vec![ToolCall::new("c0", "read_file", r#"{"path":"a.rs"}"#)],
            ),
            ChatMessage::tool_result("c0", "fn main() {}"),
        ],
    )
    .with_tools(vec![ToolSpec::new(
        "read_file",
        "Reads a file.",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    )]);
    request.temperature = Some(0.5);
    request
}

#[tokio::test]
async fn a_plain_streamed_answer_with_usage_in_the_last_chunk() {
    let server = MockModelServer::with_replies(vec![Reply::openai_stream(&[
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(json!({"content": "It is "}), None),
        chunk(json!({"content": "empty."}), None),
        chunk(json!({}), Some("stop")),
        usage_chunk(120, 7, 100),
    ])])
    .await;
    let response = client(&server, |c| c).complete(request()).await.unwrap();
    assert_eq!(response.text.as_deref(), Some("It is empty."));
    assert!(response.tool_calls.is_empty());
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        response.usage,
        Some(Usage {
            prompt_tokens: 120,
            completion_tokens: 7,
            cached_tokens: 100,
            estimated: false,
        })
    );
    assert_eq!(response.response_id.as_deref(), Some("chatcmpl-42"));
    assert_eq!(response.model.as_deref(), Some("gpt-4o-2024-08-06"));

    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    let sent = &sent[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(sent.header("x-trace"), Some("t-1"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    let body = &sent.body;
    assert_eq!(body["model"], "gpt-4o");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["temperature"], 0.5);
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
    assert_eq!(body["messages"][2]["content"], "Reading.");
    assert_eq!(
        body["messages"][2]["tool_calls"],
        json!([{"id": "c0", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.rs\"}"}}])
    );
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "tool_call_id": "c0", "content": "fn main() {}"})
    );
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {
            "name": "read_file",
            "description": "Reads a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        }}])
    );
}

#[tokio::test]
async fn the_stream_yields_events_as_they_come() {
    let server = MockModelServer::with_replies(vec![Reply::openai_stream(&[
        chunk(json!({"content": "Hi"}), None),
        chunk(json!({}), Some("stop")),
    ])])
    .await;
    let events: Vec<ChatEvent> = client(&server, |c| c)
        .stream(request())
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    assert_eq!(
        events,
        vec![
            ChatEvent::Started {
                response_id: Some("chatcmpl-42".into()),
                model: Some("gpt-4o-2024-08-06".into())
            },
            ChatEvent::Text("Hi".into()),
            ChatEvent::Finish {
                reason: "stop".into()
            },
        ]
    );
}

#[tokio::test]
async fn a_non_streamed_answer() {
    let server = MockModelServer::with_replies(vec![Reply::json(json!({
        "id": "chatcmpl-7",
        "object": "chat.completion",
        "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant",
            "content": null,
            "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "read_file", "arguments": "{\"path\":\"b.rs\"}"}}],
        }}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }))])
    .await;
    let response = client(&server, |c| c.with_streaming(false))
        .complete(request())
        .await
        .unwrap();
    assert_eq!(response.text, None);
    assert_eq!(
        response.tool_calls,
        vec![ToolCall::new("call_1", "read_file", r#"{"path":"b.rs"}"#)]
    );
    assert_eq!(response.usage, Some(Usage::new(50, 10)));
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    let body = &server.requests()[0].body;
    assert_eq!(body["stream"], false);
    assert!(body.get("stream_options").is_none());
}

#[tokio::test]
async fn the_static_prompt_and_the_plan_go_as_one_system_message_and_cache_reads_are_counted() {
    let answer = |cached: u64| {
        Reply::json(json!({
            "id": "chatcmpl-8", "object": "chat.completion", "model": "gpt-4o",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "ok"}}],
            "usage": {"prompt_tokens": 2000, "completion_tokens": 3, "total_tokens": 2003,
                "prompt_tokens_details": {"cached_tokens": cached}},
        }))
    };
    let server = MockModelServer::with_replies(vec![answer(0), answer(1920)]).await;
    let client = client(&server, |c| c.with_streaming(false));
    let ask = |plan: &str| {
        ChatRequest::new(
            "gpt-4o",
            vec![
                ChatMessage::system("You are an agent."),
                ChatMessage::system(plan),
                ChatMessage::user("Do it."),
            ],
        )
    };
    let first = client
        .complete(ask("## Current Plan\n[ ] 1. A"))
        .await
        .unwrap();
    let second = client
        .complete(ask("## Current Plan\n[→] 1. A"))
        .await
        .unwrap();
    assert_eq!(first.usage.unwrap().cached_tokens, 0);
    assert_eq!(second.usage.unwrap().cached_tokens, 1920);
    let sent = server.requests();
    let system = |i: usize| {
        sent[i].body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(system(0), "You are an agent.\n\n## Current Plan\n[ ] 1. A");
    assert_eq!(sent[0].body["messages"][1]["role"], "user");
    // The plan changed; the static part is still a byte-identical prefix.
    assert!(system(1).starts_with("You are an agent.\n\n## Current Plan\n["));
    assert_ne!(system(0), system(1));
}

#[tokio::test]
async fn one_tool_call_with_arguments_split_mid_token() {
    let server = MockModelServer::with_replies(vec![Reply::openai_stream(&[
        chunk(json!({"role": "assistant", "content": null}), None),
        tool_start(0, "call_a", "read_file"),
        tool_args(0, "{\"pa"),
        tool_args(0, "th\": \"src/li"),
        tool_args(0, "b.rs\"}"),
        chunk(json!({}), Some("tool_calls")),
    ])])
    .await;
    let response = client(&server, |c| c).complete(request()).await.unwrap();
    assert_eq!(response.text, None);
    assert_eq!(
        response.tool_calls,
        vec![ToolCall::new(
            "call_a",
            "read_file",
            r#"{"path": "src/lib.rs"}"#
        )]
    );
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(response.usage, None);
}

#[tokio::test]
async fn three_parallel_tool_calls_interleaved_and_split_across_reads() {
    let events = [
        chunk(json!({"role": "assistant", "content": "Looking."}), None),
        tool_start(0, "call_0", "read_file"),
        tool_args(0, "{\"path\":"),
        tool_start(1, "call_1", "glob_files"),
        tool_args(1, "{\"patt"),
        tool_args(0, " \"a.rs\"}"),
        tool_start(2, "call_2", "grep"),
        tool_args(2, "{\"pattern\": \"fn ma"),
        tool_args(1, "ern\": \"**/*.rs\"}"),
        tool_args(2, "in\"}"),
        chunk(json!({}), Some("tool_calls")),
        usage_chunk(300, 40, 0),
    ];
    // The raw body is cut every 7 bytes and sent in pieces, so lines and JSON tokens are split
    // across network reads as well as across events.
    let server = MockModelServer::with_replies(vec![
        Reply::openai_stream(&events)
            .with_pieces_of(7)
            .with_pause(Duration::from_micros(200)),
    ])
    .await;
    let response = client(&server, |c| c).complete(request()).await.unwrap();
    assert_eq!(response.text.as_deref(), Some("Looking."));
    assert_eq!(
        response.tool_calls,
        vec![
            ToolCall::new("call_0", "read_file", r#"{"path": "a.rs"}"#),
            ToolCall::new("call_1", "glob_files", r#"{"pattern": "**/*.rs"}"#),
            ToolCall::new("call_2", "grep", r#"{"pattern": "fn main"}"#),
        ]
    );
    for call in &response.tool_calls {
        call.parse_arguments().unwrap();
    }
    assert_eq!(response.usage, Some(Usage::new(300, 40)));
}

#[tokio::test]
async fn rate_limited_with_retry_after_then_success() {
    let server = MockModelServer::with_replies(vec![
        Reply::error(
            429,
            json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}),
        )
        .with_header("retry-after", "1"),
        Reply::openai_stream(&[chunk(json!({"content": "ok"}), Some("stop"))]),
    ])
    .await;
    let started = Instant::now();
    let response = client(&server, |c| c).complete(request()).await.unwrap();
    assert_eq!(response.text.as_deref(), Some("ok"));
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "Retry-After was not honoured: {:?}",
        started.elapsed()
    );
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(
        sent[0].body, sent[1].body,
        "the retry sends the same request"
    );
}

#[tokio::test]
async fn rate_limited_without_retries_reports_retry_after() {
    let server = MockModelServer::with_replies(vec![
        Reply::error(429, json!({"error": {"message": "slow down"}}))
            .with_header("retry-after-ms", "1500"),
    ])
    .await;
    let error = client(&server, |c| c.with_retry(RetryPolicy::none()))
        .complete(request())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        LlmError::RateLimited {
            retry_after: Some(Duration::from_millis(1500)),
            message: "slow down".into()
        }
    );
}

#[tokio::test]
async fn server_errors_three_times_then_failure() {
    let failure = || {
        Reply::error(
            500,
            json!({"error": {"message": "The server had an error", "type": "server_error"}}),
        )
    };
    let server =
        MockModelServer::with_replies(vec![failure(), failure(), failure(), failure()]).await;
    let error = client(&server, |c| c)
        .complete(request())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        LlmError::Server {
            status: 500,
            message: "The server had an error".into()
        }
    );
    assert_eq!(server.requests().len(), 3, "max_attempts is 3");
}

#[tokio::test]
async fn server_errors_then_success_are_retried() {
    let server = MockModelServer::with_replies(vec![
        Reply::error(502, json!("bad gateway")),
        Reply::error(503, json!({"error": {"message": "unavailable"}})),
        Reply::openai_stream(&[chunk(json!({"content": "fine"}), Some("stop"))]),
    ])
    .await;
    let response = client(&server, |c| c).complete(request()).await.unwrap();
    assert_eq!(response.text.as_deref(), Some("fine"));
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_malformed_chunk_is_a_malformed_response() {
    let server = MockModelServer::with_replies(vec![Reply::sse([
        sse_data(&chunk(json!({"content": "Hel"}), None)),
        "data: {\"choices\": [{\"delta\": {\"content\": \"lo\"\n\n".to_string(),
        sse_data(&chunk(json!({}), Some("stop"))),
    ])])
    .await;
    let mut stream = client(&server, |c| c).stream(request()).await.unwrap();
    let mut texts = Vec::new();
    let error = loop {
        match stream.next().await.expect("the stream ends with an error") {
            Ok(ChatEvent::Text(text)) => texts.push(text),
            Ok(_) => {}
            Err(error) => break error,
        }
    };
    assert_eq!(texts, ["Hel"]);
    assert!(
        matches!(error, LlmError::MalformedResponse { .. }),
        "{error:?}"
    );
    assert!(stream.next().await.is_none(), "nothing follows the error");
    assert_eq!(server.requests().len(), 1, "a broken stream is not retried");
}

#[tokio::test]
async fn a_server_that_stops_sending_mid_stream_hits_the_idle_timeout() {
    let server = MockModelServer::with_replies(vec![
        Reply::sse([sse_data(&chunk(json!({"content": "Thinking"}), None))]).then_hang(),
    ])
    .await;
    let timeouts = Timeouts {
        idle: Duration::from_millis(300),
        ..Timeouts::default()
    };
    let started = Instant::now();
    let error = client(&server, |c| c.with_timeouts(timeouts))
        .complete(request())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        LlmError::Timeout {
            kind: TimeoutKind::Idle,
            after: Duration::from_millis(300)
        }
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_stream_that_ends_cleanly_before_it_finished_is_malformed() {
    let server = MockModelServer::with_replies(vec![Reply::sse([sse_data(&chunk(
        json!({"content": "Half"}),
        None,
    ))])])
    .await;
    let error = client(&server, |c| c)
        .complete(request())
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::MalformedResponse { .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn slow_response_headers_hit_the_request_timeout() {
    let server = MockModelServer::with_replies(vec![
        Reply::json(json!({})).with_delay(Duration::from_secs(30)),
    ])
    .await;
    let timeouts = Timeouts {
        request: Duration::from_millis(200),
        ..Timeouts::default()
    };
    let error = client(&server, |c| {
        c.with_timeouts(timeouts).with_retry(RetryPolicy::none())
    })
    .complete(request())
    .await
    .unwrap_err();
    assert_eq!(
        error,
        LlmError::Timeout {
            kind: TimeoutKind::Request,
            after: Duration::from_millis(200)
        }
    );
}

#[tokio::test]
async fn a_context_length_error_maps_to_the_context_window_variant() {
    let server = MockModelServer::with_replies(vec![Reply::error(
        400,
        json!({"error": {
            "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }}),
    )])
    .await;
    let error = client(&server, |c| c)
        .complete(request())
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::ContextWindowExceeded { ref message } if message.contains("128000")),
        "{error:?}"
    );
    assert_eq!(server.requests().len(), 1, "not retried");
}

#[tokio::test]
async fn other_client_errors_are_final() {
    let server = MockModelServer::with_replies(vec![
        Reply::error(
            401,
            json!({"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}),
        ),
        Reply::error(
            400,
            json!({"error": {"message": "Invalid value for 'temperature'"}}),
        ),
    ])
    .await;
    let client = client(&server, |c| c);
    assert_eq!(
        client.complete(request()).await.unwrap_err(),
        LlmError::Authentication {
            status: 401,
            message: "Incorrect API key provided".into()
        }
    );
    assert!(matches!(
        client.complete(request()).await.unwrap_err(),
        LlmError::BadRequest { status: 400, .. }
    ));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn connection_errors_are_retried_then_reported() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let config = OpenAiConfig::new(format!("http://{addr}/v1"), None).with_retry(fast_retry(2));
    let error = OpenAiClient::new(config)
        .unwrap()
        .complete(request())
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::Network { .. }), "{error:?}");
}

#[tokio::test]
async fn dropping_the_stream_cancels_the_request() {
    let server = MockModelServer::with_replies(vec![
        Reply::sse([sse_data(&chunk(json!({"content": "Start"}), None))]).then_hang(),
    ])
    .await;
    let mut stream = client(&server, |c| c).stream(request()).await.unwrap();
    while let Some(event) = stream.next().await {
        if matches!(event.unwrap(), ChatEvent::Text(_)) {
            break;
        }
    }
    assert_eq!(server.disconnects(), 0);
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.disconnects() == 0 {
        assert!(
            Instant::now() < deadline,
            "the server never saw the client go away"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[test]
fn invalid_configs_are_rejected_and_https_works() {
    assert!(matches!(
        OpenAiClient::new(OpenAiConfig::new("not a url", None)),
        Err(LlmError::Config { .. })
    ));
    assert!(matches!(
        OpenAiClient::new(OpenAiConfig::new("ftp://host/v1", None)),
        Err(LlmError::Config { .. })
    ));
    assert!(matches!(
        OpenAiClient::new(OpenAiConfig::default().with_header("bad header", "x")),
        Err(LlmError::Config { .. })
    ));
    let client = OpenAiClient::new(OpenAiConfig::default()).unwrap();
    assert_eq!(client.config().base_url, "https://api.openai.com/v1");
    assert_eq!(client.model_info("gpt-4o").context_window, 128_000);
    let local = OpenAiConfig {
        context_window: Some(8_192),
        ..OpenAiConfig::new("http://localhost:11434/v1", None)
    };
    assert_eq!(
        OpenAiClient::new(local)
            .unwrap()
            .model_info("llama3")
            .context_window,
        8_192
    );
}

#[tokio::test]
async fn a_json_answer_to_a_streaming_request_is_read_as_json() {
    let server = MockModelServer::with_replies(vec![Reply::json(json!({
        "id": "chatcmpl-8",
        "model": "llama3",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "plain"}}],
    }))])
    .await;
    let response = client(&server, |c| c).complete(request()).await.unwrap();
    assert_eq!(response.text.as_deref(), Some("plain"));
    assert_eq!(server.requests()[0].body["stream"], true);
}

#[tokio::test]
async fn a_scripted_turn_reads_the_same_streamed_and_not() {
    let turn = || {
        Turn::text("Reading both.")
            .with_tool_call("call_1", "read_file", json!({"path": "a.rs"}))
            .with_tool_call("call_2", "read_file", json!({"path": "b.rs"}))
            .with_usage(MockUsage::new(100, 12).with_cache_read(900))
    };
    let server = MockModelServer::with_replies([turn(), turn()]).await;
    let streamed = client(&server, |c| c).complete(request()).await.unwrap();
    let whole = client(&server, |c| c.with_streaming(false))
        .complete(request())
        .await
        .unwrap();
    for response in [&streamed, &whole] {
        assert_eq!(response.text.as_deref(), Some("Reading both."));
        assert_eq!(
            response.tool_calls,
            vec![
                ToolCall::new("call_1", "read_file", r#"{"path":"a.rs"}"#),
                ToolCall::new("call_2", "read_file", r#"{"path":"b.rs"}"#),
            ]
        );
        assert_eq!(
            response.usage,
            Some(Usage {
                prompt_tokens: 1000,
                completion_tokens: 12,
                cached_tokens: 900,
                estimated: false,
            })
        );
        assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            response.model.as_deref(),
            Some("gpt-4o"),
            "the request's model"
        );
    }
}

#[tokio::test]
async fn a_connection_broken_mid_stream_is_a_network_error() {
    let server = MockModelServer::with_replies([Reply::sse([sse_data(&chunk(
        json!({"content": "Half"}),
        None,
    ))])
    .with_pause(Duration::from_millis(20))
    .then_reset()])
    .await;
    let error = client(&server, |c| c)
        .complete(request())
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::Network { ref message } if message.contains("broke")),
        "{error:?}"
    );
    assert_eq!(server.requests().len(), 1, "a broken stream is not retried");
}

#[tokio::test]
async fn a_conversation_that_leaves_a_call_unanswered_is_refused_as_openai_does() {
    let server = MockModelServer::with_replies([Turn::text("never sent")]).await;
    let mut unanswered = request();
    std::sync::Arc::make_mut(&mut unanswered.messages).pop();
    let error = client(&server, |c| c)
        .complete(unanswered)
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::BadRequest { status: 400, ref message } if message.contains("tool_call_id")),
        "{error:?}"
    );
    assert_eq!(server.replies_left(), 1, "a refused request takes no reply");
}
