//! Budgets of goals, read from the record: what the current goal and its ancestors spent
//! against the budgets they carry (`budget: {iterations, tokens, seconds}`, sub-goals' spending
//! included), and what the runner is to do about it. A pure detector, like the loop guard's:
//! the runner records what [`check`] returns.
//!
//! - **iterations**: the model calls made while the goal or one of its sub-goals was current
//!   (their assistant messages);
//! - **tokens**: the goal's cumulative tokens (`cumulative_stats.total_tokens`);
//! - **seconds**: the time its model calls and tool calls took (their messages' `duration_ms`).
//!
//! The first time a goal has spent a part of its budget the model is told, once, to finish it
//! or abandon it ([`BudgetVerdict::Warn`]). If it goes on and spends a quarter more of that part
//! (at least one more model call), the goal is abandoned with the reason [`BUDGET_SPENT`] (its
//! unfinished sub-goals with it) and the model is told to go on with the next goal
//! ([`BudgetVerdict::Abandon`]). Both are user messages marked [`meta::GOAL_BUDGET`], which is
//! also how a resumed run knows the warning was given.

use std::borrow::Borrow;
use std::collections::HashSet;

use agent_goal::{Goal, GoalBudget, GoalTree, PendingGoal, PlanEdit};

use crate::message::{Message, NewMessage, Role};
use crate::meta::{self, BudgetAction, MessageMeta};
use crate::store::WriteOp;

/// The reason a goal whose budget ran out is abandoned with.
pub const BUDGET_SPENT: &str = "budget spent";

/// What the runner is to do about a spent budget.
#[derive(Debug, Clone, PartialEq)]
pub enum BudgetVerdict {
    /// Tell the model, once, to finish or abandon the goal.
    Warn {
        /// The goal.
        goal_id: String,
        /// The message for the model.
        text: String,
    },
    /// Abandon the goal: the tree after it, and the message for the model.
    Abandon {
        /// The goal.
        goal_id: String,
        /// The plan with the goal abandoned.
        tree: Box<GoalTree>,
        /// The message for the model.
        text: String,
    },
}

impl BudgetVerdict {
    /// The writes that record it, in one commit: the plan changed (an abandon), then the user
    /// message for the model, marked [`meta::GOAL_BUDGET`] and tied to the goal it is about
    /// (the current goal after an abandon).
    pub fn into_ops(self) -> Vec<WriteOp> {
        let mut ops = Vec::new();
        let (text, goal_id, mark) = match self {
            Self::Warn { goal_id, text } => {
                (text, Some(goal_id.clone()), (goal_id, BudgetAction::Warned))
            }
            Self::Abandon {
                goal_id,
                tree,
                text,
            } => {
                let current = tree.current_id().map(str::to_owned);
                ops.push(WriteOp::ReplaceGoalTree(*tree));
                (text, current, (goal_id, BudgetAction::Abandoned))
            }
        };
        let mark = meta::GoalBudgetNote {
            goal_id: mark.0,
            action: mark.1,
        };
        let mut message = NewMessage::user(text);
        message.goal_id = goal_id;
        message
            .metadata
            .insert(meta::GOAL_BUDGET.to_owned(), serde_json::json!(mark));
        ops.push(WriteOp::AddMessage(message));
        ops
    }
}

/// What a goal has spent, in the units of its budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Spent {
    iterations: u64,
    tokens: u64,
    seconds: u64,
}

/// Measures the current goal of `tree` and its ancestors against their budgets, given the
/// trace's `messages`; the first that calls for something says what. `None` while every budget
/// holds (or none is set).
pub fn check<M: Borrow<Message>>(tree: &GoalTree, messages: &[M]) -> Option<BudgetVerdict> {
    let current = tree.current()?;
    let budgeted = std::iter::once(current)
        .chain(tree.ancestors(&current.id))
        .filter(|goal| goal.status.is_open())
        .filter_map(|goal| Some((goal, goal.budget.filter(|b| !b.is_empty())?)));
    for (goal, budget) in budgeted {
        let spent = spent(tree, goal, messages);
        let Some(part) = over(&budget, &spent, 0) else {
            continue;
        };
        let label = label(tree, goal);
        let Some(at) = warning_at(messages, &goal.id) else {
            let text = format!(
                "{label} has spent its budget ({part}). Finish it now: if its work is done, mark \
                 it done with `goal(done: \"<summary>\")`; if not, abandon it with the reason. If \
                 it goes on, it is abandoned with the reason \"{BUDGET_SPENT}\"."
            );
            let goal_id = goal.id.clone();
            return Some(BudgetVerdict::Warn { goal_id, text });
        };
        let calls_since = messages[at..]
            .iter()
            .any(|m| m.borrow().role == Role::Assistant);
        let Some(part) = over(&budget, &spent, 1).filter(|_| calls_since) else {
            continue;
        };
        let mut after = tree.clone();
        let edit = PlanEdit::Abandon {
            goal_id: goal.id.clone(),
            reason: BUDGET_SPENT.to_owned(),
        };
        after.apply_plan_edit(&edit).ok()?;
        let next = match PendingGoal::of(&after).first() {
            Some(next) => format!(
                "Go on with the next goal: focus {} \"{}\".",
                next.number, next.description
            ),
            None => "No goal is left open: finish the task with your final answer.".to_owned(),
        };
        let text = format!(
            "{label} was abandoned with the reason \"{BUDGET_SPENT}\": it went on past its \
             budget ({part}). {next}"
        );
        let (goal_id, tree) = (goal.id.clone(), Box::new(after));
        return Some(BudgetVerdict::Abandon {
            goal_id,
            tree,
            text,
        });
    }
    None
}

/// Where the warning about `goal_id`'s budget is among `messages`, if it was given.
fn warning_at<M: Borrow<Message>>(messages: &[M], goal_id: &str) -> Option<usize> {
    messages.iter().rposition(|m| {
        let m = m.borrow();
        m.role == Role::User
            && MessageMeta::of(m)
                .goal_budget
                .is_some_and(|note| note.goal_id == goal_id && note.action == BudgetAction::Warned)
    })
}

/// What `goal` and its sub-goals spent, by their messages and the tree's statistics.
fn spent<M: Borrow<Message>>(tree: &GoalTree, goal: &Goal, messages: &[M]) -> Spent {
    let mut ids: HashSet<&str> = HashSet::from([goal.id.as_str()]);
    for other in tree.goals() {
        if tree.ancestors(&other.id).iter().any(|a| a.id == goal.id) {
            ids.insert(other.id.as_str());
        }
    }
    let mut spent = Spent {
        tokens: goal.cumulative_stats.total_tokens,
        ..Spent::default()
    };
    let mut millis = 0u64;
    for message in messages.iter().map(Borrow::borrow) {
        if !message
            .goal_id
            .as_deref()
            .is_some_and(|id| ids.contains(id))
        {
            continue;
        }
        if message.role == Role::Assistant {
            spent.iterations += 1;
        }
        millis = millis.saturating_add(message.duration_ms.unwrap_or(0));
    }
    spent.seconds = millis / 1000;
    spent
}

/// The first part of `budget` that `spent` reaches, past a grace of `graces` quarters of it (at
/// least one unit each), in words; `None` while every part is within.
fn over(budget: &GoalBudget, spent: &Spent, graces: u64) -> Option<String> {
    let limit = |max: u64| max + graces * (max / 4).max(1);
    let parts = [
        (
            budget.iterations.map(u64::from),
            spent.iterations,
            "model calls",
        ),
        (budget.tokens, spent.tokens, "tokens"),
        (budget.seconds, spent.seconds, "seconds"),
    ];
    parts.into_iter().find_map(|(max, used, unit)| {
        let max = max.filter(|max| *max > 0)?;
        (used >= limit(max)).then(|| format!("{used} {unit} of {max}"))
    })
}

/// How the model's messages name `goal`: `Goal 2 "<description>"`.
fn label(tree: &GoalTree, goal: &Goal) -> String {
    match tree.display_number(&goal.id) {
        Some(number) => format!("Goal {number} \"{}\"", goal.description),
        None => format!("Goal \"{}\"", goal.description),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_over_when_a_part_is_reached_then_a_quarter_more() {
        let budget = GoalBudget {
            iterations: Some(8),
            tokens: Some(1000),
            seconds: None,
        };
        let spent = |iterations, tokens| Spent {
            iterations,
            tokens,
            seconds: 99_999,
        };
        assert_eq!(over(&budget, &spent(7, 999), 0), None);
        assert_eq!(
            over(&budget, &spent(8, 10), 0).as_deref(),
            Some("8 model calls of 8")
        );
        assert_eq!(over(&budget, &spent(9, 10), 1), None);
        assert_eq!(
            over(&budget, &spent(10, 10), 1).as_deref(),
            Some("10 model calls of 8")
        );
        assert_eq!(
            over(&budget, &spent(0, 1250), 1).as_deref(),
            Some("1250 tokens of 1000")
        );
        let one = GoalBudget {
            iterations: Some(1),
            ..GoalBudget::default()
        };
        assert_eq!(over(&one, &spent(1, 0), 1), None, "at least one more call");
        assert!(over(&one, &spent(2, 0), 1).is_some());
    }
}
