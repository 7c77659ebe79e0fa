//! `max_agent_depth`: however deep each profile lets its own sub-traces go, sub-agents nest at
//! most that many levels below the main trace; a call beyond is refused with the reason, and the
//! level above gets its answer.

use std::sync::Arc;

use crate::support::{call, tool_results};
use agent_execution::{InMemoryTraceStore, TraceStatus, TraceStore};
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, RunnerOptions};
use agent_tools::ToolRegistry;
use serde_json::json;

/// A chain of delegates: each level hands the next one down (in the background when
/// `background`), with `max_agent_depth` = `max` and every profile allowing deeper chains.
/// Returns the store and the main trace's id.
async fn chain_of(max: usize, background: bool) -> (Arc<InMemoryTraceStore>, String) {
    let delegate = |task: &str| {
        call(
            "delegate",
            json!({ "task": task, "background": background }),
        )
    };
    let llm = ScriptedClient::new(vec![delegate("level one"), ScriptedTurn::text("Done.")])
        .with_route(
            "level one",
            vec![delegate("level two"), ScriptedTurn::text("one done")],
        )
        .with_route(
            "level two",
            vec![delegate("level three"), ScriptedTurn::text("two done")],
        )
        .with_route("level three", vec![ScriptedTurn::text("three done")])
        .with_fallback("Done.");
    let workspace = tempfile::tempdir().unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let mut options = RunnerOptions::new("scripted", workspace.path())
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    options
        .sub_agents
        .agent_types
        .get_mut("delegate")
        .unwrap()
        .max_depth = 10;
    options.sub_agents.max_agent_depth = max;
    let runner = AgentRunner::new(
        store.clone(),
        Arc::new(llm),
        ToolRegistry::with_builtins(),
        options,
    );
    let outcome = runner.run("Hand it down").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    (store, outcome.trace_id)
}

async fn chain(max: usize) -> (Arc<InMemoryTraceStore>, String) {
    chain_of(max, false).await
}

/// The only sub-trace of `trace_id`.
async fn child(store: &InMemoryTraceStore, trace_id: &str) -> String {
    let subs = store.get_sub_traces(trace_id).await.unwrap();
    assert_eq!(subs.len(), 1, "{subs:?}");
    subs[0].trace_id.clone()
}

#[tokio::test]
async fn a_delegate_chain_deeper_than_the_setting_is_refused_at_that_depth() {
    let (store, main) = chain(2).await;
    let one = child(&store, &main).await;
    let two = child(&store, &one).await;
    // The second level may not delegate: the setting allows two levels.
    assert!(store.get_sub_traces(&two).await.unwrap().is_empty());
    let results = tool_results(store.as_ref(), &two).await;
    assert!(
        results[0].starts_with(
            "error: delegate is refused here: sub-agents may nest at most 2 deep \
             (max_agent_depth), and this trace is already 2 deep."
        ),
        "{}",
        results[0]
    );
    // The level above got the refused level's own answer.
    let results = tool_results(store.as_ref(), &one).await;
    assert!(results[0].contains("two done"), "{}", results[0]);

    // The default, 3, lets the same chain reach its third level.
    let (store, main) = chain(3).await;
    let one = child(&store, &main).await;
    let two = child(&store, &one).await;
    let three = child(&store, &two).await;
    let results = tool_results(store.as_ref(), &two).await;
    assert!(results[0].contains("three done"), "{}", results[0]);
    assert!(tool_results(store.as_ref(), &three).await.is_empty());
    assert_eq!(RunnerOptions::new("m", "/").sub_agents.max_agent_depth, 3);
}

#[tokio::test]
async fn background_delegates_are_bounded_by_the_same_setting() {
    let (store, main) = chain_of(2, true).await;
    let one = child(&store, &main).await;
    let two = child(&store, &one).await;
    assert!(store.get_sub_traces(&two).await.unwrap().is_empty());
    let results = tool_results(store.as_ref(), &two).await;
    assert!(
        results[0].starts_with("error: delegate is refused here: sub-agents may nest at most 2"),
        "{}",
        results[0]
    );
    // The level above was told the refused level's answer when it ended.
    let messages = store.get_trace_messages(&one).await.unwrap();
    let told = messages
        .iter()
        .find(|m| m.metadata.get("turn") == Some(&json!("background")))
        .expect("the background delegate's end reached its parent");
    assert!(
        told.content.text().contains("two done"),
        "{}",
        told.content.text()
    );
}
