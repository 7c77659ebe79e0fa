//! Conformance checks of the goal tree: goal commands and the events they emit (cascades
//! included), explorations, direct edits of the tree, and refused changes that write nothing.

use std::sync::Arc;

use agent_goal::{Goal, GoalStatus, GoalType};
use serde_json::{Map, json};

use super::{assert_consistent, command, names};
use crate::event::EventKind;
use crate::store::{StoreError, TraceStore};
use crate::trace::NewTrace;

/// Goal commands write the tree and emit goal events, cascades included; refused commands write
/// nothing.
pub async fn goal_commands_emit_events<S: TraceStore>(store: Arc<S>) {
    let id = store
        .create_trace(NewTrace::agent("task"))
        .await
        .unwrap()
        .trace_id;
    let outcome = store
        .apply_goal_command(&id, command(json!({"add": "A, B", "focus": "1"})))
        .await
        .unwrap();
    assert_eq!(outcome.added, ["1", "2"]);
    let events = store.get_events(&id, 1).await.unwrap();
    assert_eq!(
        names(&events),
        [
            "goal_added",
            "goal_added",
            "goal_tree_updated",
            "trace_updated"
        ]
    );
    assert_eq!(
        store
            .get_trace(&id)
            .await
            .unwrap()
            .unwrap()
            .current_goal_id
            .as_deref(),
        Some("1")
    );
    store
        .apply_goal_command(&id, command(json!({"add": "A1", "focus": "1.1"})))
        .await
        .unwrap();
    let since = store.get_events(&id, 0).await.unwrap().len() as u64;
    store
        .apply_goal_command(&id, command(json!({"done": "A1 works"})))
        .await
        .unwrap();
    let events = store.get_events(&id, since).await.unwrap();
    let updated: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::GoalUpdated {
                goal_id,
                updates,
                affected_goals,
            } => Some((goal_id.clone(), updates.clone(), affected_goals.clone())),
            _ => None,
        })
        .collect();
    let updated_ids: Vec<_> = updated.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(
        updated_ids,
        ["3", "1"],
        "the child, then the parent completed by cascade"
    );
    assert_eq!(updated[0].1.get("status"), Some(&json!("completed")));
    assert_eq!(updated[0].1.get("summary"), Some(&json!("A1 works")));
    assert_eq!(updated[1].2[0].status, Some(GoalStatus::Completed));
    let tree = store.get_goal_tree(&id).await.unwrap().unwrap();
    assert_eq!(tree.get("1").unwrap().status, GoalStatus::Completed);

    // A refused command changes nothing.
    let count = store.get_events(&id, 0).await.unwrap().len();
    let refused = store
        .apply_goal_command(&id, command(json!({"focus": "9"})))
        .await;
    assert!(matches!(refused, Err(StoreError::Goal(_))), "{refused:?}");
    assert_eq!(store.get_events(&id, 0).await.unwrap().len(), count);
    assert_eq!(store.get_goal_tree(&id).await.unwrap().unwrap(), tree);

    // Explorations.
    store
        .apply_goal_command(&id, command(json!({"focus": "2"})))
        .await
        .unwrap();
    let start = store
        .start_explore(&id, "Compare approaches", vec!["b1".into(), "b2".into()])
        .await
        .unwrap();
    let tree = store.get_goal_tree(&id).await.unwrap().unwrap();
    assert_eq!(tree.get(&start).unwrap().goal_type, GoalType::ExploreStart);
    let merge = store
        .finish_explore(&id, &start, "b1 is simpler", Some("b1".into()))
        .await
        .unwrap();
    let tree = store.get_goal_tree(&id).await.unwrap().unwrap();
    assert_eq!(tree.get(&merge).unwrap().goal_type, GoalType::ExploreMerge);

    // Direct edits of the tree.
    let goal = Goal::new(
        "50",
        Some("2".into()),
        "planned elsewhere",
        &tree.get("2").unwrap().created_at,
    );
    store.add_goal(&id, goal.clone()).await.unwrap();
    assert!(matches!(
        store.add_goal(&id, goal).await,
        Err(StoreError::Invalid(_))
    ));
    let mut updates = Map::new();
    updates.insert("description".into(), json!("renamed"));
    let renamed = store.update_goal(&id, "50", updates).await.unwrap();
    assert_eq!(renamed.description, "renamed");
    let last = store.get_events(&id, 0).await.unwrap();
    let EventKind::GoalTreeUpdated { .. } = &last.last().unwrap().kind else {
        panic!("a tree edit ends with goal_tree_updated");
    };
    let mut bad = Map::new();
    bad.insert("status".into(), json!("sideways"));
    assert!(matches!(
        store.update_goal(&id, "50", bad).await,
        Err(StoreError::Invalid(_))
    ));
    let mut tree = store.get_goal_tree(&id).await.unwrap().unwrap();
    let number = tree.display_number("50").unwrap();
    tree.apply(&command(json!({ "delete": number }))).unwrap();
    store.update_goal_tree(&id, tree.clone()).await.unwrap();
    assert_eq!(store.get_goal_tree(&id).await.unwrap().unwrap(), tree);
    let last = store.get_events(&id, 0).await.unwrap();
    assert!(names(&last).contains(&"goal_removed"));
    assert_consistent(&*store, &id).await;
}
