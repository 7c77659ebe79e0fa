//! The mirror files of a trace (`meta.json`, `goal.json` and the message files): checking that
//! they parse, bringing `meta.json` and `goal.json` up to date after commits, writing the
//! message files the flusher takes in batches, and rebuilding what is missing or behind the log
//! when a process becomes the writer.
//!
//! The mirrors are never the record: `events.jsonl` is, and every mirror can be rebuilt from it.
//! A commit only notes which message files fell behind (`pending`); the flusher takes them in
//! batches under the trace's lock (reading each message back through the index) and writes
//! them after letting the lock go, so a commit costs about its log append.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

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
    /// Rewrites `meta.json` and `goal.json` when they differ from the log, and hands the
    /// message files that are missing, or may be behind the log after a crash, to the flusher.
    pub(super) fn repair_mirrors(&mut self) -> Result<(), StoreError> {
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
        let trace_id = state.trace.trace_id.clone();
        let Some(open) = self.open.as_mut() else {
            return Ok(());
        };
        for (index, &(offset, _)) in open.messages.iter().enumerate() {
            let sequence = index as u64 + 1;
            let name = format!("{}.json", message_id(&trace_id, sequence));
            if !present.contains(&name) {
                open.pending.insert(sequence, false);
            } else if offset >= open.mirrored {
                // Its newest version may not have reached the file before a crash.
                open.pending.entry(sequence).or_insert(true);
            }
        }
        Ok(())
    }

    /// Writes `meta.json` and `goal.json` if they are behind the state.
    pub(crate) fn flush_meta(&mut self) -> Result<(), StoreError> {
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

    /// Takes up to `limit` message files that are behind the log, with their content read back
    /// through the index; `None` (and the flusher no longer told) when none are.
    pub(crate) fn take_mirrors(&mut self, limit: usize) -> Result<Option<MirrorBatch>, StoreError> {
        let taken = self.take_mirrors_inner(limit);
        if let (Err(_), Some(open)) = (&taken, self.open.as_mut()) {
            // Told again by the next commit.
            open.scheduled = false;
        }
        taken
    }

    fn take_mirrors_inner(&mut self, limit: usize) -> Result<Option<MirrorBatch>, StoreError> {
        let Some(open) = self.open.as_ref() else {
            return Ok(None);
        };
        let Some(trace_id) = open.state.as_ref().map(|s| s.trace.trace_id.clone()) else {
            return Ok(None);
        };
        let taken: Vec<(u64, bool)> = open
            .pending
            .iter()
            .take(limit)
            .map(|(&sequence, &verify)| (sequence, verify))
            .collect();
        if taken.is_empty() {
            if let Some(open) = self.open.as_mut() {
                open.scheduled = false;
            }
            return Ok(None);
        }
        let mut files = Vec::with_capacity(taken.len());
        for &(sequence, verify) in &taken {
            let Some(mut message) = self.message_at(open, sequence)? else {
                continue;
            };
            // The bytes of its pictures are in `pictures/`, once (written there now for a trace
            // whose log still holds them inline).
            let taken = crate::pictures::take(&mut message);
            crate::pictures::write(&self.dir, &taken, false)?;
            let path = self
                .dir
                .join(MESSAGES)
                .join(format!("{}.json", message_id(&trace_id, sequence)));
            let bytes = pretty(&message, &path)?;
            files.push((path, bytes, verify));
        }
        let Some(open) = self.open.as_mut() else {
            return Ok(None);
        };
        for (sequence, _) in &taken {
            open.pending.remove(sequence);
        }
        let clean_at = open.pending.is_empty().then_some(open.len);
        Ok(Some(MirrorBatch {
            files,
            taken,
            clean_at,
        }))
    }

    /// Records how writing a batch taken by [`take_mirrors`](Self::take_mirrors) went: on
    /// failure its files are behind the log again.
    pub(crate) fn mirrors_written(&mut self, batch: MirrorBatch, written: bool) {
        let Some(open) = self.open.as_mut() else {
            return;
        };
        if written {
            if let Some(at) = batch.clean_at
                && open.pending.is_empty()
            {
                open.mirrored = open.mirrored.max(at);
            }
        } else {
            for (sequence, verify) in batch.taken {
                open.pending.entry(sequence).or_insert(verify);
            }
            open.scheduled = false;
        }
    }

    /// Brings every mirror file up to date (`meta.json`, `goal.json` and every message file),
    /// then, on the writer, the index checkpoint.
    pub(crate) fn flush_all(&mut self) -> Result<(), StoreError> {
        self.flush_meta()?;
        while let Some(batch) = self.take_mirrors(usize::MAX)? {
            let result = batch.write();
            self.mirrors_written(batch, result.is_ok());
            result?;
        }
        if let Some((bytes, len)) = self.take_checkpoint(true)? {
            Slot::write_checkpoint(&self.dir, &bytes)?;
            self.checkpoint_written(len);
        }
        Ok(())
    }
}

/// Message files taken from a trace to be written outside its lock.
#[derive(Debug)]
pub(crate) struct MirrorBatch {
    /// Path, content, and whether an existing file is compared first.
    files: Vec<(PathBuf, Vec<u8>, bool)>,
    /// The sequences taken, to hand back if writing fails.
    taken: Vec<(u64, bool)>,
    /// The log length when the batch emptied the trace's backlog.
    clean_at: Option<u64>,
}

impl MirrorBatch {
    /// Writes the files, each through a temporary file and a rename; a file being rebuilt is
    /// left alone when it already holds the same bytes.
    pub(crate) fn write(&self) -> Result<(), StoreError> {
        for (path, bytes, verify) in &self.files {
            if *verify && fs::read(path).is_ok_and(|old| &old == bytes) {
                continue;
            }
            write_atomic(path, bytes)?;
        }
        Ok(())
    }
}

/// A slot dropped with mirror files behind the log writes them first: after the store is
/// dropped, every file is there.
impl Drop for Slot {
    fn drop(&mut self) {
        if let Err(error) = self.flush_all() {
            tracing::warn!(%error, "could not bring the mirror files up to date");
        }
    }
}
