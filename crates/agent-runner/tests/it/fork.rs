//! Forking a finished run: at a goal (history and plan as they were just before the goal
//! started, the goal pending again) and after a message (never splitting a model turn from its
//! tool results); the original untouched; the fork resumed sends the very request the original
//! sent at that point; wrong goals, messages and traces refused.

use std::sync::Arc;

use agent_execution::fork::{self, ForkError, ForkPoint};
use agent_execution::{InMemoryTraceStore, Message, Role, TraceStatus, TraceStore};
use agent_goal::GoalStatus;
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, Approval, RunnerOptions};
use agent_tools::ToolRegistry;
use serde_json::json;

struct Original {
    store: Arc<InMemoryTraceStore>,
    llm: Arc<ScriptedClient>,
    trace_id: String,
    workspace: tempfile::TempDir,
}

fn read(path: &str) -> ScriptedTurn {
    ScriptedTurn::tool_call("read_file", json!({"path": path}))
}

fn goal(arguments: serde_json::Value) -> ScriptedTurn {
    ScriptedTurn::tool_call("goal", arguments)
}

fn runner(
    store: &Arc<InMemoryTraceStore>,
    llm: Arc<ScriptedClient>,
    dir: &std::path::Path,
) -> AgentRunner {
    let options = RunnerOptions::new("scripted", dir).with_approval(Approval::Allow);
    AgentRunner::new(store.clone(), llm, ToolRegistry::with_builtins(), options)
}

/// Three goals, each with a tool call: turn 3 (request index 2) is the one that starts goal 2.
async fn original() -> Original {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(workspace.path().join("b.txt"), "beta\n").unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let llm = Arc::new(ScriptedClient::new(vec![
        goal(json!({"add": "Read a, Read b, Read a again", "focus": "1"})),
        read("a.txt"),
        goal(json!({"done": "a says alpha", "focus": "2"})),
        read("b.txt"),
        goal(json!({"done": "b says beta", "focus": "3"})),
        read("a.txt"),
        goal(json!({"done": "still alpha"})),
        ScriptedTurn::text("All read."),
    ]));
    let outcome = runner(&store, llm.clone(), workspace.path())
        .run("Read the files")
        .await
        .unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed);
    Original {
        store,
        llm,
        trace_id: outcome.trace_id,
        workspace,
    }
}

/// What must survive a copy of a message: everything but its id, trace and time.
fn essence(message: &Message) -> (Role, serde_json::Value, Option<String>, Option<String>) {
    (
        message.role,
        serde_json::to_value(&message.content).unwrap(),
        message.goal_id.clone(),
        message.tool_call_id.clone(),
    )
}

async fn trace_current(store: &dyn TraceStore, trace_id: &str) -> Option<String> {
    store
        .get_trace(trace_id)
        .await
        .unwrap()
        .unwrap()
        .current_goal_id
}

#[tokio::test]
async fn a_fork_at_a_goal_has_the_history_and_plan_of_just_before_it_started() {
    let original = original().await;
    let store = original.store.as_ref();
    let messages = store.get_trace_messages(&original.trace_id).await.unwrap();
    let events_before = store.get_events(&original.trace_id, 0).await.unwrap();

    let forked = fork::fork(store, &original.trace_id, &ForkPoint::Goal("2".into()))
        .await
        .unwrap();

    // The original is untouched.
    assert_eq!(
        store.get_trace_messages(&original.trace_id).await.unwrap(),
        messages
    );
    assert_eq!(
        store.get_events(&original.trace_id, 0).await.unwrap(),
        events_before
    );
    // The fork ends just before the assistant turn whose goal call focused goal 2.
    let focusing = messages
        .iter()
        .position(|m| {
            m.content
                .tool_calls()
                .iter()
                .any(|c| c.name == "goal" && c.arguments.contains("\"focus\":\"2\""))
        })
        .unwrap();
    let copied = store.get_trace_messages(&forked.trace_id).await.unwrap();
    assert_eq!(forked.messages, focusing);
    assert_eq!(
        copied.iter().map(essence).collect::<Vec<_>>(),
        messages[..focusing].iter().map(essence).collect::<Vec<_>>()
    );
    assert!(copied.iter().all(|m| m.trace_id == forked.trace_id));

    let tree = store
        .get_goal_tree(&forked.trace_id)
        .await
        .unwrap()
        .unwrap();
    let status = |n: &str| tree.find_by_display(n).unwrap().status;
    // Goal 1 was finished by the same call that started goal 2, so it is still open there.
    assert_eq!(status("1"), GoalStatus::InProgress);
    assert_eq!(status("2"), GoalStatus::Pending);
    assert_eq!(status("3"), GoalStatus::Pending);
    let third = tree.find_by_display("3").unwrap();
    assert_eq!(third.self_stats.message_count, 0);
    assert_eq!(tree.current().unwrap().description, "Read a");
    assert_eq!(
        trace_current(store, &forked.trace_id).await,
        tree.current_id().map(str::to_owned)
    );

    let trace = store.get_trace(&forked.trace_id).await.unwrap().unwrap();
    assert_eq!(trace.status, TraceStatus::Cancelled);
    assert_eq!(trace.task, "Read the files");
    assert_eq!(trace.total_messages, focusing as u64);
    let origin = trace.forked_from.unwrap();
    assert_eq!(origin.trace_id, original.trace_id);
    let second = tree.find_by_display("2").unwrap();
    assert_eq!(origin.goal_id.as_deref(), Some(second.id.as_str()));
}

#[tokio::test]
async fn a_resumed_fork_sends_the_request_the_original_sent_at_that_point() {
    let original = original().await;
    let store = original.store.as_ref();
    let forked = fork::fork(store, &original.trace_id, &ForkPoint::Goal("2".into()))
        .await
        .unwrap();

    let llm = Arc::new(ScriptedClient::new(vec![
        // Goal 1 is still open in the fork: it is finished the way the original did.
        goal(json!({"done": "a says alpha", "focus": "2"})),
        read("b.txt"),
        goal(json!({"done": "b read another way", "focus": "3"})),
        goal(json!({"done": "skipped"})),
        ScriptedTurn::text("Done another way."),
    ]));
    let outcome = runner(&original.store, llm.clone(), original.workspace.path())
        .resume(&forked.trace_id)
        .await
        .unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed);
    assert_eq!(outcome.trace_id, forked.trace_id);

    let first = llm.requests().into_iter().next().unwrap();
    let at_that_point = original.llm.requests()[2].clone();
    assert_eq!(first.messages, at_that_point.messages);
    assert_eq!(first, at_that_point);
}

#[tokio::test]
async fn a_fork_after_a_message_keeps_the_rest_of_its_model_turn() {
    let original = original().await;
    let store = original.store.as_ref();
    let messages = store.get_trace_messages(&original.trace_id).await.unwrap();
    let call = messages
        .iter()
        .find(|m| m.content.tool_calls().iter().any(|c| c.name == "read_file"))
        .unwrap();

    let forked = fork::fork(
        store,
        &original.trace_id,
        &ForkPoint::Message(call.sequence),
    )
    .await
    .unwrap();
    let copied = store.get_trace_messages(&forked.trace_id).await.unwrap();
    // The call's result comes with it.
    let kept = usize::try_from(call.sequence).unwrap() + 1;
    assert_eq!(copied.len(), kept);
    let last = copied.last().unwrap();
    assert_eq!(last.role, Role::Tool);
    assert_eq!(
        last.tool_call_id.as_deref(),
        Some(call.content.tool_calls()[0].id.as_str())
    );
    assert_eq!(
        copied.iter().map(essence).collect::<Vec<_>>(),
        messages[..kept].iter().map(essence).collect::<Vec<_>>()
    );
    let trace = store.get_trace(&forked.trace_id).await.unwrap().unwrap();
    let origin = trace.forked_from.unwrap();
    assert_eq!(origin.message_sequence, Some(call.sequence));
    assert_eq!(origin.goal_id, None);
    // Goal 1 is still in progress there, and current.
    let tree = store
        .get_goal_tree(&forked.trace_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        tree.current().map(|g| g.description.as_str()),
        Some("Read a")
    );

    // A fork after a message alone (the task) keeps just that message.
    let first = fork::fork(store, &original.trace_id, &ForkPoint::Message(1))
        .await
        .unwrap();
    assert_eq!(first.messages, 1);
}

#[tokio::test]
async fn wrong_goals_messages_and_traces_are_refused() {
    let original = original().await;
    let store = original.store.as_ref();
    let id = &original.trace_id;
    let err = fork::fork(store, id, &ForkPoint::Goal("9".into()))
        .await
        .unwrap_err();
    assert!(matches!(err, ForkError::UnknownGoal { .. }), "{err}");
    assert!(err.is_bad_request());
    let err = fork::fork(store, id, &ForkPoint::Message(999))
        .await
        .unwrap_err();
    assert!(matches!(err, ForkError::UnknownMessage { .. }), "{err}");
    let err = fork::fork(
        store,
        "00000000-0000-4000-8000-000000000000",
        &ForkPoint::Goal("1".into()),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ForkError::NotFound { .. }), "{err}");
    assert!(!err.is_bad_request());

    // In a fork at goal 2, goals 2 and 3 never started.
    let forked = fork::fork(store, id, &ForkPoint::Goal("2".into()))
        .await
        .unwrap();
    let err = fork::fork(store, &forked.trace_id, &ForkPoint::Goal("3".into()))
        .await
        .unwrap_err();
    assert!(matches!(err, ForkError::GoalNotStarted { .. }), "{err}");
    let traces = store
        .list_traces(&agent_execution::TraceFilter::default())
        .await
        .unwrap();
    assert_eq!(traces.len(), 2);
}
