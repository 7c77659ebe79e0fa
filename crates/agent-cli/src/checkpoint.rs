//! Checkpoints for the runs of the `agent` binary: on by default when traces are kept in a
//! folder (each trace's snapshots in its own folder), `[checkpoints]` and `abandon_rollback` of
//! `agent.toml`, and the question asked at the terminal under `abandon_rollback = "ask"`; the
//! same for runs started over HTTP or by a worker, where nobody is asked.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_checkpoint::{AbandonRollback, Changes, FolderCheckpoints, Limits};
use agent_goal::Goal;
use agent_runner::{CheckpointOptions, RollbackConfirm};

use crate::config::FileConfig;
use crate::store::Location;

/// The checkpoints of runs working in `workspace` whose traces are kept at `location`: `None`
/// when they are off, or when traces are kept in a database. `profile_rollback`, the run's
/// profile's `abandon_rollback`, wins over agent.toml's top-level one.
pub(crate) fn options(
    location: &Location,
    workspace: &Path,
    file: &FileConfig,
    profile_rollback: Option<AbandonRollback>,
) -> Option<CheckpointOptions> {
    let config = file.checkpoints.clone().unwrap_or_default();
    if config.enabled == Some(false) {
        return None;
    }
    let folder = location.folder()?;
    let limits = limits(file);
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let rollback = profile_rollback
        .or(file.abandon_rollback)
        .unwrap_or(if interactive {
            AbandonRollback::Ask
        } else {
            AbandonRollback::Never
        });
    let checkpointer = FolderCheckpoints::new(folder.clone(), workspace.to_path_buf(), limits);
    let mut options = CheckpointOptions::new(Arc::new(checkpointer));
    options.abandon_rollback = rollback;
    if rollback == AbandonRollback::Ask && interactive {
        options.confirm = Some(Arc::new(TerminalConfirm));
    }
    Some(options)
}

/// Checkpoints for runs nobody follows at a terminal (started over HTTP, or by a worker): as
/// [`options`] gives them, for each run's own workspace. Nobody can be asked about an abandoned
/// goal, so its changes are kept unless agent.toml says `abandon_rollback = "always"`.
#[derive(Debug, Clone)]
pub(crate) struct Unattended {
    traces: PathBuf,
    limits: Limits,
    rollback: AbandonRollback,
}

impl Unattended {
    /// `None` when checkpoints are off or traces are kept in a database.
    pub(crate) fn new(location: &Location, file: &FileConfig) -> Option<Self> {
        let config = file.checkpoints.clone().unwrap_or_default();
        if config.enabled == Some(false) {
            return None;
        }
        let rollback = match file.abandon_rollback {
            Some(AbandonRollback::Always) => AbandonRollback::Always,
            _ => AbandonRollback::Never,
        };
        Some(Self {
            traces: location.folder()?.clone(),
            limits: limits(file),
            rollback,
        })
    }

    /// The checkpoints of a run working in `workspace`.
    pub(crate) fn options(&self, workspace: &Path) -> CheckpointOptions {
        let checkpointer =
            FolderCheckpoints::new(self.traces.clone(), workspace.to_path_buf(), self.limits);
        let mut options = CheckpointOptions::new(Arc::new(checkpointer));
        options.abandon_rollback = self.rollback;
        options
    }
}

/// The caps of `[checkpoints]`, the defaults where it says nothing. Restores and diffs use the
/// same caps as the runs, so a file left out of the snapshots is left alone.
pub(crate) fn limits(file: &FileConfig) -> Limits {
    let config = file.checkpoints.clone().unwrap_or_default();
    let defaults = Limits::default();
    Limits {
        max_file_bytes: config.max_file_bytes.unwrap_or(defaults.max_file_bytes),
        max_snapshot_bytes: config
            .max_snapshot_bytes
            .unwrap_or(defaults.max_snapshot_bytes),
    }
}

/// Asks at the terminal whether an abandoned goal's changes are rolled back.
struct TerminalConfirm;

impl RollbackConfirm for TerminalConfirm {
    #[allow(clippy::print_stderr)]
    fn confirm(&self, goal: &Goal, changes: &Changes) -> bool {
        crate::output::suspended(|| {
            eprint!(
                "goal {} ({}) was abandoned; roll back its file changes ({} added, {} modified, \
                 {} deleted)? [y/N] ",
                goal.id,
                crate::output::one_line(&goal.description),
                changes.deleted.len(),
                changes.modified.len(),
                changes.added.len()
            );
            let _ = std::io::stderr().flush();
            let mut line = String::new();
            let read = std::io::stdin().lock().read_line(&mut line);
            read.is_ok() && matches!(line.trim(), "y" | "Y" | "yes")
        })
    }
}
