//! One trace folder: opening it (replaying `events.jsonl` once into state and an index), taking
//! its writer lock, committing, and reading messages and events through the index.
//!
//! Everything here is blocking file I/O; the store runs it on the blocking thread pool while it
//! holds the trace's async mutex.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

use agent_execution::ids::message_id;
use agent_execution::{Event, EventKind, StoreError, Trace, TraceState};
use agent_goal::GoalTree;

use crate::Durability;

mod reads;
use crate::files::{pretty, sync_dir, write_atomic};
use crate::log::{ScanError, scan};

/// File names inside a trace folder (the Contract layout, plus the lock file).
pub(crate) const META: &str = "meta.json";
pub(crate) const GOAL: &str = "goal.json";
pub(crate) const EVENTS: &str = "events.jsonl";
pub(crate) const MESSAGES: &str = "messages";
pub(crate) const LOCK: &str = ".lock";

/// A trace folder and, once opened, what is known about it.
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) dir: PathBuf,
    pub(crate) durability: Durability,
    open: Option<OpenTrace>,
}

/// An opened trace: its state and the index into `events.jsonl`.
#[derive(Debug)]
struct OpenTrace {
    /// `None` only while the trace is being created.
    state: Option<TraceState>,
    /// `events.jsonl`, opened for reading and appending; `None` until the trace is created.
    log: Option<File>,
    /// Bytes of `events.jsonl` that hold complete commits.
    len: u64,
    /// Byte offset of every event, by id − 1.
    events: Vec<u64>,
    /// Offset and length of the line holding the newest version of every message, by sequence − 1.
    messages: Vec<(u64, u64)>,
    /// Sequences of the messages of each goal.
    by_goal: HashMap<String, Vec<u64>>,
    /// The held lock file when this process is the trace's writer.
    lock: Option<File>,
    /// `meta.json` is behind the state.
    meta_dirty: bool,
    /// `goal.json` is behind the state.
    goal_dirty: bool,
    /// When `meta.json` and `goal.json` were last brought up to date.
    mirrored_at: std::time::Instant,
}

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

/// A commit serialised and ready to be written.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The event lines, newline-terminated.
    pub(crate) bytes: Vec<u8>,
    /// Offset within `bytes`, length and index change of every event.
    pub(crate) events: Vec<(u64, u64, IndexNote)>,
    /// The state after the commit.
    pub(crate) state: TraceState,
    /// Message files to write, by name relative to the trace folder.
    pub(crate) mirrors: Vec<(PathBuf, Vec<u8>)>,
    /// True when the trace's own record changed.
    pub(crate) trace_changed: bool,
    /// True when the goal tree changed.
    pub(crate) goal_tree_changed: bool,
    /// True when the commit changed more than message statistics (status, goals, ...): then
    /// `meta.json` and `goal.json` are written at once rather than at most every
    /// [`MIRROR_DELAY`].
    pub(crate) structural: bool,
}

/// How long `meta.json` and `goal.json` may lag behind the log when only message statistics
/// changed. The log is always current; readers of this store never see the lag.
pub(crate) const MIRROR_DELAY: std::time::Duration = std::time::Duration::from_millis(250);

impl OpenTrace {
    fn empty(log: Option<File>) -> Self {
        Self {
            state: None,
            log,
            len: 0,
            events: Vec::new(),
            messages: Vec::new(),
            by_goal: HashMap::new(),
            lock: None,
            meta_dirty: false,
            goal_dirty: false,
            mirrored_at: std::time::Instant::now(),
        }
    }

    fn index(&mut self, note: IndexNote, offset: u64, length: u64) {
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
    fn catch_up(&mut self, path: &Path) -> Result<(), StoreError> {
        let Some(log) = self.log.take() else {
            return Ok(());
        };
        let result = self.catch_up_with(&log, path);
        self.log = Some(log);
        result
    }

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
fn position(id: u64) -> Option<usize> {
    usize::try_from(id).ok()?.checked_sub(1)
}

/// Checks that a mirror file, if present, parses; a damaged one is reported by name.
fn check_mirror<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, StoreError> {
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
    pub(crate) fn new(dir: PathBuf, durability: Durability) -> Self {
        Self {
            dir,
            durability,
            open: None,
        }
    }

    fn not_found(&self) -> StoreError {
        StoreError::NotFound {
            trace_id: self.trace_id(),
        }
    }

    pub(crate) fn trace_id(&self) -> String {
        self.dir
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Opens the trace if needed and returns its current state. A reader (not the writer)
    /// first picks up commits appended by another process.
    pub(crate) fn load(&mut self) -> Result<&TraceState, StoreError> {
        let log_path = self.dir.join(EVENTS);
        match &mut self.open {
            Some(open) if open.lock.is_none() => open.catch_up(&log_path)?,
            Some(_) => {}
            None => self.open = Some(self.cold_open()?),
        }
        self.open
            .as_ref()
            .and_then(|open| open.state.as_ref())
            .ok_or_else(|| self.not_found())
    }

    fn cold_open(&self) -> Result<OpenTrace, StoreError> {
        if !self.dir.is_dir() {
            return Err(self.not_found());
        }
        let meta: Option<Trace> = check_mirror(&self.dir.join(META))?;
        check_mirror::<GoalTree>(&self.dir.join(GOAL))?;
        let log_path = self.dir.join(EVENTS);
        let log = match OpenOptions::new().read(true).append(true).open(&log_path) {
            Ok(log) => log,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::Corrupt {
                    path: log_path,
                    detail: "missing: the trace was never completely created".into(),
                });
            }
            Err(error) => return Err(StoreError::io(&log_path, error)),
        };
        let mut open = OpenTrace::empty(Some(log));
        open.catch_up(&log_path)?;
        let Some(state) = &open.state else {
            return Err(StoreError::Corrupt {
                path: log_path,
                detail: "holds no complete event".into(),
            });
        };
        // A log copied or moved into another trace's folder would answer for that trace.
        if state.trace.trace_id != self.trace_id() {
            return Err(StoreError::Corrupt {
                path: log_path,
                detail: format!(
                    "records trace {} but lies in the folder of trace {}",
                    state.trace.trace_id,
                    self.trace_id()
                ),
            });
        }
        if let Some(meta) = meta
            && meta.trace_id != state.trace.trace_id
        {
            return Err(StoreError::Corrupt {
                path: self.dir.join(META),
                detail: format!(
                    "names trace {} instead of {}",
                    meta.trace_id, state.trace.trace_id
                ),
            });
        }
        Ok(open)
    }

    /// Creates the trace's folder and takes its lock; the first commit writes its files.
    pub(crate) fn create(&mut self) -> Result<(), StoreError> {
        let trace_id = self.trace_id();
        if self.open.as_ref().is_some_and(|open| open.state.is_some()) {
            return Err(StoreError::AlreadyExists { trace_id });
        }
        if let Err(error) = fs::create_dir(&self.dir) {
            return Err(if error.kind() == std::io::ErrorKind::AlreadyExists {
                StoreError::AlreadyExists { trace_id }
            } else {
                StoreError::io(&self.dir, error)
            });
        }
        let messages = self.dir.join(MESSAGES);
        fs::create_dir(&messages).map_err(|e| StoreError::io(&messages, e))?;
        let mut open = OpenTrace::empty(None);
        open.lock = Some(self.lock_file()?);
        self.open = Some(open);
        Ok(())
    }

    fn lock_file(&self) -> Result<File, StoreError> {
        let path = self.dir.join(LOCK);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| StoreError::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => Ok(file),
            Err(TryLockError::WouldBlock) => Err(StoreError::Locked {
                trace_id: self.trace_id(),
                path,
            }),
            Err(TryLockError::Error(error)) => Err(StoreError::io(&path, error)),
        }
    }

    /// Makes this process the trace's writer: takes the lock, reads what the previous writer
    /// appended, cuts off an unfinished commit and brings the mirror files up to date.
    pub(crate) fn become_writer(&mut self) -> Result<(), StoreError> {
        self.load()?;
        if self.open.as_ref().is_some_and(|open| open.lock.is_some()) {
            return Ok(());
        }
        let lock = self.lock_file()?;
        let log_path = self.dir.join(EVENTS);
        let Some(open) = self.open.as_mut() else {
            return Err(self.not_found());
        };
        open.catch_up(&log_path)?;
        if let Some(log) = &open.log {
            let size = log
                .metadata()
                .map_err(|e| StoreError::io(&log_path, e))?
                .len();
            if size > open.len {
                tracing::warn!(
                    path = %log_path.display(),
                    bytes = size - open.len,
                    "cutting off an unfinished write at the end of the event log"
                );
                log.set_len(open.len)
                    .map_err(|e| StoreError::io(&log_path, e))?;
                log.sync_data().map_err(|e| StoreError::io(&log_path, e))?;
            }
        }
        open.lock = Some(lock);
        self.repair_mirrors()
    }

    /// Rewrites `meta.json` and `goal.json` when they differ from the log, and message files
    /// that are missing.
    fn repair_mirrors(&self) -> Result<(), StoreError> {
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

    /// Writes a prepared commit: one append (and in `Fsync` mode one sync) of `events.jsonl`,
    /// then the mirror files.
    pub(crate) fn commit(&mut self, prepared: Prepared) -> Result<(), StoreError> {
        let log_path = self.dir.join(EVENTS);
        let durability = self.durability;
        let Some(open) = self.open.as_mut() else {
            return Err(StoreError::Internal(
                "commit to a trace that is not open".into(),
            ));
        };
        let creating = open.log.is_none();
        if creating {
            let log = OpenOptions::new()
                .read(true)
                .append(true)
                .create_new(true)
                .open(&log_path)
                .map_err(|e| StoreError::io(&log_path, e))?;
            open.log = Some(log);
        }
        let Some(log) = open.log.as_mut() else {
            return Err(StoreError::Internal("event log not open".into()));
        };
        if let Err(error) = log.write_all(&prepared.bytes) {
            // Best effort: a partial commit is also cut off by the next writer.
            let _ = log.set_len(open.len);
            return Err(StoreError::io(&log_path, error));
        }
        if durability == Durability::Fsync {
            log.sync_data().map_err(|e| StoreError::io(&log_path, e))?;
        }
        let base = open.len;
        open.len += prepared.bytes.len() as u64;
        for (offset, length, note) in prepared.events {
            open.index(note, base + offset, length);
        }
        open.state = Some(prepared.state);
        if creating && durability == Durability::Fsync {
            sync_dir(&self.dir)?;
            if let Some(parent) = self.dir.parent() {
                sync_dir(parent)?;
            }
        }
        open.meta_dirty |= prepared.trace_changed;
        open.goal_dirty |= prepared.goal_tree_changed;
        for (name, bytes) in prepared.mirrors {
            write_atomic(&self.dir.join(name), &bytes)?;
        }
        if prepared.structural || open.mirrored_at.elapsed() >= MIRROR_DELAY {
            self.flush_mirrors()?;
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

    /// The state of a trace being written (`None` while it is being created).
    pub(crate) fn state(&self) -> Option<&TraceState> {
        self.open.as_ref().and_then(|open| open.state.as_ref())
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Err(error) = self.flush_mirrors() {
            tracing::warn!(%error, "could not bring the mirror files up to date");
        }
    }
}
