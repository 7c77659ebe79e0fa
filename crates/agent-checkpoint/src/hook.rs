//! What a runner calls at the boundaries of a run: [`Checkpointer`], and
//! [`FolderCheckpoints`], which keeps one store per trace in the trace's folder, and
//! [`TraceCheckpoints`], which opens those stores after the runs.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::error::CheckpointError;
use crate::log::{EntriesExt, Entry, Point};
use crate::restore::{Changes, RestoreOptions};
use crate::store::{CheckpointStore, Limits, Snapshot};

/// The store folder's name inside a trace's folder.
pub const STORE_DIR: &str = "checkpoints.git";

/// A snapshot that could not be taken; `first` is set the first time a trace fails, so the run
/// says it once and goes on.
#[derive(Debug)]
pub struct Failure {
    /// Why.
    pub error: CheckpointError,
    /// Whether this is the trace's first failure.
    pub first: bool,
}

/// What to do with a goal's file changes when the model abandons it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbandonRollback {
    /// Ask the person at the terminal.
    Ask,
    /// Roll them back.
    Always,
    /// Keep them.
    #[default]
    Never,
}

/// Takes the snapshots of a run and rolls goals back. A runner holds one when checkpoints are
/// on; a snapshot is taken at every point it names.
pub trait Checkpointer: Send + Sync {
    /// Takes one snapshot of the workspace for `trace_id`, recorded at each of `points` (a
    /// goal call can end one goal and start another at the same moment). Nothing is taken
    /// when `points` is empty.
    fn checkpoint(&self, trace_id: &str, points: &[Point]) -> Result<Option<Snapshot>, Failure>;

    /// Puts the workspace back as it was when `goal_id` of `trace_id` started (or says what
    /// would change, with `dry_run`); files changed since the newest snapshot by someone else
    /// are kept (the restore is refused) unless `force`.
    fn roll_back_goal(
        &self,
        trace_id: &str,
        goal_id: &str,
        options: RestoreOptions,
    ) -> Result<Changes, CheckpointError>;

    /// Gives each of `branches` (sub-traces of `trace_id` working side by side) a private copy
    /// of the workspace as it is now, or finds the one given before; the copies' folders, in
    /// order. `None` when this checkpointer keeps no copies: the branches share the workspace.
    fn branch_copies(
        &self,
        trace_id: &str,
        branches: &[String],
    ) -> Result<Option<Vec<PathBuf>>, CheckpointError> {
        let _ = (trace_id, branches);
        Ok(None)
    }

    /// What the copy of `branch` changed, or with `apply` what applying it to the workspace
    /// changed (files the workspace changed meanwhile are refused unless `force`).
    fn branch_changes(
        &self,
        trace_id: &str,
        branch: &str,
        apply: bool,
        force: bool,
    ) -> Result<Changes, CheckpointError> {
        let _ = (trace_id, apply, force);
        Err(CheckpointError::UnknownSnapshot(format!("{branch} base")))
    }

    /// The store of `trace_id`, for rewinds and diffs during a session; `None` when the trace
    /// has none (it took no snapshot yet) or this checkpointer keeps no store to open.
    fn open(&self, trace_id: &str) -> Result<Option<Arc<CheckpointStore>>, CheckpointError> {
        let _ = trace_id;
        Ok(None)
    }
}

/// The folder of the private copy of the workspace for `branch` (a sub-trace id): under the
/// system's temporary folder, outside the workspace and the trace folders (whose files the
/// branch's commands may not write).
pub fn branch_copy_dir(branch: &str) -> PathBuf {
    let name: String = branch
        .chars()
        .map(|c| if c == '/' || c == '\\' { '_' } else { c })
        .collect();
    std::env::temp_dir().join("agent-branches").join(name)
}

/// One [`CheckpointStore`] per trace, at `<traces>/<trace_id>/checkpoints.git`, all snapshotting
/// one workspace.
#[derive(Debug)]
pub struct FolderCheckpoints {
    traces: PathBuf,
    workspace: PathBuf,
    limits: Limits,
    stores: Mutex<HashMap<String, Arc<CheckpointStore>>>,
    failed: Mutex<HashSet<String>>,
}

impl FolderCheckpoints {
    /// Stores in the trace folders under `traces`, for `workspace`. The trace folders are left
    /// out of snapshots when they lie inside the workspace.
    pub fn new(traces: impl Into<PathBuf>, workspace: impl Into<PathBuf>, limits: Limits) -> Self {
        let traces = traces.into();
        Self {
            traces: std::path::absolute(&traces).unwrap_or(traces),
            workspace: workspace.into(),
            limits,
            stores: Mutex::new(HashMap::new()),
            failed: Mutex::new(HashSet::new()),
        }
    }

    /// The store of `trace_id`, opened (and created) on first use.
    pub fn store(&self, trace_id: &str) -> Result<Arc<CheckpointStore>, CheckpointError> {
        let mut stores = self.stores.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(store) = stores.get(trace_id) {
            return Ok(store.clone());
        }
        let mut store = CheckpointStore::open(
            store_dir(&self.traces, trace_id),
            &self.workspace,
            self.limits,
        )?;
        store.exclude(&self.traces);
        let store = Arc::new(store);
        stores.insert(trace_id.to_owned(), store.clone());
        Ok(store)
    }
}

/// The stores of the traces kept under one trace folder, opened after their runs: for rewinds
/// and diffs (by the command line and the server alike). Each store snapshots the workspace
/// its run worked in, and leaves the trace folder out as the run did.
#[derive(Debug, Clone)]
pub struct TraceCheckpoints {
    traces: PathBuf,
    limits: Limits,
}

impl TraceCheckpoints {
    /// The stores under the trace folder `traces`, with the caps the runs used (a file left out
    /// of the snapshots is then left alone by restores).
    pub fn new(traces: impl Into<PathBuf>, limits: Limits) -> Self {
        let traces = traces.into();
        Self {
            traces: std::path::absolute(&traces).unwrap_or(traces),
            limits,
        }
    }

    /// Whether `trace_id` has a store (it ran with checkpoints).
    pub fn has(&self, trace_id: &str) -> bool {
        store_dir(&self.traces, trace_id).join("HEAD").exists()
    }

    /// The store of `trace_id`; `None` when the trace has none (it ran without checkpoints).
    pub fn open(&self, trace_id: &str) -> Result<Option<CheckpointStore>, CheckpointError> {
        if !self.has(trace_id) {
            return Ok(None);
        }
        let dir = store_dir(&self.traces, trace_id);
        let mut store = CheckpointStore::open_existing(&dir, self.limits)?;
        store.exclude(&self.traces);
        Ok(Some(store))
    }
}

/// Where the store of `trace_id` lives under the trace folder `traces`.
pub fn store_dir(traces: &Path, trace_id: &str) -> PathBuf {
    traces.join(trace_id).join(STORE_DIR)
}

impl Checkpointer for FolderCheckpoints {
    fn open(&self, trace_id: &str) -> Result<Option<Arc<CheckpointStore>>, CheckpointError> {
        if !store_dir(&self.traces, trace_id).join("HEAD").exists() {
            return Ok(None);
        }
        self.store(trace_id).map(Some)
    }

    fn checkpoint(&self, trace_id: &str, points: &[Point]) -> Result<Option<Snapshot>, Failure> {
        let Some((first, rest)) = points.split_first() else {
            return Ok(None);
        };
        self.store(trace_id)
            .and_then(|store| {
                let snapshot = store.snapshot_at(first, &first.label())?;
                for point in rest {
                    store
                        .log
                        .append(&Entry::taken(point, &point.label(), &snapshot))?;
                }
                Ok(Some(snapshot))
            })
            .map_err(|error| Failure {
                error,
                first: self
                    .failed
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(trace_id.to_owned()),
            })
    }

    fn roll_back_goal(
        &self,
        trace_id: &str,
        goal_id: &str,
        options: RestoreOptions,
    ) -> Result<Changes, CheckpointError> {
        let store = self.store(trace_id)?;
        let start = store
            .entries()?
            .goal_start(goal_id)
            .ok_or_else(|| CheckpointError::UnknownSnapshot(format!("goal {goal_id} start")))?;
        store.restore(&start, options)
    }

    fn branch_copies(
        &self,
        trace_id: &str,
        branches: &[String],
    ) -> Result<Option<Vec<PathBuf>>, CheckpointError> {
        let store = self.store(trace_id)?;
        let mut base = None;
        let mut dirs = Vec::with_capacity(branches.len());
        for branch in branches {
            let dir = branch_copy_dir(branch);
            let label = format!("{branch} base");
            match store.resolve(&label) {
                // Made before (a resumed exploration): the copy is found, or written again
                // from its base when the temporary folder was emptied.
                Ok(_) if dir.exists() => {}
                Ok(id) => store.write_copy(&id, &dir)?,
                Err(_) => {
                    let snapshot = match &base {
                        Some(snapshot) => snapshot,
                        None => base.insert(store.snapshot_at(&Point::Label, "explore start")?),
                    };
                    store
                        .log
                        .append(&Entry::taken(&Point::Label, &label, snapshot))?;
                    if dir.exists() {
                        std::fs::remove_dir_all(&dir).map_err(|e| CheckpointError::io(&dir, e))?;
                    }
                    store.write_copy(&snapshot.id, &dir)?;
                }
            }
            dirs.push(dir);
        }
        Ok(Some(dirs))
    }

    fn branch_changes(
        &self,
        trace_id: &str,
        branch: &str,
        apply: bool,
        force: bool,
    ) -> Result<Changes, CheckpointError> {
        let store = self.store(trace_id)?;
        let base = store.resolve(&format!("{branch} base"))?;
        let dir = branch_copy_dir(branch);
        if apply {
            store.apply_copy(&base, &dir, force)
        } else {
            store.copy_changes(&base, &dir)
        }
    }
}
