//! The database schema: migrations embedded in the binary, applied in order when a store
//! connects, under an advisory lock so that nodes starting together apply each once.
//!
//! `agent_schema` holds the version the database is at. A database at a newer version than this
//! build knows is refused ([`SchemaError::TooNew`]): an older node must not write tables whose
//! meaning changed after it was built.

use tokio_postgres::Client;

/// The migrations, in order; the schema version is how many have been applied.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_traces.sql"),
    include_str!("../migrations/0002_runs.sql"),
    include_str!("../migrations/0003_no_row_checks.sql"),
    include_str!("../migrations/0004_approval_warning.sql"),
];

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The advisory lock key migrations run under (any constant the tables' keys cannot collide
/// with: those are taken with two-part keys).
const MIGRATION_LOCK: i64 = 0x6167_656e_745f_6462;

/// Why the schema could not be brought to [`SCHEMA_VERSION`].
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The database was migrated by a newer build.
    #[error(
        "the database's schema is at version {found}, newer than the {known} this build knows; \
         upgrade this program before pointing it at the database"
    )]
    TooNew {
        /// The database's version.
        found: i64,
        /// This build's version.
        known: i64,
    },
    /// The connection pool could not be built.
    #[error("cannot set up the database connections: {0}")]
    Pool(String),
    /// A statement failed.
    #[error("migrating the database failed: {0}")]
    Database(#[from] tokio_postgres::Error),
}

/// Applies the migrations the database lacks; returns the version it is at afterwards.
pub(crate) async fn migrate(client: &mut Client) -> Result<i64, SchemaError> {
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    let result = apply(client).await;
    let unlocked = client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
        .await;
    let version = result?;
    unlocked?;
    Ok(version)
}

async fn apply(client: &mut Client) -> Result<i64, SchemaError> {
    client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS agent_schema (
                 id      INT PRIMARY KEY CHECK (id = 1),
                 version BIGINT NOT NULL
             );
             INSERT INTO agent_schema (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;",
        )
        .await?;
    let found: i64 = client
        .query_one("SELECT version FROM agent_schema WHERE id = 1", &[])
        .await?
        .get(0);
    if found > SCHEMA_VERSION {
        return Err(SchemaError::TooNew {
            found,
            known: SCHEMA_VERSION,
        });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(found.max(0) as usize) {
        let version = index as i64 + 1;
        let txn = client.transaction().await?;
        txn.batch_execute(sql).await?;
        txn.execute(
            "UPDATE agent_schema SET version = $1 WHERE id = 1",
            &[&version],
        )
        .await?;
        txn.commit().await?;
        tracing::info!(version, "applied database migration");
    }
    Ok(SCHEMA_VERSION)
}
