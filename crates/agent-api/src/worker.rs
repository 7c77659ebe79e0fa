//! A worker: claims queued runs from a [`RunQueue`] and executes them with runners of its own
//! [`RunnerFactory`] (its model, its credentials, its workspace), recording into the shared
//! store. `agent worker` is one; `agent serve --worker` runs one beside the API.
//!
//! While a run executes, the worker renews its lease every third of it; a worker that dies
//! stops renewing, and once the lease runs out another worker claims the run and resumes the
//! trace (the store's writer lock, released with the dead worker's connection, makes sure the
//! two never write at once). Cancel requests, messages and approval decisions reach the run
//! through the queue: its doorbell rings, and every wait also polls.

use std::sync::Arc;
use std::time::Duration;

use agent_execution::{StoreError, TraceStore};
use agent_runner::{ApprovalDecision, ApprovalHandler, ApprovalRequest, RunError, RunHandle};
use async_trait::async_trait;
use futures::StreamExt;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use agent_execution::queue::{ClaimedRun, QueueError, QueuedRun, RunKind, RunQueue};

use crate::approvals::PendingApproval;
use crate::queue::QueuedSettings;
use crate::state::RunnerFactory;
use crate::workspace::WorkspaceRoots;

/// How a worker works.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// The name it claims runs under (unique per worker: a host name and process id).
    pub name: String,
    /// How many runs it executes at once.
    pub concurrency: usize,
    /// How long a claim lasts without a heartbeat; heartbeats come every third of it.
    pub lease: Duration,
    /// How often it looks for runs and news of its runs when no notification came.
    pub poll: Duration,
}

impl WorkerConfig {
    /// A worker named `name` running one run at a time, with a 30 s lease and a 1 s poll.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            concurrency: 1,
            lease: Duration::from_secs(30),
            poll: Duration::from_secs(1),
        }
    }
}

/// Executes queued runs until it is told to stop.
pub struct Worker {
    queue: Arc<dyn RunQueue>,
    store: Arc<dyn TraceStore>,
    factory: Arc<dyn RunnerFactory>,
    config: WorkerConfig,
    roots: WorkspaceRoots,
}

impl Worker {
    /// A worker over `queue` and `store`, building runners with `factory`; queued workspaces
    /// are resolved under the factory's workspace.
    pub fn new(
        queue: Arc<dyn RunQueue>,
        store: Arc<dyn TraceStore>,
        factory: Arc<dyn RunnerFactory>,
        config: WorkerConfig,
    ) -> Self {
        let roots = WorkspaceRoots::new(&[factory.options().workspace]).unwrap_or_default();
        Self {
            queue,
            store,
            factory,
            config,
            roots,
        }
    }

    /// Claims and executes runs until `stop` is cancelled; then cancels the runs it executes
    /// (their traces end `cancelled`, to be resumed) and waits for them.
    pub async fn run(self, stop: CancellationToken) {
        let worker = Arc::new(self);
        let slots = Arc::new(Semaphore::new(worker.config.concurrency.max(1)));
        let mut bell = worker.queue.queued();
        let mut runs = JoinSet::new();
        tracing::info!(worker = %worker.config.name, "worker started");
        loop {
            while runs.try_join_next().is_some() {}
            let permit = tokio::select! {
                permit = slots.clone().acquire_owned() => permit,
                () = stop.cancelled() => break,
            };
            let Ok(permit) = permit else { break };
            match worker
                .queue
                .claim(&worker.config.name, worker.config.lease)
                .await
            {
                Ok(Some(claimed)) => {
                    let worker = worker.clone();
                    let stop = stop.clone();
                    runs.spawn(async move {
                        worker.execute(claimed, stop).await;
                        drop(permit);
                    });
                    continue;
                }
                Ok(None) => drop(permit),
                Err(error) => {
                    drop(permit);
                    tracing::warn!(%error, "claiming a run failed");
                }
            }
            tokio::select! {
                _ = bell.next() => {}
                () = tokio::time::sleep(worker.config.poll) => {}
                () = stop.cancelled() => break,
            }
        }
        while runs.join_next().await.is_some() {}
        tracing::info!(worker = %worker.config.name, "worker stopped");
    }

    /// Executes one claimed run to its end.
    async fn execute(&self, claimed: ClaimedRun, stop: CancellationToken) {
        let trace_id = claimed.run.trace_id.clone();
        let name = &self.config.name;
        tracing::info!(%trace_id, run_id = claimed.run_id, attempt = claimed.attempts, "run claimed");
        let cancel = CancellationToken::new();
        if claimed.cancel_requested {
            cancel.cancel();
        }
        let handle = match self.start(&claimed, cancel.clone()).await {
            Ok(handle) => handle,
            // Another process still writes the trace (a worker whose lease ran out but which
            // is not dead): leave the run for later.
            Err(RunError::Store(StoreError::Locked { .. })) => {
                tracing::info!(%trace_id, "the trace is still being written elsewhere");
                self.log(self.queue.release(claimed.run_id, name).await);
                tokio::time::sleep(self.config.poll).await;
                return;
            }
            Err(error) => {
                tracing::warn!(%trace_id, %error, "a queued run could not start");
                let error = error.to_string();
                self.log(self.queue.finish(claimed.run_id, name, Some(&error)).await);
                return;
            }
        };
        let sender = handle.sender();
        let wait = handle.wait();
        tokio::pin!(wait);
        let mut bell = self.queue.run_changes(&trace_id);
        let mut beat = tokio::time::interval(self.config.lease / 3);
        let result = loop {
            tokio::select! {
                result = &mut wait => break result,
                _ = beat.tick() => {}
                _ = bell.next() => {}
                () = tokio::time::sleep(self.config.poll) => {}
                () = stop.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
            }
            match self
                .queue
                .heartbeat(claimed.run_id, name, self.config.lease)
                .await
            {
                Ok(lease) if !lease.kept => {
                    tracing::warn!(%trace_id, "the run's lease was lost; stopping it");
                    cancel.cancel();
                }
                Ok(lease) if lease.cancel_requested => cancel.cancel(),
                Ok(_) => {}
                Err(error) => tracing::warn!(%trace_id, %error, "renewing the lease failed"),
            }
            match self.queue.take_messages(&trace_id).await {
                Ok(messages) => {
                    for message in messages {
                        if !sender.send(&message) {
                            self.requeue_message(&trace_id, &claimed.run.settings, message)
                                .await;
                        }
                    }
                }
                Err(error) => tracing::warn!(%trace_id, %error, "reading messages failed"),
            }
        };
        let error = match &result {
            Ok(outcome) => {
                tracing::info!(%trace_id, status = ?outcome.status, "queued run ended");
                None
            }
            Err(error) => Some(error.to_string()),
        };
        self.log(
            self.queue
                .finish(claimed.run_id, name, error.as_deref())
                .await,
        );
        // Messages that came as the run ended start the next turn.
        if let Ok(messages) = self.queue.take_messages(&trace_id).await {
            for message in messages {
                self.requeue_message(&trace_id, &claimed.run.settings, message)
                    .await;
            }
        }
        self.factory.run_ended(&trace_id);
    }

    /// Starts the run a claim asks for. A trace whose run died after it began (a second
    /// attempt that finds the trace not ended) is resumed rather than continued again.
    async fn start(
        &self,
        claimed: &ClaimedRun,
        cancel: CancellationToken,
    ) -> Result<RunHandle, RunError> {
        let trace_id = &claimed.run.trace_id;
        let trace = self
            .store
            .get_trace(trace_id)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                trace_id: trace_id.clone(),
            })?;
        let settings = QueuedSettings::from_json(&claimed.run.settings)
            .map_err(|error| RunError::Store(StoreError::Invalid(error)))?;
        let options = self.options(&settings, trace.model)?;
        let runner = self
            .factory
            .build(self.store.clone(), options)
            .map_err(|error| RunError::Store(StoreError::Invalid(error.to_string())))?;
        match &claimed.run.kind {
            RunKind::Continue(message) if claimed.attempts <= 1 || trace.status.is_finished() => {
                runner
                    .continue_in_background(trace_id, message, cancel)
                    .await
            }
            _ => runner.resume_in_background(trace_id, cancel).await,
        }
    }

    /// The factory's defaults with the queued settings on top.
    fn options(
        &self,
        settings: &QueuedSettings,
        trace_model: Option<String>,
    ) -> Result<agent_runner::RunnerOptions, RunError> {
        let invalid = |message: String| RunError::Store(StoreError::Invalid(message));
        let mut options = self.factory.options();
        if let Some(model) = settings.model.clone().or(trace_model) {
            options.model = model;
        }
        if let Some(max) = settings.max_iterations {
            let max =
                agent_runner::check_max_iterations(max).map_err(|e| invalid(e.to_string()))?;
            options = options.with_max_iterations(max);
        }
        if let Some(cost) = settings.max_cost {
            let cost = agent_runner::check_max_cost(cost).map_err(|e| invalid(e.to_string()))?;
            options = options.with_max_cost(cost);
        }
        let ask: Arc<dyn ApprovalHandler> = Arc::new(QueueApprovals {
            queue: self.queue.clone(),
            poll: self.config.poll,
        });
        crate::approvals::apply(&mut options, settings.approval, ask);
        options.workspace = crate::workspace::resolve(
            &self.roots,
            &options.workspace,
            settings.workspace.as_deref(),
        )
        .map_err(|error| invalid(error.to_string()))?;
        Ok(options)
    }

    /// A message the run could no longer take continues the trace in a run of its own.
    async fn requeue_message(&self, trace_id: &str, settings: &serde_json::Value, message: String) {
        let run = QueuedRun {
            trace_id: trace_id.to_owned(),
            kind: RunKind::Continue(message),
            settings: settings.clone(),
        };
        // Queued only once this run is done; until then the trace is busy.
        for _ in 0..50 {
            match self.queue.enqueue(&run).await {
                Err(QueueError::Busy(_)) => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                result => return self.log(result.map(drop)),
            }
        }
        tracing::warn!(%trace_id, "a message for an ended run could not be queued");
    }

    fn log<E: std::fmt::Display>(&self, result: Result<(), E>) {
        if let Err(error) = result {
            tracing::warn!(%error, worker = %self.config.name, "the run queue failed");
        }
    }
}

/// Risky calls of queued runs wait on the queue, where any node's client decides them.
struct QueueApprovals {
    queue: Arc<dyn RunQueue>,
    poll: Duration,
}

/// Forgets a waiting call whose wait ended without a decision (the run was cancelled).
struct Waiting {
    queue: Arc<dyn RunQueue>,
    trace_id: String,
    tool_call_id: String,
    decided: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.decided {
            return;
        }
        let (queue, trace_id, call) = (
            self.queue.clone(),
            self.trace_id.clone(),
            self.tool_call_id.clone(),
        );
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = queue.forget(&trace_id, &call).await;
            });
        }
    }
}

#[async_trait]
impl ApprovalHandler for QueueApprovals {
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision {
        let call = PendingApproval {
            tool_call_id: request.tool_call_id.clone(),
            tool_name: request.tool_name.clone(),
            arguments: request.arguments.clone(),
            requested_at: agent_execution::ids::now_rfc3339(),
        };
        let mut bell = self.queue.run_changes(&request.trace_id);
        let waiting_call = crate::queue::waiting_call(&call);
        if let Err(error) = self.queue.ask(&request.trace_id, &waiting_call).await {
            return ApprovalDecision::Reject {
                reason: format!("the approval could not be asked for: {error}"),
            };
        }
        let mut waiting = Waiting {
            queue: self.queue.clone(),
            trace_id: request.trace_id.clone(),
            tool_call_id: request.tool_call_id.clone(),
            decided: false,
        };
        loop {
            match self
                .queue
                .decision(&request.trace_id, &request.tool_call_id)
                .await
            {
                Ok(Some(decision)) => {
                    waiting.decided = true;
                    return crate::queue::approval_decision(decision);
                }
                Ok(None) => {}
                Err(error) => tracing::warn!(%error, "reading an approval failed"),
            }
            tokio::select! {
                _ = bell.next() => {}
                () = tokio::time::sleep(self.poll) => {}
            }
        }
    }
}
