//! `/goal` for people, the same in every front end (the chat's line mode, the full-screen UI, an
//! editor over ACP, the HTTP API): each parses its own input with [`parse`] and calls
//! [`set_goal`], [`clear`] or [`status`]; nothing else of the command lives in a front end.
//!
//! - `/goal TEXT [--budget SPEC] [--check CMD | --judge [CRITERIA]]` gives the session a goal:
//!   a new session starts with TEXT as its task (the mission of its plan), and every session
//!   gets a top-level goal TEXT carrying the check (a command that must exit 0, or a judge's
//!   criteria) and the budget — a person's, so its command runs without asking, in the sandbox.
//!   The run then keeps working until every goal is done or abandoned (the runner sends the
//!   model back to open goals) or the person stops it. `--check` and `--judge` take the rest of the line (or a quoted
//!   text), so they come last; `--budget` takes `iterations=N,tokens=N,seconds=N` (some of
//!   them) or a quoted `iterations N, tokens N`.
//! - `/goal` alone says where the plan is: the goals still open, their checks and budgets, the
//!   latest check results.
//! - `/goal clear` (also `stop`, `off`, `reset`, `none`, `cancel`) abandons the goals set with
//!   `/goal` that are still open, with the reason [`CLEARED`].
//!
//! ```
//! use agent_plan::goal_command::{self, CheckKind, GoalRequest};
//!
//! let GoalRequest::Set(goal) = goal_command::parse("Make the tests pass --check python3 -m unittest -q")?
//! else { unreachable!() };
//! assert_eq!(goal.text, "Make the tests pass");
//! assert_eq!(goal.check.unwrap().kind, CheckKind::Command("python3 -m unittest -q".into()));
//! # Ok::<(), goal_command::GoalCommandError>(())
//! ```

use agent_execution::store::{StoreError, TraceStore, WriteOp};
use agent_goal::{GoalError, GoalStatus, GoalTree, PlanEdit};

/// What a goal set with `/goal` carries, for front ends that depend on this crate only.
pub use agent_goal::{CheckAuthor, CheckKind, GoalBudget, GoalCheck};

use agent_runner::{AgentRunner, MAX_GOAL_TEXT_CHARS, PendingGoal, RunError};

/// The reason of a goal set with `/goal`, which `/goal clear` looks for.
pub const SET_WITH_GOAL_COMMAND: &str = "set by the user with /goal";
/// The reason `/goal clear` abandons a goal with.
pub const CLEARED: &str = "cleared by the user with /goal clear";
/// What `/goal` means, in one line, for a front end's help.
pub const HELP: &str = "/goal TEXT [--check CMD]: work until TEXT is done (and CMD exits 0); \
/goal alone: where it is; /goal clear: drop it";

/// What a `/goal` line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoalRequest {
    /// `/goal` alone: where the plan is.
    Show,
    /// `/goal clear`: abandon the goals set with `/goal` that are still open.
    Clear,
    /// `/goal TEXT ...`: a new goal.
    Set(NewGoal),
}

/// A goal a person sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGoal {
    /// What is to be achieved.
    pub text: String,
    /// What gates `done` on it, a person's.
    pub check: Option<GoalCheck>,
    /// What it may spend.
    pub budget: Option<GoalBudget>,
}

impl NewGoal {
    /// A goal `text` with no check and no budget.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            check: None,
            budget: None,
        }
    }
}

/// Why `/goal` did nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GoalCommandError {
    /// The line cannot be read; the message says what would work.
    #[error("{0}")]
    Usage(String),
    /// A run of the trace is going on: the goal waits for its turn to end.
    #[error("trace {trace_id} is running: set the goal once its turn has ended")]
    Running {
        /// The trace.
        trace_id: String,
    },
    /// The plan refused the goal.
    #[error(transparent)]
    Goal(#[from] GoalError),
    /// The trace could not be created, read or written.
    #[error(transparent)]
    Run(#[from] RunError),
}

impl From<StoreError> for GoalCommandError {
    fn from(error: StoreError) -> Self {
        Self::Run(RunError::Store(error))
    }
}

/// Reads the arguments of `/goal` (the line after the command's name).
pub fn parse(args: &str) -> Result<GoalRequest, GoalCommandError> {
    let args = args.trim();
    if args.is_empty() {
        return Ok(GoalRequest::Show);
    }
    if ["clear", "stop", "off", "reset", "none", "cancel"].contains(&args.to_lowercase().as_str()) {
        return Ok(GoalRequest::Clear);
    }
    let usage = |why: &str| GoalCommandError::Usage(format!("/goal: {why}; {HELP}"));
    let (mut text, mut check, mut budget) = (String::new(), None, None);
    let mut rest = args;
    while !rest.is_empty() {
        let (word, after) = split_word(rest);
        match word {
            "--check" | "--judge" => {
                let value = unquote(after.trim()).map_err(usage)?;
                if word == "--check" && value.is_empty() {
                    return Err(usage("--check needs the command to run"));
                }
                check = Some(match word {
                    "--check" => GoalCheck::command(value, CheckAuthor::Person),
                    _ => GoalCheck::judge(value, CheckAuthor::Person),
                });
                rest = "";
            }
            "--budget" => {
                let after = after.trim_start();
                let quote = after.chars().next().filter(|c| *c == '"' || *c == '\'');
                let (spec, next) = match quote {
                    Some(quote) => {
                        let inner = &after[1..];
                        let end = inner
                            .find(quote)
                            .ok_or_else(|| usage("a quote is not closed"))?;
                        (&inner[..end], &inner[end + 1..])
                    }
                    None => split_word(after),
                };
                budget = Some(GoalBudget::parse_text(spec).ok_or_else(|| {
                    usage("--budget takes iterations=N,tokens=N,seconds=N (some of them)")
                })?);
                rest = next.trim_start();
            }
            other if other.starts_with("--") => {
                return Err(usage(&format!("unknown option {other}")));
            }
            _ => {
                if !text.is_empty() {
                    text.push(' ');
                }
                text.push_str(word);
                rest = after.trim_start();
            }
        }
    }
    if text.is_empty() {
        return Err(usage("say what the goal is"));
    }
    if text.chars().count() > MAX_GOAL_TEXT_CHARS {
        return Err(usage(&format!(
            "a goal is at most {MAX_GOAL_TEXT_CHARS} characters"
        )));
    }
    Ok(GoalRequest::Set(NewGoal {
        text,
        check,
        budget,
    }))
}

/// The first word of `text` and what follows it.
fn split_word(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    match text.find(char::is_whitespace) {
        Some(at) => (&text[..at], &text[at..]),
        None => (text, ""),
    }
}

/// `text` without the quotes around it, when it is quoted.
fn unquote(text: &str) -> Result<String, &'static str> {
    let Some(quote) = text.chars().next().filter(|c| *c == '"' || *c == '\'') else {
        return Ok(text.to_owned());
    };
    match text[1..].strip_suffix(quote) {
        Some(inner) => Ok(inner.to_owned()),
        None => Err("a quote is not closed, or text follows it"),
    }
}

/// A goal set on a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoalSet {
    /// The trace: the session's, or a new one.
    pub trace_id: String,
    /// Whether the trace was created for the goal (its task is the goal's text).
    pub created: bool,
    /// The new goal's id.
    pub goal_id: String,
    /// The new goal's display number.
    pub number: String,
    /// The message that starts the work: continue the trace with it (a new one too).
    pub message: String,
}

/// Gives the session `trace_id` (a new trace when `None`) the goal `goal` (see the module
/// documentation). Nothing runs: the caller starts the run by continuing the trace with
/// [`GoalSet::message`], as it sends any message. Refused while the trace runs here.
pub async fn set_goal(
    runner: &AgentRunner,
    trace_id: Option<&str>,
    goal: &NewGoal,
) -> Result<GoalSet, GoalCommandError> {
    let (trace_id, created) = match trace_id {
        Some(id) if runner.is_running(id) => {
            return Err(GoalCommandError::Running {
                trace_id: id.to_owned(),
            });
        }
        Some(id) => (id.to_owned(), false),
        None => (runner.create(&goal.text).await?, true),
    };
    let mut set = add_goal(runner.store().as_ref(), &trace_id, goal).await?;
    set.created = created;
    Ok(set)
}

/// Adds the goal `goal` to the plan of the existing trace `trace_id` as a person's top-level
/// goal, in one commit, for a caller that starts runs its own way (a server that queues them):
/// [`set_goal`] without the trace's creation and without asking a runner whether it runs.
pub async fn add_goal(
    store: &dyn TraceStore,
    trace_id: &str,
    goal: &NewGoal,
) -> Result<GoalSet, GoalCommandError> {
    let mut tree = store
        .get_goal_tree(trace_id)
        .await?
        .ok_or_else(|| StoreError::NotFound {
            trace_id: trace_id.to_owned(),
        })?;
    let add = PlanEdit::Add {
        description: goal.text.clone(),
        parent_id: None,
        index: None,
        agent: None,
        check: None,
        judge: None,
        budget: goal.budget,
    };
    let outcome = tree.apply_plan_edit(&add)?;
    let goal_id = outcome.added.first().cloned().unwrap_or_default();
    if let Some(mut added) = tree.get(&goal_id).cloned() {
        added.reason = SET_WITH_GOAL_COMMAND.to_owned();
        added.check = goal.check.clone().map(|check| GoalCheck {
            set_by: CheckAuthor::Person,
            ..check
        });
        tree.replace(added)?;
    }
    let number = tree.display_number(&goal_id).unwrap_or_default();
    store
        .batch(trace_id, vec![WriteOp::ReplaceGoalTree(tree)])
        .await?;
    let gate = match &goal.check {
        Some(check) => format!(
            " Its check, {}, must pass before it is done.",
            check.describe()
        ),
        None => String::new(),
    };
    let message = format!(
        "New goal {number} (in your plan): {}.{gate} Work on it until it is done, or abandon \
         it with the reason if it cannot be.",
        goal.text.trim_end_matches('.')
    );
    Ok(GoalSet {
        trace_id: trace_id.to_owned(),
        created: false,
        goal_id,
        number,
        message,
    })
}

/// Abandons the goals of `trace_id` set with `/goal` that are still open, with the reason
/// [`CLEARED`]; returns their display numbers and descriptions. Refused while the trace runs
/// here.
pub async fn clear(runner: &AgentRunner, trace_id: &str) -> Result<Vec<String>, GoalCommandError> {
    if runner.is_running(trace_id) {
        return Err(GoalCommandError::Running {
            trace_id: trace_id.to_owned(),
        });
    }
    let store = runner.store();
    let mut tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
    let set: Vec<(String, String)> = tree
        .open_goals()
        .into_iter()
        .filter(|(_, goal)| goal.reason == SET_WITH_GOAL_COMMAND)
        .map(|(number, goal)| (goal.id.clone(), format!("{number}. {}", goal.description)))
        .collect();
    for (goal_id, _) in &set {
        let abandon = PlanEdit::Abandon {
            goal_id: goal_id.clone(),
            reason: CLEARED.to_owned(),
        };
        tree.apply_plan_edit(&abandon)?;
    }
    if !set.is_empty() {
        store
            .batch(trace_id, vec![WriteOp::ReplaceGoalTree(tree)])
            .await?;
    }
    Ok(set.into_iter().map(|(_, label)| label).collect())
}

/// Where the plan is, for `/goal` alone: the goals still open with their checks, budgets and
/// latest check results, or that every goal is done or abandoned.
pub fn status(tree: &GoalTree) -> String {
    let open = PendingGoal::of(tree);
    if tree.goals().is_empty() {
        return "no goal yet: /goal TEXT [--check CMD] sets one".to_owned();
    }
    if open.is_empty() {
        return "every goal is done or abandoned".to_owned();
    }
    let mut lines = vec![format!("{} goal(s) open:", open.len())];
    for pending in &open {
        let Some(goal) = tree.get(&pending.goal_id) else {
            continue;
        };
        let state = match goal.status {
            GoalStatus::InProgress => "in progress",
            _ => "pending",
        };
        let mut line = format!("{}. {} ({state})", pending.number, goal.description);
        if let Some(check) = &goal.check {
            line.push_str(&format!(" · check {}", check.describe()));
        }
        if let Some(result) = &goal.check_result {
            let verdict = if result.passed { "passed" } else { "failed" };
            line.push_str(&format!(" · last check {verdict}"));
        }
        if let Some(budget) = goal.budget.filter(|b| !b.is_empty()) {
            line.push_str(&format!(" · budget {}", budget.describe()));
        }
        lines.push(line);
    }
    lines.join("\n")
}

#[cfg(test)]
#[path = "goal_command_tests.rs"]
mod tests;
