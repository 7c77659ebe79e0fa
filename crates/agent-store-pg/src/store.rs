//! `PgTraceStore`: the `TraceStore` implementation over the tables of [`crate::schema`].

use std::sync::Arc;

use agent_execution::ids::split_message_id;
use agent_execution::{
    Doorbell, Event, EventBus, GoalTree, Message, StoreError, Trace, TraceFilter, TraceState,
    TraceStore, TraceTxn, validate_trace_id,
};
use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use serde::de::DeserializeOwned;
use tokio_postgres::types::{Json, ToSql};
use tokio_postgres::{Config, NoTls};

use crate::active::HAS_ACTIVE_RUN;
use crate::listen::Listener;
use crate::locks::Locks;
use crate::schema::{self, SchemaError};
use crate::txn::{PgTxn, signed, word};
use crate::{corrupt, db};

/// How many connections a store keeps open at most (writers hold one per open transaction).
const POOL_SIZE: usize = 16;

/// A trace store on PostgreSQL, shared by every process and node that connects to the same
/// database. See the crate documentation for the design.
pub struct PgTraceStore {
    pool: Pool,
    bus: EventBus,
    listener: Listener,
    locks: Arc<Locks>,
}

impl std::fmt::Debug for PgTraceStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgTraceStore").finish_non_exhaustive()
    }
}

/// Why a store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The URL is not a PostgreSQL connection string.
    #[error("invalid PostgreSQL URL: {0}")]
    Url(tokio_postgres::Error),
    /// The database cannot be reached.
    #[error("cannot connect to the database: {0}")]
    Connect(tokio_postgres::Error),
    /// The schema could not be brought up to date (or is newer than this build).
    #[error(transparent)]
    Schema(#[from] SchemaError),
}

impl PgTraceStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/database`, or any
    /// form `tokio_postgres::Config` parses) and applies the migrations it lacks. It listens
    /// for changes made by other processes and nodes once something watches a trace.
    pub async fn connect(url: &str) -> Result<Self, ConnectError> {
        let (config, pool) = open(url).await?;
        Ok(Self {
            pool,
            bus: EventBus::new(),
            listener: Listener::new(config.clone(), crate::listen::CHANNEL),
            locks: Arc::new(Locks::new(config)),
        })
    }

    /// Sets how many events a watcher may fall behind before it catches up from the database.
    #[must_use]
    pub fn with_feed_capacity(mut self, capacity: usize) -> Self {
        self.bus = EventBus::with_capacity(capacity);
        self
    }

    async fn conn(&self) -> Result<Object, StoreError> {
        self.pool
            .get()
            .await
            .map_err(|e| StoreError::Internal(format!("no database connection: {e}")))
    }

    /// Rows of one JSON column, decoded.
    async fn json_rows<T: DeserializeOwned>(
        &self,
        trace_id: &str,
        table: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<T>, StoreError> {
        let rows = self.conn().await?.query(sql, params).await.map_err(db)?;
        rows.iter()
            .map(|row| {
                row.try_get::<_, Json<T>>(0)
                    .map(|json| json.0)
                    .map_err(|e| corrupt(trace_id, table, e))
            })
            .collect()
    }

    /// All messages of a trace in sequence order, each decoded straight into `T` (a message, or
    /// a shared one: no copy either way).
    async fn trace_messages<T: DeserializeOwned>(
        &self,
        trace_id: &str,
    ) -> Result<Vec<T>, StoreError> {
        validate_trace_id(trace_id)?;
        let messages: Vec<T> = self
            .json_rows(
                trace_id,
                "agent_messages",
                "SELECT message FROM agent_messages WHERE trace_id = $1 ORDER BY sequence",
                &[&trace_id],
            )
            .await?;
        if messages.is_empty() {
            self.must_exist(trace_id).await?;
        }
        Ok(messages)
    }

    /// The messages of one goal in sequence order, decoded as [`Self::trace_messages`] does.
    async fn goal_messages<T: DeserializeOwned>(
        &self,
        trace_id: &str,
        goal_id: &str,
    ) -> Result<Vec<T>, StoreError> {
        validate_trace_id(trace_id)?;
        if goal_id.contains('\0') {
            // No goal id holds one (they are stored as PostgreSQL text).
            self.must_exist(trace_id).await?;
            return Ok(Vec::new());
        }
        let messages: Vec<T> = self
            .json_rows(
                trace_id,
                "agent_messages",
                "SELECT message FROM agent_messages WHERE trace_id = $1 AND goal_id = $2 \
                 ORDER BY sequence",
                &[&trace_id, &goal_id],
            )
            .await?;
        if messages.is_empty() {
            self.must_exist(trace_id).await?;
        }
        Ok(messages)
    }

    /// Fails with [`StoreError::NotFound`] unless the trace exists.
    async fn must_exist(&self, trace_id: &str) -> Result<(), StoreError> {
        let found = self
            .conn()
            .await?
            .query_opt(
                "SELECT 1 FROM agent_traces WHERE trace_id = $1",
                &[&trace_id],
            )
            .await
            .map_err(db)?;
        match found {
            Some(_) => Ok(()),
            None => Err(StoreError::NotFound {
                trace_id: trace_id.to_owned(),
            }),
        }
    }

    /// Reads from the state the last commit of this store's claim on the trace left, if it
    /// holds one: the database's state until this store's next commit, since no other store
    /// writes the trace meanwhile. Waits for a write of this store in progress on the trace.
    async fn read_kept<R>(&self, trace_id: &str, read: fn(&TraceState) -> R) -> Option<R> {
        let claim = self.locks.claim(trace_id)?;
        let slot = self.locks.slot(trace_id);
        let kept = slot.lock().await;
        kept.as_ref()
            .filter(|kept| kept.claim == claim)
            .map(|kept| read(&kept.state))
    }

    /// One JSON column of a trace's row.
    async fn trace_column<T: DeserializeOwned>(
        &self,
        trace_id: &str,
        column: &str,
    ) -> Result<Option<T>, StoreError> {
        validate_trace_id(trace_id)?;
        let table = format!("agent_traces.{column}");
        let sql = format!("SELECT {column} FROM agent_traces WHERE trace_id = $1");
        Ok(self
            .json_rows(trace_id, &table, &sql, &[&trace_id])
            .await?
            .pop())
    }
}

/// Parses `url`, applies the migrations the database lacks, and builds a connection pool.
pub(crate) async fn open(url: &str) -> Result<(Config, Pool), ConnectError> {
    let config: Config = url.parse().map_err(ConnectError::Url)?;
    let (mut client, connection) = config.connect(NoTls).await.map_err(ConnectError::Connect)?;
    let driver = tokio::spawn(connection);
    let migrated = schema::migrate(&mut client).await;
    drop(client);
    let _ = driver.await;
    migrated?;
    let manager = Manager::from_config(
        config.clone(),
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager)
        .max_size(POOL_SIZE)
        .build()
        .map_err(|e| ConnectError::Schema(SchemaError::Pool(e.to_string())))?;
    Ok((config, pool))
}

#[async_trait]
impl TraceStore for PgTraceStore {
    async fn begin(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError> {
        validate_trace_id(trace_id)?;
        let claim = self.locks.acquire(trace_id).await?;
        let slot = self.locks.slot(trace_id).lock_owned().await;
        let conn = self.conn().await?;
        match PgTxn::existing(conn, trace_id, self.locks.clone(), slot, claim).await {
            Ok(txn) => Ok(Box::new(txn)),
            Err(error) => {
                if error.is_not_found() {
                    self.locks.release(trace_id).await?;
                }
                Err(error)
            }
        }
    }

    async fn begin_new(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError> {
        validate_trace_id(trace_id)?;
        let slot = self.locks.slot(trace_id).lock_owned().await;
        let conn = self.conn().await?;
        let mut txn = PgTxn::new_trace(conn, trace_id, self.locks.clone(), slot).await?;
        txn.set_claim(self.locks.acquire(trace_id).await?);
        Ok(Box::new(txn))
    }

    fn event_bus(&self) -> &EventBus {
        &self.bus
    }

    fn changes(&self, trace_id: &str) -> Option<Doorbell> {
        Some(self.listener.doorbell(trace_id))
    }

    async fn writer_alive(&self, trace_id: &str) -> Result<Option<bool>, StoreError> {
        validate_trace_id(trace_id)?;
        let conn = self.conn().await?;
        if Locks::writer_alive(&conn, trace_id).await? {
            return Ok(Some(true));
        }
        // A run queued for the trace, or one a worker holds a live lease on, will write it.
        let row = conn
            .query_one(HAS_ACTIVE_RUN, &[&trace_id])
            .await
            .map_err(db)?;
        Ok(Some(row.get(0)))
    }

    async fn release_writer(&self, trace_id: &str) -> Result<(), StoreError> {
        validate_trace_id(trace_id)?;
        self.locks.release(trace_id).await
    }

    async fn get_trace(&self, trace_id: &str) -> Result<Option<Trace>, StoreError> {
        validate_trace_id(trace_id)?;
        if let Some(trace) = self.read_kept(trace_id, |state| state.trace.clone()).await {
            return Ok(Some(trace));
        }
        self.trace_column(trace_id, "trace").await
    }

    async fn list_traces(&self, filter: &TraceFilter) -> Result<Vec<Trace>, StoreError> {
        let mode = filter.mode.as_ref().and_then(word);
        let status = filter.status.as_ref().and_then(word);
        let limit = filter.limit.map(|limit| signed(limit as u64));
        let traces: Vec<Trace> = self
            .json_rows(
                "*",
                "agent_traces.trace",
                "SELECT trace FROM agent_traces \
                 WHERE ($1::text IS NULL OR parent_trace_id = $1) \
                 AND ($2::text IS NULL OR mode = $2) \
                 AND ($3::text IS NULL OR status = $3) \
                 ORDER BY created_at DESC, trace_id DESC LIMIT $4",
                &[&filter.parent_trace_id, &mode, &status, &limit],
            )
            .await?;
        let traces = traces
            .into_iter()
            .filter(|trace| filter.matches(trace))
            .collect();
        Ok(filter.finish(traces))
    }

    async fn get_goal_tree(&self, trace_id: &str) -> Result<Option<GoalTree>, StoreError> {
        validate_trace_id(trace_id)?;
        // The runner reads the goal tree at every step: no round trip for a trace it writes.
        if let Some(tree) = self
            .read_kept(trace_id, |state| state.goal_tree.clone())
            .await
        {
            return Ok(Some(tree));
        }
        self.trace_column(trace_id, "goal_tree").await
    }

    async fn get_trace_messages(&self, trace_id: &str) -> Result<Vec<Message>, StoreError> {
        self.trace_messages(trace_id).await
    }

    async fn get_messages_by_goal(
        &self,
        trace_id: &str,
        goal_id: &str,
    ) -> Result<Vec<Message>, StoreError> {
        self.goal_messages(trace_id, goal_id).await
    }

    async fn get_trace_messages_shared(
        &self,
        trace_id: &str,
    ) -> Result<Vec<Arc<Message>>, StoreError> {
        self.trace_messages(trace_id).await
    }

    async fn get_messages_by_goal_shared(
        &self,
        trace_id: &str,
        goal_id: &str,
    ) -> Result<Vec<Arc<Message>>, StoreError> {
        self.goal_messages(trace_id, goal_id).await
    }

    async fn get_message(&self, message_id: &str) -> Result<Option<Message>, StoreError> {
        let (trace_id, sequence) = split_message_id(message_id)?;
        validate_trace_id(trace_id)?;
        Ok(self
            .json_rows(
                trace_id,
                "agent_messages",
                "SELECT message FROM agent_messages WHERE trace_id = $1 AND sequence = $2",
                &[&trace_id, &signed(sequence)],
            )
            .await?
            .pop())
    }

    async fn get_events(
        &self,
        trace_id: &str,
        since_event_id: u64,
    ) -> Result<Vec<Event>, StoreError> {
        validate_trace_id(trace_id)?;
        let events: Vec<Event> = self
            .json_rows(
                trace_id,
                "agent_events",
                "SELECT event FROM agent_events WHERE trace_id = $1 AND event_id > $2 \
                 ORDER BY event_id",
                &[&trace_id, &signed(since_event_id)],
            )
            .await?;
        if events.is_empty() {
            self.must_exist(trace_id).await?;
        }
        Ok(events)
    }
}
