//! Project files the user accepted. A project's `agent.toml` comes with the repository, so
//! whoever wrote the repository wrote it: the commands it asks to run as hooks run only once
//! the user has accepted that file as it is now (`agent trust`). What was accepted is kept in
//! the user's data folder (`trusted.json`: each file's path and the SHA-256 of its contents),
//! so a changed file must be accepted again. Every door refuses the hooks of a project file
//! not accepted (they do not run; a notice says why), none asks on its own.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let file = dir.path().join("agent.toml");
//! std::fs::write(&file, "[[hooks.Stop]]\ncommand = \"true\"\n").unwrap();
//! let data = dir.path().join("data");
//! assert!(!agent_app::trust::accepted(&data, &file));
//! agent_app::trust::accept(&data, &file).unwrap();
//! assert!(agent_app::trust::accepted(&data, &file));
//! std::fs::write(&file, "[[hooks.Stop]]\ncommand = \"rm -rf ~\"\n").unwrap();
//! assert!(!agent_app::trust::accepted(&data, &file));
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// The file of accepted project files, in the user's data folder.
pub const TRUST_FILE: &str = "trusted.json";

/// What `trusted.json` holds.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Trusted {
    /// The SHA-256 (hex) of each accepted file's contents, by its canonical path.
    files: BTreeMap<PathBuf, String>,
}

/// The SHA-256 of `file`'s contents, in hex; `None` when it cannot be read.
pub fn hash(file: &Path) -> Option<String> {
    let bytes = std::fs::read(file).ok()?;
    let digest = Sha256::digest(&bytes);
    Some(digest.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// The accepted files under `data_dir` (none when the file is missing or unreadable).
fn read(data_dir: &Path) -> Trusted {
    std::fs::read(data_dir.join(TRUST_FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Whether the user accepted `file` as it is now.
pub fn accepted(data_dir: &Path, file: &Path) -> bool {
    let Ok(path) = file.canonicalize() else {
        return false;
    };
    let Some(now) = hash(&path) else {
        return false;
    };
    read(data_dir).files.get(&path) == Some(&now)
}

/// Records that the user accepted `file` as it is now (written through a temporary file and
/// a rename, so a crash leaves the old list or the new one).
pub fn accept(data_dir: &Path, file: &Path) -> Result<()> {
    let path = file
        .canonicalize()
        .map_err(|error| Error::io(format!("cannot read {}", file.display()), error))?;
    let now = hash(&path).ok_or_else(|| Error::usage(format!("cannot read {}", path.display())))?;
    let mut trusted = read(data_dir);
    trusted.files.insert(path, now);
    std::fs::create_dir_all(data_dir)
        .map_err(|error| Error::io(format!("cannot create {}", data_dir.display()), error))?;
    let text = serde_json::to_vec_pretty(&trusted)
        .map_err(|error| Error::usage(format!("cannot write the accepted files: {error}")))?;
    let target = data_dir.join(TRUST_FILE);
    let temporary = data_dir.join(format!(".{TRUST_FILE}.{}", std::process::id()));
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, &target))
        .map_err(|error| Error::io(format!("cannot write {}", target.display()), error))
}
