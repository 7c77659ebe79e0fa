//! The loop guard in real runs with the scripted model: each pattern is warned (a message the
//! model sees and a `loop_detected` event), then stopped (`failed`, `stuck: …`, resumable) when
//! it goes on; a model that heeds the warning finishes; a long run of distinct reads is left
//! alone; thresholds come from the run limits.

use std::sync::Arc;

use agent_execution::meta::LOOP_GUARD as LOOP_GUARD_KEY;
use agent_execution::{EventKind, InMemoryTraceStore, Role, TraceStatus, TraceStore};
use agent_execution::{LoopAction, LoopPattern};
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::{AgentRunner, LoopGuard, RunOutcome, RunnerOptions};
use agent_tools::ToolRegistry;
use serde_json::json;

struct Run {
    store: Arc<InMemoryTraceStore>,
    llm: Arc<ScriptedClient>,
    outcome: RunOutcome,
    _workspace: tempfile::TempDir,
}

async fn run(turns: Vec<ScriptedTurn>, configure: impl FnOnce(&mut RunnerOptions)) -> Run {
    let workspace = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.txt"] {
        std::fs::write(workspace.path().join(name), format!("{name}\n")).unwrap();
    }
    for index in 0..40 {
        let name = format!("file_{index}.txt");
        std::fs::write(workspace.path().join(&name), format!("line {index}\n")).unwrap();
    }
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
    let outcome = runner.run("Look at the files").await.unwrap();
    Run {
        store,
        llm,
        outcome,
        _workspace: workspace,
    }
}

fn read(path: &str) -> ScriptedTurn {
    ScriptedTurn::tool_call("read_file", json!({"path": path}))
}

fn times(turn: &ScriptedTurn, n: usize) -> Vec<ScriptedTurn> {
    (0..n).map(|_| turn.clone()).collect()
}

impl Run {
    /// The `loop_detected` events as `(pattern, action)`.
    async fn detections(&self) -> Vec<(LoopPattern, LoopAction, String)> {
        let events = self
            .store
            .get_events(&self.outcome.trace_id, 0)
            .await
            .unwrap();
        events
            .into_iter()
            .filter_map(|e| match e.kind {
                EventKind::LoopDetected {
                    pattern,
                    action,
                    detail,
                } => Some((pattern, action, detail)),
                _ => None,
            })
            .collect()
    }

    /// The warning messages recorded in the trace.
    async fn warnings(&self) -> Vec<String> {
        self.store
            .get_trace_messages(&self.outcome.trace_id)
            .await
            .unwrap()
            .into_iter()
            .filter(|m| m.role == Role::User && m.metadata.contains_key(LOOP_GUARD_KEY))
            .map(|m| m.content.text().to_owned())
            .collect()
    }

    fn error(&self) -> &str {
        self.outcome.error.as_deref().unwrap_or_default()
    }

    /// Checks a run that was warned once about `pattern` and then stopped.
    async fn assert_warned_then_stopped(&self, pattern: LoopPattern, model_calls: u32) {
        assert_eq!(
            self.outcome.status,
            TraceStatus::Failed,
            "{:?}",
            self.outcome
        );
        assert!(
            self.error()
                .starts_with(&format!("stuck: {}: ", pattern.name())),
            "{}",
            self.error()
        );
        assert_eq!(self.outcome.iterations, model_calls);
        let detections = self.detections().await;
        let actions: Vec<_> = detections.iter().map(|(p, a, _)| (*p, *a)).collect();
        assert_eq!(
            actions,
            [
                (pattern, LoopAction::Warned),
                (pattern, LoopAction::Stopped)
            ]
        );
        let warnings = self.warnings().await;
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with(&format!("Loop detected ({}): ", pattern.name())),
            "{}",
            warnings[0]
        );
        // The model saw the warning on the call after it was given.
        let requests = self.llm.requests();
        let seen = requests[model_calls as usize - 1]
            .messages
            .last()
            .unwrap()
            .text()
            .to_owned();
        assert_eq!(seen, warnings[0]);
    }
}

#[tokio::test]
async fn the_same_call_with_the_same_result_is_warned_then_stopped() {
    let f = run(times(&read("a.txt"), 10), |_| {}).await;
    f.assert_warned_then_stopped(LoopPattern::RepeatedCall, 4)
        .await;
    let detections = f.detections().await;
    assert_eq!(
        detections[0].2,
        r#"read_file {"path":"a.txt"} returned the same result 3 times in a row"#
    );
    assert_eq!(
        f.error(),
        r#"stuck: repeated_call: read_file {"path":"a.txt"} returned the same result 4 times in a row"#
    );
}

#[tokio::test]
async fn the_same_error_is_warned_then_stopped() {
    // Different arguments, the same failure: an unknown tool.
    let turns: Vec<ScriptedTurn> = (0..10)
        .map(|i| ScriptedTurn::tool_call("open_file", json!({"path": format!("x{i}.txt")})))
        .collect();
    let f = run(turns, |_| {}).await;
    f.assert_warned_then_stopped(LoopPattern::RepeatedError, 4)
        .await;
    assert!(
        f.error().contains("open_file failed 4 times in a row"),
        "{}",
        f.error()
    );
}

#[tokio::test]
async fn two_calls_alternating_are_warned_then_stopped() {
    let mut turns = Vec::new();
    for _ in 0..6 {
        turns.push(read("a.txt"));
        turns.push(read("b.txt"));
    }
    let f = run(turns, |_| {}).await;
    f.assert_warned_then_stopped(LoopPattern::AlternatingCalls, 7)
        .await;
}

#[tokio::test]
async fn a_model_that_heeds_the_warning_finishes() {
    let mut turns = times(&read("a.txt"), 3);
    turns.push(read("b.txt"));
    turns.push(ScriptedTurn::text("a.txt and b.txt hold their names."));
    let f = run(turns, |_| {}).await;
    assert_eq!(f.outcome.status, TraceStatus::Completed, "{:?}", f.outcome);
    let actions: Vec<_> = f.detections().await.into_iter().map(|d| d.1).collect();
    assert_eq!(actions, [LoopAction::Warned]);
}

#[tokio::test]
async fn a_long_run_of_distinct_reads_is_not_a_loop() {
    let mut turns: Vec<ScriptedTurn> = (0..40).map(|i| read(&format!("file_{i}.txt"))).collect();
    turns.push(ScriptedTurn::text("Read them all."));
    let f = run(turns, |_| {}).await;
    assert_eq!(f.outcome.status, TraceStatus::Completed, "{:?}", f.outcome);
    assert_eq!(f.outcome.iterations, 41);
    assert!(f.detections().await.is_empty());
    assert!(f.warnings().await.is_empty());
}

#[tokio::test]
async fn thresholds_come_from_the_limits_and_a_stuck_run_can_be_resumed() {
    let mut turns = times(&read("a.txt"), 6);
    turns.push(ScriptedTurn::text("done"));
    let f = run(turns, |options| {
        options.limits.loop_guard = LoopGuard {
            repeated_call: 5,
            ..LoopGuard::default()
        };
    })
    .await;
    // Warned after the fifth read, stopped after the sixth.
    assert_eq!(f.outcome.iterations, 6);
    assert_eq!(f.outcome.status, TraceStatus::Failed);

    // Without a guard the same script runs to its end.
    let mut turns = times(&read("a.txt"), 6);
    turns.push(ScriptedTurn::text("done"));
    let unguarded = run(turns, |options| {
        options.limits.loop_guard = LoopGuard::off()
    })
    .await;
    assert_eq!(unguarded.outcome.status, TraceStatus::Completed);

    // A stuck trace is failed, not completed: it can be resumed.
    let runner = AgentRunner::new(
        f.store.clone(),
        Arc::new(ScriptedClient::new(vec![ScriptedTurn::text(
            "Stopped looping.",
        )])),
        ToolRegistry::with_builtins(),
        RunnerOptions::new("scripted", f._workspace.path())
            .with_approval(agent_runner::Approval::Allow)
            .with_sub_agents(),
    );
    let resumed = runner.resume(&f.outcome.trace_id).await.unwrap();
    assert_eq!(resumed.status, TraceStatus::Completed, "{resumed:?}");
    let trace = f
        .store
        .get_trace(&f.outcome.trace_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(trace.error, None);
}
