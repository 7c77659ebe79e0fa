//! Full compaction cannot fail for the reason it runs: a request made to fit first (a 2 MB tool
//! argument is shortened, not re-sent), valid on every provider (a transcript without tools), a summariser without text retried once and then given up with an event, and a trace
//! that failed by overflowing resumes.

use std::sync::Arc;

use agent_execution::{AssistantContent, EventKind, InMemoryTraceStore, NewMessage, NewTrace};
use agent_execution::{ToolCall, TraceOutcome, TraceStatus, TraceStore};
use agent_llm::{AnthropicClient, AnthropicConfig, LlmClient, OpenAiClient, OpenAiConfig};
use agent_runner::compaction::{COMPACTION_KEY, SUMMARY_PREFIX};
use agent_runner::{AgentRunner, Approval, RunnerOptions};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use agent_tools::ToolRegistry;
use serde_json::json;

/// The largest request body the mock's model takes, in bytes.
const WINDOW_BYTES: usize = 400_000;

fn openai(server: &MockModelServer) -> Arc<dyn LlmClient> {
    let config = OpenAiConfig::new(server.openai_base(), Some("sk-test".into()));
    Arc::new(OpenAiClient::new(config).unwrap())
}

fn anthropic(server: &MockModelServer) -> Arc<dyn LlmClient> {
    let config = AnthropicConfig::new(server.anthropic_base(), Some("sk-ant-test".into()));
    Arc::new(AnthropicClient::new(config).unwrap())
}

fn runner(
    store: Arc<InMemoryTraceStore>,
    llm: Arc<dyn LlmClient>,
    workspace: &std::path::Path,
    context_window: usize,
) -> AgentRunner {
    let mut options = RunnerOptions::new("mock-model", workspace).with_approval(Approval::Allow);
    options.context_window = Some(context_window);
    AgentRunner::new(store, llm, ToolRegistry::with_builtins(), options)
}

/// 2 MB of text a model might put in one tool argument.
fn two_megabytes() -> String {
    "The quick brown fox jumps over the lazy dog. ".repeat(2_000_000 / 45)
}

/// A trace whose last turn wrote 2 MB through `write_file`, stopped as the overflow left it.
async fn overflowed_trace(store: &InMemoryTraceStore) -> String {
    let trace = store
        .create_trace(NewTrace::agent("Write the log"))
        .await
        .unwrap();
    let id = trace.trace_id.clone();
    store
        .add_message(&id, NewMessage::user("Write the log"))
        .await
        .unwrap();
    let args = json!({"path": "log.txt", "content": two_megabytes()}).to_string();
    let call = ToolCall::new("call_big", "write_file", args);
    let turn = AssistantContent::new(None, vec![call]);
    store
        .add_message(&id, NewMessage::assistant(turn))
        .await
        .unwrap();
    let result = NewMessage::tool("call_big", "write_file", "Wrote 2000000 bytes to log.txt");
    store.add_message(&id, result).await.unwrap();
    let failed = TraceOutcome::failed("model error: the context window is exceeded");
    store.finish_trace(&id, failed).await.unwrap();
    id
}

fn assert_all_fit(server: &MockModelServer) {
    for request in server.requests() {
        let size = request.body.to_string().len();
        assert!(
            size <= WINDOW_BYTES,
            "request {} has {size} bytes",
            request.index
        );
    }
}

#[tokio::test]
async fn a_two_megabyte_tool_argument_is_compacted_without_overflowing() {
    let workspace = tempfile::tempdir().unwrap();
    let server = MockModelServer::with_replies([
        Turn::tool_call(
            "call_big",
            "write_file",
            json!({"path": "log.txt", "content": two_megabytes()}),
        ),
        Turn::text("The log was written: 2 MB of the pangram."),
        Turn::text("Done: log.txt holds the text."),
    ])
    .await;
    server.limit_context(WINDOW_BYTES);
    let store = Arc::new(InMemoryTraceStore::new());
    // The estimate knows the window, so the compaction comes before the call that would overflow.
    let runner = runner(store.clone(), openai(&server), workspace.path(), 100_000);
    let outcome = runner.run("Write the log").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("log.txt"))
            .unwrap()
            .len(),
        two_megabytes().len()
    );
    assert_all_fit(&server);

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let summary_request = requests[1].body.to_string();
    assert!(
        summary_request.contains("_cut"),
        "the argument was shortened with a marker"
    );
    assert!(summary_request.contains("bytes cut to fit the summary request"));
    let messages = store.get_trace_messages(&outcome.trace_id).await.unwrap();
    let summary = messages
        .iter()
        .find(|m| m.metadata.contains_key(COMPACTION_KEY))
        .unwrap();
    assert!(summary.content.text().starts_with(SUMMARY_PREFIX));
    // The last call sees the summary, not the 2 MB.
    assert!(requests[2].body.to_string().contains("The log was written"));
}

#[tokio::test]
async fn a_provider_that_refuses_the_window_gets_a_summary_request_it_takes() {
    let workspace = tempfile::tempdir().unwrap();
    let server = MockModelServer::with_replies([
        Turn::text("Summary: the log holds 2 MB."),
        Turn::text("Finished."),
    ])
    .await;
    server.limit_context(WINDOW_BYTES);
    let store = Arc::new(InMemoryTraceStore::new());
    let id = overflowed_trace(&store).await;
    // The configured window is far too large: only the provider's refusal says it is too long.
    let runner = runner(store.clone(), openai(&server), workspace.path(), 50_000_000);
    let outcome = runner.resume(&id).await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let requests = server.requests();
    assert!(
        requests[0].body.to_string().len() > WINDOW_BYTES,
        "the first view was refused"
    );
    let rest: Vec<usize> = requests[1..]
        .iter()
        .map(|r| r.body.to_string().len())
        .collect();
    assert!(rest.iter().all(|size| *size <= WINDOW_BYTES), "{rest:?}");
    assert_eq!(outcome.response.as_deref(), Some("Finished."));
}

#[tokio::test]
async fn a_trace_that_failed_by_overflowing_resumes_on_anthropic() {
    let workspace = tempfile::tempdir().unwrap();
    let server = MockModelServer::with_replies([
        Turn::text("Summary: log.txt was written with 2 MB."),
        Turn::text("Finished."),
    ])
    .await;
    server.limit_context(WINDOW_BYTES);
    let store = Arc::new(InMemoryTraceStore::new());
    let id = overflowed_trace(&store).await;
    let runner = runner(store.clone(), anthropic(&server), workspace.path(), 100_000);
    let outcome = runner.resume(&id).await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    assert_all_fit(&server);
    let summary = &server.requests()[0].body;
    // Anthropic refuses tool blocks in a request without tools: the summary request has
    // neither, the conversation travels as a transcript.
    assert!(!summary.to_string().contains("tool_use"), "{summary}");
    assert!(
        summary
            .get("tools")
            .is_none_or(|t| t.as_array().unwrap().is_empty())
    );
    assert!(summary.to_string().contains("assistant call: write_file("));
}

#[tokio::test]
async fn a_summariser_without_text_is_retried_then_given_up_with_an_event() {
    let workspace = tempfile::tempdir().unwrap();
    let server = MockModelServer::with_replies([
        // Two summary attempts that only call a tool.
        Turn::tool_call("s1", "read_progress", json!({})),
        Turn::tool_call("s2", "read_progress", json!({})),
        // The run goes on with the pruned view.
        Turn::text("Finished anyway."),
    ])
    .await;
    let store = Arc::new(InMemoryTraceStore::new());
    let id = overflowed_trace(&store).await;
    let runner = runner(store.clone(), openai(&server), workspace.path(), 100_000);
    let outcome = runner.resume(&id).await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let retry = requests[1].body.to_string();
    assert!(
        retry.contains("without calling any tool"),
        "the retry says what was wrong"
    );
    let messages = store.get_trace_messages(&id).await.unwrap();
    assert!(
        !messages
            .iter()
            .any(|m| m.metadata.contains_key(COMPACTION_KEY)),
        "no empty summary hides the history"
    );
    let events = store.get_events(&id, 0).await.unwrap();
    assert!(
        events
            .iter()
            .any(|e| matches!(e.kind, EventKind::CompactionFailed { .. }))
    );
}

/// A streamed text answer cut at the length limit.
fn cut_summary(text: &str) -> Reply {
    let mut chunks = Turn::text(text).openai_chunks();
    for chunk in &mut chunks {
        if let Some(choice) = chunk["choices"].get_mut(0)
            && !choice["finish_reason"].is_null()
        {
            choice["finish_reason"] = json!("length");
        }
    }
    Reply::openai_stream(&chunks)
}

#[tokio::test]
async fn a_summary_cut_at_its_cap_is_asked_again_shorter() {
    let workspace = tempfile::tempdir().unwrap();
    let server = MockModelServer::with_replies([
        // A small model echoing its template until the cap: not a summary.
        cut_summary("<start_of_turn>user <start_of_turn>user <start_of_turn>user"),
        Reply::from(Turn::text("Summary: the log was written.")),
        Reply::from(Turn::text("Finished.")),
    ])
    .await;
    let store = Arc::new(InMemoryTraceStore::new());
    let id = overflowed_trace(&store).await;
    let runner = runner(store.clone(), openai(&server), workspace.path(), 100_000);
    let outcome = runner.resume(&id).await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // Each summary request is capped: an eighth of the window, at most 8,192 tokens.
    assert_eq!(requests[0].body["max_tokens"], 8192);
    assert_eq!(requests[1].body["max_tokens"], 8192);
    assert!(
        requests[1]
            .body
            .to_string()
            .contains("Write a much shorter one"),
        "the retry says what was wrong"
    );
    let messages = store.get_trace_messages(&id).await.unwrap();
    let summaries: Vec<_> = messages
        .iter()
        .filter(|m| m.metadata.contains_key(COMPACTION_KEY))
        .collect();
    assert_eq!(summaries.len(), 1);
    assert!(summaries[0].content.text().contains("the log was written"));
    assert!(!summaries[0].content.text().contains("start_of_turn"));
}

#[tokio::test]
async fn a_summary_cut_twice_is_not_stored() {
    let workspace = tempfile::tempdir().unwrap();
    let server = MockModelServer::with_replies([
        cut_summary("<start_of_turn>user <start_of_turn>user"),
        cut_summary("<start_of_turn>user"),
        Reply::from(Turn::text("Finished anyway.")),
    ])
    .await;
    let store = Arc::new(InMemoryTraceStore::new());
    let id = overflowed_trace(&store).await;
    let runner = runner(store.clone(), openai(&server), workspace.path(), 100_000);
    let outcome = runner.resume(&id).await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let messages = store.get_trace_messages(&id).await.unwrap();
    assert!(
        !messages
            .iter()
            .any(|m| m.metadata.contains_key(COMPACTION_KEY)),
        "no cut summary hides the history"
    );
    let events = store.get_events(&id, 0).await.unwrap();
    assert!(
        events.iter().any(|e| matches!(&e.kind,
            EventKind::CompactionFailed { reason } if reason.contains("length limit"))),
        "{events:?}"
    );
}

/// A finished trace of `turns` exchanges after its task, each question carrying `bytes` of
/// notes, and a last question not answered yet.
async fn long_conversation(store: &InMemoryTraceStore, turns: usize, bytes: usize) -> String {
    let trace = store
        .create_trace(NewTrace::agent("Keep notes"))
        .await
        .unwrap();
    let id = trace.trace_id.clone();
    store
        .add_message(&id, NewMessage::user("Keep notes"))
        .await
        .unwrap();
    for turn in 0..turns {
        let notes = format!("notes of turn {turn}: {}", "n".repeat(bytes));
        store
            .add_message(&id, NewMessage::user(notes))
            .await
            .unwrap();
        let answer = AssistantContent::new(Some(format!("Noted turn {turn}.")), Vec::new());
        store
            .add_message(&id, NewMessage::assistant(answer))
            .await
            .unwrap();
    }
    let last = NewMessage::user("What was the last turn?");
    store.add_message(&id, last).await.unwrap();
    let failed = TraceOutcome::failed("model error: interrupted");
    store.finish_trace(&id, failed).await.unwrap();
    id
}

#[tokio::test]
async fn a_refused_request_without_a_summary_leaves_out_the_oldest_exchanges_and_goes_on() {
    let workspace = tempfile::tempdir().unwrap();
    let server = MockModelServer::with_replies([
        // The summariser's two attempts are cut: no summary.
        cut_summary("<start_of_turn>user <start_of_turn>user"),
        cut_summary("<start_of_turn>user"),
        Reply::from(Turn::text("The last turn was turn 7.")),
    ])
    .await;
    // Eight turns of 6 KB: about 48 KB, in a window of 40 KB that the refusal states.
    server.limit_context(40_000);
    let store = Arc::new(InMemoryTraceStore::new());
    let id = long_conversation(&store, 8, 6_000).await;
    let before = store.get_trace_messages(&id).await.unwrap().len();
    // The configured window is far too large: only the refusal tells the real one.
    let runner = runner(store.clone(), openai(&server), workspace.path(), 1_000_000);
    let outcome = runner.resume(&id).await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    assert_eq!(
        outcome.response.as_deref(),
        Some("The last turn was turn 7.")
    );
    let requests = server.requests();
    let last = requests.last().unwrap().body.to_string();
    assert!(last.len() <= 40_000, "the retry has {} bytes", last.len());
    // The oldest exchanges went; the task, the newest exchanges and the question stayed.
    assert!(!last.contains("notes of turn 0"), "{}", &last[..400]);
    assert!(last.contains("Keep notes"));
    assert!(last.contains("notes of turn 7"));
    assert!(last.contains("What was the last turn?"));
    // The trace keeps them all, and says what was left out.
    let messages = store.get_trace_messages(&id).await.unwrap();
    assert_eq!(messages.len(), before + 1);
    let events = store.get_events(&id, 0).await.unwrap();
    assert!(
        events.iter().any(|e| matches!(&e.kind,
            EventKind::Notice { kind: agent_execution::NoticeKind::ContextLeftOut, message, .. }
                if message.contains("oldest messages are left out"))),
        "{events:?}"
    );
}
