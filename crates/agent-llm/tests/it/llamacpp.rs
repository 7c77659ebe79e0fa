//! llama.cpp's OpenAI-compatible server: its captured answers (`tests/fixtures/llamacpp/`,
//! from llama-cpp-python 0.3.36 serving SmolLM2-135M) decoded as the client decodes them, and
//! the client end to end against the mock server playing that server's rules.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::fast_retry;
use agent_llm::{
    ChatMessage, ChatRequest, ChatResponse, FinishReason, LlmClient, LlmError, NOTICE_TARGET,
    OpenAiClient, OpenAiConfig, StreamFormat, ToolCall, ToolChoice, ToolSpec, collect_stream,
    decode_recorded_stream, estimate_request_tokens, list_models,
};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use serde_json::{Value, json};

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/llamacpp")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The body of a captured HTTP exchange (`*.http`): what follows the first blank line.
fn http_body(name: &str) -> Value {
    let text = fixture(name);
    let (_, body) = text
        .split_once("\r\n\r\n")
        .or_else(|| text.split_once("\n\n"))
        .expect("headers, a blank line, a body");
    serde_json::from_str(body.trim()).expect("a JSON body")
}

/// A captured stream decoded as the client decodes a live one, cut in uneven chunks.
async fn decoded(name: &str) -> ChatResponse {
    let bytes = fixture(name).into_bytes();
    let chunks = bytes.chunks(97).map(<[u8]>::to_vec).collect();
    collect_stream(decode_recorded_stream(StreamFormat::OpenAi, chunks))
        .await
        .unwrap_or_else(|err| panic!("{name}: {err}"))
}

#[tokio::test]
async fn captured_text_streams_decode_with_their_finish_reason() {
    let text = decoded("01-text-stream.sse").await;
    assert!(text.text.as_deref().is_some_and(|t| t.len() > 100));
    assert_eq!(text.finish(), Some(FinishReason::Length));
    assert!(text.truncated());
    assert_eq!(text.usage, None, "the server streams no usage");
    assert_eq!(text.model.as_deref(), Some("smollm2"));
    for name in [
        "03-text-stream-gguf-template.sse",
        "10-agent-request-text-stream.sse",
    ] {
        let answer = decoded(name).await;
        assert!(answer.text.is_some(), "{name}");
        assert!(answer.tool_calls.is_empty(), "{name}");
        assert!(answer.finish().is_some(), "{name}");
    }
}

#[tokio::test]
async fn captured_tool_call_streams_give_one_call_each() {
    let read = decoded("02-tool-call-stream.sse").await;
    assert_eq!(read.tool_calls.len(), 1, "{:?}", read.tool_calls);
    let call = &read.tool_calls[0];
    assert_eq!(call.name, "read_file");
    assert!(
        call.id.starts_with("call__0_read_file_cmpl-"),
        "{}",
        call.id
    );
    assert!(call.arguments.starts_with("{\"path"), "{}", call.arguments);
    assert_eq!(read.finish(), Some(FinishReason::ToolCalls));
    assert_eq!(read.text, None);

    let glob = decoded("09-agent-request-tool-call-stream.sse").await;
    assert_eq!(glob.tool_calls.len(), 1, "{:?}", glob.tool_calls);
    assert_eq!(glob.tool_calls[0].name, "glob_files");
}

fn client(server: &MockModelServer, retries: u32) -> OpenAiClient {
    let config = OpenAiConfig::new(server.openai_base(), None).with_retry(fast_retry(retries));
    OpenAiClient::new(config).unwrap()
}

fn read_file_spec() -> ToolSpec {
    ToolSpec::new(
        "read_file",
        "Reads a file.",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    )
}

fn ask(task: &str) -> ChatRequest {
    ChatRequest::new(
        "smollm2",
        vec![
            ChatMessage::system("You are terse."),
            ChatMessage::user(task),
        ],
    )
}

#[tokio::test]
async fn captured_whole_answers_are_read_with_their_usage() {
    let server = MockModelServer::with_replies([
        Reply::json(serde_json::from_str(&fixture("04-text-nonstream.json")).unwrap()),
        Reply::json(serde_json::from_str(&fixture("05-tool-call-nonstream.json")).unwrap()),
    ])
    .await;
    let client = client(&server, 1).with_streaming(false);
    let text = client.complete(ask("Hi")).await.unwrap();
    assert!(text.text.is_some());
    assert!(!text.usage.unwrap().estimated);
    let call = client.complete(ask("Read README.txt")).await.unwrap();
    assert_eq!(
        call.tool_calls,
        [ToolCall::new(
            "call__0_read_file_cmpl-bf984f97-d98d-49c9-937d-17d688fb5abc",
            "read_file",
            r#"{"path": "README.txt"}"#
        )]
    );
    assert_eq!(call.usage.unwrap().prompt_tokens, 237);
}

#[tokio::test]
async fn captured_refusals_are_classified_and_not_retried() {
    let server = MockModelServer::with_replies([
        Reply::error(400, http_body("06-context-overflow-nonstream-400.http")),
        Reply::error(500, http_body("08-assistant-content-null-500.http")),
    ])
    .await;
    let client = client(&server, 4).with_streaming(false);
    let overflow = client.complete(ask("long")).await.unwrap_err();
    assert!(
        matches!(overflow, LlmError::ContextWindowExceeded { .. }),
        "{overflow:?}"
    );
    let refused = client.complete(ask("again")).await.unwrap_err();
    let LlmError::BadRequest { status, message } = &refused else {
        panic!("{refused:?}")
    };
    assert_eq!(*status, 500);
    assert!(message.contains("Input should be a valid string"));
    assert!(!refused.to_string().contains('\n'), "{refused}");
    assert_eq!(
        server.request_count(),
        2,
        "a validation error is not retried"
    );
}

#[tokio::test]
async fn an_empty_stream_over_the_window_is_asked_again_whole_and_is_an_overflow() {
    let server = MockModelServer::with_replies([
        Reply::sse(Vec::<String>::new()),
        Reply::error(400, http_body("06-context-overflow-nonstream-400.http")),
    ])
    .await;
    let client = client(&server, 4);
    let error = client.complete(ask("long")).await.unwrap_err();
    assert!(
        matches!(error, LlmError::ContextWindowExceeded { .. }),
        "{error:?}"
    );
    let asked: Vec<_> = server.requests().iter().map(|r| r.is_stream()).collect();
    assert_eq!(asked, [true, false]);
    assert!(
        client.streams("smollm2"),
        "an overflow does not turn streaming off"
    );
}

#[test]
fn the_agents_captured_request_counts_its_tool_schemas() {
    let captured: Value = serde_json::from_str(&fixture("09-agent-request.json")).unwrap();
    let tools: Vec<ToolSpec> = captured["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            let function = &tool["function"];
            ToolSpec::new(
                function["name"].as_str().unwrap(),
                function["description"].as_str().unwrap_or_default(),
                function["parameters"].clone(),
            )
        })
        .collect();
    assert_eq!(tools.len(), 10);
    let bare = ask("Find the Rust files.");
    let with_tools = bare.clone().with_tools(tools);
    let schemas = estimate_request_tokens(&with_tools) - estimate_request_tokens(&bare);
    assert!(
        schemas > 1_000,
        "the 10 tool schemas count {schemas} tokens"
    );
}

/// The notices given while `run` runs, on this thread.
async fn notices_of<T>(run: impl std::future::Future<Output = T>) -> (T, Vec<String>) {
    use tracing_subscriber::layer::SubscriberExt;

    #[derive(Clone, Default)]
    struct Notices(Arc<Mutex<Vec<String>>>);

    struct Message(String);
    impl tracing::field::Visit for Message {
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            if field.name() == "message" {
                self.0 = format!("{value:?}");
            }
        }
    }

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Notices {
        fn on_event(
            &self,
            event: &tracing::Event<'_>,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            if event.metadata().target() == NOTICE_TARGET {
                let mut message = Message(String::new());
                event.record(&mut message);
                self.0.lock().unwrap().push(message.0);
            }
        }
    }

    let notices = Notices::default();
    let subscriber = tracing_subscriber::registry().with(notices.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    let value = run.await;
    let said = notices.0.lock().unwrap().clone();
    (value, said)
}

#[tokio::test]
async fn a_tool_call_round_trip_falls_back_to_whole_answers_once() {
    let server = MockModelServer::llama_cpp().await;
    server.push(Turn::tool_call(
        "call__0_read_file_cmpl-1",
        "read_file",
        json!({"path": "a.rs"}),
    ));
    server.push(Turn::text("It is empty."));
    server.push(Turn::text("Bye."));
    let client = client(&server, 4);
    let first_request = ask("Read a.rs").with_tools(vec![read_file_spec()]);
    let ((first, second, third), notices) = notices_of(async {
        let first = client.complete(first_request.clone()).await.unwrap();
        let mut messages = first_request.messages.as_ref().clone();
        messages.push(first.to_message());
        messages.push(ChatMessage::tool_result(&first.tool_calls[0].id, ""));
        let second = client
            .complete(
                ChatRequest::new("smollm2", messages.clone()).with_tools(vec![read_file_spec()]),
            )
            .await
            .unwrap();
        let third = client
            .complete(ChatRequest::new("smollm2", messages).with_tools(vec![read_file_spec()]))
            .await
            .unwrap();
        (first, second, third)
    })
    .await;
    assert_eq!(first.tool_calls[0].name, "read_file");
    assert_eq!(first.tool_calls[0].arguments, r#"{"path":"a.rs"}"#);
    assert_eq!(first.usage, None, "the server reported none");
    assert_eq!(second.text.as_deref(), Some("It is empty."));
    assert_eq!(third.text.as_deref(), Some("Bye."));
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("smollm2"), "{notices:?}");
    assert!(!client.streams("smollm2"));

    let requests = server.requests();
    let streamed: Vec<_> = requests.iter().map(|r| r.is_stream()).collect();
    assert_eq!(streamed, [true, false, false, false]);
    assert!(requests.iter().all(|r| r.body["tool_choice"] == "auto"));
    let assistant = &requests[2].body["messages"][2];
    assert_eq!(
        assistant["content"], "",
        "a tool-call turn goes back with empty content"
    );
}

#[tokio::test]
async fn without_tools_the_server_streams_text_without_usage() {
    let server = MockModelServer::llama_cpp().await;
    server.push(Turn::text("Hello there, how are you?"));
    let client = client(&server, 1);
    let answer = client.complete(ask("Hi")).await.unwrap();
    assert_eq!(answer.text.as_deref(), Some("Hello there, how are you?"));
    assert_eq!(answer.usage, None, "the stream carried none although asked");
    assert_eq!(
        server.requests()[0].body["stream_options"]["include_usage"],
        true
    );
    assert_eq!(server.requests()[0].body.get("tool_choice"), None);
    assert!(client.streams("smollm2"));
}

#[tokio::test]
async fn a_call_that_must_answer_in_text_says_so() {
    let server = MockModelServer::llama_cpp().await;
    server.push(Turn::tool_call("c1", "read_file", json!({"path": "a.rs"})).with_text("Summary."));
    let client = client(&server, 1);
    let request = ask("Summarise")
        .with_tools(vec![read_file_spec()])
        .with_tool_choice(ToolChoice::None);
    let answer = client.complete(request).await.unwrap();
    assert_eq!(answer.text.as_deref(), Some("Summary."));
    assert!(answer.tool_calls.is_empty());
    assert_eq!(server.requests()[0].body["tool_choice"], "none");
}

#[tokio::test]
async fn the_mock_refuses_what_the_real_server_refuses() {
    let server = MockModelServer::llama_cpp().await;
    agent_llm::ensure_crypto_provider();
    let http = reqwest::Client::new();
    let null_content = json!({"model": "smollm2", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]});
    let response = http
        .post(format!("{}/chat/completions", server.openai_base()))
        .json(&null_content)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    let body: Value = response.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("Input should be a valid string"),
        "{message}"
    );
}

#[tokio::test]
async fn a_local_servers_models_are_listed() {
    let server = MockModelServer::llama_cpp().await;
    server.serve_models(&["smollm2"]);
    let config = OpenAiConfig::new(server.openai_base(), None);
    assert_eq!(list_models(&config).await.unwrap(), ["smollm2"]);
    assert_eq!(server.info_requests()[0].method, "GET");
    assert_eq!(server.info_requests()[0].path, "/v1/models");
}
