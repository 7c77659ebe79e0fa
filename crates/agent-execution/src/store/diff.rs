//! Goal events from the difference between a goal tree before and after a change: `goal_added`
//! per new goal, `goal_updated` per changed goal (deepest first, so a cascade reads child, then
//! parent) and `goal_removed` per deleted goal.
//!
//! Computing events from the trees rather than from what a command reports means every way of
//! changing a tree (goal commands, explorations, direct edits) produces the same events.

use std::collections::HashMap;

use agent_goal::{Goal, GoalTree};
use serde_json::{Map, Value};

use crate::event::{AffectedGoal, EventKind};

/// The goal events that turn `before` into `after`.
pub(crate) fn tree_events(before: &GoalTree, after: &GoalTree) -> Vec<EventKind> {
    let old: HashMap<&str, &Goal> = before.goals().iter().map(|g| (g.id.as_str(), g)).collect();
    let new: HashMap<&str, &Goal> = after.goals().iter().map(|g| (g.id.as_str(), g)).collect();
    let mut events = Vec::new();
    for goal in before.goals() {
        if !new.contains_key(goal.id.as_str()) {
            events.push(EventKind::GoalRemoved {
                goal_id: goal.id.clone(),
            });
        }
    }
    let mut updated = Vec::new();
    for goal in after.goals() {
        match old.get(goal.id.as_str()) {
            None => events.push(EventKind::GoalAdded {
                goal: goal.clone(),
                parent_id: goal.parent_id.clone(),
            }),
            Some(previous) if *previous != goal => {
                updated.push((depth(&new, goal), goal, changed_fields(previous, goal)));
            }
            Some(_) => {}
        }
    }
    // Deepest first, stable: a cascade reports the child before the parent it completed.
    updated.sort_by_key(|(depth, _, _)| std::cmp::Reverse(*depth));
    for (_, goal, updates) in updated {
        events.push(EventKind::GoalUpdated {
            goal_id: goal.id.clone(),
            updates,
            affected_goals: affected_chain(&new, goal),
        });
    }
    events
}

fn depth(goals: &HashMap<&str, &Goal>, goal: &Goal) -> usize {
    let mut depth = 0;
    let mut parent = goal.parent_id.as_deref();
    while let Some(id) = parent {
        depth += 1;
        // A malformed tree with a cycle must not hang the store.
        if depth > goals.len() {
            break;
        }
        parent = goals.get(id).and_then(|g| g.parent_id.as_deref());
    }
    depth
}

/// The goal (with its own stats) and its ancestors, each with status, summary and cumulative
/// stats.
fn affected_chain(goals: &HashMap<&str, &Goal>, goal: &Goal) -> Vec<AffectedGoal> {
    let mut chain = vec![AffectedGoal {
        goal_id: goal.id.clone(),
        self_stats: Some(goal.self_stats.clone()),
        cumulative_stats: goal.cumulative_stats.clone(),
        status: Some(goal.status),
        summary: goal.summary.clone(),
    }];
    let mut parent = goal.parent_id.as_deref();
    while let Some(ancestor) = parent.and_then(|id| goals.get(id)) {
        if chain.len() > goals.len() {
            break;
        }
        chain.push(AffectedGoal {
            goal_id: ancestor.id.clone(),
            self_stats: None,
            cumulative_stats: ancestor.cumulative_stats.clone(),
            status: Some(ancestor.status),
            summary: ancestor.summary.clone(),
        });
        parent = ancestor.parent_id.as_deref();
    }
    chain
}

/// The JSON fields of `after` that differ from `before`, with their new values (`null` for a
/// field that disappeared).
fn changed_fields(before: &Goal, after: &Goal) -> Map<String, Value> {
    let as_object = |goal: &Goal| match serde_json::to_value(goal) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let old = as_object(before);
    let new = as_object(after);
    let mut updates = Map::new();
    for (key, value) in &new {
        if old.get(key) != Some(value) {
            updates.insert(key.clone(), value.clone());
        }
    }
    for key in old.keys() {
        if !new.contains_key(key) {
            updates.insert(key.clone(), Value::Null);
        }
    }
    updates
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_goal::GoalCommand;
    use serde_json::json;

    /// Applies a goal command given as the model's JSON.
    fn apply(tree: &mut GoalTree, command: serde_json::Value) {
        let command: GoalCommand = serde_json::from_value(command).unwrap();
        tree.apply_at(&command, "2026-01-01T00:00:00Z").unwrap();
    }

    #[test]
    fn cascades_report_the_child_before_the_parent() {
        let mut before = GoalTree::new("mission");
        apply(&mut before, json!({"add": "parent, deleted"}));
        apply(&mut before, json!({"focus": "1"}));
        apply(&mut before, json!({"add": "child", "focus": "1.1"}));
        let mut after = before.clone();
        // The child completes and its parent with it; the pending goal goes; a new one comes.
        apply(
            &mut after,
            json!({"done": "written", "delete": "2", "add": "new"}),
        );
        let events = tree_events(&before, &after);
        let names: Vec<_> = events
            .iter()
            .map(|e| match e {
                EventKind::GoalRemoved { goal_id } | EventKind::GoalUpdated { goal_id, .. } => {
                    format!("{} {goal_id}", e.name())
                }
                EventKind::GoalAdded { goal, .. } => format!("{} {}", e.name(), goal.id),
                other => other.name().to_owned(),
            })
            .collect();
        assert_eq!(
            names,
            [
                "goal_removed 2",
                "goal_added 4",
                "goal_updated 3",
                "goal_updated 1"
            ]
        );
        let EventKind::GoalUpdated {
            updates,
            affected_goals,
            ..
        } = &events[2]
        else {
            panic!("expected goal_updated");
        };
        // Only the changed fields: the time stamp is the same.
        let changed: Vec<&str> = updates.keys().map(String::as_str).collect();
        assert_eq!(changed, ["status", "summary"], "{updates:?}");
        assert_eq!(updates.get("status"), Some(&Value::from("completed")));
        let ids: Vec<_> = affected_goals.iter().map(|a| a.goal_id.as_str()).collect();
        assert_eq!(ids, ["3", "1"]);
    }
}
