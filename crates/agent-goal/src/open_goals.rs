//! What the run still owes: the goals of a plan that are open (pending or in progress), as
//! front ends name them ([`PendingGoal`]), and the message that sends a model that stopped
//! early back to them ([`reminder_text`]).

use serde::Serialize;

use crate::model::{Goal, GoalStatus, GoalTree};
use crate::plan_text::PLANNING_AGENT;

impl GoalTree {
    /// The goals the run still owes: every visible goal that is pending or in progress, with
    /// its display number, in display order. A planning goal (carried out by the
    /// [`PLANNING_AGENT`]) and the goals under it are left out: they are a plan being written,
    /// meant to stay pending. Empty when every goal is done or abandoned.
    pub fn open_goals(&self) -> Vec<(String, &Goal)> {
        let planning = |goal: &Goal| goal.agent.as_deref() == Some(PLANNING_AGENT);
        self.numbered()
            .into_iter()
            .filter(|(_, goal)| goal.status.is_open() && !planning(goal))
            .filter(|(_, goal)| !self.ancestors(&goal.id).into_iter().any(planning))
            .collect()
    }

    /// Whether no goal changed after `time` (RFC 3339 in UTC, as goals record theirs: the same
    /// fixed width, so they compare as text).
    pub fn unchanged_since(&self, time: &str) -> bool {
        self.goals()
            .iter()
            .all(|goal| goal.updated_at.as_str() <= time)
    }
}

/// A goal left open, as front ends name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingGoal {
    /// Its internal id.
    pub goal_id: String,
    /// Its display number, e.g. `2.1`.
    pub number: String,
    /// What it is.
    pub description: String,
    /// `pending` (never started) or `in_progress`.
    pub status: GoalStatus,
}

impl PendingGoal {
    /// The open goals of `tree` ([`GoalTree::open_goals`]).
    pub fn of(tree: &GoalTree) -> Vec<Self> {
        tree.open_goals()
            .into_iter()
            .map(|(number, goal)| Self {
                goal_id: goal.id.clone(),
                number,
                description: goal.description.clone(),
                status: goal.status,
            })
            .collect()
    }

    /// The goal as the plan numbers it: `2. Write the cache`, `2.1 Test it`.
    pub fn label(&self) -> String {
        let description = self.description.split_whitespace().collect::<Vec<_>>();
        let dot = if self.number.contains('.') { "" } else { "." };
        format!("{}{dot} {}", self.number, description.join(" "))
    }

    /// The goals as one line: `2. Write the cache; 3. Test it`.
    pub fn list(goals: &[Self]) -> String {
        goals.iter().map(Self::label).collect::<Vec<_>>().join("; ")
    }
}

/// The message that sends a model back to `open`, the `count`th of at most `allowed` in a row
/// (0 for one that is not counted, as when a stopped run is resumed).
pub fn reminder_text(open: &[PendingGoal], count: u32, allowed: u32) -> String {
    let mut text = String::from("Your plan still has open goals:\n");
    for goal in open {
        let status = match goal.status {
            GoalStatus::InProgress => "in progress",
            _ => "pending",
        };
        text.push_str(&format!("- {} ({status})\n", goal.label()));
    }
    text.push_str(
        "Carry on with them: focus a goal, do the work, and finish it with `goal(done: \
         \"<summary>\")`. A goal that cannot or should not be done is abandoned with the reason: \
         focus it, then `goal(abandon: \"<reason>\")`. The task is finished only when every goal \
         is done or abandoned.",
    );
    if count > 0 {
        let next = match allowed.saturating_sub(count) {
            0 => "answering again without a tool call ends the run as incomplete.".to_owned(),
            left => format!("the run ends as incomplete after {left} more."),
        };
        text.push_str(&format!(" (Reminder {count} of {allowed}: {next})"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reminder_names_every_open_goal_and_what_to_do() {
        let goal = |number: &str, description: &str, status| PendingGoal {
            goal_id: number.into(),
            number: number.into(),
            description: description.into(),
            status,
        };
        let open = [
            goal("2", "Write\nthe cache", GoalStatus::InProgress),
            goal("2.1", "Test it", GoalStatus::Pending),
        ];
        let text = reminder_text(&open, 1, 3);
        assert!(text.starts_with(
            "Your plan still has open goals:\n- 2. Write the cache (in progress)\n- 2.1 Test it \
             (pending)\nCarry on"
        ));
        assert!(text.contains("goal(abandon: \"<reason>\")"));
        assert!(text.ends_with("(Reminder 1 of 3: the run ends as incomplete after 2 more.)"));
        assert!(reminder_text(&open, 3, 3).ends_with("ends the run as incomplete.)"));
        assert!(reminder_text(&open, 0, 3).ends_with("done or abandoned."));
        assert_eq!(PendingGoal::list(&open), "2. Write the cache; 2.1 Test it");
    }
}
