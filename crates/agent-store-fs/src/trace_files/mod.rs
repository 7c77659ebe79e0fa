//! One trace folder: opening it (from its index checkpoint and the commits after it, or by
//! replaying `events.jsonl` into state and an index), taking its writer lock and committing.
//!
//! This module owns the folder's life: the cold open and its consistency checks, creation, the
//! lock that makes a process the writer, and appending a commit. Following the log and indexing
//! it lives in `index`, the checkpoint in `checkpoint`, the mirror files in `mirrors`, and the
//! reads through the index in `reads`.
//!
//! Everything here is blocking file I/O, run while the trace's async mutex is held: by the store
//! on the blocking thread pool (on the calling thread for a buffered append to a trace it
//! already writes, which is one `write`), and by the flusher on its own thread.

use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::PathBuf;

use agent_execution::GoalTree;
use agent_execution::{StoreError, Trace, TraceState};

use crate::Durability;
use crate::files::sync_dir;

mod checkpoint;
mod index;
mod mirrors;
mod reads;

pub(crate) use index::IndexNote;
pub(crate) use mirrors::MIRROR_DELAY;
use mirrors::check_mirror;

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
    /// Set once this slot holds the trace's lock (the doorbell of `follow.rs` then stays quiet).
    writing: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// An opened trace: its state and the index into `events.jsonl`.
#[derive(Debug)]
struct OpenTrace {
    /// `None` only while the trace is being created.
    state: Option<TraceState>,
    /// `events.jsonl`, opened for reading and, when the process may write it, appending; `None`
    /// until the trace is created.
    log: Option<File>,
    /// `log` was opened for appending too (a trace this process may not write is still read).
    appendable: bool,
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
    /// Messages whose files are behind the log, by sequence; `true` when the file may exist
    /// already and is rewritten only if it differs (a rebuild after a crash).
    pending: BTreeMap<u64, bool>,
    /// The flusher has been told about `pending` and has not found it empty since.
    scheduled: bool,
    /// Every message file of an event before this log offset is written.
    mirrored: u64,
    /// The log length the newest index checkpoint covers (0: none).
    checkpointed: u64,
    /// Messages already parsed, by sequence.
    cache: std::cell::RefCell<reads::MessageCache>,
    /// When this instance last committed to the trace.
    committed_at: std::time::Instant,
}

/// Opens `events.jsonl` to read and append, or only to read when this process may not write it
/// (a trace folder shared read-only); the flag says whether it may append.
fn open_log(path: &std::path::Path) -> std::io::Result<(File, bool)> {
    match OpenOptions::new().read(true).append(true).open(path) {
        Ok(log) => Ok((log, true)),
        Err(error)
            if matches!(
                error.kind(),
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
            ) =>
        {
            Ok((File::open(path)?, false))
        }
        Err(error) => Err(error),
    }
}

/// A commit serialised and ready to be written.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The event lines, newline-terminated.
    pub(crate) bytes: Vec<u8>,
    /// Offset within `bytes`, length and index change of every event.
    pub(crate) events: Vec<(u64, u64, IndexNote)>,
    /// The pictures the event lines name without their bytes, written before the lines.
    pub(crate) pictures: Vec<crate::pictures::Picture>,
    /// The state of the trace the commit creates (a later commit's was planned in place).
    pub(crate) created: Option<TraceState>,
    /// Sequences of the messages the commit adds or changes, whose files are now behind.
    pub(crate) messages: Vec<u64>,
    /// True when the trace's own record changed.
    pub(crate) trace_changed: bool,
    /// True when the goal tree changed.
    pub(crate) goal_tree_changed: bool,
    /// True when the commit changed more than message statistics (status, goals, ...): then
    /// `meta.json` and `goal.json` are written at once rather than at most every
    /// [`MIRROR_DELAY`].
    pub(crate) structural: bool,
}

impl Slot {
    pub(crate) fn new(
        dir: PathBuf,
        durability: Durability,
        writing: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) -> Self {
        Self {
            dir,
            durability,
            open: None,
            writing,
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
        let (log, appendable) = match open_log(&log_path) {
            Ok(opened) => opened,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::Corrupt {
                    path: log_path,
                    detail: "missing: the trace was never completely created".into(),
                });
            }
            Err(error) => return Err(StoreError::io(&log_path, error)),
        };
        // The checkpoint, when valid, saves replaying the log up to the length it covers.
        let mut open = OpenTrace::empty(None);
        let size = log
            .metadata()
            .map_err(|e| StoreError::io(&log_path, e))?
            .len();
        checkpoint::load(&self.dir, &log, size, &mut open);
        open.log = Some(log);
        open.appendable = appendable;
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
            Ok(()) => {
                self.writing
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                Ok(file)
            }
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
        if !open.appendable {
            // Opened by a reader that could not write it then; a writer must append.
            let log = OpenOptions::new()
                .read(true)
                .append(true)
                .open(&log_path)
                .map_err(|e| StoreError::io(&log_path, e))?;
            open.log = Some(log);
            open.appendable = true;
        }
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

    /// Writes a prepared commit: one append (and in `Fsync` mode one sync) of `events.jsonl`.
    /// The message files it changes are left to the flusher (see
    /// [`take_schedule`](Self::take_schedule)); `meta.json` and `goal.json` are written at once
    /// after a structural commit, otherwise at most every [`MIRROR_DELAY`].
    pub(crate) fn commit(&mut self, prepared: Prepared) -> Result<(), StoreError> {
        let log_path = self.dir.join(EVENTS);
        let durability = self.durability;
        let Some(open) = self.open.as_mut() else {
            return Err(StoreError::Internal(
                "commit to a trace that is not open".into(),
            ));
        };
        let creating = open.log.is_none();
        crate::pictures::write(
            &self.dir,
            &prepared.pictures,
            durability == Durability::Fsync,
        )?;
        if creating {
            let log = OpenOptions::new()
                .read(true)
                .append(true)
                .create_new(true)
                .open(&log_path)
                .map_err(|e| StoreError::io(&log_path, e))?;
            open.log = Some(log);
            open.appendable = true;
        }
        let Some(log) = open.log.as_mut() else {
            return Err(StoreError::Internal("event log not open".into()));
        };
        if let Err(error) = log.write_all(&prepared.bytes) {
            // Best effort: a partial commit is also cut off by the next writer.
            let _ = log.set_len(open.len);
            return Err(StoreError::io(&log_path, error));
        }
        if durability == Durability::Fsync
            && let Err(error) = log.sync_data()
        {
            // Not durable, so not committed: the caller puts the state back, and the log must
            // not keep the lines either.
            let _ = log.set_len(open.len);
            return Err(StoreError::io(&log_path, error));
        }
        let base = open.len;
        open.len += prepared.bytes.len() as u64;
        for (offset, length, note) in prepared.events {
            open.index(note, base + offset, length);
        }
        if let Some(created) = prepared.created {
            open.state = Some(created);
        }
        if creating && durability == Durability::Fsync {
            sync_dir(&self.dir)?;
            if let Some(parent) = self.dir.parent() {
                sync_dir(parent)?;
            }
        }
        open.meta_dirty |= prepared.trace_changed;
        open.goal_dirty |= prepared.goal_tree_changed;
        for sequence in prepared.messages {
            open.pending.insert(sequence, false);
        }
        open.committed_at = std::time::Instant::now();
        if (prepared.structural || open.mirrored_at.elapsed() >= MIRROR_DELAY)
            && let Err(error) = self.flush_meta()
        {
            // The commit is in the log, which is the record; the mirrors stay marked behind and
            // are written by a later commit, the flusher or the next open.
            tracing::warn!(%error, "could not bring meta.json and goal.json up to date");
        }
        Ok(())
    }

    /// True once when message files fell behind the log and the flusher has not been told yet;
    /// the caller then tells it.
    pub(crate) fn take_schedule(&mut self) -> bool {
        let Some(open) = self.open.as_mut() else {
            return false;
        };
        let schedule = !open.pending.is_empty() && !open.scheduled;
        open.scheduled |= schedule;
        schedule
    }

    /// The index checkpoint to write when this slot is the trace's writer and the log has grown
    /// since the last one: always when `force`, otherwise only once it grew by an eighth (and
    /// at least a mebibyte), so saving it costs a bounded share of the appends. Returns the
    /// bytes and the log length they cover.
    pub(crate) fn take_checkpoint(
        &self,
        force: bool,
    ) -> Result<Option<(Vec<u8>, u64)>, StoreError> {
        let Some(open) = self.open.as_ref().filter(|open| open.lock.is_some()) else {
            return Ok(None);
        };
        let grown = open.len.saturating_sub(open.checkpointed);
        let due = grown > 0 && (force || (grown >= 1 << 20 && grown >= open.len / 8));
        if !due {
            return Ok(None);
        }
        let bytes = checkpoint::encode(open, &self.dir.join(EVENTS))?;
        Ok(bytes.map(|bytes| (bytes, open.len)))
    }

    /// Writes a checkpoint taken by [`take_checkpoint`](Self::take_checkpoint) into the folder.
    pub(crate) fn write_checkpoint(dir: &std::path::Path, bytes: &[u8]) -> Result<(), StoreError> {
        checkpoint::write(dir, bytes)
    }

    /// Records that the checkpoint covering `len` bytes of the log is written.
    pub(crate) fn checkpoint_written(&mut self, len: u64) {
        if let Some(open) = self.open.as_mut() {
            open.checkpointed = open.checkpointed.max(len);
        }
    }

    /// How many message files are behind the log.
    pub(crate) fn backlog(&self) -> usize {
        self.open.as_ref().map_or(0, |open| open.pending.len())
    }

    /// How long ago this instance last committed to the trace (since it was opened, if never).
    pub(crate) fn quiet_for(&self) -> std::time::Duration {
        self.open
            .as_ref()
            .map_or(std::time::Duration::MAX, |open| open.committed_at.elapsed())
    }

    /// Whether this slot holds the trace's lock, its state current.
    pub(crate) fn is_writer(&self) -> bool {
        self.open.as_ref().is_some_and(|open| open.lock.is_some())
    }

    /// Whether `events.jsonl` is open, so a commit appends without creating it.
    pub(crate) fn log_is_open(&self) -> bool {
        self.open.as_ref().is_some_and(|open| open.log.is_some())
    }

    /// The state of a trace being written (`None` while it is being created).
    pub(crate) fn state(&self) -> Option<&TraceState> {
        self.open.as_ref().and_then(|open| open.state.as_ref())
    }

    /// The state of a trace this slot writes (holding its lock), which no other process
    /// changes: current without reading the log.
    pub(crate) fn writer_state(&self) -> Option<&TraceState> {
        self.open
            .as_ref()
            .filter(|open| open.lock.is_some())
            .and_then(|open| open.state.as_ref())
    }

    /// The same state, to plan a write in.
    pub(crate) fn state_mut(&mut self) -> Option<&mut TraceState> {
        self.open.as_mut().and_then(|open| open.state.as_mut())
    }
}
