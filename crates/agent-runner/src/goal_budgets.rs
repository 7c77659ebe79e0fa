//! Budgets of goals: a goal may say what it can spend (`budget: {iterations, tokens, seconds}`),
//! its sub-goals' spending included. After each turn of tool calls the current goal and its
//! ancestors are measured against their budgets:
//!
//! - **iterations**: the model calls made while the goal or one of its sub-goals was current
//!   (their assistant messages);
//! - **tokens**: the goal's cumulative tokens (`cumulative_stats.total_tokens`);
//! - **seconds**: the time its model calls and tool calls took (their messages' `duration_ms`).
//!
//! The first time a goal has spent a part of its budget the model is told, once, to finish it
//! or abandon it. If it goes on and spends a quarter more of that part (at least one more model
//! call), the goal is abandoned with the reason `budget spent` (its unfinished sub-goals with
//! it, as an abandon does) and the model is told to go on with the next goal; the run goes on.
//! Both messages are user messages marked [`GOAL_BUDGET`], which is also how a resumed run
//! knows the warning was given. The run's own limits apply as always.

use std::collections::HashSet;
use std::sync::Arc;

use agent_execution::message::{Message, NewMessage, Role};
use agent_execution::meta::{BudgetAction, GOAL_BUDGET, GoalBudgetNote, MessageMeta};
use agent_execution::store::WriteOp;
use agent_goal::{Goal, GoalBudget, GoalTree, PlanEdit};
use serde_json::json;

use crate::agent::Agent;
use crate::error::StepError;
use crate::outcome::PendingGoal;
use crate::record::record;

/// The reason a goal whose budget ran out is abandoned with.
pub const BUDGET_SPENT: &str = "budget spent";

/// What a goal has spent, in the units of its budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Spent {
    iterations: u64,
    tokens: u64,
    seconds: u64,
}

/// Measures the current goal and its ancestors against their budgets after a turn, and warns
/// the model or abandons a goal as the module documentation says.
pub(crate) async fn after_turn(
    agent: &Agent,
    trace_id: &str,
    messages: &mut Vec<Arc<Message>>,
) -> Result<(), StepError> {
    let store = agent.store();
    let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
    let Some(current) = tree.current() else {
        return Ok(());
    };
    let budgeted = std::iter::once(current)
        .chain(tree.ancestors(&current.id))
        .filter(|goal| goal.status.is_open())
        .filter_map(|goal| Some((goal, goal.budget.filter(|b| !b.is_empty())?)));
    for (goal, budget) in budgeted {
        let spent = spent(&tree, goal, messages);
        let Some(part) = over(&budget, &spent, 0) else {
            continue;
        };
        let label = label(&tree, goal);
        match warning_at(messages, &goal.id) {
            None => {
                let text = format!(
                    "{label} has spent its budget ({part}). Finish it now: if its work is done, \
                     mark it done with `goal(done: \"<summary>\")`; if not, abandon it with the \
                     reason. If it goes on, it is abandoned with the reason \"{BUDGET_SPENT}\"."
                );
                note(
                    agent,
                    trace_id,
                    messages,
                    (goal, BudgetAction::Warned),
                    text,
                )
                .await?;
            }
            Some(at) => {
                let calls_since = messages[at..].iter().any(|m| m.role == Role::Assistant);
                let Some(part) = over(&budget, &spent, 1).filter(|_| calls_since) else {
                    continue;
                };
                abandon(agent, trace_id, messages, &tree, goal, part).await?;
            }
        }
        // One goal at a time: the next turn sees what this one changed.
        return Ok(());
    }
    Ok(())
}

/// Abandons `goal` for its spent budget and tells the model what is next.
async fn abandon(
    agent: &Agent,
    trace_id: &str,
    messages: &mut Vec<Arc<Message>>,
    tree: &GoalTree,
    goal: &Goal,
    part: String,
) -> Result<(), StepError> {
    let label = label(tree, goal);
    let mut after = tree.clone();
    let edit = PlanEdit::Abandon {
        goal_id: goal.id.clone(),
        reason: BUDGET_SPENT.to_owned(),
    };
    if after.apply_plan_edit(&edit).is_err() {
        // Finished meanwhile: nothing to abandon.
        return Ok(());
    }
    let next = match PendingGoal::of(&after).first() {
        Some(next) => format!(
            "Go on with the next goal: focus {} \"{}\".",
            next.number, next.description
        ),
        None => "No goal is left open: finish the task with your final answer.".to_owned(),
    };
    let text = format!(
        "{label} was abandoned with the reason \"{BUDGET_SPENT}\": it went on past its budget \
         ({part}). {next}"
    );
    let mut message = message(goal, BudgetAction::Abandoned, text);
    message.goal_id = after.current_id().map(str::to_owned);
    let ops = vec![
        WriteOp::ReplaceGoalTree(after),
        WriteOp::AddMessage(message),
    ];
    messages.extend(record(agent.store(), trace_id, ops).await?);
    Ok(())
}

/// Records a note about `goal`'s budget for the model.
async fn note(
    agent: &Agent,
    trace_id: &str,
    messages: &mut Vec<Arc<Message>>,
    (goal, action): (&Goal, BudgetAction),
    text: String,
) -> Result<(), StepError> {
    let mut message = message(goal, action, text);
    message.goal_id = Some(goal.id.clone());
    messages.extend(record(agent.store(), trace_id, vec![WriteOp::AddMessage(message)]).await?);
    Ok(())
}

/// The user message of a note, marked [`GOAL_BUDGET`].
fn message(goal: &Goal, action: BudgetAction, text: String) -> NewMessage {
    let mut message = NewMessage::user(text);
    let mark = GoalBudgetNote {
        goal_id: goal.id.clone(),
        action,
    };
    message.metadata.insert(GOAL_BUDGET.to_owned(), json!(mark));
    message
}

/// Where the warning about `goal_id`'s budget is among `messages`, if it was given.
fn warning_at(messages: &[Arc<Message>], goal_id: &str) -> Option<usize> {
    messages.iter().rposition(|m| {
        m.role == Role::User
            && MessageMeta::of(m)
                .goal_budget
                .is_some_and(|note| note.goal_id == goal_id && note.action == BudgetAction::Warned)
    })
}

/// What `goal` and its sub-goals spent, by their messages and the tree's statistics.
fn spent(tree: &GoalTree, goal: &Goal, messages: &[Arc<Message>]) -> Spent {
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
    for message in messages {
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

/// How the model's messages name `goal`: `goal 2 "<description>"`.
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
