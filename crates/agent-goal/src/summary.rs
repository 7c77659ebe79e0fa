//! The plan summed up for a reader: the material of a closing report ([`GoalTree::report_material`]:
//! the mission, each goal's outcome, what was abandoned and why, what was left open, and the
//! final answer) and the plan as lines with its summaries ([`GoalTree::summary_lines`]).

use crate::model::{GoalStatus, GoalTree, GoalType};
use crate::plan_text::PLANNING_AGENT;

/// The fewest goals a plan has for its run to end with a closing report.
pub const REPORT_MIN_GOALS: usize = 2;

impl GoalTree {
    /// What a closing report is written from, or `None` when the plan has fewer than
    /// [`REPORT_REPORT_MIN_GOALS`] goals (the planning goal not counted) or none was done or left open.
    pub fn report_material(&self, answer: &str) -> Option<String> {
        let tree = self;
        let planned = |status: GoalStatus| {
            tree.goals().iter().filter(move |goal| {
                goal.goal_type == GoalType::Normal
                    && goal.agent.as_deref() != Some(PLANNING_AGENT)
                    && goal.status == status
            })
        };
        let open: Vec<String> = tree
            .open_goals()
            .into_iter()
            .filter(|(_, goal)| goal.goal_type == GoalType::Normal)
            .map(|(number, goal)| format!("- {number}. {} ({})", goal.description, goal.status))
            .collect();
        let completed = planned(GoalStatus::Completed).count();
        let abandoned: Vec<String> = planned(GoalStatus::Abandoned)
            .map(|goal| {
                let why = goal.summary.as_deref().unwrap_or("no reason recorded");
                format!("- {}: {why}", goal.description)
            })
            .collect();
        if open.len() + completed + abandoned.len() < REPORT_MIN_GOALS
            || open.len() + completed == 0
        {
            return None;
        }
        let mut text = format!("## Mission\n\n{}\n\n## Plan\n\n", tree.mission());
        for (number, goal) in tree.numbered() {
            if goal.agent.as_deref() == Some(PLANNING_AGENT) {
                continue;
            }
            let indent = "  ".repeat(number.matches('.').count());
            let outcome = match goal.summary.as_deref() {
                Some(summary) => summary,
                None if goal.status.is_open() => "(not finished)",
                None => "(no summary)",
            };
            text.push_str(&format!(
                "{indent}{number}. {}: {outcome}\n",
                goal.description
            ));
        }
        if !abandoned.is_empty() {
            text.push_str("\n## Abandoned\n\n");
            text.push_str(&abandoned.join("\n"));
            text.push('\n');
        }
        if !open.is_empty() {
            text.push_str("\n## Left open\n\n");
            text.push_str(&open.join("\n"));
            text.push('\n');
        }
        text.push_str(&format!(
            "\n## The agent's final answer\n\n{}\n",
            answer.trim()
        ));
        Some(text)
    }

    /// The plan as lines, every visible goal with its marker and, when it has one, its summary:
    /// `[✓] 1. Read the code → <summary>`, sub-goals indented.
    pub fn summary_lines(&self) -> Vec<String> {
        self.numbered()
            .into_iter()
            .map(|(number, goal)| {
                let depth = number.matches('.').count();
                let marker = match goal.status {
                    GoalStatus::Completed => "[✓]",
                    GoalStatus::InProgress => "[→]",
                    _ => "[ ]",
                };
                let mut line = format!(
                    "{}{marker} {number} {}",
                    "  ".repeat(depth),
                    goal.description
                );
                if let Some(summary) = goal.summary.as_deref().filter(|s| !s.trim().is_empty()) {
                    line.push_str(" → ");
                    line.push_str(&summary.replace('\n', " "));
                }
                line
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GoalCommand;

    fn apply(tree: &mut GoalTree, json: &str) {
        let command: GoalCommand = serde_json::from_str(json).unwrap();
        tree.apply(&command).unwrap();
    }

    #[test]
    fn a_done_plan_of_two_goals_or_more_is_reported_with_what_was_abandoned() {
        let mut tree = GoalTree::new("Add a cache");
        apply(
            &mut tree,
            r#"{"add": "Read, Write, Try Redis", "focus": "1"}"#,
        );
        apply(&mut tree, r#"{"done": "read src/lib.rs", "focus": "2"}"#);
        let left = tree.report_material("Stopped.").unwrap();
        assert!(
            left.contains("## Left open\n\n- 2. Write (in progress)\n- 3. Try Redis (pending)\n"),
            "{left}"
        );
        apply(&mut tree, r#"{"done": "wrote src/cache.rs", "focus": "3"}"#);
        apply(&mut tree, r#"{"abandon": "no Redis here"}"#);
        let text = tree.report_material("Done.").unwrap();
        assert!(text.starts_with("## Mission\n\nAdd a cache\n"), "{text}");
        assert!(text.contains("1. Read: read src/lib.rs\n2. Write: wrote src/cache.rs\n"));
        assert!(
            text.contains("## Abandoned\n\n- Try Redis: no Redis here\n"),
            "{text}"
        );
        assert!(text.ends_with("## The agent's final answer\n\nDone.\n"));

        let mut small = GoalTree::new("Say hi");
        apply(&mut small, r#"{"add": "Greet", "focus": "1"}"#);
        apply(&mut small, r#"{"done": "said hi"}"#);
        assert_eq!(
            small.report_material("Hi."),
            None,
            "one goal is not worth a report"
        );
    }
}
