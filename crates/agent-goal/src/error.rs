//! The errors of this crate: [`GoalError`] for every refused goal operation, worded so the model
//! can correct its call, and [`PlanParseError`] for a plan text that cannot be read.
//!
//! A refused operation never changes the tree, so the caller can hand the error's text to the
//! model as the tool result and carry on.

use std::fmt;

use crate::model::GoalStatus;

/// Why a goal command or tree operation was refused; the tree is left unchanged.
///
/// Goals are named in messages by a label such as `2.1 "Design the API"`: the display number the
/// model sees in its plan, then the description.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GoalError {
    /// The command set no field at all.
    EmptyCommand,
    /// A field that needs text was empty, e.g. `done` without a summary or `add` without a goal.
    EmptyText {
        /// The command field that was empty.
        field: &'static str,
    },
    /// `done` and `abandon` were given in the same call.
    DoneAndAbandon,
    /// `reason` was given without `add`.
    ReasonWithoutAdd,
    /// `agent` was given without `add`.
    AgentWithoutAdd,
    /// `check`, `judge` or `budget` was given without `add`.
    WithoutAdd {
        /// The field given without `add`.
        field: &'static str,
    },
    /// `check` and `judge` were given in the same call.
    CheckAndJudge,
    /// `evidence` was given without `done`.
    EvidenceWithoutDone,
    /// A `budget` that sets no limit.
    EmptyBudget,
    /// `done` on a goal with a check that has not passed: only the runner runs checks.
    CheckNotRun {
        /// The label of the goal.
        label: String,
        /// The check, in a few words.
        check: String,
    },
    /// `delete` by the model of a goal whose check a person set.
    PersonCheck {
        /// The label of the goal.
        label: String,
    },
    /// `done` or `abandon` was called while no goal is current.
    NothingFocused {
        /// What the model tried to do to the current goal ("complete" or "abandon").
        action: &'static str,
    },
    /// The current goal is not in progress, which only a damaged tree can cause.
    CurrentNotInProgress {
        /// The label of the current goal.
        label: String,
        /// Its status.
        status: GoalStatus,
    },
    /// A display number is malformed.
    InvalidNumber {
        /// The text that was given.
        input: String,
    },
    /// No visible goal has this display number.
    UnknownNumber {
        /// The display number that was given.
        number: String,
    },
    /// No goal has this internal id.
    UnknownId {
        /// The internal id that was given.
        id: String,
    },
    /// An `edit` value is not of the form `<number>: <new description>`.
    InvalidEdit {
        /// The text that was given.
        input: String,
    },
    /// `done` on a goal whose sub-goals are not all finished.
    OpenChildren {
        /// The label of the goal the model tried to complete.
        label: String,
        /// The labels of its pending or in-progress sub-goals.
        open: Vec<String>,
    },
    /// `focus` on a goal that is already completed.
    AlreadyCompleted {
        /// The label of the completed goal.
        label: String,
    },
    /// `add` (or an exploration, or a focus) under a goal that is completed or abandoned.
    ParentFinished {
        /// The label of the finished goal.
        label: String,
        /// Its status.
        status: GoalStatus,
    },
    /// `edit` or `delete` of a goal that has already started.
    NotPending {
        /// The label of the goal.
        label: String,
        /// Its status.
        status: GoalStatus,
    },
    /// `delete` of a goal that has sub-goals.
    HasSubGoals {
        /// The label of the goal.
        label: String,
    },
    /// `delete` of a goal that already has recorded messages.
    HasMessages {
        /// The label of the goal.
        label: String,
    },
    /// `finish_explore` on a goal that is not an open exploration.
    NotOpenExploration {
        /// The internal id that was given.
        id: String,
        /// Why it cannot be merged, as the end of a sentence ("is not an explore_start goal").
        reason: &'static str,
    },
    /// `insert` of a goal whose id is already taken.
    DuplicateId {
        /// The id of the goal.
        id: String,
    },
    /// `insert` of a goal whose parent is not in the tree.
    UnknownParent {
        /// The id of the goal.
        id: String,
        /// The parent id it names.
        parent: String,
    },
    /// `replace` of a goal with a version under another parent.
    ParentChanged {
        /// The id of the goal.
        id: String,
    },
    /// Abandoning a goal that is already completed or abandoned.
    NotOpen {
        /// The label of the goal.
        label: String,
        /// Its status.
        status: GoalStatus,
    },
    /// Moving a goal under itself or one of its own sub-goals.
    MoveUnderItself {
        /// The label of the goal.
        label: String,
    },
    /// `select` when no exploration has been merged.
    NoExploration,
    /// `select` with a label that names none of the latest exploration's branches.
    UnknownBranch {
        /// The label that was given.
        label: String,
        /// The labels of the branches there are.
        labels: Vec<String>,
    },
    /// An agent profile name with characters no profile name has.
    InvalidAgent {
        /// The name that was given.
        input: String,
    },
}

impl fmt::Display for GoalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyCommand => f.write_str(
                "the goal command is empty: give at least one of add, done, abandon, focus, \
                 edit or delete",
            ),
            Self::EmptyText { field: "add" } => f.write_str(
                "add needs at least one goal description, e.g. \"Read the code, Write the fix\"",
            ),
            Self::EmptyText { field: "done" } => {
                f.write_str("done needs a summary of what the goal achieved")
            }
            Self::EmptyText { field: "abandon" } => {
                f.write_str("abandon needs the reason for giving the goal up")
            }
            Self::EmptyText { field } => write!(f, "{field} needs a non-empty value"),
            Self::DoneAndAbandon => {
                f.write_str("give either done or abandon in one call, not both")
            }
            Self::ReasonWithoutAdd => {
                f.write_str("reason explains newly added goals: give it together with add")
            }
            Self::WithoutAdd { field } => write!(
                f,
                "{field} applies to newly added goals: give it together with add"
            ),
            Self::CheckAndJudge => f.write_str(
                "give either check (a command) or judge (criteria) for the added goals, not both",
            ),
            Self::EvidenceWithoutDone => {
                f.write_str("evidence supports done: give it together with done")
            }
            Self::EmptyBudget => f.write_str(
                "budget sets nothing: give iterations, tokens or seconds as a positive number",
            ),
            Self::CheckNotRun { label, check } => write!(
                f,
                "{label} has a check ({check}) that must pass before it is done, and only the \
                 runner runs it; call done through the goal tool of a run"
            ),
            Self::PersonCheck { label } => write!(
                f,
                "{label} carries a check a person set, so it cannot be deleted; abandon it with \
                 a reason instead"
            ),
            Self::AgentWithoutAdd => f.write_str(
                "agent names who carries out newly added goals: give it together with add",
            ),
            Self::NothingFocused { action } => write!(
                f,
                "nothing is focused, so there is no current goal to {action}; \
                 use focus with a goal number first"
            ),
            Self::CurrentNotInProgress { label, status } => write!(
                f,
                "the current goal {label} is {status}, not in progress; focus an unfinished \
                 goal first"
            ),
            Self::InvalidNumber { input } => write!(
                f,
                "\"{input}\" is not a goal number; use a number from the plan such as 2 or 2.1"
            ),
            Self::UnknownNumber { number } => write!(
                f,
                "there is no goal {number} in the plan (abandoned goals have no number); \
                 use a number shown in the current plan"
            ),
            Self::UnknownId { id } => write!(f, "there is no goal with id {id}"),
            Self::NotOpen { label, status } => {
                write!(
                    f,
                    "{label} is already {status}; only an unfinished goal can be abandoned"
                )
            }
            Self::NoExploration => {
                f.write_str("select names a branch of an exploration, but none has been merged")
            }
            Self::UnknownBranch { label, labels } => write!(
                f,
                "the latest exploration has no branch {label}; its branches are {}",
                labels.join(", ")
            ),
            Self::MoveUnderItself { label } => {
                write!(
                    f,
                    "cannot move {label} under itself or one of its sub-goals"
                )
            }
            Self::InvalidAgent { input } => write!(
                f,
                "\"{input}\" is not an agent profile name: use letters, digits, -, _ and ."
            ),
            Self::InvalidEdit { input } => write!(
                f,
                "edit must look like \"<number>: <new description>\", got \"{input}\""
            ),
            Self::OpenChildren { label, open } => write!(
                f,
                "cannot complete {label}: its sub-goals {} are not finished; complete or \
                 abandon them first",
                open.join(", ")
            ),
            Self::AlreadyCompleted { label } => write!(
                f,
                "{label} is already completed and cannot be focused again; add a new goal for \
                 further work"
            ),
            Self::ParentFinished { label, status } => write!(
                f,
                "{label} is {status}, so no goal can be added or started under it; focus an \
                 unfinished goal first"
            ),
            Self::NotPending { label, status } => write!(
                f,
                "{label} is {status}: only pending goals can be edited or deleted, a goal that \
                 has started can only be abandoned"
            ),
            Self::HasSubGoals { label } => {
                write!(f, "{label} has sub-goals; delete or abandon them first")
            }
            Self::HasMessages { label } => write!(
                f,
                "{label} already has recorded messages; abandon it instead of deleting it"
            ),
            Self::NotOpenExploration { id, reason } => write!(f, "goal {id} {reason}"),
            Self::DuplicateId { id } => write!(f, "goal {id} exists already"),
            Self::UnknownParent { id, parent } => {
                write!(f, "goal {id} has an unknown parent {parent}")
            }
            Self::ParentChanged { id } => {
                write!(f, "goal {id}: parent_id cannot be changed")
            }
        }
    }
}

impl std::error::Error for GoalError {}

/// Why a plan text (see [`parse_plan`](crate::parse_plan)) cannot be read; the text names the
/// line, counted from 1.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanParseError {
    /// A line is indented with a tab.
    TabIndent {
        /// The line.
        line: usize,
    },
    /// A line is indented by a number of spaces that is not a multiple of two.
    OddIndent {
        /// The line.
        line: usize,
        /// How many spaces it is indented by.
        spaces: usize,
    },
    /// A line is indented more than one level below the goal above it.
    TooDeep {
        /// The line.
        line: usize,
    },
    /// The text has no goal line, only blank lines and comments.
    NoGoals,
    /// A `[budget: …]` group that is not `iterations N, tokens N, seconds N` (some of them).
    InvalidBudget {
        /// The line.
        line: usize,
    },
    /// A `[check:]` group without a command.
    EmptyCheck {
        /// The line.
        line: usize,
    },
    /// A line with two checks (`[check: …]` or `[judge: …]`) or two budgets.
    TwoOf {
        /// The line.
        line: usize,
        /// What it has two of: `checks` or `budgets`.
        what: &'static str,
    },
}

impl fmt::Display for PlanParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TabIndent { line } => write!(f, "line {line}: indent with spaces, not tabs"),
            Self::OddIndent { line, spaces } => write!(
                f,
                "line {line}: indent by two spaces per level (found {spaces} spaces)"
            ),
            Self::TooDeep { line } => write!(
                f,
                "line {line}: indented more than one level below the goal above it"
            ),
            Self::NoGoals => f.write_str("the plan has no goals"),
            Self::InvalidBudget { line } => write!(
                f,
                "line {line}: a budget reads like [budget: iterations 10, tokens 50000, seconds \
                 600], with positive numbers"
            ),
            Self::EmptyCheck { line } => {
                write!(f, "line {line}: [check: ] needs the command to run")
            }
            Self::TwoOf { line, what } => {
                write!(f, "line {line}: a goal has at most one of its {what}")
            }
        }
    }
}

impl std::error::Error for PlanParseError {}
