//! Private copies of the workspace for parallel branches: a copy is written from a snapshot,
//! worked on apart from the workspace and the other copies, and the changes of the one chosen
//! are applied to the workspace.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::CheckpointError;
use crate::log::Point;
use crate::restore::Changes;
use crate::store::{CheckpointStore, SnapshotId};

impl CheckpointStore {
    /// Writes the files of snapshot `base` into `dir`, a folder outside the workspace that does
    /// not exist yet or is empty: a private copy to work on apart from the workspace. The
    /// copy holds what the snapshot holds (ignored files and files over the per-file cap are
    /// not in it).
    pub fn write_copy(&self, base: &SnapshotId, dir: &Path) -> Result<(), CheckpointError> {
        let tree = self.tree_of(base)?;
        fs::create_dir_all(dir).map_err(|e| CheckpointError::io(dir, e))?;
        let dir = fs::canonicalize(dir).map_err(|e| CheckpointError::io(dir, e))?;
        if dir.starts_with(self.workspace()) {
            return Err(CheckpointError::io(
                &dir,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "a copy cannot lie inside the workspace it copies",
                ),
            ));
        }
        let mut copy = self.git.clone();
        copy.work_tree = dir;
        copy.index = scratch_index(self);
        copy.run(["read-tree", &tree], None)?;
        let written = copy.run(["checkout-index", "--all", "--force"], None);
        let _ = fs::remove_file(&copy.index);
        written.map(|_| ())
    }

    /// What the copy in `dir`, written from `base` by [`Self::write_copy`], changed: files
    /// added, modified and deleted there, as applying it would change them in the workspace.
    pub fn copy_changes(&self, base: &SnapshotId, dir: &Path) -> Result<Changes, CheckpointError> {
        let base = self.tree_of(base)?;
        let tree = self.copy_tree(dir)?;
        self.changes_between(&base, &tree)
    }

    /// Applies what the copy in `dir` changed since `base` to the workspace. A file the copy
    /// changed that was also changed in the workspace since `base` is refused, with nothing
    /// changed, unless `force`. The workspace is snapshotted after.
    pub fn apply_copy(
        &self,
        base: &SnapshotId,
        dir: &Path,
        force: bool,
    ) -> Result<Changes, CheckpointError> {
        let base_tree = self.tree_of(base)?;
        let copy = self.copy_tree(dir)?;
        let changes = self.changes_between(&base_tree, &copy)?;
        if changes.is_empty() {
            return Ok(changes);
        }
        if !force {
            let now = self.capture()?.tree;
            self.refuse_conflicts(&base_tree, &now, &changes)?;
        }
        self.write_back(&copy, &changes)?;
        self.snapshot_at(&Point::Restored, &format!("applied {}", dir.display()))?;
        Ok(changes)
    }

    /// The copy in `dir` written as a tree of this store (so its files share the store's
    /// objects), through an index of the copy's own.
    fn copy_tree(&self, dir: &Path) -> Result<String, CheckpointError> {
        let dir = fs::canonicalize(dir).map_err(|e| CheckpointError::io(dir, e))?;
        let mut copy = self.clone();
        copy.git.work_tree = dir;
        copy.git.index = scratch_index(self);
        let _ = fs::remove_file(&copy.git.index);
        let captured = copy.capture();
        let _ = fs::remove_file(&copy.git.index);
        // The rules file names the workspace's own excludes again.
        self.write_rules()?;
        captured.map(|capture| capture.tree)
    }
}

/// An index file of the store's own for one use, never shared by two at once.
fn scratch_index(store: &CheckpointStore) -> std::path::PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    store
        .git
        .git_dir
        .join(format!("copy-index-{}-{n}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Limits;

    #[test]
    fn copies_work_apart_and_the_chosen_one_is_applied() {
        let workspace = tempfile::tempdir().unwrap();
        let traces = tempfile::tempdir().unwrap();
        let root = workspace.path();
        fs::write(root.join("shared.txt"), "base").unwrap();
        fs::write(root.join("gone.txt"), "to delete").unwrap();
        fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
        fs::create_dir(root.join("ignored")).unwrap();
        fs::write(root.join("ignored/big.bin"), "cache").unwrap();
        let store =
            CheckpointStore::open(traces.path().join("c.git"), root, Limits::default()).unwrap();
        let base = store.snapshot("explore start").unwrap();
        let (a, b) = (traces.path().join("a"), traces.path().join("b"));
        store.write_copy(&base, &a).unwrap();
        store.write_copy(&base, &b).unwrap();
        assert_eq!(fs::read_to_string(a.join("shared.txt")).unwrap(), "base");
        assert!(!a.join("ignored").exists());
        // Each copy changes the same file its own way; neither sees the other's.
        fs::write(a.join("shared.txt"), "from A").unwrap();
        fs::write(b.join("shared.txt"), "from B").unwrap();
        fs::write(b.join("new.txt"), "B's file").unwrap();
        fs::remove_file(b.join("gone.txt")).unwrap();
        assert_eq!(fs::read_to_string(a.join("shared.txt")).unwrap(), "from A");
        assert_eq!(fs::read_to_string(root.join("shared.txt")).unwrap(), "base");
        let changes = store.copy_changes(&base, &b).unwrap();
        assert_eq!(changes.added, ["new.txt"]);
        assert_eq!(changes.modified, ["shared.txt"]);
        assert_eq!(changes.deleted, ["gone.txt"]);

        let applied = store.apply_copy(&base, &b, false).unwrap();
        assert_eq!(applied, changes);
        assert_eq!(
            fs::read_to_string(root.join("shared.txt")).unwrap(),
            "from B"
        );
        assert_eq!(
            fs::read_to_string(root.join("new.txt")).unwrap(),
            "B's file"
        );
        assert!(!root.join("gone.txt").exists());
        assert_eq!(
            fs::read_to_string(root.join("ignored/big.bin")).unwrap(),
            "cache"
        );
    }

    #[test]
    fn a_file_changed_in_the_workspace_meanwhile_is_not_overwritten_unless_forced() {
        let workspace = tempfile::tempdir().unwrap();
        let traces = tempfile::tempdir().unwrap();
        let root = workspace.path();
        fs::write(root.join("f.txt"), "base").unwrap();
        let store =
            CheckpointStore::open(traces.path().join("c.git"), root, Limits::default()).unwrap();
        let base = store.snapshot("start").unwrap();
        let copy = traces.path().join("copy");
        store.write_copy(&base, &copy).unwrap();
        fs::write(copy.join("f.txt"), "branch").unwrap();
        fs::write(root.join("f.txt"), "user").unwrap();
        let refused = store.apply_copy(&base, &copy, false).unwrap_err();
        assert!(
            matches!(&refused, CheckpointError::Conflicts { paths } if paths == &["f.txt"]),
            "{refused}"
        );
        assert_eq!(fs::read_to_string(root.join("f.txt")).unwrap(), "user");
        store.apply_copy(&base, &copy, true).unwrap();
        assert_eq!(fs::read_to_string(root.join("f.txt")).unwrap(), "branch");
    }

    #[test]
    fn a_copy_inside_the_workspace_is_refused() {
        let workspace = tempfile::tempdir().unwrap();
        let traces = tempfile::tempdir().unwrap();
        let store = CheckpointStore::open(
            traces.path().join("c.git"),
            workspace.path(),
            Limits::default(),
        )
        .unwrap();
        let base = store.snapshot("start").unwrap();
        let inside = workspace.path().join("copy");
        assert!(store.write_copy(&base, &inside).is_err());
    }
}
