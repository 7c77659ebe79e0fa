//! Prompt caching at the request level: the runner talks to a mock model server through the
//! real OpenAI-compatible and Anthropic clients, and the test reads the requests it sent. While
//! the plan is unchanged each request starts with the previous one byte for byte; when the plan
//! changes only what follows the static system prompt differs; Anthropic requests carry the
//! cache breakpoints; cache reads are recorded and priced at the cached-input rate.

use std::sync::Arc;

use agent_execution::{InMemoryTraceStore, Role, TraceStatus, TraceStore};
use agent_llm::{AnthropicClient, AnthropicConfig, LlmClient, OpenAiClient, OpenAiConfig};
use agent_runner::{AgentRunner, RunnerOptions, USAGE_KEY};
use agent_test_support::mock_model::{MockModelServer, Turn, Usage};
use agent_tools::ToolRegistry;
use serde_json::{Value, json};

/// The bodies of the requests the server received.
fn bodies(server: &MockModelServer) -> Vec<Value> {
    server.requests().into_iter().map(|r| r.body).collect()
}

/// The scripted turns as the model's answers, each reporting `usage(index)`.
fn answers(prefix: &str, usage: impl Fn(usize) -> Usage) -> Vec<Turn> {
    turns()
        .into_iter()
        .enumerate()
        .map(|(index, turn)| {
            let answer = match turn {
                Ok((name, args)) => Turn::tool_call(format!("{prefix}_{index}"), name, args),
                Err(text) => Turn::text(text),
            };
            answer.with_usage(usage(index))
        })
        .collect()
}

/// The turns of the run, as `(tool name, arguments)` or a final text.
fn turns() -> Vec<Result<(&'static str, Value), &'static str>> {
    vec![
        Ok(("goal", json!({"add": "Read the notes", "focus": "1"}))),
        Ok(("read_file", json!({"path": "a.txt"}))),
        Ok(("read_file", json!({"path": "b.txt"}))),
        Ok(("goal", json!({"done": "a.txt and b.txt read"}))),
        Err("a.txt says alpha, b.txt says beta."),
    ]
}

/// Whether the plan changed between request `i - 1` and request `i`: the goal calls are turns
/// 1 and 4, so requests 2 and 5 (indexes 1 and 4) see a new plan.
fn plan_changed_before(index: usize) -> bool {
    index == 1 || index == 4
}

const STATIC_PROMPT: &str = "You are a careful agent. These instructions never change.";

#[tokio::test]
async fn openai_compatible_requests_keep_a_byte_identical_prefix_while_the_plan_is_unchanged() {
    // 10,000 prompt tokens a turn, 8,000 of them read from the cache after the first.
    let answers = answers("call", |index| {
        let cached = if index == 0 { 0 } else { 8_000 };
        Usage::new(10_000 - cached, 100).with_cache_read(cached)
    });
    let server = MockModelServer::with_replies(answers).await;
    let config =
        OpenAiConfig::new(server.openai_base(), Some("sk-test".into())).with_streaming(false);
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(config).unwrap());
    let (store, trace_id) = run_with_prompt(llm, "gpt-4o").await;

    let requests = bodies(&server);
    assert_eq!(requests.len(), 5);
    for (index, pair) in requests.windows(2).enumerate() {
        let (before, after) = (&pair[0], &pair[1]);
        assert_eq!(
            before["tools"], after["tools"],
            "the tool specs never change"
        );
        let before_messages = before["messages"].as_array().unwrap();
        let after_messages = after["messages"].as_array().unwrap();
        let system = |messages: &[Value]| messages[0]["content"].as_str().unwrap().to_owned();
        // One system message: the prompt, a blank line, the plan.
        assert!(system(after_messages).starts_with(&format!("{STATIC_PROMPT}\n\n## Current Plan")));
        if plan_changed_before(index + 1) {
            assert_ne!(system(before_messages), system(after_messages));
        } else {
            // The whole previous request is the start of this one, byte for byte.
            assert_eq!(
                serde_json::to_string(&after_messages[..before_messages.len()]).unwrap(),
                serde_json::to_string(before_messages).unwrap(),
                "request {} does not start with request {index}",
                index + 1
            );
        }
    }

    // Cache reads are recorded with each turn and priced at the cached-input rate of gpt-4o
    // ($2.50 input, $1.25 cached input, $10 output per million tokens).
    let messages = store.get_trace_messages(&trace_id).await.unwrap();
    let turns: Vec<_> = messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .collect();
    assert_eq!(turns[0].metadata[USAGE_KEY]["cached_tokens"], 0);
    assert_eq!(turns[1].metadata[USAGE_KEY]["cached_tokens"], 8_000);
    let uncached = (10_000.0 * 2.50 + 100.0 * 10.0) / 1e6;
    let cached = (2_000.0 * 2.50 + 8_000.0 * 1.25 + 100.0 * 10.0) / 1e6;
    assert!((turns[0].cost.unwrap() - uncached).abs() < 1e-12);
    assert!((turns[1].cost.unwrap() - cached).abs() < 1e-12);
}

#[tokio::test]
async fn anthropic_requests_mark_the_tools_the_static_prompt_and_the_newest_message() {
    let answers = answers("toolu", |index| {
        let (read, written) = if index == 0 { (0, 3_000) } else { (3_000, 150) };
        Usage::new(200, 20)
            .with_cache_read(read)
            .with_cache_write(written)
    });
    let server = MockModelServer::with_replies(answers).await;
    let config =
        AnthropicConfig::new(server.anthropic_base(), Some("sk-ant".into())).with_streaming(false);
    let llm: Arc<dyn LlmClient> = Arc::new(AnthropicClient::new(config).unwrap());
    let (store, trace_id) = run_with_prompt(llm, "claude-sonnet-4-5").await;

    let marker = json!({"type": "ephemeral"});
    let requests = bodies(&server);
    assert_eq!(requests.len(), 5);
    for (index, request) in requests.iter().enumerate() {
        let system = request["system"].as_array().unwrap();
        assert_eq!(system.len(), 2, "the prompt and the plan are two blocks");
        assert_eq!(
            system[0],
            json!({"type": "text", "text": STATIC_PROMPT, "cache_control": marker})
        );
        assert!(
            system[1]["text"]
                .as_str()
                .unwrap()
                .starts_with("## Current Plan")
        );
        assert!(
            system[1].get("cache_control").is_none(),
            "the plan is not cached"
        );
        let tools = request["tools"].as_array().unwrap();
        assert_eq!(tools.last().unwrap()["cache_control"], marker);
        assert!(
            tools[..tools.len() - 1]
                .iter()
                .all(|t| t.get("cache_control").is_none())
        );
        let messages = request["messages"].as_array().unwrap();
        let newest = messages.last().unwrap()["content"].as_array().unwrap();
        assert_eq!(newest.last().unwrap()["cache_control"], marker);
        assert_eq!(
            request.to_string().matches("cache_control").count(),
            3,
            "request {index}"
        );
        if index > 0 {
            let before = &requests[index - 1];
            assert_eq!(before["tools"], request["tools"]);
            assert_eq!(before["system"][0], request["system"][0]);
            assert_eq!(
                before["system"][1] == request["system"][1],
                !plan_changed_before(index),
                "request {index}"
            );
        }
    }

    // Cache reads and writes count as prompt tokens; reads are priced at the cached rate of
    // claude-sonnet-4 ($3 input, $0.30 cached input, $15 output per million tokens).
    let messages = store.get_trace_messages(&trace_id).await.unwrap();
    let second = messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .nth(1)
        .unwrap();
    assert_eq!(
        second.metadata[USAGE_KEY],
        json!({"prompt_tokens": 3_350, "completion_tokens": 20, "cached_tokens": 3_000})
    );
    let expected = (350.0 * 3.0 + 3_000.0 * 0.30 + 20.0 * 15.0) / 1e6;
    assert!((second.cost.unwrap() - expected).abs() < 1e-12);
}

/// [`run`] with a fixed system prompt.
async fn run_with_prompt(
    llm: Arc<dyn LlmClient>,
    model: &str,
) -> (Arc<InMemoryTraceStore>, String) {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(workspace.path().join("b.txt"), "beta\n").unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let mut options = RunnerOptions::new(model, workspace.path())
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    options.system_prompt = STATIC_PROMPT.to_owned();
    let runner = AgentRunner::new(store.clone(), llm, ToolRegistry::with_builtins(), options);
    let outcome = runner.run("Read the notes and report").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    (store, outcome.trace_id)
}
