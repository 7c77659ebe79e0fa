//! Errors: [`RunError`], what keeps a run from starting or from recording what it did, and the
//! loop's own `StepError`.

use std::path::PathBuf;

use agent_execution::StoreError;
use agent_llm::LlmError;

/// Errors that keep a run from starting or from recording what it did.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The store refused or failed a read or write.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The workspace folder is missing or unreadable.
    #[error("workspace {path}: {message}")]
    Workspace {
        /// The configured workspace.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The trace has already completed; there is nothing to resume.
    #[error("trace {trace_id} has already completed; start a new run instead")]
    AlreadyCompleted {
        /// The trace.
        trace_id: String,
    },
    /// A run of the trace is going on in this process: send it the message instead.
    #[error("trace {trace_id} is running; send the message to the run instead of continuing it")]
    Running {
        /// The trace.
        trace_id: String,
    },
    /// A hook refused the prompt.
    #[error("{0}")]
    Refused(String),
    /// Pictures were given for a model that takes none (the sentence says which and how to
    /// say it does).
    #[error("{0}")]
    NoVision(String),
    /// A picture the text mentions (`@shot.png`) cannot be attached: the sentence says which
    /// and why.
    #[error("{0}")]
    Picture(String),
    /// A message to continue a trace with was empty.
    #[error("the message is empty")]
    EmptyMessage,
    /// The work was cancelled before it was done.
    #[error("cancelled")]
    Cancelled,
    /// The model failed in a way the loop could not recover from.
    #[error("model error: {0}")]
    Llm(#[from] LlmError),
    /// The request cannot be made to fit the model's window (the tool specs, the system prompt
    /// and the task alone fill it): the error names the figures and the setting to change.
    #[error("{0}")]
    WindowTooSmall(String),
    /// The task running the loop panicked or was aborted; the trace is left as it was.
    #[error("the run's task ended abnormally: {message}")]
    Panicked {
        /// What the runtime reported.
        message: String,
    },
}

/// Why a step could not go on.
pub(crate) enum StepError {
    /// The model failed.
    Llm(LlmError),
    /// The run was cancelled.
    Cancelled,
    /// Recording failed.
    Run(RunError),
    /// The request cannot be made to fit the model's window: the error in words.
    WindowTooSmall(String),
}

impl From<RunError> for StepError {
    fn from(error: RunError) -> Self {
        Self::Run(error)
    }
}

impl From<StoreError> for StepError {
    fn from(error: StoreError) -> Self {
        Self::Run(RunError::Store(error))
    }
}
