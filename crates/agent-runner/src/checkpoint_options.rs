//! What an embedder gives to turn checkpoints on: [`CheckpointOptions`] (who takes the
//! snapshots, what an abandon does to the files) and [`RollbackConfirm`], who is asked.

use std::sync::Arc;

use agent_checkpoint::{AbandonRollback, Changes, Checkpointer};
use agent_goal::Goal;

/// Asks whether an abandoned goal's file changes are rolled back ([`AbandonRollback::Ask`]).
pub trait RollbackConfirm: Send + Sync {
    /// Whether to roll back `changes` (what the rollback would do) of the abandoned `goal`.
    fn confirm(&self, goal: &Goal, changes: &Changes) -> bool;
}

/// Checkpoints for a runner: who takes them and what an abandon does to the files.
#[derive(Clone)]
pub struct CheckpointOptions {
    /// Takes the snapshots and restores them.
    pub checkpointer: Arc<dyn Checkpointer>,
    /// Whether an abandoned goal's file changes are rolled back.
    pub abandon_rollback: AbandonRollback,
    /// Who is asked under [`AbandonRollback::Ask`]; without one nothing is rolled back.
    pub confirm: Option<Arc<dyn RollbackConfirm>>,
}

impl CheckpointOptions {
    /// Checkpoints taken by `checkpointer`, abandoned goals' changes kept.
    pub fn new(checkpointer: Arc<dyn Checkpointer>) -> Self {
        Self {
            checkpointer,
            abandon_rollback: AbandonRollback::Never,
            confirm: None,
        }
    }
}

impl std::fmt::Debug for CheckpointOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointOptions")
            .field("abandon_rollback", &self.abandon_rollback)
            .finish_non_exhaustive()
    }
}
