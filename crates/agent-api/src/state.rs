//! `AppState`: what every route shares — the store, the optional runner factory and
//! checkpoints, the configuration (with its workspace roots resolved), the runs this server owns
//! and the pending approvals and elicitations.

use std::sync::Arc;

use agent_checkpoint::TraceCheckpoints;
use agent_execution::TraceStore;
use agent_worker::{FactoryError, RunnerFactory, WorkspaceRoots};
use tokio_util::sync::CancellationToken;

use crate::approvals::HttpApprovals;
use crate::config::ApiConfig;
use crate::elicitations::HttpElicitations;
use crate::error::ApiError;
use crate::runs::RunRegistry;

impl From<FactoryError> for ApiError {
    fn from(error: FactoryError) -> Self {
        match error {
            FactoryError::Rejected(message) => ApiError::bad_request("run_rejected", message),
            FactoryError::Failed(message) => {
                ApiError::Internal(format!("building a runner failed: {message}"))
            }
        }
    }
}

struct Inner {
    store: Arc<dyn TraceStore>,
    factory: Option<Arc<dyn RunnerFactory>>,
    queue: Option<Arc<dyn agent_execution::queue::RunQueue>>,
    checkpoints: Option<TraceCheckpoints>,
    config: ApiConfig,
    workspace_roots: WorkspaceRoots,
    runs: RunRegistry,
    approvals: Arc<HttpApprovals>,
    elicitations: Arc<HttpElicitations>,
    shutdown: CancellationToken,
}

/// The state shared by every route. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("config", &self.inner.config)
            .field("runs_enabled", &self.inner.factory.is_some())
            .field("runs", &self.inner.runs)
            .finish()
    }
}

impl AppState {
    /// A builder over this store; see [`AppStateBuilder`].
    pub fn builder(store: Arc<dyn TraceStore>) -> AppStateBuilder {
        AppStateBuilder {
            store,
            factory: None,
            queue: None,
            checkpoints: None,
            config: ApiConfig::default(),
            elicitations: None,
        }
    }

    /// The trace store.
    pub fn store(&self) -> &Arc<dyn TraceStore> {
        &self.inner.store
    }

    /// The runner factory, if this server can start runs.
    pub fn factory(&self) -> Option<&Arc<dyn RunnerFactory>> {
        self.inner.factory.as_ref()
    }

    /// The run queue, if runs started here execute on workers.
    pub fn queue(&self) -> Option<&Arc<dyn agent_execution::queue::RunQueue>> {
        self.inner.queue.as_ref()
    }

    /// The checkpoints of the traces, if this server keeps them (traces in a folder).
    pub fn checkpoints(&self) -> Option<&TraceCheckpoints> {
        self.inner.checkpoints.as_ref()
    }

    /// The configuration.
    pub fn config(&self) -> &ApiConfig {
        &self.inner.config
    }

    /// The runs this server owns; [`RunRegistry::track`] adds one started elsewhere.
    pub fn runs(&self) -> &RunRegistry {
        &self.inner.runs
    }

    /// The approval handler of runs started over HTTP in
    /// [`ApprovalMode::Ask`](crate::ApprovalMode::Ask). Give it to a run started elsewhere (as `RunnerOptions::approval`)
    /// to let HTTP clients decide its calls too.
    pub fn approvals(&self) -> Arc<HttpApprovals> {
        self.inner.approvals.clone()
    }

    /// The questions MCP servers ask the people of this server's runs, waiting for an answer
    /// (`/api/traces/{id}/elicitations`). Give it to the MCP client of the runs.
    pub fn elicitations(&self) -> Arc<HttpElicitations> {
        self.inner.elicitations.clone()
    }

    /// The canonical workspace roots (empty: the factory's workspace is the only one).
    pub(crate) fn workspace_roots(&self) -> &WorkspaceRoots {
        &self.inner.workspace_roots
    }

    /// Cancelled when the server shuts down; live watches close on it.
    pub(crate) fn shutdown_token(&self) -> &CancellationToken {
        &self.inner.shutdown
    }

    /// The factory, or 403 `runs_unavailable` on a read-only server.
    pub(crate) fn require_factory(&self) -> Result<&Arc<dyn RunnerFactory>, ApiError> {
        self.inner.factory.as_ref().ok_or_else(|| {
            ApiError::refused(
                "runs_unavailable",
                "this server is read-only: it was started without a model, so it cannot start, \
                 resume or continue runs",
            )
        })
    }

    /// True when the server can neither run nor queue runs.
    pub(crate) fn is_read_only(&self) -> bool {
        self.inner.factory.is_none() && self.inner.queue.is_none()
    }
}

/// Builds an [`AppState`].
pub struct AppStateBuilder {
    store: Arc<dyn TraceStore>,
    factory: Option<Arc<dyn RunnerFactory>>,
    queue: Option<Arc<dyn agent_execution::queue::RunQueue>>,
    checkpoints: Option<TraceCheckpoints>,
    config: ApiConfig,
    elicitations: Option<Arc<HttpElicitations>>,
}

impl AppStateBuilder {
    /// Lets the server start and resume runs with runners from this factory. Without one the
    /// server is read-only and starting, resuming or continuing a run answers 403
    /// `runs_unavailable`.
    #[must_use]
    pub fn runner_factory(mut self, factory: Arc<dyn RunnerFactory>) -> Self {
        self.factory = Some(factory);
        self
    }

    /// Queues the runs this server is asked to start, resume or continue, for workers to
    /// execute (see [`agent_worker::queue`]); cancel requests and approval decisions for runs this
    /// server does not own go through it too. With a queue the server needs no runner factory.
    #[must_use]
    pub fn run_queue(mut self, queue: Arc<dyn agent_execution::queue::RunQueue>) -> Self {
        self.queue = Some(queue);
        self
    }

    /// Lets clients rewind traces and read the diffs of their goals from these checkpoints
    /// (`POST /api/traces/{id}/rewind`, `GET /api/traces/{id}/goals/{goal_id}/diff`); without
    /// them those routes answer 404 `no_checkpoints`.
    #[must_use]
    pub fn checkpoints(mut self, checkpoints: TraceCheckpoints) -> Self {
        self.checkpoints = Some(checkpoints);
        self
    }

    /// Takes the servers' questions on this board (the default: a board of its own, which no
    /// MCP client asks unless it is given [`AppState::elicitations`]).
    #[must_use]
    pub fn elicitations(mut self, elicitations: Arc<HttpElicitations>) -> Self {
        self.elicitations = Some(elicitations);
        self
    }

    /// Sets the configuration (the default binds 127.0.0.1:8000 without a token).
    #[must_use]
    pub fn config(mut self, config: ApiConfig) -> Self {
        self.config = config;
        self
    }

    /// The state; fails if the configuration is unsafe (see [`ApiConfig::validate`]) or a
    /// workspace root is not an existing folder.
    pub fn build(self) -> Result<AppState, ApiError> {
        self.config.validate()?;
        let workspace_roots = WorkspaceRoots::new(&self.config.workspace_roots)
            .map_err(|error| ApiError::Config(error.to_string()))?;
        // The factory hears of every run that ends, whoever started it.
        let runs = match &self.factory {
            Some(factory) => {
                let factory = factory.clone();
                RunRegistry::with_end_hook(Arc::new(move |id: &str| factory.run_ended(id)))
            }
            None => RunRegistry::new(),
        };
        Ok(AppState {
            inner: Arc::new(Inner {
                store: self.store,
                factory: self.factory,
                queue: self.queue,
                checkpoints: self.checkpoints,
                config: self.config,
                workspace_roots,
                runs,
                approvals: Arc::new(HttpApprovals::new()),
                elicitations: self.elicitations.unwrap_or_default(),
                shutdown: CancellationToken::new(),
            }),
        })
    }
}
