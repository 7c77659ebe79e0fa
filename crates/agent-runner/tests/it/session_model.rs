//! What a session sees of its runs besides the record: another model chosen for the next turns
//! (asked of the server and recorded on the trace), the notices of the model calls as they happen
//! (a rate-limited request retried), and how each tool call ended, recorded typed on its tool
//! message (a command's exit code, a refusal, a timeout) — against the mock model server
//! through the real OpenAI-compatible client.

use std::sync::Arc;

use agent_execution::meta::{MessageMeta, ToolOutcome};
use agent_execution::{InMemoryTraceStore, Role};
use agent_llm::{LlmClient, OpenAiClient, OpenAiConfig};
use agent_runner::{AgentRunner, Approval, Notice, RunnerOptions};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use agent_tools::{SandboxConfig, SandboxMode, ToolRegistry};
use serde_json::json;

/// A runner on `server` whose `bash` runs unconfined, approving as `approval` says.
fn runner_on(
    server: &MockModelServer,
    workspace: &std::path::Path,
    approval: Approval,
) -> AgentRunner {
    let config =
        OpenAiConfig::new(server.openai_base(), Some("sk-test".into())).with_streaming(false);
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(config).unwrap());
    let tools = ToolRegistry::with_builtins_in(SandboxConfig::new(SandboxMode::Off));
    let options = RunnerOptions::new("first-model", workspace).with_approval(approval);
    AgentRunner::new(Arc::new(InMemoryTraceStore::new()), llm, tools, options)
}

#[tokio::test]
async fn another_model_is_asked_from_the_next_turn_and_recorded_on_the_trace() {
    let server =
        MockModelServer::with_replies([Turn::text("One."), Turn::text("Two."), Turn::text("3.")])
            .await;
    let workspace = tempfile::tempdir().unwrap();
    let runner = runner_on(&server, workspace.path(), Approval::Allow);
    let first = runner.run("Say one thing").await.unwrap();
    runner
        .switch_model("other-model", Some(&first.trace_id))
        .await
        .unwrap();
    runner
        .continue_trace(&first.trace_id, "And another")
        .await
        .unwrap();
    // A new trace asks the new model too.
    runner.run("A new task").await.unwrap();
    let models: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(models, ["first-model", "other-model", "other-model"]);
    assert_eq!(runner.spec().model, "other-model");
    let trace = runner
        .store()
        .get_trace(&first.trace_id)
        .await
        .unwrap()
        .unwrap();
    let settings = trace.model_settings.unwrap();
    assert_eq!(settings.model.as_deref(), Some("other-model"));
}

#[tokio::test]
async fn a_rate_limited_request_is_a_notice_of_the_trace_whose_call_it_was() {
    let server = MockModelServer::with_replies([
        Reply::error(429, json!({"error": {"message": "slow down"}})),
        Reply::from(Turn::text("Done after a wait.")),
    ])
    .await;
    let workspace = tempfile::tempdir().unwrap();
    let runner = runner_on(&server, workspace.path(), Approval::Allow);
    let mut notices = runner.notices();
    let outcome = runner.run("Be patient").await.unwrap();
    assert_eq!(outcome.response.as_deref(), Some("Done after a wait."));
    let seen = notices.try_recv().unwrap();
    assert_eq!(seen.source, outcome.trace_id);
    let Notice::Retrying {
        rate_limited,
        attempt,
        error,
        ..
    } = &seen.notice
    else {
        panic!("{seen:?}");
    };
    assert!(rate_limited, "{seen:?}");
    assert_eq!(*attempt, 2);
    assert!(error.contains("slow down"), "{error}");
    assert!(notices.try_recv().is_err(), "one retry, one notice");
}

/// How the tool messages of a trace say their calls ended, in order.
async fn outcomes(runner: &AgentRunner, trace_id: &str) -> Vec<Option<ToolOutcome>> {
    let messages = runner.store().get_trace_messages(trace_id).await.unwrap();
    messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| MessageMeta::of(m).outcome)
        .collect()
}

#[tokio::test]
async fn each_tool_message_records_how_its_call_ended() {
    let server = MockModelServer::with_replies([
        Turn::tool_call("c1", "bash", json!({"command": "echo fine"})),
        Turn::tool_call("c2", "bash", json!({"command": "echo broken >&2; exit 3"})),
        Turn::tool_call(
            "c3",
            "bash",
            json!({"command": "sleep 5", "timeout_secs": 1}),
        ),
        Turn::tool_call("c4", "read_file", json!({"path": "missing.txt"})),
        Turn::text("Done."),
    ])
    .await;
    let workspace = tempfile::tempdir().unwrap();
    let runner = runner_on(&server, workspace.path(), Approval::Allow);
    let outcome = runner.run("Run them").await.unwrap();
    assert_eq!(
        outcomes(&runner, &outcome.trace_id).await,
        [
            Some(ToolOutcome::Exited { code: 0 }),
            Some(ToolOutcome::Exited { code: 3 }),
            Some(ToolOutcome::TimedOut),
            // A tool error says nothing more than its `is_error`.
            None,
        ]
    );

    // A call the approval policy refuses is recorded refused.
    let server = MockModelServer::with_replies([
        Turn::tool_call("c1", "bash", json!({"command": "touch made.txt"})),
        Turn::text("It was refused."),
    ])
    .await;
    let runner = runner_on(
        &server,
        workspace.path(),
        Approval::Refuse("nobody may run commands".into()),
    );
    let outcome = runner.run("Make a file").await.unwrap();
    assert_eq!(
        outcomes(&runner, &outcome.trace_id).await,
        [Some(ToolOutcome::Refused)]
    );
    assert!(!workspace.path().join("made.txt").exists());
}
