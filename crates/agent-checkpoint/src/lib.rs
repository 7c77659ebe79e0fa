//! Checkpoints: the workspace's files at every goal, so a fork, a rewind or an abandoned goal
//! can put them back.
//!
//! This crate owns the snapshots of a workspace ([`CheckpointStore`]): tracked and untracked
//! files, honouring `.gitignore`, `.git/info/exclude` and the user's global excludes, with a cap
//! per file and per snapshot ([`Limits`]), kept in a git object store of their own beside the
//! trace (`<trace folder>/checkpoints.git`, with its own index so an unchanged file costs
//! nothing), restores ([`CheckpointStore::restore`], which refuses to overwrite files changed
//! since the newest snapshot unless forced), diffs, and the log saying which snapshot was taken
//! at which point of a run ([`Point`]: a goal's start and end, a turn, a run's start and end),
//! and private copies of the workspace written from a snapshot, whose changes can be applied
//! back ([`CheckpointStore::write_copy`], [`CheckpointStore::apply_copy`]).
//! [`Checkpointer`] is what a runner calls at those points; [`FolderCheckpoints`] implements it
//! with one store per trace folder; [`TraceCheckpoints`] opens them after the runs, for rewinds
//! and diffs.
//!
//! A restore removes files without following a symlink below the workspace (`openat2` with
//! `RESOLVE_BENEATH`), so a folder swapped for a symlink meanwhile fails it instead of sending
//! it outside.
//!
//! It runs the `git` program and nothing else, and never touches the user's repository: every
//! `GIT_*` variable is cleared, the store, work tree and index are set explicitly, system and
//! global configuration are not read (so no hook, filter, fsmonitor or external diff runs),
//! and the user's repository is only read for its `info/exclude`. It depends on no crate of the
//! workspace, and must not: the runner, the rewinds of `agent-plan`, the command line and
//! the server depend on it.
//!
//! ```
//! use agent_checkpoint::{CheckpointStore, Limits, RestoreOptions};
//!
//! let workspace = tempfile::tempdir().unwrap();
//! let traces = tempfile::tempdir().unwrap();
//! let store =
//!     CheckpointStore::open(traces.path().join("checkpoints.git"), workspace.path(), Limits::default())
//!         .unwrap();
//! std::fs::write(workspace.path().join("notes.txt"), "first").unwrap();
//! let first = store.snapshot("first").unwrap();
//! std::fs::write(workspace.path().join("notes.txt"), "second").unwrap();
//! std::fs::write(workspace.path().join("new.txt"), "new").unwrap();
//! store.snapshot("second").unwrap();
//!
//! let changes = store.restore(&first, RestoreOptions::default()).unwrap();
//! assert_eq!(changes.modified, ["notes.txt"]);
//! assert_eq!(changes.deleted, ["new.txt"]);
//! assert_eq!(std::fs::read_to_string(workspace.path().join("notes.txt")).unwrap(), "first");
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod beneath;
mod branch;
mod error;
mod git;
mod hook;
mod log;
mod restore;
mod store;

pub use error::CheckpointError;
pub use hook::{
    AbandonRollback, Checkpointer, Failure, FolderCheckpoints, STORE_DIR, TraceCheckpoints,
    branch_copy_dir, store_dir,
};
pub use log::{EntriesExt, Entry, Point};
pub use restore::{Changes, DiffTarget, RestoreOptions};
pub use store::{CheckpointStore, Limits, Snapshot, SnapshotId};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
