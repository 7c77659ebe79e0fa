//! Edits of the plan made by a person (the HTTP API, the viewer) rather than by the model: add
//! a goal anywhere, reword it, name its agent, move it, delete it, abandon it. The rules are
//! on [`PlanEdit`].
//!
//! ```
//! use agent_goal::{GoalCommand, GoalTree, PlanEdit};
//!
//! let mut tree = GoalTree::new("Add a cache");
//! tree.apply(&GoalCommand { add: Some("Read, Write, Test".into()), ..Default::default() })?;
//! tree.apply_plan_edit(&PlanEdit::Move { goal_id: "3".into(), parent_id: None, index: Some(0) })?;
//! assert_eq!(tree.to_todo_string(), "[ ] 1. Test\n[ ] 2. Read\n[ ] 3. Write\n");
//! # Ok::<(), agent_goal::GoalError>(())
//! ```

use serde::{Deserialize, Serialize};

use crate::command::GoalOutcome;
use crate::error::GoalError;
use crate::gate::{CheckAuthor, GoalBudget, GoalCheck};
use crate::model::{Goal, GoalStatus, GoalTree, GoalType};
use crate::plan_text::is_profile_name;
use crate::time::now_rfc3339;

/// One edit of the plan by a person, as the API takes it in JSON (`{"op": "add", ...}`).
///
/// The rules are the goal tool's, seen from outside the run:
///
/// - only a **pending** goal (one that never started) can be reworded, given another agent,
///   moved or deleted; a goal that started can only be **abandoned** (with its unfinished
///   descendants, as the goal tool does), and a finished goal cannot be changed at all;
/// - a goal is added or moved only under a goal that is not finished (or at top level), and
///   never under itself or its own sub-goals;
/// - deleting a goal deletes its sub-goals (all pending, as it is), unless one of them has
///   recorded messages;
/// - a goal's place among its siblings is its position in the tree's list, so moving a goal
///   changes that order and nothing else; ids stay as they are and are never handed out again.
///
/// Every edit is atomic: refused, it leaves the tree as it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum PlanEdit {
    /// A new pending goal.
    Add {
        /// What the goal is.
        description: String,
        /// The goal it goes under; top level when absent.
        #[serde(default)]
        parent_id: Option<String>,
        /// Its place among its siblings, from 0; last when absent or past the end.
        #[serde(default)]
        index: Option<usize>,
        /// The agent profile that carries it out.
        #[serde(default)]
        agent: Option<String>,
        /// A shell command that must exit 0 before the goal can be marked done.
        #[serde(default)]
        check: Option<String>,
        /// What a judge must find before the goal can be marked done (empty: its description);
        /// not with `check`.
        #[serde(default)]
        judge: Option<String>,
        /// What the goal may spend.
        #[serde(default)]
        budget: Option<GoalBudget>,
    },
    /// Rewords a pending goal and/or names its agent, its check or its budget.
    Update {
        /// The goal's id.
        goal_id: String,
        /// The new description.
        #[serde(default)]
        description: Option<String>,
        /// The agent profile that carries it out; an empty text clears it.
        #[serde(default)]
        agent: Option<String>,
        /// The command that gates `done`; an empty text clears the check.
        #[serde(default)]
        check: Option<String>,
        /// The criteria of a judge that gates `done` instead of a command; not with `check`.
        #[serde(default)]
        judge: Option<String>,
        /// What the goal may spend; one that sets nothing clears it.
        #[serde(default)]
        budget: Option<GoalBudget>,
    },
    /// Moves a pending goal (with its sub-goals) under another parent and/or to another place.
    Move {
        /// The goal's id.
        goal_id: String,
        /// The new parent; top level when absent.
        #[serde(default)]
        parent_id: Option<String>,
        /// Its place among its new siblings, from 0; last when absent or past the end.
        #[serde(default)]
        index: Option<usize>,
    },
    /// Deletes a pending goal and its sub-goals.
    Delete {
        /// The goal's id.
        goal_id: String,
    },
    /// Abandons a goal that is not finished, with its unfinished descendants.
    Abandon {
        /// The goal's id.
        goal_id: String,
        /// Why it is given up.
        reason: String,
    },
}

impl GoalTree {
    /// Applies one person's edit of the plan at the current time; see
    /// [`GoalTree::apply_plan_edit_at`].
    pub fn apply_plan_edit(&mut self, edit: &PlanEdit) -> Result<GoalOutcome, GoalError> {
        self.apply_plan_edit_at(edit, &now_rfc3339())
    }

    /// Applies one person's edit of the plan, stamping changed goals with `now`. The rules are
    /// on [`PlanEdit`]; refused, the tree is unchanged.
    pub fn apply_plan_edit_at(
        &mut self,
        edit: &PlanEdit,
        now: &str,
    ) -> Result<GoalOutcome, GoalError> {
        let mut work = self.clone();
        let outcome = work.plan_edit(edit, now)?;
        *self = work;
        Ok(outcome)
    }

    fn plan_edit(&mut self, edit: &PlanEdit, now: &str) -> Result<GoalOutcome, GoalError> {
        let mut outcome = GoalOutcome::default();
        match edit {
            PlanEdit::Add {
                description,
                parent_id,
                index,
                agent,
                check,
                judge,
                budget,
            } => {
                let description = text(description, "description")?;
                let agent = agent_name(agent.as_deref())?;
                let gate = person_check(check.as_deref(), judge.as_deref())?.flatten();
                self.require_open_parent(parent_id.as_deref(), None)?;
                let id = self.alloc_id();
                let mut goal = Goal::new(id.clone(), parent_id.clone(), description, now);
                goal.agent = agent;
                goal.check = gate;
                goal.budget = budget.and_then(GoalBudget::stored);
                goal.branch_id = parent_id
                    .as_deref()
                    .and_then(|parent| self.get(parent))
                    .and_then(|parent| parent.branch_id.clone());
                self.place(goal, *index);
                outcome.message = format!("Added {}.", self.label_of(&id));
                outcome.added.push(id);
            }
            PlanEdit::Update {
                goal_id,
                description,
                agent,
                check,
                judge,
                budget,
            } => {
                let at = self.pending_index(goal_id)?;
                if let Some(description) = description {
                    self.goals[at].description = text(description, "description")?.to_owned();
                }
                if let Some(agent) = agent {
                    self.goals[at].agent = agent_name(Some(agent))?;
                }
                if let Some(gate) = person_check(check.as_deref(), judge.as_deref())? {
                    self.goals[at].check = gate;
                    self.goals[at].check_result = None;
                }
                if let Some(budget) = budget {
                    self.goals[at].budget = budget.stored();
                }
                self.goals[at].updated_at = now.to_owned();
                outcome.message = format!("Updated {}.", self.label(at));
                outcome.updated.push(goal_id.clone());
            }
            PlanEdit::Move {
                goal_id,
                parent_id,
                index,
            } => {
                let at = self.pending_index(goal_id)?;
                self.require_open_parent(parent_id.as_deref(), Some(goal_id))?;
                let mut goal = self.goals.remove(at);
                goal.parent_id = parent_id.clone();
                goal.updated_at = now.to_owned();
                self.place(goal, *index);
                outcome.message = format!("Moved {}.", self.label_of(goal_id));
                outcome.updated.push(goal_id.clone());
            }
            PlanEdit::Delete { goal_id } => {
                let at = self.pending_index(goal_id)?;
                let mut doomed = vec![at];
                doomed.extend(self.descendant_indices(at));
                if let Some(&busy) = doomed
                    .iter()
                    .find(|&&i| self.goals[i].self_stats.message_count > 0)
                {
                    return Err(GoalError::HasMessages {
                        label: self.label(busy),
                    });
                }
                outcome.message = format!("Deleted {}.", self.label(at));
                outcome.removed = doomed.iter().map(|&i| self.goals[i].id.clone()).collect();
                doomed.sort_unstable();
                for index in doomed.into_iter().rev() {
                    self.goals.remove(index);
                }
            }
            PlanEdit::Abandon { goal_id, reason } => {
                let reason = text(reason, "reason")?;
                let at = self.index_of(goal_id).ok_or_else(|| GoalError::UnknownId {
                    id: goal_id.clone(),
                })?;
                let status = self.goals[at].status;
                if status.is_finished() {
                    return Err(GoalError::NotOpen {
                        label: self.label(at),
                        status,
                    });
                }
                outcome.message = format!("Abandoned {}. Reason: {reason}", self.label(at));
                let mut swept = vec![at];
                swept.extend(self.descendant_indices(at));
                for index in swept {
                    let goal = &mut self.goals[index];
                    if goal.status.is_finished() {
                        continue;
                    }
                    goal.status = GoalStatus::Abandoned;
                    goal.summary = Some(reason.to_owned());
                    goal.updated_at = now.to_owned();
                    outcome.updated.push(goal.id.clone());
                }
                let focus_inside = self.current_id.as_deref().is_some_and(|current| {
                    current == goal_id || self.ancestors(current).iter().any(|g| &g.id == goal_id)
                });
                if focus_inside {
                    self.current_id = self.goals[at].parent_id.clone();
                }
            }
        }
        Ok(outcome)
    }

    /// The position of goal `id` if it is pending; an error naming it otherwise.
    fn pending_index(&self, id: &str) -> Result<usize, GoalError> {
        let at = self
            .index_of(id)
            .ok_or_else(|| GoalError::UnknownId { id: id.to_owned() })?;
        let status = self.goals[at].status;
        if status != GoalStatus::Pending || self.goals[at].goal_type != GoalType::Normal {
            return Err(GoalError::NotPending {
                label: self.label(at),
                status,
            });
        }
        Ok(at)
    }

    /// Refuses a parent that does not exist, is finished, is not a normal goal, or is
    /// `moving` itself or one of its sub-goals.
    fn require_open_parent(
        &self,
        parent: Option<&str>,
        moving: Option<&str>,
    ) -> Result<(), GoalError> {
        let Some(parent) = parent else {
            return Ok(());
        };
        let at = self.index_of(parent).ok_or_else(|| GoalError::UnknownId {
            id: parent.to_owned(),
        })?;
        let goal = &self.goals[at];
        if goal.status.is_finished() || goal.goal_type != GoalType::Normal {
            return Err(GoalError::ParentFinished {
                label: self.label(at),
                status: goal.status,
            });
        }
        if let Some(moving) = moving
            && (parent == moving || self.ancestors(parent).iter().any(|g| g.id == moving))
        {
            return Err(GoalError::MoveUnderItself {
                label: self.label_of(moving),
            });
        }
        Ok(())
    }

    /// Puts `goal` at place `index` among the children of its parent (last when `None` or
    /// past the end).
    fn place(&mut self, goal: Goal, index: Option<usize>) {
        let siblings: Vec<usize> = self
            .goals
            .iter()
            .enumerate()
            .filter(|(_, other)| other.parent_id == goal.parent_id)
            .map(|(i, _)| i)
            .collect();
        let position = match index.and_then(|index| siblings.get(index)) {
            Some(&before) => before,
            None => self.goals.len(),
        };
        self.goals.insert(position, goal);
    }

    /// The label of goal `id` (it exists).
    fn label_of(&self, id: &str) -> String {
        self.index_of(id)
            .map_or_else(|| format!("goal #{id}"), |index| self.label(index))
    }
}

/// The trimmed text, or an error naming the empty field.
fn text<'a>(value: &'a str, field: &'static str) -> Result<&'a str, GoalError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(GoalError::EmptyText { field });
    }
    Ok(trimmed)
}

/// The check a person gives with `check` (a command) or `judge` (criteria): `None` when
/// neither is given, `Some(None)` for an empty command (no check), an error for both.
fn person_check(
    check: Option<&str>,
    judge: Option<&str>,
) -> Result<Option<Option<GoalCheck>>, GoalError> {
    Ok(match (check.map(str::trim), judge.map(str::trim)) {
        (Some(_), Some(_)) => return Err(GoalError::CheckAndJudge),
        (Some(""), None) => Some(None),
        (Some(command), None) => Some(Some(GoalCheck::command(command, CheckAuthor::Person))),
        (None, Some(criteria)) => Some(Some(GoalCheck::judge(criteria, CheckAuthor::Person))),
        (None, None) => None,
    })
}

/// The agent profile named by `value`: `None` for none or an empty text, an error for a name
/// no profile can have.
fn agent_name(value: Option<&str>) -> Result<Option<String>, GoalError> {
    match value.map(str::trim) {
        None | Some("") => Ok(None),
        Some(name) if is_profile_name(name) => Ok(Some(name.to_owned())),
        Some(name) => Err(GoalError::InvalidAgent {
            input: name.to_owned(),
        }),
    }
}

#[cfg(test)]
#[path = "plan_edits_tests.rs"]
mod tests;
