//! The runner factory: how a server or a worker builds the runner of each run it is asked for,
//! without knowing which model provider, store or tools the composition root chose.

use std::sync::Arc;

use agent_execution::TraceStore;
use agent_runner::{AgentRunner, RunnerOptions};

use crate::choices::BuildChoices;

/// Builds runners for runs started, resumed or claimed elsewhere (over HTTP, from a run queue).
/// The composition root (the CLI) implements it, so neither the API nor the worker knows which
/// model provider or tools are used.
///
/// The caller asks for [`options`](RunnerFactory::options), copies the fields a request sets
/// (model, limits, workspace) onto them, sets the approval policy of its
/// [`ApprovalMode`](crate::ApprovalMode) and the workspace (canonical, checked against the
/// [`WorkspaceRoots`](crate::WorkspaceRoots)), and calls [`build`](RunnerFactory::build).
/// Fields it does not know keep the factory's defaults; the factory's `approval` is not used,
/// its `approval_rules` are (in `never` mode only their deny rules).
pub trait RunnerFactory: Send + Sync {
    /// The options a run gets when a request sets nothing.
    fn options(&self) -> RunnerOptions;

    /// A runner recording into `store` with these options. Refuse what cannot be run here
    /// (an unknown model, a workspace outside an allowed root) with
    /// [`FactoryError::Rejected`]; its message is sent to the client.
    fn build(
        &self,
        store: Arc<dyn TraceStore>,
        options: RunnerOptions,
    ) -> Result<AgentRunner, FactoryError>;

    /// [`build`](RunnerFactory::build) with what the request chose about streaming and the
    /// sandbox. A factory that cannot apply a choice refuses it; by default every choice is
    /// refused ([`FactoryError::Rejected`]), and a request without choices is built as
    /// `build` builds it. A sandbox looser than the factory's own must be refused.
    fn build_with(
        &self,
        store: Arc<dyn TraceStore>,
        options: RunnerOptions,
        choices: &BuildChoices,
    ) -> Result<AgentRunner, FactoryError> {
        if choices.is_empty() {
            return self.build(store, options);
        }
        Err(FactoryError::Rejected(
            "this server cannot change how a run streams or how its commands are sandboxed".into(),
        ))
    }

    /// The task a run of `task` in `workspace` starts with: a factory may expand it (a custom
    /// command, `/name args`). A task that cannot be expanded is refused
    /// ([`FactoryError::Rejected`]). The task as given by default.
    fn task(&self, task: &str, workspace: &std::path::Path) -> Result<String, FactoryError> {
        let _ = workspace;
        Ok(task.to_owned())
    }

    /// Called when a run that was tracked here has ended (completed, failed, stopped or
    /// cancelled), in the task that waited for it: e.g. to send the trace's spans somewhere.
    /// Does nothing by default.
    fn run_ended(&self, trace_id: &str) {
        let _ = trace_id;
    }
}

/// Why a [`RunnerFactory`] could not build a runner.
#[derive(Debug, thiserror::Error)]
pub enum FactoryError {
    /// The request asked for something this node does not run; the HTTP API answers 400
    /// `run_rejected`, with this message sent to the client.
    #[error("{0}")]
    Rejected(String),
    /// Building a runner failed; the HTTP API answers 500 and logs it.
    #[error("{0}")]
    Failed(String),
}
