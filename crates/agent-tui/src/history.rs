//! What was typed, per project, kept across sessions: one file per project (its git root, or
//! the workspace folder when it is not in a repository) under the user's data folder
//! (`$XDG_DATA_HOME/agent/history/`, else `~/.local/share/agent/history/`), one JSON string a
//! line so that a message of several lines stays one entry. The newest 1,000 entries are kept.

use std::io::Write;
use std::path::{Path, PathBuf};

/// How many entries are read back.
const KEEP: usize = 1000;

/// The entries, oldest first, and the file they are appended to.
#[derive(Debug, Default)]
pub(crate) struct History {
    entries: Vec<String>,
    file: Option<PathBuf>,
}

/// The user's data folder for the agent.
fn data_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_DATA_HOME").filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".local/share"),
    };
    Some(base.join("agent"))
}

/// The project `workspace` belongs to: the nearest folder above it holding `.git`, else itself.
pub(crate) fn project_root(workspace: &Path) -> PathBuf {
    let workspace = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    workspace
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(&workspace)
        .to_path_buf()
}

/// The file name for a project: its folder's name and a hash of its whole path (FNV-1a), so
/// two projects of the same name do not share a history.
fn file_name(root: &Path) -> String {
    let path = root.to_string_lossy();
    let hash = path.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    let name: String = root
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{name}-{hash:016x}.jsonl")
}

impl History {
    /// The history of the project of `workspace`; empty (and not kept) when there is no data
    /// folder. Lines that cannot be read are skipped.
    pub(crate) fn load(workspace: &Path) -> Self {
        let Some(dir) = data_dir() else {
            return Self::default();
        };
        let file = dir
            .join("history")
            .join(file_name(&project_root(workspace)));
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let mut entries: Vec<String> = text
            .lines()
            .filter_map(|line| serde_json::from_str::<String>(line).ok())
            .collect();
        let skip = entries.len().saturating_sub(KEEP);
        entries.drain(..skip);
        Self {
            entries,
            file: Some(file),
        }
    }

    /// A history of `entries` that is not kept anywhere.
    #[cfg(test)]
    pub(crate) fn in_memory(entries: &[&str]) -> Self {
        Self {
            entries: entries.iter().map(|e| (*e).to_owned()).collect(),
            file: None,
        }
    }

    /// The entry `back` places before the newest (0: the newest).
    pub(crate) fn back(&self, back: usize) -> Option<&str> {
        let index = self.entries.len().checked_sub(back + 1)?;
        self.entries.get(index).map(String::as_str)
    }

    /// Adds `entry` (unless it repeats the newest) and appends it to the file. A file that
    /// cannot be written is left alone: the history is a convenience.
    pub(crate) fn add(&mut self, entry: &str) {
        if entry.trim().is_empty() || self.back(0) == Some(entry) {
            return;
        }
        self.entries.push(entry.to_owned());
        let Some(file) = &self.file else {
            return;
        };
        if let Some(dir) = file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let line = serde_json::Value::String(entry.to_owned()).to_string();
        if let Ok(mut out) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
        {
            let _ = writeln!(out, "{line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_of_several_lines_come_back_whole_from_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("h.jsonl");
        let mut history = History {
            entries: Vec::new(),
            file: Some(file.clone()),
        };
        history.add("one\ntwo");
        history.add("one\ntwo");
        history.add("three");
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text, "\"one\\ntwo\"\n\"three\"\n");
        assert_eq!(history.back(1), Some("one\ntwo"));
        assert!(file_name(Path::new("/a/my project")).starts_with("my_project-"));
    }
}
