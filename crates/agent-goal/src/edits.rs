//! Changes made to a tree by its owner rather than by the model: inserting a goal built
//! elsewhere, and replacing a goal by a new version of itself.
//!
//! These are the direct edits of a trace store (`add_goal`, `update_goal`). They keep the
//! invariants every other change keeps — ids are unique and never handed out again, every
//! `parent_id` names a goal of the tree — and refuse a change that would break them, leaving
//! the tree as it was.

use crate::error::GoalError;
use crate::model::{Goal, GoalTree};

impl GoalTree {
    /// Appends `goal` as given, in creation order, e.g. an exploration goal under an id that
    /// was planned before it was written.
    ///
    /// Refused when a goal with its id exists already or when its `parent_id` names no goal of
    /// the tree. A numeric id moves the id counter past it, so the tree never hands it out
    /// again; the goal tool's rules (statuses, focus) are the caller's concern here.
    pub fn insert(&mut self, goal: Goal) -> Result<(), GoalError> {
        if self.get(&goal.id).is_some() {
            return Err(GoalError::DuplicateId { id: goal.id });
        }
        if let Some(parent) = &goal.parent_id
            && self.get(parent).is_none()
        {
            return Err(GoalError::UnknownParent {
                parent: parent.clone(),
                id: goal.id,
            });
        }
        if let Ok(number) = goal.id.parse::<u64>() {
            self.next_id = self.next_id.max(number.saturating_add(1));
        }
        self.goals.push(goal);
        Ok(())
    }

    /// Replaces the goal with `goal`'s id by `goal`, in place, and returns the version it
    /// replaced.
    ///
    /// Refused when no goal has that id, or when `goal` names another parent: a goal never
    /// moves in the tree. Every other field is taken as given.
    pub fn replace(&mut self, goal: Goal) -> Result<Goal, GoalError> {
        let index = self
            .index_of(&goal.id)
            .ok_or_else(|| GoalError::UnknownId {
                id: goal.id.clone(),
            })?;
        if self.goals[index].parent_id != goal.parent_id {
            return Err(GoalError::ParentChanged { id: goal.id });
        }
        Ok(std::mem::replace(&mut self.goals[index], goal))
    }
}

#[cfg(test)]
#[path = "edits_tests.rs"]
mod tests;
