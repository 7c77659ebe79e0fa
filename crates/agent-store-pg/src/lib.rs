//! `PgTraceStore`: a trace store on PostgreSQL, for traces shared by many processes and nodes
//! (API servers behind a load balancer, workers that run the queued runs).
//!
//! Depends on `agent-execution` for the `TraceStore` trait and the models it stores (every
//! statistic and event is computed there; this crate only makes commits durable and reads them
//! back) and on `tokio-postgres` with a `deadpool` pool. It must not depend on the runner, the
//! tools, the API or the filesystem store.
//!
//! # Design
//!
//! - **Events are the source of truth.** `agent_events` holds every event of every trace with
//!   its dense per-trace id (the primary key `(trace_id, event_id)` refuses a gap filled twice).
//!   `agent_traces` (the trace and its goal tree, and the counters a writer continues from) and `agent_messages` (the newest version of each message, indexed by goal) hold what
//!   the events say and are written in the same transaction, so a reader never sees one without
//!   the other.
//! - **One writer at a time per trace.** A store that writes a trace holds a session-level
//!   advisory lock on it while the trace runs: a second store (another process or node) that
//!   tries to write it gets [`StoreError::Locked`], and when the holder dies its connection
//!   closes and the lock goes with it, so [`TraceStore::writer_alive`] says the trace can be
//!   resumed. Within the store, writers of a trace are serialised on an in-process lock. The
//!   first write under the advisory lock is a transaction that locks the trace's row
//!   (`SELECT … FOR UPDATE`) and plans from what it reads; each later one plans from the state
//!   the last commit left and writes it with one statement, a transaction of its own (one
//!   round trip), fenced by the events' primary key: had another writer appended to the trace meanwhile, the commit's
//!   first event id would be taken, and the whole commit rolls back with an error.
//! - **`LISTEN/NOTIFY` is only a doorbell.** A commit notifies `agent_trace_events` with the
//!   trace id; watchers in every process ring on it and read `WHERE event_id > cursor` — the
//!   same query as a replay — so a lost notification loses nothing.
//! - **Migrations are embedded** and applied when a store connects ([`SCHEMA_VERSION`]); a
//!   database migrated by a newer build is refused.
//!
//! ```no_run
//! use agent_execution::{NewMessage, NewTrace, TraceStore};
//! use agent_store_pg::PgTraceStore;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = PgTraceStore::connect("postgres://agent@127.0.0.1:5432/agent").await?;
//! let trace = store.create_trace(NewTrace::agent("Fix the bug")).await?;
//! store.add_message(&trace.trace_id, NewMessage::user("Fix the bug")).await?;
//! assert_eq!(store.get_trace_messages(&trace.trace_id).await?.len(), 1);
//! # Ok(())
//! # }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod active;
mod listen;
mod locks;
mod queue;
mod schema;
mod store;
mod txn;

use agent_execution::StoreError;

/// The trait this store implements, re-exported so that callers need not name `agent-execution`.
pub use agent_execution::TraceStore;
pub use queue::PgRunQueue;
pub use schema::{SCHEMA_VERSION, SchemaError};
pub use store::{ConnectError, PgTraceStore};

/// True when `location` names a PostgreSQL database (`postgres://…` or `postgresql://…`)
/// rather than a folder.
pub fn is_postgres_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// A database error as a store error.
fn db(error: tokio_postgres::Error) -> StoreError {
    StoreError::Internal(format!("database: {}", describe(&error)))
}

/// A database error with the server's own message (`Display` says only "db error").
pub(crate) fn describe(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => error.to_string(),
    }
}

/// A stored value that does not decode as what it should be.
fn corrupt(trace_id: &str, table: &str, detail: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        path: format!("{table} of trace {trace_id}").into(),
        detail: detail.to_string(),
    }
}

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
