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
    use crate::tools::ToolError;

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
