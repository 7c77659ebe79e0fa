//! The live event feed of a trace: an [`EventBus`] that stores publish committed events on, and
//! [`watch`], a stream that replays stored events after a given id and continues with live ones,
//! with no gap and no duplicate.
//!
//! How the two parts meet: `watch` subscribes to the bus *before* it reads the store, so every
//! event committed after the read is also in the subscription; then it skips live events it has
//! already yielded (by `event_id`). Stores publish while they still hold the trace's write lock,
//! so live events arrive in id order. A subscriber that falls behind the bus's buffer reads the
//! missed events from the store again instead of skipping them.
//!
//! Live-only deltas: while a model call is under way the runner publishes [`LiveDelta`]s (pieces
//! of the assistant's text or reasoning) on the same per-trace channel. They are never stored,
//! carry no event id and are never replayed: [`watch_live`] yields them interleaved with the
//! stored events, in the order they were published, and [`watch`] leaves them out. A watcher
//! that falls behind the bus's buffer may lose deltas (the complete message still arrives as a
//! stored `message_added`), but never a stored event. A delta is dropped too when the watcher
//! has already yielded a stored event newer than the last one committed before the delta, so a
//! delta never follows the message it belongs to.
//!
//! Commits made elsewhere (another process on the same trace folder, another node of a shared
//! store) are not on this bus: a store that can see them offers a doorbell
//! ([`TraceStore::changes`]), and a watcher that hears it reads the store after its last event,
//! the same read as its catch-up — replay and live are one query, so a missed ring loses
//! nothing. Deltas of a model call made elsewhere are not seen.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use futures::StreamExt;
use futures::stream::BoxStream;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use serde::{Deserialize, Serialize};

use crate::event::Event;
use crate::store::{StoreError, TraceStore};

/// How many events a subscriber may fall behind before it catches up from the store.
pub const DEFAULT_FEED_CAPACITY: usize = 1024;

/// What a live delta is a piece of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeltaKind {
    /// The assistant's text.
    Text,
    /// The model's reasoning, as the provider shows it while it streams.
    Reasoning,
    /// The text of the closing report, written after the run's final answer (the API sends it
    /// as text).
    Report,
}

/// A piece of a model answer still being generated: live-only, never stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveDelta {
    /// The trace whose model call this is.
    pub trace_id: String,
    /// The goal the answer will be tied to, if any.
    pub goal_id: Option<String>,
    /// What the piece is part of.
    pub kind: DeltaKind,
    /// The next piece, to be appended to the earlier ones of the same call.
    pub delta: String,
}

/// One item of the feed: a committed event or a live-only delta.
// Events are the common item and were sent unboxed before deltas existed; boxing them would cost
// an allocation each for the sake of the smaller variant.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum LiveEvent {
    /// A stored event.
    Stored(Event),
    /// A live-only piece of a model answer.
    Delta(LiveDelta),
}

/// A committed event as the feed hands it to every watcher of the trace: one copy of the event,
/// and its JSON, made by the first watcher that asks for it and reused by the others, so a
/// hundred watchers cost one serialisation.
#[derive(Debug)]
pub struct SharedEvent {
    event: Event,
    json: OnceLock<Option<Arc<str>>>,
}

impl SharedEvent {
    /// Shares an event.
    pub fn new(event: Event) -> Arc<Self> {
        Arc::new(Self {
            event,
            json: OnceLock::new(),
        })
    }

    /// The event.
    pub fn event(&self) -> &Event {
        &self.event
    }

    /// The event's JSON, as the Contract writes it; `None` if it cannot be serialised (the
    /// caller reports it).
    pub fn json(&self) -> Option<Arc<str>> {
        self.json
            .get_or_init(|| serde_json::to_string(&self.event).ok().map(Arc::from))
            .clone()
    }

    /// The event itself, copied only when another watcher still shares it.
    fn into_event(self: Arc<Self>) -> Event {
        Arc::try_unwrap(self).map_or_else(|shared| shared.event.clone(), |owned| owned.event)
    }
}

/// One item of [`watch_shared`]: a committed event, shared with the trace's other watchers, or a
/// live-only delta.
#[derive(Debug, Clone)]
pub enum SharedItem {
    /// A stored event.
    Stored(Arc<SharedEvent>),
    /// A live-only piece of a model answer.
    Delta(LiveDelta),
}

/// What travels on a trace's channel: an event, or a delta with the id of the newest event
/// published before it (if the channel has seen one).
#[derive(Debug, Clone)]
enum Item {
    Event(Arc<SharedEvent>),
    Delta(Option<u64>, LiveDelta),
}

#[derive(Debug)]
struct Channel {
    sender: broadcast::Sender<Item>,
    last_event_id: Option<u64>,
}

/// Per-trace broadcast channels of committed events and live deltas.
#[derive(Debug)]
pub struct EventBus {
    channels: Mutex<HashMap<String, Channel>>,
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

    /// Subscribes to the events of a trace committed from now on, and its live deltas.
    fn subscribe(&self, trace_id: &str) -> broadcast::Receiver<Item> {
        let mut channels = self.channels.lock().unwrap_or_else(PoisonError::into_inner);
        channels
            .entry(trace_id.to_owned())
            .or_insert_with(|| Channel {
                sender: broadcast::channel(self.capacity).0,
                last_event_id: None,
            })
            .sender
            .subscribe()
    }

    /// Publishes a live-only delta to the trace's current watchers; nothing is stored and a
    /// trace nobody watches costs nothing.
    pub fn publish_delta(&self, delta: LiveDelta) {
        let mut channels = self.channels.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(channel) = channels.get(&delta.trace_id) else {
            return;
        };
        if channel.sender.receiver_count() == 0 {
            channels.remove(&delta.trace_id);
            return;
        }
        // Sending fails only when every receiver is gone, which is not an error here.
        let _ = channel
            .sender
            .send(Item::Delta(channel.last_event_id, delta));
    }

    /// Publishes committed events, in id order. Stores call this while they still hold the
    /// trace's write lock.
    pub fn publish(&self, trace_id: &str, events: &[Event]) {
        let mut channels = self.channels.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(channel) = channels.get_mut(trace_id) else {
            return;
        };
        if channel.sender.receiver_count() == 0 {
            channels.remove(trace_id);
            return;
        }
        for event in events {
            channel.last_event_id = Some(event.event_id);
            // Sending fails only when every receiver is gone, which is not an error here.
            let _ = channel
                .sender
                .send(Item::Event(SharedEvent::new(event.clone())));
        }
    }
}

/// A stream of a trace's events; see [`watch`].
pub type EventStream = BoxStream<'static, Result<Event, StoreError>>;

/// A stream of a trace's events and live deltas; see [`watch_live`].
pub type LiveStream = BoxStream<'static, Result<LiveEvent, StoreError>>;

/// A stream of a trace's events, shared between its watchers, and live deltas; see
/// [`watch_shared`].
pub type SharedStream = BoxStream<'static, Result<SharedItem, StoreError>>;

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
    watcher(store, trace_id, since_event_id, false)
        .filter_map(|item| async move {
            match item {
                Ok(SharedItem::Stored(event)) => Some(Ok(event.into_event())),
                Ok(SharedItem::Delta(_)) => None,
                Err(error) => Some(Err(error)),
            }
        })
        .boxed()
}

/// As [`watch`], with the live-only deltas of model calls interleaved: every stored event after
/// `since_event_id` exactly once and in id order, and the deltas published while the stream is
/// open, in order, each before the stored message it belongs to (a late or lagging watcher may
/// miss some deltas; see the module's documentation).
pub fn watch_live<S>(store: Arc<S>, trace_id: &str, since_event_id: u64) -> LiveStream
where
    S: TraceStore + ?Sized + 'static,
{
    watcher(store, trace_id, since_event_id, true)
        .map(|item| {
            item.map(|item| match item {
                SharedItem::Stored(event) => LiveEvent::Stored(event.into_event()),
                SharedItem::Delta(delta) => LiveEvent::Delta(delta),
            })
        })
        .boxed()
}

/// As [`watch_live`], with each committed event shared between the trace's watchers rather than
/// copied for each: for a server that sends every event to many watchers, serialising it once
/// ([`SharedEvent::json`]).
pub fn watch_shared<S>(store: Arc<S>, trace_id: &str, since_event_id: u64) -> SharedStream
where
    S: TraceStore + ?Sized + 'static,
{
    watcher(store, trace_id, since_event_id, true).boxed()
}

fn watcher<S>(
    store: Arc<S>,
    trace_id: &str,
    since_event_id: u64,
    deltas: bool,
) -> impl futures::Stream<Item = Result<SharedItem, StoreError>> + Send + 'static
where
    S: TraceStore + ?Sized + 'static,
{
    let receiver = store.event_bus().subscribe(trace_id);
    let doorbell = store.changes(trace_id);
    let watcher = Watcher {
        doorbell,
        store,
        trace_id: trace_id.to_owned(),
        receiver,
        last: since_event_id,
        pending: VecDeque::new(),
        catch_up: true,
        done: false,
        deltas,
    };
    futures::stream::unfold(watcher, |mut watcher| async move {
        let item = watcher.next().await?;
        Some((item, watcher))
    })
}

struct Watcher<S: ?Sized> {
    /// Rings when the trace may have changed elsewhere.
    doorbell: Option<crate::store::Doorbell>,
    store: Arc<S>,
    trace_id: String,
    receiver: broadcast::Receiver<Item>,
    /// The id of the newest event yielded (or the starting point).
    last: u64,
    pending: VecDeque<Event>,
    /// True when the next events must be read from the store.
    catch_up: bool,
    done: bool,
    /// Whether live deltas are yielded.
    deltas: bool,
}

impl<S: TraceStore + ?Sized> Watcher<S> {
    async fn next(&mut self) -> Option<Result<SharedItem, StoreError>> {
        loop {
            if self.done {
                return None;
            }
            if let Some(event) = self.pending.pop_front() {
                if event.event_id <= self.last {
                    continue;
                }
                self.last = event.event_id;
                return Some(Ok(SharedItem::Stored(SharedEvent::new(event))));
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
            let received = match &mut self.doorbell {
                None => self.receiver.recv().await,
                Some(doorbell) => tokio::select! {
                    received = self.receiver.recv() => received,
                    rang = doorbell.next() => {
                        match rang {
                            Some(()) => self.catch_up = true,
                            // A doorbell that stopped: go on with the bus alone.
                            None => self.doorbell = None,
                        }
                        continue;
                    }
                },
            };
            match received {
                Ok(Item::Delta(after, delta)) => {
                    // A delta published before a stored event this watcher has already yielded
                    // may belong to a message already shown: leave it out.
                    let stale = after.is_some_and(|after| after < self.last);
                    if self.deltas && !stale {
                        return Some(Ok(SharedItem::Delta(delta)));
                    }
                }
                Ok(Item::Event(event)) if event.event.event_id <= self.last => {}
                Ok(Item::Event(event)) if event.event.event_id == self.last + 1 => {
                    self.last = event.event.event_id;
                    return Some(Ok(SharedItem::Stored(event)));
                }
                // A hole means this subscriber missed events: read them from the store.
                Ok(Item::Event(_)) | Err(RecvError::Lagged(_)) => self.catch_up = true,
                Err(RecvError::Closed) => return None,
            }
        }
    }
}
