//! Tests of `plan_edits::apply`: all or nothing, the goal tree's rules, the events watchers
//! get, and the traces it refuses.

use agent_execution::{
    EventKind, GoalCommand, InMemoryTraceStore, NewTrace, TraceStatus, TraceStore, TraceUpdate,
};
use agent_goal::GoalStatus;

use super::*;

/// A store holding a `planned` trace whose plan is "Read, Write, Test" (ids 1, 2, 3).
async fn plan() -> (InMemoryTraceStore, String) {
    let store = InMemoryTraceStore::new();
    let trace = store
        .create_trace(NewTrace::agent("Add a cache"))
        .await
        .unwrap();
    let id = trace.trace_id;
    let add = GoalCommand {
        add: Some("Read, Write, Test".into()),
        ..GoalCommand::default()
    };
    store.apply_goal_command(&id, add).await.unwrap();
    set_status(&store, &id, TraceStatus::Planned).await;
    (store, id)
}

async fn set_status(store: &InMemoryTraceStore, id: &str, status: TraceStatus) {
    let update = TraceUpdate {
        status: Some(status),
        ..TraceUpdate::default()
    };
    store.update_trace(id, update).await.unwrap();
}

fn add(description: &str, parent_id: Option<&str>) -> PlanEdit {
    PlanEdit::Add {
        description: description.into(),
        parent_id: parent_id.map(str::to_owned),
        index: None,
        agent: None,
        check: None,
        judge: None,
        budget: None,
    }
}

async fn last_event_id(store: &InMemoryTraceStore, id: &str) -> u64 {
    store
        .get_events(id, 0)
        .await
        .unwrap()
        .last()
        .map_or(0, |e| e.event_id)
}

#[tokio::test]
async fn every_kind_of_edit_is_applied_in_order_and_stored() {
    let (store, id) = plan().await;
    let edits = [
        add("Write the tests first", Some("3")),
        PlanEdit::Update {
            goal_id: "1".into(),
            description: Some("Read the cache code".into()),
            agent: Some("explore".into()),
            check: None,
            judge: None,
            budget: None,
        },
        PlanEdit::Move {
            goal_id: "3".into(),
            parent_id: None,
            index: Some(0),
        },
        PlanEdit::Delete {
            goal_id: "2".into(),
        },
    ];
    let tree = apply(&store, &id, &edits).await.unwrap();
    assert_eq!(
        tree.to_todo_string(),
        "[ ] 1. Test\n    [ ] 1.1 Write the tests first\n[ ] 2. Read the cache code\n"
    );
    assert_eq!(tree.get("1").unwrap().agent.as_deref(), Some("explore"));
    assert_eq!(store.get_goal_tree(&id).await.unwrap(), Some(tree));
}

#[tokio::test]
async fn each_edit_is_recorded_as_goal_events_watchers_see() {
    let (store, id) = plan().await;
    let since = last_event_id(&store, &id).await;
    let edits = [
        add("Check", None),
        PlanEdit::Delete {
            goal_id: "2".into(),
        },
    ];
    let tree = apply(&store, &id, &edits).await.unwrap();
    let events = store.get_events(&id, since).await.unwrap();
    let names: Vec<&str> = events.iter().map(|e| e.name()).collect();
    assert_eq!(
        names,
        [
            "goal_added",
            "goal_tree_updated",
            "goal_removed",
            "goal_tree_updated"
        ]
    );
    let EventKind::GoalTreeUpdated { goal_tree } = &events.last().unwrap().kind else {
        panic!("the last event carries the tree");
    };
    assert_eq!(goal_tree, &tree);
}

#[tokio::test]
async fn a_refused_edit_names_its_index_and_writes_nothing() {
    let (store, id) = plan().await;
    store
        .apply_goal_command(
            &id,
            GoalCommand {
                focus: Some("1".into()),
                ..GoalCommand::default()
            },
        )
        .await
        .unwrap();
    let before = store.get_goal_tree(&id).await.unwrap();
    let since = last_event_id(&store, &id).await;
    let edits = [
        add("Fine", None),
        PlanEdit::Update {
            goal_id: "1".into(),
            description: Some("Reworded".into()),
            agent: None,
            check: None,
            judge: None,
            budget: None,
        },
    ];
    let error = apply(&store, &id, &edits).await.unwrap_err();
    let PlanEditError::Refused { index, source } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(*index, 1);
    assert!(matches!(source, GoalError::NotPending { .. }), "{source:?}");
    assert!(
        error.to_string().starts_with("edit 1 was refused: "),
        "{error}"
    );
    assert_eq!(store.get_goal_tree(&id).await.unwrap(), before);
    assert_eq!(last_event_id(&store, &id).await, since);

    // A started goal can still be abandoned, with the reason as its summary.
    let abandon = PlanEdit::Abandon {
        goal_id: "1".into(),
        reason: "not needed".into(),
    };
    let tree = apply(&store, &id, &[abandon]).await.unwrap();
    let goal = tree.get("1").unwrap();
    assert_eq!(goal.status, GoalStatus::Abandoned);
    assert_eq!(goal.summary.as_deref(), Some("not needed"));
}

#[tokio::test]
async fn running_and_unknown_traces_are_refused() {
    let (store, id) = plan().await;
    for status in [TraceStatus::Running, TraceStatus::Waiting] {
        set_status(&store, &id, status).await;
        let error = apply(&store, &id, &[add("More", None)]).await.unwrap_err();
        assert!(matches!(error, PlanEditError::Running { .. }), "{error:?}");
    }
    set_status(&store, &id, TraceStatus::Completed).await;
    let tree = apply(&store, &id, &[add("More", None)]).await.unwrap();
    assert_eq!(tree.goals().len(), 4, "an ended trace's plan may grow");

    let error = apply(&store, "no-such-trace", &[]).await.unwrap_err();
    assert!(matches!(error, PlanEditError::NotFound { .. }), "{error:?}");
    let error = apply(&store, "../x", &[]).await.unwrap_err();
    assert!(matches!(error, PlanEditError::Store(_)), "{error:?}");
}

#[tokio::test]
async fn lists_and_texts_over_the_limits_are_refused_whole() {
    let (store, id) = plan().await;
    let before = store.get_goal_tree(&id).await.unwrap();
    let many: Vec<PlanEdit> = (0..=MAX_EDITS_PER_CALL)
        .map(|i| add(&format!("Goal {i}"), None))
        .collect();
    let error = apply(&store, &id, &many).await.unwrap_err();
    assert!(matches!(error, PlanEditError::TooLarge(_)), "{error:?}");
    let long = "x".repeat(agent_runner::MAX_GOAL_TEXT_CHARS + 1);
    let error = apply(&store, &id, &[add("Fine", None), add(&long, None)])
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "edit 1: a text is longer than {} characters",
            agent_runner::MAX_GOAL_TEXT_CHARS
        )
    );
    assert_eq!(store.get_goal_tree(&id).await.unwrap(), before);
}

#[tokio::test]
async fn no_edits_write_nothing() {
    let (store, id) = plan().await;
    let since = last_event_id(&store, &id).await;
    let tree = apply(&store, &id, &[]).await.unwrap();
    assert_eq!(Some(tree), store.get_goal_tree(&id).await.unwrap());
    assert_eq!(last_event_id(&store, &id).await, since);
}

#[test]
fn edits_read_from_the_api_json() {
    let edit: PlanEdit = serde_json::from_value(serde_json::json!({
        "op": "move", "goal_id": "3", "parent_id": "1", "index": 0
    }))
    .unwrap();
    assert_eq!(
        edit,
        PlanEdit::Move {
            goal_id: "3".into(),
            parent_id: Some("1".into()),
            index: Some(0)
        }
    );
}
