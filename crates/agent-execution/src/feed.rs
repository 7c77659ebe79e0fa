//! The live event feed of a trace: an [`EventBus`] that stores publish committed events on, and
//! [`watch`], a stream that replays stored events after a given id and continues with live ones,
//! with no gap and no duplicate.
//!
//! How the two parts meet: `watch` subscribes to the bus *before* it reads the store, so every
//! event committed after the read is also in the subscription; then it skips live events it has
//! already yielded (by `event_id`). Stores publish while they still hold the trace's write lock,
//! so live events arrive in id order. A subscriber that falls behind the bus's buffer reads the
//! missed events from the store again instead of skipping them.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use futures::StreamExt;
use futures::stream::BoxStream;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use crate::event::Event;
use crate::store::{StoreError, TraceStore};

/// How many events a subscriber may fall behind before it catches up from the store.
pub const DEFAULT_FEED_CAPACITY: usize = 1024;

/// Per-trace broadcast channels of committed events.
#[derive(Debug)]
pub struct EventBus {
    channels: Mutex<HashMap<String, broadcast::Sender<Event>>>,
    capacity: usize,
}

impl Default for EventBus {
    fn default() -> Self {
        Self::new()
    }
}

impl EventBus {
    /// A bus with [`DEFAULT_FEED_CAPACITY`].
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_FEED_CAPACITY)
    }

    /// A bus whose subscribers may fall `capacity` events behind before catching up from the
    /// store.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            channels: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
        }
    }

    /// Subscribes to the events of a trace committed from now on.
    pub fn subscribe(&self, trace_id: &str) -> broadcast::Receiver<Event> {
        let mut channels = self.channels.lock().unwrap_or_else(PoisonError::into_inner);
        channels
            .entry(trace_id.to_owned())
            .or_insert_with(|| broadcast::channel(self.capacity).0)
            .subscribe()
    }

    /// Publishes committed events, in id order. Stores call this while they still hold the
    /// trace's write lock.
    pub fn publish(&self, trace_id: &str, events: &[Event]) {
        let mut channels = self.channels.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(sender) = channels.get(trace_id) else {
            return;
        };
        if sender.receiver_count() == 0 {
            channels.remove(trace_id);
            return;
        }
        for event in events {
            // Sending fails only when every receiver is gone, which is not an error here.
            let _ = sender.send(event.clone());
        }
    }
}

/// A stream of a trace's events; see [`watch`].
pub type EventStream = BoxStream<'static, Result<Event, StoreError>>;

/// Every event of the trace after `since_event_id`: first the stored ones, then live ones as they
/// are committed, each exactly once and in id order.
///
/// The stream ends when the store is dropped; after an error (e.g. the trace does not exist) it
/// yields that error and ends. It does not end at `trace_completed`, so a consumer that only
/// follows one run stops there itself.
pub fn watch<S>(store: Arc<S>, trace_id: &str, since_event_id: u64) -> EventStream
where
    S: TraceStore + ?Sized + 'static,
{
    let receiver = store.event_bus().subscribe(trace_id);
    let watcher = Watcher {
        store,
        trace_id: trace_id.to_owned(),
        receiver,
        last: since_event_id,
        pending: VecDeque::new(),
        catch_up: true,
        done: false,
    };
    futures::stream::unfold(watcher, |mut watcher| async move {
        let item = watcher.next().await?;
        Some((item, watcher))
    })
    .boxed()
}

struct Watcher<S: ?Sized> {
    store: Arc<S>,
    trace_id: String,
    receiver: broadcast::Receiver<Event>,
    /// The id of the newest event yielded (or the starting point).
    last: u64,
    pending: VecDeque<Event>,
    /// True when the next events must be read from the store.
    catch_up: bool,
    done: bool,
}

impl<S: TraceStore + ?Sized> Watcher<S> {
    async fn next(&mut self) -> Option<Result<Event, StoreError>> {
        loop {
            if self.done {
                return None;
            }
            if let Some(event) = self.pending.pop_front() {
                if event.event_id <= self.last {
                    continue;
                }
                self.last = event.event_id;
                return Some(Ok(event));
            }
            if self.catch_up {
                self.catch_up = false;
                match self.store.get_events(&self.trace_id, self.last).await {
                    Ok(events) => self.pending.extend(events),
                    Err(error) => {
                        self.done = true;
                        return Some(Err(error));
                    }
                }
                continue;
            }
            match self.receiver.recv().await {
                Ok(event) if event.event_id <= self.last => {}
                Ok(event) if event.event_id == self.last + 1 => {
                    self.last = event.event_id;
                    return Some(Ok(event));
                }
                // A hole means this subscriber missed events: read them from the store.
                Ok(_) | Err(RecvError::Lagged(_)) => self.catch_up = true,
                Err(RecvError::Closed) => return None,
            }
        }
    }
}
