//! `delegate` with `"background": true`: the call answers at once, the sub-agent works while
//! the parent goes on, its end reaches the parent as a recorded message before the parent's
//! next model call, the parent's final answer waits for it, and cancelling the run stops it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::{Barrier, call};
use agent_execution::{InMemoryTraceStore, Role, TraceStatus, TraceStore};
use agent_llm::{ChatMessage, ChatRequest, ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, RunnerOptions, StopReason};
use agent_tools::ToolRegistry;
use serde_json::json;

const MAIN: &str = "Ship the release";
const SIDE: &str = "Count the open issues";

fn runner(
    llm: Arc<ScriptedClient>,
    store: Arc<InMemoryTraceStore>,
    dir: &tempfile::TempDir,
) -> AgentRunner {
    let options = RunnerOptions::new("scripted", dir.path())
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(Barrier::new(2))).unwrap();
    AgentRunner::new(store, llm, tools, options)
}

/// The requests of the main trace (its first user message is the task), in order.
fn main_requests(llm: &ScriptedClient) -> Vec<ChatRequest> {
    let first_user = |r: &ChatRequest| {
        r.messages.iter().find_map(|m| match m {
            ChatMessage::User(text) => Some(text.clone()),
            _ => None,
        })
    };
    llm.requests()
        .into_iter()
        .filter(|r| first_user(r).as_deref() == Some(MAIN))
        .collect()
}

fn mentions(request: &ChatRequest, text: &str) -> bool {
    request.messages.iter().any(|m| match m {
        ChatMessage::User(user) => user.contains(text),
        _ => false,
    })
}

#[tokio::test]
async fn a_background_delegates_answer_reaches_the_parent_after_its_next_call() {
    // The sub-agent's `barrier` call returns only once the parent's is inside too: the parent
    // made its second model call while the sub-agent was still working.
    let llm = Arc::new(
        ScriptedClient::new(vec![
            call("delegate", json!({"task": SIDE, "background": true})),
            call("barrier", json!({})),
            ScriptedTurn::text("Released; 42 issues are open."),
        ])
        .with_fallback("Released; 42 issues are open.")
        .with_route(
            SIDE,
            vec![
                call("barrier", json!({})),
                ScriptedTurn::text("42 open issues"),
            ],
        ),
    );
    let (store, dir) = (
        Arc::new(InMemoryTraceStore::new()),
        tempfile::tempdir().unwrap(),
    );
    let outcome = runner(llm.clone(), store.clone(), &dir)
        .run(MAIN)
        .await
        .unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    assert_eq!(
        outcome.response.as_deref(),
        Some("Released; 42 issues are open.")
    );

    let subs = store.get_sub_traces(&outcome.trace_id).await.unwrap();
    assert_eq!(subs.len(), 1);
    assert_eq!(subs[0].status, TraceStatus::Completed);
    let sub = subs[0].trace_id.clone();

    // The call answered at once with the sub-trace's id, before the sub-agent's answer.
    let messages = store.get_trace_messages(&outcome.trace_id).await.unwrap();
    let started = messages.iter().find(|m| m.role == Role::Tool).unwrap();
    assert!(
        started.content.text().contains(&sub),
        "{}",
        started.content.text()
    );
    assert!(started.content.text().contains("background"));
    assert!(!started.content.text().contains("42 open issues"));
    // The barrier met: both were inside at once.
    let barrier = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .nth(1)
        .unwrap();
    assert!(
        barrier
            .content
            .text()
            .contains("2 callers were inside at once")
    );

    // The end is recorded in the parent, marked, after the parent's second call.
    let delivered = messages
        .iter()
        .position(|m| m.metadata.get("turn") == Some(&json!("background")))
        .expect("the delegate's end is recorded");
    let text = messages[delivered].content.text();
    assert_eq!(messages[delivered].role, Role::User);
    assert!(
        text.contains(&format!("The background delegate {sub} ended.")),
        "{text}"
    );
    assert!(text.contains("42 open issues"), "{text}");
    let assistants_before = messages[..delivered]
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .count();
    assert!(
        assistants_before >= 2,
        "delivered after {assistants_before} calls"
    );

    // The model saw it in the request after it arrived, not in the first two.
    let requests = main_requests(&llm);
    assert!(requests.len() >= 3, "{} requests", requests.len());
    assert!(!requests[..2].iter().any(|r| mentions(r, "42 open issues")));
    assert!(mentions(requests.last().unwrap(), "42 open issues"));
}

#[tokio::test]
async fn the_final_answer_waits_for_a_background_delegate_still_running() {
    let llm = Arc::new(
        ScriptedClient::new(vec![
            call("delegate", json!({"task": SIDE, "background": true})),
            ScriptedTurn::text("Waiting for the count."),
            ScriptedTurn::text("There are 42."),
        ])
        .with_route(
            SIDE,
            vec![ScriptedTurn::text("42 open issues").with_delay(Duration::from_millis(300))],
        ),
    );
    let (store, dir) = (
        Arc::new(InMemoryTraceStore::new()),
        tempfile::tempdir().unwrap(),
    );
    let outcome = runner(llm.clone(), store.clone(), &dir)
        .run(MAIN)
        .await
        .unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    assert_eq!(outcome.response.as_deref(), Some("There are 42."));
    let requests = main_requests(&llm);
    assert_eq!(requests.len(), 3);
    assert!(!mentions(&requests[1], "42 open issues"));
    assert!(mentions(&requests[2], "42 open issues"));
}

#[tokio::test]
async fn cancelling_the_run_stops_its_background_delegates_and_names_them() {
    let llm = Arc::new(
        ScriptedClient::new(vec![
            call("delegate", json!({"task": SIDE, "background": true})),
            ScriptedTurn::text("Waiting for the count."),
        ])
        .with_route(
            SIDE,
            vec![ScriptedTurn::text("never").with_delay(Duration::from_secs(60))],
        ),
    );
    let (store, dir) = (
        Arc::new(InMemoryTraceStore::new()),
        tempfile::tempdir().unwrap(),
    );
    let runner = runner(llm.clone(), store.clone(), &dir);
    let handle = runner.start(MAIN).await.unwrap();
    let main = handle.trace_id.clone();
    // The parent answered and waits; the sub-agent is inside its model call.
    let deadline = Instant::now() + Duration::from_secs(10);
    while main_requests(&llm).len() < 2 || llm.route_requests(0).is_empty() {
        assert!(Instant::now() < deadline, "timed out waiting");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let subs = store.get_sub_traces(&main).await.unwrap();
    assert_eq!(subs[0].status, TraceStatus::Running);

    let cancelled_at = Instant::now();
    handle.cancel();
    let outcome = handle.wait().await.unwrap();
    assert!(cancelled_at.elapsed() < Duration::from_secs(15));
    assert_eq!(outcome.stop, StopReason::Cancelled);
    let sub = subs[0].trace_id.clone();
    let error = outcome.error.clone().unwrap_or_default();
    assert!(
        error.contains(&format!("background delegates stopped: {sub}")),
        "{error}"
    );
    // Nothing is left running: the sub-trace recorded its end.
    let subs = store.get_sub_traces(&main).await.unwrap();
    assert_eq!(subs[0].status, TraceStatus::Cancelled, "{subs:#?}");
    // The parent's trace says how it ended, for a resume or a fork.
    let messages = store.get_trace_messages(&main).await.unwrap();
    let told = messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .unwrap();
    assert_eq!(told.metadata.get("turn"), Some(&json!("background")));
    assert!(told.content.text().contains(&sub));
    assert!(
        told.content.text().contains("cancelled"),
        "{}",
        told.content.text()
    );
}

#[tokio::test]
async fn background_delegates_beyond_the_limit_are_refused() {
    let limit = agent_execution::background::MAX_RUNNING;
    let mut turn = ScriptedTurn::text("");
    for n in 0..=limit {
        turn = turn.with_tool_call(
            "delegate",
            json!({"task": format!("{SIDE} {n}"), "background": true}),
        );
    }
    // Every sub-agent is still in its first model call when the last call is made.
    let slow = ScriptedTurn::text("counted").with_delay(Duration::from_secs(2));
    let llm = Arc::new(
        ScriptedClient::new(vec![turn])
            .with_fallback("Done.")
            .with_route(SIDE, vec![slow; limit + 1]),
    );
    let (store, dir) = (
        Arc::new(InMemoryTraceStore::new()),
        tempfile::tempdir().unwrap(),
    );
    let mut options = RunnerOptions::new("scripted", dir.path())
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    options.limits.max_tool_calls_per_turn = limit + 5;
    let runner = AgentRunner::new(store.clone(), llm, ToolRegistry::with_builtins(), options);
    let outcome = runner.run(MAIN).await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let results = crate::support::tool_results(store.as_ref(), &outcome.trace_id).await;
    let refused: Vec<&String> = results.iter().filter(|r| r.starts_with("error:")).collect();
    assert_eq!(refused.len(), 1, "{results:#?}");
    assert!(
        refused[0].contains(&format!("{limit} background delegates are running already")),
        "{}",
        refused[0]
    );
    assert_eq!(
        store.get_sub_traces(&outcome.trace_id).await.unwrap().len(),
        limit
    );
}

/// A parent whose background delegate a killed process left: the call answered "runs in the
/// background", the sub-trace with part of its work (ended when `finished`), no end recorded
/// in the parent. Returns the parent's and the sub-trace's ids.
async fn orphaned(store: &InMemoryTraceStore, finished: bool) -> (String, String) {
    let parent = store
        .create_trace(agent_execution::NewTrace::agent(MAIN))
        .await
        .unwrap()
        .trace_id;
    let sub = store
        .create_trace(agent_execution::NewTrace::sub_trace(
            &parent, None, "delegate", SIDE,
        ))
        .await
        .unwrap()
        .trace_id;
    store
        .add_message(&sub, agent_execution::NewMessage::user(SIDE))
        .await
        .unwrap();
    let call_ = agent_llm::ToolCall::new("c1", "delegate", r#"{"task": "x", "background": true}"#);
    let content = agent_execution::AssistantContent::new(None, vec![call_]);
    let started = agent_execution::background::started(&sub);
    for message in [
        agent_execution::NewMessage::user(MAIN),
        agent_execution::NewMessage::assistant(content),
        agent_execution::NewMessage::tool("c1", "delegate", started),
    ] {
        store.add_message(&parent, message).await.unwrap();
    }
    if finished {
        let done = agent_execution::TraceOutcome::completed("42 open issues");
        store.finish_trace(&sub, done).await.unwrap();
    }
    (parent, sub)
}

/// Resumes `parent` with a model that answers `answer` at once; the run completes. Returns the
/// parent's requests.
async fn resume_to_answer(
    store: &Arc<InMemoryTraceStore>,
    parent: &str,
    answer: &str,
) -> Vec<ChatRequest> {
    let llm = Arc::new(ScriptedClient::new(vec![ScriptedTurn::text(answer)]));
    let dir = tempfile::tempdir().unwrap();
    let outcome = runner(llm.clone(), store.clone(), &dir)
        .resume(parent)
        .await
        .unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    main_requests(&llm)
}

#[tokio::test]
async fn a_background_delegate_a_crash_orphaned_is_told_to_the_resumed_parent_once() {
    let store = Arc::new(InMemoryTraceStore::new());
    let (parent, sub) = orphaned(&store, false).await;
    let requests = resume_to_answer(&store, &parent, "Counted them myself: 42.").await;
    assert_eq!(
        requests.len(),
        1,
        "the answer did not wait for a delegate that is gone"
    );
    let told = format!("The background delegate {sub} was interrupted");
    assert!(mentions(&requests[0], &told), "{:?}", requests[0].messages);

    // Recorded once, as a background turn: a later resume does not tell it again.
    let messages = store.get_trace_messages(&parent).await.unwrap();
    let recorded: Vec<_> = messages
        .iter()
        .filter(|m| m.content.text().starts_with(&told))
        .collect();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].metadata.get("turn"), Some(&json!("background")));
    assert!(agent_execution::background::orphans(&messages, &[]).is_empty());
}

#[tokio::test]
async fn a_background_delegate_that_ended_before_the_crash_is_told_as_ended() {
    let store = Arc::new(InMemoryTraceStore::new());
    let (parent, sub) = orphaned(&store, true).await;
    let request = &resume_to_answer(&store, &parent, "42 are open.").await[0];
    assert!(mentions(
        request,
        &format!("The background delegate {sub} ended.")
    ));
    assert!(
        mentions(request, "42 open issues"),
        "{:?}",
        request.messages
    );
    assert!(!mentions(request, "was interrupted"));
}
