//! Parallel exploration in the main plan: an `explore_start` goal while branches run, and an
//! `explore_merge` goal recording what they found.
//!
//! The branches themselves are sub-traces with their own goal trees; this module only records
//! the start and the merge in the tree of the trace that explored.

use crate::error::GoalError;
use crate::model::{Goal, GoalStatus, GoalTree, GoalType};

/// The description given to every `explore_merge` goal.
pub const MERGE_DESCRIPTION: &str = "Evaluate exploration results";

impl GoalTree {
    /// Starts an exploration: creates an in-progress `explore_start` goal with `branch_ids` as
    /// a child of the current goal (top level when nothing is focused) and makes it current, so
    /// messages of the exploring step are attached to it. Returns its id.
    ///
    /// Refused when `description` is empty or the current goal is finished.
    pub fn start_explore(
        &mut self,
        description: &str,
        branch_ids: Vec<String>,
        now: &str,
    ) -> Result<String, GoalError> {
        let description = description.trim();
        if description.is_empty() {
            return Err(GoalError::EmptyText {
                field: "explore description",
            });
        }
        let parent = match self.current_id.as_deref() {
            None => None,
            Some(id) => {
                let index = self
                    .index_of(id)
                    .ok_or_else(|| GoalError::UnknownId { id: id.to_owned() })?;
                let status = self.goals[index].status;
                if status != GoalStatus::InProgress {
                    return Err(GoalError::ParentFinished {
                        label: self.label(index),
                        status,
                    });
                }
                Some(index)
            }
        };
        let id = self.alloc_id();
        let parent_id = parent.map(|index| self.goals[index].id.clone());
        let mut goal = Goal::new(id.clone(), parent_id, description, now);
        goal.branch_id = parent.and_then(|index| self.goals[index].branch_id.clone());
        goal.goal_type = GoalType::ExploreStart;
        goal.status = GoalStatus::InProgress;
        goal.branch_ids = Some(branch_ids);
        self.goals.push(goal);
        self.current_id = Some(id.clone());
        Ok(id)
    }

    /// Finishes an exploration: completes the `explore_start` goal (unless it already is) and
    /// appends a completed `explore_merge` sibling recording `merge_summary` (also its summary)
    /// and the chosen branch. Returns the merge goal's id.
    ///
    /// The merge goal is created after the start goal's other siblings, in creation order, like
    /// every goal; while the exploration blocks the main line nothing else is added, so it is
    /// the start goal's next sibling. When the start goal was current, focus moves to the
    /// nearest ancestor in progress. Finishing an exploration never cascade-completes the
    /// parent: its results are usually what the next goal acts on.
    ///
    /// Refused when the id is unknown or not an open `explore_start` goal, when the start goal
    /// still has unfinished sub-goals, or when `merge_summary` is empty.
    pub fn finish_explore(
        &mut self,
        explore_start_id: &str,
        merge_summary: &str,
        selected_branch: Option<String>,
        now: &str,
    ) -> Result<String, GoalError> {
        let index = self
            .index_of(explore_start_id)
            .ok_or_else(|| GoalError::UnknownId {
                id: explore_start_id.to_owned(),
            })?;
        let refuse = |reason| GoalError::NotOpenExploration {
            id: explore_start_id.to_owned(),
            reason,
        };
        let start = &self.goals[index];
        if start.goal_type != GoalType::ExploreStart {
            return Err(refuse("is not an explore_start goal"));
        }
        if start.status == GoalStatus::Abandoned {
            return Err(refuse("was abandoned"));
        }
        let merged = self
            .goals
            .iter()
            .any(|goal| goal.explore_start_id.as_deref() == Some(explore_start_id));
        if merged {
            return Err(refuse("has already been merged"));
        }
        let open: Vec<String> = self
            .child_indices(index)
            .into_iter()
            .filter(|&child| self.goals[child].status.is_open())
            .map(|child| self.label(child))
            .collect();
        if !open.is_empty() {
            return Err(GoalError::OpenChildren {
                label: self.label(index),
                open,
            });
        }
        let merge_summary = merge_summary.trim();
        if merge_summary.is_empty() {
            return Err(GoalError::EmptyText {
                field: "merge summary",
            });
        }

        let start = &mut self.goals[index];
        if start.status != GoalStatus::Completed {
            let branches = start.branch_ids.clone().unwrap_or_default();
            start.status = GoalStatus::Completed;
            start.summary = Some(if branches.is_empty() {
                "Exploration finished.".to_owned()
            } else {
                format!("Explored branches {}.", branches.join(", "))
            });
            start.updated_at = now.to_owned();
        }
        let parent_id = start.parent_id.clone();
        let branch_id = start.branch_id.clone();
        let id = self.alloc_id();
        let mut merge = Goal::new(id.clone(), parent_id, MERGE_DESCRIPTION, now);
        merge.branch_id = branch_id;
        merge.goal_type = GoalType::ExploreMerge;
        merge.status = GoalStatus::Completed;
        merge.summary = Some(merge_summary.to_owned());
        merge.explore_start_id = Some(explore_start_id.to_owned());
        merge.merge_summary = Some(merge_summary.to_owned());
        merge.selected_branch = selected_branch;
        self.goals.push(merge);
        if self.current_id.as_deref() == Some(explore_start_id) {
            self.current_id = self
                .next_focus_after(index)
                .map(|at| self.goals[at].id.clone());
        }
        Ok(id)
    }

    /// Records `label` (`A`, `B`, ...) as the branch whose approach was chosen on the latest
    /// merged exploration and returns the merge goal's id. Refused when no exploration has been
    /// merged or the label names none of its branches.
    pub(crate) fn select_branch(&mut self, label: &str, now: &str) -> Result<String, GoalError> {
        let index = self
            .goals
            .iter()
            .rposition(|goal| {
                goal.goal_type == GoalType::ExploreMerge && goal.status != GoalStatus::Abandoned
            })
            .ok_or(GoalError::NoExploration)?;
        let count = self.goals[index]
            .explore_start_id
            .as_deref()
            .and_then(|start| self.get(start))
            .and_then(|start| start.branch_ids.as_ref())
            .map_or(0, Vec::len);
        let labels: Vec<String> = (0..count).map(branch_label).collect();
        let label = label.trim().to_ascii_uppercase();
        if !labels.contains(&label) {
            return Err(GoalError::UnknownBranch { label, labels });
        }
        let merge = &mut self.goals[index];
        merge.selected_branch = Some(label);
        merge.updated_at = now.to_owned();
        Ok(merge.id.clone())
    }
}

/// The label of the branch at `index`: `A`, `B`, ... `Z`, then `27`, `28`, ... (as the
/// exploration report names them).
pub fn branch_label(index: usize) -> String {
    match u8::try_from(index) {
        Ok(i) if i < 26 => char::from(b'A' + i).to_string(),
        _ => (index + 1).to_string(),
    }
}

#[cfg(test)]
#[path = "explore_tests.rs"]
mod tests;
