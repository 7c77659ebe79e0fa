//! The index checkpoint `events.index`: a trace opened through it reads exactly what a replay of
//! the log gives, commits appended after it are picked up, and a torn, stale or foreign
//! checkpoint is ignored.

use std::fs;
use std::path::Path;

use crate::{fill, open};
use agent_execution::{Event, Message, NewMessage, Trace, TraceStore};
use agent_test_support::conformance::assert_consistent;

/// A trace with goals, messages spread over them and an updated message; the store is dropped.
async fn build(base: &Path, messages: u64) -> String {
    let store = open(base);
    fill(&store, "checkpoint", messages).await
}

/// Everything a reader can see of a trace.
async fn read_all(base: &Path, id: &str) -> (Trace, Vec<Message>, Vec<Message>, Vec<Event>) {
    let store = open(base);
    let trace = store.get_trace(id).await.unwrap().unwrap();
    let messages = store.get_trace_messages(id).await.unwrap();
    let goal = store.get_messages_by_goal(id, "2").await.unwrap();
    let events = store.get_events(id, 0).await.unwrap();
    (trace, messages, goal, events)
}

#[tokio::test]
async fn a_trace_opened_through_its_checkpoint_reads_what_a_replay_gives() {
    let base = tempfile::tempdir().unwrap();
    let id = build(base.path(), 30).await;
    let index = base.path().join(&id).join("events.index");
    assert!(index.is_file(), "the writer saves the index when it closes");
    let through_checkpoint = read_all(base.path(), &id).await;
    assert_eq!(through_checkpoint.1.len(), 30);
    assert_eq!(through_checkpoint.2.len(), 10);
    fs::remove_file(&index).unwrap();
    assert_eq!(read_all(base.path(), &id).await, through_checkpoint);
}

#[tokio::test]
async fn commits_after_the_checkpoint_are_replayed_and_appending_continues() {
    let base = tempfile::tempdir().unwrap();
    let id = build(base.path(), 9).await;
    let index = base.path().join(&id).join("events.index");
    let saved = fs::read(&index).unwrap();
    {
        let store = open(base.path());
        for step in 0..4 {
            store
                .add_message(&id, NewMessage::user(format!("late {step}")).goal("2"))
                .await
                .unwrap();
        }
    }
    // The checkpoint of the first nine messages, next to the log of thirteen.
    fs::write(&index, &saved).unwrap();
    let (trace, messages, goal, _) = read_all(base.path(), &id).await;
    assert_eq!(trace.total_messages, 13);
    assert_eq!(messages.len(), 13);
    assert_eq!(goal.len(), 7);
    let store = open(base.path());
    store
        .add_message(&id, NewMessage::user("after"))
        .await
        .unwrap();
    assert_consistent(&store, &id).await;
}

#[tokio::test]
async fn a_torn_stale_or_foreign_checkpoint_is_ignored() {
    let base = tempfile::tempdir().unwrap();
    let id = build(base.path(), 12).await;
    let other = build(base.path(), 20).await;
    let index = base.path().join(&id).join("events.index");
    let saved = fs::read(&index).unwrap();
    let expected = read_all(base.path(), &id).await;

    // Torn: the file cut anywhere, or one byte changed.
    for cut in [1, saved.len() / 2, saved.len() - 2] {
        fs::write(&index, &saved[..cut]).unwrap();
        assert_eq!(read_all(base.path(), &id).await, expected, "cut at {cut}");
    }
    let mut flipped = saved.clone();
    let middle = flipped.len() / 3;
    flipped[middle] ^= 0x01;
    fs::write(&index, &flipped).unwrap();
    assert_eq!(read_all(base.path(), &id).await, expected);

    // Longer than the log: the log lost its end (e.g. an OS crash before it reached the disk).
    let log = base.path().join(&id).join("events.jsonl");
    let whole = fs::read(&log).unwrap();
    fs::write(&index, &saved).unwrap();
    let lines: Vec<&[u8]> = whole.split_inclusive(|&b| b == b'\n').collect();
    let shorter: Vec<u8> = lines[..lines.len() - 2].concat();
    fs::write(&log, &shorter).unwrap();
    let (trace, messages, _, _) = read_all(base.path(), &id).await;
    assert_eq!(trace.total_messages, 10);
    assert_eq!(messages.len(), 10);
    fs::write(&log, &whole).unwrap();

    // Made for another log: the checkpoint of the other trace, whose log is longer.
    fs::copy(base.path().join(&other).join("events.index"), &index).unwrap();
    assert_eq!(read_all(base.path(), &id).await, expected);
}

#[tokio::test]
async fn a_reader_never_writes_the_checkpoint() {
    let base = tempfile::tempdir().unwrap();
    let id = build(base.path(), 3).await;
    let index = base.path().join(&id).join("events.index");
    fs::remove_file(&index).unwrap();
    let store = open(base.path());
    store.get_trace_messages(&id).await.unwrap();
    store.flush().await.unwrap();
    drop(store);
    assert!(!index.exists());
}
