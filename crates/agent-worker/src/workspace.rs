//! Workspace roots: the folders runs started over HTTP may work in.
//!
//! **Invariant:** a run's workspace is canonical (absolute, no `.` or `..`, symbolic links
//! resolved) and is one of the roots or lies under one; anything else is refused before a
//! runner is built. A path outside every root is refused as such whether or not it exists, so
//! the answers tell a client nothing about the server's folders outside the roots.

use std::path::{Component, Path, PathBuf};

/// The folders runs may work in, canonical.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceRoots {
    roots: Vec<PathBuf>,
}

/// Why a workspace was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkspaceError {
    /// The path lies outside every root (after `..` and symbolic links are resolved).
    #[error("{0} is outside the folders runs may work in")]
    Outside(String),
    /// The path lies under a root but does not exist.
    #[error("{0} does not exist")]
    Missing(String),
    /// The path lies under a root but is not a folder.
    #[error("{0} is not a folder")]
    NotAFolder(String),
    /// The path asked for is empty or holds a NUL character.
    #[error("the workspace path is empty or malformed")]
    Malformed,
    /// There are no roots, and the default workspace cannot be used as one.
    #[error("the server's own workspace cannot be used: {0}")]
    OwnUnusable(String),
    /// A root cannot be used as one.
    #[error("the workspace root {path} cannot be used: {reason}")]
    BadRoot {
        /// The root as given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl WorkspaceRoots {
    /// These roots, canonicalised; each must be an existing folder.
    pub fn new(roots: &[PathBuf]) -> Result<Self, WorkspaceError> {
        let mut canonical = Vec::with_capacity(roots.len());
        for root in roots {
            let bad = |reason: String| WorkspaceError::BadRoot {
                path: root.display().to_string(),
                reason,
            };
            let path = root
                .canonicalize()
                .map_err(|error| bad(error.to_string()))?;
            if !path.is_dir() {
                return Err(bad("not a folder".into()));
            }
            canonical.push(path);
        }
        Ok(Self { roots: canonical })
    }

    /// True when no root was given.
    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// The canonical roots.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// `path` canonicalised, if it is an existing folder that is a root or lies under one.
    /// `shown` is how errors name it (what the client asked for, not what it resolved to).
    pub fn check(&self, path: &Path, shown: &str) -> Result<PathBuf, WorkspaceError> {
        let canonical = match path.canonicalize() {
            Ok(canonical) => canonical,
            Err(_) => {
                // It does not exist (or cannot be reached): say so only for a path that would
                // lie under a root.
                return Err(if self.contains(&normalise(path)) {
                    WorkspaceError::Missing(shown.to_owned())
                } else {
                    WorkspaceError::Outside(shown.to_owned())
                });
            }
        };
        if !self.contains(&canonical) {
            return Err(WorkspaceError::Outside(shown.to_owned()));
        }
        if !canonical.is_dir() {
            return Err(WorkspaceError::NotAFolder(shown.to_owned()));
        }
        Ok(canonical)
    }

    fn contains(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| path.starts_with(root))
    }
}

/// `path` made absolute and rid of `.` and `..` by its text alone (symbolic links are not
/// followed: the path need not exist).
fn normalise(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut normal = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal
}

/// The workspace of a run: `requested` (a relative path is taken from `default`), else
/// `default`, checked against `roots` — or, when there are none, against `default` alone.
pub fn resolve(
    roots: &WorkspaceRoots,
    default: &Path,
    requested: Option<&str>,
) -> Result<PathBuf, WorkspaceError> {
    let own;
    let roots = if roots.is_empty() {
        own = WorkspaceRoots::new(&[default.to_path_buf()])
            .map_err(|error| WorkspaceError::OwnUnusable(error.to_string()))?;
        &own
    } else {
        roots
    };
    match requested {
        Some(requested) => {
            if requested.trim().is_empty() || requested.contains('\0') {
                return Err(WorkspaceError::Malformed);
            }
            roots.check(&default.join(requested), requested)
        }
        None => roots.check(default, "the server's own workspace"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspaces_lie_under_a_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
        std::fs::write(root.join("file.txt"), "x").unwrap();
        std::fs::create_dir(dir.path().join("outside")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.path().join("outside"), root.join("escape")).unwrap();
        let roots = WorkspaceRoots::new(std::slice::from_ref(&root)).unwrap();
        let canonical_root = root.canonicalize().unwrap();
        let check = |path: &str| resolve(&roots, &root, Some(path));

        assert_eq!(check("sub").unwrap(), canonical_root.join("sub"));
        assert_eq!(
            check("sub/../sub/deeper").unwrap(),
            canonical_root.join("sub/deeper")
        );
        assert_eq!(check(".").unwrap(), canonical_root);
        assert_eq!(resolve(&roots, &root, None).unwrap(), canonical_root);
        let outside = dir.path().join("outside").display().to_string();
        for path in [
            "..",
            "../outside",
            "../../../etc",
            "/etc",
            "/",
            outside.as_str(),
            "sub/../../x",
        ] {
            let error = check(path).unwrap_err();
            assert!(
                matches!(error, WorkspaceError::Outside(_)),
                "{path}: {error}"
            );
        }
        #[cfg(unix)]
        assert!(matches!(check("escape"), Err(WorkspaceError::Outside(_))));
        for path in ["missing", "file.txt", "sub/missing/.."] {
            let error = check(path).unwrap_err();
            assert!(
                matches!(
                    error,
                    WorkspaceError::Missing(_) | WorkspaceError::NotAFolder(_)
                ),
                "{path}: {error}"
            );
        }
        // Whether a path outside the roots exists is not told.
        assert!(matches!(
            check("/no/such/folder"),
            Err(WorkspaceError::Outside(_))
        ));
        assert_eq!(check(""), Err(WorkspaceError::Malformed));
        // Without roots, the default workspace is the only one.
        let none = WorkspaceRoots::default();
        assert!(resolve(&none, &root, Some("sub")).is_ok());
        assert!(matches!(
            resolve(&none, &root, Some("..")),
            Err(WorkspaceError::Outside(_))
        ));
        assert!(WorkspaceRoots::new(&[dir.path().join("nope")]).is_err());
        assert!(WorkspaceRoots::new(&[root.join("file.txt")]).is_err());
    }
}
