//! What of the writable roots a command may write, and how each protected path is kept: never
//! granted (entry-by-entry grants), mounted read-only, or watched (with the helper).

use std::path::{Path, PathBuf};

use super::{PROTECTED_NAMES, SandboxConfig};

/// The protected paths of `workspace` and of every writable root, canonical where they exist.
pub(super) fn protected_paths(config: &SandboxConfig, workspace: &Path) -> Vec<PathBuf> {
    let roots = std::iter::once(workspace.to_path_buf()).chain(config.writable_roots.clone());
    let named = roots.flat_map(|root| PROTECTED_NAMES.map(|name| root.join(name)));
    named
        .chain(config.protected.iter().cloned())
        .map(|path| path.canonicalize().unwrap_or(path))
        .collect()
}

/// The protected paths of a command started through the helper.
#[derive(Debug, Default)]
pub(super) struct SplitProtected {
    /// Those that exist (canonical), and the targets of the symlinks: mounted read-only.
    pub(super) existing: Vec<PathBuf>,
    /// Those that do not exist: watched.
    pub(super) missing: Vec<PathBuf>,
    /// Those that are symlinks, which a command could replace: never granted.
    pub(super) symlinks: Vec<PathBuf>,
}

/// The protected paths of `workspace` and of every writable root, by what can protect them.
pub(super) fn split_protected(config: &SandboxConfig, workspace: &Path) -> SplitProtected {
    let roots = std::iter::once(workspace.to_path_buf()).chain(
        config
            .writable_roots
            .iter()
            .map(|root| root.canonicalize().unwrap_or_else(|_| root.clone())),
    );
    let named = roots.flat_map(|root| PROTECTED_NAMES.map(|name| root.join(name)));
    let mut split = SplitProtected::default();
    for path in named.chain(config.protected.iter().cloned()) {
        // The entry itself, with the folders above it resolved.
        let entry = match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) => parent
                .canonicalize()
                .map_or_else(|_| path.clone(), |parent| parent.join(name)),
            _ => path.clone(),
        };
        match std::fs::symlink_metadata(&entry) {
            Err(_) => split.missing.push(entry.clone()),
            Ok(meta) if meta.is_symlink() => split.symlinks.push(entry.clone()),
            Ok(_) => {}
        }
        if let Ok(target) = entry.canonicalize()
            && !split.existing.contains(&target)
        {
            split.existing.push(target);
        }
    }
    split
}

/// Adds to `writable` what of `root` may be written: `root` itself when no protected path is at
/// or below it, else each of its entries the same way. Symlinks are never granted (their targets
/// are granted, or not, where they really are).
pub(super) fn grant_tree(root: &Path, protected: &[PathBuf], writable: &mut Vec<PathBuf>) {
    if protected.iter().any(|p| p == root) {
        return;
    }
    if !protected.iter().any(|p| p.starts_with(root)) {
        writable.push(root.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            continue;
        }
        let path = entry.path();
        if kind.is_dir() {
            grant_tree(&path, protected, writable);
        } else if !protected.contains(&path) {
            writable.push(path);
        }
    }
}

/// How deep below the top of a writable root protected names are searched for.
const NESTED_DEPTH: usize = 6;
/// How many entries the search looks at, at most, in all the roots together (breadth first, so
/// what is cut is the deepest).
const NESTED_LIMIT: usize = 20_000;

/// The protected names below the top of the writable `roots` (a nested repository's `.git`, a
/// sub-project's `agent.toml` or `.agent`), without following symlinks: breadth first, to
/// [`NESTED_DEPTH`] levels and [`NESTED_LIMIT`] entries.
pub(super) fn nested_protected(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut queue: std::collections::VecDeque<(PathBuf, usize)> = std::collections::VecDeque::new();
    for root in roots {
        for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
            let name = entry.file_name();
            if entry.file_type().is_ok_and(|kind| kind.is_dir())
                && !PROTECTED_NAMES.iter().any(|protected| name == *protected)
            {
                queue.push_back((entry.path(), 1));
            }
        }
    }
    let mut seen = 0;
    while let Some((dir, depth)) = queue.pop_front() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            seen += 1;
            if seen > NESTED_LIMIT {
                return found;
            }
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if PROTECTED_NAMES.iter().any(|protected| name == *protected) {
                found.push(entry.path());
            } else if kind.is_dir() && depth < NESTED_DEPTH {
                queue.push_back((entry.path(), depth + 1));
            }
        }
    }
    found
}
