//! Tests of the direct edits: inserting a goal under a given id and replacing a goal.

use crate::test_support::{NOW, apply, build};
use crate::{Goal, GoalError, GoalStatus, GoalTree};

/// Applies `edit` to the tree `script` builds; it must be refused with `expect` (as text)
/// and leave the tree unchanged.
fn check_refused(
    script: &[&str],
    edit: impl FnOnce(&mut GoalTree) -> Result<(), GoalError>,
    expect: &str,
) {
    let mut tree = build(script);
    let before = tree.clone();
    let error = edit(&mut tree).expect_err("the edit should be refused");
    assert_eq!(error.to_string(), expect);
    assert_eq!(tree, before, "a refused edit changed the tree");
}

#[test]
fn insert_appends_the_goal_and_never_reuses_its_id() {
    let mut tree = build(&[r#"{"add": "Analyse", "focus": "1"}"#]);
    let mut goal = Goal::new("7", Some("1".into()), "Planned elsewhere", NOW);
    goal.status = GoalStatus::InProgress;
    tree.insert(goal.clone()).expect("inserted");
    assert_eq!(tree.goals().last(), Some(&goal));
    assert_eq!(tree.display_number("7").as_deref(), Some("1.1"));
    assert_eq!(tree.next_id(), 8);
    let added = apply(&mut tree, r#"{"add": "Next"}"#).added;
    assert_eq!(added, ["8"]);
}

#[test]
fn insert_of_a_non_numeric_id_keeps_the_counter() {
    let mut tree = build(&[r#"{"add": "A, B, C"}"#]);
    tree.insert(Goal::new("x", Some("2".into()), "Named", NOW))
        .expect("inserted");
    assert_eq!(tree.next_id(), 4);
    assert_eq!(tree.display_number("x").as_deref(), Some("2.1"));
}

#[test]
fn insert_refuses_a_taken_id_and_an_unknown_parent() {
    let script = &[r#"{"add": "A"}"#];
    check_refused(
        script,
        |tree| tree.insert(Goal::new("1", None, "Again", NOW)),
        "goal 1 exists already",
    );
    check_refused(
        script,
        |tree| tree.insert(Goal::new("5", Some("9".into()), "Orphan", NOW)),
        "goal 5 has an unknown parent 9",
    );
}

#[test]
fn replace_swaps_one_goal_in_place() {
    let mut tree = build(&[r#"{"add": "A, B", "focus": "1"}"#]);
    let mut renamed = tree.get("2").expect("goal").clone();
    renamed.description = "Renamed".into();
    renamed.updated_at = "t2".into();
    let old = tree.replace(renamed.clone()).expect("replaced");
    assert_eq!(old.description, "B");
    assert_eq!(tree.goals()[1], renamed);
    assert_eq!(tree.goals().len(), 2);
    assert_eq!(tree.current_id(), Some("1"));
}

#[test]
fn replace_refuses_an_unknown_goal_and_a_move() {
    let script = &[r#"{"add": "A, B"}"#];
    check_refused(
        script,
        |tree| tree.replace(Goal::new("9", None, "Missing", NOW)).map(drop),
        "there is no goal with id 9",
    );
    check_refused(
        script,
        |tree| {
            tree.replace(Goal::new("2", Some("1".into()), "Moved", NOW))
                .map(drop)
        },
        "goal 2: parent_id cannot be changed",
    );
}
