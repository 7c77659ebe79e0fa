//! The full compaction's model call: the `compaction` profile summarises the conversation, and
//! the summary is recorded so that the view starts there.
//!
//! The call must not fail for the reasons the compaction is there for: the request is made to
//! fit the summariser's window first (the largest tool outputs and arguments are shortened,
//! oldest first, to [`SUMMARY_FILL`] of the window by the estimate), and it is the conversation
//! as a transcript without tools ([`summary_request`]), so it is smaller than the view by the
//! tool specs, valid on every provider, and leaves the model no tool to call. After a refusal
//! every request is strictly smaller than the one refused: a summary request that cannot be
//! is not sent (sending the same request again cannot help), and the compaction stores nothing.
//! The summary has a `max_tokens` cap ([`summary_cap`]), and an answer cut at it is not taken
//! for a summary. A summariser that answers without text, or cut, is asked once more (shorter);
//! if it fails again no summary is stored (an empty or cut one would hide the history) and a
//! `compaction_failed` event says the run goes on with goal compaction and prune, leaving the
//! oldest exchanges out of a request that would not fit (`agent_context::leave_out`).

use std::sync::Arc;
use std::time::Instant;

use agent_execution::EventKind;
use agent_execution::message::Message;
use agent_execution::store::WriteOp;
use agent_goal::GoalTree;
use agent_llm::{ChatMessage, ContextWindow, LlmError};
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::agents::COMPACTION;
use crate::compaction::{
    COMPACTION_PROMPT, SUMMARY_CUT, SUMMARY_FILL, SUMMARY_WITHOUT_TEXT, estimate_chat,
    fit_for_summary, summary_failed, summary_message, summary_request,
};
use crate::context_incremental::SharedView;
use crate::error::StepError;
use crate::model;
use crate::record::record;
use crate::window::summary_cap;
use agent_execution::budget::Budget;

/// Why no summary was made when its request cannot be made smaller than the `refused` one.
fn not_smaller(size: usize, refused: usize, window: usize) -> String {
    format!(
        "the summary request could not be made smaller than the {refused} tokens the provider \
         refused (it is still {size} tokens, of a window of {window}); no summary was stored"
    )
}

/// Why a full compaction runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// The estimate of the view nears the window.
    Estimate,
    /// The provider refused the view as over its window: the estimate is too low for it, so
    /// the summary request aims at half the view's estimate.
    Refused,
    /// The user asked for it (`/compact`).
    Manual,
}

/// Summarises the conversation into one stored message that hides everything before it. The
/// `compaction` profile gives the request (its prompt), the model and the client; `window` is
/// the agent's (the summariser's, when the profile names another model, is its client's).
/// Returns whether a summary was stored.
///
/// The summary is capped at [`summary_cap`] tokens (or the agent's `max_tokens`, when lower),
/// and one cut at that cap is not a summary (a small model that echoes its template fills any
/// room it is given): it is asked again, shorter, once; a summariser that answers twice without
/// a whole text stores nothing and the run goes on without a summary (see the module docs).
pub(crate) async fn compact(
    agent: &Agent,
    trace_id: &str,
    tree: &GoalTree,
    messages: &mut Vec<Arc<Message>>,
    (view, trigger, window): (&SharedView, Trigger, ContextWindow),
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
    let window = if summariser_model == spec.model {
        window.tokens
    } else {
        crate::window::current(spec, llm.as_ref(), &summariser_model, None).tokens
    };
    let cap = spec
        .max_tokens
        .map_or(summary_cap(window), |max| max.min(summary_cap(window)));
    let mut conversation = view.messages.to_vec();
    let mut target = (window as f64 * SUMMARY_FILL) as usize;
    // The size of the newest request the provider refused: the next one must be smaller.
    let mut refused = None;
    if trigger == Trigger::Refused {
        target = target.min(view.estimated_tokens / 2);
        refused = Some(view.estimated_tokens);
    }
    let (site, manual) = (agent.hooks(trace_id), trigger == Trigger::Manual);
    let hooks = site.compacting(manual, view.estimated_tokens).await;
    let started = Instant::now();
    // Answers that were not a summary (no text, or cut at the cap), and what to say next time.
    let mut failed: Vec<&str> = Vec::new();
    let mut refusals = 0;
    while failed.len() < 2 {
        fit_for_summary(&mut conversation, target, &agent_llm::estimate_tokens);
        let mut chat = summary_request(&conversation, prompt);
        if let Some(&again) = failed.last()
            && let Some(ChatMessage::User(last)) = chat.last_mut()
        {
            last.push_str("\n\n");
            last.push_str(again);
        }
        let size = estimate_chat(&chat, &agent_llm::estimate_tokens);
        if let Some(refused) = refused
            && size >= refused
        {
            // Sending it would be refused again: no summary, as for a summariser that failed.
            let reason = not_smaller(size, refused, window);
            let failed = EventKind::CompactionFailed { reason };
            record(agent.store(), trace_id, vec![WriteOp::AppendEvent(failed)]).await?;
            return Ok(false);
        }
        let mut request = model::request(spec, &summariser_model, chat, Vec::new());
        request.max_tokens = Some(cap);
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
            failed.push(SUMMARY_WITHOUT_TEXT);
            continue;
        }
        if response.truncated() {
            failed.push(SUMMARY_CUT);
            continue;
        }
        let usage = response.usage_or_estimate(size);
        let cost = engine.root.prices.cost(&summariser_model, &usage);
        let mut message = summary_message(&summary, tree.current_id().map(str::to_owned))
            .usage(usage.prompt_tokens + usage.completion_tokens, cost)
            .duration_ms(started.elapsed().as_millis() as u64);
        // What the view weighed before and what the summary weighs, for anyone reading the
        // trace (the OpenTelemetry export shows them on the compaction, every front end
        // announces it with them).
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
        hooks.after(agent_llm::estimate_tokens(&summary)).await;
        return Ok(true);
    }
    let reason = summary_failed(failed.contains(&SUMMARY_CUT).then_some(cap));
    let failed = EventKind::CompactionFailed { reason };
    record(agent.store(), trace_id, vec![WriteOp::AppendEvent(failed)]).await?;
    Ok(false)
}
