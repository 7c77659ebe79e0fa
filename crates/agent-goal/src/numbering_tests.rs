//! Tests of display numbering and of navigation through the flat goal list.

use crate::test_support::{NOW, build};
use crate::{Goal, GoalStatus, GoalTree};

fn sample() -> GoalTree {
    build(&[
        r#"{"add": "A, B, C"}"#,
        r#"{"focus": "2"}"#,
        r#"{"add": "B1, B2, B3"}"#,
        r#"{"focus": "2.2"}"#,
        r#"{"add": "B2a"}"#,
    ])
}

#[test]
fn numbers_follow_creation_order_per_level() {
    let tree = sample();
    let cases = [
        ("1", Some("1")),
        ("2", Some("2")),
        ("3", Some("3")),
        ("4", Some("2.1")),
        ("5", Some("2.2")),
        ("6", Some("2.3")),
        ("7", Some("2.2.1")),
        ("99", None),
    ];
    for (id, number) in cases {
        assert_eq!(tree.display_number(id).as_deref(), number, "id {id}");
        if let Some(number) = number {
            assert_eq!(
                tree.find_by_display(number).map(|g| g.id.as_str()),
                Some(id)
            );
        }
    }
}

#[test]
fn find_by_display_accepts_a_trailing_dot_and_rejects_garbage() {
    let tree = sample();
    assert_eq!(tree.find_by_display("2.").map(|g| g.id.as_str()), Some("2"));
    assert_eq!(
        tree.find_by_display(" 2.2.1 ").map(|g| g.id.as_str()),
        Some("7")
    );
    for bad in [
        "", "0", "2.0", "a", "2..1", ".2", "4", "2.4", "-1", "+1", "1.1",
    ] {
        assert!(tree.find_by_display(bad).is_none(), "{bad:?}");
    }
}

#[test]
fn numbered_lists_visible_goals_depth_first() {
    let tree = sample();
    let listed: Vec<(String, &str)> = tree
        .numbered()
        .into_iter()
        .map(|(number, goal)| (number, goal.description.as_str()))
        .collect();
    let expected = [
        ("1", "A"),
        ("2", "B"),
        ("2.1", "B1"),
        ("2.2", "B2"),
        ("2.2.1", "B2a"),
        ("2.3", "B3"),
        ("3", "C"),
    ];
    let expected: Vec<(String, &str)> = expected.iter().map(|&(n, d)| (n.to_owned(), d)).collect();
    assert_eq!(listed, expected);
}

#[test]
fn abandoned_goals_and_their_subtrees_lose_their_numbers() {
    let mut tree = sample();
    tree.goals[4].status = GoalStatus::Abandoned; // B2, id 5
    assert_eq!(tree.display_number("5"), None);
    assert_eq!(
        tree.display_number("7"),
        None,
        "B2a sits under an abandoned goal"
    );
    assert_eq!(
        tree.display_number("6").as_deref(),
        Some("2.2"),
        "B3 moved up"
    );
    assert_eq!(tree.numbered().len(), 5);
}

#[test]
fn navigation_helpers() {
    let tree = sample();
    let ancestors: Vec<&str> = tree.ancestors("7").iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ancestors, ["5", "2"], "parent first");
    assert!(tree.ancestors("1").is_empty());
    assert!(tree.ancestors("nope").is_empty());
    let top: Vec<&str> = tree.children(None).map(|g| g.id.as_str()).collect();
    assert_eq!(top, ["1", "2", "3"]);
    let under_b: Vec<&str> = tree.children(Some("2")).map(|g| g.id.as_str()).collect();
    assert_eq!(under_b, ["4", "5", "6"]);
    assert_eq!(tree.current().map(|g| g.id.as_str()), Some("5"));
    assert!(tree.get("0").is_none());
}

#[test]
fn lookups_work_on_lists_out_of_id_order() {
    // A stored tree edited by hand may break the sorted-by-id rule; lookups must still work.
    let mut tree = GoalTree::new("Mission");
    for (id, parent) in [
        ("10", None),
        ("2", Some("10")),
        ("x", None),
        ("3", Some("2")),
    ] {
        tree.goals.push(Goal::new(
            id,
            parent.map(str::to_owned),
            format!("goal {id}"),
            NOW,
        ));
    }
    for id in ["10", "2", "x", "3"] {
        assert_eq!(tree.get(id).map(|g| g.id.as_str()), Some(id));
    }
    assert_eq!(tree.display_number("3").as_deref(), Some("1.1.1"));
    assert_eq!(tree.display_number("x").as_deref(), Some("2"));
    assert_eq!(
        tree.alloc_id(),
        "11",
        "fresh ids stay above every existing one"
    );
}

#[test]
fn a_parent_cycle_does_not_hang() {
    let mut tree = GoalTree::new("Mission");
    tree.goals.push(Goal::new("1", Some("2".into()), "a", NOW));
    tree.goals.push(Goal::new("2", Some("1".into()), "b", NOW));
    tree.goals.push(Goal::new("3", None, "c", NOW));
    assert_eq!(tree.display_number("1"), None);
    assert_eq!(tree.ancestors("1").len(), 1);
    assert_eq!(tree.to_todo_string(), "[ ] 1. c\n");
    assert_eq!(tree.descendant_indices(0), [1]);
}
