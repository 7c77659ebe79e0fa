//! Learning a model's context window from its server: each local server as the mock plays it
//! (llama.cpp's `llama-server`, vLLM, Ollama, and llama-cpp-python, which says nothing), the
//! answer remembered per client and model, and never asked when the window is configured.

use agent_llm::{
    ContextWindow, DEFAULT_CONTEXT_WINDOW, LlmClient, OpenAiClient, OpenAiConfig, WindowSource,
    stated_window,
};
use agent_test_support::mock_model::{LocalServer, MockModelServer};

fn client(server: &MockModelServer) -> OpenAiClient {
    OpenAiClient::new(OpenAiConfig::new(server.openai_base(), None)).unwrap()
}

/// What a client learns of `model` from a mock playing `local`.
async fn learned(local: Option<LocalServer>, model: &str) -> (Option<ContextWindow>, usize) {
    let server = MockModelServer::start().await;
    server.serve_models(&[model]);
    if let Some(local) = local {
        server.serve_as(local);
    }
    let window = client(&server).learn_window(model).await;
    (window, server.info_requests().len())
}

#[tokio::test]
async fn each_local_server_says_its_window_where_it_says_it() {
    let check = |window: Option<ContextWindow>, tokens: usize, source: WindowSource| {
        assert_eq!(window, Some(ContextWindow { tokens, source }));
    };
    let (window, _) = learned(Some(LocalServer::LlamaServer { n_ctx: 4096 }), "smollm2").await;
    check(window, 4096, WindowSource::LlamaCppProps);
    let (window, _) = learned(
        Some(LocalServer::Vllm {
            max_model_len: 32768,
        }),
        "Qwen/Qwen2.5-7B-Instruct",
    )
    .await;
    check(window, 32768, WindowSource::ModelList);
    let (window, _) = learned(
        Some(LocalServer::Ollama {
            num_ctx: Some(16384),
            trained: 131072,
        }),
        "qwen2.5:7b",
    )
    .await;
    check(window, 16384, WindowSource::Ollama);
    // Ollama without num_ctx runs the model with its default window, whatever it was trained
    // for: the client takes the default, and says where it comes from.
    let (window, _) = learned(
        Some(LocalServer::Ollama {
            num_ctx: None,
            trained: 131072,
        }),
        "llama3.2",
    )
    .await;
    check(
        window,
        4096,
        WindowSource::OllamaDefault { trained: 131072 },
    );
    // A server that says nothing (llama-cpp-python): the default is assumed, and said to be.
    let (window, asked) = learned(None, "smollm2").await;
    check(window, DEFAULT_CONTEXT_WINDOW, WindowSource::Assumed);
    assert_eq!(asked, 3, "/props, the model list and /api/show were asked");
}

#[tokio::test]
async fn the_window_is_asked_once_per_model_and_then_known() {
    let server = MockModelServer::start().await;
    server.serve_models(&["smollm2"]);
    server.serve_as(LocalServer::LlamaServer { n_ctx: 2048 });
    let client = client(&server);
    assert_eq!(client.known_window("smollm2"), None);
    assert_eq!(
        client.model_info("smollm2").context_window,
        DEFAULT_CONTEXT_WINDOW
    );
    let first = client.learn_window("smollm2").await;
    let asked = server.info_requests().len();
    // Clones share what was learned.
    let clone = client.clone();
    assert_eq!(clone.learn_window("smollm2").await, first);
    assert_eq!(server.info_requests().len(), asked, "not asked again");
    assert_eq!(clone.known_window("smollm2"), first);
    assert_eq!(clone.model_info("smollm2").context_window, 2048);
    assert_eq!(server.request_count(), 0, "no chat request was made");
}

#[tokio::test]
async fn a_configured_window_is_never_asked_and_wins() {
    let server = MockModelServer::start().await;
    server.serve_as(LocalServer::LlamaServer { n_ctx: 2048 });
    let mut config = OpenAiConfig::new(server.openai_base(), None);
    config.context_window = Some(8192);
    let client = OpenAiClient::new(config).unwrap();
    assert_eq!(client.learn_window("smollm2").await, None);
    assert!(server.info_requests().is_empty());
    assert_eq!(client.model_info("smollm2").context_window, 8192);
}

#[tokio::test]
async fn refusals_state_the_window_in_each_server_s_words() {
    for local in [
        LocalServer::LlamaServer { n_ctx: 2048 },
        LocalServer::Vllm {
            max_model_len: 2048,
        },
        LocalServer::Silent { window: 2048 },
    ] {
        let server = MockModelServer::start().await;
        server.serve_as(local);
        let client = client(&server);
        let request = agent_llm::ChatRequest::new(
            "smollm2",
            vec![agent_llm::ChatMessage::user("word ".repeat(4_000))],
        );
        let error = client.complete(request).await.unwrap_err();
        let agent_llm::LlmError::ContextWindowExceeded { message } = &error else {
            panic!("{local:?}: {error:?}");
        };
        assert_eq!(stated_window(message), Some(2048), "{local:?}: {message}");
    }
}
