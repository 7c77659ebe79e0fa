//! The goal events: `GoalStart`, `GoalDone` and `GoalAbandoned`, found by comparing a trace's
//! goal tree before and after each `goal` call, with the goal's number, title and summary (or
//! the reason it was abandoned).

use agent_goal::{GoalStatus, GoalTree};
use agent_tools::hooks::HookInput;

use super::CommandHooks;

/// The goal events.
const GOAL_EVENTS: [&str; 3] = ["GoalStart", "GoalDone", "GoalAbandoned"];

/// Whether any goal event has a hook.
pub(super) fn wanted(hooks: &CommandHooks) -> bool {
    GOAL_EVENTS.iter().any(|event| hooks.has(event))
}

/// Keeps the goal tree of `trace_id` before its `goal` call.
pub(super) async fn before(hooks: &CommandHooks, trace_id: &str) {
    let tree = hooks
        .store
        .get_goal_tree(trace_id)
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
    hooks
        .before_goals
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(trace_id.to_owned(), tree);
}

/// After the `goal` call of `input`: the hooks of every goal it started, finished or abandoned.
pub(super) async fn after(hooks: &CommandHooks, input: &HookInput) {
    let before = hooks
        .before_goals
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .remove(&input.trace_id);
    let Some(before) = before else {
        return;
    };
    let Ok(Some(after)) = hooks.store.get_goal_tree(&input.trace_id).await else {
        return;
    };
    for event in changes(&before, &after) {
        let fired = HookInput::new(event.name, &input.trace_id, &input.cwd)
            .with("goal_number", event.number)
            .with("goal_title", event.title);
        let fired = match event.name {
            "GoalDone" => fired.with("summary", event.text),
            "GoalAbandoned" => fired.with("reason", event.text),
            _ => fired,
        };
        if hooks.has(event.name) {
            hooks.run_all(&fired).await;
        }
    }
}

/// A goal that changed.
#[derive(Debug, PartialEq, Eq)]
struct Change {
    name: &'static str,
    number: String,
    title: String,
    text: String,
}

/// The goals whose status changed between `before` and `after`, in `after`'s order.
fn changes(before: &GoalTree, after: &GoalTree) -> Vec<Change> {
    let numbers_before = before.numbered();
    let numbers_after = after.numbered();
    let number = |id: &str| {
        numbers_after
            .iter()
            .chain(numbers_before.iter())
            .find(|(_, goal)| goal.id == id)
            .map(|(number, _)| number.clone())
            .unwrap_or_default()
    };
    let mut found = Vec::new();
    for goal in after.goals() {
        let was = before.get(&goal.id).map(|g| g.status);
        if was == Some(goal.status) {
            continue;
        }
        let name = match goal.status {
            GoalStatus::InProgress if after.current_id() == Some(goal.id.as_str()) => "GoalStart",
            GoalStatus::Completed => "GoalDone",
            GoalStatus::Abandoned => "GoalAbandoned",
            _ => continue,
        };
        found.push(Change {
            name,
            number: number(&goal.id),
            title: goal.description.clone(),
            text: goal.summary.clone().unwrap_or_default(),
        });
    }
    found
}
