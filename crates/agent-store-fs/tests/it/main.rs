//! The integration tests of `agent-store-fs`, in one test binary: the conformance suite in both
//! durability modes, SIGKILL at random moments, damaged and tampered trace folders.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod checkpoint;
mod conformance;
mod crash;
mod files;
mod follow;
mod hostile_log;
mod old_traces;
mod reads;
