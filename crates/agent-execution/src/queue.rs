//! `RunQueue`: runs that execute on other nodes. A server that is asked for a run (start,
//! resume, continue) creates or finds its trace and queues it; workers claim queued runs under
//! a lease they renew and execute them, recording into the shared store. Cancel requests,
//! messages for a running run and decisions on its risky tool calls go through the queue, so
//! any node steers a run wherever it executes.
//!
//! A store that can be shared by nodes implements it next to its `TraceStore` (the PostgreSQL
//! store does, in the same database). A run's settings are opaque JSON here: the runner's API
//! writes and reads them, and they never hold credentials.

use async_trait::async_trait;
use serde_json::Value;

use crate::store::Doorbell;

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

/// A run in the queue.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedRun {
    /// The trace it records into.
    pub trace_id: String,
    /// What it does.
    pub kind: RunKind,
    /// Its settings, as the runner's API writes them.
    pub settings: Value,
}

/// A run a worker claimed.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedRun {
    /// The run's id in the queue.
    pub run_id: i64,
    /// The run.
    pub run: QueuedRun,
    /// How many times it was claimed, this time included: more than 1 after a worker died.
    pub attempts: i32,
    /// Whether it was asked to stop before it was claimed.
    pub cancel_requested: bool,
}

/// What a renewed lease says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// False when the run is no longer this worker's (its lease ran out and another took it):
    /// the worker must stop it.
    pub kept: bool,
    /// Whether someone asked the run to stop.
    pub cancel_requested: bool,
}

/// A risky tool call a queued run waits on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingCall {
    /// The call's id.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// The arguments as the model wrote them.
    pub arguments: String,
    /// When the run started waiting (RFC 3339).
    pub requested_at: String,
    /// Why the call is asked about although it would not be otherwise (a deny rule cannot check
    /// it), for the person who decides; `None` for an ordinary risky call.
    pub warning: Option<String>,
}

/// A decision on a waiting call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Whether the call may run.
    pub approve: bool,
    /// Why it was refused (shown to the model); empty when approved.
    pub reason: String,
}

/// What became of a decision sent with [`RunQueue::decide`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decided {
    /// The waiting run will read it.
    Recorded,
    /// The call was decided before.
    AlreadyDecided,
    /// No such call waits.
    NotWaiting,
}

/// Why a queue operation failed.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// The trace has a run queued or running already.
    #[error("trace {0} already has a run queued or running")]
    Busy(String),
    /// The queue cannot be reached, or failed.
    #[error("the run queue failed: {0}")]
    Unavailable(String),
}

/// Runs shared by nodes. The first methods are what any node does for its clients; the rest
/// (from [`claim`](RunQueue::claim)) what a worker does.
#[async_trait]
pub trait RunQueue: Send + Sync {
    /// Queues a run; [`QueueError::Busy`] if its trace has one queued or running.
    async fn enqueue(&self, run: &QueuedRun) -> Result<i64, QueueError>;

    /// Whether the trace has a run queued, or running under a live lease.
    async fn active(&self, trace_id: &str) -> Result<bool, QueueError>;

    /// Asks the trace's active run to stop; false if it has none.
    async fn cancel(&self, trace_id: &str) -> Result<bool, QueueError>;

    /// Leaves a message for the trace's active run (put before its next model call); false,
    /// and nothing kept, if it has none.
    async fn send(&self, trace_id: &str, message: &str) -> Result<bool, QueueError>;

    /// Decides on a call a run waits on, from any node.
    async fn decide(
        &self,
        trace_id: &str,
        tool_call_id: &str,
        decision: &Decision,
    ) -> Result<Decided, QueueError>;

    /// The calls of the trace's run that wait on a decision, oldest first.
    async fn waiting(&self, trace_id: &str) -> Result<Vec<WaitingCall>, QueueError>;

    /// Claims the oldest claimable run — queued, or one whose worker's lease ran out — for
    /// `worker`, under a lease of `lease`.
    async fn claim(
        &self,
        worker: &str,
        lease: std::time::Duration,
    ) -> Result<Option<ClaimedRun>, QueueError>;

    /// Renews the lease of a run `worker` holds.
    async fn heartbeat(
        &self,
        run_id: i64,
        worker: &str,
        lease: std::time::Duration,
    ) -> Result<Lease, QueueError>;

    /// Marks a run done, with the error that ended it if any. A run no longer `worker`'s is
    /// left to its new worker.
    async fn finish(
        &self,
        run_id: i64,
        worker: &str,
        error: Option<&str>,
    ) -> Result<(), QueueError>;

    /// Gives a claimed run back to the queue at once (its worker cannot run it now).
    async fn release(&self, run_id: i64, worker: &str) -> Result<(), QueueError>;

    /// Hands over the messages left for the trace's run that no attempt took yet, oldest
    /// first. They are kept until the run is finished, and handed to the next attempt again
    /// when its worker died.
    async fn take_messages(&self, trace_id: &str) -> Result<Vec<String>, QueueError>;

    /// Records that the trace's run waits on a call (again after a resume: an old decision is
    /// forgotten).
    async fn ask(&self, trace_id: &str, call: &WaitingCall) -> Result<(), QueueError>;

    /// The decision on a waiting call, once made.
    async fn decision(
        &self,
        trace_id: &str,
        tool_call_id: &str,
    ) -> Result<Option<Decision>, QueueError>;

    /// Forgets a call the run no longer waits on.
    async fn forget(&self, trace_id: &str, tool_call_id: &str) -> Result<(), QueueError>;

    /// Rings when a run may have been queued.
    fn queued(&self) -> Doorbell;

    /// Rings when the trace's run is asked something: to stop, a message, a decision.
    fn run_changes(&self, trace_id: &str) -> Doorbell;
}
