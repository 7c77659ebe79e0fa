//! The closing report (JManus' summary step): when a main run whose plan is done gives its
//! final answer, one more model call writes a report from the mission, every goal's summary,
//! the reasons of what was abandoned and the final answer itself. The answer stays the run's
//! response (what a front end prints first); the report follows it, and is the trace's summary.
//!
//! It is made only when the spec asks for it ([`AgentSpec::closing_report`](crate::AgentSpec::closing_report)), the plan has at
//! least [`MIN_GOALS`] goals (the planning goal not counted) and none is still open. The report
//! streams like any answer and is recorded as the last assistant message, marked with
//! [`REPORT_KEY`] in its metadata; its cost counts towards the run. When the call fails or
//! answers with anything but text, the run ends without a report.

use std::sync::Arc;

use agent_execution::AssistantContent;
use agent_execution::message::{Message, NewMessage};
use agent_execution::store::WriteOp;
use agent_goal::{GoalStatus, GoalTree, GoalType, PLANNING_AGENT};
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

/// The fewest goals a plan has for its run to end with a report.
pub(crate) const MIN_GOALS: usize = 2;

/// The system prompt of the report call.
pub const REPORT_PROMPT: &str = "You write the closing report of a finished task for the person \
who asked for it. You are given the mission, the plan with each goal's outcome, what was \
abandoned and why, and the agent's final answer, which the reader sees just above your report. \
Write a short report in Markdown: what was done (goal by goal, keeping the facts, names, numbers \
and file paths of the summaries), what was abandoned and why, and anything left for the reader \
to do. Do not repeat the final answer, but never contradict it, and do not invent anything that \
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
    let Some(material) = material(&tree, answer) else {
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
    let sink = agent_execution::DeltaSink::report(store.event_bus(), trace_id);
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
    let usage = response.usage_or_estimate(0);
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

/// What the report is written from, or `None` when the plan is too small or not done.
fn material(tree: &GoalTree, answer: &str) -> Option<String> {
    let planned = |status: GoalStatus| {
        tree.goals().iter().filter(move |goal| {
            goal.goal_type == GoalType::Normal
                && goal.agent.as_deref() != Some(PLANNING_AGENT)
                && goal.status == status
        })
    };
    let open = planned(GoalStatus::Pending).count() + planned(GoalStatus::InProgress).count();
    let completed = planned(GoalStatus::Completed).count();
    let abandoned: Vec<String> = planned(GoalStatus::Abandoned)
        .map(|goal| {
            let why = goal.summary.as_deref().unwrap_or("no reason recorded");
            format!("- {}: {why}", goal.description)
        })
        .collect();
    if open > 0 || completed + abandoned.len() < MIN_GOALS || completed == 0 {
        return None;
    }
    let mut text = format!("## Mission\n\n{}\n\n## Plan\n\n", tree.mission());
    for (number, goal) in tree.numbered() {
        if goal.agent.as_deref() == Some(PLANNING_AGENT) {
            continue;
        }
        let indent = "  ".repeat(number.matches('.').count());
        let outcome = goal.summary.as_deref().unwrap_or("(no summary)");
        text.push_str(&format!(
            "{indent}{number}. {}: {outcome}\n",
            goal.description
        ));
    }
    if !abandoned.is_empty() {
        text.push_str("\n## Abandoned\n\n");
        text.push_str(&abandoned.join("\n"));
        text.push('\n');
    }
    text.push_str(&format!(
        "\n## The agent's final answer\n\n{}\n",
        answer.trim()
    ));
    Some(text)
}

#[cfg(test)]
mod tests {
    use agent_goal::GoalCommand;

    use super::*;

    fn apply(tree: &mut GoalTree, json: &str) {
        let command: GoalCommand = serde_json::from_str(json).unwrap();
        tree.apply(&command).unwrap();
    }

    #[test]
    fn a_done_plan_of_two_goals_or_more_is_reported_with_what_was_abandoned() {
        let mut tree = GoalTree::new("Add a cache");
        apply(
            &mut tree,
            r#"{"add": "Read, Write, Try Redis", "focus": "1"}"#,
        );
        apply(&mut tree, r#"{"done": "read src/lib.rs", "focus": "2"}"#);
        assert_eq!(material(&tree, "Done."), None, "goals are still open");
        apply(&mut tree, r#"{"done": "wrote src/cache.rs", "focus": "3"}"#);
        apply(&mut tree, r#"{"abandon": "no Redis here"}"#);
        let text = material(&tree, "Done.").unwrap();
        assert!(text.starts_with("## Mission\n\nAdd a cache\n"), "{text}");
        assert!(text.contains("1. Read: read src/lib.rs\n2. Write: wrote src/cache.rs\n"));
        assert!(
            text.contains("## Abandoned\n\n- Try Redis: no Redis here\n"),
            "{text}"
        );
        assert!(text.ends_with("## The agent's final answer\n\nDone.\n"));

        let mut small = GoalTree::new("Say hi");
        apply(&mut small, r#"{"add": "Greet", "focus": "1"}"#);
        apply(&mut small, r#"{"done": "said hi"}"#);
        assert_eq!(
            material(&small, "Hi."),
            None,
            "one goal is not worth a report"
        );
    }
}
