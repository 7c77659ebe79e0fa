//! The private temporary folders of runs (`$TMPDIR/agent-run-<id>`, mode 0700): made when a
//! run's first command is confined, removed when the run ends ([`remove_run_temp_dir`]), and,
//! for runs whose process died without removing theirs, at the first command of a later process
//! ([`remove_stale_temp_dirs`]).
//!
//! A folder in use is held with a shared `flock` by the process whose run uses it; one that no
//! process holds and that is older than a minute belongs to no live run.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once, PoisonError};
use std::time::Duration;

use nix::fcntl::{Flock, FlockArg};

use super::SandboxError;

/// The start of every run's folder name.
const PREFIX: &str = "agent-run-";
/// How old a folder nobody holds must be before it counts as stale (a folder is made, then held).
const STALE_AFTER: Duration = Duration::from_secs(60);

/// The folders this process's runs hold, by run id.
static HELD: Mutex<Option<HashMap<String, Flock<File>>>> = Mutex::new(None);

/// The folder name of run `id`.
fn folder(id: &str) -> PathBuf {
    let name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    std::env::temp_dir().join(format!("{PREFIX}{name}"))
}

/// The run's private temporary folder, made (and held) when it does not exist yet.
pub(super) fn private_temp_dir(id: &str) -> Result<PathBuf, SandboxError> {
    static SWEEP: Once = Once::new();
    SWEEP.call_once(|| {
        remove_stale_temp_dirs();
    });
    let path = folder(id);
    let setup = |e: std::io::Error| SandboxError::Setup(format!("{}: {e}", path.display()));
    match std::fs::DirBuilder::new().mode(0o700).create(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let meta = std::fs::symlink_metadata(&path).map_err(setup)?;
            let ours = meta.uid() == nix::unistd::geteuid().as_raw();
            if !meta.is_dir() || !ours || meta.permissions().mode() & 0o077 != 0 {
                return Err(SandboxError::Setup(format!(
                    "{} exists and is not a private folder of this user",
                    path.display()
                )));
            }
        }
        Err(e) => return Err(setup(e)),
    }
    let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
    let held = held.get_or_insert_with(HashMap::new);
    if !held.contains_key(id)
        && let Ok(file) = File::open(&path)
        && let Ok(lock) = Flock::lock(file, FlockArg::LockSharedNonblock)
    {
        held.insert(id.to_owned(), lock);
    }
    path.canonicalize().map_err(setup)
}

/// Removes the private temporary folder of run `id` (its run is over), with everything the
/// run's commands left in it. Nothing happens when there is none.
pub fn remove_run_temp_dir(id: &str) {
    let lock = HELD
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_mut()
        .and_then(|held| held.remove(id));
    let path = folder(id);
    if std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir() && !meta.is_symlink()) {
        remove_tree(&path);
    }
    drop(lock);
}

/// Removes the private temporary folders of runs that are over but were never removed (their
/// process was killed): those of this user that no process holds and that are older than a
/// minute. Returns how many were removed.
pub fn remove_stale_temp_dirs() -> usize {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return 0;
    };
    let me = nix::unistd::geteuid().as_raw();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with(PREFIX) {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|at| at.elapsed().ok())
            .is_some_and(|age| age > STALE_AFTER);
        if !meta.is_dir() || meta.uid() != me || !old {
            continue;
        }
        let Ok(file) = File::open(&path) else {
            continue;
        };
        // Held by a live run: kept.
        let Ok(lock) = Flock::lock(file, FlockArg::LockExclusiveNonblock) else {
            continue;
        };
        if remove_tree(&path) {
            removed += 1;
        }
        drop(lock);
    }
    removed
}

/// Removes a folder and everything in it, making folders a command closed (`chmod 0`) writable
/// again on the way.
fn remove_tree(path: &Path) -> bool {
    if std::fs::remove_dir_all(path).is_ok() {
        return true;
    }
    open_up(path);
    std::fs::remove_dir_all(path).is_ok()
}

fn open_up(dir: &Path) {
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            open_up(&entry.path());
        }
    }
}

/// The private temporary folder of a run, removed when the value is dropped (when the run ends,
/// however it ends); nothing is made until a command needs it.
#[derive(Debug)]
pub struct RunTempDir(String);

impl RunTempDir {
    /// The folder of run `id`, removed when the returned value is dropped.
    pub fn for_run(id: &str) -> Self {
        Self(id.to_owned())
    }
}

impl Drop for RunTempDir {
    fn drop(&mut self) {
        remove_run_temp_dir(&self.0);
    }
}
