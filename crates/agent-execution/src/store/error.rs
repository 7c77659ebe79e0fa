//! `StoreError`: every way a trace store operation can fail, with the variants a caller acts on.

use std::path::PathBuf;

use agent_goal::GoalError;

use crate::ids::InvalidId;

/// Why a trace store operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No trace has this id.
    #[error("trace {trace_id} not found")]
    NotFound {
        /// The id that was asked for.
        trace_id: String,
    },
    /// No message has this id.
    #[error("message {message_id} not found")]
    MessageNotFound {
        /// The id that was asked for.
        message_id: String,
    },
    /// A trace with this id exists already.
    #[error("trace {trace_id} already exists")]
    AlreadyExists {
        /// The id that was asked for.
        trace_id: String,
    },
    /// An id from outside was refused (see [`crate::validate_trace_id`]).
    #[error("invalid id {id:?}: {reason}")]
    InvalidId {
        /// The id that was given.
        id: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A request was malformed, e.g. a goal update that does not fit the goal's fields.
    #[error("invalid request: {0}")]
    Invalid(String),
    /// The goal tree refused the change; nothing was written. The text is meant for the model.
    #[error(transparent)]
    Goal(#[from] GoalError),
    /// A stored file cannot be read as what it should be.
    #[error("{path} is corrupt: {detail}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong, e.g. the line and the parse error.
        detail: String,
    },
    /// Reading or writing a file failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Another process (or another store instance) is writing this trace.
    #[error(
        "trace {trace_id} is being written by another process (lock file {path} is held); \
         a trace has one writer at a time"
    )]
    Locked {
        /// The trace.
        trace_id: String,
        /// The lock file.
        path: PathBuf,
    },
    /// The store failed internally, e.g. a background task panicked.
    #[error("internal store error: {0}")]
    Internal(String),
}

impl From<InvalidId> for StoreError {
    fn from(error: InvalidId) -> Self {
        Self::InvalidId {
            id: error.id,
            reason: error.reason,
        }
    }
}

impl StoreError {
    /// An I/O error on a path.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    /// True if the error means "there is no such trace or message".
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound { .. } | Self::MessageNotFound { .. })
    }
}
