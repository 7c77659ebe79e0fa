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
        let goal = (step % 3 + 1).to_string();
        store
            .add_message(&id, NewMessage::user(format!("m{step}")).goal(goal))
            .await
            .unwrap();
    }
    id
}
