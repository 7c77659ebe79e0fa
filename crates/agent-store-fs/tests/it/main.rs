//! The integration tests of `agent-store-fs`, in one test binary: the conformance suite in both
//! durability modes, SIGKILL at random moments, damaged and tampered trace folders.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod checkpoint;
mod conformance;
mod crash;
mod files;
mod follow;
mod hostile_log;
mod old_traces;
mod pictures;
mod reads;

use std::path::Path;

use agent_execution::{NewMessage, NewTrace, TraceStore};
use agent_goal::GoalCommand;
use agent_store_fs::{Durability, FileSystemTraceStore};

/// A store on `base` in buffered mode.
fn open(base: &Path) -> FileSystemTraceStore {
    FileSystemTraceStore::open(base)
        .unwrap()
        .with_durability(Durability::Buffered)
}

/// A new trace named `task` with three goals and `messages` user messages `m0`, `m1`, …
/// spread over them in turn; returns its id.
async fn fill(store: &FileSystemTraceStore, task: &str, messages: u64) -> String {
    fill_by(store, task, messages, |step| step % 3 + 1).await
}

/// A new trace named `task` with three goals and `messages` user messages `m0`, `m1`, …, message
/// `step` tied to goal `goal_of(step)` (1, 2 or 3); returns its id.
async fn fill_by(
    store: &FileSystemTraceStore,
    task: &str,
    messages: u64,
    goal_of: impl Fn(u64) -> u64,
) -> String {
    let id = store
        .create_trace(NewTrace::agent(task))
        .await
        .unwrap()
        .trace_id;
    let add = GoalCommand {
        add: Some("one, two, three".into()),
        ..GoalCommand::default()
    };
    store.apply_goal_command(&id, add).await.unwrap();
    for step in 0..messages {
        let goal = goal_of(step).to_string();
        store
            .add_message(&id, NewMessage::user(format!("m{step}")).goal(goal))
            .await
            .unwrap();
    }
    id
}
