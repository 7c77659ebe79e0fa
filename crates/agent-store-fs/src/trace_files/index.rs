//! How an opened trace follows `events.jsonl`: replaying complete commits into its state and
//! indexing where every event and the newest version of every message lie, so reads are one
//! positioned read instead of a rescan.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

use agent_execution::{Event, EventKind, StoreError, TraceState};

use super::OpenTrace;
use crate::log::{ScanError, scan};

/// How one event changes the message index.
#[derive(Debug)]
pub(crate) enum IndexNote {
    Other,
    Added {
        sequence: u64,
        goal_id: Option<String>,
    },
    Updated {
        sequence: u64,
    },
}

impl IndexNote {
    /// The index change `event` makes.
    pub(crate) fn of(event: &Event) -> Self {
        match &event.kind {
            EventKind::MessageAdded { message, .. } => Self::Added {
                sequence: message.sequence,
                goal_id: message.goal_id.clone(),
            },
            EventKind::MessageUpdated { message } => Self::Updated {
                sequence: message.sequence,
            },
            _ => Self::Other,
        }
    }
}

impl OpenTrace {
    /// An opened trace of which nothing is read yet, reading `log` when there is one.
    pub(super) fn empty(log: Option<File>) -> Self {
        Self {
            state: None,
            log,
            appendable: true,
            len: 0,
            events: Vec::new(),
            messages: Vec::new(),
            by_goal: HashMap::new(),
            lock: None,
            meta_dirty: false,
            goal_dirty: false,
            mirrored_at: std::time::Instant::now(),
            pending: std::collections::BTreeMap::new(),
            scheduled: false,
            mirrored: 0,
            checkpointed: 0,
            cache: Default::default(),
            committed_at: std::time::Instant::now(),
        }
    }

    /// Records that an event lies at `offset` with `length` bytes, and what it does to the
    /// message index.
    pub(super) fn index(&mut self, note: IndexNote, offset: u64, length: u64) {
        self.events.push(offset);
        match note {
            IndexNote::Other => {}
            IndexNote::Added { sequence, goal_id } => {
                self.messages.push((offset, length));
                if let Some(goal_id) = goal_id {
                    self.by_goal.entry(goal_id).or_default().push(sequence);
                }
            }
            IndexNote::Updated { sequence } => {
                if let Some(location) = position(sequence).and_then(|i| self.messages.get_mut(i)) {
                    *location = (offset, length);
                }
            }
        }
    }

    /// Replays an event read from the log and indexes it.
    fn replay(&mut self, event: Event, offset: u64, length: u64) -> Result<(), String> {
        match &mut self.state {
            None => {
                self.state = Some(TraceState::from_first_event(&event).map_err(|e| e.to_string())?)
            }
            Some(state) => state.replay(&event).map_err(|e| e.to_string())?,
        }
        self.index(IndexNote::of(&event), offset, length);
        Ok(())
    }

    /// Reads complete commits appended after `len` (by another process, or left by a crash).
    pub(super) fn catch_up(&mut self, path: &Path) -> Result<(), StoreError> {
        let Some(log) = self.log.take() else {
            return Ok(());
        };
        let result = self.catch_up_with(&log, path);
        self.log = Some(log);
        result
    }

    /// [`catch_up`](Self::catch_up) with the log taken out of `self` for the scan.
    fn catch_up_with(&mut self, log: &File, path: &Path) -> Result<(), StoreError> {
        let size = log.metadata().map_err(|e| StoreError::io(path, e))?.len();
        if size <= self.len {
            return Ok(());
        }
        let first_line = self.events.len() as u64 + 1;
        let end = scan(log, self.len, first_line, |event, offset, length| {
            self.replay(event, offset, length)
        })
        .map_err(|error| scan_error(path, error))?;
        self.len = end;
        Ok(())
    }
}

/// The error for a log that cannot be read or does not parse, naming the line.
fn scan_error(path: &Path, error: ScanError) -> StoreError {
    match error {
        ScanError::Io(source) => StoreError::io(path, source),
        ScanError::Corrupt { line, detail } => StoreError::Corrupt {
            path: path.to_owned(),
            detail: format!("line {line}: {detail}"),
        },
    }
}

/// The vector position of a sequence or event id (both count from 1).
pub(super) fn position(id: u64) -> Option<usize> {
    usize::try_from(id).ok()?.checked_sub(1)
}
