//! The goal tool: one call `goal(add?, done?, abandon?, focus?, reason?, edit?, delete?)`
//! applied to a tree as a single atomic change.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::error::GoalError;
use crate::model::{Goal, GoalStatus, GoalTree};
use crate::time::now_rfc3339;

/// The arguments of one goal tool call, as the model sends them in JSON.
///
/// One call may combine fields. They are applied in this order, each step seeing the tree as
/// the previous step left it (as if the tool had been called once per step):
///
/// 1. `abandon` or `done` (not both) on the current goal;
/// 2. `edit`, then `delete` (all their numbers are resolved before either changes anything);
/// 3. `add`, with `reason`;
/// 4. `focus`.
///
/// So `{"add": "A, B", "focus": "1"}` on an empty plan creates two goals and starts the first,
/// and `{"done": "…", "focus": "2.3"}` finishes the current goal and starts the next one.
///
/// The rules, and the choices made where the spec leaves room:
///
/// - **Statuses only move forward**: pending → in progress → completed or abandoned. A goal
///   that has started never becomes pending again, so "pending" always means "never started",
///   which is exactly what `edit` and `delete` require.
/// - **`focus`** makes the goal and all its ancestors in progress and makes it current.
///   Focusing elsewhere leaves the previous current goal in progress (paused work stays visible
///   as `[→]`), so the invariant "the current goal and all its ancestors are in progress" always
///   holds. A completed goal cannot be focused.
/// - **`done`** on a goal with pending or in-progress sub-goals is **refused**, naming them, so
///   a completed goal never hides open work; abandoned sub-goals do not count. When every
///   non-abandoned child of a parent is completed, the parent completes too, with a summary
///   built from its children's ("<description>: <summary>; …"), recursively upward. Focus then
///   moves to the nearest ancestor still in progress, or is unset.
/// - **`abandon`** abandons the current goal and its unfinished descendants (completed ones
///   keep their data). It never cascades: a parent whose remaining children are all completed
///   stays in progress, so a replacement can be added under it. Focus moves to the parent.
/// - **`add`** appends comma-separated goals as pending children of the current goal (top
///   level when nothing is focused); adding under a finished goal is refused.
/// - **`edit`** and **`delete`** take display numbers and only touch pending goals; a deleted
///   goal's id is never handed out again.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GoalCommand {
    /// Comma-separated descriptions of new pending goals, e.g. `"A, B, C"`: children of the
    /// current goal, or top-level goals when nothing is focused.
    pub add: Option<String>,
    /// A summary of what the current goal achieved: completes it, cascading upward.
    pub done: Option<String>,
    /// Why the current goal is given up: abandons it and its unfinished descendants.
    pub abandon: Option<String>,
    /// A display number such as `"2.1"`: that goal becomes in progress and current.
    pub focus: Option<String>,
    /// Why the added goals were created; only valid together with `add`.
    pub reason: Option<String>,
    /// `"<number>: <new description>"`: rewords a pending goal.
    pub edit: Option<String>,
    /// `"<number>[, <number>…]"`: removes pending goals outright.
    pub delete: Option<String>,
}

/// What one applied goal command changed, for events and for the model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GoalOutcome {
    /// The tool result for the model: what happened, what is next and which goal is current.
    pub message: String,
    /// Ids of the goals created, in order; they are reported only here, in their final state.
    pub added: Vec<String>,
    /// Ids of existing goals whose status, summary or description changed (cascaded parents
    /// and abandoned descendants included), each once, in order of first change.
    pub updated: Vec<String>,
    /// Ids of the goals deleted; they are not listed in `updated`.
    pub removed: Vec<String>,
}

impl GoalTree {
    /// Applies one goal tool call at the current time; see [`GoalTree::apply_at`].
    pub fn apply(&mut self, cmd: &GoalCommand) -> Result<GoalOutcome, GoalError> {
        self.apply_at(cmd, &now_rfc3339())
    }

    /// Applies one goal tool call, stamping changed goals with `now` (RFC 3339).
    ///
    /// The rules are described on [`GoalCommand`]. The change is atomic: on error the tree is
    /// exactly as before and the error's text tells the model what to fix.
    pub fn apply_at(&mut self, cmd: &GoalCommand, now: &str) -> Result<GoalOutcome, GoalError> {
        let parsed = Parsed::from_command(cmd)?;
        let mut work = self.clone();
        let outcome = Run::new(&mut work, now).execute(&parsed)?;
        *self = work;
        Ok(outcome)
    }
}

/// The first step of a command.
#[derive(Clone, Copy)]
enum Finish<'c> {
    /// Complete the current goal with this summary.
    Done(&'c str),
    /// Abandon the current goal for this reason.
    Abandon(&'c str),
}

/// A command checked for shape, before the tree is looked at.
struct Parsed<'c> {
    finish: Option<Finish<'c>>,
    edit: Option<(&'c str, &'c str)>,
    delete: Vec<&'c str>,
    add: Vec<&'c str>,
    reason: &'c str,
    focus: Option<&'c str>,
}

impl<'c> Parsed<'c> {
    fn from_command(cmd: &'c GoalCommand) -> Result<Self, GoalError> {
        let GoalCommand {
            add,
            done,
            abandon,
            focus,
            reason,
            edit,
            delete,
        } = cmd;
        if [add, done, abandon, focus, reason, edit, delete]
            .iter()
            .all(|field| field.is_none())
        {
            return Err(GoalError::EmptyCommand);
        }
        if reason.is_some() && add.is_none() {
            return Err(GoalError::ReasonWithoutAdd);
        }
        let finish = match (done, abandon) {
            (Some(_), Some(_)) => return Err(GoalError::DoneAndAbandon),
            (Some(summary), None) => Some(Finish::Done(non_empty(summary, "done")?)),
            (None, Some(why)) => Some(Finish::Abandon(non_empty(why, "abandon")?)),
            (None, None) => None,
        };
        let edit = edit.as_deref().map(parse_edit).transpose()?;
        let delete = match delete {
            Some(list) => non_empty_list(list, "delete")?,
            None => Vec::new(),
        };
        let add = match add {
            Some(list) => non_empty_list(list, "add")?,
            None => Vec::new(),
        };
        let focus = focus
            .as_deref()
            .map(|number| non_empty(number, "focus"))
            .transpose()?;
        Ok(Self {
            finish,
            edit,
            delete,
            add,
            reason: reason.as_deref().map(str::trim).unwrap_or_default(),
            focus,
        })
    }
}

/// The trimmed text, or an error naming the empty field.
fn non_empty<'c>(text: &'c str, field: &'static str) -> Result<&'c str, GoalError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        Err(GoalError::EmptyText { field })
    } else {
        Ok(trimmed)
    }
}

/// The non-empty trimmed items of a comma-separated list, or an error if there are none.
fn non_empty_list<'c>(list: &'c str, field: &'static str) -> Result<Vec<&'c str>, GoalError> {
    let items: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .collect();
    if items.is_empty() {
        Err(GoalError::EmptyText { field })
    } else {
        Ok(items)
    }
}

/// Splits `"2.1: New description"` into its number and description.
fn parse_edit(input: &str) -> Result<(&str, &str), GoalError> {
    let invalid = || GoalError::InvalidEdit {
        input: input.trim().to_owned(),
    };
    let (number, description) = input.split_once(':').ok_or_else(invalid)?;
    let (number, description) = (number.trim(), description.trim());
    if number.is_empty() || description.is_empty() {
        return Err(invalid());
    }
    Ok((number, description))
}

/// One command being applied to a working copy of the tree.
struct Run<'t> {
    tree: &'t mut GoalTree,
    now: &'t str,
    outcome: GoalOutcome,
    lines: Vec<String>,
}

impl<'t> Run<'t> {
    fn new(tree: &'t mut GoalTree, now: &'t str) -> Self {
        Self {
            tree,
            now,
            outcome: GoalOutcome::default(),
            lines: Vec::new(),
        }
    }

    fn execute(mut self, parsed: &Parsed<'_>) -> Result<GoalOutcome, GoalError> {
        match parsed.finish {
            Some(Finish::Done(summary)) => self.done(summary)?,
            Some(Finish::Abandon(reason)) => self.abandon(reason)?,
            None => {}
        }
        if parsed.edit.is_some() || !parsed.delete.is_empty() {
            self.edit_and_delete(parsed.edit, &parsed.delete)?;
        }
        if !parsed.add.is_empty() {
            self.add(&parsed.add, parsed.reason)?;
        }
        if let Some(number) = parsed.focus {
            self.focus(number)?;
        } else if parsed.finish.is_some() {
            let next = self.next_step();
            self.lines.push(next);
        }
        let current = match self
            .tree
            .current_id
            .as_deref()
            .and_then(|id| self.tree.index_of(id))
        {
            Some(index) => format!("Current goal: {}.", self.tree.label(index)),
            None => "Nothing is focused.".to_owned(),
        };
        self.lines.push(current);
        self.outcome.message = self.lines.join("\n");
        Ok(self.outcome)
    }

    /// Stamps the goal at `index` as changed and reports it once.
    fn touch(&mut self, index: usize) {
        let goal = &mut self.tree.goals[index];
        goal.updated_at = self.now.to_owned();
        if !self.outcome.updated.contains(&goal.id) && !self.outcome.added.contains(&goal.id) {
            self.outcome.updated.push(goal.id.clone());
        }
    }

    /// Sets the status (and, when given, the summary) of the goal at `index`.
    fn set_status(&mut self, index: usize, status: GoalStatus, summary: Option<String>) {
        let goal = &mut self.tree.goals[index];
        goal.status = status;
        if summary.is_some() {
            goal.summary = summary;
        }
        self.touch(index);
    }

    /// The position of the current goal, which must be in progress.
    fn current_index(&self, action: &'static str) -> Result<usize, GoalError> {
        let id = self
            .tree
            .current_id
            .as_deref()
            .ok_or(GoalError::NothingFocused { action })?;
        let index = self
            .tree
            .index_of(id)
            .ok_or_else(|| GoalError::UnknownId { id: id.to_owned() })?;
        let status = self.tree.goals[index].status;
        if status != GoalStatus::InProgress {
            return Err(GoalError::CurrentNotInProgress {
                label: self.tree.label(index),
                status,
            });
        }
        Ok(index)
    }

    fn done(&mut self, summary: &str) -> Result<(), GoalError> {
        let index = self.current_index("complete")?;
        let open: Vec<String> = self
            .tree
            .child_indices(index)
            .into_iter()
            .filter(|&child| self.tree.goals[child].status.is_open())
            .map(|child| self.tree.label(child))
            .collect();
        if !open.is_empty() {
            return Err(GoalError::OpenChildren {
                label: self.tree.label(index),
                open,
            });
        }
        let label = self.tree.label(index);
        self.set_status(index, GoalStatus::Completed, Some(summary.to_owned()));
        self.lines.push(format!("Completed {label}."));
        let mut parent = self.tree.parent_index(index);
        while let Some(at) = parent {
            if self.tree.goals[at].status != GoalStatus::InProgress {
                break;
            }
            let children: Vec<usize> = self
                .tree
                .child_indices(at)
                .into_iter()
                .filter(|&child| self.tree.goals[child].status != GoalStatus::Abandoned)
                .collect();
            let all_done = children
                .iter()
                .all(|&child| self.tree.goals[child].status == GoalStatus::Completed);
            if !all_done {
                break;
            }
            let summary = children
                .iter()
                .map(|&child| {
                    let goal = &self.tree.goals[child];
                    match goal.summary.as_deref() {
                        Some(text) if !text.is_empty() => format!("{}: {text}", goal.description),
                        _ => goal.description.clone(),
                    }
                })
                .collect::<Vec<_>>()
                .join("; ");
            let label = self.tree.label(at);
            self.set_status(at, GoalStatus::Completed, Some(summary));
            self.lines.push(format!(
                "All sub-goals of {label} are finished, so it is completed too."
            ));
            parent = self.tree.parent_index(at);
        }
        self.tree.current_id = self
            .tree
            .next_focus_after(index)
            .map(|at| self.tree.goals[at].id.clone());
        Ok(())
    }

    fn abandon(&mut self, reason: &str) -> Result<(), GoalError> {
        let index = self.current_index("abandon")?;
        let label = self.tree.label(index);
        let parent_id = self.tree.goals[index].parent_id.clone();
        let renumbers = self.tree.goals[index + 1..]
            .iter()
            .any(|goal| goal.parent_id == parent_id && goal.status != GoalStatus::Abandoned);
        self.set_status(index, GoalStatus::Abandoned, Some(reason.to_owned()));
        let mut swept = 0;
        for descendant in self.tree.descendant_indices(index) {
            if self.tree.goals[descendant].status.is_open() {
                let why = format!("Abandoned with its parent goal: {reason}");
                self.set_status(descendant, GoalStatus::Abandoned, Some(why));
                swept += 1;
            }
        }
        self.lines
            .push(format!("Abandoned {label}. Reason: {reason}"));
        if swept > 0 {
            self.lines.push(format!(
                "Its {swept} unfinished sub-goal(s) were abandoned with it."
            ));
        }
        if renumbers {
            self.lines
                .push("The goals after it moved up one number.".to_owned());
        }
        self.tree.current_id = self
            .tree
            .next_focus_after(index)
            .map(|at| self.tree.goals[at].id.clone());
        Ok(())
    }

    fn edit_and_delete(
        &mut self,
        edit: Option<(&str, &str)>,
        delete: &[&str],
    ) -> Result<(), GoalError> {
        let edit = match edit {
            Some((number, text)) => Some((self.tree.resolve(number)?, text)),
            None => None,
        };
        let mut doomed: Vec<usize> = Vec::new();
        for number in delete {
            let index = self.tree.resolve(number)?;
            if !doomed.contains(&index) {
                doomed.push(index);
            }
        }
        if let Some((index, _)) = edit {
            self.require_pending(index)?;
        }
        for &index in &doomed {
            self.require_pending(index)?;
            if !self.tree.child_indices(index).is_empty() {
                return Err(GoalError::HasSubGoals {
                    label: self.tree.label(index),
                });
            }
            if self.tree.goals[index].cumulative_stats.message_count > 0 {
                return Err(GoalError::HasMessages {
                    label: self.tree.label(index),
                });
            }
        }
        if let Some((index, text)) = edit {
            let label = self.tree.label(index);
            self.tree.goals[index].description = text.to_owned();
            self.touch(index);
            self.lines.push(format!("Renamed {label} to \"{text}\"."));
        }
        if doomed.is_empty() {
            return Ok(());
        }
        let labels: Vec<String> = doomed.iter().map(|&index| self.tree.label(index)).collect();
        let ids: Vec<String> = doomed
            .iter()
            .map(|&index| self.tree.goals[index].id.clone())
            .collect();
        let gone: HashSet<&str> = ids.iter().map(String::as_str).collect();
        self.tree
            .goals
            .retain(|goal| !gone.contains(goal.id.as_str()));
        self.outcome
            .updated
            .retain(|id| !gone.contains(id.as_str()));
        self.outcome.removed.extend(ids.iter().cloned());
        self.lines.push(format!("Deleted {}.", labels.join(", ")));
        Ok(())
    }

    fn require_pending(&self, index: usize) -> Result<(), GoalError> {
        let status = self.tree.goals[index].status;
        if status == GoalStatus::Pending {
            Ok(())
        } else {
            Err(GoalError::NotPending {
                label: self.tree.label(index),
                status,
            })
        }
    }

    fn add(&mut self, descriptions: &[&str], reason: &str) -> Result<(), GoalError> {
        let parent = match self.tree.current_id.as_deref() {
            None => None,
            Some(id) => {
                let index = self
                    .tree
                    .index_of(id)
                    .ok_or_else(|| GoalError::UnknownId { id: id.to_owned() })?;
                let status = self.tree.goals[index].status;
                if status.is_finished() {
                    return Err(GoalError::ParentFinished {
                        label: self.tree.label(index),
                        status,
                    });
                }
                Some(index)
            }
        };
        let parent_id = parent.map(|index| self.tree.goals[index].id.clone());
        let branch_id = parent.and_then(|index| self.tree.goals[index].branch_id.clone());
        for description in descriptions {
            let id = self.tree.alloc_id();
            let mut goal = Goal::new(id.clone(), parent_id.clone(), *description, self.now);
            goal.reason = reason.to_owned();
            goal.branch_id = branch_id.clone();
            self.tree.goals.push(goal);
            self.outcome.added.push(id);
        }
        let start = self.tree.goals.len() - descriptions.len();
        let labels: Vec<String> = (start..self.tree.goals.len())
            .map(|index| self.tree.label(index))
            .collect();
        let place = match parent {
            Some(index) => format!("under {}", self.tree.label(index)),
            None => "at top level".to_owned(),
        };
        self.lines
            .push(format!("Added {} {place}.", labels.join(", ")));
        Ok(())
    }

    fn focus(&mut self, number: &str) -> Result<(), GoalError> {
        let index = self.tree.resolve(number)?;
        let status = self.tree.goals[index].status;
        if status == GoalStatus::Completed {
            return Err(GoalError::AlreadyCompleted {
                label: self.tree.label(index),
            });
        }
        let ancestors = self.tree.ancestor_indices(index);
        if let Some(&finished) = ancestors
            .iter()
            .find(|&&at| self.tree.goals[at].status.is_finished())
        {
            return Err(GoalError::ParentFinished {
                label: self.tree.label(finished),
                status: self.tree.goals[finished].status,
            });
        }
        for &at in ancestors.iter().rev() {
            if self.tree.goals[at].status == GoalStatus::Pending {
                self.set_status(at, GoalStatus::InProgress, None);
            }
        }
        if status == GoalStatus::Pending {
            self.set_status(index, GoalStatus::InProgress, None);
        }
        let id = self.tree.goals[index].id.clone();
        let previous = self.tree.current_id.replace(id.clone());
        self.lines
            .push(format!("Focused {}.", self.tree.label(index)));
        let paused = previous
            .filter(|prev| *prev != id)
            .and_then(|prev| self.tree.index_of(&prev))
            .filter(|&prev| !ancestors.contains(&prev));
        if let Some(prev) = paused {
            self.lines.push(format!(
                "{} stays in progress; focus it again to resume it.",
                self.tree.label(prev)
            ));
        }
        Ok(())
    }

    /// What the model should do next after `done` or `abandon`.
    fn next_step(&self) -> String {
        let tree = &*self.tree;
        let scope = tree.current_id.as_deref().and_then(|id| tree.index_of(id));
        let siblings: Vec<usize> = match scope {
            Some(index) => tree.child_indices(index),
            None => (0..tree.goals.len())
                .filter(|&index| tree.goals[index].parent_id.is_none())
                .collect(),
        };
        let with_status = |status: GoalStatus| {
            siblings
                .iter()
                .copied()
                .find(|&index| tree.goals[index].status == status)
        };
        if let Some(next) = with_status(GoalStatus::Pending) {
            return format!(
                "Next: {} is pending; focus it to start it.",
                tree.label(next)
            );
        }
        if let Some(paused) = with_status(GoalStatus::InProgress) {
            return format!(
                "Next: {} is still in progress; focus it to resume it.",
                tree.label(paused)
            );
        }
        match scope {
            Some(index) => format!(
                "{} has no unfinished sub-goals left: complete it with done, or add more.",
                tree.label(index)
            ),
            None if tree.goals.iter().all(|goal| goal.status.is_finished()) => {
                "Every goal in the plan is finished.".to_owned()
            }
            None => {
                "No pending goals are left at top level; add new ones if work remains.".to_owned()
            }
        }
    }
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
