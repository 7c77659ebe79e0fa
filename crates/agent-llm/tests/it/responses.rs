//! The OpenAI Responses client against a mock server speaking the Responses wire format:
//! streamed text, function calls in fragments, usage with cached tokens, errors, and a
//! reasoning item carried across a tool call as the server's rules demand.

use crate::fast_retry;
use agent_llm::{
    ChatEvent, ChatMessage, ChatRequest, LlmClient, LlmError, OpenAiResponsesClient,
    OpenAiResponsesConfig, Reasoning, RetryPolicy, StreamFormat, ToolCall, ToolSpec, Usage,
    collect_stream, decode_recorded_stream,
};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn, Usage as MockUsage, sse_event};
use futures::StreamExt;
use serde_json::{Value, json};

fn client(server: &MockModelServer) -> OpenAiResponsesClient {
    let config = OpenAiResponsesConfig::new(server.openai_base(), Some("sk-test".into()))
        .with_retry(fast_retry(3));
    OpenAiResponsesClient::new(config).unwrap()
}

fn read_file() -> ToolSpec {
    ToolSpec::new(
        "read_file",
        "Reads a file.",
        json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    )
}

fn ask(model: &str, task: &str) -> ChatRequest {
    ChatRequest::new(
        model,
        vec![
            ChatMessage::system("You are terse."),
            ChatMessage::user(task),
        ],
    )
    .with_tools(vec![read_file()])
}

#[tokio::test]
async fn streamed_text_arrives_in_pieces_and_the_request_follows_the_wire_format() {
    let server =
        MockModelServer::with_replies([Turn::text("Hello there.").with_id("resp_42")]).await;
    let mut stream = client(&server).stream(ask("gpt-4.1", "Hi")).await.unwrap();
    let mut pieces = Vec::new();
    let mut started = None;
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            ChatEvent::Text(text) => pieces.push(text),
            ChatEvent::Started { response_id, model } => started = Some((response_id, model)),
            _ => {}
        }
    }
    assert_eq!(pieces, ["Hell", "o th", "ere."]);
    assert_eq!(
        started,
        Some((Some("resp_42".into()), Some("gpt-4.1".into())))
    );

    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(sent.body["instructions"], "You are terse.");
    assert_eq!(
        sent.body["input"],
        json!([{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]}])
    );
    assert_eq!(sent.body["stream"], true);
    assert_eq!(sent.body["store"], false);
    assert_eq!(sent.body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(
        sent.body["tools"][0],
        json!({"type": "function", "name": "read_file", "description": "Reads a file.",
            "parameters": read_file().parameters, "strict": false})
    );
    assert!(
        sent.body.get("reasoning").is_none(),
        "gpt-4.1 does not reason"
    );
}

#[tokio::test]
async fn a_tool_call_whose_arguments_arrive_in_fragments() {
    let server = MockModelServer::with_replies([Turn::text("Let me look.").with_tool_call(
        "call_7",
        "read_file",
        json!({"path": "src/main.rs"}),
    )])
    .await;
    let mut stream = client(&server)
        .stream(ask("gpt-4.1", "Read it"))
        .await
        .unwrap();
    let mut fragments = Vec::new();
    while let Some(event) = stream.next().await {
        if let ChatEvent::ToolCallArgs { index: 0, fragment } = event.unwrap() {
            fragments.push(fragment);
        }
    }
    assert!(fragments.len() > 1, "{fragments:?}");

    // The same reply again, collected, and cut into 7-byte reads besides.
    server.push(
        Reply::from(Turn::text("Let me look.").with_tool_call(
            "call_7",
            "read_file",
            json!({"path": "src/main.rs"}),
        ))
        .with_pieces_of(7),
    );
    let response = client(&server)
        .complete(ask("gpt-4.1", "Read it"))
        .await
        .unwrap();
    assert_eq!(response.text.as_deref(), Some("Let me look."));
    assert_eq!(
        response.tool_calls,
        [ToolCall::new(
            "call_7",
            "read_file",
            r#"{"path":"src/main.rs"}"#
        )]
    );
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
}

#[tokio::test]
async fn usage_counts_cached_input_tokens() {
    let usage = MockUsage::new(200, 30).with_cache_read(1_800);
    let server = MockModelServer::with_replies([Turn::text("ok").with_usage(usage)]).await;
    let response = client(&server).complete(ask("gpt-5", "Hi")).await.unwrap();
    assert_eq!(
        response.usage,
        Some(Usage {
            prompt_tokens: 2_000,
            completion_tokens: 30,
            cached_tokens: 1_800,
            estimated: false,
        })
    );
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    let sent = &server.requests()[0].body;
    assert_eq!(sent["reasoning"], json!({"summary": "auto"}));
}

/// A stream that starts and then fails with this error event.
fn failing(event: Value) -> Reply {
    let created = json!({"type": "response.created",
        "response": {"id": "resp_1", "status": "in_progress", "model": "gpt-5", "output": []}});
    Reply::sse([sse_event(&created), sse_event(&event)])
}

#[tokio::test]
async fn errors_map_to_the_variants_callers_act_on() {
    let server = MockModelServer::start().await;
    let client = OpenAiResponsesClient::new(
        OpenAiResponsesConfig::new(server.openai_base(), None).with_retry(RetryPolicy::none()),
    )
    .unwrap();
    let cases = [
        (
            failing(
                json!({"type": "response.failed", "response": {"id": "resp_1",
                "status": "failed", "error": {"code": "context_length_exceeded",
                "message": "Your input exceeds the context window of this model."}}}),
            ),
            "context",
        ),
        (
            failing(json!({"type": "error", "code": "rate_limit_exceeded",
                "message": "Rate limit reached. Please try again in 2s.", "param": null})),
            "rate",
        ),
        (
            failing(
                json!({"type": "response.failed", "response": {"id": "resp_1",
                "status": "failed", "error": {"code": "server_error", "message": "boom"}}}),
            ),
            "server",
        ),
        (
            Reply::error(
                400,
                json!({"error": {"message": "Your input exceeds the context window of this model.",
                    "type": "invalid_request_error", "code": "context_length_exceeded"}}),
            ),
            "context",
        ),
        (
            Reply::error(
                401,
                json!({"error": {"message": "Incorrect API key", "code": "invalid_api_key"}}),
            ),
            "auth",
        ),
    ];
    for (reply, expected) in cases {
        server.push(reply);
        let error = client.complete(ask("gpt-5", "Hi")).await.unwrap_err();
        let kind = match &error {
            LlmError::ContextWindowExceeded { .. } => "context",
            LlmError::RateLimited {
                retry_after: Some(wait),
                ..
            } if wait.as_secs() == 2 => "rate",
            LlmError::Server { .. } => "server",
            LlmError::Authentication { .. } => "auth",
            _ => "other",
        };
        assert_eq!(kind, expected, "{error:?}");
    }
}

#[tokio::test]
async fn a_reasoning_item_is_carried_across_a_tool_call() {
    let server = MockModelServer::with_replies([
        Turn::tool_call("call_1", "read_file", json!({"path": "a.rs"}))
            .with_reasoning_item("The file will say."),
        Turn::text("It is empty."),
    ])
    .await;
    let client = client(&server);
    let first_request = ask("gpt-5-codex", "What is in a.rs?");
    let mut stream = client.stream(first_request.clone()).await.unwrap();
    let mut preview = String::new();
    let mut collector = agent_llm::ResponseCollector::new();
    while let Some(event) = stream.next().await {
        let event = event.unwrap();
        if let ChatEvent::ReasoningPreview(piece) = &event {
            preview.push_str(piece);
        }
        collector.push(event);
    }
    let first = collector.finish().unwrap();
    assert_eq!(preview, "The file will say.");
    let [
        Reasoning::Item {
            id,
            summary,
            encrypted_content: Some(encrypted),
        },
    ] = first.reasoning.as_slice()
    else {
        panic!("one encrypted reasoning item: {:?}", first.reasoning);
    };
    assert_eq!(summary, &["The file will say."]);

    // The conversation as the runner builds it: the assistant message keeps the reasoning.
    let mut messages = first_request.messages.to_vec();
    messages.push(first.to_message());
    messages.push(ChatMessage::tool_result("call_1", ""));
    let second_request = ChatRequest {
        messages: messages.clone().into(),
        ..first_request.clone()
    };
    let second = client.complete(second_request).await.unwrap();
    assert_eq!(second.text.as_deref(), Some("It is empty."));
    let input = &server.requests()[1].body["input"];
    assert_eq!(
        input[1],
        json!({"type": "reasoning", "id": id, "encrypted_content": encrypted,
            "summary": [{"type": "summary_text", "text": "The file will say."}]})
    );
    assert_eq!(input[2]["type"], "function_call");
    assert_eq!(input[2]["call_id"], "call_1");
    assert_eq!(
        input[3],
        json!({"type": "function_call_output", "call_id": "call_1", "output": ""})
    );

    // The server refuses what it did not issue, and a call answered without its item.
    let tampered: Vec<ChatMessage> = messages
        .iter()
        .map(|message| match message {
            ChatMessage::Assistant {
                text, tool_calls, ..
            } => ChatMessage::Assistant {
                text: text.clone(),
                tool_calls: tool_calls.clone(),
                reasoning: vec![Reasoning::Item {
                    id: id.clone(),
                    summary: Vec::new(),
                    encrypted_content: Some(format!("{encrypted}x")),
                }],
            },
            other => other.clone(),
        })
        .collect();
    let refused = client
        .complete(ChatRequest {
            messages: tampered.into(),
            ..first_request.clone()
        })
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, LlmError::BadRequest { status: 400, message } if message.contains("could not be verified")),
        "{refused:?}"
    );
    let orphan = vec![
        ChatMessage::user("What is in a.rs?"),
        ChatMessage::tool_result("call_9", ""),
    ];
    let refused = client
        .complete(ChatRequest::new("gpt-5-codex", orphan))
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, LlmError::BadRequest { message, .. } if message.contains("No tool call found")),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_json_answer_is_read_as_a_response_object() {
    let server = MockModelServer::start().await;
    server.push(Reply::json(json!({
        "id": "resp_9", "object": "response", "status": "completed", "model": "o3-pro",
        "output": [
            {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "e1"},
            {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "read_file",
                "arguments": "{\"path\":\"a\"}"}
        ],
        "usage": {"input_tokens": 10, "output_tokens": 2, "input_tokens_details": {"cached_tokens": 4}}
    })));
    let response = client(&server).complete(ask("o3-pro", "Hi")).await.unwrap();
    assert_eq!(response.tool_calls[0].id, "call_1");
    assert_eq!(
        response.reasoning,
        [Reasoning::Item {
            id: "rs_1".into(),
            summary: Vec::new(),
            encrypted_content: Some("e1".into()),
        }]
    );
    assert_eq!(response.usage.map(|u| u.cached_tokens), Some(4));
}

#[tokio::test]
async fn a_recorded_stream_decodes_the_same_in_any_cut() {
    let turn = Turn::text("Done.").with_tool_call("call_1", "read_file", json!({"path": "a"}));
    let server = MockModelServer::with_replies([turn]).await;
    let live = client(&server)
        .complete(ask("gpt-4.1", "Hi"))
        .await
        .unwrap();
    // The same events, as recorded bytes cut every 5 bytes.
    let body: String = [
        json!({"type": "response.created", "response": {"id": "resp_mock", "model": "gpt-4.1"}}),
        json!({"type": "response.output_item.added", "output_index": 0,
            "item": {"id": "msg_mock", "type": "message", "content": []}}),
        json!({"type": "response.output_text.delta", "output_index": 0, "delta": "Done."}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"id": "fc_1",
            "type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{\"path\":"}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "\"a\"}"}),
        json!({"type": "response.completed", "response": {"id": "resp_mock", "status": "completed"}}),
    ]
    .iter()
    .map(sse_event)
    .collect();
    let chunks = body.as_bytes().chunks(5).map(<[u8]>::to_vec).collect();
    let recorded = collect_stream(decode_recorded_stream(
        StreamFormat::OpenAiResponses,
        chunks,
    ))
    .await
    .unwrap();
    assert_eq!(recorded.text, live.text);
    assert_eq!(recorded.tool_calls, live.tool_calls);
    assert_eq!(recorded.finish_reason, live.finish_reason);
}

#[test]
fn models_served_only_on_the_responses_api_are_known() {
    for model in [
        "gpt-5-codex",
        "codex-mini-latest",
        "o3-pro",
        "o1-pro-2025-03-19",
        "openai/gpt-5-pro",
    ] {
        assert!(agent_llm::responses_only(model), "{model}");
    }
    for model in ["gpt-5", "gpt-4o-mini", "o3", "o3-mini", "claude-sonnet-4-5"] {
        assert!(!agent_llm::responses_only(model), "{model}");
    }
}
