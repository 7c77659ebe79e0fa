//! What a PostgreSQL commit is made of, read from the bench's own cluster: the server's WAL
//! flushes (`pg_stat_wal`, with `track_wal_io_timing` on) over a run, and a bare round trip
//! (`SELECT 1`, prepared, through the client library the store uses). Together with the run's
//! time they split a step's two commits into the flush, the trip and the rest (executing the
//! statement, committing, the loop), to set against the filesystem store's two `fdatasync`s.

use std::time::Instant;

use anyhow::{Context, Result};
use tokio_postgres::{Client, NoTls};

/// A connection of the bench's own to the cluster, apart from the store's.
pub(crate) async fn connect(url: &str) -> Result<Client> {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .with_context(|| format!("cannot connect to {url}"))?;
    tokio::spawn(async move {
        // The connection ends when the client is dropped.
        let _ = connection.await;
    });
    Ok(client)
}

/// The WAL flushes the server has made since its statistics were last reset, and the seconds
/// they took.
pub(crate) async fn wal_flushes(client: &Client) -> Result<(i64, f64)> {
    let row = client
        .query_one("SELECT wal_sync, wal_sync_time FROM pg_stat_wal", &[])
        .await
        .context("cannot read pg_stat_wal")?;
    let (flushes, millis): (i64, f64) = (row.get(0), row.get(1));
    Ok((flushes, millis / 1e3))
}

/// Seconds per bare round trip to the server: `times` prepared `SELECT 1`, one after another.
pub(crate) async fn round_trip(client: &Client, times: u32) -> Result<f64> {
    let statement = client.prepare("SELECT 1").await?;
    // The first calls warm the server's caches and the connection.
    for _ in 0..10 {
        client.query_one(&statement, &[]).await?;
    }
    let started = Instant::now();
    for _ in 0..times {
        client.query_one(&statement, &[]).await?;
    }
    Ok(started.elapsed().as_secs_f64() / f64::from(times.max(1)))
}
