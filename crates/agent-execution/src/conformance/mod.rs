//! The conformance suite every `TraceStore` implementation must pass (test support, compiled for
//! this crate's tests and with the `conformance` feature).
//!
//! [`run_all`] runs every check, each on a fresh store from the factory; the checks are public too
//! so a failing one can be run alone. They panic on failure, like any test.
//!
//! This module owns running the suite, [`assert_consistent`] and the helpers the checks share;
//! the checks live in modules by subject: `traces` (a trace's own record), `messages`, `goals`,
//! `batches`, and `structure` (sub-traces, listing, ids, concurrent writers, the live feed).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod batches;
mod goals;
mod messages;
mod structure;
mod traces;

pub use batches::batches_are_atomic_and_ordered;
pub use goals::goal_commands_emit_events;
pub use messages::messages_roll_up_statistics;
pub use structure::{
    concurrent_writers_lose_nothing, invalid_ids_are_refused, listing_filters_and_limits,
    sub_traces_report_to_their_parent, the_feed_has_no_gap_and_no_duplicate,
};
pub use traces::traces_are_created_and_read;

use std::sync::Arc;

use agent_goal::GoalCommand;
use serde_json::Value;

use crate::event::Event;
use crate::message::NewMessage;
use crate::store::{TraceState, TraceStore};

/// Runs every check, each on a fresh store. `make` returns the store and a guard (e.g. a
/// temporary folder) that is dropped after the check.
pub async fn run_all<S, G>(make: impl Fn() -> (Arc<S>, G))
where
    S: TraceStore + 'static,
{
    macro_rules! check {
        ($($name:ident),* $(,)?) => {$({
            let (store, guard) = make();
            $name(store).await;
            drop(guard);
        })*};
    }
    check!(
        traces_are_created_and_read,
        messages_roll_up_statistics,
        goal_commands_emit_events,
        batches_are_atomic_and_ordered,
        sub_traces_report_to_their_parent,
        listing_filters_and_limits,
        invalid_ids_are_refused,
        concurrent_writers_lose_nothing,
        the_feed_has_no_gap_and_no_duplicate,
    );
}

/// The goal command written as `json`, in the form the goal tool receives.
fn command(json: Value) -> GoalCommand {
    serde_json::from_value(json).unwrap()
}

/// An assistant message with `text` and one call (without arguments) of each tool in `tools`.
fn assistant(text: Option<&str>, tools: &[&str]) -> NewMessage {
    let calls = tools
        .iter()
        .enumerate()
        .map(|(i, name)| agent_llm::ToolCall::new(format!("call_{i}"), *name, "{}"))
        .collect();
    NewMessage::assistant(crate::AssistantContent::new(text.map(str::to_owned), calls))
}

/// The names of `events`, in order.
fn names(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(Event::name).collect()
}

/// Asserts that the events of a trace are numbered 1..=n and replay to the stored state.
pub async fn assert_consistent<S: TraceStore + ?Sized>(store: &S, trace_id: &str) {
    let events = store.get_events(trace_id, 0).await.unwrap();
    for (index, event) in events.iter().enumerate() {
        assert_eq!(event.event_id, index as u64 + 1, "event ids have a hole");
    }
    let state = TraceState::replay_all(&events).unwrap().unwrap();
    let trace = store.get_trace(trace_id).await.unwrap().unwrap();
    let tree = store.get_goal_tree(trace_id).await.unwrap().unwrap();
    assert_eq!(
        state.trace, trace,
        "replaying the events gives the stored trace"
    );
    assert_eq!(
        state.goal_tree, tree,
        "replaying the events gives the stored goal tree"
    );
    let messages = store.get_trace_messages(trace_id).await.unwrap();
    assert_eq!(messages.len() as u64, trace.total_messages);
    for (index, message) in messages.iter().enumerate() {
        assert_eq!(message.sequence, index as u64 + 1);
    }
}
