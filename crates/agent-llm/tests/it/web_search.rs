//! A provider's own web search ([`LlmClient::web_search`]) against the mock server, which keeps
//! each provider's documented rules for the search tool: the Anthropic client declares
//! `web_search_20250305`, reads the search blocks and citations, sends a paused turn back, and
//! turns an error block into [`LlmError::ServerTool`]; the Responses client declares
//! `web_search` and reads `web_search_call` items and `url_citation` annotations; a malformed
//! declaration gets the provider's 400 while the well-formed one (the control) is answered.

use agent_llm::{
    AnthropicClient, AnthropicConfig, LlmClient, LlmError, OpenAiResponsesClient,
    OpenAiResponsesConfig, WebSearchOptions,
};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn, WebSearch};
use serde_json::{Value, json};

use crate::fast_retry;

fn anthropic(server: &MockModelServer) -> AnthropicClient {
    let config = AnthropicConfig::new(server.anthropic_base(), Some("sk-ant-test".into()))
        .with_retry(fast_retry(1));
    AnthropicClient::new(config).unwrap()
}

fn responses(server: &MockModelServer) -> OpenAiResponsesClient {
    let config = OpenAiResponsesConfig::new(server.openai_base(), Some("sk-test".into()))
        .with_retry(fast_retry(1));
    OpenAiResponsesClient::new(config).unwrap()
}

fn found() -> Turn {
    Turn::text("The 2024 edition shipped with Rust 1.85.").with_web_search(
        WebSearch::new("rust 2024 edition")
            .aged_result(
                "Announcing Rust 1.85.0",
                "https://blog.rust-lang.org/2025/02/20/Rust-1.85.0/",
                "February 20, 2025",
            )
            .result(
                "Rust 2024 - The Edition Guide",
                "https://doc.rust-lang.org/edition-guide/rust-2024/",
            )
            .cited("shipped with Rust 1.85"),
    )
}

#[tokio::test]
async fn anthropic_searches_with_the_server_tool_and_reads_its_blocks() {
    let server = MockModelServer::with_replies([found()]).await;
    let options = WebSearchOptions::new()
        .with_max_uses(3)
        .with_allowed_domains(vec!["rust-lang.org".into()]);
    let client = anthropic(&server);
    assert!(client.offers_web_search());
    let answer = client
        .web_search("claude-sonnet-4-5", "rust 2024 edition", &options)
        .await
        .unwrap();
    assert_eq!(answer.text, "The 2024 edition shipped with Rust 1.85.");
    assert_eq!(answer.queries, ["rust 2024 edition"]);
    assert_eq!(answer.sources.len(), 2);
    assert_eq!(answer.sources[0].title, "Announcing Rust 1.85.0");
    assert_eq!(
        answer.sources[0].page_age.as_deref(),
        Some("February 20, 2025")
    );
    assert_eq!(
        answer.sources[0].cited_text.as_deref(),
        Some("shipped with Rust 1.85")
    );
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(
        request.body["tools"],
        json!([{"type": "web_search_20250305", "name": "web_search", "max_uses": 3,
            "allowed_domains": ["rust-lang.org"]}])
    );
    assert_eq!(request.body["stream"], false);
    let asked = request.body["messages"][0]["content"].as_str().unwrap();
    assert!(asked.contains("rust 2024 edition"), "{asked}");
}

#[tokio::test]
async fn anthropic_sends_a_paused_turn_back_and_the_searches_past_max_uses_fail() {
    let paused = json!({
        "id": "msg_p", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "server_tool_use", "id": "srvtoolu_p", "name": "web_search",
                     "input": {"query": "first"}},
                    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_p", "content": [
                        {"type": "web_search_result", "url": "https://a.test/", "title": "A",
                         "encrypted_content": "x", "page_age": null}]}],
        "stop_reason": "pause_turn", "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5}
    });
    let more = Turn::text("Both.")
        .with_web_search(WebSearch::new("second").result("B", "https://b.test/"))
        .with_web_search(WebSearch::new("third").result("C", "https://c.test/"));
    let server = MockModelServer::with_replies([Reply::json(paused), more.into()]).await;
    let options = WebSearchOptions::new().with_max_uses(1);
    let answer = anthropic(&server)
        .web_search("claude-sonnet-4-5", "q", &options)
        .await
        .unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let resent = &requests[1].body["messages"];
    assert_eq!(resent[1]["role"], "assistant");
    assert_eq!(resent[1]["content"][0]["type"], "server_tool_use");
    assert_eq!(answer.queries, ["first", "second", "third"]);
    let urls: Vec<&str> = answer.sources.iter().map(|s| s.url.as_str()).collect();
    // The mock lets one search run (max_uses 1): the third fails with max_uses_exceeded.
    assert_eq!(urls, ["https://a.test/", "https://b.test/"]);
    assert_eq!(
        answer.usage.unwrap().prompt_tokens,
        10,
        "the usage of both replies"
    );
}

#[tokio::test]
async fn a_search_that_failed_is_a_tool_failure_not_a_server_error() {
    let server = MockModelServer::with_replies([
        Turn::text("Sorry.").with_web_search(WebSearch::failing("q", "too_many_requests"))
    ])
    .await;
    let error = anthropic(&server)
        .web_search("claude-sonnet-4-5", "q", &WebSearchOptions::new())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        LlmError::ServerTool {
            tool: "web_search".into(),
            code: "too_many_requests".into()
        }
    );
    assert!(!error.is_retryable());
    assert_eq!(server.request_count(), 1, "a tool failure is not retried");
}

#[tokio::test]
async fn responses_searches_with_the_web_search_tool_and_reads_its_items() {
    let server = MockModelServer::with_replies([found()]).await;
    let options = WebSearchOptions::new().with_allowed_domains(vec!["rust-lang.org".into()]);
    let answer = responses(&server)
        .web_search("gpt-5", "rust 2024 edition", &options)
        .await
        .unwrap();
    assert_eq!(answer.text, "The 2024 edition shipped with Rust 1.85.");
    assert_eq!(answer.queries, ["rust 2024 edition"]);
    let urls: Vec<&str> = answer.sources.iter().map(|s| s.url.as_str()).collect();
    assert_eq!(
        urls,
        [
            "https://blog.rust-lang.org/2025/02/20/Rust-1.85.0/",
            "https://doc.rust-lang.org/edition-guide/rust-2024/"
        ]
    );
    assert_eq!(
        answer.sources[0].title, "Announcing Rust 1.85.0",
        "from the citation"
    );
    assert_eq!(
        answer.sources[0].cited_text.as_deref(),
        Some("shipped with Rust 1.85")
    );
    let body = &server.requests()[0].body;
    assert_eq!(
        body["tools"],
        json!([{"type": "web_search", "filters": {"allowed_domains": ["rust-lang.org"]}}])
    );
    assert_eq!(body["include"], json!(["web_search_call.action.sources"]));
    assert_eq!(body["tool_choice"], "required");
    assert_eq!(body["store"], false);
}

/// `POST`s `body` to the mock's endpoint of `format` as a client would.
async fn post(server: &MockModelServer, path: &str, body: Value) -> (u16, Value) {
    agent_llm::ensure_crypto_provider();
    let response = reqwest::Client::new()
        .post(format!("{}{path}", server.url()))
        .header("anthropic-version", "2023-06-01")
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test]
async fn a_malformed_search_tool_is_refused_as_the_provider_refuses_it() {
    let server = MockModelServer::start().await;
    server.when_empty(|_| Turn::text("ok").into());
    let anthropic = |tool: Value| {
        json!({"model": "claude-sonnet-4-5", "max_tokens": 100, "tools": [tool],
            "messages": [{"role": "user", "content": "search"}]})
    };
    let good = json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 2});
    let (status, _) = post(&server, "/v1/messages", anthropic(good)).await;
    assert_eq!(
        status, 200,
        "the control: the documented declaration is answered"
    );
    for bad in [
        json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 0}),
        json!({"type": "web_search_2025", "name": "web_search"}),
        json!({"type": "web_search_20250305", "name": "web_search",
            "allowed_domains": ["a.test"], "blocked_domains": ["b.test"]}),
    ] {
        let (status, body) = post(&server, "/v1/messages", anthropic(bad.clone())).await;
        assert_eq!(status, 400, "{bad}");
        assert_eq!(body["type"], "error");
        assert_eq!(body["error"]["type"], "invalid_request_error", "{body}");
    }
    let responses = |tool: Value| json!({"model": "gpt-5", "input": "search", "tools": [tool]});
    let (status, _) = post(
        &server,
        "/v1/responses",
        responses(json!({"type": "web_search"})),
    )
    .await;
    assert_eq!(status, 200, "the control");
    let bad = json!({"type": "web_search", "max_uses": 2});
    let (status, body) = post(&server, "/v1/responses", responses(bad)).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["type"], "invalid_request_error", "{body}");
}
