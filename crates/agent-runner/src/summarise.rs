//! The full compaction's model call: the `compaction` profile summarises the conversation, and
//! the summary is recorded so that the view starts there.
//!
//! The call must not fail for the reasons the compaction is there for: the request is made to
//! fit the summariser's window first (the largest tool outputs and arguments are shortened,
//! oldest first, to [`SUMMARY_FILL`] of the window by the estimate), and it is the conversation
//! as a transcript without tools ([`summary_request`]), so it is smaller than the view by the
//! tool specs, valid on every provider, and leaves the model no tool to call. After a refusal
//! every request is strictly smaller than the one refused, or the run stops with the window's
//! error: sending the same request again cannot help.
//! A summariser that answers without text is asked once more; if it fails again no summary is
//! stored (an empty one would hide the history) and a `compaction_failed` event says the run
//! goes on with goal compaction and prune only.

use std::sync::Arc;
use std::time::Instant;

use agent_execution::EventKind;
use agent_execution::message::Message;
use agent_execution::store::WriteOp;
use agent_goal::GoalTree;
use agent_llm::{ChatMessage, LlmError};
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::agents::COMPACTION;
use crate::compaction::{
    COMPACTION_PROMPT, SUMMARY_FILL, estimate_chat, fit_for_summary, summary_message,
    summary_request,
};
use crate::context_incremental::SharedView;
use crate::error::StepError;
use crate::model;
use crate::record::record;
use agent_execution::budget::Budget;

/// What the summariser is told when its first answer had no text.
const TEXT_ONLY: &str = "Your answer had no text. Answer with the summary itself, as plain \
text, without calling any tool.";

/// The error of a summary request that cannot be made smaller than the `refused` one.
fn window_too_small(size: usize, refused: usize, window: usize) -> StepError {
    StepError::WindowTooSmall(format!(
        "context_window: this window is too small: the summary request could not be made \
         smaller than the {refused} tokens the provider refused (it is still {size} tokens, \
         of a window of {window}); raise the context window (--context-window, or \
         context_window in agent.toml)"
    ))
}

/// Why a full compaction runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// The estimate of the view nears the window.
    Estimate,
    /// The provider refused the view as over its window: the estimate is too low for it, so
    /// the summary request aims at half the view's estimate.
    Refused,
}

/// Summarises the conversation into one stored message that hides everything before it. The
/// `compaction` profile gives the request (its prompt), the model and the client. Returns
/// whether a summary was stored.
pub(crate) async fn compact(
    agent: &Agent,
    trace_id: &str,
    tree: &GoalTree,
    messages: &mut Vec<Arc<Message>>,
    (view, trigger): (&SharedView, Trigger),
    budget: &Budget,
    cancel: &CancellationToken,
) -> Result<bool, StepError> {
    let engine = &agent.engine;
    let spec = &agent.spec;
    let profile = engine.config(COMPACTION);
    let prompt = profile
        .and_then(|p| p.system_prompt.as_deref())
        .unwrap_or(COMPACTION_PROMPT);
    let summariser_model = profile
        .and_then(|p| p.model.clone())
        .unwrap_or_else(|| spec.model.clone());
    let llm = match engine.root.clients.get(COMPACTION) {
        Some(llm) => llm.clone(),
        None => agent.llm.clone(),
    };
    let window = spec
        .context_window
        .unwrap_or_else(|| llm.model_info(&summariser_model).context_window);
    let mut conversation = view.messages.to_vec();
    let mut target = (window as f64 * SUMMARY_FILL) as usize;
    // The size of the newest request the provider refused: the next one must be smaller.
    let mut refused = None;
    if trigger == Trigger::Refused {
        target = target.min(view.estimated_tokens / 2);
        refused = Some(view.estimated_tokens);
    }
    let started = Instant::now();
    let mut empty_answers = 0;
    let mut refusals = 0;
    while empty_answers < 2 {
        fit_for_summary(&mut conversation, target, &agent_llm::estimate_tokens);
        let mut chat = summary_request(&conversation, prompt);
        if empty_answers > 0
            && let Some(ChatMessage::User(last)) = chat.last_mut()
        {
            last.push_str("\n\n");
            last.push_str(TEXT_ONLY);
        }
        let size = estimate_chat(&chat, &agent_llm::estimate_tokens);
        if let Some(refused) = refused
            && size >= refused
        {
            return Err(window_too_small(size, refused, window));
        }
        let request = model::request(spec, &summariser_model, chat, Vec::new());
        let response = match model::call(llm.as_ref(), spec, request, None, cancel).await {
            Err(StepError::Llm(LlmError::ContextWindowExceeded { .. })) if refusals < 3 => {
                // Still too long for this provider: cut harder.
                refusals += 1;
                refused = Some(size);
                target = (target / 4).min(size / 2);
                continue;
            }
            other => other?,
        };
        let summary = response.text.as_deref().unwrap_or("").trim().to_owned();
        if summary.is_empty() {
            empty_answers += 1;
            continue;
        }
        let usage = model::usage_of(&response, size);
        let cost = engine.root.prices.cost(&summariser_model, &usage);
        let mut message = summary_message(&summary, tree.current_id().map(str::to_owned))
            .usage(usage.prompt_tokens + usage.completion_tokens, cost)
            .duration_ms(started.elapsed().as_millis() as u64);
        // What the view weighed before and what the summary weighs, for anyone reading the
        // trace (the OpenTelemetry export shows them on the compaction).
        message.metadata.insert(
            crate::compaction::TOKENS_BEFORE_KEY.to_owned(),
            view.estimated_tokens.into(),
        );
        message.metadata.insert(
            crate::compaction::TOKENS_AFTER_KEY.to_owned(),
            agent_llm::estimate_tokens(&summary).into(),
        );
        let recorded = record(agent.store(), trace_id, vec![WriteOp::AddMessage(message)]).await?;
        messages.extend(recorded);
        budget.add(cost);
        return Ok(true);
    }
    let failed = EventKind::CompactionFailed {
        reason: "the summariser answered twice without text; no summary was stored, and the \
                 context keeps goal compaction and prune only"
            .into(),
    };
    record(agent.store(), trace_id, vec![WriteOp::AppendEvent(failed)]).await?;
    Ok(false)
}
