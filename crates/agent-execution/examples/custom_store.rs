//! A trace store of your own: `HashMapTraceStore` keeps every trace in a `Mutex<HashMap>` and
//! implements the primitives of [`TraceStore`], then proves itself against the conformance suite
//! every store must pass.
//!
//! A store implements only a few things: [`TraceStore::begin`] and [`TraceStore::begin_new`] lock
//! one trace for a write and hand back a [`TraceTxn`], whose [`TraceTxn::commit`] persists a
//! [`Commit`] planned by shared code ([`agent_execution::plan_commit`]); plus the reads and an
//! [`EventBus`]. Everything else (messages, goal commands, statistics roll-up, events,
//! sub-traces) is a provided method of the trait, the same for every store. A database-backed
//! store follows the same shape: `begin` takes a row lock, `commit` is one transaction.
//!
//! Run it with
//! `cargo run -p goaltree-execution --example custom_store --features conformance`.

use std::collections::HashMap;
use std::error::Error;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use agent_execution::conformance;
use agent_execution::feed::EventBus;
use agent_execution::ids::split_message_id;
use agent_execution::{
    Commit, Event, Message, NewMessage, NewTrace, StoreError, Trace, TraceFilter, TraceState,
    TraceStore, TraceTxn, validate_trace_id,
};
use agent_goal::GoalTree;
use async_trait::async_trait;
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// Everything stored for one trace.
struct Record {
    /// The trace, its goal tree and counters, as the last commit left them.
    state: TraceState,
    /// Messages by sequence − 1 (sequences count from 1).
    messages: Vec<Message>,
    /// Events by id − 1 (event ids count from 1, with no gap).
    events: Vec<Event>,
}

/// A [`TraceStore`] in a `HashMap`.
///
/// The data sits behind one `std::sync::Mutex`, held only for the moment of a read or a commit
/// and never across an `.await`. Writers are serialised per trace by an async lock that a
/// [`TraceTxn`] holds from `begin` to its drop, so two writes to one trace never interleave while
/// writes to different traces go side by side.
#[derive(Default)]
struct HashMapTraceStore {
    traces: Mutex<HashMap<String, Record>>,
    writers: Mutex<HashMap<String, Arc<AsyncMutex<()>>>>,
    bus: EventBus,
}

impl HashMapTraceStore {
    fn traces(&self) -> MutexGuard<'_, HashMap<String, Record>> {
        // A panic elsewhere cannot leave a record half-written (commits do not panic), so a
        // poisoned lock is still good to use.
        self.traces.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the write lock of a trace id, waiting for the writer that holds it.
    async fn lock_writer(&self, trace_id: &str) -> OwnedMutexGuard<()> {
        let lock = {
            let mut writers = self.writers.lock().unwrap_or_else(PoisonError::into_inner);
            writers.entry(trace_id.to_owned()).or_default().clone()
        };
        lock.lock_owned().await
    }

    /// Runs `read` on a trace; `None` if there is no such trace.
    fn read<T>(
        &self,
        trace_id: &str,
        read: impl FnOnce(&Record) -> T,
    ) -> Result<Option<T>, StoreError> {
        validate_trace_id(trace_id)?;
        Ok(self.traces().get(trace_id).map(read))
    }

    /// Runs `read` on a trace that must exist.
    fn read_existing<T>(
        &self,
        trace_id: &str,
        read: impl FnOnce(&Record) -> T,
    ) -> Result<T, StoreError> {
        self.read(trace_id, read)?
            .ok_or_else(|| StoreError::NotFound {
                trace_id: trace_id.to_owned(),
            })
    }
}

/// One write to one trace: the trace's write lock and the state the write is planned against.
struct HashMapTxn<'a> {
    store: &'a HashMapTraceStore,
    trace_id: String,
    /// A copy of the stored state, taken under the write lock, so nobody else changes it.
    state: Option<TraceState>,
    _writer: OwnedMutexGuard<()>,
}

#[async_trait]
impl TraceTxn for HashMapTxn<'_> {
    fn state(&self) -> Option<&TraceState> {
        self.state.as_ref()
    }

    fn state_mut(&mut self) -> Option<&mut TraceState> {
        self.state.as_mut()
    }

    async fn read_message(&mut self, sequence: u64) -> Result<Option<Message>, StoreError> {
        Ok(self
            .store
            .read(&self.trace_id, |record| message_at(record, sequence))?
            .flatten())
    }

    async fn commit(&mut self, commit: Commit) -> Result<Vec<Event>, StoreError> {
        // The state after the write: planned in place in `self.state`, or the new trace's.
        if let Some(created) = commit.created {
            self.state = Some(created);
        }
        let Some(state) = &self.state else {
            return Err(StoreError::Internal("no state to commit".into()));
        };
        // The whole commit is applied under one lock, so readers see it all or nothing.
        let mut traces = self.store.traces();
        let record = traces
            .entry(self.trace_id.clone())
            .or_insert_with(|| Record {
                state: state.clone(),
                messages: Vec::new(),
                events: Vec::new(),
            });
        for message in commit.messages {
            // A commit carries new messages and new versions of updated ones.
            match index(message.sequence) {
                Some(i) if i < record.messages.len() => record.messages[i] = message,
                _ => record.messages.push(message),
            }
        }
        record.events.extend(commit.events.iter().cloned());
        record.state = state.clone();
        Ok(commit.events)
    }
}

/// The position of a sequence number or event id, both counted from 1.
fn index(id: u64) -> Option<usize> {
    usize::try_from(id).ok()?.checked_sub(1)
}

fn message_at(record: &Record, sequence: u64) -> Option<Message> {
    index(sequence).and_then(|i| record.messages.get(i).cloned())
}

#[async_trait]
impl TraceStore for HashMapTraceStore {
    async fn begin(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError> {
        validate_trace_id(trace_id)?;
        let not_found = || StoreError::NotFound {
            trace_id: trace_id.to_owned(),
        };
        if self.read(trace_id, |_| ())?.is_none() {
            return Err(not_found());
        }
        let writer = self.lock_writer(trace_id).await;
        let state = self.read(trace_id, |record| record.state.clone())?;
        Ok(Box::new(HashMapTxn {
            store: self,
            trace_id: trace_id.to_owned(),
            state: Some(state.ok_or_else(not_found)?),
            _writer: writer,
        }))
    }

    async fn begin_new(&self, trace_id: &str) -> Result<Box<dyn TraceTxn + '_>, StoreError> {
        validate_trace_id(trace_id)?;
        // Holding the write lock reserves the id: a second `begin_new` of it waits here, then
        // finds the trace the first one created.
        let writer = self.lock_writer(trace_id).await;
        if self.read(trace_id, |_| ())?.is_some() {
            return Err(StoreError::AlreadyExists {
                trace_id: trace_id.to_owned(),
            });
        }
        Ok(Box::new(HashMapTxn {
            store: self,
            trace_id: trace_id.to_owned(),
            state: None,
            _writer: writer,
        }))
    }

    fn event_bus(&self) -> &EventBus {
        &self.bus
    }

    async fn get_trace(&self, trace_id: &str) -> Result<Option<Trace>, StoreError> {
        self.read(trace_id, |record| record.state.trace.clone())
    }

    async fn list_traces(&self, filter: &TraceFilter) -> Result<Vec<Trace>, StoreError> {
        let found = self
            .traces()
            .values()
            .map(|record| &record.state.trace)
            .filter(|trace| filter.matches(trace))
            .cloned()
            .collect();
        // `finish` sorts newest first and applies the limit, as every store must.
        Ok(filter.finish(found))
    }

    async fn get_goal_tree(&self, trace_id: &str) -> Result<Option<GoalTree>, StoreError> {
        self.read(trace_id, |record| record.state.goal_tree.clone())
    }

    async fn get_trace_messages(&self, trace_id: &str) -> Result<Vec<Message>, StoreError> {
        self.read_existing(trace_id, |record| record.messages.clone())
    }

    async fn get_messages_by_goal(
        &self,
        trace_id: &str,
        goal_id: &str,
    ) -> Result<Vec<Message>, StoreError> {
        // A scan is fine for a small store; `InMemoryTraceStore` keeps an index by goal instead.
        self.read_existing(trace_id, |record| {
            record
                .messages
                .iter()
                .filter(|message| message.goal_id.as_deref() == Some(goal_id))
                .cloned()
                .collect()
        })
    }

    async fn get_message(&self, message_id: &str) -> Result<Option<Message>, StoreError> {
        let (trace_id, sequence) = split_message_id(message_id)?;
        Ok(self
            .read(trace_id, |record| message_at(record, sequence))?
            .flatten())
    }

    async fn get_events(
        &self,
        trace_id: &str,
        since_event_id: u64,
    ) -> Result<Vec<Event>, StoreError> {
        self.read_existing(trace_id, |record| {
            let skip = usize::try_from(since_event_id).unwrap_or(usize::MAX);
            record.events.iter().skip(skip).cloned().collect()
        })
    }
}

// The suite's concurrency checks need a runtime with more than one thread.
#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() -> Result<(), Box<dyn Error>> {
    // The provided methods work on the new store like on any other.
    let store = Arc::new(HashMapTraceStore::default());
    let trace = store.create_trace(NewTrace::agent("Try the store")).await?;
    store
        .add_message(&trace.trace_id, NewMessage::user("Hello"))
        .await?;
    let events = store.get_events(&trace.trace_id, 0).await?;
    let names: Vec<&str> = events.iter().map(Event::name).collect();
    println!("trace {} recorded events {names:?}", trace.trace_id);

    // Every check runs on a fresh store; a failing check panics with what went wrong.
    println!("running the TraceStore conformance suite against HashMapTraceStore...");
    conformance::run_all(|| (Arc::new(HashMapTraceStore::default()), ())).await;
    println!("HashMapTraceStore passed the conformance suite");
    Ok(())
}
