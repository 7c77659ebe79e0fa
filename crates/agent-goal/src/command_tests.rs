//! Tests of the goal tool's rules, mostly data-driven through `check` and `check_err`.

use crate::test_support::{NOW, apply, build, check, check_err, command};
use crate::{Goal, GoalError, GoalStatus, GoalTree, StatsDelta};

fn status(tree: &GoalTree, id: &str) -> GoalStatus {
    tree.get(id).map(|goal| goal.status).expect("goal exists")
}

#[test]
fn add_without_focus_appends_top_level_goals() {
    check(
        &[r#"{"add": "A, B, C"}"#],
        "
[ ] 1. A
[ ] 2. B
[ ] 3. C
",
    );
}

#[test]
fn add_ignores_empty_items_and_trims() {
    check(&[r#"{"add": " A ,, B , "}"#], "[ ] 1. A\n[ ] 2. B\n");
}

#[test]
fn add_appends_children_of_the_focus() {
    check(
        &[
            r#"{"add": "A, B, C"}"#,
            r#"{"focus": "2"}"#,
            r#"{"add": "B1, B2", "reason": "split the work"}"#,
        ],
        "
[ ] 1. A
[→] 2. B ← current
    [ ] 2.1 B1
    [ ] 2.2 B2
[ ] 3. C
",
    );
    let tree = build(&[
        r#"{"add": "A, B, C"}"#,
        r#"{"focus": "2"}"#,
        r#"{"add": "B1, B2", "reason": "split the work"}"#,
    ]);
    let b1 = tree.find_by_display("2.1").expect("2.1");
    assert_eq!(b1.reason, "split the work");
    assert_eq!(b1.parent_id.as_deref(), Some("2"));
    assert_eq!(b1.created_at, NOW);
}

#[test]
fn add_and_focus_in_one_call_starts_a_new_goal() {
    let mut tree = GoalTree::new("Mission");
    let outcome = apply(&mut tree, r#"{"add": "A, B", "focus": "1"}"#);
    assert_eq!(outcome.added, ["1", "2"]);
    assert!(
        outcome.updated.is_empty(),
        "new goals are reported only as added"
    );
    assert_eq!(tree.current_id.as_deref(), Some("1"));
    assert_eq!(status(&tree, "1"), GoalStatus::InProgress);
    assert!(
        outcome
            .message
            .contains("Added 1 \"A\", 2 \"B\" at top level.")
    );
    assert!(outcome.message.contains("Focused 1 \"A\"."));
}

#[test]
fn focus_marks_the_goal_and_its_ancestors_in_progress() {
    // Pending ancestors cannot arise through the tool, so the tree is built by hand.
    let mut tree = GoalTree::new("Mission");
    tree.goals.push(Goal::new("1", None, "A", NOW));
    tree.goals.push(Goal::new("2", Some("1".into()), "A1", NOW));
    tree.goals
        .push(Goal::new("3", Some("2".into()), "A1a", NOW));
    tree.next_id = 4;
    let outcome = apply(&mut tree, r#"{"focus": "1.1.1"}"#);
    assert_eq!(
        outcome.updated,
        ["1", "2", "3"],
        "ancestors first, then the goal"
    );
    for id in ["1", "2", "3"] {
        assert_eq!(status(&tree, id), GoalStatus::InProgress);
    }
    assert_eq!(tree.current().map(|g| g.id.as_str()), Some("3"));
}

#[test]
fn focusing_elsewhere_keeps_the_previous_goal_in_progress() {
    let mut tree = build(&[r#"{"add": "A, B"}"#, r#"{"focus": "1"}"#]);
    let outcome = apply(&mut tree, r#"{"focus": "2"}"#);
    assert_eq!(status(&tree, "1"), GoalStatus::InProgress);
    assert_eq!(status(&tree, "2"), GoalStatus::InProgress);
    assert!(outcome.message.contains("1 \"A\" stays in progress"));
    // Focusing an in-progress goal again changes no status.
    let outcome = apply(&mut tree, r#"{"focus": "1"}"#);
    assert!(outcome.updated.is_empty());
    assert_eq!(tree.current_id.as_deref(), Some("1"));
}

#[test]
fn done_completes_the_current_goal_and_moves_focus_to_the_parent() {
    let mut tree = build(&[
        r#"{"add": "A, B"}"#,
        r#"{"focus": "1"}"#,
        r#"{"add": "A1, A2"}"#,
        r#"{"focus": "1.1"}"#,
    ]);
    let outcome = apply(&mut tree, r#"{"done": "found it"}"#);
    assert_eq!(outcome.updated, ["3"]);
    assert_eq!(
        tree.get("3").and_then(|g| g.summary.as_deref()),
        Some("found it")
    );
    assert_eq!(tree.current_id.as_deref(), Some("1"));
    assert_eq!(
        outcome.message,
        "Completed 1.1 \"A1\".\nNext: 1.2 \"A2\" is pending; focus it to start it.\n\
         Current goal: 1 \"A\"."
    );
}

#[test]
fn done_cascades_through_three_levels() {
    let mut tree = build(&[
        r#"{"add": "Top, Other"}"#,
        r#"{"focus": "1"}"#,
        r#"{"add": "Mid"}"#,
        r#"{"focus": "1.1"}"#,
        r#"{"add": "Leaf"}"#,
        r#"{"focus": "1.1.1"}"#,
    ]);
    let outcome = apply(&mut tree, r#"{"done": "leaf done"}"#);
    assert_eq!(
        outcome.updated,
        ["4", "3", "1"],
        "the goal, then each cascaded parent"
    );
    for id in ["4", "3", "1"] {
        assert_eq!(status(&tree, id), GoalStatus::Completed);
    }
    assert_eq!(
        tree.get("3").and_then(|g| g.summary.as_deref()),
        Some("Leaf: leaf done")
    );
    assert_eq!(
        tree.get("1").and_then(|g| g.summary.as_deref()),
        Some("Mid: Leaf: leaf done")
    );
    assert_eq!(
        tree.current_id, None,
        "the top-level goal completed, so nothing is focused"
    );
    assert!(
        outcome
            .message
            .contains("All sub-goals of 1.1 \"Mid\" are finished")
    );
    assert!(
        outcome
            .message
            .contains("All sub-goals of 1 \"Top\" are finished")
    );
    assert!(outcome.message.contains("Next: 2 \"Other\" is pending"));
    assert!(outcome.message.ends_with("Nothing is focused."));
}

#[test]
fn cascade_stops_at_a_parent_with_unfinished_children() {
    let mut tree = build(&[
        r#"{"add": "P"}"#,
        r#"{"focus": "1"}"#,
        r#"{"add": "C1, C2"}"#,
        r#"{"focus": "1.1"}"#,
        r#"{"add": "Leaf"}"#,
        r#"{"focus": "1.1.1"}"#,
    ]);
    let outcome = apply(&mut tree, r#"{"done": "ok"}"#);
    assert_eq!(outcome.updated, ["4", "2"]);
    assert_eq!(status(&tree, "1"), GoalStatus::InProgress);
    assert_eq!(
        tree.current_id.as_deref(),
        Some("1"),
        "focus moves to the nearest open ancestor"
    );
    assert!(outcome.message.contains("Next: 1.2 \"C2\" is pending"));
}

#[test]
fn cascade_ignores_abandoned_siblings() {
    let mut tree = build(&[
        r#"{"add": "P"}"#,
        r#"{"focus": "1"}"#,
        r#"{"add": "Try A, Try B"}"#,
        r#"{"focus": "1.1"}"#,
        r#"{"abandon": "dead end"}"#,
        r#"{"focus": "1.1"}"#,
    ]);
    assert_eq!(tree.current_id.as_deref(), Some("3"), "Try B is now 1.1");
    apply(&mut tree, r#"{"done": "B works"}"#);
    assert_eq!(status(&tree, "1"), GoalStatus::Completed);
    assert_eq!(
        tree.get("1").and_then(|g| g.summary.as_deref()),
        Some("Try B: B works")
    );
}

#[test]
fn done_on_a_goal_with_open_children_is_refused() {
    let err = check_err(
        &[
            r#"{"add": "P"}"#,
            r#"{"focus": "1"}"#,
            r#"{"add": "C1, C2, C3"}"#,
            r#"{"focus": "1.1"}"#,
            r#"{"done": "c1"}"#,
            r#"{"focus": "1.2"}"#,
            r#"{"focus": "1"}"#,
        ],
        r#"{"done": "all of it"}"#,
        "cannot complete 1 \"P\": its sub-goals 1.2 \"C2\", 1.3 \"C3\" are not finished",
    );
    assert!(matches!(err, GoalError::OpenChildren { ref open, .. } if open.len() == 2));
}

#[test]
fn done_with_only_finished_children_is_allowed() {
    let mut tree = build(&[
        r#"{"add": "P"}"#,
        r#"{"focus": "1"}"#,
        r#"{"add": "C1, C2"}"#,
        r#"{"focus": "1.1"}"#,
        r#"{"abandon": "not needed"}"#,
    ]);
    assert_eq!(tree.current_id.as_deref(), Some("1"));
    let err = tree.apply_at(&command(r#"{"done": "p"}"#), NOW);
    assert!(err.is_err(), "C2 is still pending");
    apply(&mut tree, r#"{"delete": "1.1"}"#);
    let outcome = apply(&mut tree, r#"{"done": "p"}"#);
    assert_eq!(outcome.updated, ["1"]);
    assert!(
        outcome
            .message
            .contains("Every goal in the plan is finished.")
    );
}

#[test]
fn done_or_abandon_with_nothing_focused_is_refused() {
    let script = &[r#"{"add": "A"}"#];
    let err = check_err(script, r#"{"done": "x"}"#, "nothing is focused");
    assert_eq!(err, GoalError::NothingFocused { action: "complete" });
    check_err(script, r#"{"abandon": "x"}"#, "no current goal to abandon");
    check_err(
        &[],
        r#"{"done": "x"}"#,
        "use focus with a goal number first",
    );
}

#[test]
fn abandon_hides_the_goal_and_renumbers_later_siblings() {
    let mut tree = build(&[r#"{"add": "A, B, C, D"}"#, r#"{"focus": "2"}"#]);
    let outcome = apply(&mut tree, r#"{"abandon": "wrong approach"}"#);
    assert_eq!(tree.to_todo_string(), "[ ] 1. A\n[ ] 2. C\n[ ] 3. D\n");
    assert_eq!(tree.display_number("2"), None);
    assert_eq!(tree.display_number("3").as_deref(), Some("2"));
    assert_eq!(
        tree.get("2").and_then(|g| g.summary.as_deref()),
        Some("wrong approach")
    );
    assert_eq!(tree.current_id, None);
    assert!(
        outcome
            .message
            .contains("Abandoned 2 \"B\". Reason: wrong approach")
    );
    assert!(outcome.message.contains("moved up one number"));
    assert!(outcome.message.contains("Next: 1 \"A\" is pending"));
    assert!(
        !tree.to_prompt().contains(" B"),
        "abandoned goals leave the prompt"
    );
}

#[test]
fn abandon_sweeps_unfinished_descendants_and_keeps_completed_ones() {
    let mut tree = build(&[
        r#"{"add": "P, Q"}"#,
        r#"{"focus": "1"}"#,
        r#"{"add": "C1, C2, C3"}"#,
        r#"{"focus": "1.1"}"#,
        r#"{"done": "c1"}"#,
        r#"{"focus": "1.2"}"#,
        r#"{"focus": "1"}"#,
    ]);
    let outcome = apply(&mut tree, r#"{"abandon": "requirements changed"}"#);
    assert_eq!(outcome.updated, ["1", "4", "5"]);
    assert_eq!(status(&tree, "3"), GoalStatus::Completed);
    assert_eq!(status(&tree, "4"), GoalStatus::Abandoned);
    assert_eq!(
        tree.get("5").and_then(|g| g.summary.as_deref()),
        Some("Abandoned with its parent goal: requirements changed")
    );
    assert!(
        outcome
            .message
            .contains("Its 2 unfinished sub-goal(s) were abandoned with it.")
    );
    assert_eq!(
        tree.display_number("3"),
        None,
        "goals under an abandoned goal have no number"
    );
    assert_eq!(tree.to_todo_string(), "[ ] 1. Q\n");
}

#[test]
fn abandon_never_cascades_so_a_replacement_can_be_added() {
    let mut tree = build(&[
        r#"{"add": "P"}"#,
        r#"{"focus": "1"}"#,
        r#"{"add": "C1, C2"}"#,
        r#"{"focus": "1.1"}"#,
        r#"{"done": "c1"}"#,
        r#"{"focus": "1.2"}"#,
    ]);
    apply(
        &mut tree,
        r#"{"abandon": "C2 fails", "add": "C2 another way", "focus": "1.2"}"#,
    );
    assert_eq!(status(&tree, "1"), GoalStatus::InProgress);
    assert_eq!(
        tree.to_todo_string(),
        "[→] 1. P\n    [✓] 1.1 C1\n    [→] 1.2 C2 another way ← current\n"
    );
}

#[test]
fn focus_on_an_abandoned_or_unknown_number_is_refused() {
    let script = &[
        r#"{"add": "A, B"}"#,
        r#"{"focus": "2"}"#,
        r#"{"abandon": "no"}"#,
    ];
    let err = check_err(
        script,
        r#"{"focus": "2"}"#,
        "there is no goal 2 in the plan",
    );
    assert_eq!(err, GoalError::UnknownNumber { number: "2".into() });
    check_err(script, r#"{"focus": "1.1"}"#, "there is no goal 1.1");
    check_err(
        script,
        r#"{"focus": "7."}"#,
        "there is no goal 7 in the plan",
    );
    let err = check_err(
        script,
        r#"{"focus": "1.x"}"#,
        "\"1.x\" is not a goal number",
    );
    assert_eq!(
        err,
        GoalError::InvalidNumber {
            input: "1.x".into()
        }
    );
    check_err(script, r#"{"focus": "0"}"#, "is not a goal number");
    check_err(
        script,
        r#"{"focus": "  "}"#,
        "focus needs a non-empty value",
    );
}

#[test]
fn focus_on_a_completed_goal_is_refused() {
    check_err(
        &[
            r#"{"add": "A, B"}"#,
            r#"{"focus": "1"}"#,
            r#"{"done": "a"}"#,
        ],
        r#"{"focus": "1"}"#,
        "1 \"A\" is already completed and cannot be focused again",
    );
}

#[test]
fn add_under_a_completed_goal_is_refused() {
    // Focus never rests on a completed goal through the tool, but a stored tree might.
    let mut tree = build(&[r#"{"add": "A"}"#, r#"{"focus": "1"}"#, r#"{"done": "a"}"#]);
    tree.current_id = Some("1".into());
    let before = tree.clone();
    let err = tree
        .apply_at(&command(r#"{"add": "More"}"#), NOW)
        .expect_err("refused");
    assert_eq!(
        err.to_string(),
        "1 \"A\" is completed, so no goal can be added or started under it; focus an \
         unfinished goal first"
    );
    assert_eq!(tree, before);
    let err = tree
        .apply_at(&command(r#"{"done": "again"}"#), NOW)
        .expect_err("refused");
    assert!(
        matches!(err, GoalError::CurrentNotInProgress { .. }),
        "{err}"
    );
}

#[test]
fn edit_rewords_a_pending_goal_only() {
    let script = &[r#"{"add": "A, B"}"#, r#"{"focus": "1"}"#];
    let mut tree = build(script);
    let outcome = apply(&mut tree, r#"{"edit": "2: Better B"}"#);
    assert_eq!(outcome.updated, ["2"]);
    assert_eq!(
        outcome.message.lines().next(),
        Some("Renamed 2 \"B\" to \"Better B\".")
    );
    assert_eq!(
        tree.get("2").map(|g| g.description.as_str()),
        Some("Better B")
    );
    check_err(
        script,
        r#"{"edit": "1: Other"}"#,
        "1 \"A\" is in progress: only pending goals can be edited or deleted",
    );
    check_err(script, r#"{"edit": "2 Better"}"#, "edit must look like");
    check_err(script, r#"{"edit": "2:  "}"#, "edit must look like");
    check_err(script, r#"{"edit": "5: Nope"}"#, "there is no goal 5");
}

#[test]
fn delete_removes_pending_goals_and_never_frees_their_ids() {
    let mut tree = build(&[r#"{"add": "A, B, C, D"}"#]);
    let outcome = apply(&mut tree, r#"{"delete": "2, 4, 2"}"#);
    assert_eq!(
        outcome.removed,
        ["2", "4"],
        "numbers are resolved before anything is deleted"
    );
    assert_eq!(tree.to_todo_string(), "[ ] 1. A\n[ ] 2. C\n");
    let outcome = apply(&mut tree, r#"{"add": "E"}"#);
    assert_eq!(outcome.added, ["5"]);
    apply(&mut tree, r#"{"delete": "3"}"#);
    assert_eq!(apply(&mut tree, r#"{"add": "F"}"#).added, ["6"]);
}

#[test]
fn delete_refuses_started_goals_and_goals_with_messages() {
    let script = &[r#"{"add": "A, B"}"#, r#"{"focus": "1"}"#];
    check_err(script, r#"{"delete": "2, 1"}"#, "1 \"A\" is in progress");
    check_err(
        script,
        r#"{"delete": " , "}"#,
        "delete needs a non-empty value",
    );
    let mut tree = build(script);
    let delta = StatsDelta {
        tokens: 5,
        ..StatsDelta::default()
    };
    tree.record_message("2", &delta, NOW).expect("recorded");
    let before = tree.clone();
    let err = tree
        .apply_at(&command(r#"{"delete": "2"}"#), NOW)
        .expect_err("refused");
    assert!(
        err.to_string().contains("already has recorded messages"),
        "{err}"
    );
    assert_eq!(tree, before);
}

#[test]
fn edit_then_delete_of_the_same_goal_reports_only_the_removal() {
    let mut tree = build(&[r#"{"add": "A, B"}"#]);
    let outcome = apply(&mut tree, r#"{"edit": "2: B2", "delete": "2"}"#);
    assert!(outcome.updated.is_empty());
    assert_eq!(outcome.removed, ["2"]);
}

#[test]
fn combined_fields_apply_in_order_done_edit_delete_add_focus() {
    let mut tree = build(&[
        r#"{"add": "A, B, C"}"#,
        r#"{"focus": "1"}"#,
        r#"{"add": "A1, A2, A3"}"#,
        r#"{"focus": "1.1"}"#,
    ]);
    // Done moves focus to 1, so the new goal lands under 1; delete sees the numbers after done.
    let outcome = apply(
        &mut tree,
        r#"{"done": "a1", "edit": "1.2: A2 reworded", "delete": "1.3", "add": "A4", "focus": "1.3"}"#,
    );
    assert_eq!(
        tree.to_todo_string(),
        "\
[→] 1. A
    [✓] 1.1 A1
    [ ] 1.2 A2 reworded
    [→] 1.3 A4 ← current
[ ] 2. B
[ ] 3. C
"
    );
    assert_eq!(outcome.added, ["7"]);
    assert_eq!(outcome.updated, ["4", "5"]);
    assert_eq!(outcome.removed, ["6"]);
    assert_eq!(
        outcome.message,
        "Completed 1.1 \"A1\".\nRenamed 1.2 \"A2\" to \"A2 reworded\".\nDeleted 1.3 \"A3\".\n\
         Added 1.3 \"A4\" under 1 \"A\".\nFocused 1.3 \"A4\".\nCurrent goal: 1.3 \"A4\"."
    );
}

#[test]
fn abandon_then_add_appends_the_replacement_at_the_parent() {
    check(
        &[
            r#"{"add": "Analyse, Plan A, Test"}"#,
            r#"{"focus": "1"}"#,
            r#"{"done": "read it"}"#,
            r#"{"focus": "2"}"#,
            r#"{"abandon": "dependency problem", "add": "Plan B", "focus": "3"}"#,
        ],
        "
[✓] 1. Analyse
[ ] 2. Test
[→] 3. Plan B ← current
",
    );
}

#[test]
fn malformed_commands_are_refused() {
    let script = &[r#"{"add": "A"}"#, r#"{"focus": "1"}"#];
    let cases = [
        ("{}", GoalError::EmptyCommand),
        (
            r#"{"done": "x", "abandon": "y"}"#,
            GoalError::DoneAndAbandon,
        ),
        (r#"{"reason": "why"}"#, GoalError::ReasonWithoutAdd),
        (r#"{"add": " , ,"}"#, GoalError::EmptyText { field: "add" }),
        (r#"{"done": " "}"#, GoalError::EmptyText { field: "done" }),
        (
            r#"{"abandon": ""}"#,
            GoalError::EmptyText { field: "abandon" },
        ),
    ];
    for (json, expected) in cases {
        let text = expected.to_string();
        let err = check_err(script, json, &text);
        assert_eq!(err, expected, "{json}");
    }
    assert_eq!(
        GoalError::EmptyText { field: "add" }.to_string(),
        "add needs at least one goal description, e.g. \"Read the code, Write the fix\""
    );
}

#[test]
fn a_failing_later_step_leaves_the_tree_unchanged() {
    let mut tree = build(&[r#"{"add": "A"}"#, r#"{"focus": "1"}"#]);
    let before = tree.clone();
    let err = tree
        .apply_at(&command(r#"{"done": "a", "add": "X", "focus": "9"}"#), NOW)
        .expect_err("focus 9 does not exist");
    assert_eq!(err, GoalError::UnknownNumber { number: "9".into() });
    assert_eq!(tree, before, "neither done nor add survived");
    assert_eq!(
        apply(&mut tree, r#"{"add": "Y"}"#).added,
        ["2"],
        "no id was consumed"
    );
}

#[test]
fn unknown_json_fields_are_ignored_and_nulls_are_absent() {
    let cmd = command(r#"{"add": "A", "focus": null, "priority": "high"}"#);
    assert_eq!(cmd.add.as_deref(), Some("A"));
    assert_eq!(cmd.focus, None);
}

#[test]
fn apply_stamps_changes_with_the_current_time() {
    let mut tree = GoalTree::new("Mission");
    tree.apply(&command(r#"{"add": "A", "focus": "1"}"#))
        .expect("applied");
    let goal = tree.get("1").expect("goal 1");
    assert!(goal.updated_at.as_str() > "2024", "{}", goal.updated_at);
    assert_eq!(goal.created_at.len(), 20);
}

#[test]
fn added_goals_may_name_the_agent_that_carries_them_out() {
    let mut tree = build(&[r#"{"add": "Write it, Review it @reviewer", "agent": "coder"}"#]);
    assert_eq!(tree.get("1").unwrap().agent.as_deref(), Some("coder"));
    assert_eq!(tree.get("2").unwrap().agent.as_deref(), Some("reviewer"));
    assert_eq!(tree.get("2").unwrap().description, "Review it");
    let error = tree
        .apply_at(&serde_json::from_str(r#"{"agent": "x"}"#).unwrap(), NOW)
        .unwrap_err();
    assert_eq!(error, GoalError::AgentWithoutAdd);
    let error = tree
        .apply_at(
            &serde_json::from_str(r#"{"add": "X", "agent": "a b"}"#).unwrap(),
            NOW,
        )
        .unwrap_err();
    assert!(matches!(error, GoalError::InvalidAgent { .. }), "{error}");
}
