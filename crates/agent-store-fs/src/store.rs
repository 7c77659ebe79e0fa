//! `FileSystemTraceStore`: the `TraceStore` implementation over trace folders.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agent_execution::GoalTree;
use agent_execution::ids::split_message_id;
use agent_execution::{
    Commit, Doorbell, Event, EventBus, EventKind, Message, StoreError, Trace, TraceFilter,
    TraceState, TraceStore, TraceTxn, validate_trace_id,
};
use async_trait::async_trait;
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use crate::Durability;
use crate::flusher::Flusher;
use crate::pool::{blocking, multi_threaded};
use crate::trace_files::{IndexNote, META, Prepared, Slot};

/// The embedded default trace store: `<base>/<trace_id>/{meta.json, goal.json,
/// messages/<message_id>.json, events.jsonl}`, sub-traces as sibling folders.
///
/// See the crate documentation for the durability design and the one-writer-per-trace rule.
#[derive(Debug)]
pub struct FileSystemTraceStore {
    base: PathBuf,
    durability: Durability,
    slots: Mutex<HashMap<String, Arc<AsyncMutex<Slot>>>>,
    /// Per trace: whether this instance holds its write lock.
    writing: Mutex<HashMap<String, Arc<AtomicBool>>>,
    bus: EventBus,
    /// Writes the message files that commits leave behind the log.
    flusher: Flusher,
}

impl FileSystemTraceStore {
    /// A store over the folder `base` (created if missing), with [`Durability::Fsync`].
    pub fn open(base: impl Into<PathBuf>) -> Result<Self, StoreError> {
        let base = base.into();
        fs::create_dir_all(&base).map_err(|e| StoreError::io(&base, e))?;
        Ok(Self {
            base,
            durability: Durability::Fsync,
            slots: Mutex::new(HashMap::new()),
            writing: Mutex::new(HashMap::new()),
            bus: EventBus::new(),
            flusher: Flusher::default(),
        })
    }

    /// Sets the durability policy.
    #[must_use]
    pub fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// Sets how many events a watcher may fall behind before it catches up from the files.
    #[must_use]
    pub fn with_feed_capacity(mut self, capacity: usize) -> Self {
        self.bus = EventBus::with_capacity(capacity);
        self
    }

    /// The base folder.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The durability policy.
    pub fn durability(&self) -> Durability {
        self.durability
    }

    fn slot(&self, trace_id: &str) -> Arc<AsyncMutex<Slot>> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        slots
            .entry(trace_id.to_owned())
            .or_insert_with(|| {
                Arc::new(AsyncMutex::new(Slot::new(
                    self.base.join(trace_id),
                    self.durability,
                    self.writing_flag(trace_id),
                )))
            })
            .clone()
    }

    /// Whether this instance writes the trace, as a flag shared with its slot.
    fn writing_flag(&self, trace_id: &str) -> Arc<AtomicBool> {
        let mut writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        writing.entry(trace_id.to_owned()).or_default().clone()
    }

    /// Locks a trace's slot and runs blocking work on it off the async threads.
    async fn with_slot<R: Send + 'static>(
        &self,
        trace_id: &str,
        work: impl FnOnce(&mut Slot) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        validate_trace_id(trace_id)?;
        let guard = self.slot(trace_id).lock_owned().await;
        let (_, result) = blocking(guard, work).await?;
        result
    }

    /// Loads a trace and reads from it; `None` when it does not exist.
    async fn read<R: Send + 'static>(
        &self,
        trace_id: &str,
        read: impl FnOnce(&mut Slot) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<Option<R>, StoreError> {
        self.with_slot(trace_id, |slot| match slot.load() {
            Ok(_) => read(slot).map(Some),
            Err(StoreError::NotFound { .. }) => Ok(None),
            Err(error) => Err(error),
        })
        .await
    }

    /// Reads from a trace's state; `None` when it does not exist. The state of a trace this
    /// instance writes is current in memory, so it is read on the caller's thread, without a
    /// hand-off to the blocking pool (the runner reads the goal tree at every step).
    async fn read_state<R: Send + 'static>(
        &self,
        trace_id: &str,
        read: fn(&TraceState) -> R,
    ) -> Result<Option<R>, StoreError> {
        validate_trace_id(trace_id)?;
        let guard = self.slot(trace_id).lock_owned().await;
        if let Some(state) = guard.writer_state() {
            return Ok(Some(read(state)));
        }
        let (_, result) = blocking(guard, move |slot| match slot.load() {
            Ok(state) => Ok(Some(read(state))),
            Err(StoreError::NotFound { .. }) => Ok(None),
            Err(error) => Err(error),
        })
        .await?;
        result
    }

    /// Loads a trace that must exist and reads from it.
    async fn read_existing<R: Send + 'static>(
        &self,
        trace_id: &str,
        read: impl FnOnce(&mut Slot) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.with_slot(trace_id, |slot| {
            slot.load()?;
            read(slot)
        })
        .await
    }

    /// A goal's messages passed through `finish` (handed out shared, or copied): on the
    /// caller's thread when every one of them is parsed already, since that costs less than
    /// handing the work to another thread; otherwise with the read, in the blocking pool.
    async fn goal_messages<R: Send + 'static>(
        &self,
        trace_id: &str,
        goal_id: &str,
        finish: fn(Vec<Arc<Message>>) -> R,
    ) -> Result<R, StoreError> {
        validate_trace_id(trace_id)?;
        let guard = self.slot(trace_id).lock_owned().await;
        if let Some(messages) = guard.cached_goal_messages(goal_id) {
            return Ok(finish(messages));
        }
        let goal_id = goal_id.to_owned();
        let (_, result) = blocking(guard, move |slot| {
            slot.load()?;
            slot.goal_messages(&goal_id).map(finish)
        })
        .await?;
        result
    }

    async fn begin_with(
        &self,
        trace_id: &str,
        start: fn(&mut Slot) -> Result<(), StoreError>,
        ready: fn(&Slot) -> bool,
    ) -> Result<Box<dyn TraceTxn + '_>, StoreError> {
        validate_trace_id(trace_id)?;
        let guard = self.slot(trace_id).lock_owned().await;
        // A trace this instance writes already is ready without file I/O: no thread hand-off.
        let guard = if ready(&guard) {
            guard
        } else {
            let (guard, result) = blocking(guard, start).await?;
            result?;
            guard
        };
        let mut txn = FsTxn {
            slot: Some(guard),
            flusher: &self.flusher,
        };
        txn.schedule();
        Ok(Box::new(txn))
    }
}

/// A trace locked for a write.
struct FsTxn<'a> {
    /// `None` only if a blocking task panicked while holding it.
    slot: Option<OwnedMutexGuard<Slot>>,
    /// The store's flusher, told when the trace's message files fall behind.
    flusher: &'a Flusher,
}

impl FsTxn<'_> {
    fn take(&mut self) -> Result<OwnedMutexGuard<Slot>, StoreError> {
        self.slot
            .take()
            .ok_or_else(|| StoreError::Internal("the trace lock was lost".into()))
    }

    /// Tells the flusher about the trace if its message files just fell behind.
    fn schedule(&mut self) {
        if let Some(guard) = self.slot.as_mut()
            && guard.take_schedule()
        {
            self.flusher.schedule(OwnedMutexGuard::mutex(guard));
        }
    }
}

#[async_trait]
impl TraceTxn for FsTxn<'_> {
    fn state(&self) -> Option<&TraceState> {
        self.slot.as_ref().and_then(|slot| slot.state())
    }

    fn state_mut(&mut self) -> Option<&mut TraceState> {
        self.slot.as_mut().and_then(|slot| slot.state_mut())
    }

    async fn read_message(&mut self, sequence: u64) -> Result<Option<Message>, StoreError> {
        let (guard, result) = blocking(self.take()?, move |slot| slot.message(sequence)).await?;
        self.slot = Some(guard);
        result
    }

    async fn commit(&mut self, commit: Commit) -> Result<Vec<Event>, StoreError> {
        let (prepared, events) = prepare(commit)?;
        let mut guard = self.take()?;
        let result = if guard.durability == Durability::Buffered && guard.log_is_open() {
            // One `write` of a few kilobytes into the page cache takes less time than handing
            // the work to another thread and back; syncs and file creation go to the pool.
            let result = guard.commit(prepared);
            self.slot = Some(guard);
            result
        } else if guard.log_is_open() && multi_threaded() {
            // A sync waits for the disk, but handing it to the pool and back would add two
            // thread wake-ups to every commit: the commit syncs on this thread, and the
            // runtime moves its other tasks to another thread meanwhile.
            let result = tokio::task::block_in_place(|| guard.commit(prepared));
            self.slot = Some(guard);
            result
        } else {
            let (guard, result) = blocking(guard, move |slot| slot.commit(prepared)).await?;
            self.slot = Some(guard);
            result
        };
        self.schedule();
        result.map(|()| events)
    }
}

/// Serialises a commit: the event lines, and which message files it puts behind the log. The
/// state of a trace the commit creates moves into the result; its events come back, for the
/// caller to publish.
fn prepare(commit: Commit) -> Result<(Prepared, Vec<Event>), StoreError> {
    let mut bytes = Vec::new();
    let mut events = Vec::with_capacity(commit.events.len());
    let mut pictures = Vec::new();
    for event in &commit.events {
        let start = bytes.len() as u64;
        let stripped = crate::pictures::without_pictures(event, &mut pictures);
        serde_json::to_writer(&mut bytes, stripped.as_ref().unwrap_or(event)).map_err(|e| {
            StoreError::Internal(format!(
                "event {} cannot be serialised: {e}",
                event.event_id
            ))
        })?;
        bytes.push(b'\n');
        events.push((start, bytes.len() as u64 - start, IndexNote::of(event)));
    }
    let structural = commit.events.iter().any(|event| {
        !matches!(
            event.kind,
            EventKind::MessageAdded { .. } | EventKind::MessageUpdated { .. }
        )
    });
    let prepared = Prepared {
        bytes,
        events,
        pictures,
        created: commit.created,
        messages: commit.messages.iter().map(|m| m.sequence).collect(),
        trace_changed: commit.trace_changed,
        goal_tree_changed: commit.goal_tree_changed,
        structural,
    };
    Ok((prepared, commit.events))
}

#[async_trait]
impl TraceStore for FileSystemTraceStore {
    async fn begin(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError> {
        self.begin_with(trace_id, Slot::become_writer, Slot::is_writer)
            .await
    }

    async fn begin_new(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError> {
        self.begin_with(trace_id, Slot::create, |_| false).await
    }

    fn event_bus(&self) -> &EventBus {
        &self.bus
    }

    fn changes(&self, trace_id: &str) -> Option<Doorbell> {
        validate_trace_id(trace_id).ok()?;
        let dir = self.base.join(trace_id);
        dir.is_dir()
            .then(|| crate::follow::doorbell(dir, self.writing_flag(trace_id)))
    }

    async fn writer_alive(&self, trace_id: &str) -> Result<Option<bool>, StoreError> {
        validate_trace_id(trace_id)?;
        if self.writing_flag(trace_id).load(Ordering::Relaxed) {
            return Ok(Some(true));
        }
        let dir = self.base.join(trace_id);
        tokio::task::spawn_blocking(move || {
            crate::follow::writer_alive(&dir).map_err(|e| StoreError::io(&dir, e))
        })
        .await
        .unwrap_or(Ok(None))
    }

    async fn get_trace(&self, trace_id: &str) -> Result<Option<Trace>, StoreError> {
        self.read_state(trace_id, |state| state.trace.clone()).await
    }

    async fn list_traces(&self, filter: &TraceFilter) -> Result<Vec<Trace>, StoreError> {
        // `meta.json` of traces written here may lag the log by a moment; listing must not.
        self.flush_meta().await?;
        let base = self.base.clone();
        let filter_copy = filter.clone();
        let found = tokio::task::spawn_blocking(move || list(&base, &filter_copy))
            .await
            .map_err(|e| StoreError::Internal(format!("a store task failed: {e}")))??;
        Ok(filter.finish(found))
    }

    async fn get_goal_tree(&self, trace_id: &str) -> Result<Option<GoalTree>, StoreError> {
        self.read_state(trace_id, |state| state.goal_tree.clone())
            .await
    }

    async fn get_trace_messages(&self, trace_id: &str) -> Result<Vec<Message>, StoreError> {
        // The copies are made with the read, off the caller's thread.
        self.read_existing(trace_id, |slot| Ok(owned(slot.all_messages()?)))
            .await
    }

    async fn get_messages_by_goal(
        &self,
        trace_id: &str,
        goal_id: &str,
    ) -> Result<Vec<Message>, StoreError> {
        self.goal_messages(trace_id, goal_id, owned).await
    }

    async fn get_trace_messages_shared(
        &self,
        trace_id: &str,
    ) -> Result<Vec<Arc<Message>>, StoreError> {
        self.read_existing(trace_id, |slot| slot.all_messages())
            .await
    }

    async fn get_messages_by_goal_shared(
        &self,
        trace_id: &str,
        goal_id: &str,
    ) -> Result<Vec<Arc<Message>>, StoreError> {
        self.goal_messages(trace_id, goal_id, |shared| shared).await
    }

    async fn get_message(&self, message_id: &str) -> Result<Option<Message>, StoreError> {
        let (trace_id, sequence) = split_message_id(message_id)?;
        let found = self
            .read(trace_id, move |slot| slot.message(sequence))
            .await?;
        Ok(found.flatten())
    }

    async fn get_events(
        &self,
        trace_id: &str,
        since_event_id: u64,
    ) -> Result<Vec<Event>, StoreError> {
        self.read_existing(trace_id, move |slot| slot.events_since(since_event_id))
            .await
    }
}

impl FileSystemTraceStore {
    /// Brings every mirror file of every open trace up to date: `meta.json`, `goal.json` and
    /// the message files. Between flushes, message files trail the log: the store's flusher
    /// writes them once the trace has gone tens of milliseconds without a commit, and only a
    /// few at a time while commits keep coming; `meta.json` and `goal.json` trail it by at most
    /// a quarter of a second when only message statistics changed. Everything is also written
    /// when the store is dropped. The log itself, and every read of this store, is always
    /// current.
    pub async fn flush(&self) -> Result<(), StoreError> {
        for slot in self.open_slots() {
            let writer = self.flusher.writer.clone();
            tokio::task::spawn_blocking(move || {
                let _writing = writer.lock().unwrap_or_else(PoisonError::into_inner);
                slot.blocking_lock().flush_all()
            })
            .await
            .map_err(|e| StoreError::Internal(format!("a store task failed: {e}")))??;
        }
        Ok(())
    }

    /// Brings every open trace's `meta.json` and `goal.json` up to date.
    async fn flush_meta(&self) -> Result<(), StoreError> {
        for slot in self.open_slots() {
            let guard = slot.lock_owned().await;
            blocking(guard, Slot::flush_meta).await?.1?;
        }
        Ok(())
    }

    fn open_slots(&self) -> Vec<Arc<AsyncMutex<Slot>>> {
        let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        slots.values().cloned().collect()
    }
}

/// Dropping the store writes every mirror file still behind the log: the flusher finishes what
/// it took, then each trace writes the rest.
impl Drop for FileSystemTraceStore {
    fn drop(&mut self) {
        self.flusher.stop();
    }
}

/// Reads `meta.json` of every trace folder; damaged or incomplete traces are logged and skipped.
fn list(base: &Path, filter: &TraceFilter) -> Result<Vec<Trace>, StoreError> {
    let mut traces = Vec::new();
    for entry in fs::read_dir(base).map_err(|e| StoreError::io(base, e))? {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name().to_string_lossy().into_owned();
        if validate_trace_id(&name).is_err() || !entry.path().is_dir() {
            continue;
        }
        let path = entry.path().join(META);
        let parsed = match fs::read(&path) {
            // A folder without meta.json is a trace being created (or whose creation crashed).
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => Err(error.to_string()),
            Ok(bytes) => serde_json::from_slice::<Trace>(&bytes).map_err(|e| e.to_string()),
        };
        match parsed {
            // A folder copied under another name: reading it reports it as corrupt.
            Ok(trace) if trace.trace_id != name => {
                tracing::warn!(path = %path.display(), trace_id = %trace.trace_id, "skipping a trace whose meta.json names another trace");
            }
            Ok(trace) if filter.matches(&trace) => traces.push(trace),
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "skipping a trace that cannot be listed");
            }
        }
    }
    Ok(traces)
}

/// Messages of the caller's own, copied out of shared ones (moved where nothing else holds one).
fn owned(shared: Vec<Arc<Message>>) -> Vec<Message> {
    shared.into_iter().map(Arc::unwrap_or_clone).collect()
}
