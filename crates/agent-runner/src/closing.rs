//! The closing report (JManus' summary step): when a main run whose plan is done gives its
//! final answer, one more model call writes a report from the mission, every goal's summary,
//! the reasons of what was abandoned and the final answer itself. The answer stays the run's
//! response (what a front end prints first); the report follows it, and is the trace's summary.
//!
//! It is made only when the spec asks for it
//! ([`AgentSpec::closing_report`](crate::AgentSpec::closing_report)) and the plan has at least
//! two goals (the planning goal not counted; its material is
//! [`agent_goal::GoalTree::report_material`]'s), and the plan changed since the trace's last
//! report: a plan is reported once, not again at every later turn of the conversation that
//! leaves it as it was. A run that ends `incomplete` gets one too, naming the goals left open
//! under their own heading. The report streams like any answer and is recorded as the last
//! assistant message, marked with
//! [`REPORT_KEY`] in its metadata; its cost counts towards the run. When the call fails or
//! answers with anything but text, the run ends without a report.

use std::sync::Arc;

use agent_execution::AssistantContent;
use agent_execution::message::{Message, NewMessage};
use agent_execution::meta::MessageMeta;
use agent_execution::store::WriteOp;
use agent_goal::GoalTree;
use agent_llm::ChatMessage;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::error::StepError;
use crate::model;
use crate::record::record;
use agent_execution::budget::Budget;

/// The metadata key that marks the closing report's message.
pub(crate) const REPORT_KEY: &str = agent_execution::meta::CLOSING_REPORT;

/// The system prompt of the report call.
pub const REPORT_PROMPT: &str = "You write the closing report of a finished task for the person \
who asked for it. You are given the mission, the plan with each goal's outcome, what was \
abandoned and why, the goals left open if any, and the agent's final answer, which the reader \
sees just above your report. Write a short report in Markdown: what was done (goal by goal, \
keeping the facts, names, numbers and file paths of the summaries), what was abandoned and why, \
which goals were left open (say so plainly: the task is not finished), and anything left for the \
reader to do. Do not repeat the final answer, but never contradict it, and do not invent anything that \
is not in what you are given. Answer with the report only.";

/// Writes the closing report of `trace_id` when one is due (see the module documentation) and
/// returns its text; the recorded message is appended to `messages`. `None` when no report is
/// due or the call did not give one.
pub(crate) async fn report(
    agent: &Agent,
    trace_id: &str,
    answer: &str,
    messages: &mut Vec<Arc<Message>>,
    (spending, cancel): (&Budget, &CancellationToken),
) -> Result<Option<String>, StepError> {
    if !agent.spec.closing_report {
        return Ok(None);
    }
    let store = agent.store();
    let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
    if reported_already(&tree, messages) {
        return Ok(None);
    }
    let Some(material) = tree.report_material(answer) else {
        return Ok(None);
    };
    let spec = &agent.spec;
    let request = model::request(
        spec,
        &spec.model,
        vec![
            ChatMessage::system(REPORT_PROMPT),
            ChatMessage::user(material),
        ],
        Vec::new(),
    );
    let sink = model::DeltaSink::report(store.event_bus(), trace_id);
    let started = std::time::Instant::now();
    let response = match model::call(agent.llm.as_ref(), spec, request, Some(&sink), cancel).await {
        Ok(response) => response,
        Err(StepError::Llm(error)) => {
            tracing::warn!(%error, "the closing report could not be written; the answer stands");
            return Ok(None);
        }
        Err(other) => return Err(other),
    };
    let text = response.text.clone().unwrap_or_default();
    if !response.tool_calls.is_empty() || text.trim().is_empty() {
        tracing::warn!("the closing report call gave no report; the answer stands");
        return Ok(None);
    }
    let usage = model::usage_of(&response, 0);
    let cost = agent.engine.root.prices.cost(&spec.model, &usage);
    let content = AssistantContent {
        text: Some(text.clone()),
        ..AssistantContent::default()
    };
    let mut message = NewMessage::assistant(content)
        .usage(usage.prompt_tokens + usage.completion_tokens, cost)
        .duration_ms(started.elapsed().as_millis() as u64);
    message.metadata.insert(REPORT_KEY.to_owned(), json!(true));
    if let Some(reported) = &response.usage {
        // What the provider counted, as every model turn records it.
        message
            .metadata
            .insert(model::USAGE_KEY.to_owned(), json!(reported));
    }
    messages.extend(record(store, trace_id, vec![WriteOp::AddMessage(message)]).await?);
    spending.add(cost);
    Ok(Some(text))
}

/// Whether the trace's last closing report (among `messages`) covers the plan as it is.
fn reported_already(tree: &GoalTree, messages: &[Arc<Message>]) -> bool {
    let report = messages
        .iter()
        .rev()
        .find(|m| MessageMeta::of(m).closing_report);
    report.is_some_and(|report| tree.unchanged_since(&report.created_at))
}

#[cfg(test)]
mod tests {
    use agent_goal::GoalCommand;

    use super::*;

    #[test]
    fn a_plan_is_reported_once_until_it_changes() {
        let at = |second: u32| format!("2030-01-01T00:00:{second:02}.000000Z");
        let mut tree = GoalTree::new("Add a cache");
        let step = |tree: &mut GoalTree, json: &str, second: u32| {
            let command: GoalCommand = serde_json::from_str(json).unwrap();
            tree.apply_at(&command, &at(second)).unwrap();
        };
        step(&mut tree, r#"{"add": "Read, Write", "focus": "1"}"#, 1);
        step(&mut tree, r#"{"done": "read", "focus": "2"}"#, 2);
        step(&mut tree, r#"{"done": "wrote"}"#, 3);
        let report: Message = serde_json::from_value(json!({
            "message_id": "t-0009", "trace_id": "t", "branch_id": null, "role": "assistant",
            "sequence": 9, "goal_id": null, "tool_call_id": null,
            "content": {"text": "## Report"}, "description": "report", "tokens": null,
            "cost": null, "duration_ms": null, "created_at": at(4),
            "metadata": {"closing_report": true}
        }))
        .unwrap();
        let messages = vec![Arc::new(report)];
        assert!(!reported_already(&tree, &[]), "never reported");
        assert!(reported_already(&tree, &messages), "nothing changed since");
        step(&mut tree, r#"{"add": "Test it", "focus": "3"}"#, 5);
        assert!(!reported_already(&tree, &messages), "the plan grew");
    }
}
