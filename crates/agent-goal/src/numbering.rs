//! Display numbers ("1", "2.1", "2.1.3"): computed from the tree, never stored.
//!
//! Visible goals are the ones not abandoned and not under an abandoned goal. They are numbered
//! 1, 2, 3 at top level and 2.1, 2.2 under their parent, in creation order and consecutively,
//! so abandoning a goal renumbers its later siblings.

use crate::error::GoalError;
use crate::model::{Goal, GoalStatus, GoalTree};

/// One visible goal in display order, as rendered in the plan.
pub(crate) struct Row {
    /// The goal's position in `goals`.
    pub(crate) index: usize,
    /// Zero for top-level goals.
    pub(crate) depth: usize,
    /// The display number, e.g. "2.1".
    pub(crate) number: String,
}

/// Which rows an outline contains.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fold {
    /// Every visible goal.
    Nothing,
    /// Every visible goal except the descendants of completed goals.
    CompletedSubtrees,
}

impl GoalTree {
    /// The display number of goal `id`, e.g. "2.1"; `None` for abandoned goals, goals under
    /// abandoned ones and unknown ids.
    ///
    /// This costs one scan of the goals per level; use [`GoalTree::numbered`] for many goals.
    pub fn display_number(&self, id: &str) -> Option<String> {
        let mut index = self.index_of(id)?;
        let mut parts = Vec::new();
        for _ in 0..self.goals.len() {
            let goal = &self.goals[index];
            if goal.status == GoalStatus::Abandoned {
                return None;
            }
            let position = self
                .goals
                .iter()
                .filter(|g| g.parent_id == goal.parent_id && g.status != GoalStatus::Abandoned)
                .position(|g| g.id == goal.id)?;
            parts.push((position + 1).to_string());
            match goal.parent_id.as_deref() {
                None => {
                    parts.reverse();
                    return Some(parts.join("."));
                }
                Some(parent) => index = self.index_of(parent)?,
            }
        }
        None
    }

    /// The visible goal with display number `number` ("2.1"; a trailing dot as in "2." is
    /// accepted), if any.
    pub fn find_by_display(&self, number: &str) -> Option<&Goal> {
        let parts = parse_number(number)?;
        let mut parent: Option<&str> = None;
        let mut found = None;
        for position in parts {
            let goal = self
                .children(parent)
                .filter(|goal| goal.status != GoalStatus::Abandoned)
                .nth(position - 1)?;
            parent = Some(goal.id.as_str());
            found = Some(goal);
        }
        found
    }

    /// Every visible goal with its display number, depth first in display order.
    ///
    /// One pass over the tree, for callers that need the numbers of many goals.
    pub fn numbered(&self) -> Vec<(String, &Goal)> {
        self.outline(Fold::Nothing)
            .into_iter()
            .map(|row| (row.number, &self.goals[row.index]))
            .collect()
    }

    /// The visible goals depth first in display order, in O(n log n).
    pub(crate) fn outline(&self, fold: Fold) -> Vec<Row> {
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); self.goals.len()];
        let mut roots = Vec::new();
        for (index, goal) in self.goals.iter().enumerate() {
            if goal.status == GoalStatus::Abandoned {
                continue;
            }
            match goal.parent_id.as_deref() {
                None => roots.push(index),
                Some(parent) => {
                    if let Some(parent_index) = self.index_of(parent) {
                        children[parent_index].push(index);
                    }
                }
            }
        }
        // Each goal is pushed only when its single parent is popped, so the walk visits every
        // reachable goal once; goals on a parent cycle are unreachable and simply left out.
        let mut stack: Vec<Row> = roots
            .iter()
            .enumerate()
            .rev()
            .map(|(position, &index)| Row {
                index,
                depth: 0,
                number: (position + 1).to_string(),
            })
            .collect();
        let mut rows = Vec::with_capacity(self.goals.len());
        while let Some(row) = stack.pop() {
            let folded = fold == Fold::CompletedSubtrees
                && self.goals[row.index].status == GoalStatus::Completed;
            if !folded {
                for (position, &child) in children[row.index].iter().enumerate().rev() {
                    stack.push(Row {
                        index: child,
                        depth: row.depth + 1,
                        number: format!("{}.{}", row.number, position + 1),
                    });
                }
            }
            rows.push(row);
        }
        rows
    }

    /// The position of the visible goal numbered `number`, or an error for the model.
    pub(crate) fn resolve(&self, number: &str) -> Result<usize, GoalError> {
        let trimmed = number.trim();
        if parse_number(trimmed).is_none() {
            return Err(GoalError::InvalidNumber {
                input: trimmed.to_owned(),
            });
        }
        self.find_by_display(trimmed)
            .and_then(|goal| self.index_of(&goal.id))
            .ok_or_else(|| GoalError::UnknownNumber {
                number: trimmed.trim_end_matches('.').to_owned(),
            })
    }

    /// How messages name the goal at `index`: its display number and description, e.g.
    /// `2.1 "Design the API"`, or its id for a goal that has no number.
    pub(crate) fn label(&self, index: usize) -> String {
        let goal = &self.goals[index];
        match self.display_number(&goal.id) {
            Some(number) => format!("{number} \"{}\"", goal.description),
            None => format!("goal #{} \"{}\"", goal.id, goal.description),
        }
    }
}

/// Parses "2.1" (or "2.1.") into `[2, 1]`; every part must be a positive integer.
pub(crate) fn parse_number(number: &str) -> Option<Vec<usize>> {
    let trimmed = number.trim();
    let trimmed = trimmed.strip_suffix('.').unwrap_or(trimmed);
    trimmed
        .split('.')
        .map(|part| {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            part.parse::<usize>().ok().filter(|&n| n > 0)
        })
        .collect()
}

#[cfg(test)]
#[path = "numbering_tests.rs"]
mod tests;
