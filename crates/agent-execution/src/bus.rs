//! The per-trace channels that stores publish committed events on and the runner publishes
//! live-only deltas on: the [`EventBus`] and what travels on it. Below both the store, which
//! publishes while it holds a trace's lock, and the feed ([`crate::feed`]), which subscribes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::event::Event;

/// How many events a subscriber may fall behind before it catches up from the store.
pub const DEFAULT_FEED_CAPACITY: usize = 1024;

/// How many items a trace's slowest subscriber may have left to receive before a write to the
/// trace makes way for its watchers ([`EventBus::make_way_for_watchers`]): more than a step
/// writes, so that a run whose watchers keep up never yields for them.
pub const MAKE_WAY_AFTER: usize = 16;

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
/// hundred watchers cost one serialisation and no copy of the text (the JSON is a
/// reference-counted buffer a server can send as it is).
#[derive(Debug)]
pub struct SharedEvent {
    event: Event,
    json: OnceLock<Option<Bytes>>,
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

    /// The event's JSON (UTF-8), as the Contract writes it, shared: cloning it copies no text.
    /// `None` if it cannot be serialised (the caller reports it).
    pub fn json(&self) -> Option<Bytes> {
        self.json
            .get_or_init(|| serde_json::to_vec(&self.event).ok().map(Bytes::from))
            .clone()
    }

    /// The event itself, copied only when another watcher still shares it.
    pub(crate) fn into_event(self: Arc<Self>) -> Event {
        Arc::try_unwrap(self).map_or_else(|shared| shared.event.clone(), |owned| owned.event)
    }
}

/// One item of [`watch_shared`](crate::feed::watch_shared): a committed event, shared with the
/// trace's other watchers, or a live-only delta.
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
pub(crate) enum Item {
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
    pub(crate) fn subscribe(&self, trace_id: &str) -> broadcast::Receiver<Item> {
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

    /// How many events and deltas of the trace its slowest subscriber has not received yet
    /// (0 when nobody subscribes).
    fn unread(&self, trace_id: &str) -> usize {
        let channels = self.channels.lock().unwrap_or_else(PoisonError::into_inner);
        channels
            .get(trace_id)
            .map_or(0, |channel| channel.sender.len())
    }

    /// Called by a writer after a commit to the trace, with its lock released: when a
    /// subscriber of the trace has [`MAKE_WAY_AFTER`] or more items left to receive, lets the
    /// worker run its other ready tasks (the watchers that have something to send among them)
    /// before the writer goes on, with one [`tokio::task::yield_now`]. A writer that commits in
    /// a tight loop would otherwise hold its worker thread for a whole scheduling budget (a
    /// hundred commits or more) while every watcher's backlog grows, and the watchers' delay
    /// with it. This waits for no watcher: the writer goes on as soon as the worker has run
    /// what was ready (a watcher whose client reads slowly, or not at all, is not ready), and a
    /// write to a trace whose watchers keep up, or that nobody watches, does not yield at all,
    /// so a step's writes still finish where they are made.
    pub async fn make_way_for_watchers(&self, trace_id: &str) {
        if self.unread(trace_id) >= MAKE_WAY_AFTER {
            tokio::task::yield_now().await;
        }
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
