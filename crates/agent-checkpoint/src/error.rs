//! The one error type of the crate, with the variants a caller acts on.

use std::path::PathBuf;

/// Why a snapshot, a restore or a diff could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The workspace holds more bytes to keep than the snapshot cap allows; nothing was stored.
    #[error("the workspace holds {bytes} bytes to snapshot, over the cap of {cap} bytes")]
    TooLarge {
        /// Bytes of the files that would have been kept.
        bytes: u64,
        /// The cap ([`crate::Limits::max_snapshot_bytes`]).
        cap: u64,
    },
    /// Restoring would overwrite files changed since the newest snapshot (by someone other than
    /// the run); nothing was changed. Restore with `force` to overwrite them.
    #[error(
        "{} file(s) changed since the last checkpoint would be overwritten: {}; \
         restore with force to overwrite them",
        paths.len(),
        paths.join(", ")
    )]
    Conflicts {
        /// The files, relative to the workspace.
        paths: Vec<String>,
    },
    /// No snapshot has this id or label.
    #[error("no checkpoint {0}")]
    UnknownSnapshot(String),
    /// The `git` program is missing or failed.
    #[error("git {command} failed: {message}")]
    Git {
        /// The git subcommand.
        command: String,
        /// What git said (its standard error) or why it could not start.
        message: String,
    },
    /// A file of the store or the workspace could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl CheckpointError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}
