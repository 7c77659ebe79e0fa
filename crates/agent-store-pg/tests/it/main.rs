//! The integration tests of `agent-store-pg`, in one test binary, each against a throwaway
//! PostgreSQL cluster of its own: the conformance suite, live watching across store instances,
//! one writer per trace, the schema version, the run queue.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod conformance;
mod fence;
mod nodes;
mod queue;
