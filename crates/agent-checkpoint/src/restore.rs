//! Restoring a snapshot into the workspace, and diffs between snapshots and the workspace.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::CheckpointError;
use crate::git::nul_paths;
use crate::log::{EntriesExt, Point};
use crate::store::{CheckpointStore, SnapshotId, nul_joined};

/// How to restore.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RestoreOptions {
    /// Overwrite files changed since the newest snapshot too.
    pub force: bool,
    /// Only say what would change.
    pub dry_run: bool,
}

/// The files a restore changed (or would change), relative to the workspace, sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Changes {
    /// Files brought back that were not there.
    pub added: Vec<String>,
    /// Files whose content (or mode) is put back.
    pub modified: Vec<String>,
    /// Files removed because the snapshot did not have them.
    pub deleted: Vec<String>,
}

impl Changes {
    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.deleted.is_empty()
    }
}

/// The other side of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffTarget {
    /// A snapshot.
    Snapshot(SnapshotId),
    /// The workspace as it is now.
    Workspace,
}

impl CheckpointStore {
    /// Puts the workspace's files back as they were in snapshot `id`: files the snapshot had are
    /// written back, files kept since then are deleted. Ignored files and files over the
    /// per-file cap are never touched. A file changed since the newest snapshot (by someone
    /// other than the run) that the restore would change is refused, with nothing changed,
    /// unless `force`.
    pub fn restore(
        &self,
        id: &SnapshotId,
        options: RestoreOptions,
    ) -> Result<Changes, CheckpointError> {
        let target = self.tree_of(id)?;
        let latest = self.log.read()?.latest_snapshot();
        let now = self.capture()?.tree;
        let changes = self.changes_between(&now, &target)?;
        if !options.force
            && let Some(latest) = latest
        {
            let latest = self.tree_of(&latest)?;
            self.refuse_conflicts(&latest, &now, &changes)?;
        }
        if options.dry_run || changes.is_empty() {
            return Ok(changes);
        }
        self.write_back(&target, &changes)?;
        self.snapshot_at(&Point::Restored, &format!("restored {id}"))?;
        Ok(changes)
    }

    /// The unified diff of the files from snapshot `from` to `to` (binary files are named, not
    /// shown).
    pub fn diff(&self, from: &SnapshotId, to: &DiffTarget) -> Result<String, CheckpointError> {
        let from = self.tree_of(from)?;
        let to = match to {
            DiffTarget::Snapshot(id) => self.tree_of(id)?,
            DiffTarget::Workspace => self.capture()?.tree,
        };
        let out = self.git.run(
            [
                "diff-tree",
                "-p",
                "-r",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--find-renames",
                &from,
                &to,
            ],
            None,
        )?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// What restoring `to` over `from` changes.
    pub(crate) fn changes_between(&self, from: &str, to: &str) -> Result<Changes, CheckpointError> {
        let out = self.git.run(
            [
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--name-status",
                from,
                to,
            ],
            None,
        )?;
        let fields = nul_paths(&out);
        let mut changes = Changes::default();
        for pair in fields.chunks(2) {
            let [status, path] = pair else { continue };
            match status.as_str() {
                "A" => changes.added.push(path.clone()),
                "D" => changes.deleted.push(path.clone()),
                _ => changes.modified.push(path.clone()),
            }
        }
        Ok(changes)
    }

    /// Refuses `changes` when they touch a file that changed from tree `since` to tree `now`
    /// (changed by someone else, which the changes would overwrite).
    pub(crate) fn refuse_conflicts(
        &self,
        since: &str,
        now: &str,
        changes: &Changes,
    ) -> Result<(), CheckpointError> {
        let touched: BTreeSet<String> = self.changed_paths(since, now)?.into_iter().collect();
        let conflicts: Vec<String> = changes
            .added
            .iter()
            .chain(&changes.modified)
            .chain(&changes.deleted)
            .filter(|p| touched.contains(*p))
            .cloned()
            .collect();
        if conflicts.is_empty() {
            Ok(())
        } else {
            Err(CheckpointError::Conflicts { paths: conflicts })
        }
    }

    pub(crate) fn changed_paths(
        &self,
        from: &str,
        to: &str,
    ) -> Result<Vec<String>, CheckpointError> {
        let out = self.git.run(
            [
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--name-only",
                from,
                to,
            ],
            None,
        )?;
        Ok(nul_paths(&out))
    }

    pub(crate) fn tree_of(&self, id: &SnapshotId) -> Result<String, CheckpointError> {
        let spec = format!("{}^{{tree}}", id.0);
        self.git
            .text(["rev-parse", "--verify", "--quiet", &spec])
            .ok()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| CheckpointError::UnknownSnapshot(id.0.clone()))
    }

    /// Writes the added and modified files from `tree` through a scratch index, then deletes
    /// the deleted ones and the folders they leave empty.
    pub(crate) fn write_back(&self, tree: &str, changes: &Changes) -> Result<(), CheckpointError> {
        let work_tree = &self.git.work_tree;
        let mut writes: Vec<String> = changes.added.clone();
        writes.extend(changes.modified.iter().cloned());
        if !writes.is_empty() {
            let mut scratch = self.git.clone();
            scratch.index = self.git.git_dir.join("restore-index");
            // A file that became a folder (or the other way round) must go before its
            // replacement can be written.
            for path in &writes {
                let full = work_tree.join(path);
                if full.is_dir() && !full.is_symlink() {
                    crate::beneath::remove_dir_all(work_tree, Path::new(path))
                        .map_err(|e| CheckpointError::io(&full, e))?;
                }
            }
            scratch.run(["read-tree", tree], None)?;
            let written = scratch.run(
                ["checkout-index", "-f", "-z", "--stdin"],
                Some(&nul_joined(&writes)),
            );
            let _ = fs::remove_file(&scratch.index);
            written?;
        }
        // Without following a symlink below the workspace: a folder swapped for one fails the
        // removal rather than sending it outside.
        for path in &changes.deleted {
            let full = work_tree.join(path);
            match crate::beneath::remove_file(work_tree, Path::new(path)) {
                Ok(()) => remove_empty_parents(Path::new(path), work_tree),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(CheckpointError::io(&full, e)),
            }
        }
        Ok(())
    }
}

fn remove_empty_parents(file: &Path, root: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
        if crate::beneath::remove_dir(root, d).is_err() {
            break;
        }
        dir = d.parent();
    }
}
