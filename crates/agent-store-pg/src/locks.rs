//! One writer per trace across processes and nodes: a session-level advisory lock per trace,
//! taken on a connection of the store's own by its first write and held while the trace runs.
//!
//! The lock lives as long as the connection, so a writer that dies (a killed worker, a lost
//! network) releases it: [`Locks::writer_alive`] then says no one writes the trace and another
//! node may resume it. A trace that stops (completed, failed, cancelled, planned) is released
//! so that a long-lived server holds locks only on the traces it runs.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use agent_execution::StoreError;
use tokio::sync::Mutex as AsyncMutex;
use tokio_postgres::{Client, Config, NoTls};

use crate::db;

/// The advisory lock key of a trace, computed by the server from the id.
const KEY: &str = "hashtextextended($1, 0)";

/// The writer locks of one store instance.
pub(crate) struct Locks {
    config: Config,
    /// The connection holding the locks; replaced (and every lock forgotten) when it drops.
    client: AsyncMutex<Option<Client>>,
    held: Mutex<HashSet<String>>,
}

impl Locks {
    pub(crate) fn new(config: Config) -> Self {
        Self {
            config,
            client: AsyncMutex::new(None),
            held: Mutex::new(HashSet::new()),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the trace's lock unless this store holds it; [`StoreError::Locked`] when another
    /// store does.
    pub(crate) async fn acquire(&self, trace_id: &str) -> Result<(), StoreError> {
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
        if self.held().contains(trace_id) {
            return Ok(());
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
        self.held().insert(trace_id.to_owned());
        Ok(())
    }

    /// Releases the trace's lock if this store holds it.
    pub(crate) async fn release(&self, trace_id: &str) -> Result<(), StoreError> {
        if !self.held().remove(trace_id) {
            return Ok(());
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
