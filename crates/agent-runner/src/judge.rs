//! A goal's judge, asked: one model call without tools (its prompt, material and verdict are
//! `agent_goal`'s). A model error is a failed check with the error as its reason; the call's
//! tokens and cost go on the `goal` call's tool message, so the trace's totals count them.

use agent_goal::{CheckResult, Goal, JUDGE_PROMPT, JudgeClaim, judge_material, read_verdict};
use agent_llm::ChatMessage;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::error::StepError;
use crate::model;

/// Asks the judge whether `goal` is met by `claim`: its result, with the call's tokens and cost.
pub(crate) async fn judge(
    agent: &Agent,
    goal: &Goal,
    claim: &JudgeClaim<'_>,
    cancel: &CancellationToken,
) -> Result<(CheckResult, (u64, f64)), StepError> {
    let started = std::time::Instant::now();
    let spec = &agent.spec;
    let material = judge_material(goal, claim);
    let prompt_tokens = agent_llm::estimate_tokens(&material) + 100;
    let messages = vec![
        ChatMessage::system(JUDGE_PROMPT),
        ChatMessage::user(material),
    ];
    let request = model::request(spec, &spec.model, messages, Vec::new());
    let called = model::call(agent.llm.as_ref(), spec, request, None, cancel).await;
    let (passed, output, usage) = match called {
        Ok(response) => {
            let usage = model::usage_of(&response, prompt_tokens);
            let cost = agent.engine.root.prices.cost(&spec.model, &usage);
            let (met, reason) = read_verdict(response.text.as_deref().unwrap_or_default());
            let tokens = usage.prompt_tokens + usage.completion_tokens;
            (met, reason, (tokens, cost))
        }
        Err(StepError::Llm(error)) => (
            false,
            format!("the judge was not reached: {error}"),
            (0, 0.0),
        ),
        Err(other) => return Err(other),
    };
    let took = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok((CheckResult::of_judge(passed, output, took), usage))
}
