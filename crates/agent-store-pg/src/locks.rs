//! One writer per trace across processes and nodes: a session-level advisory lock per trace,
//! taken on a connection of the store's own by its first write and held while the trace runs.
//!
//! The lock lives as long as the connection, so a writer that dies (a killed worker, a lost
//! network) releases it: [`Locks::writer_alive`] then says no one writes the trace and another
//! node may resume it. A trace that stops (completed, failed, cancelled, planned) is released
//! so that a long-lived server holds locks only on the traces it runs.
//!
//! Each taking of a lock is a claim with its own number. While the claim stands no other store
//! writes the trace, so the state a commit left is the database's until the next commit: the
//! trace's [`Slot`] keeps it under the claim's number, and the next write begins from it without
//! reading the row again. A state kept under an older claim (the lock was released, or its
//! connection dropped) is not used.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agent_execution::{StoreError, TraceState};
use tokio::sync::Mutex as AsyncMutex;
use tokio_postgres::{Client, Config, NoTls};

use crate::db;

/// The advisory lock key of a trace, computed by the server from the id.
const KEY: &str = "hashtextextended($1, 0)";

/// A trace's state as its last commit through this store left it, under the claim that commit
/// was made in.
pub(crate) struct Kept {
    /// The claim's number.
    pub(crate) claim: u64,
    /// The state, as the database holds it.
    pub(crate) state: TraceState,
}

/// A trace's in-process write lock: the writers of one store are serialised on it, and it keeps
/// the state of the trace's last commit.
pub(crate) type Slot = Arc<AsyncMutex<Option<Kept>>>;

/// The writer locks of one store instance.
pub(crate) struct Locks {
    config: Config,
    /// The connection holding the locks; replaced (and every lock forgotten) when it drops.
    client: AsyncMutex<Option<Client>>,
    /// The traces whose lock this store holds, each with its claim's number.
    held: Mutex<HashMap<String, u64>>,
    /// The number of the next claim.
    claims: AtomicU64,
    slots: Mutex<HashMap<String, Slot>>,
}

impl Locks {
    pub(crate) fn new(config: Config) -> Self {
        Self {
            config,
            client: AsyncMutex::new(None),
            held: Mutex::new(HashMap::new()),
            claims: AtomicU64::new(1),
            slots: Mutex::new(HashMap::new()),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<String, u64>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The trace's in-process write lock.
    pub(crate) fn slot(&self, trace_id: &str) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        slots.entry(trace_id.to_owned()).or_default().clone()
    }

    /// The number of the claim under which this store holds the trace's lock, if it does.
    pub(crate) fn claim(&self, trace_id: &str) -> Option<u64> {
        self.held().get(trace_id).copied()
    }

    /// Takes the trace's lock unless this store holds it; [`StoreError::Locked`] when another
    /// store does. Returns the claim's number.
    pub(crate) async fn acquire(&self, trace_id: &str) -> Result<u64, StoreError> {
        let mut slot = self.client.lock().await;
        if slot.as_ref().is_none_or(Client::is_closed) {
            // A new connection holds no lock: forget what the old one held.
            self.held().clear();
            let (client, connection) = self.config.connect(NoTls).await.map_err(db)?;
            tokio::spawn(async move {
                if let Err(error) = connection.await {
                    tracing::warn!(%error, "the writer-lock connection to the database ended");
                }
            });
            *slot = Some(client);
        }
        if let Some(claim) = self.claim(trace_id) {
            return Ok(claim);
        }
        let Some(client) = slot.as_ref() else {
            return Err(StoreError::Internal("no lock connection".into()));
        };
        let taken: bool = client
            .query_one(&format!("SELECT pg_try_advisory_lock({KEY})"), &[&trace_id])
            .await
            .map_err(db)?
            .get(0);
        if !taken {
            return Err(StoreError::Locked {
                trace_id: trace_id.to_owned(),
                path: format!("advisory lock of {trace_id}").into(),
            });
        }
        let claim = self.claims.fetch_add(1, Ordering::Relaxed);
        self.held().insert(trace_id.to_owned(), claim);
        Ok(claim)
    }

    /// Releases the trace's lock if this store holds it, and forgets the state kept under it
    /// (a writer at work on the trace does not keep it either: its claim is over).
    pub(crate) async fn release(&self, trace_id: &str) -> Result<(), StoreError> {
        if self.held().remove(trace_id).is_none() {
            return Ok(());
        }
        if let Ok(mut kept) = self.slot(trace_id).try_lock() {
            *kept = None;
        }
        let slot = self.client.lock().await;
        if let Some(client) = slot.as_ref().filter(|client| !client.is_closed()) {
            client
                .execute(&format!("SELECT pg_advisory_unlock({KEY})"), &[&trace_id])
                .await
                .map_err(db)?;
        }
        Ok(())
    }

    /// Whether some store, on any node, holds the trace's lock.
    pub(crate) async fn writer_alive(client: &Client, trace_id: &str) -> Result<bool, StoreError> {
        // A bigint advisory key shows in pg_locks as its high half (classid) and low half
        // (objid), with objsubid 1.
        let sql = format!(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted \
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
             AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = {KEY})"
        );
        Ok(client
            .query_one(&sql, &[&trace_id])
            .await
            .map_err(db)?
            .get(0))
    }
}
