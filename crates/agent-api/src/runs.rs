//! The runs this server owns: started or resumed over HTTP, or handed over by the process that
//! embeds the server (e.g. `agent run --serve`) with [`RunRegistry::track`].
//!
//! **Invariant:** a trace has at most one tracked run; a second start of the same trace gets
//! 409. On shutdown every tracked run is cancelled, so its trace ends `cancelled` and can be
//! resumed, and the server waits a short grace period for the runs to record that.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use agent_runner::{RunError, RunHandle, RunOutcome, RunSender};
use tokio::sync::{Notify, oneshot};
use tokio_util::sync::CancellationToken;

use crate::error::ApiError;

struct Entry {
    generation: u64,
    cancel: CancellationToken,
    /// Takes messages for the run, once it started.
    sender: Option<RunSender>,
}

#[derive(Default)]
struct Runs {
    next_generation: u64,
    entries: HashMap<String, Entry>,
    closed: bool,
}

/// What is called with a trace id when one of its runs ended.
pub type EndHook = Arc<dyn Fn(&str) + Send + Sync>;

#[derive(Default)]
struct Inner {
    runs: Mutex<Runs>,
    idle: Notify,
    ended: Option<EndHook>,
}

/// The runs this server owns. Cheap to clone; clones share the runs.
#[derive(Clone, Default)]
pub struct RunRegistry {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for RunRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunRegistry")
            .field("running", &self.running())
            .finish()
    }
}

/// A run handed to [`RunRegistry::track`]: its trace id and, once it ends, its outcome.
#[derive(Debug)]
pub struct TrackedRun {
    /// The trace the run records into.
    pub trace_id: String,
    outcome: oneshot::Receiver<Result<RunOutcome, RunError>>,
}

impl TrackedRun {
    /// Waits for the run to end. `None` if its task was lost (it panicked).
    pub async fn wait(self) -> Option<Result<RunOutcome, RunError>> {
        self.outcome.await.ok()
    }
}

impl RunRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry that calls `hook` with the trace id after each tracked run ended.
    pub fn with_end_hook(hook: EndHook) -> Self {
        Self {
            inner: Arc::new(Inner {
                ended: Some(hook),
                ..Inner::default()
            }),
        }
    }

    fn runs(&self) -> MutexGuard<'_, Runs> {
        self.inner
            .runs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes ownership of a run started elsewhere: it shows as running, `POST
    /// /api/traces/{id}/cancel` cancels it, and shutdown cancels it and waits for it. If the
    /// server is already shutting down, the run is cancelled at once.
    pub fn track(&self, handle: RunHandle) -> TrackedRun {
        let cancel = handle.cancel_token();
        let (generation, closed) = {
            let mut runs = self.runs();
            runs.next_generation += 1;
            let generation = runs.next_generation;
            runs.entries.insert(
                handle.trace_id.clone(),
                Entry {
                    generation,
                    cancel: cancel.clone(),
                    sender: Some(handle.sender()),
                },
            );
            (generation, runs.closed)
        };
        if closed {
            cancel.cancel();
        }
        self.watch_until_done(handle, generation)
    }

    /// Reserves a trace for a run about to be resumed, so no second run of it can start.
    pub(crate) fn reserve(&self, trace_id: &str) -> Result<Reservation, ApiError> {
        let mut runs = self.runs();
        if runs.closed {
            return Err(shutting_down());
        }
        if runs.entries.contains_key(trace_id) {
            return Err(ApiError::conflict(
                "run_in_progress",
                format!("trace {trace_id} is already running in this server"),
            ));
        }
        runs.next_generation += 1;
        let generation = runs.next_generation;
        let cancel = CancellationToken::new();
        runs.entries.insert(
            trace_id.to_owned(),
            Entry {
                generation,
                cancel: cancel.clone(),
                sender: None,
            },
        );
        Ok(Reservation {
            registry: self.clone(),
            trace_id: trace_id.to_owned(),
            generation,
            cancel,
            attached: false,
        })
    }

    /// Fails when the server is shutting down and takes no new runs.
    pub(crate) fn check_open(&self) -> Result<(), ApiError> {
        if self.runs().closed {
            Err(shutting_down())
        } else {
            Ok(())
        }
    }

    /// Queues a message for the run of a trace, which the model sees before its next call.
    /// False if this server runs no such trace, or its run is starting or ending.
    pub fn send(&self, trace_id: &str, message: &str) -> bool {
        let sender = self
            .runs()
            .entries
            .get(trace_id)
            .and_then(|entry| entry.sender.clone());
        sender.is_some_and(|sender| sender.send(message))
    }

    fn watch_until_done(&self, handle: RunHandle, generation: u64) -> TrackedRun {
        let trace_id = handle.trace_id.clone();
        let (sender, outcome) = oneshot::channel();
        let registry = self.clone();
        let id = trace_id.clone();
        tokio::spawn(async move {
            let result = handle.wait().await;
            match &result {
                Ok(outcome) => {
                    tracing::info!(trace_id = %id, status = ?outcome.status, "run ended");
                }
                Err(error) => tracing::warn!(trace_id = %id, %error, "run failed"),
            }
            registry.release(&id, generation);
            if let Some(hook) = &registry.inner.ended {
                hook(&id);
            }
            // Nobody may be waiting for the outcome, which is fine.
            let _ = sender.send(result);
        });
        TrackedRun { trace_id, outcome }
    }

    fn release(&self, trace_id: &str, generation: u64) {
        let mut runs = self.runs();
        if runs
            .entries
            .get(trace_id)
            .is_some_and(|entry| entry.generation == generation)
        {
            runs.entries.remove(trace_id);
        }
        if runs.entries.is_empty() {
            self.inner.idle.notify_waiters();
        }
    }

    /// Asks the run of a trace to stop. False if this server runs no such trace.
    pub fn cancel(&self, trace_id: &str) -> bool {
        match self.runs().entries.get(trace_id) {
            Some(entry) => {
                entry.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// True if this server runs the trace.
    pub fn is_running(&self, trace_id: &str) -> bool {
        self.runs().entries.contains_key(trace_id)
    }

    /// The traces this server runs.
    pub fn running(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.runs().entries.keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Stops taking runs, cancels every run, and waits up to `grace` for them to end. Returns
    /// how many had not ended by then.
    pub async fn shutdown(&self, grace: Duration) -> usize {
        {
            let mut runs = self.runs();
            runs.closed = true;
            for entry in runs.entries.values() {
                entry.cancel.cancel();
            }
        }
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            let idle = self.inner.idle.notified();
            let left = self.runs().entries.len();
            if left == 0 {
                return 0;
            }
            if tokio::time::timeout_at(deadline, idle).await.is_err() {
                let left = self.running();
                tracing::warn!(?left, "runs still going after the shutdown grace period");
                return left.len();
            }
        }
    }
}

fn shutting_down() -> ApiError {
    ApiError::RunsUnavailable("the server is shutting down".into())
}

/// A trace reserved for a run that is about to start; dropping it without
/// [`attach`](Reservation::attach) frees the trace again.
pub(crate) struct Reservation {
    registry: RunRegistry,
    trace_id: String,
    generation: u64,
    cancel: CancellationToken,
    attached: bool,
}

impl Reservation {
    /// The token the run must be started with, so cancel and shutdown reach it.
    pub(crate) fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Hands the started run over to the registry.
    pub(crate) fn attach(mut self, handle: RunHandle) -> TrackedRun {
        self.attached = true;
        if let Some(entry) = self.registry.runs().entries.get_mut(&self.trace_id)
            && entry.generation == self.generation
        {
            entry.sender = Some(handle.sender());
        }
        self.registry.watch_until_done(handle, self.generation)
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if !self.attached {
            self.registry.release(&self.trace_id, self.generation);
        }
    }
}
