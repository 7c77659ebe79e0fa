//! Following a trace that another process writes: a doorbell that rings when its
//! `events.jsonl` grows, and whether its writer is still alive.
//!
//! The doorbell watches the trace folder with the operating system's file notifications
//! (`notify`: inotify on Linux); where they cannot be had (a full inotify table, a file system
//! without them) it polls the file's length every [`POLL`]. A ring only says "read again": the
//! watcher reads the events after its last one from the store, which reads the bytes appended
//! since its last read, so a coalesced or spurious ring loses or repeats nothing. Commits of the
//! store instance that writes the trace are on its event bus already; while this instance is
//! the trace's writer, the doorbell stays quiet.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use agent_execution::Doorbell;
use futures::StreamExt;
use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;

/// How often the polling fallback looks at the log's length.
pub(crate) const POLL: Duration = Duration::from_millis(200);

/// A doorbell for the trace in `dir`; `writing` is true while this store instance writes it.
pub(crate) fn doorbell(dir: PathBuf, writing: Arc<AtomicBool>) -> Doorbell {
    // One pending ring is enough: the watcher reads everything new when it wakes.
    let (ring, rings) = mpsc::channel::<()>(1);
    let log = dir.join(crate::trace_files::EVENTS);
    let notifier = {
        let ring = ring.clone();
        let writing = writing.clone();
        let log = log.clone();
        notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let about_log = event.is_ok_and(|event| event.paths.iter().any(|p| p == &log));
            if about_log && !writing.load(Ordering::Relaxed) {
                let _ = ring.try_send(());
            }
        })
        .and_then(|mut watcher| {
            watcher.watch(&dir, RecursiveMode::NonRecursive)?;
            Ok(watcher)
        })
    };
    let keep = match notifier {
        Ok(watcher) => Some(watcher),
        Err(error) => {
            tracing::debug!(%error, dir = %dir.display(), "no file notifications; polling");
            tokio::spawn(poll(log, ring, writing));
            None
        }
    };
    // The stream owns the watcher: dropping the stream stops the notifications.
    futures::stream::unfold((rings, keep), |(mut rings, keep)| async move {
        rings.recv().await.map(|()| ((), (rings, keep)))
    })
    .boxed()
}

/// Rings whenever the log's length changes, until the doorbell is dropped.
async fn poll(log: PathBuf, ring: mpsc::Sender<()>, writing: Arc<AtomicBool>) {
    let length = |log: &Path| std::fs::metadata(log).map(|m| m.len()).ok();
    let mut seen = length(&log);
    while !ring.is_closed() {
        tokio::time::sleep(POLL).await;
        let now = length(&log);
        if now != seen {
            seen = now;
            if !writing.load(Ordering::Relaxed) && ring.try_send(()).is_err() && ring.is_closed() {
                return;
            }
        }
    }
}

/// Whether a process holds the trace's `.lock` (its writer is alive): `Some(false)` when the
/// lock can be taken, that is when no process writes the trace. The probe takes the lock
/// shared and lets it go at once.
pub(crate) fn writer_alive(dir: &Path) -> std::io::Result<Option<bool>> {
    let path = dir.join(crate::trace_files::LOCK);
    let file: File = match OpenOptions::new().read(true).open(&path) {
        Ok(file) => file,
        // No lock file: no process has ever written the trace here.
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Some(false)),
        Err(error) => return Err(error),
    };
    match file.try_lock_shared() {
        Ok(()) => Ok(Some(false)),
        Err(TryLockError::WouldBlock) => Ok(Some(true)),
        Err(TryLockError::Error(error)) => Err(error),
    }
}
