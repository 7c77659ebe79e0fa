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
//!     events.index              index checkpoint (an extension; see Scale)
//!     pictures/<sha256>         each picture of the trace's messages, once (an extension)
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
//! `fdatasync`. A call returns after that: a returned write survives a process crash in both
//! modes and an OS crash or power loss in `Fsync` mode. Creating a trace also syncs its folder
//! and the base folder in `Fsync` mode. Commits never share a sync: a step of the runner makes
//! two (the model's turn, then the tool's result), and the first is acted on — the tool runs —
//! before the second exists, so deferring its sync would let a power loss forget a turn whose
//! effects happened. On a multi-threaded runtime the sync runs on the committing task's thread
//! (`block_in_place`), without a hand-off to the blocking pool and back.
//!
//! The mirror files (`meta.json`, `goal.json`, the message files) are rewritten through a
//! temporary file and a rename, without syncing, and they trail the log. A commit only notes
//! which message files it put behind; a flusher thread of the store writes them in batches,
//! reading each message back from the log: all of them once the trace has gone tens of
//! milliseconds without a commit, a few at a time while commits keep coming (in
//! [`Durability::Fsync`] mode, none until a thousand are behind: a file created between two
//! commits is metadata the second's `fdatasync` waits for the journal to write). `meta.json` and `goal.json` are
//! written by the commit itself when it changed more than message statistics, otherwise at
//! most every quarter of a second. [`FileSystemTraceStore::flush`] and dropping the store
//! write every file that is behind: after either, every file of the layout is there and
//! current. A trace's state, messages and events are read from the log, not from the mirror
//! files, so a reader in another process sees every commit whether or not its files are
//! written yet.
//!
//! A crash can leave a torn last line, or the first events of a multi-event commit without the
//! last one (every event of a commit but the last carries `"commit_continues": true`). Readers
//! ignore such a tail; the next writer cuts it off before appending, so event ids stay dense.
//! A crash can also come between a commit and the writing of its files: when a process becomes
//! the writer, it rewrites `meta.json` and `goal.json` if they differ from the log and hands
//! to its flusher every message file that is missing or may be behind (those of events after
//! the point up to which the last checkpoint records every message file written; all of them
//! when there is no valid checkpoint, then rewriting only the files that differ). A mirror file
//! that does not parse (damaged or hand-edited) is reported as
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
//! A trace is opened once per process. The index (event offsets, the line of the newest
//! version of each message, messages by goal) and the state come from `events.index`, the
//! checkpoint its writer saves when the store is flushed or dropped and whenever the log grew
//! by an eighth (and at least a mebibyte) since the last one: the open reads it and replays
//! only the commits after it. The checkpoint records the length of the log it covers and the
//! checksum of that prefix's last bytes, and carries a checksum of its own; a torn or stale
//! checkpoint, or one next to a log that is shorter or was replaced, is ignored and the whole
//! log is replayed. The log stays the record: removing `events.index` loses nothing, and only
//! the writer writes it.
//!
//! After the open, reading messages reads their lines from the log, nearby lines with one read,
//! and parses only the message of each line; parsed messages are kept per trace (up to the
//! parsed messages of 128 MiB of log), so reading them again parses nothing: the shared reads
//! (`get_trace_messages_shared`, `get_messages_by_goal_shared`) hand out the kept messages
//! themselves (the runner reads this way), and the reads of owned messages copy them. Listing
//! traces reads only `meta.json` files.
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
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod files;
mod flusher;
mod follow;
mod log;
mod pictures;
mod pool;
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

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
