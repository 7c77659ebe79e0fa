//! Sub-agents on the in-memory store with the scripted model, each branch answered from its own
//! route: parallel `explore` (overlap, a failing branch, the merge, the goal tree, events),
//! `delegate`, tool sets and the depth limit, the concurrency limit, and statistics.

use std::sync::Arc;

use crate::support::{Barrier, Gauge, call, tool_names, tool_results};
use agent_execution::{EventKind, InMemoryTraceStore, Role, TraceStatus, TraceStore};
use agent_goal::{GoalStatus, GoalType};
use agent_llm::{ScriptedClient, ScriptedErrorKind, ScriptedTurn};
use agent_runner::context::conversation;
use agent_runner::{AgentRunner, RunnerOptions, stats_with_sub_traces};
use agent_tools::ToolRegistry;
use serde_json::json;

const ALPHA: &str = "Approach alpha: cache the parsed config";
const BETA: &str = "Approach beta: parse lazily on first use";
const GAMMA: &str = "Approach gamma: precompute at build time";

struct Fixture {
    store: Arc<InMemoryTraceStore>,
    llm: Arc<ScriptedClient>,
    runner: AgentRunner,
    workspace: tempfile::TempDir,
}

fn fixture(
    llm: ScriptedClient,
    tools: ToolRegistry,
    configure: impl FnOnce(&mut RunnerOptions),
) -> Fixture {
    let workspace = tempfile::tempdir().unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let llm = Arc::new(llm);
    let mut options = RunnerOptions::new("scripted", workspace.path())
        .with_approval(agent_runner::Approval::Allow)
        .with_sub_agents();
    configure(&mut options);
    let runner = AgentRunner::new(store.clone(), llm.clone(), tools, options);
    Fixture {
        store,
        llm,
        runner,
        workspace,
    }
}

fn with_barrier(parties: usize) -> ToolRegistry {
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(Barrier::new(parties))).unwrap();
    tools
}

#[tokio::test]
async fn three_branches_run_at_once_one_fails_and_the_merge_reports_all_three() {
    let llm = ScriptedClient::new(vec![
        call("explore", json!({"branches": [ALPHA, BETA, GAMMA]})),
        ScriptedTurn::text("Going with alpha."),
    ])
    .with_route(
        ALPHA,
        vec![
            call("barrier", json!({})),
            call("goal", json!({"add": "Measure alpha", "focus": "1"})),
            call("goal", json!({"done": "alpha takes 3 ms per call"})),
            ScriptedTurn::text("Alpha works: 3 ms per call."),
        ],
    )
    .with_route(
        BETA,
        vec![
            call("barrier", json!({})),
            ScriptedTurn::text("Beta works but every first call is slow."),
        ],
    )
    .with_route(
        GAMMA,
        vec![
            call("barrier", json!({})),
            ScriptedTurn::error(ScriptedErrorKind::BadRequest, "gamma exploded"),
        ],
    );
    let f = fixture(llm, with_barrier(3), |_| {});
    let outcome = f.runner.run("Make config loading fast").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    assert_eq!(outcome.response.as_deref(), Some("Going with alpha."));
    let main = outcome.trace_id.clone();

    // All three branches were inside the barrier at the same time.
    let subs = f.store.get_sub_traces(&main).await.unwrap();
    assert_eq!(subs.len(), 3);
    for sub in &subs {
        let results = tool_results(f.store.as_ref(), &sub.trace_id).await;
        assert_eq!(results[0], "3 callers were inside at once", "{}", sub.task);
    }

    // The goal tree: explore_start with the branch ids, then explore_merge pointing at it.
    let tree = f.store.get_goal_tree(&main).await.unwrap().unwrap();
    assert_eq!(tree.goals().len(), 2, "{tree:#?}");
    let (start, merge) = (&tree.goals()[0], &tree.goals()[1]);
    assert_eq!(start.goal_type, GoalType::ExploreStart);
    assert_eq!(start.status, GoalStatus::Completed);
    assert_eq!(merge.goal_type, GoalType::ExploreMerge);
    assert_eq!(merge.explore_start_id.as_deref(), Some(start.id.as_str()));
    assert_eq!(tree.current_id(), None, "focus returns to where it was");
    let branch_ids = start.branch_ids.clone().unwrap();
    let mut by_seq: Vec<_> = subs.iter().collect();
    by_seq.sort_by(|a, b| a.trace_id.cmp(&b.trace_id));
    assert_eq!(
        branch_ids,
        by_seq
            .iter()
            .map(|t| t.trace_id.clone())
            .collect::<Vec<_>>()
    );
    for (index, (id, task)) in branch_ids.iter().zip([ALPHA, BETA, GAMMA]).enumerate() {
        let (prefix, rest) = id.split_once("@explore-").unwrap();
        assert_eq!(prefix, main);
        assert_eq!(rest.len(), 14 + 4, "{id}");
        assert!(rest.ends_with(&format!("-{:03}", index + 1)), "{id}");
        let sub = f.store.get_trace(id).await.unwrap().unwrap();
        assert_eq!(sub.task, task);
        assert_eq!(sub.agent_type.as_deref(), Some("explore"));
        assert_eq!(sub.parent_goal_id.as_deref(), Some(start.id.as_str()));
    }
    let statuses: Vec<TraceStatus> = by_seq.iter().map(|t| t.status).collect();
    assert_eq!(
        statuses,
        [
            TraceStatus::Completed,
            TraceStatus::Completed,
            TraceStatus::Failed
        ]
    );

    // The merged report covers all three and is the explore call's result.
    let report = merge.merge_summary.clone().unwrap();
    assert!(report.starts_with("## Exploration results\n"), "{report}");
    for needle in [
        &format!("### Branch A: {ALPHA}\nStatus: completed"),
        "Alpha works: 3 ms per call.",
        "[✓] 1 Measure alpha → alpha takes 3 ms per call",
        &format!("### Branch B: {BETA}\nStatus: completed"),
        &format!("### Branch C: {GAMMA}\nStatus: failed: model error"),
        "gamma exploded",
        "2 of 3 branches completed, 1 did not",
    ] {
        assert!(report.contains(needle), "missing {needle:?} in\n{report}");
    }
    let messages = f.store.get_trace_messages(&main).await.unwrap();
    let result = messages
        .iter()
        .find(|m| m.tool_name.as_deref() == Some("explore"))
        .unwrap();
    assert_eq!(result.content.text(), report);
    assert_eq!(result.metadata["sub_traces"].as_array().unwrap().len(), 3);
    let last_request = f.llm.requests().last().cloned().unwrap();
    let seen = last_request.messages.last().unwrap().text().to_owned();
    assert!(seen.contains("### Branch C:"), "the model saw the report");

    // Events on the parent.
    let events = f.store.get_events(&main, 0).await.unwrap();
    let started: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SubTraceStarted {
                trace_id,
                parent_goal_id,
                agent_type,
                task,
            } => Some((
                trace_id.clone(),
                parent_goal_id.clone(),
                agent_type.clone(),
                task.clone(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(started.len(), 3);
    for (trace_id, goal, agent_type, task) in &started {
        assert!(branch_ids.contains(trace_id));
        assert_eq!(goal.as_deref(), Some(start.id.as_str()));
        assert_eq!(agent_type, "explore");
        assert!([ALPHA, BETA, GAMMA].contains(&task.as_str()));
    }
    let completed: Vec<TraceStatus> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SubTraceCompleted { status, stats, .. } => {
                assert!(stats.total_messages > 0);
                Some(*status)
            }
            _ => None,
        })
        .collect();
    assert_eq!(completed.len(), 3);
    assert_eq!(
        completed
            .iter()
            .filter(|s| **s == TraceStatus::Completed)
            .count(),
        2
    );

    // The parent's totals are its own; the branches' are added up separately.
    let own = f.store.get_trace(&main).await.unwrap().unwrap().stats();
    let all = stats_with_sub_traces(f.store.as_ref(), &main)
        .await
        .unwrap();
    let branches: u64 = subs.iter().map(|s| s.total_tokens).sum();
    assert_eq!(all.total_tokens, own.total_tokens + branches);
    assert!(branches > 0);
}

#[tokio::test]
async fn branches_start_from_the_main_context_or_the_background_given() {
    let llm = ScriptedClient::new(vec![
        call("goal", json!({"add": "Decide", "focus": "1"})),
        call("read_file", json!({"path": "notes.txt"})),
        call("explore", json!({"branches": [ALPHA, BETA]})),
        call(
            "explore",
            json!({"branches": [GAMMA], "background": "Only this background."}),
        ),
        call("goal", json!({"done": "decided"})),
        ScriptedTurn::text("Done."),
    ])
    .with_route(ALPHA, vec![ScriptedTurn::text("alpha answer")])
    .with_route(BETA, vec![ScriptedTurn::text("beta answer")])
    .with_route(GAMMA, vec![ScriptedTurn::text("gamma answer")]);
    let f = fixture(llm, ToolRegistry::with_builtins(), |_| {});
    std::fs::write(f.workspace.path().join("notes.txt"), "NOTE-CONTENT-42").unwrap();
    let outcome = f.runner.run("Speed up the config loader").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");

    let first_of = |route: usize| {
        let requests = f.llm.route_requests(route);
        conversation(&requests[0].messages)[0].text().to_owned()
    };
    let alpha = first_of(0);
    // The main line's context: its task, what it read, its plan; the branch's own task last.
    assert!(alpha.contains("Speed up the config loader"), "{alpha}");
    assert!(alpha.contains("NOTE-CONTENT-42"), "{alpha}");
    assert!(alpha.contains("## Current Plan"), "{alpha}");
    assert!(
        alpha.ends_with(&format!("## Your branch\n\n{ALPHA}")),
        "{alpha}"
    );
    assert!(alpha.contains("branch A of 2"), "{alpha}");
    let beta = first_of(1);
    assert!(
        beta.contains("branch B of 2") && beta.ends_with(BETA),
        "{beta}"
    );
    let gamma = first_of(2);
    assert!(gamma.contains("Only this background."), "{gamma}");
    assert!(!gamma.contains("NOTE-CONTENT-42"), "{gamma}");

    // Both explorations hang under the goal that was focused, and each got its own merge.
    let tree = f
        .store
        .get_goal_tree(&outcome.trace_id)
        .await
        .unwrap()
        .unwrap();
    let kinds: Vec<(GoalType, Option<&str>)> = tree
        .goals()
        .iter()
        .map(|g| (g.goal_type, g.parent_id.as_deref()))
        .collect();
    assert_eq!(
        kinds,
        [
            (GoalType::Normal, None),
            (GoalType::ExploreStart, Some("1")),
            (GoalType::ExploreMerge, Some("1")),
            (GoalType::ExploreStart, Some("1")),
            (GoalType::ExploreMerge, Some("1")),
        ]
    );
    // The focus stayed on goal 1 through both explorations, until it was done.
    let main: Vec<String> = f
        .llm
        .requests()
        .iter()
        .map(|r| r.messages[1].text().to_owned())
        .filter(|plan| plan.contains("**Mission**: Speed up the config loader"))
        .collect();
    let plan = &main[main.len() - 2];
    assert!(plan.contains("[→] 1. Decide ← current"), "{plan}");
    // Sub-trace numbers go on across explorations of one trace.
    let ids = tree.goals()[3].branch_ids.clone().unwrap();
    assert!(ids[0].ends_with("-003"), "{ids:?}");
}

#[tokio::test]
async fn explore_branches_get_read_only_tools_and_cannot_explore_again() {
    let llm = ScriptedClient::new(vec![
        call("explore", json!({"branches": [ALPHA]})),
        ScriptedTurn::text("Done."),
    ])
    .with_route(
        ALPHA,
        vec![
            call("explore", json!({"branches": ["a nested idea"]})),
            call("delegate", json!({"task": "write the cache"})),
            call("write_file", json!({"path": "x.txt", "content": "x"})),
            ScriptedTurn::text("Nothing nested was possible."),
        ],
    );
    let f = fixture(llm, ToolRegistry::with_builtins(), |_| {});
    let outcome = f.runner.run("Explore alone").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");

    let main_tools = tool_names(&f.llm.requests()[0]);
    for name in [
        "bash",
        "delegate",
        "explore",
        "goal",
        "read_file",
        "write_file",
    ] {
        assert!(main_tools.contains(&name.to_owned()), "{main_tools:?}");
    }
    // The background shells' read and stop tools come only with `bash`: a branch has none.
    let branch_tools = tool_names(&f.llm.route_requests(0)[0]);
    assert_eq!(
        branch_tools,
        ["glob_files", "goal", "grep", "read_file", "read_progress"]
    );

    let sub = &f.store.get_sub_traces(&outcome.trace_id).await.unwrap()[0];
    let results = tool_results(f.store.as_ref(), &sub.trace_id).await;
    assert!(
        results[0].starts_with(
            "error: explore is refused here: the depth limit of `explore` sub-traces is 1, and \
             this trace (main → explore) is already 1 deep in them."
        ),
        "{}",
        results[0]
    );
    assert!(
        results[1].starts_with(
            "error: delegate is not available here: the tool set of `explore` sub-traces does \
             not include it."
        ),
        "{}",
        results[1]
    );
    assert!(
        results[2].starts_with("error: unknown tool"),
        "{}",
        results[2]
    );
    assert!(!f.workspace.path().join("x.txt").exists());
    assert!(
        f.store
            .get_sub_traces(&sub.trace_id)
            .await
            .unwrap()
            .is_empty(),
        "nothing was spawned from the branch"
    );
}

#[tokio::test]
async fn a_raised_depth_limit_lets_a_branch_explore_once_more() {
    let llm = ScriptedClient::new(vec![
        call("explore", json!({"branches": ["outer idea"]})),
        ScriptedTurn::text("Done."),
    ])
    .with_route(
        "outer idea",
        vec![
            call("explore", json!({"branches": ["inner idea"]})),
            ScriptedTurn::text("outer answer"),
        ],
    )
    .with_route(
        "inner idea",
        vec![
            call("explore", json!({"branches": ["too deep"]})),
            ScriptedTurn::text("inner answer"),
        ],
    );
    let f = fixture(llm, ToolRegistry::with_builtins(), |options| {
        let explore = options.sub_agents.agent_types.get_mut("explore").unwrap();
        explore.max_depth = 2;
    });
    let outcome = f.runner.run("Explore deeply").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let outer = &f.store.get_sub_traces(&outcome.trace_id).await.unwrap()[0];
    let inner = &f.store.get_sub_traces(&outer.trace_id).await.unwrap()[0];
    assert!(
        inner
            .trace_id
            .starts_with(&format!("{}@explore-", outer.trace_id))
    );
    assert_eq!(inner.status, TraceStatus::Completed);
    let results = tool_results(f.store.as_ref(), &inner.trace_id).await;
    assert!(
        results[0].contains("the depth limit of `explore` sub-traces is 2"),
        "{}",
        results[0]
    );
    let outer_results = tool_results(f.store.as_ref(), &outer.trace_id).await;
    assert!(
        outer_results[0].contains("inner answer"),
        "{}",
        outer_results[0]
    );
}

#[tokio::test]
async fn the_concurrency_limit_bounds_how_many_branches_run_at_once() {
    let gauge = Arc::new(Gauge::default());
    let names = ["idea one", "idea two", "idea three", "idea four"];
    let mut llm = ScriptedClient::new(vec![
        call("explore", json!({"branches": names})),
        ScriptedTurn::text("Done."),
    ]);
    for name in names {
        llm = llm.with_route(
            name,
            vec![call("gauge", json!({})), ScriptedTurn::text("measured")],
        );
    }
    let mut tools = ToolRegistry::with_builtins();
    tools.register(gauge.clone()).unwrap();
    let f = fixture(llm, tools, |options| options.sub_agents.max_concurrency = 2);
    let outcome = f.runner.run("Measure").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    assert_eq!(gauge.calls(), 4);
    assert_eq!(gauge.max_inside(), 2);
}

#[tokio::test]
async fn too_many_or_empty_branches_are_refused() {
    let llm = ScriptedClient::new(vec![
        call("explore", json!({"branches": []})),
        call("explore", json!({"branches": ["a", "b", "c"]})),
        call("explore", json!({"branches": ["a", "  "]})),
        call("explore", json!({"branch": ["a"]})),
        ScriptedTurn::text("Gave up."),
    ]);
    let f = fixture(llm, ToolRegistry::with_builtins(), |options| {
        options.sub_agents.max_branches = 2;
    });
    let outcome = f.runner.run("Refusals").await.unwrap();
    let results = tool_results(f.store.as_ref(), &outcome.trace_id).await;
    assert!(results[0].starts_with("error: explore needs at least one branch"));
    assert_eq!(results[1], "error: explore takes at most 2 branches, not 3");
    assert!(results[2].starts_with("error: explore needs at least one branch"));
    assert!(results[3].starts_with("error: invalid arguments for explore"));
    assert!(
        f.store
            .get_sub_traces(&outcome.trace_id)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_delegate_runs_its_task_to_completion_with_every_tool() {
    let task = "Write hello.txt containing hi";
    let llm = ScriptedClient::new(vec![
        call("goal", json!({"add": "Get the file written", "focus": "1"})),
        call("delegate", json!({"task": task})),
        call("goal", json!({"done": "the delegate wrote it"})),
        ScriptedTurn::text("The delegate wrote it."),
    ])
    .with_route(
        task,
        vec![
            call("goal", json!({"add": "Write the file", "focus": "1"})),
            call("write_file", json!({"path": "hello.txt", "content": "hi"})),
            call("goal", json!({"done": "hello.txt holds hi"})),
            ScriptedTurn::text("I wrote hello.txt."),
        ],
    );
    let f = fixture(llm, ToolRegistry::with_builtins(), |_| {});
    let outcome = f.runner.run("Get hello.txt written").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    assert_eq!(
        std::fs::read_to_string(f.workspace.path().join("hello.txt")).unwrap(),
        "hi"
    );

    let subs = f.store.get_sub_traces(&outcome.trace_id).await.unwrap();
    assert_eq!(subs.len(), 1);
    let sub = &subs[0];
    assert!(
        sub.trace_id
            .starts_with(&format!("{}@delegate-", outcome.trace_id))
    );
    assert!(sub.trace_id.ends_with("-001"));
    assert_eq!(sub.agent_type.as_deref(), Some("delegate"));
    assert_eq!(sub.parent_goal_id.as_deref(), Some("1"));
    assert_eq!(sub.task, task);
    assert_eq!(sub.status, TraceStatus::Completed);
    let first = conversation(&f.llm.route_requests(0)[0].messages)[0]
        .text()
        .to_owned();
    assert!(first.ends_with(&format!("## Task\n\n{task}")), "{first}");
    assert!(
        !first.contains("Get hello.txt written"),
        "a delegate starts from its task alone"
    );
    let delegate_tools = tool_names(&f.llm.route_requests(0)[0]);
    assert!(delegate_tools.contains(&"bash".to_owned()));
    // A delegate may delegate once more and explore (it is not inside an exploration).
    assert!(delegate_tools.contains(&"delegate".to_owned()));
    assert!(delegate_tools.contains(&"explore".to_owned()));

    let results = tool_results(f.store.as_ref(), &outcome.trace_id).await;
    let result = &results[1];
    assert!(
        result.starts_with("The delegated task completed."),
        "{result}"
    );
    assert!(result.contains("I wrote hello.txt."), "{result}");
    assert!(
        result.contains("[✓] 1 Write the file → hello.txt holds hi"),
        "{result}"
    );
    assert!(result.contains(&sub.trace_id), "{result}");
}

#[tokio::test]
async fn a_failed_delegate_is_an_error_result_with_the_reason() {
    let task = "Do the impossible";
    let llm = ScriptedClient::new(vec![
        call("delegate", json!({"task": task})),
        ScriptedTurn::text("It failed."),
    ])
    .with_route(task, vec![call("read_progress", json!({}))]);
    let f = fixture(llm, ToolRegistry::with_builtins(), |options| {
        let delegate = options.sub_agents.agent_types.get_mut("delegate").unwrap();
        delegate.limits.max_iterations = 1;
    });
    let outcome = f.runner.run("Try").await.unwrap();
    assert_eq!(outcome.status, TraceStatus::Completed, "{outcome:?}");
    let messages = f.store.get_trace_messages(&outcome.trace_id).await.unwrap();
    let result = messages.iter().find(|m| m.role == Role::Tool).unwrap();
    let text = result.content.text();
    assert!(
        text.starts_with(
            "error: the delegated task did not complete (failed: max_iterations: reached the \
             limit of 1 model calls)."
        ),
        "{text}"
    );
    assert_eq!(result.metadata["sub_traces"][0]["status"], "failed");
}

#[tokio::test]
async fn explore_and_delegate_can_be_switched_off() {
    let llm = ScriptedClient::new(vec![
        call("explore", json!({"branches": ["x"]})),
        ScriptedTurn::text("Done."),
    ]);
    let f = fixture(llm, ToolRegistry::with_builtins(), |options| {
        options.sub_agents.agent_types.clear();
    });
    assert!(!f.runner.tool_names().contains(&"explore".to_owned()));
    assert!(!f.runner.tool_names().contains(&"delegate".to_owned()));
    let outcome = f.runner.run("No sub-agents").await.unwrap();
    let results = tool_results(f.store.as_ref(), &outcome.trace_id).await;
    assert_eq!(
        results[0],
        "error: explore is disabled: no `explore` agent type is configured for this runner"
    );
}
