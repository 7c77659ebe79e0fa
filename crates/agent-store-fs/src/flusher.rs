//! The flusher: a thread that writes the message files commits left behind the log, in batches,
//! so that a commit costs about its own log append.
//!
//! A commit notes which message files fell behind and, the first time a trace has any, tells the
//! flusher about the trace. Every [`TICK`] the flusher takes up to [`BATCH`] files at a time
//! under the trace's lock and writes them after letting it go: the whole backlog once the trace
//! has had no commit for a tick (between the steps of a run, a model call leaves it quiet), a
//! few files per tick while commits keep coming, so a burst of commits does not share the machine
//! with writing their files. A trace in [`Durability::Fsync`] mode that keeps committing gets
//! none until its backlog reaches [`BACKLOG`]: every file created there is metadata the next
//! commit's `fdatasync` would wait for the journal to write (and the disk to flush) with it. Once a trace's backlog is written, the flusher also saves its
//! index checkpoint when the log has grown enough since the last one. Every writer of mirror
//! files (the flusher, [`FileSystemTraceStore::flush`]) first takes the store's mirror-writer
//! lock, then the trace's: a batch taken later is written later, so a newer version of a
//! message file never loses to an older one. Dropping the store stops the thread after it has
//! written what it took; the traces then write whatever is left.
//!
//! [`FileSystemTraceStore::flush`]: crate::FileSystemTraceStore::flush
//! [`Durability::Fsync`]: crate::Durability::Fsync

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use agent_execution::StoreError;
use tokio::sync::Mutex as AsyncMutex;

use crate::Durability;
use crate::trace_files::Slot;

/// How often the flusher looks at the traces with files behind the log, and how long a trace
/// must have gone without a commit to count as quiet.
const TICK: Duration = Duration::from_millis(20);

/// How many message files the flusher takes under a quiet trace's lock at a time.
const BATCH: usize = 64;

/// How many message files the flusher writes per tick of a trace that keeps committing.
const TRICKLE: usize = 8;

/// How many message files a trace in `Fsync` mode may leave behind while it keeps committing
/// before the flusher writes some anyway ([`TRICKLE`] per tick).
const BACKLOG: usize = 1024;

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

/// The thread: every [`TICK`], writes the backlog of each trace it was told about (all of it
/// when the trace is quiet, [`TRICKLE`] files when it is busy), until the queue closes.
fn run(due: &Receiver<SlotRef>, writer: &Mutex<()>) {
    let mut traces: Vec<SlotRef> = Vec::new();
    loop {
        match due.recv_timeout(TICK) {
            Ok(slot) => traces.push(slot),
            Err(RecvTimeoutError::Timeout) => {}
            // The store is being dropped: the traces write the rest as they are dropped.
            Err(RecvTimeoutError::Disconnected) => return,
        }
        traces.extend(due.try_iter());
        traces.dedup_by(|a, b| a.ptr_eq(b));
        traces.retain(|slot| {
            let Some(slot) = slot.upgrade() else {
                return false;
            };
            match drain(&slot, writer) {
                Ok(done) => !done,
                Err(error) => {
                    // Left behind: the next commit, `flush()` or the drop of the store tries
                    // again.
                    tracing::warn!(%error, "could not write mirror files");
                    false
                }
            }
        });
    }
}

/// Writes message files of `slot` that are behind the log, [`BATCH`] at a time, taking the
/// trace's lock only to take each batch: all of them while the trace is quiet, [`TRICKLE`]
/// when it is busy (in `Fsync` mode only once [`BACKLOG`] are behind). Returns true once none are left (the trace then needs telling again). Must not
/// run on an async thread.
fn drain(slot: &AsyncMutex<Slot>, writer: &Mutex<()>) -> Result<bool, StoreError> {
    let mut batches = 0;
    loop {
        let _writing = writer.lock().unwrap_or_else(PoisonError::into_inner);
        let (batch, checkpoint, dir) = {
            let mut locked = slot.blocking_lock();
            let quiet = locked.quiet_for() >= TICK;
            let Some(limit) = take_limit(quiet, locked.durability, locked.backlog(), batches)
            else {
                return Ok(false);
            };
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
            return Ok(true);
        };
        let result = batch.write();
        slot.blocking_lock().mirrors_written(batch, result.is_ok());
        result?;
        batches += 1;
    }
}

/// How many message files to take from a trace now, after `batches` taken in this round; `None`
/// leaves the trace for the next tick.
fn take_limit(
    quiet: bool,
    durability: Durability,
    backlog: usize,
    batches: usize,
) -> Option<usize> {
    if quiet {
        return Some(BATCH);
    }
    let waits = durability == Durability::Fsync && backlog < BACKLOG;
    (batches == 0 && !waits).then_some(TRICKLE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quiet_trace_gets_its_whole_backlog_in_batches() {
        for durability in [Durability::Buffered, Durability::Fsync] {
            assert_eq!(take_limit(true, durability, 3, 0), Some(BATCH));
            assert_eq!(take_limit(true, durability, 5000, 7), Some(BATCH));
        }
    }

    #[test]
    fn a_busy_buffered_trace_gets_a_trickle_per_tick() {
        assert_eq!(take_limit(false, Durability::Buffered, 1, 0), Some(TRICKLE));
        assert_eq!(take_limit(false, Durability::Buffered, 1, 1), None);
    }

    #[test]
    fn a_busy_fsync_trace_gets_none_until_its_backlog_is_long() {
        assert_eq!(take_limit(false, Durability::Fsync, 1, 0), None);
        assert_eq!(take_limit(false, Durability::Fsync, BACKLOG - 1, 0), None);
        assert_eq!(
            take_limit(false, Durability::Fsync, BACKLOG, 0),
            Some(TRICKLE)
        );
        assert_eq!(take_limit(false, Durability::Fsync, BACKLOG, 1), None);
    }
}
