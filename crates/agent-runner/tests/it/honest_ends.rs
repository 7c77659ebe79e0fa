//! Runs end honestly: an empty final answer is asked again once, then ends the run with its own
//! stop reason, failed; a server whose prompt counts show it drops the tool specs or the tool
//! results is told once, as a notice on the trace.

use std::sync::Arc;

use agent_execution::{EventKind, InMemoryTraceStore, NoticeKind, TraceStatus, TraceStore};
use agent_llm::{LlmClient, ScriptedClient, ScriptedTurn, Usage};
use agent_runner::{AgentRunner, Approval, RunnerOptions, StopReason};
use agent_tools::ToolRegistry;
use serde_json::json;

fn runner(
    llm: Arc<dyn LlmClient>,
    workspace: &std::path::Path,
) -> (Arc<InMemoryTraceStore>, AgentRunner) {
    let store = Arc::new(InMemoryTraceStore::new());
    let options = RunnerOptions::new("scripted", workspace).with_approval(Approval::Allow);
    let runner = AgentRunner::new(store.clone(), llm, ToolRegistry::with_builtins(), options);
    (store, runner)
}

async fn notices(store: &InMemoryTraceStore, trace_id: &str) -> Vec<(NoticeKind, String)> {
    store
        .get_events(trace_id, 0)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|event| match event.kind {
            EventKind::Notice { kind, message, .. } => Some((kind, message)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn two_empty_answers_end_the_run_with_their_own_stop_reason() {
    let workspace = tempfile::tempdir().unwrap();
    let llm = Arc::new(ScriptedClient::new(vec![
        ScriptedTurn::default(),
        ScriptedTurn::text("   "),
        ScriptedTurn::text("Never asked."),
    ]));
    let (store, runner) = runner(llm.clone(), workspace.path());
    let outcome = runner.run("Say hello").await.unwrap();
    assert_eq!(outcome.stop, StopReason::EmptyAnswer, "{outcome:?}");
    assert_eq!(outcome.status, TraceStatus::Failed);
    assert!(outcome.error.unwrap().starts_with("empty_answer:"));
    assert_eq!(outcome.response, None);
    assert_eq!(llm.requests().len(), 2);
    let messages = store.get_trace_messages(&outcome.trace_id).await.unwrap();
    let asked = messages
        .iter()
        .filter(|m| m.metadata.contains_key(agent_execution::meta::EMPTY_ANSWER))
        .count();
    assert_eq!(asked, 1, "the model was asked once");
    let told = notices(&store, &outcome.trace_id).await;
    assert_eq!(
        told.iter()
            .filter(|(kind, _)| *kind == NoticeKind::EmptyAnswer)
            .count(),
        1,
        "{told:?}"
    );
    // The trace can be resumed: the model is asked again.
    let llm = Arc::new(ScriptedClient::new(vec![ScriptedTurn::text("Hello.")]));
    let (_, again) = (
        store.clone(),
        AgentRunner::new(
            store.clone(),
            llm,
            ToolRegistry::with_builtins(),
            RunnerOptions::new("scripted", workspace.path()).with_approval(Approval::Allow),
        ),
    );
    let resumed = again.resume(&outcome.trace_id).await.unwrap();
    assert_eq!(resumed.stop, StopReason::Completed, "{resumed:?}");
    assert_eq!(resumed.response.as_deref(), Some("Hello."));
}

fn with_usage(turn: ScriptedTurn, prompt_tokens: u64) -> ScriptedTurn {
    ScriptedTurn {
        usage: Some(Usage::new(prompt_tokens, 5)),
        ..turn
    }
}

#[tokio::test]
async fn prompt_counts_that_miss_the_tools_or_the_results_are_told_once() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(
        workspace.path().join("notes.txt"),
        "a line of notes\n".repeat(300),
    )
    .unwrap();
    let read = ScriptedTurn::tool_call("read_file", json!({"path": "notes.txt"}));
    // The server counts 150 tokens for requests whose tool specs alone take over a thousand,
    // and the same after a result of about 1,200.
    let llm = Arc::new(ScriptedClient::new(vec![
        with_usage(read.clone(), 150),
        with_usage(read, 160),
        with_usage(ScriptedTurn::text("Notes."), 170),
    ]));
    let (store, runner) = runner(llm, workspace.path());
    let outcome = runner.run("Read notes.txt twice").await.unwrap();
    assert_eq!(outcome.stop, StopReason::Completed, "{outcome:?}");
    let told = notices(&store, &outcome.trace_id).await;
    let kinds: Vec<NoticeKind> = told.iter().map(|(kind, _)| *kind).collect();
    assert_eq!(
        kinds,
        vec![NoticeKind::ToolsNotShown, NoticeKind::ResultsNotShown],
        "{told:?}"
    );
    assert!(told[0].1.contains("150 prompt tokens"), "{}", told[0].1);
    assert!(told[1].1.contains("grew by 10 tokens"), "{}", told[1].1);
}
