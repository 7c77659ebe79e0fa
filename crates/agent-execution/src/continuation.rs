//! Answers cut off at the model's length limit (`finish_reason: "length"`, Anthropic's
//! `max_tokens`): a cut answer is not a finished task.
//!
//! The loop records the cut answer as it came, asks the model to go on where it stopped (a user
//! message marked [`CONTINUATION_KEY`]), and joins the pieces into the final answer. After
//! [`MAX_CONTINUATIONS`] such requests a still-cut answer ends the run
//! with the runner's stop reason `Truncated`, failed and resumable, with the
//! partial answer kept.

use crate::TraceOutcome;
use crate::message::NewMessage;
use agent_llm::ChatResponse;
use serde_json::Value;

/// The metadata key that marks a user message asking the model to go on with a cut answer.
pub const CONTINUATION_KEY: &str = "continuation";

/// How many times one answer may be continued before the run stops as truncated.
pub const MAX_CONTINUATIONS: u32 = 2;

/// What the model is told after an answer that hit its length limit.
pub const CONTINUE_PROMPT: &str = "Your answer was cut off at the length limit. Continue \
exactly where it stopped, without repeating what you already wrote.";

/// What the model is told when a run resumes after a cancellation cut its answer short (the
/// answer is kept, marked [`INTERRUPTED`](crate::meta::INTERRUPTED)); the message is
/// marked [`CONTINUATION_KEY`] too.
pub const INTERRUPTED_PROMPT: &str = "Your previous answer was interrupted before it was \
finished. Continue where it stopped, without repeating what you already wrote.";

/// True when the model stopped because it hit its length limit.
pub fn is_cut(response: &ChatResponse) -> bool {
    response.truncated()
}

/// The pieces of an answer cut at the length limit, gathered across the calls that continue it.
#[derive(Debug, Default)]
pub struct CutAnswer {
    /// The text so far.
    text: String,
    /// How many continuations were asked for.
    asked: u32,
}

/// What to do after an answer without tool calls.
pub enum AfterAnswer {
    /// Ask the model to go on: record this message and call again.
    Continue(Box<NewMessage>),
    /// The answer is whole: the joined text.
    Done(String),
    /// The answer is still cut and may not be continued again: the partial text and the
    /// outcome of the trace.
    Truncated(String, TraceOutcome),
}

impl CutAnswer {
    /// Takes an answer without tool calls (`text`, cut or not) and says what comes next.
    pub fn take(
        &mut self,
        text: &str,
        cut: bool,
        goal_id: Option<String>,
        max_tokens: Option<u32>,
    ) -> AfterAnswer {
        self.text.push_str(text);
        if !cut {
            self.asked = 0;
            return AfterAnswer::Done(std::mem::take(&mut self.text));
        }
        if self.asked < MAX_CONTINUATIONS {
            self.asked += 1;
            let mut message = NewMessage::user(CONTINUE_PROMPT);
            message.goal_id = goal_id;
            message
                .metadata
                .insert(CONTINUATION_KEY.to_owned(), Value::from(self.asked));
            return AfterAnswer::Continue(Box::new(message));
        }
        let limit = max_tokens.map_or_else(String::new, |max| format!(" (max_tokens {max})"));
        let error = format!(
            "truncated: the model's answer was cut off at its length limit{limit} {} times; \
             the partial answer is kept (raise max_tokens, or resume to go on)",
            self.asked + 1
        );
        let partial = std::mem::take(&mut self.text);
        self.asked = 0;
        AfterAnswer::Truncated(partial, TraceOutcome::failed(error))
    }

    /// Forgets a cut answer the model went on from with tool calls instead.
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

/// The assistant message that keeps what had arrived of an answer a cancellation cut short:
/// its text without tool calls, marked [`INTERRUPTED`](crate::meta::INTERRUPTED), with the
/// (estimated) `usage` it took, so that a later turn sends it back as the assistant's.
pub fn interrupted_answer(
    text: String,
    usage: agent_llm::Usage,
    cost: f64,
    goal_id: Option<String>,
) -> NewMessage {
    let content = crate::AssistantContent::new(Some(text), Vec::new());
    let mut message =
        NewMessage::assistant(content).usage(usage.prompt_tokens + usage.completion_tokens, cost);
    message.goal_id = goal_id;
    for (key, value) in [
        (crate::meta::USAGE, serde_json::json!(usage)),
        (crate::meta::INTERRUPTED, Value::Bool(true)),
    ] {
        message.metadata.insert(key.to_owned(), value);
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_answer_is_continued_twice_then_stops_with_the_pieces_kept() {
        let mut cut = CutAnswer::default();
        assert!(matches!(
            cut.take("a", true, None, None),
            AfterAnswer::Continue(_)
        ));
        assert!(matches!(
            cut.take("b", true, None, None),
            AfterAnswer::Continue(_)
        ));
        let AfterAnswer::Truncated(text, outcome) = cut.take("c", true, None, Some(64)) else {
            panic!("a third cut answer stops the run");
        };
        assert_eq!(text, "abc");
        let error = outcome.error.unwrap();
        assert!(
            error.starts_with("truncated:") && error.contains("max_tokens 64"),
            "{error}"
        );
        assert!(matches!(
            cut.take("x", true, None, None),
            AfterAnswer::Continue(_)
        ));
        let AfterAnswer::Done(text) = cut.take("y", false, None, None) else {
            panic!("an answer that was not cut is done");
        };
        assert_eq!(text, "xy");
    }
}
