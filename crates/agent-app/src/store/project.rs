//! Where a project's traces live by default: one folder per project (its git root, else the
//! folder itself) under the user's data folder, `$XDG_DATA_HOME/agent/traces/<project>` (else
//! `~/.local/share/agent/traces/<project>`), so that nothing is written into the workspace and
//! every sub-folder of a project sees the same traces. A `.trace` folder at the project's root,
//! where traces were kept before, is still found and used.

use std::path::{Path, PathBuf};

/// The folder name traces were kept in, at the root of a project.
pub const LEGACY: &str = ".trace";

/// The project `dir` belongs to: the nearest folder at or above it holding `.git`, else `dir`
/// itself (made absolute).
pub fn root(dir: &Path) -> PathBuf {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    dir.ancestors()
        .find(|folder| folder.join(".git").exists())
        .map_or_else(|| dir.clone(), Path::to_path_buf)
}

/// The name of a project's trace folder: its root's path with every character but letters,
/// digits, `.` and `_` made a `-` (`/home/me/app` → `-home-me-app`), readable and unique.
pub fn key(root: &Path) -> String {
    root.to_string_lossy()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Why a project's trace folder is the one it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// The project's own `.trace`, kept from before.
    Legacy,
    /// The project's folder under the user's data folder.
    DataDir,
    /// `.trace` in the current folder: there is no home to keep traces in.
    NoHome,
}

/// The default trace folder of the project `dir` belongs to, with the user's data folder of
/// agent (`data_dir`, see [`crate::config::Environment::data_dir`]), and why it is that one.
pub fn trace_dir(dir: &Path, data_dir: Option<&Path>) -> (PathBuf, Found) {
    let root = root(dir);
    let legacy = root.join(LEGACY);
    if legacy.is_dir() {
        return (legacy, Found::Legacy);
    }
    match data_dir {
        Some(data) => (data.join("traces").join(key(&root)), Found::DataDir),
        None => (PathBuf::from(LEGACY), Found::NoHome),
    }
}

/// The notice that a project's old `.trace` folder `dir` is used, for a front end to say once.
pub fn legacy_notice(dir: &Path, data_dir: Option<&Path>) -> String {
    format!(
        "agent: using this project's trace folder {} (new projects keep theirs in {})",
        dir.display(),
        data_dir.map_or_else(
            || "the user's data folder".to_owned(),
            |d| d.join("traces").display().to_string()
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_is_its_git_root_and_its_key_is_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        let repo = std::fs::canonicalize(&repo).unwrap();
        assert_eq!(root(&repo.join("src/deep")), repo);
        let plain = dir.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        assert_eq!(root(&plain), std::fs::canonicalize(&plain).unwrap());
        assert_eq!(key(Path::new("/home/me/my app")), "-home-me-my-app");
        assert_eq!(key(Path::new("/srv/a_b.c")), "-srv-a_b.c");
    }

    #[test]
    fn an_old_trace_folder_at_the_root_is_used() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join(".trace")).unwrap();
        std::fs::create_dir_all(repo.join("src")).unwrap();
        let (found, why) = trace_dir(&repo.join("src"), None);
        assert_eq!(why, Found::Legacy);
        assert_eq!(found, std::fs::canonicalize(&repo).unwrap().join(".trace"));
    }
}
