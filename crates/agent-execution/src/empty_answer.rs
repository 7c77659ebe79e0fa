//! An empty final answer (no text, no tool call) is not a finished task. Small local models
//! give one when their template hides the tools, when they stop at once, or when they put
//! everything in reasoning; a run that ended `completed` on one would be a silent success.
//!
//! The first empty answer of a run is told (a `notice`) and the model is asked once to go on
//! (a user message marked [`EMPTY_ANSWER`]); a second ends the run with the runner's stop
//! reason `EmptyAnswer`, failed and resumable.

use crate::TraceOutcome;
use crate::message::NewMessage;
use crate::meta::EMPTY_ANSWER;
use serde_json::Value;

/// What the model is told after an empty answer.
pub const EMPTY_ANSWER_PROMPT: &str = "Your last answer was empty: no text and no tool call. \
Go on with the task: call a tool, or give your final answer as text.";

/// What the run says when the model answers empty the first time.
pub const FIRST_NOTICE: &str = "the model's answer was empty (no text, no tool call): \
asking it once more";

/// What to do after an empty answer.
#[derive(Debug)]
pub enum AfterEmpty {
    /// Record this message and call again.
    Ask(Box<NewMessage>),
    /// End the run: the model answered empty again.
    Stop(TraceOutcome),
}

/// Whether an answer without tool calls is empty: no text but whitespace.
pub fn is_empty(text: Option<&str>) -> bool {
    text.is_none_or(|text| text.trim().is_empty())
}

/// What comes after an empty answer; `asked` says whether the run already asked once.
pub fn after_empty(asked: &mut bool, goal_id: Option<String>) -> AfterEmpty {
    if !*asked {
        *asked = true;
        let mut message = NewMessage::user(EMPTY_ANSWER_PROMPT);
        message.goal_id = goal_id;
        message
            .metadata
            .insert(EMPTY_ANSWER.to_owned(), Value::Bool(true));
        return AfterEmpty::Ask(Box::new(message));
    }
    AfterEmpty::Stop(TraceOutcome::failed(
        "empty_answer: the model answered twice with no text and no tool call, so the task is \
         not done; a small local model may need a chat template that shows it the tools (see \
         the notices), a larger max_tokens, or another model"
            .to_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_asked_once_then_the_run_stops() {
        assert!(is_empty(None));
        assert!(is_empty(Some(" \n")));
        assert!(!is_empty(Some("done")));
        let mut asked = false;
        let AfterEmpty::Ask(message) = after_empty(&mut asked, Some("1".into())) else {
            panic!("the first empty answer asks again");
        };
        assert_eq!(message.metadata[EMPTY_ANSWER], Value::Bool(true));
        assert_eq!(message.goal_id.as_deref(), Some("1"));
        let AfterEmpty::Stop(outcome) = after_empty(&mut asked, None) else {
            panic!("the second ends the run");
        };
        assert!(outcome.error.unwrap().starts_with("empty_answer:"));
    }
}
