//! The one error type of the crate: a setting the person can fix ([`Error::Usage`]), or
//! something that failed while doing what the settings say.

/// What went wrong while loading the configuration or assembling an agent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A flag, an environment variable, `agent.toml` or a profile file says something that
    /// cannot be done: the message names the setting and where it was read. A command line
    /// exits with its usage code (2) for these.
    #[error("{0}")]
    Usage(String),
    /// A file or folder could not be read or written.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, naming the path.
        what: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The trace store could not be opened or read.
    #[error("{what}: {source}")]
    Store {
        /// What was being done, naming the store.
        what: String,
        /// The underlying error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Something else failed (a model client or an MCP server could not be set up).
    #[error("{0}")]
    Failed(String),
}

impl Error {
    /// A [`Error::Usage`] with this message.
    pub fn usage(message: impl Into<String>) -> Self {
        Self::Usage(message.into())
    }

    /// Whether the person can fix it in the settings (a command line's exit code 2).
    pub fn is_usage(&self) -> bool {
        matches!(self, Self::Usage(_))
    }

    /// An [`Error::Io`] while doing `what`.
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            what: what.into(),
            source,
        }
    }
}

/// The crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
