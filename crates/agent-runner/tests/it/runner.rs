//! End-to-end tests of the runner with the scripted model and the in-memory store: the loop,
//! the goal tool, bad model output, limits, cancellation, approvals and resume.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_execution::AssistantContent;
use agent_execution::{
    EventKind, InMemoryTraceStore, NewMessage, NewTrace, Role, TraceStatus, TraceStore, TraceUpdate,
};
use agent_goal::GoalStatus;
use agent_llm::{ModelPrice, PriceTable, ScriptedClient, ScriptedTurn, ToolCall, Usage};
use agent_runner::approval::RejectAll;
use agent_runner::context::render_transcript;
use agent_runner::{AgentRunner, Approval, RunnerOptions, StopReason};
use agent_tools::ToolRegistry;
use serde_json::json;

struct Fixture {
    store: Arc<InMemoryTraceStore>,
    llm: Arc<ScriptedClient>,
    runner: AgentRunner,
    workspace: tempfile::TempDir,
}

fn fixture(turns: Vec<ScriptedTurn>) -> Fixture {
    fixture_with(turns, |_| {})
}

fn fixture_with(turns: Vec<ScriptedTurn>, configure: impl FnOnce(&mut RunnerOptions)) -> Fixture {
    let workspace = tempfile::tempdir().unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let llm = Arc::new(ScriptedClient::new(turns));
    let mut options = RunnerOptions::new("scripted", workspace.path())
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    configure(&mut options);
    let runner = AgentRunner::new(
        store.clone(),
        llm.clone(),
        ToolRegistry::with_builtins(),
        options,
    );
    Fixture {
        store,
        llm,
        runner,
        workspace,
    }
}

fn goal(args: serde_json::Value) -> ScriptedTurn {
    ScriptedTurn::tool_call("goal", args)
}

/// The content of every tool message of a trace, in order.
async fn tool_outputs(store: &InMemoryTraceStore, trace_id: &str) -> Vec<String> {
    store
        .get_trace_messages(trace_id)
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.text().to_owned())
        .collect()
}

#[tokio::test]
async fn a_three_goal_task_runs_to_completion() {
    let f = fixture(vec![
        goal(json!({"add": "Write the file, Check it, Report", "focus": "1"})),
        ScriptedTurn::tool_call(
            "write_file",
            json!({"path": "notes.txt", "content": "hello\n"}),
        ),
        goal(json!({"done": "notes.txt written", "focus": "2"})),
        ScriptedTurn::tool_call("read_file", json!({"path": "notes.txt"})),
        goal(json!({"done": "it says hello", "focus": "3"})),
        goal(json!({"done": "reported"})),
        ScriptedTurn::text("The file says hello."),
    ]);
    let outcome = f.runner.run("Write notes.txt and check it").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    assert_eq!(outcome.response.as_deref(), Some("The file says hello."));
    assert_eq!(outcome.iterations, 7);
    assert_eq!(
        std::fs::read_to_string(f.workspace.path().join("notes.txt")).unwrap(),
        "hello\n"
    );

    let tree = f
        .store
        .get_goal_tree(&outcome.trace_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(tree.goals().len(), 3);
    assert!(
        tree.goals()
            .iter()
            .all(|g| g.status == GoalStatus::Completed),
        "{tree:#?}"
    );
    // The write and the read were tied to the goals that were current when they were made.
    let messages = f.store.get_trace_messages(&outcome.trace_id).await.unwrap();
    let write = messages
        .iter()
        .find(|m| m.tool_name.as_deref() == Some("write_file"))
        .unwrap();
    assert_eq!(write.goal_id.as_deref(), Some("1"));
    let read = messages
        .iter()
        .find(|m| m.tool_name.as_deref() == Some("read_file"))
        .unwrap();
    assert_eq!(read.goal_id.as_deref(), Some("2"));
    // Every tool message records how long its call took.
    assert!(
        messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .all(|m| m.duration_ms.is_some()),
        "{messages:#?}"
    );
    assert_eq!(messages[0].role, Role::User);
    assert_eq!(messages.len(), 1 + 7 + 6);

    let events = f.store.get_events(&outcome.trace_id, 0).await.unwrap();
    let ids: Vec<u64> = events.iter().map(|e| e.event_id).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    let added = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::GoalAdded { .. }))
        .count();
    assert_eq!(added, 3);
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::TraceCompleted { .. }
    ));
}

#[tokio::test]
async fn the_model_sees_a_finished_goal_as_its_summary_only() {
    let f = fixture(vec![
        goal(json!({"add": "Inspect, Change", "focus": "1"})),
        ScriptedTurn::tool_call("bash", json!({"command": "echo SECRET-OUTPUT-OF-GOAL-ONE"})),
        goal(json!({"done": "inspection found nothing odd", "focus": "2"})),
        goal(json!({"done": "nothing to change"})),
        ScriptedTurn::text("Done."),
    ]);
    let outcome = f.runner.run("Inspect and change").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed);
    let requests = f.llm.requests();
    // Before `done`, the model saw the output; after, only the summary.
    let before = render_transcript(&requests[2].messages);
    assert!(before.contains("SECRET-OUTPUT-OF-GOAL-ONE"), "{before}");
    let after = render_transcript(&requests[3].messages);
    assert!(!after.contains("SECRET-OUTPUT-OF-GOAL-ONE"), "{after}");
    let expected_tail = "\
user: Inspect and change
assistant call: goal({\"add\":\"Inspect, Change\",\"focus\":\"1\"}) [call_1_1]
tool [call_1_1]: ";
    assert!(after.contains(expected_tail), "{after}");
    assert!(
        after.contains("user: Goal 1 'Inspect' completed: inspection found nothing odd"),
        "{after}"
    );
    // The plan is the second system message, after the prompt.
    let agent_llm::ChatMessage::System(system) = &requests[3].messages[1] else {
        panic!("no plan")
    };
    assert!(system.trim_end().ends_with(
        "## Current Plan\n**Mission**: Inspect and change\n**Current**: 2 Change\n**Progress**:\n\
         [✓] 1. Inspect\n    → inspection found nothing odd\n[→] 2. Change ← current"
    ), "{system}");
    // The store keeps everything.
    let outputs = tool_outputs(&f.store, &outcome.trace_id).await;
    assert!(
        outputs
            .iter()
            .any(|o| o.contains("SECRET-OUTPUT-OF-GOAL-ONE"))
    );
}

#[tokio::test]
async fn an_abandoned_approach_is_replaced_by_its_reason() {
    let f = fixture(vec![
        goal(json!({"add": "Try approach A, Ship", "focus": "1"})),
        ScriptedTurn::tool_call("bash", json!({"command": "echo approach-a-noise"})),
        goal(json!({"abandon": "A needs a library we do not have"})),
        goal(json!({"add": "Try approach B"})),
        goal(json!({"focus": "2"})),
        ScriptedTurn::text("B it is."),
        goal(json!({"done": "B works"})),
        goal(json!({"focus": "1"})),
        goal(json!({"done": "shipped"})),
        ScriptedTurn::text("Shipped with B."),
    ]);
    let outcome = f.runner.run("Pick an approach").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed);
    // The request that "B it is." answered.
    let last = render_transcript(&f.llm.requests()[5].messages);
    assert!(!last.contains("approach-a-noise"), "{last}");
    assert!(
        last.contains("Goal 'Try approach A' abandoned: A needs a library we do not have"),
        "{last}"
    );
    assert!(
        !last.contains("] 1. Try approach A"),
        "abandoned goals leave the plan: {last}"
    );
    assert!(last.contains("[→] 2. Try approach B ← current"), "{last}");
}

#[tokio::test]
async fn bad_model_output_becomes_errors_the_model_sees() {
    let f = fixture(vec![
        ScriptedTurn::tool_call("read_file", json!("{\"path\": ")),
        ScriptedTurn::tool_call("no_such_tool", json!({})),
        goal(json!({"focus": "7.3"})),
        ScriptedTurn::tool_call("read_file", json!({"path": 42})),
        ScriptedTurn::tool_call("read_file", json!({"path": "../../etc/passwd"})),
        goal(json!({"done": "nothing is focused"})),
        ScriptedTurn::text("I recovered."),
    ]);
    let outcome = f.runner.run("Survive bad calls").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed);
    let outputs = tool_outputs(&f.store, &outcome.trace_id).await;
    assert_eq!(outputs.len(), 6);
    assert!(
        outputs[0].starts_with("error:") && outputs[0].contains("not valid JSON"),
        "{}",
        outputs[0]
    );
    assert!(
        outputs[1].contains("unknown tool \"no_such_tool\""),
        "{}",
        outputs[1]
    );
    assert!(
        outputs[2].starts_with("error:") && outputs[2].contains("7.3"),
        "{}",
        outputs[2]
    );
    assert!(
        outputs[3].starts_with("error:") && outputs[3].contains("path"),
        "{}",
        outputs[3]
    );
    assert!(
        outputs[4].contains("outside the workspace"),
        "{}",
        outputs[4]
    );
    assert!(outputs[5].starts_with("error:"), "{}", outputs[5]);
}

#[tokio::test]
async fn a_bash_timeout_is_a_result_not_a_hang() {
    let f = fixture(vec![
        ScriptedTurn::tool_call("bash", json!({"command": "sleep 20", "timeout_secs": 1})),
        ScriptedTurn::text("It timed out."),
    ]);
    let started = Instant::now();
    let outcome = f.runner.run("Wait").await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(outcome.status, TraceStatus::Completed);
    let outputs = tool_outputs(&f.store, &outcome.trace_id).await;
    assert!(outputs[0].contains("timed out"), "{}", outputs[0]);
}

#[tokio::test]
async fn max_iterations_ends_the_trace_failed() {
    let f = fixture_with(
        (0..10)
            .map(|_| ScriptedTurn::tool_call("read_progress", json!({})))
            .collect(),
        |o| o.limits.max_iterations = 3,
    );
    let outcome = f.runner.run("Loop forever").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Failed);
    assert_eq!(outcome.iterations, 3);
    assert_eq!(outcome.stop, StopReason::MaxIterations);
    assert!(
        outcome
            .error
            .as_deref()
            .unwrap()
            .starts_with("max_iterations:"),
        "{outcome:?}"
    );
    let trace = f.store.get_trace(&outcome.trace_id).await.unwrap().unwrap();
    assert_eq!(trace.status, TraceStatus::Failed);
    let events = f.store.get_events(&outcome.trace_id, 0).await.unwrap();
    assert!(matches!(
        events.last().unwrap().kind,
        EventKind::TraceCompleted { .. }
    ));
}

#[tokio::test]
async fn max_cost_stops_the_run() {
    let usage = Usage {
        prompt_tokens: 1_000_000,
        completion_tokens: 0,
        cached_tokens: 0,
        estimated: false,
    };
    let f = fixture_with(
        (0..5)
            .map(|_| ScriptedTurn::tool_call("read_progress", json!({})).with_usage(usage))
            .collect(),
        |o| {
            let mut prices = PriceTable::empty();
            prices.insert("scripted", ModelPrice::new(1.0, 1.0));
            o.prices = Arc::new(prices);
            o.limits.max_cost = Some(2.5);
        },
    );
    let outcome = f.runner.run("Spend").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Failed);
    assert_eq!(outcome.iterations, 3);
    assert_eq!(outcome.stop, StopReason::MaxCost);
    assert!(
        outcome.error.as_deref().unwrap().starts_with("max_cost:"),
        "{outcome:?}"
    );
    assert!((outcome.stats.total_cost - 3.0).abs() < 1e-9, "{outcome:?}");
}

#[tokio::test]
async fn cancel_mid_tool_records_the_result_and_ends_cancelled() {
    let f = fixture(vec![
        ScriptedTurn::tool_call("bash", json!({"command": "sleep 30"})),
        ScriptedTurn::text("never reached"),
    ]);
    let handle = f.runner.start("Sleep").await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = Instant::now();
    handle.cancel();
    let trace_id = handle.trace_id.clone();
    let outcome = handle.wait().await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(outcome.status, TraceStatus::Cancelled);
    let outputs = tool_outputs(&f.store, &trace_id).await;
    assert_eq!(outputs.len(), 1, "the call has its result");
    assert!(outputs[0].contains("cancel"), "{}", outputs[0]);
    assert_eq!(f.llm.served(), 1);
}

#[tokio::test]
async fn rejected_calls_are_not_run_and_the_model_is_told() {
    let f = fixture_with(
        vec![
            ScriptedTurn::tool_call("write_file", json!({"path": "x.txt", "content": "x"})),
            ScriptedTurn::text("Understood."),
        ],
        |o| {
            o.approval = Approval::ask(RejectAll {
                reason: "not today".into(),
            })
        },
    );
    let outcome = f.runner.run("Write x").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed);
    assert!(!f.workspace.path().join("x.txt").exists());
    let outputs = tool_outputs(&f.store, &outcome.trace_id).await;
    assert_eq!(
        outputs[0],
        "error: the user rejected this write_file call: not today"
    );
}

#[tokio::test]
async fn resume_answers_dangling_calls_and_continues() {
    let f = fixture(vec![ScriptedTurn::text("Finished after the crash.")]);
    // A run that crashed after recording a tool call but before its result.
    let trace = f
        .store
        .create_trace(NewTrace::agent("Crashy task"))
        .await
        .unwrap();
    let id = trace.trace_id.clone();
    f.store
        .add_message(&id, NewMessage::user("Crashy task"))
        .await
        .unwrap();
    let call = ToolCall::new("c1", "bash", "{\"command\":\"true\"}");
    f.store
        .add_message(
            &id,
            NewMessage::assistant(AssistantContent::new(None, vec![call])),
        )
        .await
        .unwrap();

    let outcome = f.runner.resume(&id).await.unwrap();
    assert_eq!(outcome.trace_id, id);
    assert_eq!(outcome.status, TraceStatus::Completed);
    let outputs = tool_outputs(&f.store, &id).await;
    assert_eq!(outputs.len(), 1);
    assert!(outputs[0].contains("interrupted"), "{}", outputs[0]);
    // The model saw a valid conversation: the call, then its interrupted result.
    let seen = render_transcript(&f.llm.requests()[0].messages);
    assert!(seen.contains("tool [c1]: error: interrupted"), "{seen}");

    // A completed trace is not resumed.
    let again = f.runner.resume(&id).await.unwrap_err();
    assert!(again.to_string().contains("already completed"), "{again}");
}

#[tokio::test]
async fn resume_continues_a_cancelled_trace() {
    let f = fixture(vec![
        ScriptedTurn::tool_call("read_progress", json!({})),
        ScriptedTurn::text("Done at last."),
    ]);
    let trace_id = f.runner.create("Two steps").await.unwrap();
    let stop = TraceUpdate {
        status: Some(TraceStatus::Cancelled),
        ..TraceUpdate::default()
    };
    f.store.update_trace(&trace_id, stop).await.unwrap();
    let outcome = f.runner.resume(&trace_id).await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed);
    assert_eq!(outcome.response.as_deref(), Some("Done at last."));
}

#[tokio::test]
async fn a_model_error_fails_the_trace_with_the_error() {
    let f = fixture(vec![ScriptedTurn::error(
        agent_llm::ScriptedErrorKind::Authentication,
        "bad key",
    )]);
    let outcome = f.runner.run("Anything").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Failed);
    assert!(
        outcome.error.as_deref().unwrap().contains("model error"),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_missing_workspace_is_a_clear_error() {
    let store = Arc::new(InMemoryTraceStore::new());
    let llm = Arc::new(ScriptedClient::new(vec![]));
    let options = RunnerOptions::new("scripted", "/definitely/not/here")
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    let runner = AgentRunner::new(store, llm, ToolRegistry::with_builtins(), options);
    let error = runner.run("x").await.unwrap_err();
    assert!(
        error.to_string().contains("/definitely/not/here"),
        "{error}"
    );
}

#[tokio::test]
async fn a_full_compaction_summarises_when_the_context_is_too_big() {
    let workspace = tempfile::tempdir().unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let llm = Arc::new(
        ScriptedClient::new(vec![
            ScriptedTurn::tool_call(
                "bash",
                json!({"command": "for i in $(seq 3000); do printf 'word%d ' $i; done"}),
            ),
            ScriptedTurn::text("We printed many words; next, answer."),
            ScriptedTurn::text("All done."),
        ])
        .with_context_window(4_000),
    );
    let options = RunnerOptions::new("scripted", workspace.path())
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    let runner = AgentRunner::new(
        store.clone(),
        llm.clone(),
        ToolRegistry::with_builtins(),
        options,
    );
    let outcome = runner.run("Print words").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");

    let requests = llm.requests();
    assert_eq!(requests.len(), 3);
    // The second call is the compaction, the summarising request last.
    // The summary request offers no tool: the conversation travels as a transcript, then the
    // request.
    assert!(requests[1].tools.is_empty());
    let Some(agent_llm::ChatMessage::User(ask)) = requests[1].messages.last() else {
        panic!("the compaction request does not end with a user message")
    };
    assert!(
        ask.starts_with(agent_runner::compaction::SUMMARY_INTRO),
        "{ask}"
    );
    assert!(ask.contains("assistant call: bash("), "{ask}");
    assert!(
        ask.contains("\nProvide a detailed prompt for continuing our conversation"),
        "{ask}"
    );
    // The third call sees the summary instead of the output.
    let after = render_transcript(&requests[2].messages);
    assert!(!after.contains("word2999"), "{after}");
    assert!(
        after.contains("Summary of the conversation so far:\n    We printed many words"),
        "{after}"
    );
    // The store keeps the original output and marks the summary.
    let messages = store.get_trace_messages(&outcome.trace_id).await.unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m.content.text().contains("word2999"))
    );
    let summary = messages
        .iter()
        .find(|m| m.metadata.contains_key("compaction"))
        .unwrap();
    assert_eq!(summary.role, Role::User);
}

#[tokio::test]
async fn a_context_window_error_from_the_provider_compacts_and_retries() {
    let f = fixture(vec![
        ScriptedTurn::tool_call(
            "bash",
            json!({"command": "for i in $(seq 1000); do printf 'word%d ' $i; done"}),
        ),
        ScriptedTurn::error(
            agent_llm::ScriptedErrorKind::ContextWindowExceeded,
            "too long",
        ),
        ScriptedTurn::text("Summary: printed many words."),
        ScriptedTurn::text("Answer after compaction."),
    ]);
    let outcome = f.runner.run("Big task").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    assert_eq!(
        outcome.response.as_deref(),
        Some("Answer after compaction.")
    );
    assert_eq!(f.llm.requests().len(), 4);
}

/// A read-only tool that only returns once two calls are in it at the same time.
struct Rendezvous(Arc<tokio::sync::Barrier>);

#[async_trait::async_trait]
impl agent_tools::Tool for Rendezvous {
    fn definition(&self) -> agent_tools::ToolDefinition {
        agent_tools::ToolDefinition {
            name: "rendezvous".into(),
            description: "Waits for a second caller.".into(),
            parameters: json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        }
    }

    fn risk(&self) -> agent_tools::Risk {
        agent_tools::Risk::ReadOnly
    }

    async fn call(
        &self,
        args: serde_json::Value,
        _ctx: &agent_tools::ToolContext,
    ) -> Result<agent_tools::ToolOutput, agent_tools::ToolError> {
        match tokio::time::timeout(Duration::from_secs(5), self.0.wait()).await {
            Ok(_) => Ok(agent_tools::ToolOutput::text(format!("met {}", args["n"]))),
            Err(_) => Ok(agent_tools::ToolOutput::error("nobody came")),
        }
    }
}

#[tokio::test]
async fn read_only_calls_of_one_turn_run_concurrently_and_results_keep_call_order() {
    let workspace = tempfile::tempdir().unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let llm = Arc::new(ScriptedClient::new(vec![
        ScriptedTurn::tool_call("rendezvous", json!({"n": 1}))
            .with_tool_call("rendezvous", json!({"n": 2})),
        ScriptedTurn::text("Both met."),
    ]));
    let mut tools = ToolRegistry::with_builtins();
    tools
        .register(Arc::new(Rendezvous(Arc::new(tokio::sync::Barrier::new(2)))))
        .unwrap();
    let runner = AgentRunner::new(
        store.clone(),
        llm,
        tools,
        RunnerOptions::new("scripted", workspace.path())
            .with_approval(agent_runner::Approval::Allow)
            .with_sub_agents(),
    );
    let outcome = runner.run("Meet").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed);
    assert_eq!(
        tool_outputs(&store, &outcome.trace_id).await,
        vec!["met 1", "met 2"]
    );
}

#[tokio::test]
async fn the_run_handle_streams_the_runs_events_and_ends_with_trace_completed() {
    use futures::StreamExt;
    let f = fixture(vec![
        goal(json!({"add": "Only goal", "focus": "1"})),
        goal(json!({"done": "done"})),
        ScriptedTurn::text("Finished."),
    ]);
    let handle = f.runner.start("Stream me").await.unwrap();
    let events: Vec<_> = handle.events().map(|e| e.unwrap()).collect().await;
    let outcome = handle.wait().await.unwrap();
    let names: Vec<&str> = events.iter().map(|e| e.kind.name()).collect();
    assert_eq!(names.last(), Some(&"trace_completed"), "{names:?}");
    assert!(
        names.contains(&"goal_added") && names.contains(&"message_added"),
        "{names:?}"
    );
    let stored = f.store.get_events(&outcome.trace_id, 0).await.unwrap();
    assert_eq!(
        events, stored,
        "the stream is the stored events, in order, once each"
    );
}

/// Approves after the test has seen the trace waiting.
struct Gate(tokio::sync::Mutex<Option<tokio::sync::oneshot::Receiver<()>>>);

#[async_trait::async_trait]
impl agent_runner::ApprovalHandler for Gate {
    async fn decide(
        &self,
        _request: agent_runner::ApprovalRequest,
    ) -> agent_runner::ApprovalDecision {
        if let Some(open) = self.0.lock().await.take() {
            let _ = open.await;
        }
        agent_runner::ApprovalDecision::Approve
    }
}

#[tokio::test]
async fn a_trace_waits_while_a_risky_call_is_pending_approval() {
    let (open, gate) = tokio::sync::oneshot::channel();
    let f = fixture_with(
        vec![
            ScriptedTurn::tool_call("write_file", json!({"path": "y.txt", "content": "y"})),
            ScriptedTurn::text("Written."),
        ],
        |o| o.approval = Approval::ask(Gate(tokio::sync::Mutex::new(Some(gate)))),
    );
    let handle = f.runner.start("Write y").await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let trace = f.store.get_trace(&handle.trace_id).await.unwrap().unwrap();
        if trace.status == TraceStatus::Waiting {
            break;
        }
        assert!(Instant::now() < deadline, "the trace never waited");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        !f.workspace.path().join("y.txt").exists(),
        "nothing runs before approval"
    );
    open.send(()).unwrap();
    let outcome = handle.wait().await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed);
    assert!(f.workspace.path().join("y.txt").exists());
}

#[tokio::test]
async fn a_model_call_over_its_timeout_fails_the_trace() {
    let f = fixture_with(
        vec![ScriptedTurn::text("too late").with_delay(Duration::from_secs(30))],
        |o| o.limits.llm_timeout = Duration::from_millis(200),
    );
    let started = Instant::now();
    let outcome = f.runner.run("Hurry").await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(outcome.status, TraceStatus::Failed);
    assert!(
        outcome.error.as_deref().unwrap().contains("timeout"),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_done_plan_ends_with_a_closing_report_from_every_goal() {
    let turns = vec![
        goal(json!({"add": "Write the file, Check it, Try a database", "focus": "1"})),
        goal(json!({"done": "notes.txt holds hello", "focus": "2"})),
        goal(json!({"done": "it reads back as hello", "focus": "3"})),
        goal(json!({"abandon": "there is no database here"})),
        ScriptedTurn::text("All done."),
        ScriptedTurn::text("## Report\nnotes.txt holds hello; no database."),
    ];
    let f = fixture_with(turns, |o| o.closing_report = true);
    let outcome = f.runner.run("Write notes.txt").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let report = "## Report\nnotes.txt holds hello; no database.";
    // The final answer stays the response; the report follows it and is the summary.
    assert_eq!(outcome.response.as_deref(), Some("All done."));
    assert_eq!(outcome.report.as_deref(), Some(report));
    let trace = f.store.get_trace(&outcome.trace_id).await.unwrap().unwrap();
    assert_eq!(trace.summary.as_deref(), Some(report));

    // One call wrote it, from the mission, every summary and the abandoned goal's reason.
    let request = f.llm.requests().last().unwrap().clone();
    assert!(request.tools.is_empty());
    assert_eq!(request.messages[0].text(), agent_runner::REPORT_PROMPT);
    let material = request.messages[1].text();
    for part in [
        "Write notes.txt",
        "1. Write the file: notes.txt holds hello",
        "2. Check it: it reads back as hello",
        "- Try a database: there is no database here",
        "All done.",
    ] {
        assert!(material.contains(part), "{part:?} in {material}");
    }
    let messages = f.store.get_trace_messages(&outcome.trace_id).await.unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last.content.text(), report);
    assert_eq!(last.metadata[agent_execution::meta::CLOSING_REPORT], true);
}

#[tokio::test]
async fn a_report_that_fails_leaves_the_answer_and_a_run_without_reports_makes_none() {
    let turns = || {
        vec![
            goal(json!({"add": "One, Two", "focus": "1"})),
            goal(json!({"done": "one", "focus": "2"})),
            goal(json!({"done": "two"})),
            ScriptedTurn::text("All done."),
            ScriptedTurn::error(agent_llm::ScriptedErrorKind::Server, "down"),
        ]
    };
    let f = fixture_with(turns(), |o| o.closing_report = true);
    let outcome = f.runner.run("Count").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    assert_eq!(outcome.response.as_deref(), Some("All done."));
    assert_eq!(outcome.report, None);

    let f = fixture(turns());
    let outcome = f.runner.run("Count").await.unwrap();
    assert_eq!(outcome.response.as_deref(), Some("All done."));
    assert_eq!(outcome.report, None);
    assert_eq!(f.llm.requests().len(), 4, "no report call");
}
