//! Messages sent in the moments a run ends: after its loop last looked at the queue and before
//! its inbox closed. [`RunHandle::send`](crate::RunHandle::send) promises that the run answers
//! a message it accepted, so a run that completed goes on with them as its next user turn;
//! after any other end (cancelled, failed, stopped by a limit) they are recorded for the trace's
//! next turn, as they would be after a crash.

use agent_execution::trace::TraceStatus;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::error::RunError;
use crate::resume::prepare_continue;
use crate::step::run_loop;
use crate::turns::keep_late;
use agent_execution::outcome::RunOutcome;

/// Runs the trace's loop, then once more for each batch of messages that arrived as it ended,
/// until none is left. The inbox, opened by the caller, is closed when this returns; the
/// outcome is the last loop's, with the model calls of every loop counted.
pub(crate) async fn run_answering_late(
    agent: &Agent,
    trace_id: &str,
    cancel: CancellationToken,
) -> Result<RunOutcome, RunError> {
    let mut result = run_loop(agent, trace_id, cancel.clone()).await;
    loop {
        let late = agent.engine.inbox.close(trace_id);
        if late.is_empty() {
            return result;
        }
        let completed = matches!(&result, Ok(outcome) if outcome.status == TraceStatus::Completed);
        if !completed || cancel.is_cancelled() || !agent.engine.inbox.open(trace_id) {
            keep_late(agent, trace_id, late).await;
            return result;
        }
        let earlier = result.as_ref().map_or(0, |outcome| outcome.iterations);
        if let Err(error) =
            prepare_continue(agent, trace_id, late.join("\n\n").as_str().into()).await
        {
            tracing::warn!(trace_id, %error, "could not go on with the messages sent at the run's end");
            let mut kept = late;
            kept.extend(agent.engine.inbox.close(trace_id));
            keep_late(agent, trace_id, kept).await;
            return result;
        }
        result = run_loop(agent, trace_id, cancel.clone())
            .await
            .map(|mut outcome| {
                outcome.iterations += earlier;
                outcome
            });
    }
}
