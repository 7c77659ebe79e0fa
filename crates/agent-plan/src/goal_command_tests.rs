//! Tests of `/goal`: reading its arguments, setting a goal on a new or an existing trace,
//! clearing it and saying where the plan is.

use std::sync::Arc;

use agent_execution::{InMemoryTraceStore, TraceStore};
use agent_goal::{CheckAuthor, CheckKind, GoalBudget, GoalStatus};
use agent_llm::ScriptedClient;
use agent_tools::ToolRegistry;

use super::*;
use agent_runner::RunnerOptions;

fn set(args: &str) -> NewGoal {
    match parse(args) {
        Ok(GoalRequest::Set(goal)) => goal,
        other => panic!("{args:?}: {other:?}"),
    }
}

fn refused(args: &str) -> String {
    match parse(args) {
        Err(GoalCommandError::Usage(why)) => why,
        other => panic!("{args:?} was read: {other:?}"),
    }
}

#[test]
fn arguments_read_as_a_person_types_them() {
    assert_eq!(parse("  ").unwrap(), GoalRequest::Show);
    for word in ["clear", "STOP", "off", "reset", "none", "cancel"] {
        assert_eq!(parse(word).unwrap(), GoalRequest::Clear, "{word}");
    }
    assert_eq!(set("Ship it"), NewGoal::new("Ship it"));
    let goal = set(
        "Make  the tests pass --budget iterations=20,tokens=5000 --check pytest -x --maxfail=1",
    );
    assert_eq!(goal.text, "Make the tests pass");
    let check = goal.check.unwrap();
    assert_eq!(
        check.kind,
        CheckKind::Command("pytest -x --maxfail=1".into())
    );
    assert_eq!(check.set_by, CheckAuthor::Person);
    assert_eq!(
        goal.budget,
        Some(GoalBudget {
            iterations: Some(20),
            tokens: Some(5000),
            seconds: None
        })
    );
    let quoted = set("Lint --budget 'seconds 600' --check \"make lint\"");
    assert_eq!(
        quoted.check.unwrap().kind,
        CheckKind::Command("make lint".into())
    );
    assert_eq!(quoted.budget.and_then(|b| b.seconds), Some(600));
    let judged = set("Write the guide --judge it covers installing and upgrading");
    assert_eq!(
        judged.check.unwrap().kind,
        CheckKind::Judge("it covers installing and upgrading".into())
    );
    assert_eq!(
        set("Write --judge").check.unwrap().kind,
        CheckKind::Judge(String::new())
    );
    assert!(refused("--check make").contains("say what the goal is"));
    assert!(refused("Ship --check").contains("--check needs the command"));
    assert!(refused("Ship --budget lots").contains("--budget takes"));
    assert!(refused("Ship --force").contains("unknown option --force"));
    assert!(refused("Ship --check \"make").contains("quote"));
    assert!(refused(&"x".repeat(5000)).contains("at most 4000"));
}

fn runner() -> (AgentRunner, Arc<InMemoryTraceStore>, tempfile::TempDir) {
    let workspace = tempfile::tempdir().unwrap();
    let store = Arc::new(InMemoryTraceStore::new());
    let runner = AgentRunner::new(
        store.clone(),
        Arc::new(ScriptedClient::new(Vec::new())),
        ToolRegistry::new(),
        RunnerOptions::new("scripted", workspace.path()),
    );
    (runner, store, workspace)
}

#[tokio::test]
async fn a_goal_starts_a_session_or_joins_its_plan_and_clears() {
    let (runner, store, _workspace) = runner();
    let goal = set("Make the tests pass --check python3 -m unittest -q");
    let first = set_goal(&runner, None, &goal).await.unwrap();
    assert!(first.created);
    let trace = store.get_trace(&first.trace_id).await.unwrap().unwrap();
    assert_eq!(trace.task, "Make the tests pass");
    let tree = store.get_goal_tree(&first.trace_id).await.unwrap().unwrap();
    assert_eq!(tree.mission(), "Make the tests pass");
    let added = tree.get(&first.goal_id).unwrap();
    assert_eq!(added.reason, SET_WITH_GOAL_COMMAND);
    assert_eq!(added.check.as_ref().unwrap().set_by, CheckAuthor::Person);
    assert!(
        status(&tree).contains("1. Make the tests pass (pending) · check `python3 -m unittest -q`")
    );

    let second = set_goal(
        &runner,
        Some(&first.trace_id),
        &NewGoal::new("Write the changelog."),
    )
    .await
    .unwrap();
    assert!(!second.created);
    assert_eq!(second.number, "2");
    assert_eq!(
        second.message,
        "New goal 2 (in your plan): Write the changelog. Work on it until it is done, or \
         abandon it with the reason if it cannot be."
    );
    let cleared = clear(&runner, &first.trace_id).await.unwrap();
    assert_eq!(
        cleared,
        ["1. Make the tests pass", "2. Write the changelog."]
    );
    let tree = store.get_goal_tree(&first.trace_id).await.unwrap().unwrap();
    assert!(
        tree.goals()
            .iter()
            .all(|g| g.status == GoalStatus::Abandoned)
    );
    assert_eq!(tree.goals()[0].summary.as_deref(), Some(CLEARED));
    assert_eq!(status(&tree), "every goal is done or abandoned");
    assert!(clear(&runner, &first.trace_id).await.unwrap().is_empty());
}
