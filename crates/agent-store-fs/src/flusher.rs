//! The flusher: a thread that writes the message files commits left behind the log, in batches,
//! so that a commit costs about its own log append.
//!
//! A commit notes which message files fell behind and, the first time a trace has any, tells the
//! flusher about the trace. The flusher waits [`BATCH_WINDOW`] for more commits to gather, then
//! takes up to [`BATCH`] files at a time under the trace's lock and writes them after letting it
//! go. Every writer of mirror files (the flusher, [`FileSystemTraceStore::flush`]) first takes
//! the store's mirror-writer lock, then the trace's: a batch taken later is written later, so a
//! newer version of a message file never loses to an older one. Dropping the store stops the
//! thread after it has written what it took; the traces then write whatever is left.
//!
//! [`FileSystemTraceStore::flush`]: crate::FileSystemTraceStore::flush

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use agent_execution::StoreError;
use tokio::sync::Mutex as AsyncMutex;

use crate::trace_files::Slot;

/// How long the flusher lets commits gather before it takes a batch.
const BATCH_WINDOW: Duration = Duration::from_millis(20);

/// How many message files the flusher takes under a trace's lock at a time.
const BATCH: usize = 64;

/// A trace as the flusher knows it: it does not keep a dropped trace alive.
type SlotRef = Weak<AsyncMutex<Slot>>;

/// The flusher thread of one store instance, started on the first commit that needs it.
#[derive(Debug, Default)]
pub(crate) struct Flusher {
    /// The queue of traces with files behind the log, and the thread; `None` until started.
    running: Mutex<Option<(Sender<SlotRef>, JoinHandle<()>)>>,
    /// Held while mirror files taken from a trace are written.
    pub(crate) writer: Arc<Mutex<()>>,
}

impl Flusher {
    /// Tells the flusher that `slot` has message files behind the log.
    pub(crate) fn schedule(&self, slot: &Arc<AsyncMutex<Slot>>) {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if running.is_none() {
            let (queue, due) = channel();
            let writer = self.writer.clone();
            let spawned = std::thread::Builder::new()
                .name("agent-store-flush".into())
                .spawn(move || run(&due, &writer));
            match spawned {
                Ok(thread) => *running = Some((queue, thread)),
                Err(error) => {
                    // The files are still written by `flush()` and when the store is dropped.
                    tracing::warn!(%error, "cannot start the mirror-file flusher");
                    return;
                }
            }
        }
        if let Some((queue, _)) = running.as_ref() {
            let _ = queue.send(Arc::downgrade(slot));
        }
    }

    /// Stops the thread once it has written what it was told about.
    pub(crate) fn stop(&self) {
        let running = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some((queue, thread)) = running {
            drop(queue);
            let _ = thread.join();
        }
    }
}

/// The thread: drains every trace it is told about, until the queue closes.
fn run(due: &Receiver<SlotRef>, writer: &Mutex<()>) {
    while let Ok(first) = due.recv() {
        std::thread::sleep(BATCH_WINDOW);
        let mut slots = vec![first];
        slots.extend(due.try_iter());
        slots.dedup_by(|a, b| a.ptr_eq(b));
        for slot in slots {
            let Some(slot) = slot.upgrade() else { continue };
            if let Err(error) = drain(&slot, writer, BATCH) {
                // Left behind: the next commit, `flush()` or the drop of the store tries again.
                tracing::warn!(%error, "could not write mirror files");
            }
        }
    }
}

/// Writes every message file of `slot` that is behind the log, `limit` at a time, taking the
/// trace's lock only to take each batch. Must not run on an async thread.
fn drain(slot: &AsyncMutex<Slot>, writer: &Mutex<()>, limit: usize) -> Result<(), StoreError> {
    loop {
        let _writing = writer.lock().unwrap_or_else(PoisonError::into_inner);
        let (batch, checkpoint, dir) = {
            let mut locked = slot.blocking_lock();
            match locked.take_mirrors(limit)? {
                Some(batch) => (Some(batch), None, None),
                None => (
                    None,
                    locked.take_checkpoint(false)?,
                    Some(locked.dir.clone()),
                ),
            }
        };
        let Some(batch) = batch else {
            // The backlog is written: save the index too once the log has grown enough.
            if let (Some((bytes, len)), Some(dir)) = (checkpoint, dir) {
                Slot::write_checkpoint(&dir, &bytes)?;
                slot.blocking_lock().checkpoint_written(len);
            }
            return Ok(());
        };
        let result = batch.write();
        slot.blocking_lock().mirrors_written(batch, result.is_ok());
        result?;
    }
}
