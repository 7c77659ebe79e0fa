//! The shadow store: snapshots of a workspace as commits in a git object store of its own,
//! built through an index of its own so a file unchanged since the last snapshot is not read
//! again.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::CheckpointError;
use crate::git::{Git, nul_paths, user_excludes_file};
use crate::log::{Entry, Log, Point};
pub use crate::log::{Snapshot, SnapshotId};

/// The ref the snapshots hang from, newest first, so none is ever garbage.
const SNAPSHOTS_REF: &str = "refs/heads/snapshots";

/// The attributes every snapshot is taken and restored with: bytes as they are (no end-of-line
/// conversion, no filter, no encoding), whatever the workspace's `.gitattributes` say.
const ATTRIBUTES: &str = "* -text -filter -ident -working-tree-encoding\n";

/// How much a snapshot may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// A file larger than this is left out of snapshots (and so never restored or deleted).
    pub max_file_bytes: u64,
    /// A workspace whose kept files add up to more than this is not snapshotted at all.
    pub max_snapshot_bytes: u64,
}

impl Default for Limits {
    /// 10 MiB per file, 1 GiB per snapshot.
    fn default() -> Self {
        Self {
            max_file_bytes: 10 << 20,
            max_snapshot_bytes: 1 << 30,
        }
    }
}

/// The workspace's state written as a tree, not yet a commit.
#[derive(Debug)]
pub(crate) struct Capture {
    pub(crate) tree: String,
    pub(crate) files: usize,
    pub(crate) bytes: u64,
    pub(crate) skipped: Vec<String>,
}

/// The snapshots of one workspace, kept in a git directory of their own (e.g.
/// `<trace folder>/checkpoints.git`). It never reads or writes the workspace's own `.git`,
/// except to read its `info/exclude`.
#[derive(Debug, Clone)]
pub struct CheckpointStore {
    pub(crate) git: Git,
    limits: Limits,
    excluded: Vec<String>,
    pub(crate) log: Log,
}

impl CheckpointStore {
    /// Opens the store at `store_dir` for `workspace`, creating it when missing.
    pub fn open(
        store_dir: impl AsRef<Path>,
        workspace: impl AsRef<Path>,
        limits: Limits,
    ) -> Result<Self, CheckpointError> {
        let store_dir = store_dir.as_ref().to_path_buf();
        let workspace = workspace.as_ref();
        let work_tree =
            fs::canonicalize(workspace).map_err(|e| CheckpointError::io(workspace, e))?;
        fs::create_dir_all(&store_dir).map_err(|e| CheckpointError::io(&store_dir, e))?;
        let store_dir =
            fs::canonicalize(&store_dir).map_err(|e| CheckpointError::io(&store_dir, e))?;
        let git = Git {
            index: store_dir.join("index"),
            excludes_file: user_excludes_file(&work_tree),
            git_dir: store_dir.clone(),
            work_tree,
        };
        if !store_dir.join("HEAD").exists() {
            git.run(["init", "--quiet", "--template="], None)?;
        }
        let mut store = Self {
            log: Log::new(store_dir.join("checkpoints.jsonl")),
            git,
            limits,
            excluded: Vec::new(),
        };
        // The store itself is never part of a snapshot when it lies inside the workspace.
        store.exclude(&store_dir);
        Ok(store)
    }

    /// Opens an existing store at `store_dir` for the workspace it was created for.
    pub fn open_existing(
        store_dir: impl AsRef<Path>,
        limits: Limits,
    ) -> Result<Self, CheckpointError> {
        let store_dir = store_dir.as_ref();
        if !store_dir.join("HEAD").exists() {
            return Err(CheckpointError::io(
                store_dir,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no checkpoint store"),
            ));
        }
        let probe = Git {
            git_dir: store_dir.to_path_buf(),
            work_tree: store_dir.to_path_buf(),
            index: store_dir.join("index"),
            excludes_file: None,
        };
        let config = store_dir.join("config");
        let workspace = probe.text([
            OsStr::new("config"),
            OsStr::new("--file"),
            config.as_os_str(),
            OsStr::new("--get"),
            OsStr::new("core.worktree"),
        ])?;
        Self::open(store_dir, workspace, limits)
    }

    /// Leaves `path` (absolute, or relative to the workspace) out of every snapshot, e.g. the
    /// trace folder when it lies inside the workspace. A path outside the workspace is ignored.
    pub fn exclude(&mut self, path: impl AsRef<Path>) {
        let path = path.as_ref();
        let absolute = if path.is_absolute() {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        } else {
            self.git.work_tree.join(path)
        };
        if let Ok(relative) = absolute.strip_prefix(&self.git.work_tree)
            && !relative.as_os_str().is_empty()
        {
            self.excluded.push(format!(
                "/{}",
                relative.to_string_lossy().replace('\\', "/")
            ));
        }
    }

    /// The workspace this store snapshots.
    pub fn workspace(&self) -> &Path {
        &self.git.work_tree
    }

    /// The store's git directory.
    pub fn store_dir(&self) -> &Path {
        &self.git.git_dir
    }

    /// Takes a snapshot of the workspace's files labelled `label`: tracked and untracked files,
    /// honouring `.gitignore`, `.git/info/exclude` and the global excludes, leaving out files
    /// over the per-file cap. Recorded in the store's log, as is a failure.
    pub fn snapshot(&self, label: &str) -> Result<SnapshotId, CheckpointError> {
        self.snapshot_at(&Point::Label, label).map(|s| s.id)
    }

    /// [`Self::snapshot`] at a point of a run, with what the snapshot kept and left out.
    pub fn snapshot_at(&self, point: &Point, label: &str) -> Result<Snapshot, CheckpointError> {
        let result = self.capture().and_then(|capture| {
            let parent = self.head()?;
            let mut args = vec!["commit-tree".to_owned(), capture.tree.clone()];
            if let Some(parent) = &parent {
                args.extend(["-p".to_owned(), parent.clone()]);
            }
            args.extend(["-m".to_owned(), label.to_owned()]);
            let id = self.git.text(&args)?;
            self.git.run(["update-ref", SNAPSHOTS_REF, &id], None)?;
            Ok(Snapshot {
                id: SnapshotId(id),
                files: capture.files,
                bytes: capture.bytes,
                skipped: capture.skipped,
            })
        });
        let entry = match &result {
            Ok(snapshot) => Entry::taken(point, label, snapshot),
            Err(error) => Entry::failed(point, label, error),
        };
        self.log.append(&entry)?;
        result
    }

    /// The newest snapshot's commit, if any: read from the ref's file, as git writes it, or
    /// asked of `git` when the ref is packed or its file is not a plain commit id.
    fn head(&self) -> Result<Option<String>, CheckpointError> {
        let git_dir = &self.git.git_dir;
        match fs::read_to_string(git_dir.join(SNAPSHOTS_REF)) {
            Ok(text) if is_object_id(text.trim_end()) => {
                return Ok(Some(text.trim_end().to_owned()));
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    && !git_dir.join("packed-refs").exists() =>
            {
                return Ok(None);
            }
            _ => {}
        }
        match self
            .git
            .text(["rev-parse", "--verify", "--quiet", SNAPSHOTS_REF])
        {
            Ok(id) if !id.is_empty() => Ok(Some(id)),
            _ => Ok(None),
        }
    }

    /// Brings the index up to date with the workspace and writes it as a tree.
    pub(crate) fn capture(&self) -> Result<Capture, CheckpointError> {
        self.write_rules()?;
        let listed = self.git.run(
            [
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
            None,
        )?;
        let mut paths = nul_paths(&listed);
        paths.dedup();
        let (mut keep, mut drop, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
        let mut bytes = 0u64;
        for path in paths {
            if path.ends_with('/') {
                skipped.push(path);
                continue;
            }
            match fs::symlink_metadata(self.git.work_tree.join(&path)) {
                Err(_) => drop.push(path),
                Ok(meta) if meta.is_dir() => drop.push(path),
                Ok(meta) if meta.is_file() && meta.len() > self.limits.max_file_bytes => {
                    skipped.push(path.clone());
                    drop.push(path);
                }
                Ok(meta) => {
                    bytes += if meta.is_file() { meta.len() } else { 0 };
                    keep.push(path);
                }
            }
        }
        if bytes > self.limits.max_snapshot_bytes {
            return Err(CheckpointError::TooLarge {
                bytes,
                cap: self.limits.max_snapshot_bytes,
            });
        }
        if !drop.is_empty() {
            self.git.run(
                ["update-index", "-z", "--force-remove", "--stdin"],
                Some(&nul_joined(&drop)),
            )?;
        }
        if !keep.is_empty() {
            self.git.run(
                ["update-index", "-z", "--add", "--remove", "--stdin"],
                Some(&nul_joined(&keep)),
            )?;
        }
        let tree = self.git.text(["write-tree"])?;
        Ok(Capture {
            tree,
            files: keep.len(),
            bytes,
            skipped,
        })
    }

    /// Writes the store's exclude and attribute rules: the workspace's own
    /// `.git/info/exclude`, the paths given to [`Self::exclude`], and bytes kept as they are.
    pub(crate) fn write_rules(&self) -> Result<(), CheckpointError> {
        let info = self.git.git_dir.join("info");
        fs::create_dir_all(&info).map_err(|e| CheckpointError::io(&info, e))?;
        let mut exclude = String::from("/.git\n");
        let own = self.git.work_tree.join(".git").join("info").join("exclude");
        if let Ok(text) = fs::read_to_string(&own) {
            exclude.push_str(&text);
            exclude.push('\n');
        }
        for path in &self.excluded {
            exclude.push_str(path);
            exclude.push('\n');
        }
        write_if_changed(&info.join("exclude"), &exclude)?;
        write_if_changed(&info.join("attributes"), ATTRIBUTES)
    }

    /// Every snapshot and failure recorded, oldest first.
    pub fn entries(&self) -> Result<Vec<Entry>, CheckpointError> {
        self.log.read()
    }

    /// Resolves a snapshot id, a unique prefix of one, or a label of the log (the newest entry
    /// with that label wins).
    pub fn resolve(&self, name: &str) -> Result<SnapshotId, CheckpointError> {
        let entries = self.log.read()?;
        if let Some(id) = entries
            .iter()
            .rev()
            .filter(|e| e.label == name)
            .find_map(|e| e.id.clone())
        {
            return Ok(id);
        }
        let matching: Vec<_> = entries
            .iter()
            .filter_map(|e| e.id.clone())
            .filter(|id| !name.is_empty() && id.0.starts_with(name))
            .collect();
        match matching.first() {
            Some(first) if matching.iter().all(|id| id == first) => Ok(first.clone()),
            _ => Err(CheckpointError::UnknownSnapshot(name.to_owned())),
        }
    }
}

/// Whether `text` is a full object id: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
fn is_object_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64)
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

pub(crate) fn nul_joined(paths: &[String]) -> Vec<u8> {
    let mut out = Vec::new();
    for path in paths {
        out.extend_from_slice(path.as_bytes());
        out.push(0);
    }
    out
}

fn write_if_changed(path: &PathBuf, text: &str) -> Result<(), CheckpointError> {
    if fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    fs::write(path, text).map_err(|e| CheckpointError::io(path, e))
}
