//! The plan's text form, which people read, edit and save as templates (plan mode).
//!
//! One goal a line, two spaces of indent per level; blank lines and lines starting with `#`
//! are ignored; a line may end with `@<profile>`, the agent that carries that goal out, then
//! with the goal's check (`[check: <command>]`, or `[judge: <criteria>]`, or `[judge]` for a
//! judge of the description alone) and its budget (`[budget: iterations 10, tokens 50000,
//! seconds 600]`):
//!
//! ```text
//! # Plan: Add a cache
//! Read the code
//! Implement
//!   Design the interface
//!   Write it [check: cargo test -q] [budget: iterations 20]
//! Review the change @reviewer [judge: the review names every risk]
//! ```
//!
//! A check read from a plan text is a person's ([`CheckAuthor::Person`]): the text is what
//! people write, edit and save as templates.
//!
//! [`GoalTree::plan_text`] writes it, [`parse_plan`] reads it back as [`PlanItem`]s, and
//! [`GoalTree::replan`] turns items into a fresh tree of pending goals.

use crate::error::PlanParseError;
use crate::gate::{CheckAuthor, CheckKind, GoalBudget, GoalCheck};
use crate::model::{Goal, GoalStatus, GoalTree, GoalType};
use crate::numbering::Fold;
use crate::time::now_rfc3339;

/// The agent profile of the planning goal: the goal a planning run works under, whose
/// sub-goals are the plan (see [`GoalTree::plan_text`] and [`GoalTree::replan_keeping`]).
pub const PLANNING_AGENT: &str = "plan";

/// The comment on the format that follows the `# Plan: <mission>` line of a plan text.
const HINT: &str =
    "# One goal a line; indent two spaces per level. Lines starting with # are ignored.\n";

/// One line of a plan: a goal's description, its depth (0 at top level) and the agent profile
/// named at its end, if any.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlanItem {
    /// How deep the goal sits: 0 at top level, 1 under a top-level goal, ...
    pub depth: usize,
    /// What the goal is, on one line.
    pub description: String,
    /// The agent profile that carries the goal out (`@reviewer` at the end of the line).
    pub agent: Option<String>,
    /// The check that gates `done` on the goal (`[check: …]` or `[judge: …]`).
    pub check: Option<GoalCheck>,
    /// What the goal may spend (`[budget: …]`).
    pub budget: Option<GoalBudget>,
}

impl GoalTree {
    /// The plan as text: a `# Plan: <mission>` line, a comment on the format, then every
    /// visible normal goal, nested by indentation. Abandoned goals, exploration goals and
    /// everything under them are left out; a planning goal (one carried out by the
    /// [`PLANNING_AGENT`]) is left out too, its sub-goals taking its place. Runs of white space
    /// (line breaks included) in the mission and the descriptions become one space. Ends with
    /// a newline.
    pub fn plan_text(&self) -> String {
        let mut out = format!("# Plan: {}\n{HINT}", one_line(&self.mission));
        for item in self.plan_items() {
            for _ in 0..item.depth {
                out.push_str("  ");
            }
            out.push_str(&item.description);
            if let Some(agent) = &item.agent {
                out.push_str(" @");
                out.push_str(agent);
            }
            match item.check.as_ref().map(|check| &check.kind) {
                Some(CheckKind::Command(command)) => {
                    out.push_str(&format!(" [check: {}]", one_line(command)));
                }
                Some(CheckKind::Judge(criteria)) if criteria.trim().is_empty() => {
                    out.push_str(" [judge]");
                }
                Some(CheckKind::Judge(criteria)) => {
                    out.push_str(&format!(" [judge: {}]", one_line(criteria)));
                }
                None => {}
            }
            if let Some(budget) = &item.budget {
                out.push_str(&format!(" [budget: {}]", budget.text()));
            }
            out.push('\n');
        }
        out
    }

    /// A fresh plan for `items`, stamped with the current time; see [`GoalTree::replan_at`].
    ///
    /// ```
    /// use agent_goal::{GoalTree, parse_plan};
    ///
    /// let old = GoalTree::new("Add a cache");
    /// let items = parse_plan("# Plan: Add a cache\nRead the code\nImplement\n  Design it\n")?;
    /// let plan = old.replan(&items);
    /// assert_eq!(plan.display_number("3").as_deref(), Some("2.1"));
    /// assert!(plan.plan_text().ends_with("\nRead the code\nImplement\n  Design it\n"));
    /// # Ok::<(), agent_goal::PlanParseError>(())
    /// ```
    #[must_use]
    pub fn replan(&self, items: &[PlanItem]) -> GoalTree {
        self.replan_at(items, &now_rfc3339())
    }

    /// A fresh plan for `items`, created at `now`: the same mission, one pending goal per item
    /// in order, nothing focused, no statistics. The ids continue after this tree's, so none
    /// that was ever handed out here is reused.
    ///
    /// An item is a child of the nearest item before it that is one level less deep; an item
    /// more than one level deeper than the one before it (which [`parse_plan`] refuses) goes
    /// one level below that one.
    #[must_use]
    pub fn replan_at(&self, items: &[PlanItem], now: &str) -> GoalTree {
        let highest = self
            .goals
            .iter()
            .filter_map(|goal| goal.id.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        let mut next = self.next_id.max(highest.saturating_add(1)).max(1);
        let mut tree = GoalTree::new(self.mission.clone());
        tree.goals.reserve(items.len());
        let mut parents: Vec<String> = Vec::new();
        for item in items {
            parents.truncate(item.depth);
            let id = next.to_string();
            next = next.saturating_add(1);
            let parent = parents.last().cloned();
            let mut goal = Goal::new(id.clone(), parent, item.description.clone(), now);
            goal.agent = item.agent.clone();
            goal.check = item.check.clone();
            goal.budget = item.budget.and_then(GoalBudget::stored);
            tree.goals.push(goal);
            parents.push(id);
        }
        tree.next_id = next;
        tree
    }

    /// A fresh plan for `items` (see [`GoalTree::replan_at`]) that keeps the goal `keep` first,
    /// as it is but completed with `summary` and unfocused: the planning goal, whose messages
    /// hold the plan's reasons. Without such a goal, the same as [`GoalTree::replan_at`].
    #[must_use]
    pub fn replan_keeping(
        &self,
        keep: &str,
        items: &[PlanItem],
        summary: &str,
        now: &str,
    ) -> GoalTree {
        let mut fresh = self.replan_at(items, now);
        if let Some(goal) = self.get(keep) {
            let mut kept = goal.clone();
            kept.parent_id = None;
            if !kept.status.is_finished() {
                kept.status = GoalStatus::Completed;
                kept.summary = Some(summary.to_owned());
                kept.updated_at = now.to_owned();
            }
            kept.cumulative_stats = kept.self_stats.clone();
            fresh.goals.insert(0, kept);
        }
        fresh
    }

    /// The lines of [`GoalTree::plan_text`]: visible normal goals in display order.
    fn plan_items(&self) -> Vec<PlanItem> {
        let mut items = Vec::new();
        // Depth of a left-out goal whose descendants are being skipped.
        let mut skipping: Option<usize> = None;
        // Depths of the planning goals above the current row, whose sub-goals move up.
        let mut lifted: Vec<usize> = Vec::new();
        for row in self.outline(Fold::Nothing) {
            if skipping.is_some_and(|depth| row.depth > depth) {
                continue;
            }
            skipping = None;
            lifted.retain(|&depth| depth < row.depth);
            let goal = &self.goals[row.index];
            if goal.status == GoalStatus::Abandoned || goal.goal_type != GoalType::Normal {
                skipping = Some(row.depth);
                continue;
            }
            if goal.agent.as_deref() == Some(PLANNING_AGENT) {
                lifted.push(row.depth);
                continue;
            }
            items.push(PlanItem {
                depth: row.depth - lifted.len(),
                description: one_line(&goal.description),
                agent: goal.agent.clone(),
                check: goal.check.clone(),
                budget: goal.budget,
            });
        }
        items
    }
}

/// Reads a plan text (one goal a line, two spaces of indent per level, `#` lines ignored) as
/// items, refusing tabs in the indent, an indent that is not a multiple of two spaces, a line
/// indented more than one level below the goal above it, and a plan without goals. Errors name
/// the line (counted from 1).
pub fn parse_plan(text: &str) -> Result<Vec<PlanItem>, PlanParseError> {
    let mut items: Vec<PlanItem> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if line[..indent].contains('\t') {
            return Err(PlanParseError::TabIndent { line: number });
        }
        if indent % 2 != 0 {
            return Err(PlanParseError::OddIndent {
                line: number,
                spaces: indent,
            });
        }
        let depth = indent / 2;
        let allowed = items.last().map_or(0, |last| last.depth + 1);
        if depth > allowed {
            return Err(PlanParseError::TooDeep { line: number });
        }
        let (rest, check, budget) = split_gates(trimmed, number)?;
        let (description, agent) = split_agent(rest);
        items.push(PlanItem {
            depth,
            description: description.to_owned(),
            agent: agent.map(str::to_owned),
            check,
            budget,
        });
    }
    if items.is_empty() {
        return Err(PlanParseError::NoGoals);
    }
    Ok(items)
}

/// What [`split_gates`] reads off the end of a line: the rest, the check and the budget.
type Gates<'t> = (&'t str, Option<GoalCheck>, Option<GoalBudget>);

/// Splits the `[check: …]`, `[judge: …]` / `[judge]` and `[budget: …]` groups off the end of a
/// plan line (in any order, each at most once); `line` names the line in errors.
fn split_gates(text: &str, line: usize) -> Result<Gates<'_>, PlanParseError> {
    const MARKERS: [&str; 4] = [" [check:", " [judge:", " [judge]", " [budget:"];
    let mut rest = text.trim_end();
    let mut check = None;
    let mut budget = None;
    while rest.ends_with(']') {
        let Some(at) = MARKERS.iter().filter_map(|m| rest.rfind(m)).max() else {
            break;
        };
        let group = &rest[at + 2..rest.len() - 1];
        let (key, value) = group.split_once(':').unwrap_or((group, ""));
        let value = value.trim();
        match key {
            "budget" => {
                let read =
                    GoalBudget::parse_text(value).ok_or(PlanParseError::InvalidBudget { line })?;
                if budget.replace(read).is_some() {
                    return Err(PlanParseError::TwoOf {
                        line,
                        what: "budgets",
                    });
                }
            }
            _ => {
                let made = match key {
                    "check" if value.is_empty() => {
                        return Err(PlanParseError::EmptyCheck { line });
                    }
                    "check" => GoalCheck::command(value, CheckAuthor::Person),
                    _ => GoalCheck::judge(value, CheckAuthor::Person),
                };
                if check.replace(made).is_some() {
                    return Err(PlanParseError::TwoOf {
                        line,
                        what: "checks",
                    });
                }
            }
        }
        rest = rest[..at].trim_end();
    }
    Ok((rest, check, budget))
}

/// Splits a goal's text into its description and the agent profile named by a last word
/// `@<profile>` (letters, digits, `-`, `_`, `.`), if any: `"Review it @reviewer"` is
/// `("Review it", Some("reviewer"))`. A text that is only `@name` keeps it as its description.
pub fn split_agent(text: &str) -> (&str, Option<&str>) {
    let text = text.trim();
    let Some((head, last)) = text.rsplit_once(char::is_whitespace) else {
        return (text, None);
    };
    match last.strip_prefix('@') {
        Some(name) if is_profile_name(name) => (head.trim_end(), Some(name)),
        _ => (text, None),
    }
}

/// Whether `name` can name an agent profile: non-empty, letters, digits, `-`, `_` and `.`.
pub fn is_profile_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `text` with every run of white space turned into one space, and trimmed.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
#[path = "plan_text_tests.rs"]
mod tests;
