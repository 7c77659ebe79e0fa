//! The steps of one goal command, applied in order to a working copy of the tree: finishing
//! the current goal (with cascade completion), editing and deleting, adding, and focusing.
//!
//! The rules are documented on [`GoalCommand`](crate::GoalCommand).

use std::collections::HashSet;

use crate::command::{Finish, GoalCommand, GoalOutcome, Parsed};
use crate::error::GoalError;
use crate::gate::{CheckAuthor, GoalBudget, GoalCheck, Verified};
use crate::model::{Goal, GoalStatus, GoalTree};
use crate::plan_text::split_agent;
use crate::time::now_rfc3339;

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

impl GoalTree {
    /// The goal whose check `command` must pass first, with its check: the current goal, when
    /// the command marks it done and it carries one. `Ok(None)` when the command needs no check; the error the
    /// command would get anyway when the rest of it would be refused (so the check need not run).
    pub fn check_before(
        &self,
        command: &GoalCommand,
    ) -> Result<Option<(&Goal, &GoalCheck)>, GoalError> {
        let current = self.current().filter(|_| command.done.is_some());
        let Some((goal, check)) = current.and_then(|goal| Some((goal, goal.check.as_ref()?)))
        else {
            return Ok(None);
        };
        let passed = crate::gate::CheckResult::of_command(Some(0), "", "", 0);
        let probe = GoalCommand {
            verified: Some(Verified {
                goal_id: goal.id.clone(),
                result: passed,
            }),
            ..command.clone()
        };
        self.clone().apply(&probe)?;
        Ok(Some((goal, check)))
    }
}

/// One command being applied to a working copy of the tree.
pub(crate) struct Run<'t> {
    tree: &'t mut GoalTree,
    now: &'t str,
    outcome: GoalOutcome,
    lines: Vec<String>,
}

impl<'t> Run<'t> {
    pub(crate) fn new(tree: &'t mut GoalTree, now: &'t str) -> Self {
        Self {
            tree,
            now,
            outcome: GoalOutcome::default(),
            lines: Vec::new(),
        }
    }

    pub(crate) fn execute(mut self, parsed: &Parsed<'_>) -> Result<GoalOutcome, GoalError> {
        if let Some(label) = parsed.select {
            let merge = self.tree.select_branch(label, self.now)?;
            self.outcome.updated.push(merge);
            let chosen = label.trim().to_ascii_uppercase();
            self.lines
                .push(format!("Chose branch {chosen} of the latest exploration."));
        }
        match parsed.finish {
            Some(Finish::Done(summary)) => self.done(summary, parsed.verified)?,
            Some(Finish::Abandon(reason)) => self.abandon(reason)?,
            None => {}
        }
        if parsed.edit.is_some() || !parsed.delete.is_empty() {
            self.edit_and_delete(parsed.edit, &parsed.delete)?;
        }
        if !parsed.add.is_empty() {
            let gate = (parsed.check.as_ref(), parsed.budget);
            self.add(&parsed.add, parsed.reason, parsed.agent, gate)?;
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

    fn done(&mut self, summary: &str, verified: Option<&Verified>) -> Result<(), GoalError> {
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
        if let Some(check) = &self.tree.goals[index].check {
            let passed = verified.filter(|v| v.goal_id == self.tree.goals[index].id);
            let Some(passed) = passed.filter(|v| v.result.passed) else {
                return Err(GoalError::CheckNotRun {
                    label,
                    check: check.describe(),
                });
            };
            self.tree.goals[index].check_result = Some(passed.result.clone());
        }
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
            if let Some(check) = &self.tree.goals[at].check {
                // Its check has to run: it is completed only by a done of its own.
                let label = self.tree.label(at);
                self.lines.push(format!(
                    "All sub-goals of {label} are finished; it has a check ({}), so mark it done \
                     to run it.",
                    check.describe()
                ));
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
            let checked = self.tree.goals[index].check.as_ref();
            if checked.is_some_and(|check| check.set_by == CheckAuthor::Person) {
                return Err(GoalError::PersonCheck {
                    label: self.tree.label(index),
                });
            }
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

    fn add(
        &mut self,
        descriptions: &[&str],
        reason: &str,
        agent: Option<&str>,
        (check, budget): (Option<&GoalCheck>, Option<GoalBudget>),
    ) -> Result<(), GoalError> {
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
            let (description, own) = split_agent(description);
            let mut goal = Goal::new(id.clone(), parent_id.clone(), description, self.now);
            goal.agent = own.or(agent).map(str::to_owned);
            goal.reason = reason.to_owned();
            goal.branch_id = branch_id.clone();
            goal.check = check.cloned();
            goal.budget = budget.and_then(GoalBudget::stored);
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
