//! Runs that execute elsewhere: a server with a [`RunQueue`] queues the runs it is asked for
//! (start, resume, continue) instead of running them, and workers — `agent worker`, or a
//! server started with `--worker` — claim and execute them (see [`crate::worker`]). Cancel
//! requests, messages for a running run and decisions on its risky calls go through the queue
//! too, so any node can steer a run wherever it executes.
//!
//! The queue is a trait so that this crate names no database: the composition root gives one
//! (the PostgreSQL store's queue, for nodes that share a database).

use std::time::Duration;

use agent_runner::ApprovalDecision;
use async_trait::async_trait;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};

use crate::approvals::PendingApproval;
use crate::config::ApprovalMode;

/// What a queued run does with its trace (created before the run is queued).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunKind {
    /// The first run of a new trace.
    Start,
    /// Goes on with a stopped trace.
    Resume,
    /// Continues an ended trace with a new user message.
    Continue(String),
}

/// The settings a queued run carries: what the request asked for, never credentials (a worker
/// reaches its model the way `agent run` does).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueuedSettings {
    /// The model; the worker's default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Model calls allowed for the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// Cost budget of the trace in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<f64>,
    /// How risky calls are handled.
    pub approval: ApprovalMode,
    /// The folder the tools work in, relative to the worker's workspace; the worker's
    /// workspace itself when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

/// A run to queue.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedRun {
    /// The trace it records into.
    pub trace_id: String,
    /// What it does.
    pub kind: RunKind,
    /// Its settings.
    pub settings: QueuedSettings,
}

/// A run a worker claimed.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedRun {
    /// The run's id in the queue.
    pub run_id: i64,
    /// The run.
    pub run: QueuedRun,
    /// How many times it was claimed, this time included (more than 1 after a worker died).
    pub attempts: i32,
    /// Whether it was asked to stop before it was claimed.
    pub cancel_requested: bool,
}

/// What a renewed lease says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseState {
    /// False when the run is no longer this worker's: it must stop.
    pub kept: bool,
    /// Whether someone asked the run to stop.
    pub cancel_requested: bool,
}

/// What became of a decision on a risky call of a queued run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionOutcome {
    /// The waiting run will read it.
    Recorded,
    /// The call was decided before.
    AlreadyDecided,
    /// No such call waits.
    NotWaiting,
}

/// Why the queue failed.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// The trace has a run queued or running already (409 `run_in_progress`).
    #[error("trace {0} already has a run queued or running")]
    Busy(String),
    /// The queue cannot be reached or failed (503 `queue_unavailable`).
    #[error("the run queue failed: {0}")]
    Unavailable(String),
}

/// Runs shared by nodes. The first group of methods is what any node does for its clients;
/// the second is what a worker does.
#[async_trait]
pub trait RunQueue: Send + Sync {
    /// Queues a run; [`QueueError::Busy`] if its trace has one queued or running.
    async fn enqueue(&self, run: QueuedRun) -> Result<(), QueueError>;

    /// Whether the trace has a run queued, or running under a live lease.
    async fn active(&self, trace_id: &str) -> Result<bool, QueueError>;

    /// Asks the trace's active run to stop; false if it has none.
    async fn cancel(&self, trace_id: &str) -> Result<bool, QueueError>;

    /// Leaves a message for the trace's active run (put before its next model call); false if
    /// it has none.
    async fn send(&self, trace_id: &str, message: &str) -> Result<bool, QueueError>;

    /// Decides on a risky call a queued run waits on.
    async fn decide(
        &self,
        trace_id: &str,
        tool_call_id: &str,
        decision: &ApprovalDecision,
    ) -> Result<DecisionOutcome, QueueError>;

    /// The risky calls of the trace's run that wait on a decision.
    async fn waiting(&self, trace_id: &str) -> Result<Vec<PendingApproval>, QueueError>;

    /// Claims the oldest claimable run (queued, or whose worker's lease ran out).
    async fn claim(&self, worker: &str, lease: Duration) -> Result<Option<ClaimedRun>, QueueError>;

    /// Renews the lease of a claimed run.
    async fn heartbeat(
        &self,
        run_id: i64,
        worker: &str,
        lease: Duration,
    ) -> Result<LeaseState, QueueError>;

    /// Marks a claimed run done, with the error that ended it if any.
    async fn finish(
        &self,
        run_id: i64,
        worker: &str,
        error: Option<&str>,
    ) -> Result<(), QueueError>;

    /// Gives a claimed run back to the queue at once.
    async fn release(&self, run_id: i64, worker: &str) -> Result<(), QueueError>;

    /// Takes the messages left for the trace's run, oldest first.
    async fn take_messages(&self, trace_id: &str) -> Result<Vec<String>, QueueError>;

    /// Records that the trace's run waits on a risky call.
    async fn ask(&self, trace_id: &str, call: &PendingApproval) -> Result<(), QueueError>;

    /// The decision on a waiting call, once made.
    async fn decision(
        &self,
        trace_id: &str,
        tool_call_id: &str,
    ) -> Result<Option<ApprovalDecision>, QueueError>;

    /// Forgets a call the run no longer waits on.
    async fn forget(&self, trace_id: &str, tool_call_id: &str) -> Result<(), QueueError>;

    /// Rings when a run may have been queued.
    fn queued(&self) -> BoxStream<'static, ()>;

    /// Rings when the trace's run is asked something (stop, a message, a decision).
    fn run_changes(&self, trace_id: &str) -> BoxStream<'static, ()>;
}
