//! Reasoning kept and sent back, against mock servers that enforce each provider's documented
//! rule: DeepSeek's thinking mode refuses a tool-call turn without its `reasoning_content`,
//! and Anthropic refuses thinking blocks that are missing, moved or changed.

use crate::fast_retry;
use agent_llm::{
    AnthropicClient, AnthropicConfig, ChatMessage, ChatRequest, ChatResponse, LlmClient, LlmError,
    OpenAiClient, OpenAiConfig, PromptCache, Reasoning, ToolSpec,
};
use agent_test_support::mock_model::{
    DEFAULT_REASONING, MockModelServer, Turn, thinking_signature,
};
use serde_json::{Value, json};

fn openai(server: &MockModelServer, streaming: bool) -> OpenAiClient {
    let config = OpenAiConfig::new(server.openai_base(), Some("sk-test".into()))
        .with_retry(fast_retry(1))
        .with_streaming(streaming);
    OpenAiClient::new(config).unwrap()
}

fn anthropic(server: &MockModelServer, streaming: bool) -> AnthropicClient {
    let config = AnthropicConfig::new(server.anthropic_base(), Some("sk-ant-test".into()))
        .with_retry(fast_retry(1))
        .with_streaming(streaming)
        .with_prompt_cache(PromptCache::Conversation);
    AnthropicClient::new(config).unwrap()
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec::new(
        "get_weather",
        "Current weather of a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    )]
}

fn ask() -> Vec<ChatMessage> {
    vec![
        ChatMessage::system("You answer weather questions."),
        ChatMessage::user("Weather in Paris?"),
    ]
}

fn weather_call() -> Turn {
    Turn::tool_call("call_1", "get_weather", json!({"city": "Paris"}))
}

/// The conversation after the first answer and its tool result.
fn continued(first: &ChatResponse) -> Vec<ChatMessage> {
    let mut messages = ask();
    messages.push(first.to_message());
    messages.push(ChatMessage::tool_result("call_1", "21°C, sunny"));
    messages
}

fn request(model: &str, messages: Vec<ChatMessage>) -> ChatRequest {
    ChatRequest::new(model, messages).with_tools(tools())
}

fn bad_request_message(error: LlmError) -> String {
    match error {
        LlmError::BadRequest {
            status: 400,
            message,
        } => message,
        other => panic!("expected a 400, got {other:?}"),
    }
}

#[tokio::test]
async fn deepseek_reasoning_is_collected_with_its_field_streamed_and_not() {
    for streaming in [true, false] {
        let server = MockModelServer::deepseek_thinking().await;
        server.push(weather_call().with_reasoning("Paris: look it up."));
        let response = openai(&server, streaming)
            .complete(request("deepseek-reasoner", ask()))
            .await
            .unwrap();
        assert_eq!(
            response.reasoning,
            [Reasoning::Text {
                field: "reasoning_content".into(),
                text: "Paris: look it up.".into()
            }],
            "streaming: {streaming}"
        );
        assert_eq!(response.text, None, "the reasoning is not the text");
        assert_eq!(response.tool_calls[0].name, "get_weather");
    }
}

#[tokio::test]
async fn deepseek_thinking_mode_refuses_a_tool_call_turn_without_its_reasoning_content() {
    let server = MockModelServer::deepseek_thinking().await;
    server.push(weather_call());
    server.push(Turn::text("Sunny, 21°C."));
    let client = openai(&server, true);
    let first = client
        .complete(request("deepseek-reasoner", ask()))
        .await
        .unwrap();
    assert_eq!(first.reasoning[0].text(), DEFAULT_REASONING);

    // The same turn with its reasoning dropped is refused as DeepSeek refuses it.
    let mut stripped = continued(&first);
    stripped[2] = ChatMessage::assistant(None, first.tool_calls.clone());
    let error = client
        .complete(request("deepseek-reasoner", stripped))
        .await
        .unwrap_err();
    assert!(
        bad_request_message(error).contains("Missing `reasoning_content` field"),
        "the mock enforces the rule"
    );

    // With the reasoning kept, it goes back in its field and the call succeeds.
    let second = client
        .complete(request("deepseek-reasoner", continued(&first)))
        .await
        .unwrap();
    assert_eq!(second.text.as_deref(), Some("Sunny, 21°C."));
    let sent = &server.requests()[2].body["messages"][2];
    assert_eq!(sent["reasoning_content"], DEFAULT_REASONING);
    assert!(sent.get("reasoning").is_none());
}

#[tokio::test]
async fn reasoning_in_the_reasoning_field_goes_back_in_the_same_field() {
    let server = MockModelServer::start().await;
    server.push(weather_call().with_reasoning_in("reasoning", "OpenRouter style."));
    server.push(Turn::text("Sunny."));
    let client = openai(&server, true);
    let first = client
        .complete(request("qwen/qwen3-235b", ask()))
        .await
        .unwrap();
    assert_eq!(
        first.reasoning,
        [Reasoning::Text {
            field: "reasoning".into(),
            text: "OpenRouter style.".into()
        }]
    );
    client
        .complete(request("qwen/qwen3-235b", continued(&first)))
        .await
        .unwrap();
    let requests = server.requests();
    let sent = &requests[1].body["messages"][2];
    assert_eq!(sent["reasoning"], "OpenRouter style.");
    assert!(sent.get("reasoning_content").is_none());
    // Messages without reasoning get no reasoning field at all (strict servers refuse them).
    for message in requests[0].body["messages"].as_array().unwrap() {
        assert!(message.get("reasoning").is_none() && message.get("reasoning_content").is_none());
    }
}

#[tokio::test]
async fn anthropic_thinking_never_reaches_an_openai_compatible_server() {
    let server = MockModelServer::start().await;
    server.push(Turn::text("ok"));
    let mut messages = ask();
    messages.push(ChatMessage::Assistant {
        text: Some("earlier".into()),
        tool_calls: Vec::new(),
        reasoning: vec![Reasoning::Thinking {
            thinking: "from Claude".into(),
            signature: "sig".into(),
        }],
    });
    messages.push(ChatMessage::user("and now?"));
    openai(&server, false)
        .complete(ChatRequest::new("gpt-4o", messages))
        .await
        .unwrap();
    let body = server.requests()[0].body.to_string();
    assert!(!body.contains("from Claude") && !body.contains("reasoning"));
}

#[tokio::test]
async fn reasoning_effort_is_sent_only_when_set() {
    let server = MockModelServer::start().await;
    server.push(Turn::text("a"));
    server.push(Turn::text("b"));
    let client = openai(&server, false);
    client
        .complete(ChatRequest::new("o3-mini", ask()))
        .await
        .unwrap();
    let mut effortful = ChatRequest::new("o3-mini", ask());
    effortful.reasoning_effort = Some("high".into());
    client.complete(effortful).await.unwrap();
    let requests = server.requests();
    assert!(requests[0].body.get("reasoning_effort").is_none());
    assert_eq!(requests[1].body["reasoning_effort"], "high");
}

fn thinking_request(messages: Vec<ChatMessage>) -> ChatRequest {
    let mut request = request("claude-sonnet-4-5", messages);
    request.thinking_budget = Some(2_000);
    request
}

#[tokio::test]
async fn anthropic_thinking_blocks_are_kept_with_their_signatures_and_sent_back_first() {
    for streaming in [true, false] {
        let server = MockModelServer::start().await;
        server.push(
            weather_call()
                .with_text("Checking.")
                .with_reasoning("The user wants Paris.")
                .with_redacted_thinking("RUFBQUVB"),
        );
        server.push(Turn::text("Sunny, 21°C."));
        let client = anthropic(&server, streaming);
        let first = client.complete(thinking_request(ask())).await.unwrap();
        assert_eq!(
            first.reasoning[0],
            Reasoning::Thinking {
                thinking: "The user wants Paris.".into(),
                signature: thinking_signature("The user wants Paris."),
            },
            "streaming: {streaming}"
        );
        assert!(
            matches!(&first.reasoning[1], Reasoning::RedactedThinking { data } if data.starts_with("RUFBQUVB."))
        );
        assert_eq!(first.text.as_deref(), Some("Checking."));

        let second = client
            .complete(thinking_request(continued(&first)))
            .await
            .unwrap();
        assert_eq!(second.text.as_deref(), Some("Sunny, 21°C."));
        let sent = &server.requests()[1].body["messages"][1]["content"];
        let kinds: Vec<&str> = sent
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["thinking", "redacted_thinking", "text", "tool_use"]);
        assert_eq!(
            sent[0]["signature"],
            Value::String(thinking_signature("The user wants Paris."))
        );
    }
}

#[tokio::test]
async fn the_anthropic_mock_refuses_missing_moved_or_changed_thinking() {
    let server = MockModelServer::start().await;
    server.push(weather_call().with_reasoning("The user wants Paris."));
    let client = anthropic(&server, true);
    let first = client.complete(thinking_request(ask())).await.unwrap();
    let thinking = first.reasoning[0].clone();
    let with_reasoning = |reasoning: Vec<Reasoning>| {
        let mut messages = continued(&first);
        messages[2] = ChatMessage::Assistant {
            text: None,
            tool_calls: first.tool_calls.clone(),
            reasoning,
        };
        thinking_request(messages)
    };

    let missing = client
        .complete(with_reasoning(Vec::new()))
        .await
        .unwrap_err();
    assert!(bad_request_message(missing).contains("must start with a thinking block"));

    let Reasoning::Thinking { signature, .. } = &thinking else {
        panic!("a thinking block");
    };
    let changed = with_reasoning(vec![Reasoning::Thinking {
        thinking: "Something else.".into(),
        signature: signature.clone(),
    }]);
    let error = client.complete(changed).await.unwrap_err();
    assert!(bad_request_message(error).contains("Invalid `signature`"));

    // Moved after the tool use: the body is hand-made, as the client never sends it so.
    let mut moved = server.requests()[0].body.clone();
    moved["messages"] = json!([
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {}},
            {"type": "thinking", "thinking": "The user wants Paris.", "signature": signature},
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "ok"}]},
    ]);
    moved["stream"] = json!(false);
    let status = reqwest::Client::new()
        .post(format!("{}/v1/messages", server.anthropic_base()))
        .header("anthropic-version", "2023-06-01")
        .json(&moved)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 400);
}

#[tokio::test]
async fn a_thinking_budget_is_sent_with_room_above_it_and_without_temperature() {
    let server = MockModelServer::start().await;
    server.push(Turn::text("a"));
    server.push(Turn::text("b"));
    let client = anthropic(&server, false);
    let mut small = ChatRequest::new("claude-sonnet-4-5", ask());
    small.thinking_budget = Some(500);
    small.max_tokens = Some(400);
    small.temperature = Some(0.2);
    client.complete(small).await.unwrap();
    let mut plain = ChatRequest::new("claude-sonnet-4-5", ask());
    plain.temperature = Some(0.2);
    client.complete(plain).await.unwrap();
    let requests = server.requests();
    let body = &requests[0].body;
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 1024})
    );
    assert_eq!(body["max_tokens"], 1424);
    assert!(body.get("temperature").is_none());
    assert!(requests[1].body.get("thinking").is_none());
    assert!((requests[1].body["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6);
}
