//! Checkpoints of runs: on by default when traces are kept in a folder (each trace's snapshots
//! in its own folder), off with `[checkpoints] enabled = false` or a database store; what an
//! abandoned goal's changes become (`abandon_rollback`: the run's profile's, else agent.toml's).
//! A run whose front end can ask a person gives a [`RollbackConfirm`]; without one, `ask` keeps
//! the changes (nobody is asked), as for runs started over HTTP or by a worker.

use std::path::Path;
use std::sync::Arc;

use agent_checkpoint::{AbandonRollback, FolderCheckpoints, Limits};
use agent_runner::{CheckpointOptions, RollbackConfirm};

use crate::config::FileConfig;
use crate::store::Location;

/// The checkpoints of a run working in `workspace` whose traces are kept at `location`: `None`
/// when they are off, or when traces are kept in a database. `profile_rollback`, the run's
/// profile's `abandon_rollback`, wins over agent.toml's top-level one; the default is `ask`
/// when `confirm` can ask someone, else `never`.
pub fn options(
    location: &Location,
    workspace: &Path,
    file: &FileConfig,
    profile_rollback: Option<AbandonRollback>,
    confirm: Option<Arc<dyn RollbackConfirm>>,
) -> Option<CheckpointOptions> {
    let config = file.checkpoints.clone().unwrap_or_default();
    if config.enabled == Some(false) {
        return None;
    }
    let folder = location.folder()?;
    let rollback = match (profile_rollback.or(file.abandon_rollback), &confirm) {
        (Some(AbandonRollback::Ask) | None, Some(_)) => AbandonRollback::Ask,
        // Nobody to ask: the changes stay.
        (Some(AbandonRollback::Ask) | None, None) => AbandonRollback::Never,
        (Some(rollback), _) => rollback,
    };
    let checkpointer =
        FolderCheckpoints::new(folder.clone(), workspace.to_path_buf(), limits(file));
    let mut options = CheckpointOptions::new(Arc::new(checkpointer));
    options.abandon_rollback = rollback;
    if rollback == AbandonRollback::Ask {
        options.confirm = confirm;
    }
    Some(options)
}

/// The caps of `[checkpoints]`, the defaults where it says nothing. Restores and diffs use the
/// same caps as the runs, so a file left out of the snapshots is left alone.
pub fn limits(file: &FileConfig) -> Limits {
    let config = file.checkpoints.clone().unwrap_or_default();
    let defaults = Limits::default();
    Limits {
        max_file_bytes: config.max_file_bytes.unwrap_or(defaults.max_file_bytes),
        max_snapshot_bytes: config
            .max_snapshot_bytes
            .unwrap_or(defaults.max_snapshot_bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Yes;

    impl RollbackConfirm for Yes {
        fn confirm(&self, _: &agent_goal::Goal, _: &agent_checkpoint::Changes) -> bool {
            true
        }
    }

    #[test]
    fn ask_needs_someone_to_ask_and_a_database_has_no_checkpoints() {
        let folder = Location::Folder("/tmp/traces".into());
        let file = FileConfig::default();
        let work = Path::new("/tmp/work");
        let asked = options(&folder, work, &file, None, Some(Arc::new(Yes))).unwrap();
        assert_eq!(asked.abandon_rollback, AbandonRollback::Ask);
        assert!(asked.confirm.is_some());
        let alone = options(&folder, work, &file, None, None).unwrap();
        assert_eq!(alone.abandon_rollback, AbandonRollback::Never);
        let always = Some(AbandonRollback::Always);
        let profile = options(&folder, work, &file, always, None).unwrap();
        assert_eq!(profile.abandon_rollback, AbandonRollback::Always);
        let database = Location::Postgres("postgres://h/db".into());
        assert!(options(&database, work, &file, None, None).is_none());
    }
}
