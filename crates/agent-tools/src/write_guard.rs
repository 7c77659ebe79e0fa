//! What the file tools may write, beside the workspace confinement and the protected names
//! (`.git`, `agent.toml`, `.agent/`): nothing at all under the `read-only` sandbox, and never a
//! protected path of the sandbox (the trace folder, when it lies in the workspace). The same
//! settings confine `bash` ([`SandboxConfig`]), so a run's commands and its file tools are
//! held to one rule.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::ToolError;
use crate::sandbox::{SandboxConfig, SandboxMode};

/// The limits of a file-writing tool, from the run's sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteGuard {
    read_only: bool,
    protected: Arc<[PathBuf]>,
}

impl WriteGuard {
    /// The guard of a run whose commands run in `sandbox`: `read-only` writes nothing, and the
    /// sandbox's protected paths are never written.
    pub fn new(sandbox: &SandboxConfig) -> Self {
        let protected: Vec<PathBuf> = sandbox
            .protected
            .iter()
            .flat_map(|path| {
                let canonical = std::fs::canonicalize(path).ok();
                std::iter::once(path.clone()).chain(canonical)
            })
            .collect();
        Self {
            read_only: sandbox.mode == SandboxMode::ReadOnly,
            protected: protected.into(),
        }
    }

    /// This guard at most as loose as `mode` allows.
    #[must_use]
    pub fn confined_to(&self, mode: SandboxMode) -> Self {
        Self {
            read_only: self.read_only || mode == SandboxMode::ReadOnly,
            protected: self.protected.clone(),
        }
    }

    /// Whether this guard writes nothing.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Fails when `tool` may not write `path` (the resolved target), saying why.
    pub(crate) fn check(&self, tool: &str, path: &Path, shown: &str) -> Result<(), ToolError> {
        if self.read_only {
            return Err(ToolError::failed(format!(
                "{tool} cannot write {shown:?}: the sandbox is read-only (`--sandbox read-only`), \
                 so no file is written; say what you would change instead"
            )));
        }
        let resolved = resolved(path);
        if self
            .protected
            .iter()
            .any(|protected| path.starts_with(protected) || resolved.starts_with(protected))
        {
            return Err(ToolError::failed(format!(
                "{shown:?} is protected: the trace folder is never written by tools"
            )));
        }
        Ok(())
    }
}

/// `path` with its nearest existing ancestor resolved (symbolic links followed), the rest as
/// written: a file that does not exist yet resolves through its folder.
fn resolved(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut current = path;
    loop {
        if let Ok(canonical) = std::fs::canonicalize(current) {
            return missing
                .iter()
                .rev()
                .fold(canonical, |path: PathBuf, part| path.join(part));
        }
        match (current.parent(), current.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_owned());
                current = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_writes_nothing_and_the_trace_folder_is_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let traces = dir.path().join(".trace");
        std::fs::create_dir(&traces).unwrap();
        let mut sandbox = SandboxConfig::new(SandboxMode::WorkspaceWrite);
        sandbox.protected = vec![traces.clone()];
        let guard = WriteGuard::new(&sandbox);
        guard
            .check("write_file", &dir.path().join("a.txt"), "a.txt")
            .unwrap();
        let planted = traces.join("t1").join("meta.json");
        let error = guard.check("write_file", &planted, ".trace/t1/meta.json");
        assert!(error.unwrap_err().to_string().contains("trace folder"));
        let read_only = guard.confined_to(SandboxMode::ReadOnly);
        assert!(read_only.is_read_only());
        let error = read_only.check("edit_file", &dir.path().join("a.txt"), "a.txt");
        assert!(error.unwrap_err().to_string().contains("read-only"));
    }
}
