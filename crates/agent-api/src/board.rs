//! The waiting board that approvals and elicitations share: what a run waits for (a decision on
//! a tool call, an answer to a server's question) is parked per trace until a client resolves
//! it or the wait ends, whichever comes first.
//!
//! A parked item leaves the board when it is resolved, or when its waiter goes away (the
//! [`Waiting`] guard is dropped: the run was cancelled, the wait timed out). The ids of the
//! items resolved recently are remembered per trace, a bounded number of them, so that a second
//! resolution is told apart from an unknown id ([`Refusal::Resolved`] against
//! [`Refusal::Unknown`]: 409 against 404 for the routes).

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

/// Why an item could not be resolved.
#[derive(Debug, PartialEq)]
pub(crate) enum Refusal<E> {
    /// The trace has no such item waiting, and had none recently.
    Unknown,
    /// It was resolved already.
    Resolved,
    /// The caller's check of the item refused the reply; the item keeps waiting.
    Invalid(E),
    /// It was taken off the board, but its waiter had already gone.
    NotWaiting,
}

struct Parked<T, R> {
    key: u64,
    id: String,
    item: T,
    sender: oneshot::Sender<R>,
}

struct Inner<T, R> {
    next: u64,
    pending: HashMap<String, Vec<Parked<T, R>>>,
    resolved: HashMap<String, VecDeque<String>>,
}

/// Items of type `T` waiting per trace for a reply of type `R`.
pub(crate) struct Board<T, R> {
    inner: Mutex<Inner<T, R>>,
    memory: usize,
}

impl<T: Clone, R> Board<T, R> {
    /// An empty board remembering the last `memory` resolved ids of each trace.
    pub(crate) fn new(memory: usize) -> Self {
        Self {
            inner: Mutex::new(Inner {
                next: 0,
                pending: HashMap::new(),
                resolved: HashMap::new(),
            }),
            memory,
        }
    }

    fn inner(&self) -> MutexGuard<'_, Inner<T, R>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many items wait, over every trace.
    pub(crate) fn waiting(&self) -> usize {
        self.inner().pending.values().map(Vec::len).sum()
    }

    /// The items of a trace, oldest first.
    pub(crate) fn pending(&self, trace_id: &str) -> Vec<T> {
        self.inner()
            .pending
            .get(trace_id)
            .map(|parked| parked.iter().map(|p| p.item.clone()).collect())
            .unwrap_or_default()
    }

    /// Parks the item `make` builds from the board's next number (its id and the item) for
    /// `trace_id`; the guard takes it off the board when dropped, the receiver gets the reply.
    pub(crate) fn park(
        &self,
        trace_id: &str,
        make: impl FnOnce(u64) -> (String, T),
    ) -> (Waiting<'_, T, R>, oneshot::Receiver<R>) {
        let (sender, receiver) = oneshot::channel();
        let mut inner = self.inner();
        inner.next += 1;
        let key = inner.next;
        let (id, item) = make(key);
        inner
            .pending
            .entry(trace_id.to_owned())
            .or_default()
            .push(Parked {
                key,
                id: id.clone(),
                item,
                sender,
            });
        let waiting = Waiting {
            board: self,
            trace_id: trace_id.to_owned(),
            key,
            id,
        };
        (waiting, receiver)
    }

    /// Sends `reply` to the oldest item of `trace_id` with id `id`, once `check` accepts it for
    /// that item, and takes it off the board.
    pub(crate) fn resolve<E>(
        &self,
        trace_id: &str,
        id: &str,
        check: impl FnOnce(&T) -> Result<(), E>,
        reply: R,
    ) -> Result<(), Refusal<E>> {
        let mut inner = self.inner();
        let position = inner
            .pending
            .get(trace_id)
            .and_then(|parked| parked.iter().position(|p| p.id == id));
        let Some(position) = position else {
            let resolved = inner
                .resolved
                .get(trace_id)
                .is_some_and(|ids| ids.iter().any(|known| known == id));
            return Err(if resolved {
                Refusal::Resolved
            } else {
                Refusal::Unknown
            });
        };
        check(&inner.pending[trace_id][position].item).map_err(Refusal::Invalid)?;
        let parked = remove(&mut inner, trace_id, position);
        let memory = self.memory;
        let resolved = inner.resolved.entry(trace_id.to_owned()).or_default();
        if resolved.len() >= memory {
            resolved.pop_front();
        }
        resolved.push_back(id.to_owned());
        drop(inner);
        parked.sender.send(reply).map_err(|_| Refusal::NotWaiting)
    }
}

fn remove<T, R>(inner: &mut Inner<T, R>, trace_id: &str, position: usize) -> Parked<T, R> {
    let list = inner.pending.entry(trace_id.to_owned()).or_default();
    let parked = list.remove(position);
    if list.is_empty() {
        inner.pending.remove(trace_id);
    }
    parked
}

/// A parked item's place on the board, given up when dropped: the item leaves the board
/// however its wait ends.
pub(crate) struct Waiting<'a, T, R> {
    board: &'a Board<T, R>,
    trace_id: String,
    key: u64,
    id: String,
}

impl<T, R> Waiting<'_, T, R> {
    /// The item's id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }
}

impl<T, R> Drop for Waiting<'_, T, R> {
    fn drop(&mut self) {
        let mut inner = self
            .board
            .inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let position = inner
            .pending
            .get(&self.trace_id)
            .and_then(|parked| parked.iter().position(|p| p.key == self.key));
        if let Some(position) = position {
            remove(&mut inner, &self.trace_id, position);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(_: &&'static str) -> Result<(), ()> {
        Ok(())
    }

    #[tokio::test]
    async fn resolved_ids_are_remembered_up_to_the_bound_and_dropped_waits_leave() {
        let board: Board<&'static str, u32> = Board::new(2);
        for n in 1..=3 {
            let (waiting, receiver) = board.park("t", |_| (format!("id-{n}"), "item"));
            assert_eq!(board.pending("t"), vec!["item"]);
            board.resolve("t", waiting.id(), accept, n).unwrap();
            assert_eq!(receiver.await, Ok(n));
        }
        // The two newest are remembered; the oldest is forgotten.
        assert_eq!(
            board.resolve("t", "id-3", accept, 0),
            Err(Refusal::Resolved)
        );
        assert_eq!(
            board.resolve("t", "id-2", accept, 0),
            Err(Refusal::Resolved)
        );
        assert_eq!(board.resolve("t", "id-1", accept, 0), Err(Refusal::Unknown));
        assert_eq!(board.resolve("u", "id-3", accept, 0), Err(Refusal::Unknown));

        let (waiting, receiver) = board.park("t", |n| (format!("id-{n}"), "item"));
        let refused = board.resolve("t", waiting.id(), |_| Err("bad"), 0);
        assert_eq!(refused, Err(Refusal::Invalid("bad")));
        assert_eq!(
            board.waiting(),
            1,
            "a refused reply leaves the item waiting"
        );
        let id = waiting.id().to_owned();
        drop(receiver);
        assert_eq!(board.resolve("t", &id, accept, 0), Err(Refusal::NotWaiting));
        drop(waiting);
        let (waiting, _receiver) = board.park("t", |n| (format!("id-{n}"), "item"));
        drop(waiting);
        assert_eq!(board.waiting(), 0, "a dropped wait leaves the board");
    }
}
