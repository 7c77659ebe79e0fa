//! Reasoning through whole runs: the runner talks to mock servers that refuse a tool-use turn
//! sent back without its reasoning (DeepSeek's thinking mode, Anthropic's extended thinking),
//! so a run completes only when the reasoning goes back as it came; the stored assistant
//! message keeps it apart from its text.

use std::sync::Arc;

use agent_execution::{InMemoryTraceStore, Reasoning, Role, TraceStatus, TraceStore};
use agent_llm::{AnthropicClient, AnthropicConfig, LlmClient, OpenAiClient, OpenAiConfig};
use agent_runner::{AgentRunner, RunnerOptions};
use agent_test_support::mock_model::{
    DEFAULT_REASONING, MockModelServer, Turn, thinking_signature,
};
use agent_tools::ToolRegistry;
use serde_json::json;

/// Runs "read a.txt" and returns the stored assistant messages' reasoning and texts.
async fn run(
    llm: Arc<dyn LlmClient>,
    model: &str,
    configure: impl FnOnce(&mut RunnerOptions),
) -> Vec<(Vec<Reasoning>, String)> {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("a.txt"), "alpha\n").unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let mut options = RunnerOptions::new(model, workspace.path());
    configure(&mut options);
    let runner = AgentRunner::new(store.clone(), llm, ToolRegistry::with_builtins(), options);
    let outcome = runner.run("What does a.txt say?").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    store
        .get_trace_messages(&outcome.trace_id)
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| {
            let turn = m.content.as_assistant().unwrap();
            (turn.reasoning.clone(), m.content.text().to_owned())
        })
        .collect()
}

fn read_a(id: &str) -> Turn {
    Turn::tool_call(id, "read_file", json!({"path": "a.txt"}))
}

#[tokio::test]
async fn a_deepseek_thinking_run_sends_reasoning_content_back_and_stores_it() {
    let server = MockModelServer::deepseek_thinking().await;
    server.push(read_a("call_1").with_reasoning("I should read a.txt."));
    server.push(Turn::text("It says alpha."));
    let config = OpenAiConfig::new(server.openai_base(), Some("sk-test".into()));
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(config).unwrap());
    let effort = |options: &mut RunnerOptions| {
        options.reasoning_effort = Some(agent_llm::ReasoningEffort::High)
    };
    let assistant = run(llm, "deepseek-reasoner", effort).await;

    let thought = |text: &str| Reasoning::Text {
        field: "reasoning_content".into(),
        text: text.into(),
    };
    assert_eq!(
        assistant[0],
        (vec![thought("I should read a.txt.")], String::new())
    );
    assert_eq!(
        assistant[1],
        (
            vec![thought(DEFAULT_REASONING)],
            "It says alpha.".to_owned()
        )
    );
    let second = &server.requests()[1].body;
    assert_eq!(second["reasoning_effort"], "high");
    let sent = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(sent["reasoning_content"], "I should read a.txt.");
}

#[tokio::test]
async fn an_anthropic_thinking_run_sends_signed_thinking_back_first_and_stores_it() {
    let server = MockModelServer::start().await;
    server.push(read_a("toolu_1").with_reasoning("I should read a.txt."));
    server.push(Turn::text("It says alpha.").with_reasoning("Done."));
    let config = AnthropicConfig::new(server.anthropic_base(), Some("sk-ant".into()));
    let llm: Arc<dyn LlmClient> = Arc::new(AnthropicClient::new(config).unwrap());
    let budget = |options: &mut RunnerOptions| options.thinking_budget = Some(2_048);
    let assistant = run(llm, "claude-sonnet-4-5", budget).await;

    assert_eq!(
        assistant[0].0,
        [Reasoning::Thinking {
            thinking: "I should read a.txt.".into(),
            signature: thinking_signature("I should read a.txt."),
        }]
    );
    assert_eq!(assistant[1].1, "It says alpha.");
    let second = &server.requests()[1].body;
    assert_eq!(second["thinking"]["budget_tokens"], 2_048);
    let turn = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(turn["content"][0]["type"], "thinking");
    assert_eq!(turn["content"][1]["type"], "tool_use");
}
