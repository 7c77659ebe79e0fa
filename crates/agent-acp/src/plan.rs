//! The goal tree as an ACP plan.

use agent_client_protocol::v1::schema::{Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus};
use agent_goal::{GoalStatus, GoalTree};

/// The whole plan of `tree`: every visible goal in display order, its display number first
/// ("2.1 Write the tests"), pending / in progress / completed. Abandoned goals and the goals
/// under them are left out, as the plan the model sees leaves them out.
///
/// ```
/// use agent_goal::{GoalCommand, GoalTree};
///
/// let mut tree = GoalTree::default();
/// let add = GoalCommand { add: Some("Read the code, Write the tests".into()), ..Default::default() };
/// tree.apply(&add).unwrap();
/// let plan = agent_acp::plan_of(&tree);
/// assert_eq!(plan.entries[1].content, "2 Write the tests");
/// ```
pub fn plan_of(tree: &GoalTree) -> Plan {
    let entries = tree
        .numbered()
        .into_iter()
        .map(|(number, goal)| {
            let status = match goal.status {
                GoalStatus::Completed => PlanEntryStatus::Completed,
                GoalStatus::InProgress => PlanEntryStatus::InProgress,
                _ => PlanEntryStatus::Pending,
            };
            // The focused goal is what the agent works on now; its ancestors are open too.
            let priority = if tree.current_id() == Some(goal.id.as_str()) {
                PlanEntryPriority::High
            } else {
                PlanEntryPriority::Medium
            };
            PlanEntry::new(format!("{number} {}", goal.description), priority, status)
        })
        .collect();
    Plan::new(entries)
}
