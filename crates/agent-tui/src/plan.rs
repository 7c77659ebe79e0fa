//! The plan panel: the goal tree as the model edits it, with the current goal highlighted
//! (`▶`), done goals with their summary, abandoned ones with their reason, and the branches of
//! an exploration as they run. A goal keeps the number it was first shown with: abandoning or
//! deleting a goal never renumbers the others on screen.

use std::collections::{BTreeMap, HashMap};

use agent_execution::TraceStatus;
use agent_goal::{Goal, GoalStatus, GoalTree, GoalType};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::wrap::{truncate, wrap_text};

/// Numbers given to goals when first seen, in creation order among their siblings, abandoned
/// goals included, so that no number ever changes.
#[derive(Debug, Default, Clone)]
pub(crate) struct StableNumbers {
    numbers: HashMap<String, String>,
    /// How many children each parent (`""`: the top level) has been given numbers for.
    given: HashMap<String, u32>,
}

impl StableNumbers {
    /// Numbers the goals of `tree` not seen before.
    pub(crate) fn update(&mut self, tree: &GoalTree) {
        for goal in tree.goals() {
            if self.numbers.contains_key(&goal.id) {
                continue;
            }
            let parent = goal.parent_id.clone().unwrap_or_default();
            let count = self.given.entry(parent.clone()).or_insert(0);
            *count += 1;
            let number = match self.numbers.get(&parent) {
                Some(prefix) => format!("{prefix}.{count}"),
                None => count.to_string(),
            };
            self.numbers.insert(goal.id.clone(), number);
        }
    }

    /// The number of goal `id`.
    pub(crate) fn get(&self, id: &str) -> Option<&str> {
        self.numbers.get(id).map(String::as_str)
    }
}

/// A sub-trace started by a goal of this trace.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SubTrace {
    pub(crate) parent_goal_id: Option<String>,
    pub(crate) task: String,
    /// `None` while it runs.
    pub(crate) status: Option<TraceStatus>,
}

/// What the panel shows.
#[derive(Debug, Default, Clone)]
pub(crate) struct Plan {
    pub(crate) tree: GoalTree,
    pub(crate) numbers: StableNumbers,
    /// Sub-traces by id, in the order their ids sort (their start time).
    pub(crate) sub_traces: BTreeMap<String, SubTrace>,
}

impl Plan {
    /// Takes the tree after a change.
    pub(crate) fn set_tree(&mut self, tree: GoalTree) {
        self.numbers.update(&tree);
        self.tree = tree;
    }

    /// Whether there is anything to show.
    pub(crate) fn has_goals(&self) -> bool {
        !self.tree.goals().is_empty()
    }

    /// The number and description of the current goal.
    pub(crate) fn current_label(&self) -> Option<String> {
        let goal = self.tree.current()?;
        let number = self.numbers.get(&goal.id).unwrap_or("?");
        Some(format!("{number} {}", goal.description))
    }

    /// The panel's lines, `columns` wide.
    pub(crate) fn lines(&self, columns: usize) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        for goal in self.children(None) {
            self.goal_lines(goal, 0, columns, &mut lines);
        }
        lines
    }

    fn children(&self, parent: Option<&str>) -> impl Iterator<Item = &Goal> {
        self.tree
            .goals()
            .iter()
            .filter(move |goal| goal.parent_id.as_deref() == parent)
    }

    fn goal_lines(&self, goal: &Goal, depth: usize, columns: usize, out: &mut Vec<Line<'static>>) {
        let current = self.tree.current_id() == Some(goal.id.as_str());
        let (mark, style) = match goal.status {
            GoalStatus::Completed => ("✓", Style::new().fg(Color::Green)),
            GoalStatus::Abandoned => (
                "✗",
                Style::new()
                    .fg(Color::DarkGray)
                    .add_modifier(Modifier::CROSSED_OUT),
            ),
            GoalStatus::InProgress if current => (
                "▶",
                Style::new()
                    .fg(Color::Yellow)
                    .add_modifier(Modifier::BOLD | Modifier::REVERSED),
            ),
            GoalStatus::InProgress => ("→", Style::new().fg(Color::Yellow)),
            GoalStatus::Pending => ("○", Style::new()),
        };
        let kind = match goal.goal_type {
            GoalType::ExploreStart => "⑂ ",
            GoalType::ExploreMerge => "⇲ ",
            GoalType::Normal => "",
        };
        let indent = "  ".repeat(depth);
        let number = self.numbers.get(&goal.id).unwrap_or("?");
        let head = format!("{indent}{mark} {number} ");
        let pad = " ".repeat(crate::wrap::width(&head));
        let mark_style = match goal.status {
            GoalStatus::Abandoned => Style::new().fg(Color::Red),
            _ => style.remove_modifier(Modifier::REVERSED),
        };
        out.extend(wrap_text(
            &format!("{kind}{}", goal.description),
            style,
            columns,
            &[Span::styled(head, mark_style)],
            &[Span::raw(pad.clone())],
        ));
        let note = match (goal.status, &goal.summary, &goal.merge_summary) {
            (GoalStatus::Abandoned, summary, _) => Some((
                format!(
                    "abandoned: {}",
                    summary.as_deref().unwrap_or("no reason given")
                ),
                Style::new().fg(Color::Red),
            )),
            (_, _, Some(merged)) => Some((merged.clone(), Style::new().fg(Color::DarkGray))),
            (GoalStatus::Completed, Some(summary), _) => {
                Some((summary.clone(), Style::new().fg(Color::DarkGray)))
            }
            _ => None,
        };
        if let Some((text, note_style)) = note {
            let first_line: String = text.lines().next().unwrap_or_default().to_owned();
            let room = columns.saturating_sub(crate::wrap::width(&pad) + 2);
            out.push(Line::from(vec![
                Span::raw(pad.clone()),
                Span::styled(
                    format!("↳ {}", truncate(&first_line, room.max(4))),
                    note_style,
                ),
            ]));
        }
        if let Some(line) = gate_line(goal, &pad, columns) {
            out.push(line);
        }
        if goal.goal_type == GoalType::ExploreStart {
            self.branch_lines(goal, &pad, columns, out);
        }
        for child in self.children(Some(goal.id.as_str())) {
            self.goal_lines(child, depth + 1, columns, out);
        }
    }

    /// The sub-traces an exploration started, each with its branch label, task and state.
    fn branch_lines(&self, goal: &Goal, pad: &str, columns: usize, out: &mut Vec<Line<'static>>) {
        let listed = goal.branch_ids.clone().unwrap_or_default();
        let branches = self.sub_traces.iter().filter(|(id, sub)| {
            listed.contains(id) || sub.parent_goal_id.as_deref() == Some(goal.id.as_str())
        });
        for (index, (_, sub)) in branches.enumerate() {
            let label = agent_goal::branch_label(index);
            let (state, style) = match sub.status {
                None => ("running", Style::new().fg(Color::Yellow)),
                Some(TraceStatus::Completed) => ("done", Style::new().fg(Color::Green)),
                Some(TraceStatus::Cancelled) => ("cancelled", Style::new().fg(Color::DarkGray)),
                Some(TraceStatus::Incomplete) => ("incomplete", Style::new().fg(Color::Yellow)),
                Some(_) => ("failed", Style::new().fg(Color::Red)),
            };
            let head = format!("{pad}{label}: ");
            let room = columns.saturating_sub(crate::wrap::width(&head) + state.len() + 3);
            let task = sub.task.lines().next().unwrap_or_default();
            out.push(Line::from(vec![
                Span::styled(head, Style::new().fg(Color::Cyan)),
                Span::raw(truncate(task, room.max(4))),
                Span::styled(format!(" · {state}"), style),
            ]));
        }
    }
}

/// The line under a goal with a check or a budget: the check, how its latest run went, and
/// the budget, e.g. `` ⚑ check `make test` · failed (exit 1) · budget 10 model calls``.
fn gate_line(goal: &Goal, pad: &str, columns: usize) -> Option<Line<'static>> {
    let budget = goal.budget.filter(|budget| !budget.is_empty());
    if goal.check.is_none() && budget.is_none() {
        return None;
    }
    let mut spans = vec![Span::raw(pad.to_owned())];
    let mut text = String::from("⚑");
    if let Some(check) = &goal.check {
        text.push_str(&format!(" check {}", check.describe()));
    }
    let room = columns.saturating_sub(crate::wrap::width(pad) + 24);
    spans.push(Span::styled(
        truncate(&text, room.max(8)),
        Style::new().fg(Color::Cyan),
    ));
    if let Some(result) = &goal.check_result {
        let (verdict, style) = match (result.passed, result.exit_code) {
            (true, _) => ("passed".to_owned(), Style::new().fg(Color::Green)),
            (false, Some(code)) => (format!("failed (exit {code})"), Style::new().fg(Color::Red)),
            (false, None) => ("failed".to_owned(), Style::new().fg(Color::Red)),
        };
        spans.push(Span::styled(format!(" · {verdict}"), style));
    }
    if let Some(budget) = budget.filter(|_| goal.status.is_open()) {
        spans.push(Span::styled(
            format!(" · budget {}", budget.describe()),
            Style::new().fg(Color::DarkGray),
        ));
    }
    Some(Line::from(spans))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_goal::GoalCommand;

    fn command(
        add: Option<&str>,
        focus: Option<&str>,
        done: Option<&str>,
        abandon: Option<&str>,
    ) -> GoalCommand {
        GoalCommand {
            add: add.map(str::to_owned),
            focus: focus.map(str::to_owned),
            done: done.map(str::to_owned),
            abandon: abandon.map(str::to_owned),
            ..GoalCommand::default()
        }
    }

    #[test]
    fn a_gated_goal_shows_its_check_its_latest_result_and_its_budget() {
        let mut tree = GoalTree::new("m");
        let add = GoalCommand {
            add: Some("Test".into()),
            check: Some("make test".into()),
            budget: Some(agent_goal::GoalBudget {
                iterations: Some(10),
                ..Default::default()
            }),
            ..GoalCommand::default()
        };
        tree.apply(&add).unwrap();
        let mut goal = tree.goals()[0].clone();
        let shown = |goal: &Goal| {
            let line = gate_line(goal, "  ", 80).unwrap();
            line.spans
                .iter()
                .map(|s| s.content.to_string())
                .collect::<String>()
        };
        assert_eq!(
            shown(&goal),
            "  ⚑ check `make test` · budget 10 model calls"
        );
        goal.check_result = Some(agent_goal::CheckResult {
            passed: false,
            exit_code: Some(2),
            output: String::new(),
            duration_ms: 1,
            checked_at: String::new(),
        });
        assert_eq!(
            shown(&goal),
            "  ⚑ check `make test` · failed (exit 2) · budget 10 model calls"
        );
        goal.check = None;
        goal.budget = None;
        assert!(gate_line(&goal, "", 80).is_none());
    }

    #[test]
    fn numbers_do_not_shift_when_a_goal_is_abandoned() {
        let mut tree = GoalTree::new("m");
        let mut plan = Plan::default();
        tree.apply(&command(Some("A, B, C"), Some("2"), None, None))
            .unwrap();
        plan.set_tree(tree.clone());
        tree.apply(&command(None, None, None, Some("not needed")))
            .unwrap();
        tree.apply(&command(Some("D"), None, None, None)).unwrap();
        plan.set_tree(tree.clone());
        let numbers: Vec<&str> = tree
            .goals()
            .iter()
            .map(|goal| plan.numbers.get(&goal.id).unwrap())
            .collect();
        assert_eq!(numbers, ["1", "2", "3", "4"]);
    }
}
