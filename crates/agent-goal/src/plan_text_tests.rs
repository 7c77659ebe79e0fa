//! Tests of the plan text: writing, reading back with line-numbered errors, and re-planning.

use crate::test_support::{NOW, apply, build};
use crate::{GoalStatus, GoalTree, PlanItem, parse_plan, split_agent};

const HEADER: &str =
    "# One goal a line; indent two spaces per level. Lines starting with # are ignored.\n";

/// Parses `text`, which must be a valid plan.
fn items(text: &str) -> Vec<PlanItem> {
    parse_plan(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

/// `text` must be refused with exactly `expect`.
fn check_err(text: &str, expect: &str) {
    let error = parse_plan(text).expect_err("the plan should be refused");
    assert_eq!(error.to_string(), expect, "{text:?}");
}

#[test]
fn a_plan_round_trips_through_text() {
    let items = items("# Plan: x\nRead\nBuild\n  Design\n  Write\n    Test it\nShip\n");
    let tree = GoalTree::new("Make a thing").replan_at(&items, NOW);
    assert!(tree.goals().iter().all(|g| g.status == GoalStatus::Pending));
    assert!(tree.goals().iter().all(|g| g.created_at == NOW));
    assert_eq!(tree.current_id(), None);
    let text = tree.plan_text();
    assert_eq!(
        text,
        format!(
            "# Plan: Make a thing\n{HEADER}Read\nBuild\n  Design\n  Write\n    Test it\nShip\n"
        )
    );
    assert_eq!(parse_plan(&text), Ok(items));
    assert_eq!(tree.display_number("5").as_deref(), Some("2.2.1"));
    assert_eq!(tree.next_id(), 7);
}

#[test]
fn ids_continue_after_the_old_tree() {
    let mut old = build(&[r#"{"add": "A, B, C"}"#, r#"{"delete": "3"}"#]);
    assert_eq!(old.next_id(), 4);
    let tree = old.replan_at(&items("A\nB"), NOW);
    let ids: Vec<&str> = tree.goals().iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ids, ["4", "5"]);
    assert_eq!(tree.next_id(), 6);
    assert_eq!(tree.mission(), "Mission");

    // A tree read from JSON without a counter still never reuses an id.
    old.next_id = 0;
    let tree = old.replan_at(&items("A"), NOW);
    assert_eq!(tree.goals()[0].id, "3");
    assert_eq!(
        GoalTree::default().replan_at(&items("A"), NOW).goals()[0].id,
        "1"
    );
}

#[test]
fn the_text_shows_visible_normal_goals_on_one_line_each() {
    let mut tree = build(&[
        r#"{"add": "Read  the\ncode, Dropped, Build"}"#,
        r#"{"focus": "2"}"#,
        r#"{"add": "Hidden with its parent"}"#,
        r#"{"abandon": "not needed"}"#,
        r#"{"focus": "2"}"#,
    ]);
    tree.start_explore("Compare", vec!["A".into()], NOW)
        .expect("started");
    apply(&mut tree, r#"{"add": "Under the exploration"}"#);
    apply(&mut tree, r#"{"focus": "2"}"#);
    apply(&mut tree, r#"{"add": "Wire it"}"#);
    tree.mission = "Two\nlines".into();
    assert_eq!(
        tree.plan_text(),
        format!("# Plan: Two lines\n{HEADER}Read the code\nBuild\n  Wire it\n")
    );
}

#[test]
fn bad_plans_name_the_line() {
    check_err(
        "A\n   B",
        "line 2: indent by two spaces per level (found 3 spaces)",
    );
    check_err(
        "A\n    B",
        "line 2: indented more than one level below the goal above it",
    );
    check_err(
        "  A",
        "line 1: indented more than one level below the goal above it",
    );
    check_err("\tA", "line 1: indent with spaces, not tabs");
    check_err("# only comments\n\n", "the plan has no goals");
    check_err("", "the plan has no goals");
}

#[test]
fn comments_blank_lines_and_trailing_space_are_ignored() {
    let read = items("# Plan: m\r\n\r\nA  \r\n  # a note\r\n  B\r\n");
    assert_eq!(
        read,
        [
            PlanItem {
                depth: 0,
                description: "A".into(),
                agent: None,
                ..PlanItem::default()
            },
            PlanItem {
                depth: 1,
                description: "B".into(),
                agent: None,
                ..PlanItem::default()
            },
        ]
    );
}

#[test]
fn an_item_too_deep_goes_one_level_below_the_one_before() {
    let deep = [
        PlanItem {
            depth: 0,
            description: "A".into(),
            agent: None,
            ..PlanItem::default()
        },
        PlanItem {
            depth: 3,
            description: "B".into(),
            agent: None,
            ..PlanItem::default()
        },
    ];
    let tree = GoalTree::new("m").replan_at(&deep, NOW);
    assert_eq!(
        tree.get("2").and_then(|g| g.parent_id.as_deref()),
        Some("1")
    );
}

#[test]
fn a_line_may_name_the_agent_that_carries_the_goal_out() {
    let read = items("Write it\n  Test it @tester\nReview the change @reviewer\nMail bob @ home\n");
    let agents: Vec<Option<&str>> = read.iter().map(|item| item.agent.as_deref()).collect();
    assert_eq!(agents, [None, Some("tester"), Some("reviewer"), None]);
    assert_eq!(read[2].description, "Review the change");
    assert_eq!(read[3].description, "Mail bob @ home");
    let tree = GoalTree::new("m").replan_at(&read, NOW);
    assert_eq!(
        tree.get("3").and_then(|g| g.agent.as_deref()),
        Some("reviewer")
    );
    assert!(tree.plan_text().ends_with(
        "\nWrite it\n  Test it @tester\nReview the change @reviewer\nMail bob @ home\n"
    ));
    assert_eq!(split_agent("@reviewer"), ("@reviewer", None));
    assert_eq!(split_agent("Ask @bad/name"), ("Ask @bad/name", None));
}

#[test]
fn the_planning_goal_is_left_out_of_the_text_and_kept_first_in_the_plan() {
    let mut tree = build(&[
        r#"{"add": "Plan the task", "agent": "plan", "focus": "1"}"#,
        r#"{"add": "Read, Write"}"#,
        r#"{"focus": "1.2"}"#,
        r#"{"add": "Test it @tester"}"#,
        r#"{"focus": "1"}"#,
    ]);
    let text = tree.plan_text();
    assert!(
        text.ends_with("\nRead\nWrite\n  Test it @tester\n"),
        "{text}"
    );
    let items = parse_plan(&text).unwrap();
    tree = tree.replan_keeping("1", &items, "Read first, then write.", NOW);
    assert_eq!(
        tree.to_todo_string(),
        "[✓] 1. Plan the task\n[ ] 2. Read\n[ ] 3. Write\n    [ ] 3.1 Test it\n"
    );
    assert_eq!(
        tree.goals()[0].summary.as_deref(),
        Some("Read first, then write.")
    );
    assert_eq!(tree.current_id(), None);
    assert_eq!(tree.plan_text(), text);
}
