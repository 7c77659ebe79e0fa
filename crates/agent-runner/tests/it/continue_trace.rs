//! Continuing a trace and steering a run, against the mock model server through the real
//! OpenAI-compatible client: a completed, a failed (max_iterations), a cancelled and a compacted
//! trace take a new message under the same id (recorded as an event of the current goal), and a
//! message sent to a running run reaches the model before its next call.

use std::sync::Arc;
use std::time::Duration;

use agent_execution::{EventKind, InMemoryTraceStore, Role, TraceStatus, TraceStore};
use agent_llm::{LlmClient, OpenAiClient, OpenAiConfig};
use agent_runner::{AgentRunner, RunError, RunnerOptions, TURN_KEY};
use agent_test_support::mock_model::{MockModelServer, Reply, Turn};
use agent_tools::ToolRegistry;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

pub(crate) struct Setup {
    server: MockModelServer,
    /// The in-memory store the runner writes to (through `seen_as`'s wrapper, when one).
    pub(crate) store: Arc<InMemoryTraceStore>,
    pub(crate) runner: AgentRunner,
    _workspace: TempDir,
}

async fn setup(replies: Vec<Reply>, max_iterations: Option<u32>) -> Setup {
    setup_with(replies, |options| match max_iterations {
        Some(max) => options.with_max_iterations(max),
        None => options,
    })
    .await
}

async fn setup_with(
    replies: Vec<Reply>,
    set: impl FnOnce(RunnerOptions) -> RunnerOptions,
) -> Setup {
    setup_seen_as(replies, |store| store, set).await
}

/// [`setup_with`], with the runner seeing the in-memory store through `seen_as`.
pub(crate) async fn setup_seen_as(
    replies: Vec<Reply>,
    seen_as: impl FnOnce(Arc<InMemoryTraceStore>) -> Arc<dyn TraceStore>,
    set: impl FnOnce(RunnerOptions) -> RunnerOptions,
) -> Setup {
    let server = MockModelServer::with_replies(replies).await;
    let config =
        OpenAiConfig::new(server.openai_base(), Some("sk-test".into())).with_streaming(false);
    let llm: Arc<dyn LlmClient> = Arc::new(OpenAiClient::new(config).unwrap());
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("a.txt"), "alpha\n").unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let options =
        set(RunnerOptions::new("gpt-4o", workspace.path())
            .with_approval(agent_runner::Approval::Allow));
    let runner = AgentRunner::new(
        seen_as(store.clone()),
        llm,
        ToolRegistry::with_builtins(),
        options,
    );
    Setup {
        server,
        store,
        runner,
        _workspace: workspace,
    }
}

/// The turns of a first run that plans two goals, finishes the first and answers.
pub(crate) fn planned_run() -> Vec<Reply> {
    vec![
        Turn::tool_call(
            "c1",
            "goal",
            json!({"add": "Read a.txt, Report", "focus": "1"}),
        )
        .into(),
        Turn::tool_call("c2", "read_file", json!({"path": "a.txt"})).into(),
        Turn::tool_call(
            "c3",
            "goal",
            json!({"done": "a.txt holds the word alpha", "focus": "2"}),
        )
        .into(),
        reported(),
        Turn::text("a.txt says alpha.").into(),
    ]
}

/// The call that finishes the plan's last goal, `Report`.
pub(crate) fn reported() -> Reply {
    Turn::tool_call("c4", "goal", json!({"done": "reported alpha"})).into()
}

fn messages_of(request: &Value) -> Vec<Value> {
    request["messages"].as_array().unwrap().clone()
}

fn text_of(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Asserts the request carries the plan, the summary of the finished goal and `message` last.
fn assert_continued_request(request: &Value, message: &str) {
    let messages = messages_of(request);
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user", "{request:#}");
    assert_eq!(text_of(last), message);
    let system: Vec<String> = messages
        .iter()
        .filter(|m| m["role"] == "system")
        .map(text_of)
        .collect();
    assert!(
        system.iter().any(|s| s.contains("Report")),
        "the plan is in the request: {system:?}"
    );
    let all: String = messages.iter().map(text_of).collect();
    assert!(
        all.contains("a.txt holds the word alpha"),
        "the finished goal's summary is in the request: {all}"
    );
}

async fn assert_dense_events(store: &InMemoryTraceStore, trace_id: &str) {
    let ids: Vec<u64> = store
        .get_events(trace_id, 0)
        .await
        .unwrap()
        .iter()
        .map(|e| e.event_id)
        .collect();
    let expected: Vec<u64> = (1..=ids.len() as u64).collect();
    assert_eq!(ids, expected);
}

async fn last_user_message(store: &InMemoryTraceStore, trace_id: &str) -> (String, Value) {
    let messages = store.get_trace_messages(trace_id).await.unwrap();
    let user = messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .unwrap();
    (
        user.content.text().to_owned(),
        user.metadata.get(TURN_KEY).cloned().unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn a_completed_trace_continues_under_its_id_with_plan_summaries_and_the_new_message() {
    let mut replies = planned_run();
    replies.push(Turn::text("a.txt dit alpha.").into());
    let s = setup(replies, None).await;
    let first = s.runner.run("Read a.txt and report").await.unwrap();
    assert_eq!(first.status, TraceStatus::Completed);
    // Resuming a completed trace is still refused; continuing it is not.
    assert!(matches!(
        s.runner.resume(&first.trace_id).await,
        Err(RunError::AlreadyCompleted { .. })
    ));

    let next = s
        .runner
        .continue_trace(&first.trace_id, "Now say it in French")
        .await
        .unwrap();
    assert_eq!(next.trace_id, first.trace_id);
    assert_eq!(next.status, TraceStatus::Completed);
    assert_eq!(next.response.as_deref(), Some("a.txt dit alpha."));
    let requests = s.server.requests();
    assert_eq!(requests.len(), 6);
    assert_continued_request(&requests[5].body, "Now say it in French");
    let (text, turn) = last_user_message(&s.store, &first.trace_id).await;
    assert_eq!(text, "Now say it in French");
    assert_eq!(turn, json!("continue"));
    // The message is tied to the goal current when it came.
    let messages = s.store.get_trace_messages(&first.trace_id).await.unwrap();
    let user = messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .unwrap();
    let tree = s
        .store
        .get_goal_tree(&first.trace_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.goal_id.as_deref(), tree.current_id());
    assert_message_event_of_current_goal(&s.store, &first.trace_id, "Now say it in French").await;
    assert_dense_events(&s.store, &first.trace_id).await;
}

/// Asserts the last `message_added` event of the trace records the user message `text`, tied
/// to the goal current now.
async fn assert_message_event_of_current_goal(
    store: &InMemoryTraceStore,
    trace_id: &str,
    text: &str,
) {
    let events = store.get_events(trace_id, 0).await.unwrap();
    let added = events
        .iter()
        .rev()
        .find_map(|e| match &e.kind {
            EventKind::MessageAdded { message, .. } if message.role == Role::User => {
                Some(message.clone())
            }
            _ => None,
        })
        .expect("the user message is an event");
    assert_eq!(added.content.text(), text);
    let tree = store.get_goal_tree(trace_id).await.unwrap().unwrap();
    assert_eq!(added.goal_id.as_deref(), tree.current_id());
}

#[tokio::test]
async fn a_fully_compacted_trace_continues_from_its_summary() {
    let mut replies = planned_run();
    replies.push(Turn::text("Summary: a.txt was read and holds alpha; the report is due.").into());
    replies.push(Turn::text("a.txt dit alpha.").into());
    let s = setup(replies, None).await;
    let first = s.runner.run("Read a.txt and report").await.unwrap();
    assert_eq!(first.status, TraceStatus::Completed);
    let compacted = s
        .runner
        .compact(&first.trace_id, &CancellationToken::new())
        .await
        .unwrap();
    assert!(compacted);

    let next = s
        .runner
        .continue_trace(&first.trace_id, "Now say it in French")
        .await
        .unwrap();
    assert_eq!(next.status, TraceStatus::Completed);
    let requests = s.server.requests();
    assert_eq!(requests.len(), 7);
    let request = &requests[6].body;
    assert_continued_request(request, "Now say it in French");
    let all: String = messages_of(request).iter().map(text_of).collect();
    assert!(
        all.contains("Summary: a.txt was read and holds alpha; the report is due."),
        "the summary is in the request: {all}"
    );
    // What the summary replaced is not sent again.
    assert!(!all.contains("a.txt says alpha."), "{all}");
    assert_message_event_of_current_goal(&s.store, &first.trace_id, "Now say it in French").await;
    assert_dense_events(&s.store, &first.trace_id).await;
}

#[tokio::test]
async fn a_trace_stopped_by_max_iterations_continues_with_its_limits() {
    let mut replies = planned_run();
    replies.truncate(3);
    replies.push(reported());
    replies.push(Turn::text("Done after all.").into());
    let s = setup(replies, Some(3)).await;
    let first = s.runner.run("Read a.txt and report").await.unwrap();
    assert_eq!(first.status, TraceStatus::Failed);
    assert!(first.error.unwrap().contains("max_iterations"));

    let next = s
        .runner
        .continue_trace(&first.trace_id, "Finish now")
        .await
        .unwrap();
    assert_eq!(next.trace_id, first.trace_id);
    assert_eq!(next.status, TraceStatus::Completed, "{next:?}");
    assert_eq!(next.error, None);
    let requests = s.server.requests();
    assert_eq!(requests.len(), 5);
    assert_continued_request(&requests[3].body, "Finish now");
    assert_dense_events(&s.store, &first.trace_id).await;
}

#[tokio::test]
async fn a_cancelled_trace_continues() {
    let mut replies = planned_run();
    replies.truncate(3);
    replies.push(Reply::hang());
    replies.push(reported());
    replies.push(Turn::text("Picked up again.").into());
    let s = setup(replies, None).await;
    let handle = s.runner.start("Read a.txt and report").await.unwrap();
    let trace_id = handle.trace_id.clone();
    wait_for_requests(&s.server, 4).await;
    handle.cancel();
    let first = handle.wait().await.unwrap();
    assert_eq!(first.status, TraceStatus::Cancelled);

    let next = s
        .runner
        .continue_trace(&trace_id, "Go on, briefly")
        .await
        .unwrap();
    assert_eq!(next.trace_id, trace_id);
    assert_eq!(next.status, TraceStatus::Completed);
    let requests = s.server.requests();
    assert_eq!(requests.len(), 6);
    assert_continued_request(&requests[4].body, "Go on, briefly");
    assert_dense_events(&s.store, &trace_id).await;
}

#[tokio::test]
async fn a_message_sent_while_the_run_works_reaches_the_model_before_its_next_call() {
    let replies = vec![
        Reply::from(Turn::tool_call("c1", "read_file", json!({"path": "a.txt"})))
            .with_delay(Duration::from_millis(800)),
        Turn::text("In French: alpha.").into(),
    ];
    let s = setup(replies, None).await;
    let handle = s.runner.start("Read a.txt").await.unwrap();
    let trace_id = handle.trace_id.clone();
    wait_for_requests(&s.server, 1).await;
    // A running trace is not continued: its run takes the message.
    assert!(matches!(
        s.runner
            .continue_in_background(&trace_id, "x", Default::default())
            .await,
        Err(RunError::Running { .. })
    ));
    assert!(handle.send("Answer in French"));
    let outcome = handle.wait().await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed);

    let requests = s.server.requests();
    assert_eq!(requests.len(), 2);
    let second = messages_of(&requests[1].body);
    let last_user = second.iter().rev().find(|m| m["role"] == "user").unwrap();
    assert_eq!(text_of(last_user), "Answer in French");
    assert_eq!(second.last().unwrap()["role"], "user");
    let (text, turn) = last_user_message(&s.store, &trace_id).await;
    assert_eq!(text, "Answer in French");
    assert_eq!(turn, json!("queued"));
    // After the run, nothing takes messages: the trace is continued instead.
    assert!(!s.runner.send(&trace_id, "late"));
    assert_dense_events(&s.store, &trace_id).await;
}

#[tokio::test]
async fn a_message_sent_during_the_final_call_is_answered_before_the_run_ends() {
    let replies = vec![
        Reply::from(Turn::text("Done.")).with_delay(Duration::from_millis(800)),
        Turn::text("Yes, also that.").into(),
    ];
    let s = setup(replies, None).await;
    let handle = s.runner.start("Say done").await.unwrap();
    wait_for_requests(&s.server, 1).await;
    assert!(handle.send("And that too?"));
    let outcome = handle.wait().await.unwrap();
    assert_eq!(outcome.response.as_deref(), Some("Yes, also that."));
    let requests = s.server.requests();
    assert_eq!(requests.len(), 2);
    let second = messages_of(&requests[1].body);
    assert_eq!(text_of(second.last().unwrap()), "And that too?");
}

#[tokio::test]
async fn a_message_sent_as_the_run_ends_is_answered_by_that_run() {
    // The closing report is written after the loop's last look at its queue: a message sent
    // while it is written arrives as the run ends.
    let replies = vec![
        Turn::tool_call("c1", "goal", json!({"add": "One, Two", "focus": "1"})).into(),
        Turn::tool_call("c2", "goal", json!({"done": "one", "focus": "2"})).into(),
        Turn::tool_call("c3", "goal", json!({"done": "two"})).into(),
        Turn::text("All done.").into(),
        Reply::from(Turn::text("## Report\nOne and two.")).with_delay(Duration::from_millis(800)),
        Turn::text("Yes, three as well.").into(),
        Turn::text("## Report\nOne, two and three.").into(),
    ];
    let s = setup_with(replies, |options| options.with_closing_report(true)).await;
    let handle = s.runner.start("Count").await.unwrap();
    let trace_id = handle.trace_id.clone();
    wait_for_requests(&s.server, 5).await;
    assert!(handle.send("And three?"));
    let outcome = handle.wait().await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    assert_eq!(outcome.response.as_deref(), Some("Yes, three as well."));
    assert!(outcome.iterations >= 5, "{outcome:?}");
    let requests = s.server.requests();
    assert!(requests.len() >= 6, "{} requests", requests.len());
    let sixth = messages_of(&requests[5].body);
    assert_eq!(text_of(sixth.last().unwrap()), "And three?");
    // Nothing is left waiting: the trace ends on the run's own words, and takes no message.
    let messages = s.store.get_trace_messages(&trace_id).await.unwrap();
    assert_ne!(messages.last().unwrap().role, Role::User);
    assert!(!s.runner.send(&trace_id, "later"));
    assert_dense_events(&s.store, &trace_id).await;
}

#[tokio::test]
async fn an_empty_message_does_not_continue_a_trace() {
    let s = setup(vec![Turn::text("Done.").into()], None).await;
    let first = s.runner.run("Say done").await.unwrap();
    assert!(matches!(
        s.runner.continue_trace(&first.trace_id, "  ").await,
        Err(RunError::EmptyMessage)
    ));
}

/// Waits until the server has received `count` requests.
async fn wait_for_requests(server: &MockModelServer, count: usize) {
    for _ in 0..500 {
        if server.request_count() >= count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the server received {} requests", server.request_count());
}
