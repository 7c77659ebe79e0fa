//! The goal tree: a structured, hierarchical plan that an agent edits itself.
//!
//! This crate owns [`Goal`], [`GoalTree`] and [`GoalStats`], display numbering, the plan text
//! appended to every system prompt, the goal tool's semantics and the roll-up of message
//! statistics. It is pure: no I/O and no async runtime, and it depends on nothing but serde.

mod model;

pub use model::{Goal, GoalStats, GoalStatus, GoalTree, GoalType};
