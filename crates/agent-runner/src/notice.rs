//! Notices: what a run tells a person, as `notice` events every front end shows and the trace
//! keeps; first the model's window, learned from its server, assumed, or learned from a refusal.

use agent_context::ContextBudget;
use agent_context::context_incremental::SharedView;
use agent_context::leave_out::leave_out_for;
use agent_context::window::{refused, window_told};
use std::sync::Arc;

use agent_execution::empty_answer::{self, AfterEmpty};
use agent_execution::message::Message;
use agent_execution::store::WriteOp;
use agent_execution::trace::TraceOutcome;
use agent_execution::{EventKind, NoticeKind};
use agent_llm::{ContextWindow, LlmError};

use crate::agent::Agent;
use crate::error::StepError;
use crate::record::record;

/// Records a notice on the trace (`tokens`: the figure it is about, if any).
pub(crate) async fn notice(
    agent: &Agent,
    trace_id: &str,
    kind: NoticeKind,
    message: String,
    tokens: Option<usize>,
) -> Result<(), StepError> {
    let tokens = tokens.map(|tokens| tokens as u64);
    let event = EventKind::Notice {
        kind,
        message,
        tokens,
    };
    record(agent.store(), trace_id, vec![WriteOp::AppendEvent(event)]).await?;
    Ok(())
}

/// Asks the agent's client for its model's window when none is configured (the client asks
/// its server once and remembers), and tells what it learned, or that it assumes a window.
pub(crate) async fn learn_window(agent: &Agent, trace_id: &str) -> Result<(), StepError> {
    let model = &agent.spec.model;
    if agent.spec.context_window.is_some() {
        return Ok(());
    }
    let learned = agent.llm.learn_window(model).await;
    match learned.and_then(|window| Some((window, window_told(model, window)?))) {
        Some((window, told)) => {
            notice(
                agent,
                trace_id,
                NoticeKind::ContextWindow,
                told,
                Some(window.tokens),
            )
            .await
        }
        None => Ok(()),
    }
}

/// After a refusal of a request of about `request` tokens in the window `was`: a refusal that
/// states a smaller window makes it the run's (`kept`), and the run says so.
pub(crate) async fn after_refusal(
    agent: &Agent,
    trace_id: &str,
    error: &LlmError,
    (was, request): (ContextWindow, usize),
    kept: &mut Option<ContextWindow>,
) -> Result<(), StepError> {
    let LlmError::ContextWindowExceeded { message } = error else {
        return Ok(());
    };
    let Some((window, told)) = refused(message, was, request) else {
        return Ok(());
    };
    *kept = Some(window);
    notice(
        agent,
        trace_id,
        NoticeKind::ContextWindow,
        told,
        Some(window.tokens),
    )
    .await
}

/// With no summary to be had, `view` with its oldest exchanges left out so that it fits the
/// window with room for the answer (said once a run); `None` when nothing can go.
pub(crate) async fn leave_out(
    (agent, trace_id): (&Agent, &str),
    view: &SharedView,
    window: (&ContextBudget, ContextWindow),
    told: &mut bool,
) -> Result<Option<SharedView>, StepError> {
    let Some((view, told)) = leave_out_for(view, window, told, &agent_llm::estimate_tokens) else {
        return Ok(None);
    };
    if let Some(told) = told {
        let tokens = Some(view.estimated_tokens);
        notice(agent, trace_id, NoticeKind::ContextLeftOut, told, tokens).await?;
    }
    Ok(Some(view))
}

/// After an empty answer: asks the model once more (saying so), or the end of the run.
pub(crate) async fn after_empty(
    agent: &Agent,
    trace_id: &str,
    messages: &mut Vec<Arc<Message>>,
    asked: &mut bool,
    goal_id: Option<String>,
) -> Result<Option<TraceOutcome>, StepError> {
    match empty_answer::after_empty(asked, goal_id) {
        AfterEmpty::Ask(ask) => {
            let told = empty_answer::FIRST_NOTICE.to_owned();
            notice(agent, trace_id, NoticeKind::EmptyAnswer, told, None).await?;
            let ops = vec![WriteOp::AddMessage(*ask)];
            messages.extend(record(agent.store(), trace_id, ops).await?);
            Ok(None)
        }
        AfterEmpty::Stop(outcome) => Ok(Some(outcome)),
    }
}
