//! Tests of what holds a goal to its word: checks, budgets and the goals still open.

use super::*;
use serde_json::json;

#[test]
fn checks_read_and_write_their_contract_form() {
    let check = GoalCheck::command("python3 -m unittest -q", CheckAuthor::Person);
    let value = serde_json::to_value(&check).unwrap();
    assert_eq!(
        value,
        json!({"command": "python3 -m unittest -q", "set_by": "person"})
    );
    assert_eq!(serde_json::from_value::<GoalCheck>(value).unwrap(), check);
    // Without `set_by` a check is the model's: never trusted by default.
    let read: GoalCheck = serde_json::from_value(json!({"judge": "it reads well"})).unwrap();
    assert_eq!(read, GoalCheck::judge("it reads well", CheckAuthor::Model));
    assert_eq!(read.describe(), "a judge (it reads well)");
    assert!(serde_json::from_value::<GoalCheck>(json!({"set_by": "person"})).is_err());
}

#[test]
fn budgets_have_a_text_form() {
    let budget = GoalBudget::parse_text("tokens=500, iterations 3").unwrap();
    assert_eq!(
        budget,
        GoalBudget {
            iterations: Some(3),
            tokens: Some(500),
            seconds: None
        }
    );
    assert_eq!(budget.text(), "iterations 3, tokens 500");
    assert_eq!(budget.describe(), "3 model calls, 500 tokens");
    assert_eq!(GoalBudget::parse_text("minutes 3"), None);
    assert_eq!(GoalBudget::parse_text("iterations 0"), None);
    assert_eq!(GoalBudget::parse_text("iterations three"), None);
    assert!(serde_json::from_value::<GoalBudget>(json!({"turns": 3})).is_err());
}

use crate::test_support::{NOW, apply, build, check_err, command};
use crate::{GoalError, GoalStatus, PlanEdit, PlanItem, parse_plan};

/// A passing result of the check of goal `id`.
fn passed(id: &str) -> Verified {
    Verified {
        goal_id: id.to_owned(),
        result: CheckResult {
            passed: true,
            exit_code: Some(0),
            output: "OK".into(),
            duration_ms: 12,
            checked_at: NOW.into(),
        },
    }
}

#[test]
fn added_goals_carry_the_model_s_check_and_budget() {
    let tree = build(&[
        r#"{"add": "Make the tests pass, Ship", "check": "python3 -m unittest -q", "budget": {"iterations": 5}}"#,
        r#"{"add": "Write the README", "judge": "it explains installation"}"#,
    ]);
    let goal = tree.get("1").unwrap();
    assert_eq!(
        goal.check,
        Some(GoalCheck::command(
            "python3 -m unittest -q",
            CheckAuthor::Model
        ))
    );
    assert_eq!(goal.budget.and_then(|b| b.iterations), Some(5));
    assert_eq!(tree.get("2").unwrap().check, goal.check, "every added goal");
    assert_eq!(
        tree.get("3").unwrap().check,
        Some(GoalCheck::judge(
            "it explains installation",
            CheckAuthor::Model
        ))
    );
    assert!(tree.to_prompt().contains(
        "[ ] 1. Make the tests pass (check: `python3 -m unittest -q`; budget: 5 model calls)\n"
    ));
    assert!(
        tree.to_prompt()
            .contains("[ ] 3. Write the README (check: a judge (it explains installation))\n")
    );
}

#[test]
fn gate_fields_need_their_partner() {
    let script = [r#"{"add": "A", "focus": "1"}"#];
    check_err(
        &script,
        r#"{"check": "true"}"#,
        "check applies to newly added",
    );
    check_err(
        &script,
        r#"{"budget": {"tokens": 9}}"#,
        "budget applies to newly",
    );
    check_err(
        &script,
        r#"{"add": "B", "check": "x", "judge": "y"}"#,
        "not both",
    );
    check_err(&script, r#"{"evidence": "log"}"#, "evidence supports done");
    check_err(
        &script,
        r#"{"add": "B", "budget": {}}"#,
        "budget sets nothing",
    );
    check_err(&script, r#"{"add": "B", "check": "  "}"#, "check needs");
}

#[test]
fn done_on_a_checked_goal_needs_its_passing_check() {
    let script = [r#"{"add": "Fix, Other", "check": "make test", "focus": "1"}"#];
    let error = check_err(&script, r#"{"done": "fixed"}"#, "has a check (`make test`)");
    assert!(matches!(error, GoalError::CheckNotRun { .. }));
    // Another goal's pass, or a failed result, does not do.
    let mut tree = build(&script);
    let mut done = command(r#"{"done": "fixed", "evidence": "all green"}"#);
    done.verified = Some(passed("2"));
    assert!(tree.apply_at(&done, NOW).is_err());
    let mut failed = passed("1");
    failed.result.passed = false;
    done.verified = Some(failed);
    assert!(tree.apply_at(&done, NOW).is_err());
    assert_eq!(tree.get("1").unwrap().status, GoalStatus::InProgress);
    done.verified = Some(passed("1"));
    tree.apply_at(&done, NOW).unwrap();
    let goal = tree.get("1").unwrap();
    assert_eq!(goal.status, GoalStatus::Completed);
    assert_eq!(goal.check_result, Some(passed("1").result));
    // `verified` never comes from the model's JSON.
    let forged = command(r#"{"done": "x", "verified": {"goal_id": "2"}}"#);
    assert_eq!(forged.verified, None);
}

#[test]
fn a_cascade_stops_at_a_goal_with_a_check() {
    let mut tree = build(&[
        r#"{"add": "Release", "check": "make release-check", "focus": "1"}"#,
        r#"{"add": "Build, Tag", "focus": "1.1"}"#,
        r#"{"done": "built", "focus": "1.2"}"#,
    ]);
    let outcome = apply(&mut tree, r#"{"done": "tagged"}"#);
    assert_eq!(tree.get("1").unwrap().status, GoalStatus::InProgress);
    assert_eq!(tree.current_id(), Some("1"));
    assert!(
        outcome
            .message
            .contains("it has a check (`make release-check`), so mark it done to run it"),
        "{}",
        outcome.message
    );
}

#[test]
fn the_model_cannot_delete_a_goal_a_person_gated() {
    let mut tree = build(&[r#"{"add": "Mine", "check": "true"}"#]);
    let edit = PlanEdit::Add {
        description: "Theirs".into(),
        parent_id: None,
        index: None,
        agent: None,
        check: Some("python3 -m unittest".into()),
        judge: None,
        budget: None,
    };
    tree.apply_plan_edit_at(&edit, NOW).unwrap();
    let theirs = tree.get("2").unwrap();
    assert_eq!(theirs.check.as_ref().unwrap().set_by, CheckAuthor::Person);
    let before = tree.clone();
    let error = tree
        .apply_at(&command(r#"{"delete": "2"}"#), NOW)
        .unwrap_err();
    assert!(matches!(error, GoalError::PersonCheck { .. }), "{error}");
    assert_eq!(tree, before);
    // Its own gated goal the model may delete before it starts.
    apply(&mut tree, r#"{"delete": "1"}"#);
    // People change a pending goal's check; an empty command clears it.
    let update = |check: &str| PlanEdit::Update {
        goal_id: "2".into(),
        description: None,
        agent: None,
        check: Some(check.into()),
        judge: None,
        budget: Some(GoalBudget::default()),
    };
    tree.apply_plan_edit_at(&update("make check"), NOW).unwrap();
    let changed = tree.get("2").unwrap();
    assert_eq!(
        changed.check,
        Some(GoalCheck::command("make check", CheckAuthor::Person))
    );
    tree.apply_plan_edit_at(&update(" "), NOW).unwrap();
    assert_eq!(tree.get("2").unwrap().check, None);
    assert_eq!(tree.get("2").unwrap().budget, None);
}

#[test]
fn checks_and_budgets_go_through_the_plan_text() {
    let text = "# Plan: x\nRead\nTest it @tester [check: [ -f out ] && make test] [budget: iterations 3, seconds 60]\n  Review [judge: it names every risk]\n  Judge it [judge]\n";
    let items = parse_plan(text).unwrap();
    assert_eq!(items[1].description, "Test it");
    assert_eq!(items[1].agent.as_deref(), Some("tester"));
    assert_eq!(
        items[1].check,
        Some(GoalCheck::command(
            "[ -f out ] && make test",
            CheckAuthor::Person
        ))
    );
    assert_eq!(items[1].budget.and_then(|b| b.seconds), Some(60));
    assert_eq!(
        items[2].check,
        Some(GoalCheck::judge("it names every risk", CheckAuthor::Person))
    );
    assert_eq!(
        items[3].check,
        Some(GoalCheck::judge("", CheckAuthor::Person))
    );
    let tree = crate::GoalTree::new("x").replan_at(&items, NOW);
    assert_eq!(tree.get("2").unwrap().check, items[1].check);
    let written = tree.plan_text();
    assert!(written.ends_with(
        "Read\nTest it @tester [check: [ -f out ] && make test] [budget: iterations 3, seconds 60]\n  Review [judge: it names every risk]\n  Judge it [judge]\n"
    ), "{written}");
    assert_eq!(parse_plan(&written).unwrap(), items);
    // A text without checks reads as it always did.
    assert_eq!(
        parse_plan("A [not a check]").unwrap(),
        [PlanItem {
            description: "A [not a check]".into(),
            ..PlanItem::default()
        }]
    );
    for (bad, expect) in [
        ("A [budget: lots]", "line 1: a budget reads like"),
        ("A [check: ]", "line 1: [check: ] needs the command"),
        (
            "A [check: a] [judge]",
            "line 1: a goal has at most one of its checks",
        ),
    ] {
        let error = parse_plan(bad).unwrap_err().to_string();
        assert!(error.starts_with(expect), "{bad}: {error}");
    }
}

#[test]
fn open_goals_are_what_the_run_still_owes() {
    let mut tree = build(&[
        r#"{"add": "Done one, Dropped, Left", "focus": "1"}"#,
        r#"{"done": "ok", "focus": "2"}"#,
        r#"{"abandon": "not needed"}"#,
    ]);
    let open: Vec<(String, String)> = tree
        .open_goals()
        .into_iter()
        .map(|(number, goal)| (number, goal.description.clone()))
        .collect();
    assert_eq!(open, [("2".to_owned(), "Left".to_owned())]);
    apply(&mut tree, r#"{"focus": "2"}"#);
    apply(&mut tree, r#"{"done": "ok"}"#);
    assert!(tree.open_goals().is_empty());
    // A plan being written stays pending: the planning goal and its sub-goals do not count.
    let planning = build(&[
        r#"{"add": "Plan the task", "agent": "plan", "focus": "1"}"#,
        r#"{"add": "Read, Write"}"#,
    ]);
    assert!(planning.open_goals().is_empty());
}

#[test]
fn goals_written_before_checks_read_and_write_unchanged() {
    let old = r#"{"id":"1","parent_id":null,"branch_id":null,"type":"normal","description":"A",
        "reason":"","status":"pending","summary":null,"self_stats":{"message_count":0,
        "total_tokens":0,"total_cost":0.0,"preview":null},"cumulative_stats":{"message_count":0,
        "total_tokens":0,"total_cost":0.0,"preview":null},"created_at":"x","updated_at":"x"}"#;
    let goal: crate::Goal = serde_json::from_str(old).unwrap();
    assert_eq!(
        (goal.check.clone(), goal.check_result.clone(), goal.budget),
        (None, None, None)
    );
    let written = serde_json::to_string(&goal).unwrap();
    for key in ["check", "budget"] {
        assert!(!written.contains(key), "{written}");
    }
}
