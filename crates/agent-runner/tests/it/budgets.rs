//! Budgets that hold: the limits a run started with are stored with its trace and apply when it
//! is resumed unless the caller overrides them, and the spending of explore branches counts
//! toward the main trace's `max_cost`.

use std::sync::Arc;

use agent_execution::{InMemoryTraceStore, TraceLimits, TraceStatus, TraceStore};
use agent_llm::{ModelPrice, PriceTable, ScriptedClient, ScriptedTurn, Usage};
use agent_runner::{AgentRunner, Approval, RunnerOptions, StopReason, stats_with_sub_traces};
use agent_tools::ToolRegistry;
use serde_json::json;

/// One million prompt tokens: $1 at the test price.
const DOLLAR: Usage = Usage {
    prompt_tokens: 1_000_000,
    completion_tokens: 0,
    cached_tokens: 0,
    estimated: false,
};

fn paid(turn: ScriptedTurn) -> ScriptedTurn {
    turn.with_usage(DOLLAR)
}

/// A turn that costs nothing: it removes the goals `progress_turns` left pending, so that the
/// run can end completed.
fn tidy(goals: &str) -> ScriptedTurn {
    let nothing = Usage {
        prompt_tokens: 0,
        ..DOLLAR
    };
    ScriptedTurn::tool_call("goal", json!({"delete": goals})).with_usage(nothing)
}

/// Paid turns that each add a goal (all different, so the loop guard lets them be).
fn progress_turns(count: usize) -> Vec<ScriptedTurn> {
    (0..count)
        .map(|i| {
            paid(ScriptedTurn::tool_call(
                "goal",
                json!({"add": format!("Step {i}")}),
            ))
        })
        .collect()
}

fn runner(
    store: &Arc<InMemoryTraceStore>,
    llm: &Arc<ScriptedClient>,
    workspace: &tempfile::TempDir,
    configure: impl FnOnce(RunnerOptions) -> RunnerOptions,
) -> AgentRunner {
    let mut prices = PriceTable::empty();
    prices.insert("scripted", ModelPrice::new(1.0, 1.0));
    let mut options = RunnerOptions::new("scripted", workspace.path())
        .with_approval(Approval::Allow)
        .with_sub_agents();
    options.prices = Arc::new(prices);
    AgentRunner::new(
        store.clone(),
        llm.clone(),
        ToolRegistry::with_builtins(),
        configure(options),
    )
}

#[tokio::test]
async fn a_resume_keeps_the_stored_budget_unless_the_caller_raises_it() {
    let workspace = tempfile::tempdir().unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let first = Arc::new(ScriptedClient::new(progress_turns(5)));
    let outcome = runner(&store, &first, &workspace, |o| o.with_max_cost(2.5))
        .run("Spend")
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::MaxCost, "{outcome:?}");
    assert_eq!(first.served(), 3);
    let trace_id = outcome.trace_id;
    let stored = store.get_trace(&trace_id).await.unwrap().unwrap().limits;
    assert_eq!(
        stored,
        Some(TraceLimits {
            max_iterations: Some(100),
            max_cost: Some(2.5)
        })
    );

    // A resume whose caller sets no budget keeps the stored one: it stops before any model call.
    let second = Arc::new(ScriptedClient::new(progress_turns(5)));
    let outcome = runner(&store, &second, &workspace, |o| o)
        .resume(&trace_id)
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::MaxCost, "{outcome:?}");
    assert_eq!(outcome.status, TraceStatus::Failed);
    assert_eq!(outcome.iterations, 0);
    assert_eq!(second.served(), 0, "no model call past the budget");
    assert!((outcome.stats.total_cost - 3.0).abs() < 1e-9, "{outcome:?}");

    // A caller that raises the budget goes on.
    let third = Arc::new(ScriptedClient::new(vec![
        paid(ScriptedTurn::tool_call("read_progress", json!({}))),
        tidy("1, 2, 3"),
        paid(ScriptedTurn::text("Done.")),
    ]));
    let outcome = runner(&store, &third, &workspace, |o| o.with_max_cost(10.0))
        .resume(&trace_id)
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::Completed, "{outcome:?}");
    assert_eq!(outcome.iterations, 3);
    assert!((outcome.stats.total_cost - 5.0).abs() < 1e-9, "{outcome:?}");
    // The raised budget is the trace's now: the next run of it starts from it.
    let stored = store.get_trace(&trace_id).await.unwrap().unwrap().limits;
    assert_eq!(stored.and_then(|l| l.max_cost), Some(10.0));
}

#[tokio::test]
async fn a_resume_keeps_the_stored_iteration_limit_per_run() {
    let workspace = tempfile::tempdir().unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let llm = Arc::new(ScriptedClient::new(progress_turns(10)));
    let outcome = runner(&store, &llm, &workspace, |o| o.with_max_iterations(2))
        .run("Loop")
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::MaxIterations);
    // The default of these options is 100 calls; the trace's own limit of 2 applies again.
    let outcome = runner(&store, &llm, &workspace, |o| o)
        .resume(&outcome.trace_id)
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::MaxIterations, "{outcome:?}");
    assert_eq!(outcome.iterations, 2);
    assert_eq!(llm.served(), 4);
}

#[tokio::test]
async fn explore_branches_that_spend_the_main_budget_stop_and_so_does_the_main_run() {
    const A: &str = "Branch A spends";
    const B: &str = "Branch B spends";
    let workspace = tempfile::tempdir().unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let llm = Arc::new(
        ScriptedClient::new(vec![
            paid(ScriptedTurn::tool_call(
                "explore",
                json!({"branches": [A, B]}),
            )),
            paid(ScriptedTurn::text("never reached")),
        ])
        .with_route(A, progress_turns(10))
        .with_route(B, progress_turns(10)),
    );
    let outcome = runner(&store, &llm, &workspace, |o| o.with_max_cost(2.5))
        .run("Explore two ways")
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::MaxCost, "{outcome:?}");
    assert_eq!(outcome.status, TraceStatus::Failed);
    assert_eq!(
        outcome.iterations, 1,
        "the main run stopped before its next call"
    );
    // The main trace spent $1 itself; the branches stopped once the whole tree reached $2.50
    // (each may have had one call in flight when the other crossed the line).
    assert!((outcome.stats.total_cost - 1.0).abs() < 1e-9, "{outcome:?}");
    let total = outcome.stats_with_sub_traces.total_cost;
    assert!((3.0 - 1e-9..=4.0 + 1e-9).contains(&total), "{total}");
    assert_eq!(
        stats_with_sub_traces(store.as_ref(), &outcome.trace_id)
            .await
            .unwrap(),
        outcome.stats_with_sub_traces
    );
    let branches = store.get_sub_traces(&outcome.trace_id).await.unwrap();
    assert_eq!(branches.len(), 2);
    for branch in &branches {
        assert_eq!(branch.status, TraceStatus::Failed, "{branch:?}");
        let error = branch.error.as_deref().unwrap();
        assert!(
            error.starts_with("max_cost:") && error.contains(&outcome.trace_id),
            "{error}"
        );
    }
}

#[tokio::test]
async fn a_branch_resumed_alone_is_held_to_the_main_budget() {
    const A: &str = "Branch A spends";
    let workspace = tempfile::tempdir().unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let llm = Arc::new(
        ScriptedClient::new(vec![paid(ScriptedTurn::tool_call(
            "explore",
            json!({"branches": [A]}),
        ))])
        .with_route(A, progress_turns(10)),
    );
    let outcome = runner(&store, &llm, &workspace, |o| o.with_max_cost(2.5))
        .run("Explore")
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::MaxCost);
    let branch = store.get_sub_traces(&outcome.trace_id).await.unwrap()[0].clone();
    let served = llm.served();
    let resumed = runner(&store, &llm, &workspace, |o| o)
        .resume(&branch.trace_id)
        .await
        .unwrap();
    assert_eq!(resumed.stop, StopReason::MaxCost, "{resumed:?}");
    assert_eq!(llm.served(), served, "no model call past the main budget");
}

#[tokio::test]
async fn a_continue_keeps_the_stored_budget_unless_the_caller_raises_it() {
    let workspace = tempfile::tempdir().unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let first = Arc::new(ScriptedClient::new(vec![paid(ScriptedTurn::text("One."))]));
    let outcome = runner(&store, &first, &workspace, |o| o.with_max_cost(1.5))
        .run("Answer")
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::Completed, "{outcome:?}");
    let trace_id = outcome.trace_id;

    // The follow-up's first call spends the rest of the stored budget; the run stops there.
    let second = Arc::new(ScriptedClient::new(progress_turns(5)));
    let outcome = runner(&store, &second, &workspace, |o| o)
        .continue_trace(&trace_id, "And more?")
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::MaxCost, "{outcome:?}");
    assert_eq!(second.served(), 1, "no model call past the stored budget");

    // A caller that raises the budget goes on with the same trace.
    let third = Arc::new(ScriptedClient::new(vec![
        tidy("1"),
        paid(ScriptedTurn::text("Two.")),
    ]));
    let outcome = runner(&store, &third, &workspace, |o| o.with_max_cost(10.0))
        .continue_trace(&trace_id, "Finish.")
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::Completed, "{outcome:?}");
    assert_eq!(outcome.trace_id, trace_id);
}
