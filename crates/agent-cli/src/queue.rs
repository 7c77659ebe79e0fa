//! The run queue of a PostgreSQL store (`agent_store_pg::PgRunQueue`) as the API's
//! [`RunQueue`]: the settings a run carries become JSON, decisions become the queue's words.

use std::sync::Arc;
use std::time::Duration;

use agent_api::queue::{ClaimedRun, DecisionOutcome, LeaseState, QueueError, QueuedRun, RunKind};
use agent_api::{PendingApproval, RunQueue};
use agent_runner::ApprovalDecision;
use agent_store_pg::{Decided, NewRun, PgRunQueue, WaitingCall};
use async_trait::async_trait;
use futures::stream::BoxStream;

/// The API's queue over a PostgreSQL database.
pub(crate) struct PgQueue(pub(crate) Arc<PgRunQueue>);

fn failed(error: agent_store_pg::QueueError) -> QueueError {
    match error {
        agent_store_pg::QueueError::Busy(trace_id) => QueueError::Busy(trace_id),
        agent_store_pg::QueueError::Database(message) => QueueError::Unavailable(message),
    }
}

/// A queued run as the database keeps it.
fn new_run(run: &QueuedRun) -> NewRun {
    let (kind, input) = match &run.kind {
        RunKind::Start => ("start", None),
        RunKind::Resume => ("resume", None),
        RunKind::Continue(message) => ("continue", Some(message.clone())),
    };
    NewRun {
        trace_id: run.trace_id.clone(),
        kind: kind.to_owned(),
        input,
        settings: serde_json::to_value(&run.settings).unwrap_or_default(),
    }
}

/// A run as the database gave it back; a kind or settings this build cannot read are an error
/// the worker records on the run.
fn queued_run(run: NewRun) -> Result<QueuedRun, QueueError> {
    let kind = match (run.kind.as_str(), run.input) {
        ("start", _) => RunKind::Start,
        ("resume", _) => RunKind::Resume,
        ("continue", Some(message)) => RunKind::Continue(message),
        (other, _) => {
            return Err(QueueError::Unavailable(format!(
                "a queued run of trace {} has the unknown kind {other:?}",
                run.trace_id
            )));
        }
    };
    let settings = serde_json::from_value(run.settings).map_err(|error| {
        QueueError::Unavailable(format!("a queued run's settings cannot be read: {error}"))
    })?;
    Ok(QueuedRun {
        trace_id: run.trace_id,
        kind,
        settings,
    })
}

#[async_trait]
impl RunQueue for PgQueue {
    async fn enqueue(&self, run: QueuedRun) -> Result<(), QueueError> {
        self.0
            .enqueue(&new_run(&run))
            .await
            .map(drop)
            .map_err(failed)
    }

    async fn active(&self, trace_id: &str) -> Result<bool, QueueError> {
        self.0.active(trace_id).await.map_err(failed)
    }

    async fn cancel(&self, trace_id: &str) -> Result<bool, QueueError> {
        self.0.request_cancel(trace_id).await.map_err(failed)
    }

    async fn send(&self, trace_id: &str, message: &str) -> Result<bool, QueueError> {
        self.0.send(trace_id, message).await.map_err(failed)
    }

    async fn decide(
        &self,
        trace_id: &str,
        tool_call_id: &str,
        decision: &ApprovalDecision,
    ) -> Result<DecisionOutcome, QueueError> {
        let (approve, reason) = match decision {
            ApprovalDecision::Approve => (true, None),
            ApprovalDecision::Reject { reason } => (false, Some(reason.as_str())),
        };
        let decided = self
            .0
            .decide(trace_id, tool_call_id, approve, reason)
            .await
            .map_err(failed)?;
        Ok(match decided {
            Decided::Recorded => DecisionOutcome::Recorded,
            Decided::AlreadyDecided => DecisionOutcome::AlreadyDecided,
            Decided::NotWaiting => DecisionOutcome::NotWaiting,
        })
    }

    async fn waiting(&self, trace_id: &str) -> Result<Vec<PendingApproval>, QueueError> {
        let calls = self.0.waiting(trace_id).await.map_err(failed)?;
        Ok(calls
            .into_iter()
            .map(|call| PendingApproval {
                tool_call_id: call.tool_call_id,
                tool_name: call.tool_name,
                arguments: call.arguments,
                requested_at: call.requested_at,
            })
            .collect())
    }

    async fn claim(&self, worker: &str, lease: Duration) -> Result<Option<ClaimedRun>, QueueError> {
        let Some(claimed) = self.0.claim(worker, lease).await.map_err(failed)? else {
            return Ok(None);
        };
        let run_id = claimed.run_id;
        match queued_run(claimed.run) {
            Ok(run) => Ok(Some(ClaimedRun {
                run_id,
                run,
                attempts: claimed.attempts,
                cancel_requested: claimed.cancel_requested,
            })),
            Err(error) => {
                // Not this build's to run: record why, so that it is not claimed forever.
                let message = error.to_string();
                self.0
                    .finish(run_id, worker, Some(&message))
                    .await
                    .map_err(failed)?;
                Err(error)
            }
        }
    }

    async fn heartbeat(
        &self,
        run_id: i64,
        worker: &str,
        lease: Duration,
    ) -> Result<LeaseState, QueueError> {
        let lease = self
            .0
            .heartbeat(run_id, worker, lease)
            .await
            .map_err(failed)?;
        Ok(LeaseState {
            kept: lease.kept,
            cancel_requested: lease.cancel_requested,
        })
    }

    async fn finish(
        &self,
        run_id: i64,
        worker: &str,
        error: Option<&str>,
    ) -> Result<(), QueueError> {
        self.0.finish(run_id, worker, error).await.map_err(failed)
    }

    async fn release(&self, run_id: i64, worker: &str) -> Result<(), QueueError> {
        self.0.release(run_id, worker).await.map_err(failed)
    }

    async fn take_messages(&self, trace_id: &str) -> Result<Vec<String>, QueueError> {
        self.0.take_messages(trace_id).await.map_err(failed)
    }

    async fn ask(&self, trace_id: &str, call: &PendingApproval) -> Result<(), QueueError> {
        let call = WaitingCall {
            tool_call_id: call.tool_call_id.clone(),
            tool_name: call.tool_name.clone(),
            arguments: call.arguments.clone(),
            requested_at: call.requested_at.clone(),
        };
        self.0.ask(trace_id, &call).await.map_err(failed)
    }

    async fn decision(
        &self,
        trace_id: &str,
        tool_call_id: &str,
    ) -> Result<Option<ApprovalDecision>, QueueError> {
        let decision = self
            .0
            .decision(trace_id, tool_call_id)
            .await
            .map_err(failed)?;
        Ok(decision.map(|(approved, reason)| {
            if approved {
                ApprovalDecision::Approve
            } else {
                ApprovalDecision::Reject { reason }
            }
        }))
    }

    async fn forget(&self, trace_id: &str, tool_call_id: &str) -> Result<(), QueueError> {
        self.0.forget(trace_id, tool_call_id).await.map_err(failed)
    }

    fn queued(&self) -> BoxStream<'static, ()> {
        self.0.queued()
    }

    fn run_changes(&self, trace_id: &str) -> BoxStream<'static, ()> {
        self.0.run_changes(trace_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queued_run_reads_back_as_it_was_written() {
        for kind in [
            RunKind::Start,
            RunKind::Resume,
            RunKind::Continue("go on".into()),
        ] {
            let run = QueuedRun {
                trace_id: "t".into(),
                kind,
                settings: agent_api::QueuedSettings {
                    model: Some("m".into()),
                    max_iterations: Some(3),
                    workspace: Some("sub".into()),
                    ..Default::default()
                },
            };
            assert_eq!(queued_run(new_run(&run)).unwrap(), run);
        }
    }
}
