//! What real model servers with small windows showed: the tool specs count in every estimate,
//! compaction always shrinks the request (a summariser without tools, each retry smaller than
//! the refused request, or a clear error naming the window), `max_iterations` bounds the model
//! calls of the whole run, sub-traces included, and an answer cut at the length limit is
//! continued, then ends the run `truncated`.

use std::sync::Arc;

use agent_execution::{InMemoryTraceStore, TraceStatus, TraceStore};
use agent_llm::{ChatMessage, LlmClient, OpenAiClient, OpenAiConfig, ScriptedClient, ScriptedTurn};
use agent_runner::compaction::TOKENS_BEFORE_KEY;
use agent_runner::continuation::{CONTINUATION_KEY, CONTINUE_PROMPT};
use agent_runner::{AgentRunner, Approval, RunnerOptions, StopReason};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use agent_tools::ToolRegistry;
use serde_json::json;

fn runner(
    llm: Arc<dyn LlmClient>,
    workspace: &std::path::Path,
    configure: impl FnOnce(&mut RunnerOptions),
) -> (Arc<InMemoryTraceStore>, AgentRunner) {
    let store = Arc::new(InMemoryTraceStore::new());
    let mut options = RunnerOptions::new("mock-model", workspace).with_approval(Approval::Allow);
    configure(&mut options);
    let runner = AgentRunner::new(store.clone(), llm, ToolRegistry::with_builtins(), options);
    (store, runner)
}

fn openai(server: &MockModelServer) -> Arc<dyn LlmClient> {
    let config = OpenAiConfig::new(server.openai_base(), Some("sk-test".into()));
    Arc::new(OpenAiClient::new(config).unwrap())
}

fn printed_words(n: usize) -> ScriptedTurn {
    let command = format!("for i in $(seq {n}); do printf 'word%d ' $i; done");
    ScriptedTurn::tool_call("bash", json!({ "command": command }))
}

/// The first request of a run of `task` with a window large enough for anything: its tool
/// specs' and messages' estimates.
async fn first_request(task: &str) -> (usize, usize) {
    let workspace = tempfile::tempdir().unwrap();
    let llm = Arc::new(ScriptedClient::new(vec![
        printed_words(WORDS),
        ScriptedTurn::text("Done."),
    ]));
    let (_, runner) = runner(llm.clone(), workspace.path(), |_| {});
    runner.run(task).await.unwrap();
    let requests = llm.requests();
    let tools = agent_llm::estimate_tools_tokens(&requests[0].tools);
    let messages = agent_llm::estimate_messages_tokens(&requests[1].messages);
    (tools, messages)
}

/// The words the step of the compaction tests prints: a result large enough that a summary
/// can bring the request under the compaction threshold.
const WORDS: usize = 600;

#[tokio::test]
async fn the_budget_counts_the_tool_specs_so_a_small_window_compacts_in_time() {
    let task = "Print words";
    let (tools, messages) = first_request(task).await;
    // A window whose compaction threshold the messages alone stay below, but not the messages
    // with the tool specs: the run compacts before the server would refuse it.
    let window = ((messages + tools * 8 / 10) as f64 / 0.7) as usize;
    assert!(messages < window * 7 / 10 && messages + tools > window * 7 / 10);
    let workspace = tempfile::tempdir().unwrap();
    let llm = Arc::new(ScriptedClient::new(vec![
        printed_words(WORDS),
        ScriptedTurn::text("Summary: we printed fifty words."),
        ScriptedTurn::text("Done."),
    ]));
    let (store, runner) = runner(llm.clone(), workspace.path(), |o| {
        o.context_window = Some(window)
    });
    let outcome = runner.run(task).await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let requests = llm.requests();
    assert_eq!(requests.len(), 3);
    let summary = &requests[1];
    assert!(
        summary.tools.is_empty(),
        "the summariser is offered no tool"
    );
    let Some(ChatMessage::User(ask)) = summary.messages.last() else {
        panic!("the summary request ends with the request");
    };
    assert!(ask.contains("Provide a detailed prompt"), "{ask}");
    // Smaller than the request it stands for, whose estimate counts the tool specs.
    let summary_size = agent_llm::estimate_request_tokens(summary);
    let stored = store.get_trace_messages(&outcome.trace_id).await.unwrap();
    let stored = stored
        .iter()
        .find(|m| m.metadata.contains_key("compaction"));
    let before = stored.unwrap().metadata[TOKENS_BEFORE_KEY]
        .as_u64()
        .unwrap() as usize;
    assert!(before > tools, "{before} {tools}");
    assert!(summary_size < before, "{summary_size} < {before}");
}

#[tokio::test]
async fn a_window_too_small_for_the_tools_and_the_prompt_stops_with_the_setting_to_change() {
    let workspace = tempfile::tempdir().unwrap();
    let llm = Arc::new(ScriptedClient::new(vec![ScriptedTurn::text("Never sent.")]));
    let (_, runner) = runner(llm.clone(), workspace.path(), |o| {
        o.context_window = Some(1_000)
    });
    let outcome = runner.run("Do it").await.unwrap();
    assert_eq!(outcome.stop, StopReason::WindowTooSmall, "{outcome:?}");
    assert_eq!(outcome.status, TraceStatus::Failed);
    let error = outcome.error.unwrap();
    // The parts, their sizes, the window and where it came from, and what to do.
    assert!(
        error.contains("does not fit the model's window of 1,000 tokens (from the configuration")
            && error.contains("tool specs")
            && error.contains("the system prompt")
            && error.contains("offer fewer tools")
            && error.contains("--context-window"),
        "{error}"
    );
    assert!(llm.requests().is_empty(), "no request was sent");
}

#[tokio::test]
async fn a_refusal_that_states_a_window_too_small_for_the_floor_stops_at_once() {
    let workspace = tempfile::tempdir().unwrap();
    let probe = MockModelServer::with_replies([Turn::text("ok")]).await;
    let (_, probe_runner) = runner(openai(&probe), workspace.path(), |_| {});
    probe_runner.run("Count").await.unwrap();
    let first = probe.requests()[0].body.to_string().len();

    // The refusal names the server's window: smaller than what every request carries, so no
    // summary is asked for, and the error names the window the refusal stated.
    let server = MockModelServer::with_replies([Turn::text("Never reached.")]).await;
    server.limit_context(first - 200);
    let (store, runner) = runner(openai(&server), workspace.path(), |_| {});
    let outcome = runner.run("Count").await.unwrap();
    assert_eq!(outcome.stop, StopReason::WindowTooSmall, "{outcome:?}");
    let error = outcome.error.unwrap();
    let stated = (first - 200) / 4;
    let stated = format!("{},{:03}", stated / 1000, stated % 1000);
    assert!(
        error.contains(&format!(
            "window of {stated} tokens (from the server's refusal"
        )),
        "{error}"
    );
    assert_eq!(server.request_count(), 1, "only the refused request");
    let events = store.get_events(&outcome.trace_id, 0).await.unwrap();
    assert!(
        events.iter().any(|e| matches!(&e.kind,
            agent_execution::EventKind::Notice { kind: agent_execution::NoticeKind::ContextWindow,
                message, .. } if message.contains("refused"))),
        "the learned window is told: {events:?}"
    );
}

#[tokio::test]
async fn a_retry_that_would_not_be_smaller_than_the_refused_request_is_not_sent() {
    let workspace = tempfile::tempdir().unwrap();
    // A server whose window is smaller than the tool specs and the prompt, and whose refusal
    // does not say it: compaction cannot help, and the run says so instead of sending the
    // same request again.
    let windowless = json!({"error": {"code": 400, "type": "exceed_context_size_error",
        "message": "the request exceeds the available context size, try increasing it"}});
    let server = MockModelServer::with_replies([
        Reply::error(400, windowless),
        Reply::from(Turn::text("Summary: nothing was done yet.")),
        Reply::from(Turn::text("Never reached.")),
    ])
    .await;
    let (_, runner) = runner(openai(&server), workspace.path(), |_| {});
    let outcome = runner.run("Count").await.unwrap();
    assert_eq!(outcome.stop, StopReason::WindowTooSmall, "{outcome:?}");
    let error = outcome.error.unwrap();
    assert!(error.contains("--context-window"), "{error}");
    let requests = server.requests();
    let sizes: Vec<usize> = requests.iter().map(|r| r.body.to_string().len()).collect();
    assert_eq!(
        sizes.len(),
        2,
        "the refused request and the summary request: {sizes:?}"
    );
    assert!(sizes[1] < sizes[0], "{sizes:?}");
    let summary = &requests[1].body;
    assert!(
        summary
            .get("tools")
            .is_none_or(|t| t.as_array().unwrap().is_empty())
    );
}

#[tokio::test]
async fn delegates_inside_delegates_share_the_run_s_max_iterations() {
    let workspace = tempfile::tempdir().unwrap();
    let server = MockModelServer::start().await;
    // A model that delegates whatever it is asked, as small models did.
    server.when_empty(|_| Turn::tool_call("d1", "delegate", json!({"task": "Do the task"})).into());
    let (store, runner) = runner(openai(&server), workspace.path(), |o| {
        *o = o.clone().with_sub_agents().with_max_iterations(4);
    });
    let outcome = runner.run("Do the task").await.unwrap();
    assert_eq!(outcome.stop, StopReason::MaxIterations, "{outcome:?}");
    assert_eq!(
        server.request_count(),
        4,
        "the run made 4 model calls in all"
    );
    let traces = store.list_traces(&Default::default()).await.unwrap();
    assert!(traces.len() >= 2, "the delegates ran");
}

fn cut(text: &str) -> ScriptedTurn {
    ScriptedTurn {
        finish_reason: Some("length".into()),
        ..ScriptedTurn::text(text)
    }
}

#[tokio::test]
async fn a_cut_answer_is_continued_and_joined() {
    let workspace = tempfile::tempdir().unwrap();
    let llm = Arc::new(ScriptedClient::new(vec![
        cut("The answer is in two"),
        ScriptedTurn::text(" parts."),
    ]));
    let (store, runner) = runner(llm.clone(), workspace.path(), |_| {});
    let outcome = runner.run("Answer").await.unwrap();
    assert_eq!(outcome.stop, StopReason::Completed, "{outcome:?}");
    assert_eq!(
        outcome.response.as_deref(),
        Some("The answer is in two parts.")
    );
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1].messages.last(),
        Some(&ChatMessage::user(CONTINUE_PROMPT))
    );
    let messages = store.get_trace_messages(&outcome.trace_id).await.unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m.metadata.contains_key(CONTINUATION_KEY))
    );
}

#[tokio::test]
async fn an_answer_still_cut_after_two_continuations_ends_the_run_truncated() {
    let workspace = tempfile::tempdir().unwrap();
    let llm = Arc::new(ScriptedClient::new(vec![
        cut("One, "),
        cut("two, "),
        cut("three"),
        ScriptedTurn::text("Never asked."),
    ]));
    let (_, runner) = runner(llm.clone(), workspace.path(), |_| {});
    let outcome = runner.run("Count").await.unwrap();
    assert_eq!(outcome.stop, StopReason::Truncated, "{outcome:?}");
    assert_eq!(outcome.status, TraceStatus::Failed);
    assert_eq!(outcome.response.as_deref(), Some("One, two, three"));
    assert!(outcome.error.unwrap().starts_with("truncated:"));
    assert_eq!(llm.requests().len(), 3);
}

/// The OpenAI stream of a text answer cut at the length limit, as llama.cpp's server sends it.
pub(crate) fn cut_stream(text: &str) -> Reply {
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
async fn a_length_finish_on_the_wire_is_continued() {
    let workspace = tempfile::tempdir().unwrap();
    let server =
        MockModelServer::with_replies([cut_stream("Half an"), Reply::from(Turn::text(" answer."))])
            .await;
    let (_, runner) = runner(openai(&server), workspace.path(), |_| {});
    let outcome = runner.run("Answer").await.unwrap();
    assert_eq!(
        outcome.response.as_deref(),
        Some("Half an answer."),
        "{outcome:?}"
    );
    assert_eq!(server.request_count(), 2);
}
