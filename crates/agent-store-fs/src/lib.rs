//! `FileSystemTraceStore`: the embedded default trace store, one folder per trace.
//!
//! Depends on `agent-execution` for the `TraceStore` trait and the models it stores; every
//! statistic and event is computed there, this crate only makes commits durable and reads them
//! back.
//!
//! # Layout (Contract)
//!
//! ```text
//! <base>/<trace_id>/            sub-traces are sibling folders
//!     meta.json                 the Trace
//!     goal.json                 the GoalTree
//!     messages/<message_id>.json
//!     events.jsonl              one event per line, append-only
//!     .lock                     held by the process writing the trace
//! ```
//!
//! # Durability
//!
//! `events.jsonl` is the write-ahead record: every change is an event carrying its data
//! (`trace_created`, `message_added` with the whole message, `goal_tree_updated` with the whole
//! tree, `trace_updated` with the whole trace, ...), so the trace can be rebuilt from it alone.
//! One commit (one [`TraceStore::batch`], or one single-op
//! method) is one `write` of its event lines, then in [`Durability::Fsync`] mode one
//! `fdatasync`, then the mirror files (`meta.json`, `goal.json`, the message files) are
//! rewritten through a temporary file and a rename, without syncing. A call returns after all of
//! that: a returned write survives a process crash in both modes and an OS crash or power loss
//! in `Fsync` mode. Creating a trace also syncs its folder and the base folder in `Fsync` mode.
//!
//! A crash can leave a torn last line, or the first events of a multi-event commit without the
//! last one (every event of a commit but the last carries `"commit_continues": true`). Readers
//! ignore such a tail; the next writer cuts it off before appending, so event ids stay dense.
//! Mirror files that are missing or behind the log are rewritten when the trace is next opened
//! for writing. A mirror file that does not parse (damaged or hand-edited) is reported as
//! [`StoreError::Corrupt`](agent_execution::StoreError::Corrupt) naming it; removing it lets the
//! store rebuild it. Listing skips (and logs) traces whose `meta.json` cannot be read.
//!
//! # Concurrency
//!
//! Within a process, each trace has an async mutex, so concurrent writers (parallel explore
//! branches on sibling folders, goal updates racing message appends) are serialised per trace
//! and lose nothing. Across processes, a trace has **one writer at a time**: the first write in a
//! process takes an exclusive lock on `<trace>/.lock` (held until the store is dropped), and a
//! second process (or second store instance) that tries to write gets
//! [`StoreError::Locked`](agent_execution::StoreError::Locked). Other processes may read a trace
//! that is being written: each read picks up the commits appended since its last read.
//! Watchers in other processes follow it live too: the store's doorbell
//! ([`TraceStore::changes`]) rings when `events.jsonl`
//! grows (file notifications, polling where there are none) and the watcher reads the appended
//! commits. [`TraceStore::writer_alive`] probes
//! `.lock`: a trace left `running` by a process that died has no writer, and can be resumed.
//! A trace folder this process may not write (shared read-only, another user's) is still read:
//! only writing it fails, with an I/O error of kind `PermissionDenied` (or `ReadOnlyFilesystem`).
//!
//! # Scale
//!
//! A trace is opened once per process by reading `events.jsonl` from start to end, building an
//! index (event offsets, the newest version of each message, messages by goal). After that,
//! reading a message is one positioned read of its event line, and listing traces reads only
//! `meta.json` files.
//!
//! ```
//! use agent_execution::{NewMessage, NewTrace, TraceStore};
//! use agent_store_fs::{Durability, FileSystemTraceStore};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let base = tempfile::tempdir()?;
//! let store = FileSystemTraceStore::open(base.path())?.with_durability(Durability::Buffered);
//! let trace = store.create_trace(NewTrace::agent("Fix the bug")).await?;
//! store.add_message(&trace.trace_id, NewMessage::user("Fix the bug")).await?;
//! assert!(base.path().join(&trace.trace_id).join("events.jsonl").is_file());
//! # Ok(())
//! # }
//! ```

#![deny(clippy::print_stdout, clippy::print_stderr)]

mod files;
mod flusher;
mod follow;
mod log;
mod store;
mod trace_files;

/// The trait this store implements, re-exported so that callers need not name `agent-execution`.
pub use agent_execution::TraceStore;
pub use store::FileSystemTraceStore;

/// When a write is durable.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Durability {
    /// Each commit syncs `events.jsonl` (one `fdatasync`) before it returns: survives power loss.
    #[default]
    Fsync,
    /// No syncs: a returned write survives a crash of the process, not of the machine.
    Buffered,
}
