//! What makes a run active — queued, or claimed under a live lease — as SQL shared by the run
//! queue, which claims and cancels runs, and the trace store, whose `writer_alive` counts a trace
//! with an active run as written.

/// The SQL condition of a run that will still execute: queued, or claimed under a live lease.
macro_rules! active {
    () => {
        "(status = 'queued' OR (status = 'running' AND lease_until > now()))"
    };
}

/// See [`active!`].
pub(crate) const ACTIVE: &str = active!();

/// Whether trace `$1` has a run that will still execute.
pub(crate) const HAS_ACTIVE_RUN: &str = concat!(
    "SELECT EXISTS (SELECT 1 FROM agent_runs WHERE trace_id = $1 AND ",
    active!(),
    ")"
);
