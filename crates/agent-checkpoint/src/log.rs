//! The store's log, `checkpoints.jsonl` in its git directory: one line per snapshot taken or
//! failed, saying at which point of a run it was taken, so a goal's start and end can be found.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::CheckpointError;

/// Where in a run a snapshot was taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "at", rename_all = "snake_case")]
pub enum Point {
    /// Taken by [`crate::CheckpointStore::snapshot`], at no particular point of a run.
    Label,
    /// A run started (its first model call is next).
    RunStart,
    /// A user turn of a conversation is about to be answered.
    Turn,
    /// A goal became the focused one for the first time.
    GoalStart {
        /// The goal's id.
        goal_id: String,
    },
    /// A goal was finished or given up.
    GoalEnd {
        /// The goal's id.
        goal_id: String,
        /// Whether it was abandoned rather than done.
        abandoned: bool,
    },
    /// The run stopped.
    RunEnd,
    /// The workspace was restored (by a rewind or a rollback).
    Restored,
}

impl Point {
    /// The label a snapshot at this point gets: `goal 2 start`, `goal 2 end`, `run start`, ...
    pub fn label(&self) -> String {
        match self {
            Self::GoalStart { goal_id } => format!("goal {goal_id} start"),
            Self::GoalEnd { goal_id, .. } => format!("goal {goal_id} end"),
            Self::Label => "snapshot".to_owned(),
            Self::RunStart => "run start".to_owned(),
            Self::Turn => "turn".to_owned(),
            Self::RunEnd => "run end".to_owned(),
            Self::Restored => "restored".to_owned(),
        }
    }
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Seconds since the Unix epoch.
    pub time: u64,
    /// Where in the run.
    #[serde(flatten)]
    pub point: Point,
    /// The label given.
    pub label: String,
    /// The snapshot, absent when it could not be taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<SnapshotId>,
    /// Files kept.
    #[serde(default)]
    pub files: usize,
    /// Bytes of the files kept.
    #[serde(default)]
    pub bytes: u64,
    /// Files left out (over the per-file cap, nested repositories).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// Why the snapshot could not be taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Entry {
    pub(crate) fn taken(point: &Point, label: &str, snapshot: &Snapshot) -> Self {
        Self {
            time: now(),
            point: point.clone(),
            label: label.to_owned(),
            id: Some(snapshot.id.clone()),
            files: snapshot.files,
            bytes: snapshot.bytes,
            skipped: snapshot.skipped.clone(),
            error: None,
        }
    }

    pub(crate) fn failed(point: &Point, label: &str, error: &CheckpointError) -> Self {
        Self {
            time: now(),
            point: point.clone(),
            label: label.to_owned(),
            id: None,
            files: 0,
            bytes: 0,
            skipped: Vec::new(),
            error: Some(error.to_string()),
        }
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The log file.
#[derive(Debug, Clone)]
pub(crate) struct Log {
    path: PathBuf,
}

impl Log {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self { path }
    }

    /// Appends one entry as one line.
    pub(crate) fn append(&self, entry: &Entry) -> Result<(), CheckpointError> {
        let mut line = serde_json::to_string(entry)
            .map_err(|e| CheckpointError::io(&self.path, std::io::Error::other(e)))?;
        line.push('\n');
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| CheckpointError::io(&self.path, e))?;
        file.write_all(line.as_bytes())
            .map_err(|e| CheckpointError::io(&self.path, e))
    }

    /// Every entry, oldest first; a torn or unreadable line is skipped.
    pub(crate) fn read(&self) -> Result<Vec<Entry>, CheckpointError> {
        let text = match fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(CheckpointError::io(&self.path, e)),
        };
        Ok(text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect())
    }
}

/// Lookups over a log's entries.
pub trait EntriesExt {
    /// The snapshot taken when `goal_id` started.
    fn goal_start(&self, goal_id: &str) -> Option<SnapshotId>;
    /// The snapshot taken when `goal_id` was finished or given up (the newest).
    fn goal_end(&self, goal_id: &str) -> Option<SnapshotId>;
    /// The oldest snapshot.
    fn first_snapshot(&self) -> Option<SnapshotId>;
    /// The newest snapshot.
    fn latest_snapshot(&self) -> Option<SnapshotId>;
}

impl EntriesExt for [Entry] {
    fn goal_start(&self, goal_id: &str) -> Option<SnapshotId> {
        self.iter()
            .find(|e| matches!(&e.point, Point::GoalStart { goal_id: g } if g == goal_id))
            .and_then(|e| e.id.clone())
    }

    fn goal_end(&self, goal_id: &str) -> Option<SnapshotId> {
        self.iter()
            .rev()
            .find(|e| matches!(&e.point, Point::GoalEnd { goal_id: g, .. } if g == goal_id))
            .and_then(|e| e.id.clone())
    }

    fn first_snapshot(&self) -> Option<SnapshotId> {
        self.iter().find_map(|e| e.id.clone())
    }

    fn latest_snapshot(&self) -> Option<SnapshotId> {
        self.iter().rev().find_map(|e| e.id.clone())
    }
}

/// A snapshot's id: the hex id of its commit in the shadow store.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SnapshotId(pub String);

impl SnapshotId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for SnapshotId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a snapshot kept and left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Its id.
    pub id: SnapshotId,
    /// Files kept.
    pub files: usize,
    /// Bytes of the files kept.
    pub bytes: u64,
    /// Files left out: over the per-file cap, or nested repositories (ending in `/`).
    pub skipped: Vec<String>,
}
