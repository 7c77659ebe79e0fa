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

use crate::factory::RunnerFactory;
use crate::queue::QueuedSettings;
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
    /// (their traces end `cancelled`, and can be resumed like any cancelled trace) and waits for them.
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
            Ok(Some(handle)) => handle,
            // A continue whose turn a dead worker already ran to its end.
            Ok(None) => {
                tracing::info!(%trace_id, "the run was done before its worker died");
                self.log(self.queue.finish(claimed.run_id, name, None).await);
                return;
            }
            // Another process still writes the trace (a worker whose lease ran out but which
            // is not dead), or the database failed for a moment: leave the run for later.
            Err(RunError::Store(error @ (StoreError::Locked { .. } | StoreError::Internal(_)))) => {
                tracing::info!(%trace_id, %error, "the run cannot start now; it goes back to the queue");
                self.log(self.queue.release(claimed.run_id, name).await);
                tokio::time::sleep(self.config.poll).await;
                return;
            }
            Err(error) => {
                tracing::warn!(%trace_id, %error, "a queued run could not start");
                self.fail(&trace_id, &error.to_string()).await;
                let error = error.to_string();
                self.log(self.queue.finish(claimed.run_id, name, Some(&error)).await);
                let _ = self.store.release_writer(&trace_id).await;
                return;
            }
        };
        let sender = handle.sender();
        // On a later attempt, messages the dead worker handed over and saw recorded are not
        // given again.
        let mut recorded = if claimed.attempts > 1 {
            self.user_messages(&trace_id).await
        } else {
            std::collections::HashSet::new()
        };
        let mut late = Vec::new();
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
                        if recorded.remove(&message) {
                            continue;
                        }
                        if !sender.send(&message) {
                            late.push(message);
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
        // Messages that came as the run ended start the next turn, together; taken before the
        // run is marked done (which lets them go), queued after (when the trace is free).
        if let Ok(messages) = self.queue.take_messages(&trace_id).await {
            late.extend(messages.into_iter().filter(|m| !recorded.contains(m)));
        }
        self.log(
            self.queue
                .finish(claimed.run_id, name, error.as_deref())
                .await,
        );
        // A run that ended without a finishing commit still lets other writers in.
        if let Err(error) = self.store.release_writer(&trace_id).await {
            tracing::warn!(%trace_id, %error, "giving up the trace's writer lock failed");
        }
        if !late.is_empty() {
            self.requeue_messages(&trace_id, &claimed.run.settings, late)
                .await;
        }
        self.factory.run_ended(&trace_id);
    }

    /// The texts of the trace's user messages.
    async fn user_messages(&self, trace_id: &str) -> std::collections::HashSet<String> {
        let messages = self
            .store
            .get_trace_messages_shared(trace_id)
            .await
            .unwrap_or_default();
        messages
            .iter()
            .filter(|message| message.role == agent_execution::Role::User)
            .map(|message| message.content.text().to_owned())
            .collect()
    }

    /// Records a run that cannot start as the trace's failure, so that it does not look
    /// interrupted forever.
    async fn fail(&self, trace_id: &str, error: &str) {
        let outcome =
            agent_execution::TraceOutcome::failed(format!("the run could not start: {error}"));
        if let Err(error) = self.store.finish_trace(trace_id, outcome).await {
            tracing::warn!(%trace_id, %error, "recording the failed start failed");
        }
    }

    /// Starts the run a claim asks for; `None` when there is nothing left to do. On a later
    /// attempt (its worker died), a continue whose message is already in the trace is not
    /// continued again: the trace is resumed if it did not end, and left alone if it did.
    async fn start(
        &self,
        claimed: &ClaimedRun,
        cancel: CancellationToken,
    ) -> Result<Option<RunHandle>, RunError> {
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
        let workspace = options.workspace.clone();
        let runner = self
            .factory
            .build_with(self.store.clone(), options, &settings.choices)
            .map_err(|error| RunError::Store(StoreError::Invalid(error.to_string())))?;
        let handle = match &claimed.run.kind {
            RunKind::Continue(message) => {
                let ran =
                    claimed.attempts > 1 && self.user_messages(trace_id).await.contains(message);
                match (ran, trace.status.is_finished()) {
                    (false, _) => {
                        runner
                            .continue_in_background(trace_id, message, cancel)
                            .await?
                    }
                    (true, false) => runner.resume_in_background(trace_id, cancel).await?,
                    (true, true) => return Ok(None),
                }
            }
            RunKind::Start => {
                let (factory, store) = (self.factory.as_ref(), self.store.as_ref());
                crate::task::expand(factory, store, trace_id, &workspace).await?;
                runner.resume_in_background(trace_id, cancel).await?
            }
            RunKind::Resume => runner.resume_in_background(trace_id, cancel).await?,
        };
        Ok(Some(handle))
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
        crate::approval::apply(&mut options, settings.approval, ask);
        options.workspace = crate::workspace::resolve(
            &self.roots,
            &options.workspace,
            settings.workspace.as_deref(),
        )
        .map_err(|error| invalid(error.to_string()))?;
        Ok(options)
    }

    /// Messages the run could no longer take (it was ending) continue the trace together in a
    /// run of their own; if another run of the trace was queued meanwhile, they go to it.
    async fn requeue_messages(
        &self,
        trace_id: &str,
        settings: &serde_json::Value,
        messages: Vec<String>,
    ) {
        let run = QueuedRun {
            trace_id: trace_id.to_owned(),
            kind: RunKind::Continue(messages.join("\n\n")),
            settings: settings.clone(),
        };
        match self.queue.enqueue(&run).await {
            Err(QueueError::Busy(_)) => {
                for message in &messages {
                    if !matches!(self.queue.send(trace_id, message).await, Ok(true)) {
                        tracing::warn!(%trace_id, "a message for an ended run could not be kept");
                    }
                }
            }
            result => self.log(result.map(drop)),
        }
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
        let waiting_call = agent_execution::queue::WaitingCall {
            tool_call_id: request.tool_call_id.clone(),
            tool_name: request.tool_name.clone(),
            arguments: request.arguments.clone(),
            requested_at: agent_execution::ids::now_rfc3339(),
            warning: request.note.clone(),
        };
        let mut bell = self.queue.run_changes(&request.trace_id);
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
