//! Holding a run to its plan: when the model answers without a tool call while goals of its
//! plan are still open (pending or in progress), the run does not end `completed`. The runner
//! answers with a message naming them and what to do — carry on, or abandon a goal with a
//! reason — and the loop goes on. After `goal_reminders` such messages in a row (a turn with a
//! tool call starts the count again) the run ends [`StopReason::Incomplete`](crate::StopReason),
//! the trace `incomplete`, with the goals named in its error.
//!
//! The message is a user message marked [`GOALS_PENDING`] (how many in a row), so every reader
//! of the trace can tell it from a person's. A plan being written (a planning goal and the goals
//! under it) is not held: it is meant to stay pending ([`GoalTree::open_goals`]).

use std::sync::Arc;

use agent_execution::message::{Message, NewMessage};
use agent_execution::meta::GOALS_PENDING;
use agent_execution::store::WriteOp;
use agent_execution::trace::TraceOutcome;
use agent_goal::GoalStatus;
use serde_json::json;

use crate::agent::Agent;
use crate::error::StepError;
use crate::outcome::PendingGoal;
use crate::record::record;

/// What a final answer means for the run.
pub(crate) enum Hold {
    /// Every goal is done or abandoned (or there are none): the run may end `completed`.
    Resolved,
    /// The model was sent back to its open goals: the loop goes on.
    SentBack,
    /// The model stopped with goals open, sent back as often as allowed: the run ends.
    Left(TraceOutcome),
}

/// Decides what the answer `text` means for the run, given `reminders`, the messages sent back
/// in a row so far (counted up when one is sent).
pub(crate) async fn after_answer(
    agent: &Agent,
    trace_id: &str,
    text: &str,
    messages: &mut Vec<Arc<Message>>,
    reminders: &mut u32,
) -> Result<Hold, StepError> {
    let store = agent.store();
    let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
    let open = PendingGoal::of(&tree);
    if open.is_empty() {
        return Ok(Hold::Resolved);
    }
    let allowed = agent.spec.limits.goal_reminders;
    if *reminders >= allowed {
        let error = format!("incomplete: goals left open: {}", PendingGoal::list(&open));
        return Ok(Hold::Left(TraceOutcome::incomplete(text.trim(), error)));
    }
    *reminders += 1;
    let mut message = NewMessage::user(reminder_text(&open, *reminders, allowed));
    message.goal_id = tree.current_id().map(str::to_owned);
    message
        .metadata
        .insert(GOALS_PENDING.to_owned(), json!(*reminders));
    messages.extend(record(store, trace_id, vec![WriteOp::AddMessage(message)]).await?);
    Ok(Hold::SentBack)
}

/// The message that sends the model back to `open`, the `count`th of at most `allowed` in a row
/// (0 for one that is not counted, as when a stopped run is resumed).
pub(crate) fn reminder_text(open: &[PendingGoal], count: u32, allowed: u32) -> String {
    let mut text = String::from("Your plan still has open goals:\n");
    for goal in open {
        let status = match goal.status {
            GoalStatus::InProgress => "in progress",
            _ => "pending",
        };
        let dot = if goal.number.contains('.') { "" } else { "." };
        let description = goal.description.split_whitespace().collect::<Vec<_>>();
        text.push_str(&format!(
            "- {}{dot} {} ({status})\n",
            goal.number,
            description.join(" ")
        ));
    }
    text.push_str(
        "Carry on with them: focus a goal, do the work, and finish it with `goal(done: \
         \"<summary>\")`. A goal that cannot or should not be done is abandoned with the reason: \
         focus it, then `goal(abandon: \"<reason>\")`. The task is finished only when every goal \
         is done or abandoned.",
    );
    if count > 0 {
        let left = allowed.saturating_sub(count);
        text.push_str(&format!(
            " (Reminder {count} of {allowed}: {})",
            match left {
                0 => "answering again without a tool call ends the run as incomplete.".to_owned(),
                _ => format!("the run ends as incomplete after {left} more."),
            }
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reminder_names_every_open_goal_and_what_to_do() {
        let goal = |number: &str, description: &str, status| PendingGoal {
            goal_id: number.into(),
            number: number.into(),
            description: description.into(),
            status,
        };
        let open = [
            goal("2", "Write\nthe cache", GoalStatus::InProgress),
            goal("2.1", "Test it", GoalStatus::Pending),
        ];
        let text = reminder_text(&open, 1, 3);
        assert!(text.starts_with(
            "Your plan still has open goals:\n- 2. Write the cache (in progress)\n- 2.1 Test it \
             (pending)\nCarry on"
        ));
        assert!(text.contains("goal(abandon: \"<reason>\")"));
        assert!(text.ends_with("(Reminder 1 of 3: the run ends as incomplete after 2 more.)"));
        assert!(reminder_text(&open, 3, 3).ends_with("ends the run as incomplete.)"));
        assert!(reminder_text(&open, 0, 3).ends_with("done or abandoned."));
        assert_eq!(PendingGoal::list(&open), "2. Write the cache; 2.1 Test it");
    }
}
