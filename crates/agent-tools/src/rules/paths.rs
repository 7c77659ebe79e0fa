//! The file side of approval rules: a path as a rule sees it (relative to the workspace, after
//! `..` and symlinks), and whether a search or a listing could reach a file a rule names (by a
//! hard link, inside a folder, through a glob).

use std::path::Path;

use globset::GlobMatcher;

/// `path` relative to `workspace` when it lies inside (without `..` escapes), as `/`-separated
/// text.
pub(super) fn relative_path(workspace: &Path, path: &str) -> Option<String> {
    let path = Path::new(path);
    let relative = if path.is_absolute() {
        path.strip_prefix(workspace).ok()?
    } else {
        path
    };
    let mut parts = Vec::new();
    for component in relative.components() {
        match component {
            std::path::Component::Normal(part) => parts.push(part.to_str()?.to_owned()),
            std::path::Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// `path` resolved inside `workspace` (`..` and symlinks followed), relative to it; `None` when
/// it leads outside. A workspace that is not on disk has nothing to resolve: the path is taken
/// as written.
pub(super) fn canonical_relative(workspace: &Path, path: &str) -> Option<String> {
    let Ok(root) = crate::canonical_workspace(workspace) else {
        return relative_path(workspace, path);
    };
    let resolved = crate::resolve_in_workspace(&root, path).ok()?;
    let relative = resolved.strip_prefix(&root).ok()?;
    relative_path(Path::new(""), relative.to_str()?)
}

/// Whether the file `path` (in `workspace`) is a hard link to a file whose name matches `glob`:
/// the same file under another name, which a rule about the name must cover too.
pub(super) fn another_name_matches(workspace: &Path, path: &str, glob: &GlobMatcher) -> bool {
    let Ok(root) = crate::canonical_workspace(workspace) else {
        return false;
    };
    crate::resolve_in_workspace(&root, path)
        .is_ok_and(|file| linked_name_matches(&root, &file, glob))
}

/// Whether `file` has more than one name and one of the names under `root` matches `glob` (a
/// workspace too large to search counts as having one).
fn linked_name_matches(root: &Path, file: &Path, glob: &GlobMatcher) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(file) else {
        return false;
    };
    if !meta.is_file() || meta.nlink() < 2 {
        return false;
    }
    let mut pending = vec![root.to_path_buf()];
    let mut seen = 0;
    while let Some(next) = pending.pop() {
        seen += 1;
        if seen > TREE_LIMIT {
            return true;
        }
        let Ok(entry) = std::fs::symlink_metadata(&next) else {
            continue;
        };
        if entry.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&next) {
                pending.extend(entries.flatten().map(|entry| entry.path()));
            }
        } else if entry.dev() == meta.dev()
            && entry.ino() == meta.ino()
            && next
                .strip_prefix(root)
                .ok()
                .and_then(Path::to_str)
                .is_some_and(|relative| glob.is_match(relative))
        {
            return true;
        }
    }
    false
}

/// How many entries of a folder a `grep` deny check looks at before refusing the search.
const TREE_LIMIT: usize = 20_000;

/// Whether `path` (a file or a folder `grep` searches) is or holds a file matching `glob`; a
/// folder too large to check counts as holding one.
pub(super) fn tree_matches(workspace: &Path, path: &str, glob: &GlobMatcher) -> bool {
    let Ok(root) = crate::canonical_workspace(workspace) else {
        return false;
    };
    let Ok(start) = crate::resolve_in_workspace(&root, path) else {
        return glob.is_match(path);
    };
    let mut pending = vec![start];
    let mut seen = 0;
    while let Some(next) = pending.pop() {
        seen += 1;
        if seen > TREE_LIMIT {
            return true;
        }
        if let Some(relative) = next.strip_prefix(&root).ok().and_then(Path::to_str)
            && (glob.is_match(relative) || linked_name_matches(&root, &next, glob))
        {
            return true;
        }
        if next.is_dir()
            && let Ok(entries) = std::fs::read_dir(&next)
        {
            pending.extend(entries.flatten().map(|entry| entry.path()));
        }
    }
    false
}

/// Whether a `glob_files` listing for `pattern` could name a file matching `glob`: some file of
/// the workspace (ignored ones too) matches both; a pattern that does not compile lists nothing,
/// and a workspace too large to check counts as holding one.
pub(super) fn listing_matches(workspace: &Path, pattern: &str, glob: &GlobMatcher) -> bool {
    let pattern = pattern.trim().trim_start_matches("./");
    let Ok(listed) = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|glob| glob.compile_matcher())
    else {
        return false;
    };
    let Ok(root) = crate::canonical_workspace(workspace) else {
        return glob.is_match(pattern);
    };
    let mut pending = vec![root.clone()];
    let mut seen = 0;
    while let Some(next) = pending.pop() {
        seen += 1;
        if seen > TREE_LIMIT {
            return true;
        }
        // Symbolic links are listed, not followed, as the listing does.
        if next.symlink_metadata().is_ok_and(|meta| meta.is_dir()) {
            if let Ok(entries) = std::fs::read_dir(&next) {
                pending.extend(entries.flatten().map(|entry| entry.path()));
            }
            continue;
        }
        let Some(relative) = next.strip_prefix(&root).ok().and_then(Path::to_str) else {
            continue;
        };
        if !listed.is_match(relative) {
            continue;
        }
        // The name as listed, and the file it leads to.
        let target = canonical_relative(workspace, relative);
        if glob.is_match(relative) || target.is_some_and(|target| glob.is_match(target)) {
            return true;
        }
    }
    false
}
