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
use agent_execution::queue::{
    ClaimedRun, Decided, Decision, Lease, QueueError, QueuedRun, RunKind, RunQueue, WaitingCall,
};
use async_trait::async_trait;
use deadpool_postgres::{Object, Pool};
use serde_json::Value;
use tokio_postgres::types::Json;

use crate::active::{ACTIVE, HAS_ACTIVE_RUN};
use crate::listen::{Listener, RUNS_CHANNEL};
use crate::store::{ConnectError, open};

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

fn failed(error: tokio_postgres::Error) -> QueueError {
    QueueError::Unavailable(crate::describe(&error))
}

/// A run's kind as stored: a word, and the message of a continue.
fn kind_columns(kind: &RunKind) -> (&'static str, Option<&str>) {
    match kind {
        RunKind::Start => ("start", None),
        RunKind::Resume => ("resume", None),
        RunKind::Continue(message) => ("continue", Some(message)),
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
            listener: Listener::new(config, RUNS_CHANNEL),
        })
    }

    async fn conn(&self) -> Result<Object, QueueError> {
        self.pool
            .get()
            .await
            .map_err(|e| QueueError::Unavailable(format!("no database connection: {e}")))
    }

    async fn notify(&self, conn: &Object, payload: &str) -> Result<(), QueueError> {
        conn.execute("SELECT pg_notify($1, $2)", &[&RUNS_CHANNEL, &payload])
            .await
            .map_err(failed)?;
        Ok(())
    }
}

#[async_trait]
impl RunQueue for PgRunQueue {
    fn queued(&self) -> Doorbell {
        self.listener.doorbell("queued")
    }

    fn run_changes(&self, trace_id: &str) -> Doorbell {
        self.listener.doorbell(&format!("run:{trace_id}"))
    }

    async fn enqueue(&self, run: &QueuedRun) -> Result<i64, QueueError> {
        let (kind, input) = kind_columns(&run.kind);
        let conn = self.conn().await?;
        // A run whose lease ran out with no worker to take it over is done with: a new one
        // replaces it (the trace is resumed from where it stopped either way).
        conn.execute(
            "UPDATE agent_runs SET status = 'done', finished_at = now(), \
             error = 'replaced after its lease ran out' \
             WHERE trace_id = $1 AND status = 'running' AND lease_until <= now()",
            &[&run.trace_id],
        )
        .await
        .map_err(failed)?;
        let inserted = conn
            .query_opt(
                "INSERT INTO agent_runs (trace_id, kind, input, settings) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (trace_id) WHERE status <> 'done' DO NOTHING RETURNING run_id",
                &[&run.trace_id, &kind, &input.map(text), &Json(&run.settings)],
            )
            .await
            .map_err(failed)?;
        let Some(row) = inserted else {
            return Err(QueueError::Busy(run.trace_id.clone()));
        };
        self.notify(&conn, "queued").await?;
        Ok(row.get(0))
    }

    async fn claim(&self, worker: &str, lease: Duration) -> Result<Option<ClaimedRun>, QueueError> {
        let conn = self.conn().await?;
        let row = conn
            .query_opt(
                "UPDATE agent_runs SET status = 'running', worker = $1, \
                 lease_until = now() + make_interval(secs => $2), attempts = attempts + 1 \
                 WHERE run_id = (SELECT run_id FROM agent_runs \
                     WHERE status = 'queued' OR (status = 'running' AND lease_until <= now() \
                         AND worker IS DISTINCT FROM $1) \
                     ORDER BY run_id FOR UPDATE SKIP LOCKED LIMIT 1) \
                 RETURNING run_id, trace_id, kind, input, settings, attempts, cancel_requested",
                &[&worker, &lease.as_secs_f64()],
            )
            .await
            .map_err(failed)?;
        let Some(row) = row else {
            return Ok(None);
        };
        let run_id: i64 = row.get(0);
        let trace_id: String = row.get(1);
        let kind = match (
            row.get::<_, String>(2).as_str(),
            row.get::<_, Option<String>>(3),
        ) {
            ("start", _) => RunKind::Start,
            ("resume", _) => RunKind::Resume,
            ("continue", Some(message)) => RunKind::Continue(message),
            (other, _) => {
                // Not this build's to run: record why, so that it is not claimed again.
                let error = format!("unknown run kind {other:?}");
                self.finish(run_id, worker, Some(&error)).await?;
                return Err(QueueError::Unavailable(format!(
                    "a queued run of trace {trace_id} has an {error}"
                )));
            }
        };
        let attempts: i32 = row.get(5);
        if attempts > 1 {
            // The messages the dead worker took but did not see recorded go to this attempt.
            self.conn()
                .await?
                .execute(
                    "UPDATE agent_run_messages SET delivered = false WHERE trace_id = $1",
                    &[&trace_id],
                )
                .await
                .map_err(failed)?;
        }
        Ok(Some(ClaimedRun {
            run_id,
            run: QueuedRun {
                trace_id,
                kind,
                settings: row.get::<_, Json<Value>>(4).0,
            },
            attempts,
            cancel_requested: row.get(6),
        }))
    }

    async fn heartbeat(
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
            .await
            .map_err(failed)?;
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

    async fn finish(
        &self,
        run_id: i64,
        worker: &str,
        error: Option<&str>,
    ) -> Result<(), QueueError> {
        let conn = self.conn().await?;
        conn.execute(
            "WITH done AS (UPDATE agent_runs SET status = 'done', finished_at = now(), \
             error = $3 WHERE run_id = $1 AND worker = $2 AND status = 'running' \
             RETURNING trace_id) \
             DELETE FROM agent_run_messages WHERE delivered \
             AND trace_id IN (SELECT trace_id FROM done)",
            &[&run_id, &worker, &error.map(text)],
        )
        .await
        .map_err(failed)?;
        Ok(())
    }

    async fn release(&self, run_id: i64, worker: &str) -> Result<(), QueueError> {
        let conn = self.conn().await?;
        conn.execute(
            "UPDATE agent_runs SET lease_until = now() \
             WHERE run_id = $1 AND worker = $2 AND status = 'running'",
            &[&run_id, &worker],
        )
        .await
        .map_err(failed)?;
        Ok(())
    }

    async fn active(&self, trace_id: &str) -> Result<bool, QueueError> {
        let row = self
            .conn()
            .await?
            .query_one(HAS_ACTIVE_RUN, &[&trace_id])
            .await
            .map_err(failed)?;
        Ok(row.get(0))
    }

    async fn cancel(&self, trace_id: &str) -> Result<bool, QueueError> {
        let conn = self.conn().await?;
        let changed = conn
            .execute(
                &format!(
                    "UPDATE agent_runs SET cancel_requested = true \
                     WHERE trace_id = $1 AND {ACTIVE}"
                ),
                &[&trace_id],
            )
            .await
            .map_err(failed)?;
        if changed > 0 {
            self.notify(&conn, &format!("run:{trace_id}")).await?;
        }
        Ok(changed > 0)
    }

    async fn send(&self, trace_id: &str, content: &str) -> Result<bool, QueueError> {
        let conn = self.conn().await?;
        let inserted = conn
            .execute(
                &format!(
                    "INSERT INTO agent_run_messages (trace_id, content) SELECT $1, $2 \
                     WHERE EXISTS (SELECT 1 FROM agent_runs WHERE trace_id = $1 AND {ACTIVE})"
                ),
                &[&trace_id, &text(content)],
            )
            .await
            .map_err(failed)?;
        if inserted > 0 {
            self.notify(&conn, &format!("run:{trace_id}")).await?;
        }
        Ok(inserted > 0)
    }

    async fn take_messages(&self, trace_id: &str) -> Result<Vec<String>, QueueError> {
        let rows = self
            .conn()
            .await?
            .query(
                "WITH taken AS (UPDATE agent_run_messages SET delivered = true \
                 WHERE trace_id = $1 AND NOT delivered RETURNING message_id, content) \
                 SELECT content FROM taken ORDER BY message_id",
                &[&trace_id],
            )
            .await
            .map_err(failed)?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }

    async fn ask(&self, trace_id: &str, call: &WaitingCall) -> Result<(), QueueError> {
        self.conn()
            .await?
            .execute(
                "INSERT INTO agent_approvals (trace_id, tool_call_id, tool_name, arguments, \
                 requested_at, warning) VALUES ($1, $2, $3, $4, $5, $6) \
                 ON CONFLICT (trace_id, tool_call_id) DO UPDATE SET tool_name = EXCLUDED.tool_name, \
                 arguments = EXCLUDED.arguments, requested_at = EXCLUDED.requested_at, \
                 warning = EXCLUDED.warning, decision = NULL, reason = NULL",
                &[
                    &trace_id,
                    &call.tool_call_id,
                    &call.tool_name,
                    &text(&call.arguments),
                    &call.requested_at,
                    &call.warning.as_deref().map(text),
                ],
            )
            .await
            .map_err(failed)?;
        Ok(())
    }

    async fn decision(
        &self,
        trace_id: &str,
        tool_call_id: &str,
    ) -> Result<Option<Decision>, QueueError> {
        let row = self
            .conn()
            .await?
            .query_opt(
                "SELECT decision, reason FROM agent_approvals \
                 WHERE trace_id = $1 AND tool_call_id = $2 AND decision IS NOT NULL",
                &[&trace_id, &tool_call_id],
            )
            .await
            .map_err(failed)?;
        Ok(row.map(|row| {
            let decision: String = row.get(0);
            let reason: Option<String> = row.get(1);
            Decision {
                approve: decision == "approve",
                reason: reason.unwrap_or_default(),
            }
        }))
    }

    async fn forget(&self, trace_id: &str, tool_call_id: &str) -> Result<(), QueueError> {
        self.conn()
            .await?
            .execute(
                "DELETE FROM agent_approvals WHERE trace_id = $1 AND tool_call_id = $2",
                &[&trace_id, &tool_call_id],
            )
            .await
            .map_err(failed)?;
        Ok(())
    }

    async fn decide(
        &self,
        trace_id: &str,
        tool_call_id: &str,
        decision: &Decision,
    ) -> Result<Decided, QueueError> {
        if tool_call_id.contains('\0') {
            // No call id holds one (they are stored as PostgreSQL text).
            return Ok(Decided::NotWaiting);
        }
        let conn = self.conn().await?;
        let reason = (!decision.approve).then_some(decision.reason.as_str());
        let decision = if decision.approve {
            "approve"
        } else {
            "reject"
        };
        let changed = conn
            .execute(
                "UPDATE agent_approvals SET decision = $3, reason = $4 \
                 WHERE trace_id = $1 AND tool_call_id = $2 AND decision IS NULL",
                &[&trace_id, &tool_call_id, &decision, &reason.map(text)],
            )
            .await
            .map_err(failed)?;
        if changed > 0 {
            self.notify(&conn, &format!("run:{trace_id}")).await?;
            return Ok(Decided::Recorded);
        }
        let exists = conn
            .query_opt(
                "SELECT 1 FROM agent_approvals WHERE trace_id = $1 AND tool_call_id = $2",
                &[&trace_id, &tool_call_id],
            )
            .await
            .map_err(failed)?
            .is_some();
        Ok(if exists {
            Decided::AlreadyDecided
        } else {
            Decided::NotWaiting
        })
    }

    async fn waiting(&self, trace_id: &str) -> Result<Vec<WaitingCall>, QueueError> {
        let rows = self
            .conn()
            .await?
            .query(
                "SELECT tool_call_id, tool_name, arguments, requested_at, warning \
                 FROM agent_approvals \
                 WHERE trace_id = $1 AND decision IS NULL ORDER BY requested_at, tool_call_id",
                &[&trace_id],
            )
            .await
            .map_err(failed)?;
        Ok(rows
            .iter()
            .map(|row| WaitingCall {
                tool_call_id: row.get(0),
                tool_name: row.get(1),
                arguments: row.get(2),
                requested_at: row.get(3),
                warning: row.get(4),
            })
            .collect())
    }
}
