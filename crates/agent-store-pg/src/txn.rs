//! A trace locked for one write: the trace's in-process lock ([`Slot`]), and a database
//! transaction on a pooled connection that locks the trace's row (`SELECT … FOR UPDATE`), so
//! that writers on every node are serialised per trace and each plans its commit from the
//! trace's current state.
//!
//! A commit writes the trace row, its events and its messages, then notifies the watchers, all
//! in one statement ([`COMMIT`], prepared once per connection); dropping the write before it
//! commits keeps nothing. The first write of a claim on the trace (see [`crate::locks`]) costs
//! two round trips: BEGIN and the locking read, then the statement and COMMIT. Every later
//! write of the claim begins from the state the last one left and costs one round trip: the
//! statement alone, which is a transaction of its own. Its fence is the events' primary key: a
//! commit appends the events after the last one it knows, so had anyone else written the trace
//! since, the insert would collide and the statement fail without a trace of it.

use std::sync::Arc;

use agent_execution::{Commit, Event, Message, StoreError, TraceState, TraceTxn};
use async_trait::async_trait;
use deadpool_postgres::Object;
use tokio::sync::OwnedMutexGuard;
use tokio_postgres::types::{Json, ToSql};

use crate::listen::CHANNEL;
use crate::locks::{Kept, Locks};
use crate::{corrupt, db, describe};

/// The state columns of `agent_traces`, in the order [`state_from_row`] reads them.
pub(crate) const STATE_COLUMNS: &str =
    "trace, goal_tree, last_event_id, last_sequence, sub_trace_count";

/// A whole commit in one statement: the trace's row (its state and the columns the listing
/// filters on), the commit's events, its messages (new ones and new versions) and the watchers'
/// notification. Each data-modifying part runs once, to completion, whether or not anything
/// reads it. Outside a transaction it is a transaction of its own.
const COMMIT: &str = "WITH trace AS (\
     INSERT INTO agent_traces (trace_id, parent_trace_id, created_at, \
     trace, goal_tree, last_event_id, last_sequence, sub_trace_count, mode, status) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
     ON CONFLICT (trace_id) DO UPDATE SET trace = EXCLUDED.trace, \
     mode = EXCLUDED.mode, status = EXCLUDED.status, \
     goal_tree = EXCLUDED.goal_tree, last_event_id = EXCLUDED.last_event_id, \
     last_sequence = EXCLUDED.last_sequence, sub_trace_count = EXCLUDED.sub_trace_count), \
     events AS (INSERT INTO agent_events (trace_id, event_id, event) \
     SELECT $1, * FROM UNNEST($11::bigint[], $12::json[])), \
     messages AS (INSERT INTO agent_messages (trace_id, sequence, goal_id, message) \
     SELECT $1, * FROM UNNEST($13::bigint[], $14::text[], $15::json[]) \
     ON CONFLICT (trace_id, sequence) DO UPDATE SET goal_id = EXCLUDED.goal_id, \
     message = EXCLUDED.message) \
     SELECT pg_notify($16, $1)";

/// An open write on one trace.
pub(crate) struct PgTxn {
    /// `None` once handed back (after the drop's rollback).
    conn: Option<Object>,
    trace_id: String,
    state: Option<TraceState>,
    /// Whether a transaction is open on `conn`.
    open: bool,
    locks: Arc<Locks>,
    /// The trace's in-process lock, where the state goes back after the write.
    slot: OwnedMutexGuard<Option<Kept>>,
    /// The claim on the trace's writer lock this write is made under.
    claim: Option<u64>,
    /// Whether `state`, before any plan, is the database's: read under the row lock, kept from
    /// the claim's last commit, or left by this write's last commit.
    trusted: bool,
    /// Whether `state` may hold a plan not committed yet.
    planned: bool,
}

impl PgTxn {
    /// The value before its transaction begins.
    fn unopened(
        conn: Object,
        trace_id: &str,
        locks: Arc<Locks>,
        slot: OwnedMutexGuard<Option<Kept>>,
    ) -> Self {
        Self {
            conn: Some(conn),
            trace_id: trace_id.to_owned(),
            state: None,
            open: false,
            locks,
            slot,
            claim: None,
            trusted: false,
            planned: false,
        }
    }

    /// Begins a write on an existing trace under `claim`: from the state the claim's last
    /// commit left when there is one (no round trip), otherwise with a transaction that locks
    /// the row and reads it.
    pub(crate) async fn existing(
        conn: Object,
        trace_id: &str,
        locks: Arc<Locks>,
        mut slot: OwnedMutexGuard<Option<Kept>>,
        claim: u64,
    ) -> Result<Self, StoreError> {
        let kept = slot.take().filter(|kept| kept.claim == claim);
        let mut txn = Self::unopened(conn, trace_id, locks, slot);
        txn.claim = Some(claim);
        txn.state = match kept {
            Some(kept) => Some(kept.state),
            None => Some(txn.lock_row().await?.ok_or_else(|| StoreError::NotFound {
                trace_id: trace_id.to_owned(),
            })?),
        };
        txn.trusted = true;
        Ok(txn)
    }

    /// Opens a transaction for a trace to be created, holding the id until it commits.
    pub(crate) async fn new_trace(
        conn: Object,
        trace_id: &str,
        locks: Arc<Locks>,
        slot: OwnedMutexGuard<Option<Kept>>,
    ) -> Result<Self, StoreError> {
        let mut txn = Self::unopened(conn, trace_id, locks, slot);
        let client = txn.client()?;
        let (lock, probe) = futures::try_join!(
            client.prepare_cached("SELECT pg_advisory_xact_lock(hashtextextended($1, 1))"),
            client.prepare_cached("SELECT 1 FROM agent_traces WHERE trace_id = $1"),
        )
        .map_err(db)?;
        // BEGIN, the id's lock and the look for the id go out together: one round trip.
        let begun = futures::try_join!(
            client.batch_execute("BEGIN"),
            async { client.execute(&lock, &[&trace_id]).await },
            async { client.query_opt(&probe, &[&trace_id]).await },
        );
        txn.open = true;
        let exists = begun.map_err(db)?.2.is_some();
        if exists {
            return Err(StoreError::AlreadyExists {
                trace_id: trace_id.to_owned(),
            });
        }
        Ok(txn)
    }

    /// Sets the claim the write is made under, once taken.
    pub(crate) fn set_claim(&mut self, claim: u64) {
        self.claim = Some(claim);
    }

    fn client(&self) -> Result<&Object, StoreError> {
        self.conn
            .as_ref()
            .ok_or_else(|| StoreError::Internal("the transaction's connection is gone".into()))
    }

    /// Begins a transaction and reads the trace's state with its row locked.
    async fn lock_row(&mut self) -> Result<Option<TraceState>, StoreError> {
        let client = self.client()?;
        let select = client
            .prepare_cached(&format!(
                "SELECT {STATE_COLUMNS} FROM agent_traces WHERE trace_id = $1 FOR UPDATE"
            ))
            .await
            .map_err(db)?;
        // BEGIN and the locking read go out together: one round trip.
        let begun = futures::try_join!(client.batch_execute("BEGIN"), async {
            client.query_opt(&select, &[&self.trace_id]).await
        },);
        // Even a failed read may have begun the transaction, which the drop then rolls back.
        self.open = true;
        let ((), row) = begun.map_err(db)?;
        row.map(|row| state_from_row(&self.trace_id, &row))
            .transpose()
    }
}

/// A trace's state from a row of [`STATE_COLUMNS`].
pub(crate) fn state_from_row(
    trace_id: &str,
    row: &tokio_postgres::Row,
) -> Result<TraceState, StoreError> {
    let count = |index: usize| -> Result<u64, StoreError> {
        let value: i64 = row.try_get(index).map_err(db)?;
        u64::try_from(value).map_err(|_| corrupt(trace_id, "agent_traces", "a negative counter"))
    };
    let trace = row
        .try_get::<_, Json<_>>(0)
        .map_err(|e| corrupt(trace_id, "agent_traces.trace", e))?
        .0;
    let goal_tree = row
        .try_get::<_, Json<_>>(1)
        .map_err(|e| corrupt(trace_id, "agent_traces.goal_tree", e))?
        .0;
    Ok(TraceState {
        trace,
        goal_tree,
        last_event_id: count(2)?,
        last_sequence: count(3)?,
        sub_trace_count: count(4)?,
    })
}

/// An enum's JSON name (`running`, `agent`, ...), as the listing filters compare it.
pub(crate) fn word(value: &impl serde::Serialize) -> Option<String> {
    serde_json::to_value(value)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
}

/// A counter as the database stores it.
pub(crate) fn signed(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

#[async_trait]
impl TraceTxn for PgTxn {
    fn state(&self) -> Option<&TraceState> {
        self.state.as_ref()
    }

    fn state_mut(&mut self) -> Option<&mut TraceState> {
        self.planned = true;
        self.state.as_mut()
    }

    async fn read_message(&mut self, sequence: u64) -> Result<Option<Message>, StoreError> {
        let row = self
            .client()?
            .query_opt(
                "SELECT message FROM agent_messages WHERE trace_id = $1 AND sequence = $2",
                &[&self.trace_id, &signed(sequence)],
            )
            .await
            .map_err(db)?;
        row.map(|row| {
            row.try_get::<_, Json<Message>>(0)
                .map(|json| json.0)
                .map_err(|e| corrupt(&self.trace_id, "agent_messages", e))
        })
        .transpose()
    }

    async fn commit(&mut self, mut commit: Commit) -> Result<Vec<Event>, StoreError> {
        // Without a transaction open, the write begins from the state the claim's last commit
        // left, fenced by the events' key; a commit without events has no fence, and one after
        // a failed commit no state known to be the database's: both lock the row first.
        let begin = !self.open;
        if begin && (!self.trusted || commit.events.is_empty()) {
            let state = self.lock_row().await?;
            // The state was planned in place: the row must still be at the event before this
            // commit's first.
            let expected = commit.events.first().map(|event| event.event_id - 1);
            if state.map(|state| state.last_event_id) != expected {
                self.trusted = false;
                return Err(StoreError::Internal(format!(
                    "trace {} changed between two commits of one write",
                    self.trace_id
                )));
            }
        }
        // Open only when the locking read above (or the new trace's id lock) began one.
        let in_transaction = self.open;
        // Until it succeeds, the state is not known to be the database's.
        self.trusted = false;
        if let Some(created) = commit.created.take() {
            self.state = Some(created);
        }
        let client = self.client()?;
        // Prepared once per connection; afterwards the statement costs no round trip of its own.
        let statement = client.prepare_cached(COMMIT).await.map_err(db)?;
        let Some(state) = self.state.as_ref() else {
            return Err(StoreError::Internal(format!(
                "trace {} has no state to commit",
                self.trace_id
            )));
        };
        let ids: Vec<i64> = commit.events.iter().map(|e| signed(e.event_id)).collect();
        let events: Vec<Json<_>> = commit.events.iter().map(Json).collect();
        let sequences: Vec<i64> = commit.messages.iter().map(|m| signed(m.sequence)).collect();
        let goals: Vec<Option<&str>> = commit
            .messages
            .iter()
            .map(|m| m.goal_id.as_deref())
            .collect();
        let messages: Vec<Json<_>> = commit.messages.iter().map(Json).collect();
        let (parent, mode, status) = (
            &state.trace.parent_trace_id,
            word(&state.trace.mode),
            word(&state.trace.status),
        );
        let (last_event_id, last_sequence, sub_traces) = (
            signed(state.last_event_id),
            signed(state.last_sequence),
            signed(state.sub_trace_count),
        );
        let (trace, goal_tree) = (Json(&state.trace), Json(&state.goal_tree));
        let params: [&(dyn ToSql + Sync); 16] = [
            &self.trace_id,
            parent,
            &state.trace.created_at,
            &trace,
            &goal_tree,
            &last_event_id,
            &last_sequence,
            &sub_traces,
            &mode,
            &status,
            &ids,
            &events,
            &sequences,
            &goals,
            &messages,
            &CHANNEL,
        ];
        // One statement, which is its own transaction; or, in the transaction a locking read
        // opened, the statement and COMMIT pipelined: one round trip either way. A failed
        // statement aborts that transaction, which makes the COMMIT a rollback, and its error
        // is the one returned.
        let written = if in_transaction {
            futures::try_join!(
                client.execute(&statement, &params),
                client.batch_execute("COMMIT")
            )
            .map(drop)
        } else {
            client.execute(&statement, &params).await.map(drop)
        };
        if let Err(error) = written {
            // An open transaction is left to the drop, which rolls it back.
            return Err(commit_error(error, &self.trace_id));
        }
        self.open = false;
        self.trusted = true;
        self.planned = false;
        let finished = state.trace.status.is_finished();
        if finished && let Err(error) = self.locks.release(&self.trace_id).await {
            tracing::warn!(%error, trace_id = %self.trace_id, "releasing a trace's writer lock failed");
        }
        Ok(commit.events)
    }
}

/// The error of a failed commit. A key taken in the events can only mean that another writer
/// appended these event ids first: the fence of a write begun from a kept state.
fn commit_error(error: tokio_postgres::Error, trace_id: &str) -> StoreError {
    if error.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) {
        return StoreError::Internal(format!(
            "trace {trace_id} was written by another writer since this store's last commit; \
             nothing was written ({})",
            describe(&error)
        ));
    }
    db(error)
}

impl Drop for PgTxn {
    fn drop(&mut self) {
        // The state stays for the claim's next write if it is the database's and the claim
        // still stands.
        if self.trusted
            && !self.planned
            && !self.open
            && let Some(claim) = self.claim
            && self.locks.claim(&self.trace_id) == Some(claim)
            && let Some(state) = self.state.take()
        {
            *self.slot = Some(Kept { claim, state });
        }
        let Some(conn) = self.conn.take() else {
            return;
        };
        if !self.open {
            return;
        }
        match tokio::runtime::Handle::try_current() {
            // The connection goes back to the pool after its rollback.
            Ok(runtime) => {
                runtime.spawn(async move {
                    if conn.batch_execute("ROLLBACK").await.is_err() {
                        drop(Object::take(conn));
                    }
                });
            }
            // Closing the connection rolls the transaction back.
            Err(_) => drop(Object::take(conn)),
        }
    }
}
