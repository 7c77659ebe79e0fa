//! `PgRunQueue`: runs shared by nodes. A node that is asked for a run queues it; workers claim
//! queued runs with `FOR UPDATE SKIP LOCKED` under a lease they renew (a heartbeat), so a run
//! whose worker died is claimed again once its lease runs out. Cancel requests, messages for a
//! running run and decisions on risky tool calls go through the same tables, so they reach a
//! run wherever it executes; `NOTIFY agent_runs` rings the nodes concerned, and every wait also
//! polls, so a lost notification only delays.
//!
//! Run settings are opaque JSON here: what they mean is the runner's business. Credentials are
//! never among them: a worker takes its own.

use std::time::Duration;

use agent_execution::Doorbell;
use deadpool_postgres::{Object, Pool};
use serde_json::Value;
use tokio_postgres::types::Json;

use crate::listen::{Listener, RUNS_CHANNEL};
use crate::store::{ConnectError, open};

/// The SQL condition of a run that will still execute: queued, or claimed under a live lease.
pub(crate) const ACTIVE: &str =
    "(status = 'queued' OR (status = 'running' AND lease_until > now()))";

/// Why a queue operation failed.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// The trace has a run queued or running already.
    #[error("trace {0} already has a run queued or running")]
    Busy(String),
    /// The database failed.
    #[error("database: {0}")]
    Database(String),
}

impl From<tokio_postgres::Error> for QueueError {
    fn from(error: tokio_postgres::Error) -> Self {
        Self::Database(error.to_string())
    }
}

/// A run to queue.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRun {
    /// The trace it records into (created before the run is queued).
    pub trace_id: String,
    /// What to do: the runner's word for it (e.g. `start`, `resume`, `continue`).
    pub kind: String,
    /// The message a continued run takes, if any.
    pub input: Option<String>,
    /// The run's settings, as the runner writes them.
    pub settings: Value,
}

/// A run a worker claimed.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedRun {
    /// The run's id in the queue.
    pub run_id: i64,
    /// What it was queued as.
    pub run: NewRun,
    /// How many times it was claimed, this time included: more than 1 after a worker died.
    pub attempts: i32,
    /// Whether someone asked it to stop before it was claimed.
    pub cancel_requested: bool,
}

/// What a renewed lease says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// False when the run is no longer this worker's (its lease ran out and another took it).
    pub kept: bool,
    /// Whether someone asked the run to stop.
    pub cancel_requested: bool,
}

/// A risky tool call a run waits on.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitingCall {
    /// The call's id.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// The arguments as the model wrote them.
    pub arguments: String,
    /// When the run started waiting (RFC 3339).
    pub requested_at: String,
}

/// What became of a decision sent with [`PgRunQueue::decide`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decided {
    /// The waiting run will read it.
    Recorded,
    /// The call was decided before.
    AlreadyDecided,
    /// No such call waits.
    NotWaiting,
}

/// The run queue of one database. Cheap to share behind an `Arc`.
pub struct PgRunQueue {
    pool: Pool,
    listener: Listener,
}

impl std::fmt::Debug for PgRunQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgRunQueue").finish_non_exhaustive()
    }
}

/// Text as PostgreSQL stores it: it refuses NUL characters.
fn text(value: &str) -> String {
    value.replace('\0', "\u{fffd}")
}

impl PgRunQueue {
    /// Connects to the database at `url`, applying the migrations it lacks.
    pub async fn connect(url: &str) -> Result<Self, ConnectError> {
        let (config, pool) = open(url).await?;
        Ok(Self {
            pool,
            listener: Listener::start(config, RUNS_CHANNEL),
        })
    }

    async fn conn(&self) -> Result<Object, QueueError> {
        self.pool
            .get()
            .await
            .map_err(|e| QueueError::Database(format!("no database connection: {e}")))
    }

    async fn notify(&self, conn: &Object, payload: &str) -> Result<(), QueueError> {
        conn.execute("SELECT pg_notify($1, $2)", &[&RUNS_CHANNEL, &payload])
            .await?;
        Ok(())
    }

    /// Rings when a run is queued (or a lease may have run out: see [`Self::claim`]).
    pub fn queued(&self) -> Doorbell {
        self.listener.doorbell("queued")
    }

    /// Rings when the run of a trace is asked something: to stop, a message, a decision.
    pub fn run_changes(&self, trace_id: &str) -> Doorbell {
        self.listener.doorbell(&format!("run:{trace_id}"))
    }

    /// Queues a run; [`QueueError::Busy`] if the trace has one queued or running.
    pub async fn enqueue(&self, run: &NewRun) -> Result<i64, QueueError> {
        let conn = self.conn().await?;
        // A run whose lease ran out with no worker to take it over is done with: a new one
        // replaces it (the trace is resumed from where it stopped either way).
        conn.execute(
            "UPDATE agent_runs SET status = 'done', finished_at = now(), \
             error = 'replaced after its lease ran out' \
             WHERE trace_id = $1 AND status = 'running' AND lease_until <= now()",
            &[&run.trace_id],
        )
        .await?;
        let inserted = conn
            .query_opt(
                "INSERT INTO agent_runs (trace_id, kind, input, settings) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (trace_id) WHERE status <> 'done' DO NOTHING RETURNING run_id",
                &[
                    &run.trace_id,
                    &run.kind,
                    &run.input.as_deref().map(text),
                    &Json(&run.settings),
                ],
            )
            .await?;
        let Some(row) = inserted else {
            return Err(QueueError::Busy(run.trace_id.clone()));
        };
        self.notify(&conn, "queued").await?;
        Ok(row.get(0))
    }

    /// Claims the oldest claimable run for `worker`: a queued one, or one whose lease ran out
    /// (its worker died), under a lease of `lease`.
    pub async fn claim(
        &self,
        worker: &str,
        lease: Duration,
    ) -> Result<Option<ClaimedRun>, QueueError> {
        let conn = self.conn().await?;
        let row = conn
            .query_opt(
                "UPDATE agent_runs SET status = 'running', worker = $1, \
                 lease_until = now() + make_interval(secs => $2), attempts = attempts + 1 \
                 WHERE run_id = (SELECT run_id FROM agent_runs \
                     WHERE status = 'queued' OR (status = 'running' AND lease_until <= now()) \
                     ORDER BY run_id FOR UPDATE SKIP LOCKED LIMIT 1) \
                 RETURNING run_id, trace_id, kind, input, settings, attempts, cancel_requested",
                &[&worker, &lease.as_secs_f64()],
            )
            .await?;
        Ok(row.map(|row| ClaimedRun {
            run_id: row.get(0),
            run: NewRun {
                trace_id: row.get(1),
                kind: row.get(2),
                input: row.get(3),
                settings: row.get::<_, Json<Value>>(4).0,
            },
            attempts: row.get(5),
            cancel_requested: row.get(6),
        }))
    }

    /// Renews the lease of a run `worker` holds.
    pub async fn heartbeat(
        &self,
        run_id: i64,
        worker: &str,
        lease: Duration,
    ) -> Result<Lease, QueueError> {
        let row = self
            .conn()
            .await?
            .query_opt(
                "UPDATE agent_runs SET lease_until = now() + make_interval(secs => $3) \
                 WHERE run_id = $1 AND worker = $2 AND status = 'running' \
                 RETURNING cancel_requested",
                &[&run_id, &worker, &lease.as_secs_f64()],
            )
            .await?;
        Ok(match row {
            Some(row) => Lease {
                kept: true,
                cancel_requested: row.get(0),
            },
            None => Lease {
                kept: false,
                cancel_requested: false,
            },
        })
    }

    /// Marks a run done (with the error that ended it, if any). A run no longer `worker`'s is
    /// left to its new worker.
    pub async fn finish(
        &self,
        run_id: i64,
        worker: &str,
        error: Option<&str>,
    ) -> Result<(), QueueError> {
        let conn = self.conn().await?;
        conn.execute(
            "UPDATE agent_runs SET status = 'done', finished_at = now(), error = $3 \
             WHERE run_id = $1 AND worker = $2 AND status = 'running'",
            &[&run_id, &worker, &error.map(text)],
        )
        .await?;
        Ok(())
    }

    /// Gives a claimed run back to the queue at once (its worker cannot run it now).
    pub async fn release(&self, run_id: i64, worker: &str) -> Result<(), QueueError> {
        let conn = self.conn().await?;
        conn.execute(
            "UPDATE agent_runs SET lease_until = now() \
             WHERE run_id = $1 AND worker = $2 AND status = 'running'",
            &[&run_id, &worker],
        )
        .await?;
        Ok(())
    }

    /// Whether the trace has a run that is queued or running under a live lease.
    pub async fn active(&self, trace_id: &str) -> Result<bool, QueueError> {
        let row = self
            .conn()
            .await?
            .query_one(
                &format!(
                    "SELECT EXISTS (SELECT 1 FROM agent_runs WHERE trace_id = $1 AND {ACTIVE})"
                ),
                &[&trace_id],
            )
            .await?;
        Ok(row.get(0))
    }

    /// Asks the trace's active run to stop; false if it has none.
    pub async fn request_cancel(&self, trace_id: &str) -> Result<bool, QueueError> {
        let conn = self.conn().await?;
        let changed = conn
            .execute(
                &format!(
                    "UPDATE agent_runs SET cancel_requested = true \
                     WHERE trace_id = $1 AND {ACTIVE}"
                ),
                &[&trace_id],
            )
            .await?;
        if changed > 0 {
            self.notify(&conn, &format!("run:{trace_id}")).await?;
        }
        Ok(changed > 0)
    }

    /// Leaves a message for the trace's active run, which puts it before the model's next
    /// call; false (and nothing stored) if the trace has no active run.
    pub async fn send(&self, trace_id: &str, content: &str) -> Result<bool, QueueError> {
        let conn = self.conn().await?;
        let inserted = conn
            .execute(
                &format!(
                    "INSERT INTO agent_run_messages (trace_id, content) SELECT $1, $2 \
                     WHERE EXISTS (SELECT 1 FROM agent_runs WHERE trace_id = $1 AND {ACTIVE})"
                ),
                &[&trace_id, &text(content)],
            )
            .await?;
        if inserted > 0 {
            self.notify(&conn, &format!("run:{trace_id}")).await?;
        }
        Ok(inserted > 0)
    }

    /// Takes the messages left for a trace's run, oldest first.
    pub async fn take_messages(&self, trace_id: &str) -> Result<Vec<String>, QueueError> {
        let rows = self
            .conn()
            .await?
            .query(
                "WITH taken AS (DELETE FROM agent_run_messages WHERE trace_id = $1 \
                 RETURNING message_id, content) SELECT content FROM taken ORDER BY message_id",
                &[&trace_id],
            )
            .await?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }

    /// Records that a run waits on a risky call (again, after a resume: the old decision, if
    /// any, is forgotten).
    pub async fn ask(&self, trace_id: &str, call: &WaitingCall) -> Result<(), QueueError> {
        self.conn()
            .await?
            .execute(
                "INSERT INTO agent_approvals (trace_id, tool_call_id, tool_name, arguments, \
                 requested_at) VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (trace_id, tool_call_id) DO UPDATE SET tool_name = EXCLUDED.tool_name, \
                 arguments = EXCLUDED.arguments, requested_at = EXCLUDED.requested_at, \
                 decision = NULL, reason = NULL",
                &[
                    &trace_id,
                    &call.tool_call_id,
                    &call.tool_name,
                    &text(&call.arguments),
                    &call.requested_at,
                ],
            )
            .await?;
        Ok(())
    }

    /// The decision on a waiting call: `Some((approved, reason))` once made.
    pub async fn decision(
        &self,
        trace_id: &str,
        tool_call_id: &str,
    ) -> Result<Option<(bool, String)>, QueueError> {
        let row = self
            .conn()
            .await?
            .query_opt(
                "SELECT decision, reason FROM agent_approvals \
                 WHERE trace_id = $1 AND tool_call_id = $2 AND decision IS NOT NULL",
                &[&trace_id, &tool_call_id],
            )
            .await?;
        Ok(row.map(|row| {
            let decision: String = row.get(0);
            let reason: Option<String> = row.get(1);
            (decision == "approve", reason.unwrap_or_default())
        }))
    }

    /// Forgets a call the run no longer waits on (decided and read, or the wait ended).
    pub async fn forget(&self, trace_id: &str, tool_call_id: &str) -> Result<(), QueueError> {
        self.conn()
            .await?
            .execute(
                "DELETE FROM agent_approvals WHERE trace_id = $1 AND tool_call_id = $2",
                &[&trace_id, &tool_call_id],
            )
            .await?;
        Ok(())
    }

    /// Decides on a waiting call, from any node.
    pub async fn decide(
        &self,
        trace_id: &str,
        tool_call_id: &str,
        approve: bool,
        reason: Option<&str>,
    ) -> Result<Decided, QueueError> {
        let conn = self.conn().await?;
        let decision = if approve { "approve" } else { "reject" };
        let changed = conn
            .execute(
                "UPDATE agent_approvals SET decision = $3, reason = $4 \
                 WHERE trace_id = $1 AND tool_call_id = $2 AND decision IS NULL",
                &[&trace_id, &tool_call_id, &decision, &reason.map(text)],
            )
            .await?;
        if changed > 0 {
            self.notify(&conn, &format!("run:{trace_id}")).await?;
            return Ok(Decided::Recorded);
        }
        let exists = conn
            .query_opt(
                "SELECT 1 FROM agent_approvals WHERE trace_id = $1 AND tool_call_id = $2",
                &[&trace_id, &tool_call_id],
            )
            .await?
            .is_some();
        Ok(if exists {
            Decided::AlreadyDecided
        } else {
            Decided::NotWaiting
        })
    }

    /// The calls of a trace waiting on a decision, oldest first.
    pub async fn waiting(&self, trace_id: &str) -> Result<Vec<WaitingCall>, QueueError> {
        let rows = self
            .conn()
            .await?
            .query(
                "SELECT tool_call_id, tool_name, arguments, requested_at FROM agent_approvals \
                 WHERE trace_id = $1 AND decision IS NULL ORDER BY requested_at, tool_call_id",
                &[&trace_id],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|row| WaitingCall {
                tool_call_id: row.get(0),
                tool_name: row.get(1),
                arguments: row.get(2),
                requested_at: row.get(3),
            })
            .collect())
    }
}
