//! Tests of exploration goals: starting, merging and the refusals.

use crate::test_support::{NOW, apply, build};
use crate::{GoalError, GoalStatus, GoalTree, GoalType, MERGE_DESCRIPTION};

fn branches() -> Vec<String> {
    vec!["A".into(), "B".into()]
}

#[test]
fn start_explore_creates_a_current_child_of_the_focus() {
    let mut tree = build(&[r#"{"add": "Analyse"}"#, r#"{"focus": "1"}"#]);
    let id = tree
        .start_explore("Try two designs", branches(), NOW)
        .expect("started");
    assert_eq!(id, "2");
    let goal = tree.get(&id).expect("goal");
    assert_eq!(goal.goal_type, GoalType::ExploreStart);
    assert_eq!(goal.status, GoalStatus::InProgress);
    assert_eq!(goal.parent_id.as_deref(), Some("1"));
    assert_eq!(goal.branch_ids.as_deref(), Some(&branches()[..]));
    assert_eq!(tree.current_id.as_deref(), Some("2"));
}

#[test]
fn start_explore_without_focus_is_top_level() {
    let mut tree = GoalTree::new("Mission");
    let id = tree
        .start_explore("Explore", branches(), NOW)
        .expect("started");
    assert_eq!(tree.get(&id).and_then(|g| g.parent_id.clone()), None);
    assert_eq!(tree.display_number(&id).as_deref(), Some("1"));
}

#[test]
fn finish_explore_completes_the_start_and_appends_a_merge() {
    let mut tree = build(&[r#"{"add": "Analyse, Build"}"#, r#"{"focus": "1"}"#]);
    let start = tree
        .start_explore("Designs", branches(), NOW)
        .expect("started");
    let merge = tree
        .finish_explore(
            &start,
            "## Exploration results\nA is simpler",
            Some("A".into()),
            "t2",
        )
        .expect("merged");
    let start_goal = tree.get(&start).expect("start");
    assert_eq!(start_goal.status, GoalStatus::Completed);
    assert_eq!(
        start_goal.summary.as_deref(),
        Some("Explored branches A, B.")
    );
    assert_eq!(start_goal.updated_at, "t2");
    let merge_goal = tree.get(&merge).expect("merge");
    assert_eq!(merge_goal.goal_type, GoalType::ExploreMerge);
    assert_eq!(merge_goal.status, GoalStatus::Completed);
    assert_eq!(merge_goal.description, MERGE_DESCRIPTION);
    assert_eq!(merge_goal.parent_id.as_deref(), Some("1"));
    assert_eq!(merge_goal.explore_start_id.as_deref(), Some(start.as_str()));
    assert_eq!(
        merge_goal.merge_summary.as_deref(),
        Some("## Exploration results\nA is simpler")
    );
    assert_eq!(merge_goal.summary, merge_goal.merge_summary);
    assert_eq!(merge_goal.selected_branch.as_deref(), Some("A"));
    assert_eq!(tree.display_number(&merge).as_deref(), Some("1.2"));
    assert_eq!(
        tree.current_id.as_deref(),
        Some("1"),
        "focus returns to the parent"
    );
    assert_eq!(
        tree.get("1").map(|g| g.status),
        Some(GoalStatus::InProgress),
        "no cascade"
    );
    // The plan goes on: the parent can now be completed as usual.
    apply(&mut tree, r#"{"done": "chose A"}"#);
}

#[test]
fn finish_explore_leaves_focus_alone_when_the_start_is_not_current() {
    let mut tree = build(&[r#"{"add": "Analyse, Build"}"#, r#"{"focus": "1"}"#]);
    let start = tree
        .start_explore("Designs", branches(), NOW)
        .expect("started");
    apply(&mut tree, r#"{"focus": "2"}"#);
    tree.finish_explore(&start, "done", None, NOW)
        .expect("merged");
    assert_eq!(tree.current_id.as_deref(), Some("2"));
}

#[test]
fn finish_explore_accepts_a_start_completed_by_done() {
    let mut tree = GoalTree::new("Mission");
    let start = tree
        .start_explore("Designs", Vec::new(), NOW)
        .expect("started");
    apply(&mut tree, r#"{"done": "branches reported"}"#);
    tree.finish_explore(&start, "merged", None, NOW)
        .expect("merged");
    let start_goal = tree.get(&start).expect("start");
    assert_eq!(start_goal.summary.as_deref(), Some("branches reported"));
}

#[test]
fn invalid_explorations_are_refused_without_change() {
    let mut tree = build(&[r#"{"add": "Normal"}"#, r#"{"focus": "1"}"#]);
    let start = tree
        .start_explore("Designs", branches(), NOW)
        .expect("started");
    let before = tree.clone();
    let cases: Vec<(&str, &str, GoalError)> = vec![
        ("9", "x", GoalError::UnknownId { id: "9".into() }),
        (
            "1",
            "x",
            GoalError::NotOpenExploration {
                id: "1".into(),
                reason: "is not an explore_start goal",
            },
        ),
        (
            &start,
            "  ",
            GoalError::EmptyText {
                field: "merge summary",
            },
        ),
    ];
    for (id, summary, expected) in cases {
        let err = tree
            .finish_explore(id, summary, None, NOW)
            .expect_err("refused");
        assert_eq!(err, expected);
        assert_eq!(tree, before);
    }
    assert_eq!(
        tree.start_explore(" ", branches(), NOW),
        Err(GoalError::EmptyText {
            field: "explore description"
        })
    );

    tree.finish_explore(&start, "ok", None, NOW)
        .expect("merged");
    let err = tree
        .finish_explore(&start, "again", None, NOW)
        .expect_err("refused");
    assert_eq!(err.to_string(), "goal 2 has already been merged");
}

#[test]
fn finish_explore_refuses_abandoned_starts_and_open_children() {
    let mut tree = GoalTree::new("Mission");
    let start = tree
        .start_explore("Designs", branches(), NOW)
        .expect("started");
    apply(&mut tree, r#"{"add": "Sub"}"#);
    let err = tree
        .finish_explore(&start, "x", None, NOW)
        .expect_err("refused");
    assert!(matches!(err, GoalError::OpenChildren { .. }), "{err}");
    apply(&mut tree, r#"{"abandon": "gave up"}"#);
    let err = tree
        .finish_explore(&start, "x", None, NOW)
        .expect_err("refused");
    assert_eq!(err.to_string(), "goal 1 was abandoned");
}

#[test]
fn start_explore_under_a_finished_goal_is_refused() {
    let mut tree = build(&[r#"{"add": "A"}"#, r#"{"focus": "1"}"#, r#"{"done": "a"}"#]);
    tree.current_id = Some("1".into());
    let err = tree
        .start_explore("Designs", branches(), NOW)
        .expect_err("refused");
    assert!(matches!(err, GoalError::ParentFinished { .. }), "{err}");
}

#[test]
fn the_chosen_branch_is_recorded_on_the_latest_merge() {
    let mut tree = build(&[r#"{"add": "Pick a parser", "focus": "1"}"#]);
    let error = tree
        .apply_at(&serde_json::from_str(r#"{"select": "A"}"#).unwrap(), NOW)
        .unwrap_err();
    assert_eq!(error, GoalError::NoExploration);
    let start = tree
        .start_explore(
            "Try two parsers",
            vec!["t@explore-1".into(), "t@explore-2".into()],
            NOW,
        )
        .unwrap();
    let merge = tree
        .finish_explore(&start, "B is faster.", None, NOW)
        .unwrap();
    let error = tree
        .apply_at(&serde_json::from_str(r#"{"select": "C"}"#).unwrap(), NOW)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the latest exploration has no branch C; its branches are A, B"
    );
    let outcome = tree
        .apply_at(&serde_json::from_str(r#"{"select": "b"}"#).unwrap(), NOW)
        .unwrap();
    assert_eq!(outcome.updated, vec![merge.clone()]);
    assert_eq!(
        tree.get(&merge).unwrap().selected_branch.as_deref(),
        Some("B")
    );
}
