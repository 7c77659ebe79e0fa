//! Tests of people's edits of the plan.

use crate::test_support::{NOW, apply, build};
use crate::{GoalError, GoalStatus, PlanEdit};

fn add(description: &str, parent: Option<&str>, index: Option<usize>) -> PlanEdit {
    PlanEdit::Add {
        description: description.into(),
        parent_id: parent.map(Into::into),
        index,
        agent: None,
        check: None,
        judge: None,
        budget: None,
    }
}

fn moved(id: &str, parent: Option<&str>, index: Option<usize>) -> PlanEdit {
    PlanEdit::Move {
        goal_id: id.into(),
        parent_id: parent.map(Into::into),
        index,
    }
}

#[test]
fn pending_goals_are_added_reworded_moved_and_deleted() {
    let mut tree = build(&[r#"{"add": "A, B, C"}"#]);
    let out = tree
        .apply_plan_edit_at(&add("A1", Some("1"), None), NOW)
        .unwrap();
    assert_eq!(out.added, ["4"]);
    tree.apply_plan_edit_at(&add("First", None, Some(0)), NOW)
        .unwrap();
    assert_eq!(
        tree.to_todo_string(),
        "[ ] 1. First\n[ ] 2. A\n    [ ] 2.1 A1\n[ ] 3. B\n[ ] 4. C\n"
    );
    let reword = PlanEdit::Update {
        goal_id: "3".into(),
        description: Some("C, reworded".into()),
        agent: Some("reviewer".into()),
        check: None,
        judge: None,
        budget: None,
    };
    tree.apply_plan_edit_at(&reword, NOW).unwrap();
    assert_eq!(tree.get("3").unwrap().agent.as_deref(), Some("reviewer"));
    // Nest C under B, then move A (with its sub-goal) to the end.
    tree.apply_plan_edit_at(&moved("3", Some("2"), None), NOW)
        .unwrap();
    tree.apply_plan_edit_at(&moved("1", None, None), NOW)
        .unwrap();
    assert_eq!(
        tree.to_todo_string(),
        "[ ] 1. First\n[ ] 2. B\n    [ ] 2.1 C, reworded\n[ ] 3. A\n    [ ] 3.1 A1\n"
    );
    assert!(tree.plan_text().contains("\n  C, reworded @reviewer\n"));
    let out = tree
        .apply_plan_edit_at(
            &PlanEdit::Delete {
                goal_id: "1".into(),
            },
            NOW,
        )
        .unwrap();
    assert_eq!(out.removed, ["1", "4"]);
    assert_eq!(
        tree.to_todo_string(),
        "[ ] 1. First\n[ ] 2. B\n    [ ] 2.1 C, reworded\n"
    );
    // Ids are never handed out again.
    let out = tree.apply_plan_edit_at(&add("D", None, None), NOW).unwrap();
    assert_eq!(out.added, ["6"]);
}

#[test]
fn a_started_goal_can_only_be_abandoned() {
    let mut tree = build(&[
        r#"{"add": "A, B"}"#,
        r#"{"focus": "1"}"#,
        r#"{"add": "A1, A2"}"#,
        r#"{"focus": "1.1"}"#,
        r#"{"done": "a1"}"#,
        r#"{"focus": "1.2"}"#,
    ]);
    let before = tree.clone();
    for edit in [
        PlanEdit::Update {
            goal_id: "1".into(),
            description: Some("X".into()),
            agent: None,
            check: None,
            judge: None,
            budget: None,
        },
        moved("1", None, Some(1)),
        PlanEdit::Delete {
            goal_id: "4".into(),
        },
        moved("2", Some("3"), None),
        moved("2", Some("2"), None),
        add("Under done", Some("3"), None),
        add("  ", None, None),
        PlanEdit::Abandon {
            goal_id: "3".into(),
            reason: "why".into(),
        },
        PlanEdit::Add {
            description: "X".into(),
            parent_id: None,
            index: None,
            agent: Some("bad name".into()),
            check: None,
            judge: None,
            budget: None,
        },
    ] {
        let error = tree.apply_plan_edit_at(&edit, NOW).unwrap_err();
        assert!(!error.to_string().is_empty());
        assert_eq!(tree, before, "{edit:?} was refused and changed nothing");
    }
    let error = tree
        .apply_plan_edit_at(&moved("2", Some("2"), None), NOW)
        .unwrap_err();
    assert!(
        matches!(error, GoalError::MoveUnderItself { .. }),
        "{error}"
    );

    let abandon = PlanEdit::Abandon {
        goal_id: "1".into(),
        reason: "changed my mind".into(),
    };
    let out = tree.apply_plan_edit_at(&abandon, NOW).unwrap();
    assert_eq!(
        out.updated,
        ["1", "4"],
        "the completed sub-goal keeps its data"
    );
    assert_eq!(tree.get("3").unwrap().status, GoalStatus::Completed);
    assert_eq!(tree.current_id(), None, "the focus left the abandoned goal");
    assert_eq!(tree.to_todo_string(), "[ ] 1. B\n");
    apply(&mut tree, r#"{"focus": "1"}"#);
}

#[test]
fn edits_read_as_json() {
    let edit: PlanEdit =
        serde_json::from_str(r#"{"op": "move", "goal_id": "3", "parent_id": "1", "index": 0}"#)
            .unwrap();
    assert_eq!(edit, moved("3", Some("1"), Some(0)));
    assert!(serde_json::from_str::<PlanEdit>(r#"{"op": "rename", "goal_id": "3"}"#).is_err());
    assert!(
        serde_json::from_str::<PlanEdit>(r#"{"op": "delete", "goal_id": "3", "x": 1}"#).is_err()
    );
}

#[test]
fn a_budget_part_of_zero_is_stored_unset_and_a_budget_of_zeros_clears_it() {
    use crate::GoalBudget;
    let mut tree = build(&[r#"{"add": "A"}"#]);
    let budget = |iterations, tokens| GoalBudget {
        iterations,
        tokens,
        seconds: Some(1),
    };
    let mut edit = PlanEdit::Update {
        goal_id: "1".into(),
        description: None,
        agent: None,
        check: None,
        judge: None,
        budget: Some(budget(Some(1), Some(0))),
    };
    tree.apply_plan_edit_at(&edit, NOW).unwrap();
    let stored = tree.get("1").unwrap().budget.unwrap();
    assert_eq!(stored, budget(Some(1), None));
    assert_eq!(
        serde_json::to_string(&stored).unwrap(),
        r#"{"iterations":1,"seconds":1}"#
    );
    if let PlanEdit::Update { budget, .. } = &mut edit {
        *budget = Some(GoalBudget {
            iterations: Some(0),
            tokens: Some(0),
            seconds: None,
        });
    }
    tree.apply_plan_edit_at(&edit, NOW).unwrap();
    assert_eq!(tree.get("1").unwrap().budget, None);
}
