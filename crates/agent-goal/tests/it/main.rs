//! The integration tests of `agent-goal`, in one test binary: property tests of goal commands
//! against the tree's invariants.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod goal_commands;
