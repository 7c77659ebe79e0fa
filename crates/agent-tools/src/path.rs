//! Workspace confinement: the one function every file tool resolves its paths through.
//!
//! A path is resolved component by component the way the operating system would: existing
//! components are canonicalized (so symlinks are followed and `..` goes to the real parent), and
//! components below the first missing one are applied lexically. The result must lie inside the
//! canonical workspace root.

use std::path::{Component, Path, PathBuf};

use super::ToolError;

/// The canonical form of a workspace root.
///
/// # Errors
///
/// Fails when the workspace does not exist.
pub fn canonical_workspace(workspace: &Path) -> Result<PathBuf, ToolError> {
    std::fs::canonicalize(workspace)
        .map_err(|e| ToolError::io("open the workspace", &workspace.display().to_string(), e))
}

/// Resolves `path` (relative to the workspace, or absolute inside it) to a path inside the
/// workspace, following symlinks of the parts that exist.
///
/// # Errors
///
/// [`ToolError::OutsideWorkspace`] when the path, after following `..` and symlinks, leaves the
/// workspace; [`ToolError::Failed`] for an empty path or a symlink whose target does not exist.
pub fn resolve_in_workspace(workspace: &Path, path: &str) -> Result<PathBuf, ToolError> {
    if path.trim().is_empty() {
        return Err(ToolError::failed("path must not be empty"));
    }
    let root = canonical_workspace(workspace)?;
    let outside = || ToolError::OutsideWorkspace {
        path: path.to_owned(),
    };
    let mut resolved = root.clone();
    let mut exists = true;
    for component in Path::new(path).components() {
        match component {
            Component::Prefix(_) | Component::RootDir => {
                resolved = PathBuf::from(component.as_os_str());
                exists = true;
            }
            Component::CurDir => {}
            Component::ParentDir => {
                // Popping a canonical path gives its real parent; below a missing component
                // nothing can be a symlink, so popping lexically is exact there too.
                resolved.pop();
            }
            Component::Normal(name) => {
                resolved.push(name);
                if exists {
                    match std::fs::symlink_metadata(&resolved) {
                        Ok(_) => {
                            resolved = std::fs::canonicalize(&resolved).map_err(|_| {
                                ToolError::failed(format!(
                                    "path {path:?} goes through a symlink whose target does not exist"
                                ))
                            })?;
                        }
                        Err(_) => exists = false,
                    }
                }
            }
        }
    }
    if resolved.starts_with(&root) {
        Ok(resolved)
    } else {
        Err(outside())
    }
}

/// Checks that an open file lies inside the canonical workspace `root`, by the path the kernel
/// has for it, not the path it was opened by.
///
/// [`resolve_in_workspace`] checks a path before it is used; another process can swap a folder
/// of that path for a symlink to somewhere else in between. Opening first and checking what was
/// opened closes that gap: a file opened outside is refused (and the caller removes a file it
/// created there). On systems other than Linux, where the opened path cannot be read back this
/// way, the check passes.
pub(crate) fn check_opened(
    root: &Path,
    file: &std::fs::File,
    shown: &str,
) -> Result<(), ToolError> {
    match opened_path(file) {
        Some(real) if !real.starts_with(root) => Err(ToolError::OutsideWorkspace {
            path: shown.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// The path the kernel has for an open file, when it can tell.
#[cfg(target_os = "linux")]
pub(crate) fn opened_path(file: &std::fs::File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

/// The path the kernel has for an open file, when it can tell.
#[cfg(not(target_os = "linux"))]
pub(crate) fn opened_path(_file: &std::fs::File) -> Option<PathBuf> {
    None
}

/// Opens a path resolved by [`resolve_in_workspace`] for reading, refusing it when what was
/// opened is not inside `root` (see [`check_opened`]). Only files and folders are opened: a
/// named pipe or a device would block the open or never end.
pub(crate) fn open_inside(
    root: &Path,
    path: &Path,
    shown: &str,
) -> Result<std::fs::File, ToolError> {
    let kind = std::fs::metadata(path).map_err(|e| ToolError::io("read", shown, e))?;
    if !(kind.is_file() || kind.is_dir()) {
        return Err(ToolError::failed(format!(
            "{shown:?} is not a regular file (a pipe, socket or device); it cannot be read"
        )));
    }
    let file = std::fs::File::open(path).map_err(|e| ToolError::io("read", shown, e))?;
    check_opened(root, &file, shown)?;
    Ok(file)
}

/// The path of `absolute` relative to the workspace root, with `/` separators, for display.
pub(crate) fn display_relative(root: &Path, absolute: &Path) -> String {
    match absolute.strip_prefix(root) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
        Ok(relative) => relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => absolute.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::{display_relative, resolve_in_workspace};
    use crate::ToolError;

    #[test]
    fn resolves_inside_and_refuses_outside() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.txt"), "a").unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        symlink(outside.path(), root.join("out")).unwrap();
        symlink(root.join("sub"), root.join("in")).unwrap();
        symlink(root.join("nowhere"), root.join("dangling")).unwrap();

        let ok = |p: &str| resolve_in_workspace(&root, p).unwrap();
        assert_eq!(ok("sub/a.txt"), root.join("sub/a.txt"));
        assert_eq!(ok("./sub/../sub/a.txt"), root.join("sub/a.txt"));
        assert_eq!(ok("new/deeper/file.txt"), root.join("new/deeper/file.txt"));
        assert_eq!(ok("new/../b.txt"), root.join("b.txt"));
        assert_eq!(
            ok(root.join("sub/a.txt").to_str().unwrap()),
            root.join("sub/a.txt")
        );
        assert_eq!(ok("in/a.txt"), root.join("sub/a.txt"));
        assert_eq!(ok("."), root);

        let outside_err = |p: &str| match resolve_in_workspace(&root, p) {
            Err(e @ ToolError::OutsideWorkspace { .. }) => e.to_string(),
            other => panic!("{p}: expected an outside-workspace error, got {other:?}"),
        };
        assert_eq!(
            outside_err("../x"),
            "path \"../x\" is outside the workspace"
        );
        outside_err("sub/../../x");
        outside_err("new/../../x");
        outside_err("/etc/passwd");
        outside_err("out/secret");
        outside_err("out/new-file");
        outside_err("in/../../x");

        assert!(resolve_in_workspace(&root, "").is_err());
        assert!(
            resolve_in_workspace(&root, "dangling")
                .unwrap_err()
                .to_string()
                .contains("symlink")
        );
    }

    #[test]
    fn relative_display_uses_forward_slashes() {
        let root = std::path::Path::new("/w");
        assert_eq!(
            display_relative(root, std::path::Path::new("/w/a/b.rs")),
            "a/b.rs"
        );
        assert_eq!(display_relative(root, root), ".");
    }
}
