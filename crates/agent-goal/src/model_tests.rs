//! Tests of the JSON form of the tree (`goal.json`, a Contract).

use serde_json::{Value, json};

use crate::test_support::{NOW, apply, build};
use crate::{GoalTree, StatsDelta};

fn rich_tree() -> GoalTree {
    let mut tree = build(&[
        r#"{"add": "Analyse, Implement, Test", "reason": "the usual order"}"#,
        r#"{"focus": "1"}"#,
        r#"{"done": "models are in models/user.py"}"#,
        r#"{"focus": "2"}"#,
        r#"{"add": "Plan A, Plan B"}"#,
        r#"{"focus": "2.1"}"#,
        r#"{"abandon": "dependency conflict"}"#,
        r#"{"delete": "3"}"#,
    ]);
    let start = tree
        .start_explore("Compare", vec!["A".into(), "B".into()], NOW)
        .expect("started");
    let delta = StatsDelta {
        tokens: 1200,
        cost: 0.0125,
        tools: vec!["glob".into(), "read".into(), "read".into()],
    };
    tree.record_message(&start, &delta, NOW).expect("recorded");
    tree.finish_explore(&start, "A is better", Some("A".into()), NOW)
        .expect("merged");
    apply(&mut tree, r#"{"focus": "2.1"}"#);
    tree
}

#[test]
fn goal_json_round_trips() {
    let tree = rich_tree();
    let text = serde_json::to_string_pretty(&tree).expect("serialised");
    let back: GoalTree = serde_json::from_str(&text).expect("parsed");
    assert_eq!(back, tree);
    assert_eq!(back.to_prompt(), tree.to_prompt());
}

#[test]
fn goal_json_uses_the_contract_field_names() {
    let value = serde_json::to_value(rich_tree()).expect("serialised");
    assert_eq!(value["mission"], "Mission");
    assert_eq!(value["current_id"], "5");
    let goals = value["goals"].as_array().expect("goals");
    let first = &goals[0];
    for key in [
        "id",
        "parent_id",
        "branch_id",
        "type",
        "description",
        "reason",
        "status",
        "summary",
        "self_stats",
        "cumulative_stats",
        "created_at",
        "updated_at",
    ] {
        assert!(first.get(key).is_some(), "missing {key}");
    }
    assert_eq!(first["type"], "normal");
    assert_eq!(first["status"], "completed");
    assert_eq!(first["reason"], "the usual order");
    assert!(
        first.get("branch_ids").is_none(),
        "explore fields are omitted on normal goals"
    );
    let start = goals
        .iter()
        .find(|g| g["type"] == "explore_start")
        .expect("start");
    assert_eq!(start["branch_ids"], json!(["A", "B"]));
    assert_eq!(
        start["self_stats"],
        json!({"message_count": 1, "total_tokens": 1200, "total_cost": 0.0125,
               "preview": "glob → read × 2"})
    );
    let merge = goals
        .iter()
        .find(|g| g["type"] == "explore_merge")
        .expect("merge");
    assert_eq!(merge["explore_start_id"], start["id"]);
    assert_eq!(merge["selected_branch"], "A");
    let abandoned = goals
        .iter()
        .find(|g| g["status"] == "abandoned")
        .expect("abandoned");
    assert_eq!(abandoned["summary"], "dependency conflict");
    assert!(
        goals.iter().all(|g| g["id"] != "3"),
        "the deleted goal is gone"
    );
    assert_eq!(value["next_id"], 8);
}

#[test]
fn minimal_goal_json_loads_and_never_reuses_ids() {
    // The shape of the original design's API example: no next_id, reasons and stats optional.
    let value: Value = json!({
        "mission": "Implement user authentication",
        "current_id": "4",
        "goals": [
            {"id": "1", "parent_id": null, "branch_id": null, "type": "normal",
             "description": "Analyse", "status": "completed", "summary": "done",
             "created_at": NOW, "updated_at": NOW},
            {"id": "2", "parent_id": null, "branch_id": null, "description": "Implement",
             "status": "in_progress", "summary": null, "created_at": NOW, "updated_at": NOW},
            {"id": "4", "parent_id": "2", "branch_id": null, "description": "Code",
             "status": "in_progress", "summary": null, "created_at": NOW, "updated_at": NOW}
        ]
    });
    let mut tree: GoalTree = serde_json::from_value(value).expect("parsed");
    assert_eq!(tree.next_id, 0);
    let outcome = apply(&mut tree, r#"{"add": "Tests"}"#);
    assert_eq!(outcome.added, ["5"]);
    assert_eq!(tree.display_number("5").as_deref(), Some("2.1.1"));
}
