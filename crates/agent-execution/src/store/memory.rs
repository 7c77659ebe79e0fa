//! `InMemoryTraceStore`: a trace store that keeps everything in memory, for tests and for
//! embedding the runner where nothing needs to outlive the process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use agent_goal::GoalTree;
use async_trait::async_trait;
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use crate::bus::EventBus;
use crate::event::Event;
use crate::ids::{split_message_id, validate_trace_id};
use crate::message::Message;
use crate::store::{Commit, StoreError, TraceState, TraceStore, TraceTxn};
use crate::trace::{Trace, TraceFilter};

/// A [`TraceStore`] in memory. Cheap to create; every trace lives as long as the store.
#[derive(Debug, Default)]
pub struct InMemoryTraceStore {
    traces: Mutex<HashMap<String, Arc<AsyncMutex<Slot>>>>,
    bus: EventBus,
}

#[derive(Debug, Default)]
struct Slot {
    /// `None` while the trace is being created.
    state: Option<TraceState>,
    /// Messages by sequence − 1.
    messages: Vec<Message>,
    /// Events by id − 1.
    events: Vec<Event>,
    /// Sequences of the messages of each goal.
    by_goal: HashMap<String, Vec<u64>>,
}

impl InMemoryTraceStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store whose watchers may fall `capacity` events behind the writers before they
    /// catch up from the store.
    pub fn with_feed_capacity(capacity: usize) -> Self {
        Self {
            traces: Mutex::default(),
            bus: EventBus::with_capacity(capacity),
        }
    }

    fn slot(&self, trace_id: &str) -> Option<Arc<AsyncMutex<Slot>>> {
        let traces = self.traces.lock().unwrap_or_else(PoisonError::into_inner);
        traces.get(trace_id).cloned()
    }

    /// Runs a read on a trace; `None` if it does not exist.
    async fn read<T>(
        &self,
        trace_id: &str,
        read: impl FnOnce(&Slot, &TraceState) -> T,
    ) -> Result<Option<T>, StoreError> {
        validate_trace_id(trace_id)?;
        let Some(slot) = self.slot(trace_id) else {
            return Ok(None);
        };
        let slot = slot.lock().await;
        Ok(slot.state.as_ref().map(|state| read(&slot, state)))
    }

    /// Runs a read on a trace that must exist.
    async fn read_existing<T>(
        &self,
        trace_id: &str,
        read: impl FnOnce(&Slot, &TraceState) -> T,
    ) -> Result<T, StoreError> {
        self.read(trace_id, read)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                trace_id: trace_id.to_owned(),
            })
    }
}

struct MemoryTxn {
    slot: OwnedMutexGuard<Slot>,
}

#[async_trait]
impl TraceTxn for MemoryTxn {
    fn state(&self) -> Option<&TraceState> {
        self.slot.state.as_ref()
    }

    fn state_mut(&mut self) -> Option<&mut TraceState> {
        self.slot.state.as_mut()
    }

    async fn read_message(&mut self, sequence: u64) -> Result<Option<Message>, StoreError> {
        Ok(index(sequence)
            .and_then(|i| self.slot.messages.get(i))
            .cloned())
    }

    async fn commit(&mut self, commit: Commit) -> Result<Vec<Event>, StoreError> {
        let slot = &mut *self.slot;
        for message in commit.messages {
            let Some(position) = index(message.sequence) else {
                continue;
            };
            if position == slot.messages.len() {
                if let Some(goal_id) = &message.goal_id {
                    slot.by_goal
                        .entry(goal_id.clone())
                        .or_default()
                        .push(message.sequence);
                }
                slot.messages.push(message);
            } else if let Some(stored) = slot.messages.get_mut(position) {
                *stored = message;
            }
        }
        slot.events.extend(commit.events.iter().cloned());
        if let Some(created) = commit.created {
            slot.state = Some(created);
        }
        Ok(commit.events)
    }
}

/// The vector position of a sequence or event id (both count from 1).
fn index(id: u64) -> Option<usize> {
    usize::try_from(id).ok()?.checked_sub(1)
}

#[async_trait]
impl TraceStore for InMemoryTraceStore {
    async fn begin(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError> {
        validate_trace_id(trace_id)?;
        let not_found = || StoreError::NotFound {
            trace_id: trace_id.to_owned(),
        };
        let slot = self.slot(trace_id).ok_or_else(not_found)?;
        let slot = slot.lock_owned().await;
        if slot.state.is_none() {
            return Err(not_found());
        }
        Ok(Box::new(MemoryTxn { slot }))
    }

    async fn begin_new(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError> {
        validate_trace_id(trace_id)?;
        let slot = {
            let mut traces = self.traces.lock().unwrap_or_else(PoisonError::into_inner);
            traces.entry(trace_id.to_owned()).or_default().clone()
        };
        let slot = slot.lock_owned().await;
        if slot.state.is_some() {
            return Err(StoreError::AlreadyExists {
                trace_id: trace_id.to_owned(),
            });
        }
        Ok(Box::new(MemoryTxn { slot }))
    }

    fn event_bus(&self) -> &EventBus {
        &self.bus
    }

    async fn get_trace(&self, trace_id: &str) -> Result<Option<Trace>, StoreError> {
        self.read(trace_id, |_, state| state.trace.clone()).await
    }

    async fn list_traces(&self, filter: &TraceFilter) -> Result<Vec<Trace>, StoreError> {
        let slots: Vec<_> = {
            let traces = self.traces.lock().unwrap_or_else(PoisonError::into_inner);
            traces.values().cloned().collect()
        };
        let mut found = Vec::new();
        for slot in slots {
            let slot = slot.lock().await;
            if let Some(state) = &slot.state
                && filter.matches(&state.trace)
            {
                found.push(state.trace.clone());
            }
        }
        Ok(filter.finish(found))
    }

    async fn get_goal_tree(&self, trace_id: &str) -> Result<Option<GoalTree>, StoreError> {
        self.read(trace_id, |_, state| state.goal_tree.clone())
            .await
    }

    async fn get_trace_messages(&self, trace_id: &str) -> Result<Vec<Message>, StoreError> {
        self.read_existing(trace_id, |slot, _| slot.messages.clone())
            .await
    }

    async fn get_messages_by_goal(
        &self,
        trace_id: &str,
        goal_id: &str,
    ) -> Result<Vec<Message>, StoreError> {
        self.read_existing(trace_id, |slot, _| {
            slot.by_goal
                .get(goal_id)
                .into_iter()
                .flatten()
                .filter_map(|&sequence| index(sequence).and_then(|i| slot.messages.get(i)))
                .cloned()
                .collect()
        })
        .await
    }

    async fn get_message(&self, message_id: &str) -> Result<Option<Message>, StoreError> {
        let (trace_id, sequence) = split_message_id(message_id)?;
        let found = self
            .read(trace_id, |slot, _| {
                index(sequence).and_then(|i| slot.messages.get(i)).cloned()
            })
            .await?;
        Ok(found.flatten())
    }

    async fn get_events(
        &self,
        trace_id: &str,
        since_event_id: u64,
    ) -> Result<Vec<Event>, StoreError> {
        self.read_existing(trace_id, |slot, _| {
            let start = usize::try_from(since_event_id).unwrap_or(usize::MAX);
            slot.events.get(start..).unwrap_or_default().to_vec()
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use futures::{FutureExt, StreamExt};

    use super::*;
    use crate::conformance;
    use crate::{NewMessage, NewTrace, watch};

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn passes_the_conformance_suite() {
        conformance::run_all(|| (Arc::new(InMemoryTraceStore::new()), ())).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_lagging_watcher_catches_up_from_the_store() {
        let store = Arc::new(InMemoryTraceStore::with_feed_capacity(2));
        let id = store
            .create_trace(NewTrace::agent("t"))
            .await
            .unwrap()
            .trace_id;
        let mut feed = watch(store.clone(), &id, 0);
        assert_eq!(feed.next().await.unwrap().unwrap().event_id, 1);
        // The watcher is subscribed but reads nothing while 50 events are published.
        for step in 0..50 {
            store
                .add_message(&id, NewMessage::user(format!("{step}")))
                .await
                .unwrap();
        }
        let rest: Vec<u64> = feed.take(50).map(|e| e.unwrap().event_id).collect().await;
        assert_eq!(rest, (2..=51).collect::<Vec<_>>());
    }

    /// A writer that commits in a tight loop on the watcher's own thread (a current-thread
    /// runtime, where the watcher runs only when the writer lets it) never gets
    /// [`MAKE_WAY_AFTER`](crate::feed::MAKE_WAY_AFTER) events ahead of it.
    #[tokio::test(flavor = "current_thread")]
    async fn a_writer_in_a_tight_loop_stays_close_to_its_watcher() {
        let store = Arc::new(InMemoryTraceStore::new());
        let id = store
            .create_trace(NewTrace::agent("t"))
            .await
            .unwrap()
            .trace_id;
        // The watch starts after event 1, the trace's creation.
        let (seen, watcher) = follow(&store, &id, 1);
        let mut most_behind = 0;
        for step in 0..200 {
            store
                .add_message(&id, NewMessage::user(format!("{step}")))
                .await
                .unwrap();
            let behind = newest_event(&store, &id).await - seen.load(Ordering::SeqCst);
            most_behind = most_behind.max(behind);
        }
        assert!(
            most_behind < crate::feed::MAKE_WAY_AFTER as u64,
            "the watcher fell {most_behind} events behind"
        );
        watcher.abort();
    }

    /// A write to a trace whose watcher keeps up (or that nobody watches) finishes at its first
    /// poll, as the runner's goal tools rely on to answer where they are called.
    #[tokio::test(flavor = "current_thread")]
    async fn a_write_whose_watchers_keep_up_finishes_at_once() {
        let store = Arc::new(InMemoryTraceStore::new());
        let id = store
            .create_trace(NewTrace::agent("t"))
            .await
            .unwrap()
            .trace_id;
        let write = |step: usize| {
            store
                .add_message(&id, NewMessage::user(format!("{step}")))
                .now_or_never()
                .map(Result::unwrap)
        };
        assert!(write(0).is_some(), "an unwatched write waited");
        let (seen, watcher) = follow(&store, &id, 0);
        for step in 1..50 {
            assert!(write(step).is_some(), "write {step} waited");
            // Between steps, the watcher runs.
            while seen.load(Ordering::SeqCst) < newest_event(&store, &id).await {
                tokio::task::yield_now().await;
            }
        }
        watcher.abort();
    }

    /// A watcher of the trace from `since`, as a task that notes the id of each event it gets.
    fn follow(
        store: &Arc<InMemoryTraceStore>,
        id: &str,
        since: u64,
    ) -> (Arc<AtomicU64>, tokio::task::JoinHandle<()>) {
        let seen = Arc::new(AtomicU64::new(since));
        let mut feed = watch(store.clone(), id, since);
        let watcher = tokio::spawn({
            let seen = seen.clone();
            async move {
                while let Some(Ok(event)) = feed.next().await {
                    seen.store(event.event_id, Ordering::SeqCst);
                }
            }
        });
        (seen, watcher)
    }

    async fn newest_event(store: &InMemoryTraceStore, id: &str) -> u64 {
        let events = store.get_events(id, 0).await.unwrap();
        events.last().map_or(0, |event| event.event_id)
    }
}
