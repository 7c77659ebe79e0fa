//! The goal tool: one call `goal(add?, done?, abandon?, focus?, reason?, edit?, delete?, agent?,
//! select?, check?, judge?, budget?, evidence?)` applied to a tree as a single atomic change.

use serde::{Deserialize, Serialize};

use crate::error::GoalError;
use crate::gate::{CheckAuthor, GoalBudget, GoalCheck, Verified};

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
///   built from its children's (`"<description>: <summary>; …"`), recursively upward. Focus then
///   moves to the nearest ancestor still in progress, or is unset.
/// - **`abandon`** abandons the current goal and its unfinished descendants (completed ones
///   keep their data). It never cascades: a parent whose remaining children are all completed
///   stays in progress, so a replacement can be added under it. Focus moves to the parent.
/// - **`add`** appends comma-separated goals as pending children of the current goal (top
///   level when nothing is focused); adding under a finished goal is refused.
/// - **`edit`** and **`delete`** take display numbers and only touch pending goals; a deleted
///   goal's id is never handed out again. A goal whose check a person set cannot be deleted by
///   the model (it can abandon it, with a reason everyone sees).
/// - **`check`** (a command) or **`judge`** (criteria) and **`budget`** go with `add` and apply
///   to every goal it adds. **`done`** on a goal with a check needs [`GoalCommand::verified`],
///   which only the runner sets once the check passed; without it `done` is refused, and a
///   cascade stops at a goal with a check (it stays in progress, to be marked done itself).
///   **`evidence`** goes with `done`: what a judge reads besides the summary.
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
    /// The agent profile that carries out the added goals (a goal's own `@<profile>` at the
    /// end of its description wins); only valid together with `add`.
    pub agent: Option<String>,
    /// The label (`A`, `B`, ...) of the branch of the latest exploration whose approach is
    /// chosen; recorded on its merge goal.
    pub select: Option<String>,
    /// A shell command that must exit 0 before the added goals can be marked done; only valid
    /// together with `add`, and not with `judge`.
    pub check: Option<String>,
    /// What a judge must find before the added goals can be marked done (empty: their
    /// descriptions); only valid together with `add`, and not with `check`.
    pub judge: Option<String>,
    /// What each added goal may spend; only valid together with `add`.
    pub budget: Option<GoalBudget>,
    /// What shows the current goal is met (test output, files, links): read by its judge;
    /// only valid together with `done`.
    pub evidence: Option<String>,
    /// The runner's word that the check of the goal `done` completes passed just now. Never
    /// read from JSON, so no model can set it.
    #[serde(skip)]
    pub verified: Option<Verified>,
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

/// The first step of a command.
#[derive(Clone, Copy)]
pub(crate) enum Finish<'c> {
    /// Complete the current goal with this summary.
    Done(&'c str),
    /// Abandon the current goal for this reason.
    Abandon(&'c str),
}

/// A command checked for shape, before the tree is looked at.
pub(crate) struct Parsed<'c> {
    /// `done` or `abandon`.
    pub(crate) finish: Option<Finish<'c>>,
    /// The display number and new description of `edit`.
    pub(crate) edit: Option<(&'c str, &'c str)>,
    /// The display numbers of `delete`.
    pub(crate) delete: Vec<&'c str>,
    /// The descriptions of `add`.
    pub(crate) add: Vec<&'c str>,
    /// The reason for the added goals, possibly empty.
    pub(crate) reason: &'c str,
    /// The agent profile of the added goals.
    pub(crate) agent: Option<&'c str>,
    /// The branch label of `select`.
    pub(crate) select: Option<&'c str>,
    /// The display number of `focus`.
    pub(crate) focus: Option<&'c str>,
    /// The check of the added goals.
    pub(crate) check: Option<GoalCheck>,
    /// The budget of the added goals.
    pub(crate) budget: Option<GoalBudget>,
    /// The passing check of the goal `done` completes.
    pub(crate) verified: Option<&'c Verified>,
}

impl<'c> Parsed<'c> {
    pub(crate) fn from_command(cmd: &'c GoalCommand) -> Result<Self, GoalError> {
        let GoalCommand {
            add,
            done,
            abandon,
            focus,
            reason,
            edit,
            delete,
            agent,
            select,
            check,
            judge,
            budget,
            evidence,
            verified,
        } = cmd;
        if [
            add, done, abandon, focus, reason, edit, delete, agent, select, check, judge, evidence,
        ]
        .iter()
        .all(|field| field.is_none())
            && budget.is_none()
        {
            return Err(GoalError::EmptyCommand);
        }
        if reason.is_some() && add.is_none() {
            return Err(GoalError::ReasonWithoutAdd);
        }
        let gated = [
            ("check", check.is_some()),
            ("judge", judge.is_some()),
            ("budget", budget.is_some()),
        ];
        if let (Some((field, _)), None) = (gated.iter().find(|(_, given)| *given), add) {
            return Err(GoalError::WithoutAdd { field });
        }
        if evidence.is_some() && done.is_none() {
            return Err(GoalError::EvidenceWithoutDone);
        }
        let check = match (check, judge) {
            (Some(_), Some(_)) => return Err(GoalError::CheckAndJudge),
            (Some(command), None) => Some(GoalCheck::command(
                non_empty(command, "check")?,
                CheckAuthor::Model,
            )),
            (None, Some(criteria)) => Some(GoalCheck::judge(criteria.trim(), CheckAuthor::Model)),
            (None, None) => None,
        };
        if budget.is_some_and(|budget| budget.is_empty()) {
            return Err(GoalError::EmptyBudget);
        }
        if agent.is_some() && add.is_none() {
            return Err(GoalError::AgentWithoutAdd);
        }
        let agent = match agent.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(name) if crate::plan_text::is_profile_name(name) => Some(name),
            Some(name) => {
                return Err(GoalError::InvalidAgent {
                    input: name.to_owned(),
                });
            }
        };
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
            agent,
            select: select
                .as_deref()
                .map(|label| non_empty(label, "select"))
                .transpose()?,
            focus,
            check,
            budget: *budget,
            verified: verified.as_ref(),
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

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
