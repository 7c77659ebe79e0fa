//! Run control on a server with a run queue: runs are queued for workers instead of run here
//! (see [`agent_worker::queue`]), and cancel requests, messages and approval decisions for runs that
//! execute elsewhere are passed on through the queue. The routes of `runs` call these when the
//! server has a queue; the answers are the same as for runs of the server's own.

use std::sync::Arc;

use agent_execution::{NewMessage, NewTrace, Trace, TraceLimits, TraceStatus};
use agent_runner::ApprovalDecision;

use crate::approvals::PendingApproval;
use crate::error::ApiError;
use agent_execution::queue::Decided;

use crate::routes::run_settings::RunSettings;
use crate::state::AppState;
use agent_execution::queue::{QueueError, QueuedRun, RunKind, RunQueue};
use agent_worker::QueuedSettings;

/// A queue failure as an answer: a busy trace is 409 `run_in_progress`, a queue that failed
/// is 503 `runs_unavailable`.
pub(crate) fn queue_error(error: QueueError) -> ApiError {
    match error {
        QueueError::Busy(trace_id) => ApiError::conflict(
            "run_in_progress",
            format!("trace {trace_id} already has a run queued or running"),
        ),
        QueueError::Unavailable(message) => {
            ApiError::RunsUnavailable(format!("the run queue cannot be reached: {message}"))
        }
    }
}

/// Creates the trace of a new queued run (its task as the first message, the model and limits
/// asked for stored with it), lets the workers write it, and queues its first run.
pub(crate) async fn start(
    state: &AppState,
    queue: &Arc<dyn RunQueue>,
    task: &str,
    settings: RunSettings,
) -> Result<String, ApiError> {
    let settings = settings.queued(state.config().approval, state.config().sandbox)?;
    let mut new = NewTrace::agent(task);
    if let Some(model) = &settings.model {
        new = new.with_model(model);
    }
    if settings.max_iterations.is_some() || settings.max_cost.is_some() {
        new = new.with_limits(TraceLimits {
            max_iterations: settings.max_iterations,
            max_cost: settings.max_cost,
        });
    }
    let store = state.store();
    let trace = store.create_trace(new).await?;
    store
        .add_message(&trace.trace_id, NewMessage::user(task))
        .await?;
    store.release_writer(&trace.trace_id).await?;
    enqueue(queue, &trace.trace_id, RunKind::Start, settings).await?;
    Ok(trace.trace_id)
}

/// Queues the resume of a stopped trace.
pub(crate) async fn resume(
    state: &AppState,
    queue: &Arc<dyn RunQueue>,
    trace: &Trace,
    settings: RunSettings,
) -> Result<(), ApiError> {
    let settings = settings.queued(state.config().approval, state.config().sandbox)?;
    check_not_written_elsewhere(state, queue, &trace.trace_id).await?;
    enqueue(queue, &trace.trace_id, RunKind::Resume, settings).await
}

/// Gives a message to the trace's active run (true), or queues a run that continues the ended
/// trace with it (false).
pub(crate) async fn message(
    state: &AppState,
    queue: &Arc<dyn RunQueue>,
    trace: &Trace,
    content: &str,
) -> Result<bool, ApiError> {
    let trace_id = &trace.trace_id;
    if queue.send(trace_id, content).await.map_err(queue_error)? {
        return Ok(true);
    }
    let settings =
        RunSettings::default().queued(state.config().approval, state.config().sandbox)?;
    check_not_written_elsewhere(state, queue, trace_id).await?;
    match enqueue(
        queue,
        trace_id,
        RunKind::Continue(content.to_owned()),
        settings,
    )
    .await
    {
        Ok(()) => Ok(false),
        // A run was queued meanwhile: it takes the message.
        Err(_) if queue.send(trace_id, content).await.map_err(queue_error)? => Ok(true),
        Err(error) => Err(error),
    }
}

/// Refuses to queue a run of a trace that a process outside the queue is writing (e.g. `agent
/// run --store postgres://…`): 409 `trace_locked`, as when this server runs no queue.
async fn check_not_written_elsewhere(
    state: &AppState,
    queue: &Arc<dyn RunQueue>,
    trace_id: &str,
) -> Result<(), ApiError> {
    if queue.active(trace_id).await.map_err(queue_error)? {
        return Ok(()); // Queuing says it is busy.
    }
    if state.store().writer_alive(trace_id).await? == Some(true) {
        return Err(ApiError::conflict(
            "trace_locked",
            format!("trace {trace_id} is being written by another process"),
        ));
    }
    Ok(())
}

async fn enqueue(
    queue: &Arc<dyn RunQueue>,
    trace_id: &str,
    kind: RunKind,
    settings: QueuedSettings,
) -> Result<(), ApiError> {
    let run = QueuedRun {
        trace_id: trace_id.to_owned(),
        kind,
        settings: settings.to_json(),
    };
    queue.enqueue(&run).await.map_err(queue_error)?;
    tracing::info!(%trace_id, "run queued");
    Ok(())
}

/// Asks the trace's run, wherever it executes, to stop; false if it has none.
pub(crate) async fn cancel(queue: &Arc<dyn RunQueue>, trace_id: &str) -> Result<bool, ApiError> {
    queue.cancel(trace_id).await.map_err(queue_error)
}

/// Passes a decision on a risky call to the run that waits on it, wherever it executes.
pub(crate) async fn decide(
    queue: &Arc<dyn RunQueue>,
    trace_id: &str,
    tool_call_id: &str,
    decision: &ApprovalDecision,
) -> Result<(), ApiError> {
    match queue
        .decide(
            trace_id,
            tool_call_id,
            &agent_worker::queue::decision(decision),
        )
        .await
        .map_err(queue_error)?
    {
        Decided::Recorded => Ok(()),
        Decided::AlreadyDecided => Err(ApiError::conflict(
            "already_decided",
            format!("tool call {tool_call_id} of trace {trace_id} was already decided"),
        )),
        Decided::NotWaiting => Err(ApiError::NotFound(format!(
            "no tool call {tool_call_id} of trace {trace_id} waits for approval"
        ))),
    }
}

/// The risky calls queued runs of the trace wait on; none when the queue cannot be read (the
/// trace itself is still shown).
pub(crate) async fn waiting(state: &AppState, trace_id: &str) -> Vec<PendingApproval> {
    let Some(queue) = state.queue() else {
        return Vec::new();
    };
    match queue.waiting(trace_id).await {
        Ok(waiting) => waiting
            .into_iter()
            .map(crate::PendingApproval::from_waiting)
            .collect(),
        Err(error) => {
            tracing::warn!(%trace_id, %error, "reading the waiting calls failed");
            Vec::new()
        }
    }
}

/// Whether a queued resume makes sense for this trace: a completed one is refused as for a
/// run of the server's own.
pub(crate) fn resumable(trace: &Trace) -> Result<(), ApiError> {
    if trace.status == TraceStatus::Completed {
        return Err(ApiError::conflict(
            "already_completed",
            format!(
                "trace {} has already completed; start a new run instead",
                trace.trace_id
            ),
        ));
    }
    Ok(())
}
