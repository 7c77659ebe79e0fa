//! Sub-agents stopped in the middle: cancelling a run cancels its branches promptly, and
//! resuming finishes the interrupted `explore` or `delegate` call — after a cancel, and after a
//! crash at any step (simulated by writing the state a crash leaves behind).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::{call, tool_names, tool_results};
use agent_execution::ids::sub_trace_id;
use agent_execution::{
    InMemoryTraceStore, NewMessage, NewTrace, TraceOutcome, TraceStatus, TraceStore,
};
use agent_goal::{GoalStatus, GoalType};
use agent_llm::{ScriptedClient, ScriptedTurn};
use agent_runner::context::conversation;
use agent_runner::{AgentRunner, RunnerOptions};
use agent_tools::ToolRegistry;
use serde_json::json;

const ALPHA: &str = "Approach alpha: cache the parsed config";
const BETA: &str = "Approach beta: parse lazily on first use";
const GAMMA: &str = "Approach gamma: precompute at build time";

struct Fixture {
    store: Arc<InMemoryTraceStore>,
    llm: Arc<ScriptedClient>,
    runner: AgentRunner,
    _workspace: tempfile::TempDir,
}

fn fixture(llm: ScriptedClient) -> Fixture {
    let workspace = tempfile::tempdir().unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let llm = Arc::new(llm);
    let options = RunnerOptions::new("scripted", workspace.path())
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
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
        _workspace: workspace,
    }
}

/// Waits until `done` holds, for at most five seconds.
async fn until(mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A turn that would answer only after a minute.
fn slow(text: &str) -> ScriptedTurn {
    ScriptedTurn::text(text).with_delay(Duration::from_secs(60))
}

/// The assistant content of one call, as the runner records it.
fn assistant_call(id: &str, name: &str, arguments: serde_json::Value) -> NewMessage {
    let call = agent_llm::ToolCall::new(id, name, arguments.to_string());
    NewMessage::assistant(agent_execution::AssistantContent::new(None, vec![call]))
}

#[tokio::test]
async fn cancelling_the_run_cancels_every_branch_and_resuming_finishes_the_exploration() {
    let llm = ScriptedClient::new(vec![
        call("explore", json!({"branches": [ALPHA, BETA, GAMMA]})),
        ScriptedTurn::text("Picked alpha."),
    ])
    .with_route(
        ALPHA,
        vec![slow("never"), ScriptedTurn::text("alpha, resumed")],
    )
    .with_route(
        BETA,
        vec![slow("never"), ScriptedTurn::text("beta, resumed")],
    )
    .with_route(
        GAMMA,
        vec![slow("never"), ScriptedTurn::text("gamma, resumed")],
    );
    let f = fixture(llm);
    let handle = f.runner.start("Make config loading fast").await.unwrap();
    let main = handle.trace_id.clone();
    until(|| (0..3).all(|route| f.llm.route_requests(route).len() == 1)).await;

    let cancelled_at = Instant::now();
    handle.cancel();
    let outcome = handle.wait().await.unwrap();
    assert!(
        cancelled_at.elapsed() < Duration::from_secs(15),
        "cancel took {:?}",
        cancelled_at.elapsed()
    );
    assert_eq!(outcome.status, TraceStatus::Cancelled);
    let subs = f.store.get_sub_traces(&main).await.unwrap();
    assert_eq!(subs.len(), 3);
    assert!(
        subs.iter().all(|s| s.status == TraceStatus::Cancelled),
        "{subs:#?}"
    );
    // The call is left without a result and the exploration stays open, to be finished.
    assert!(tool_results(f.store.as_ref(), &main).await.is_empty());
    let tree = f.store.get_goal_tree(&main).await.unwrap().unwrap();
    assert_eq!(tree.goals().len(), 1);
    assert_eq!(tree.goals()[0].goal_type, GoalType::ExploreStart);
    assert_eq!(tree.current_id(), Some(tree.goals()[0].id.as_str()));

    let resumed = f.runner.resume(&main).await.unwrap();
    assert_eq!(resumed.status, TraceStatus::Completed, "{resumed:?}");
    assert_eq!(resumed.response.as_deref(), Some("Picked alpha."));
    let subs_after = f.store.get_sub_traces(&main).await.unwrap();
    assert_eq!(subs_after.len(), 3, "the same branches went on");
    assert!(
        subs_after
            .iter()
            .all(|s| s.status == TraceStatus::Completed)
    );
    let results = tool_results(f.store.as_ref(), &main).await;
    assert_eq!(results.len(), 1);
    for answer in ["alpha, resumed", "beta, resumed", "gamma, resumed"] {
        assert!(results[0].contains(answer), "{}", results[0]);
    }
    let tree = f.store.get_goal_tree(&main).await.unwrap().unwrap();
    assert_eq!(tree.goals()[1].goal_type, GoalType::ExploreMerge);
    assert_eq!(tree.goals()[0].status, GoalStatus::Completed);
}

#[tokio::test]
async fn a_crash_mid_exploration_keeps_finished_branches_resumes_others_and_creates_missing_ones() {
    let llm = ScriptedClient::new(vec![ScriptedTurn::text("All three compared.")])
        // Alpha finished before the crash: a request for it would fail the test.
        .with_route(ALPHA, Vec::new())
        .with_route(BETA, vec![ScriptedTurn::text("beta after the crash")])
        .with_route(
            GAMMA,
            vec![ScriptedTurn::text("gamma, never started before")],
        );
    let f = fixture(llm);
    let store = &f.store;

    // What a process killed in the middle of the exploration leaves behind.
    let main = f.runner.create("Make config loading fast").await.unwrap();
    let branches = json!({"branches": [ALPHA, BETA, GAMMA]});
    store
        .add_message(&main, assistant_call("call_x", "explore", branches))
        .await
        .unwrap();
    let at = chrono::DateTime::from_timestamp(1_770_242_412, 0).unwrap();
    let ids: Vec<String> = (1..=3)
        .map(|seq| sub_trace_id(&main, "explore", at, seq))
        .collect();
    let start = store
        .start_explore(&main, "Explore 3 approaches", ids.clone())
        .await
        .unwrap();
    let alpha = NewTrace::sub_trace(&main, Some(start.clone()), "explore", ALPHA).with_id(&ids[0]);
    store.create_trace(alpha).await.unwrap();
    store
        .add_message(&ids[0], NewMessage::user(format!("Your branch: {ALPHA}")))
        .await
        .unwrap();
    store
        .add_message(
            &ids[0],
            NewMessage::assistant(agent_execution::AssistantContent::new(
                Some("alpha finished".into()),
                Vec::new(),
            )),
        )
        .await
        .unwrap();
    store
        .finish_trace(&ids[0], TraceOutcome::completed("alpha finished"))
        .await
        .unwrap();
    let beta = NewTrace::sub_trace(&main, Some(start.clone()), "explore", BETA).with_id(&ids[1]);
    store.create_trace(beta).await.unwrap();
    store
        .add_message(&ids[1], NewMessage::user(format!("Your branch: {BETA}")))
        .await
        .unwrap();
    store
        .add_message(
            &ids[1],
            assistant_call("call_b", "read_file", json!({"path": "x"})),
        )
        .await
        .unwrap();

    let outcome = f.runner.resume(&main).await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    assert_eq!(outcome.response.as_deref(), Some("All three compared."));
    assert!(
        f.llm.route_requests(0).is_empty(),
        "alpha was not run again"
    );

    // Beta went on from where it stopped: its dangling call answered, then its next turn.
    let beta_results = tool_results(store.as_ref(), &ids[1]).await;
    assert_eq!(beta_results.len(), 1);
    assert!(beta_results[0].starts_with("error: interrupted"));
    // Gamma was created under the id the goal already listed, as a branch of that goal.
    let gamma = store.get_trace(&ids[2]).await.unwrap().unwrap();
    assert_eq!(gamma.task, GAMMA);
    assert_eq!(gamma.parent_goal_id.as_deref(), Some(start.as_str()));
    assert_eq!(gamma.status, TraceStatus::Completed);
    let gamma_task = conversation(&f.llm.route_requests(2)[0].messages)[0]
        .text()
        .to_owned();
    assert!(gamma_task.ends_with(GAMMA) && gamma_task.contains("branch C of 3"));
    assert_eq!(store.get_sub_traces(&main).await.unwrap().len(), 3);

    let results = tool_results(store.as_ref(), &main).await;
    assert_eq!(results.len(), 1);
    for answer in [
        "alpha finished",
        "beta after the crash",
        "gamma, never started before",
    ] {
        assert!(results[0].contains(answer), "{}", results[0]);
    }
    let tree = store.get_goal_tree(&main).await.unwrap().unwrap();
    let merge = tree
        .goals()
        .iter()
        .find(|g| g.goal_type == GoalType::ExploreMerge)
        .unwrap();
    assert_eq!(merge.explore_start_id.as_deref(), Some(start.as_str()));
    assert_eq!(merge.merge_summary.as_deref(), Some(results[0].as_str()));
}

#[tokio::test]
async fn an_exploration_merged_before_the_crash_is_answered_from_the_record() {
    let llm = ScriptedClient::new(vec![ScriptedTurn::text("Used the recorded merge.")]);
    let f = fixture(llm);
    let store = &f.store;
    let main = f.runner.create("Compare").await.unwrap();
    store
        .add_message(
            &main,
            assistant_call("call_x", "explore", json!({"branches": [ALPHA]})),
        )
        .await
        .unwrap();
    let id = sub_trace_id(
        &main,
        "explore",
        chrono::DateTime::from_timestamp(0, 0).unwrap(),
        1,
    );
    let start = store
        .start_explore(&main, "Explore 1 approach", vec![id.clone()])
        .await
        .unwrap();
    let sub = NewTrace::sub_trace(&main, Some(start.clone()), "explore", ALPHA).with_id(&id);
    store.create_trace(sub).await.unwrap();
    store
        .finish_trace(&id, TraceOutcome::completed("alpha"))
        .await
        .unwrap();
    store
        .finish_explore(
            &main,
            &start,
            "## Exploration results\nthe recorded report",
            None,
        )
        .await
        .unwrap();

    let outcome = f.runner.resume(&main).await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let results = tool_results(store.as_ref(), &main).await;
    assert_eq!(
        results,
        ["## Exploration results\nthe recorded report".to_owned()]
    );
    let tree = store.get_goal_tree(&main).await.unwrap().unwrap();
    assert_eq!(tree.goals().len(), 2, "no second exploration: {tree:#?}");
    assert_eq!(f.llm.requests().len(), 1);
}

#[tokio::test]
async fn an_interrupted_delegate_is_resumed_not_started_again() {
    let task = "Count the config keys";
    let llm = ScriptedClient::new(vec![
        call("delegate", json!({"task": task})),
        ScriptedTurn::text("There are 12 keys."),
    ])
    .with_route(task, vec![slow("never"), ScriptedTurn::text("12 keys")]);
    let f = fixture(llm);
    let handle = f.runner.start("Count keys").await.unwrap();
    let main = handle.trace_id.clone();
    until(|| f.llm.route_requests(0).len() == 1).await;
    handle.cancel();
    let outcome = handle.wait().await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Cancelled);
    let subs = f.store.get_sub_traces(&main).await.unwrap();
    assert_eq!(subs.len(), 1);
    assert_eq!(subs[0].status, TraceStatus::Cancelled);

    let resumed = f.runner.resume(&main).await.unwrap();
    assert_eq!(resumed.status, TraceStatus::Completed, "{resumed:?}");
    let subs = f.store.get_sub_traces(&main).await.unwrap();
    assert_eq!(subs.len(), 1, "the same delegate went on");
    assert_eq!(subs[0].status, TraceStatus::Completed);
    let results = tool_results(f.store.as_ref(), &main).await;
    assert_eq!(results.len(), 1);
    assert!(results[0].contains("12 keys"), "{}", results[0]);
}

#[tokio::test]
async fn a_sub_trace_resumed_by_itself_keeps_its_agent_types_tools() {
    let llm = ScriptedClient::new(vec![
        call("explore", json!({"branches": [ALPHA]})),
        ScriptedTurn::text("Done."),
    ])
    .with_route(
        ALPHA,
        vec![
            ScriptedTurn::error(agent_llm::ScriptedErrorKind::Server, "flaky"),
            ScriptedTurn::text("alpha on the second try"),
        ],
    );
    let f = fixture(llm);
    let outcome = f.runner.run("Explore").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed);
    let sub = f.store.get_sub_traces(&outcome.trace_id).await.unwrap()[0].clone();
    assert_eq!(sub.status, TraceStatus::Failed);

    let resumed = f.runner.resume(&sub.trace_id).await.unwrap();
    assert_eq!(resumed.status, TraceStatus::Completed, "{resumed:?}");
    let requests = f.llm.route_requests(0);
    assert_eq!(tool_names(&requests[0]), tool_names(&requests[1]));
    assert!(!tool_names(&requests[1]).contains(&"bash".to_owned()));
}
