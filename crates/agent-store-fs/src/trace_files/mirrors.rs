//! The mirror files of a trace (`meta.json`, `goal.json` and the message files): checking that
//! they parse, bringing `meta.json` and `goal.json` up to date after commits, and rebuilding
//! what is missing or behind the log when a process becomes the writer.
//!
//! The mirrors are never the record: `events.jsonl` is, and every mirror can be rebuilt from it.

use std::collections::HashSet;
use std::fs;
use std::path::Path;

use agent_execution::GoalTree;
use agent_execution::ids::message_id;
use agent_execution::{StoreError, Trace};

use super::{GOAL, MESSAGES, META, Slot};
use crate::files::{pretty, write_atomic};

/// How long `meta.json` and `goal.json` may lag behind the log when only message statistics
/// changed. The log is always current; readers of this store never see the lag.
pub(crate) const MIRROR_DELAY: std::time::Duration = std::time::Duration::from_millis(250);

/// Checks that a mirror file, if present, parses; a damaged one is reported by name.
pub(super) fn check_mirror<T: serde::de::DeserializeOwned>(
    path: &Path,
) -> Result<Option<T>, StoreError> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(StoreError::io(path, error)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| StoreError::Corrupt {
            path: path.to_owned(),
            detail: format!(
                "{e}; events.jsonl holds the trace, remove this file to have it rebuilt"
            ),
        })
}

impl Slot {
    /// Rewrites `meta.json` and `goal.json` when they differ from the log, and message files
    /// that are missing.
    pub(super) fn repair_mirrors(&self) -> Result<(), StoreError> {
        let Some(open) = &self.open else {
            return Ok(());
        };
        let Some(state) = &open.state else {
            return Ok(());
        };
        let meta_path = self.dir.join(META);
        if check_mirror::<Trace>(&meta_path)?.as_ref() != Some(&state.trace) {
            write_atomic(&meta_path, &pretty(&state.trace, &meta_path)?)?;
        }
        let goal_path = self.dir.join(GOAL);
        if check_mirror::<GoalTree>(&goal_path)?.as_ref() != Some(&state.goal_tree) {
            write_atomic(&goal_path, &pretty(&state.goal_tree, &goal_path)?)?;
        }
        let messages_dir = self.dir.join(MESSAGES);
        fs::create_dir_all(&messages_dir).map_err(|e| StoreError::io(&messages_dir, e))?;
        let present: HashSet<String> = fs::read_dir(&messages_dir)
            .map_err(|e| StoreError::io(&messages_dir, e))?
            .filter_map(|entry| entry.ok())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        for sequence in 1..=state.last_sequence {
            let name = format!("{}.json", message_id(&state.trace.trace_id, sequence));
            if !present.contains(&name)
                && let Some(message) = self.message_at(open, sequence)?
            {
                let path = messages_dir.join(name);
                write_atomic(&path, &pretty(&message, &path)?)?;
            }
        }
        Ok(())
    }

    /// Writes `meta.json` and `goal.json` if they are behind the state.
    pub(crate) fn flush_mirrors(&mut self) -> Result<(), StoreError> {
        let Some(open) = self.open.as_mut() else {
            return Ok(());
        };
        let Some(state) = &open.state else {
            return Ok(());
        };
        if open.meta_dirty {
            let path = self.dir.join(META);
            write_atomic(&path, &pretty(&state.trace, &path)?)?;
            open.meta_dirty = false;
        }
        if open.goal_dirty {
            let path = self.dir.join(GOAL);
            write_atomic(&path, &pretty(&state.goal_tree, &path)?)?;
            open.goal_dirty = false;
        }
        open.mirrored_at = std::time::Instant::now();
        Ok(())
    }
}

/// A slot dropped between delayed writes still leaves `meta.json` and `goal.json` current.
impl Drop for Slot {
    fn drop(&mut self) {
        if let Err(error) = self.flush_mirrors() {
            tracing::warn!(%error, "could not bring the mirror files up to date");
        }
    }
}
