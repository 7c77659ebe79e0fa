//! Shared helpers of the unit tests: trees built from goal commands written as the model's
//! JSON, and the data-driven `check` helpers.

use crate::{GoalCommand, GoalError, GoalOutcome, GoalTree};

/// The timestamp every test change is stamped with.
pub(crate) const NOW: &str = "2026-01-01T00:00:00Z";

/// Parses a goal command from the JSON the model would send.
pub(crate) fn command(json: &str) -> GoalCommand {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("bad command {json}: {e}"))
}

/// Applies one command, which must succeed.
pub(crate) fn apply(tree: &mut GoalTree, json: &str) -> GoalOutcome {
    tree.apply_at(&command(json), NOW)
        .unwrap_or_else(|e| panic!("{json} failed: {e}\n{}", tree.to_todo_string()))
}

/// A tree with mission "Mission" after applying every command of `script`.
pub(crate) fn build(script: &[&str]) -> GoalTree {
    let mut tree = GoalTree::new("Mission");
    for json in script {
        apply(&mut tree, json);
    }
    tree
}

/// Applies `script` and compares the progress list with `expect`.
pub(crate) fn check(script: &[&str], expect: &str) {
    let tree = build(script);
    assert_eq!(tree.to_todo_string(), expect.trim_start_matches('\n'));
}

/// Applies `script`; then `bad` must fail with an error whose text contains `expect`, leaving
/// the tree unchanged. Returns the error.
pub(crate) fn check_err(script: &[&str], bad: &str, expect: &str) -> GoalError {
    let mut tree = build(script);
    let before = tree.clone();
    let err = tree
        .apply_at(&command(bad), NOW)
        .expect_err("the command should be refused");
    assert!(
        err.to_string().contains(expect),
        "error {:?} does not contain {expect:?}",
        err.to_string()
    );
    assert_eq!(tree, before, "a refused command changed the tree");
    err
}
