//! Holding a run to its plan, read from the record: what a final answer given while goals of
//! the plan are still open (pending or in progress) calls for. A pure decision the runner acts
//! on: the message that sends the model back to its open goals (naming them, saying what to
//! do, marked [`meta::GOALS_PENDING`] with the count in a row), or, once the model was sent back
//! as often as allowed, the trace's `incomplete` end with the goals named in its error. A plan
//! being written (a planning goal and the goals under it) is not held
//! ([`agent_goal::GoalTree::open_goals`]).

use agent_goal::{GoalTree, PendingGoal, reminder_text};
use serde_json::json;

use crate::message::NewMessage;
use crate::meta;
use crate::trace::TraceOutcome;

/// What a final answer means for a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Hold {
    /// Every goal is done or abandoned (or there are none): the run may end `completed`.
    Resolved,
    /// Record this message and go on: the model is sent back to its open goals.
    SendBack(Box<NewMessage>),
    /// The model stopped with goals open, sent back as often as allowed: the run ends so.
    Left(TraceOutcome),
}

/// What the final answer `answer` means for a run whose plan is `tree`, when the model was
/// sent back `reminders` times in a row already and may be `allowed` times.
pub fn after_answer(tree: &GoalTree, answer: &str, reminders: u32, allowed: u32) -> Hold {
    let open = PendingGoal::of(tree);
    if open.is_empty() {
        return Hold::Resolved;
    }
    if reminders >= allowed {
        let error = format!("incomplete: goals left open: {}", PendingGoal::list(&open));
        return Hold::Left(TraceOutcome::incomplete(answer.trim(), error));
    }
    Hold::SendBack(Box::new(reminder(tree, &open, reminders + 1, allowed)))
}

/// The message that sends a model back to `open`, the `count`th in a row (0: not counted, as
/// when a stopped run is resumed), tied to the current goal.
pub fn reminder(tree: &GoalTree, open: &[PendingGoal], count: u32, allowed: u32) -> NewMessage {
    let mut message = NewMessage::user(reminder_text(open, count, allowed));
    message.goal_id = tree.current_id().map(str::to_owned);
    message
        .metadata
        .insert(meta::GOALS_PENDING.to_owned(), json!(count));
    message
}

#[cfg(test)]
mod tests {
    use agent_goal::GoalCommand;

    use super::*;
    use crate::trace::TraceStatus;

    #[test]
    fn an_answer_with_goals_open_sends_the_model_back_then_ends_the_run() {
        let mut tree = GoalTree::new("m");
        assert_eq!(after_answer(&tree, "Done.", 0, 3), Hold::Resolved);
        let add = GoalCommand {
            add: Some("A, B".into()),
            focus: Some("1".into()),
            ..GoalCommand::default()
        };
        tree.apply(&add).unwrap();
        let Hold::SendBack(message) = after_answer(&tree, "Done.", 0, 3) else {
            panic!("not sent back");
        };
        assert_eq!(message.goal_id.as_deref(), Some("1"));
        assert_eq!(message.metadata[meta::GOALS_PENDING], 1);
        let Hold::Left(outcome) = after_answer(&tree, " Done. ", 3, 3) else {
            panic!("not ended");
        };
        assert_eq!(outcome.status, TraceStatus::Incomplete);
        assert_eq!(outcome.summary.as_deref(), Some("Done."));
        assert_eq!(
            outcome.error.as_deref(),
            Some("incomplete: goals left open: 1. A; 2. B")
        );
    }
}
