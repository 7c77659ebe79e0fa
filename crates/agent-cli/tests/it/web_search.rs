//! `web_search` through the model's provider, as the `agent` command gives it: with no search
//! service configured (`[web] search = "auto"`), the model's `web_search` call becomes a request
//! to the provider that declares its server-side search tool (Anthropic's
//! `web_search_20250305`, OpenAI Responses' `web_search`), and the titles and links it found
//! reach the model's next request as the tool's result. A search the provider could not run is
//! a clear tool error; an OpenAI chat-completions model, which has no search of its own, gets no
//! `web_search` unless a search service is set.

use agent_test_support::cli::{CliEnv, code, stderr};
use agent_test_support::mock_model::{MockModelServer, RecordedRequest, Turn, WebSearch};
use serde_json::{Value, json};

use crate::agent_env;

/// The mock server is a configured base URL, where `auto` does not assume the provider's search:
/// these tests ask for it.
const PROVIDER: &str = "[web]\nsearch = \"provider\"\n";

const POST: &str = "https://blog.rust-lang.org/2025/02/20/Rust-1.85.0/";
const GUIDE: &str = "https://doc.rust-lang.org/edition-guide/rust-2024/";

/// `agent run` in `env` on `server` in `provider`'s wire format with `model`, `toml` its
/// `agent.toml`.
async fn run_on(
    env: &CliEnv,
    server: &MockModelServer,
    (provider, model): (&str, &str),
    toml: &str,
) -> (std::process::Output, Vec<RecordedRequest>) {
    env.write("agent.toml", toml);
    let mut args = vec!["run".to_owned()];
    args.extend(crate::on_provider(env, server, provider, model));
    args.push("Which Rust release shipped the 2024 edition?".to_owned());
    let output = env
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    (output, server.requests())
}

/// The names of the function tools a chat request offers, in any wire format.
fn offered(request: &RecordedRequest) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| {
            tool["name"]
                .as_str()
                .or_else(|| tool["function"]["name"].as_str())
        })
        .map(str::to_owned)
        .collect()
}

/// The tool results a chat request carries, joined, in any wire format.
fn tool_results(request: &RecordedRequest) -> String {
    let body = &request.body;
    let mut found = Vec::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        if message["role"] == "tool" {
            found.push(message["content"].as_str().unwrap_or_default().to_owned());
        }
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                match &block["content"] {
                    Value::String(text) => found.push(text.clone()),
                    parts => found.extend(
                        parts
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|p| p["text"].as_str().map(str::to_owned)),
                    ),
                }
            }
        }
    }
    for item in body["input"].as_array().into_iter().flatten() {
        if item["type"] == "function_call_output" {
            found.push(item["output"].as_str().unwrap_or_default().to_owned());
        }
    }
    found.join("\n")
}

/// The model searches, the provider finds two pages, the model answers.
fn searching_model(search: WebSearch) -> Vec<Turn> {
    vec![
        Turn::tool_call(
            "s1",
            "web_search",
            json!({"query": "rust 2024 edition release", "allowed_domains": ["rust-lang.org"]}),
        ),
        Turn::text("The 2024 edition shipped with Rust 1.85.").with_web_search(search),
        Turn::text("Rust 1.85."),
    ]
}

fn found() -> WebSearch {
    WebSearch::new("rust 2024 edition release")
        .aged_result("Announcing Rust 1.85.0", POST, "February 20, 2025")
        .result("Rust 2024 - The Rust Edition Guide", GUIDE)
        .cited("shipped with Rust 1.85")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_search_goes_through_the_providers_own_search() {
    for (provider, model) in [
        ("anthropic", "claude-sonnet-4-5"),
        ("openai-responses", "gpt-5-codex"),
    ] {
        let server = MockModelServer::with_replies(searching_model(found())).await;
        let (output, requests) = run_on(&agent_env(), &server, (provider, model), PROVIDER).await;
        assert_eq!(code(&output), 0, "{provider}: {}", stderr(&output));
        assert_eq!(requests.len(), 3, "{provider}: chat, search, chat");
        assert!(
            offered(&requests[0]).contains(&"web_search".to_owned()),
            "{provider}: {:?}",
            offered(&requests[0])
        );
        // The search is a request of its own to the provider, declaring its server tool.
        let search = &requests[1].body;
        let tool = &search["tools"][0];
        match provider {
            "anthropic" => {
                assert_eq!(tool["type"], "web_search_20250305", "{search}");
                assert_eq!(tool["name"], "web_search");
                assert_eq!(tool["allowed_domains"], json!(["rust-lang.org"]));
                assert!(tool["max_uses"].as_u64().is_some_and(|n| n > 0));
            }
            _ => {
                assert_eq!(tool["type"], "web_search", "{search}");
                assert_eq!(tool["filters"]["allowed_domains"], json!(["rust-lang.org"]));
                assert_eq!(search["include"], json!(["web_search_call.action.sources"]));
            }
        }
        assert_eq!(search["model"], model);
        assert_eq!(search["tools"].as_array().unwrap().len(), 1, "{search}");
        // What the provider found reaches the model as the tool's result.
        let result = tool_results(&requests[2]);
        for expected in [
            "[Announcing Rust 1.85.0](https://blog.rust-lang.org/2025/02/20/Rust-1.85.0/)",
            GUIDE,
            "The 2024 edition shipped with Rust 1.85.",
            "“shipped with Rust 1.85”",
            "searched with the web search of",
        ] {
            assert!(
                result.contains(expected),
                "{provider}: {expected} not in {result}"
            );
        }
        // Anthropic names every result; Responses' sources are bare links, named only when the
        // answer cites them.
        assert_eq!(
            result.contains("[Rust 2024 - The Rust Edition Guide]"),
            provider == "anthropic",
            "{provider}: {result}"
        );
        assert!(!result.starts_with("error:"), "{provider}: {result}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_the_provider_could_not_run_is_a_clear_tool_error() {
    let server = MockModelServer::with_replies(searching_model(WebSearch::failing(
        "rust 2024 edition release",
        "too_many_requests",
    )))
    .await;
    let (output, requests) = run_on(
        &agent_env(),
        &server,
        ("anthropic", "claude-sonnet-4-5"),
        PROVIDER,
    )
    .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(requests.len(), 3, "the model is told, and goes on");
    let result = tool_results(&requests[2]);
    assert!(result.starts_with("error:"), "{result}");
    assert!(result.contains("too_many_requests"), "{result}");
    assert!(result.contains("try again later"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_completions_model_has_no_web_search_without_a_service() {
    let turns = || [Turn::text("No search here.")];
    let server = MockModelServer::with_replies(turns()).await;
    let (output, requests) = run_on(&agent_env(), &server, ("openai", "gpt-4o-mini"), "").await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let tools = offered(&requests[0]);
    assert!(tools.contains(&"web_fetch".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"web_search".to_owned()), "{tools:?}");

    // The control: with a search service the same model is offered web_search.
    let server = MockModelServer::with_replies(turns()).await;
    let toml = "[web]\nsearch_url = \"http://127.0.0.1:9/search\"\n";
    let (output, requests) = run_on(&agent_env(), &server, ("openai", "gpt-4o-mini"), toml).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(offered(&requests[0]).contains(&"web_search".to_owned()));

    // Asking for the provider's search on it is a usage error naming the setting.
    let server = MockModelServer::with_replies(turns()).await;
    let toml = "[web]\nsearch = \"provider\"\n";
    let (output, requests) = run_on(&agent_env(), &server, ("openai", "gpt-4o-mini"), toml).await;
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("search = \"provider\""),
        "{}",
        stderr(&output)
    );
    assert!(requests.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_providers_search_counts_in_the_runs_tokens_and_cost() {
    use agent_test_support::mock_model::Usage;
    // The search reads pages: 20,000 tokens in, 500 out, at claude-sonnet-4's $3 / $15 per
    // million: $0.0675, and its one query's $0.01 fee, which the tool's message carries into
    // the trace's totals.
    let turns = vec![
        Turn::tool_call(
            "s1",
            "web_search",
            json!({"query": "rust 2024 edition release"}),
        ),
        Turn::text("It shipped with 1.85.")
            .with_web_search(found())
            .with_usage(Usage::new(20_000, 500)),
        Turn::text("Rust 1.85."),
    ];
    let server = MockModelServer::with_replies(turns).await;
    let env = agent_env();
    let (output, _) = run_on(&env, &server, ("anthropic", "claude-sonnet-4-5"), PROVIDER).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let searched = crate::logged_events(&env)
        .into_iter()
        .find(|event| {
            event["event"] == "message_added" && event["message"]["tool_name"] == "web_search"
        })
        .map(|event| event["message"].clone())
        .unwrap();
    let cost = searched["cost"].as_f64().unwrap();
    assert!((cost - 0.0775).abs() < 1e-9, "{searched}");
    assert!(searched["tokens"].as_u64().unwrap() > 20_500, "{searched}");
    assert!(
        searched["metadata"].get("tool_usage").is_none(),
        "taken out: {searched}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_does_not_assume_a_configured_base_url_searches() {
    // A proxy or an Anthropic-compatible server at a configured base URL may have no search:
    // `auto` offers none there (control: `search = "provider"` offers it, above).
    let server = MockModelServer::with_replies([Turn::text("No search here.")]).await;
    let (output, requests) = run_on(
        &agent_env(),
        &server,
        ("anthropic", "claude-sonnet-4-5"),
        "",
    )
    .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let tools = offered(&requests[0]);
    assert!(tools.contains(&"web_fetch".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"web_search".to_owned()), "{tools:?}");
}
