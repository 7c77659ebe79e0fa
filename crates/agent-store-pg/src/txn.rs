//! A trace locked for one write: a database transaction on a pooled connection, begun with the
//! trace's row locked (`SELECT … FOR UPDATE`), so that writers on every node are serialised per
//! trace and each plans its commit from the trace's current state.
//!
//! A commit writes the trace row, its events and its messages, then notifies the watchers, all
//! in that transaction; dropping the transaction uncommitted rolls it back.

use std::sync::Arc;

use agent_execution::{Commit, Message, StoreError, TraceState, TraceTxn};
use async_trait::async_trait;
use deadpool_postgres::Object;
use tokio_postgres::types::Json;

use crate::listen::CHANNEL;
use crate::locks::Locks;
use crate::{corrupt, db};

/// The state columns of `agent_traces`, in the order [`state_from_row`] reads them.
pub(crate) const STATE_COLUMNS: &str =
    "trace, goal_tree, last_event_id, last_sequence, sub_trace_count";

/// An open transaction holding one trace's row lock.
pub(crate) struct PgTxn {
    /// `None` once handed back (after the drop's rollback).
    conn: Option<Object>,
    trace_id: String,
    state: Option<TraceState>,
    /// Whether a transaction is open on `conn`.
    open: bool,
    locks: Arc<Locks>,
}

impl PgTxn {
    /// The value before its transaction begins.
    fn unopened(conn: Object, trace_id: &str, locks: Arc<Locks>) -> Self {
        Self {
            conn: Some(conn),
            trace_id: trace_id.to_owned(),
            state: None,
            open: false,
            locks,
        }
    }

    /// Opens a transaction on an existing trace and locks its row.
    pub(crate) async fn existing(
        conn: Object,
        trace_id: &str,
        locks: Arc<Locks>,
    ) -> Result<Self, StoreError> {
        let mut txn = Self::unopened(conn, trace_id, locks);
        txn.state = Some(txn.lock_row().await?.ok_or_else(|| StoreError::NotFound {
            trace_id: trace_id.to_owned(),
        })?);
        Ok(txn)
    }

    /// Opens a transaction for a trace to be created, holding the id until it commits.
    pub(crate) async fn new_trace(
        conn: Object,
        trace_id: &str,
        locks: Arc<Locks>,
    ) -> Result<Self, StoreError> {
        let mut txn = Self::unopened(conn, trace_id, locks);
        let client = txn.client()?;
        client.batch_execute("BEGIN").await.map_err(db)?;
        txn.open = true;
        let client = txn.client()?;
        client
            .execute(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 1))",
                &[&trace_id],
            )
            .await
            .map_err(db)?;
        let exists = client
            .query_opt(
                "SELECT 1 FROM agent_traces WHERE trace_id = $1",
                &[&trace_id],
            )
            .await
            .map_err(db)?
            .is_some();
        if exists {
            return Err(StoreError::AlreadyExists {
                trace_id: trace_id.to_owned(),
            });
        }
        Ok(txn)
    }

    fn client(&self) -> Result<&Object, StoreError> {
        self.conn
            .as_ref()
            .ok_or_else(|| StoreError::Internal("the transaction's connection is gone".into()))
    }

    /// Begins a transaction and reads the trace's state with its row locked.
    async fn lock_row(&mut self) -> Result<Option<TraceState>, StoreError> {
        self.client()?.batch_execute("BEGIN").await.map_err(db)?;
        self.open = true;
        let row = self
            .client()?
            .query_opt(
                &format!("SELECT {STATE_COLUMNS} FROM agent_traces WHERE trace_id = $1 FOR UPDATE"),
                &[&self.trace_id],
            )
            .await
            .map_err(db)?;
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

    async fn commit(&mut self, commit: &Commit) -> Result<(), StoreError> {
        if !self.open {
            // A second commit through the same lock: lock the row again and check that no one
            // wrote in between.
            let state = self.lock_row().await?;
            let expected = self.state.as_ref().map(|state| state.last_event_id);
            if state.map(|state| state.last_event_id) != expected {
                return Err(StoreError::Internal(format!(
                    "trace {} changed between two commits of one write",
                    self.trace_id
                )));
            }
        }
        let state = &commit.state;
        let client = self.client()?;
        client
            .execute(
                "INSERT INTO agent_traces (trace_id, parent_trace_id, created_at, trace, goal_tree, \
                 last_event_id, last_sequence, sub_trace_count, mode, status) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
                 ON CONFLICT (trace_id) DO UPDATE SET trace = EXCLUDED.trace, \
                 mode = EXCLUDED.mode, status = EXCLUDED.status, \
                 goal_tree = EXCLUDED.goal_tree, last_event_id = EXCLUDED.last_event_id, \
                 last_sequence = EXCLUDED.last_sequence, sub_trace_count = EXCLUDED.sub_trace_count",
                &[
                    &self.trace_id,
                    &state.trace.parent_trace_id,
                    &state.trace.created_at,
                    &Json(&state.trace),
                    &Json(&state.goal_tree),
                    &signed(state.last_event_id),
                    &signed(state.last_sequence),
                    &signed(state.sub_trace_count),
                    &word(&state.trace.mode),
                    &word(&state.trace.status),
                ],
            )
            .await
            .map_err(db)?;
        if !commit.events.is_empty() {
            let ids: Vec<i64> = commit.events.iter().map(|e| signed(e.event_id)).collect();
            let events: Vec<Json<_>> = commit.events.iter().map(Json).collect();
            client
                .execute(
                    "INSERT INTO agent_events (trace_id, event_id, event) \
                     SELECT $1, * FROM UNNEST($2::bigint[], $3::json[])",
                    &[&self.trace_id, &ids, &events],
                )
                .await
                .map_err(db)?;
        }
        if !commit.messages.is_empty() {
            let sequences: Vec<i64> = commit.messages.iter().map(|m| signed(m.sequence)).collect();
            let goals: Vec<Option<&str>> = commit
                .messages
                .iter()
                .map(|m| m.goal_id.as_deref())
                .collect();
            let messages: Vec<Json<_>> = commit.messages.iter().map(Json).collect();
            client
                .execute(
                    "INSERT INTO agent_messages (trace_id, sequence, goal_id, message) \
                     SELECT $1, * FROM UNNEST($2::bigint[], $3::text[], $4::json[]) \
                     ON CONFLICT (trace_id, sequence) DO UPDATE SET goal_id = EXCLUDED.goal_id, \
                     message = EXCLUDED.message",
                    &[&self.trace_id, &sequences, &goals, &messages],
                )
                .await
                .map_err(db)?;
        }
        client
            .execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &self.trace_id])
            .await
            .map_err(db)?;
        client.batch_execute("COMMIT").await.map_err(db)?;
        self.open = false;
        self.state = Some(commit.state.clone());
        if commit.state.trace.status.is_finished()
            && let Err(error) = self.locks.release(&self.trace_id).await
        {
            tracing::warn!(%error, trace_id = %self.trace_id, "releasing a trace's writer lock failed");
        }
        Ok(())
    }
}

impl Drop for PgTxn {
    fn drop(&mut self) {
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
