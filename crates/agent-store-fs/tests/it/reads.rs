//! Large reads of messages: a read big enough to be parsed on several threads gives every
//! message, newest version, in sequence order, whether the log holds them in that order or some
//! were rewritten later, and whether none, some or all of them were parsed before.

use crate::{fill, fill_by, open};
use std::sync::Arc;

use agent_execution::{Message, MessageUpdate, TraceStore};

/// More messages than a read parses on its caller's thread alone.
const MESSAGES: u64 = 5_000;

/// Messages rewritten after the rest, so their newest lines lie at the end of the log.
const UPDATED: [u64; 4] = [1, 2, 1_500, 4_999];

/// Every message in sequence order, each the newest version: updated ones carry the new text.
fn assert_all(found: &[Message], updated: bool) {
    let sequences: Vec<u64> = found.iter().map(|m| m.sequence).collect();
    let expected: Vec<u64> = (1..=MESSAGES).collect();
    assert_eq!(sequences, expected, "not every message, or not in order");
    for message in found {
        let rewritten = updated && UPDATED.contains(&message.sequence);
        let text = message.content.text();
        if rewritten {
            assert_eq!(text, format!("rewritten {}", message.sequence));
        } else {
            assert_eq!(text, format!("m{}", message.sequence - 1));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_read_gives_every_newest_message_in_order_however_the_log_holds_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let id = fill(&store, "reads", MESSAGES).await;
    store.flush().await.unwrap();

    // The log in sequence order, nothing parsed yet; then the same read from the cache.
    let reader = open(dir.path());
    assert_all(&reader.get_trace_messages(&id).await.unwrap(), false);
    assert_all(&reader.get_trace_messages(&id).await.unwrap(), false);

    for &sequence in &UPDATED {
        let update = MessageUpdate {
            content: Some(agent_execution::Content::Text(format!(
                "rewritten {sequence}"
            ))),
            ..MessageUpdate::default()
        };
        store
            .update_message(&format!("{id}-{sequence:04}"), update)
            .await
            .unwrap();
    }
    store.flush().await.unwrap();

    // Some newest lines out of sequence order, nothing parsed.
    let fresh = open(dir.path());
    let all = fresh.get_trace_messages(&id).await.unwrap();
    assert_all(&all, true);
    // The writer, which has parsed none of them.
    assert_all(&store.get_trace_messages(&id).await.unwrap(), true);
    // The earlier reader: the same, and it catches up with the commits of the writer.
    assert_all(&reader.get_trace_messages(&id).await.unwrap(), true);

    // A goal's messages read after all of them match them, in order.
    let goal: Vec<Message> = all
        .iter()
        .filter(|m| m.goal_id.as_deref() == Some("2"))
        .cloned()
        .collect();
    assert_eq!(fresh.get_messages_by_goal(&id, "2").await.unwrap(), goal);
    assert_eq!(store.get_messages_by_goal(&id, "2").await.unwrap(), goal);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_read_after_earlier_reads_gives_the_newest_version_of_a_rewritten_message() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    // Goal 1 holds one message in ten, so its lines are spread thin over the log.
    let id = fill_by(
        &store,
        "spread",
        600,
        |step| if step % 10 == 0 { 1 } else { 2 },
    )
    .await;
    store.flush().await.unwrap();

    let reader = open(dir.path());
    let of_goal = |all: &[Message], goal: &str| -> Vec<Message> {
        let goal = Some(goal);
        all.iter()
            .filter(|m| m.goal_id.as_deref() == goal)
            .cloned()
            .collect()
    };
    // Read from the file (thin lines), then again once kept, then all of them.
    let first = reader.get_messages_by_goal(&id, "1").await.unwrap();
    assert_eq!(first.len(), 60);
    assert_eq!(reader.get_messages_by_goal(&id, "1").await.unwrap(), first);
    let all = reader.get_trace_messages(&id).await.unwrap();
    assert_eq!(of_goal(&all, "1"), first);
    assert_eq!(
        reader.get_messages_by_goal(&id, "2").await.unwrap(),
        of_goal(&all, "2")
    );

    // A rewritten message lies at a new offset: the reader reads it, not the version it kept.
    let update = MessageUpdate {
        content: Some(agent_execution::Content::Text("rewritten".into())),
        ..MessageUpdate::default()
    };
    store
        .update_message(&format!("{id}-0011"), update)
        .await
        .unwrap();
    let goal = reader.get_messages_by_goal(&id, "1").await.unwrap();
    assert_eq!(goal.len(), 60);
    assert_eq!(goal[1].sequence, 11);
    assert_eq!(goal[1].content.text(), "rewritten");
    assert_eq!(goal[0], first[0]);
    assert_eq!(goal[2..], first[2..]);
    let all = reader.get_trace_messages(&id).await.unwrap();
    assert_eq!(of_goal(&all, "1"), goal);
    let one = reader.get_message(&format!("{id}-0011")).await.unwrap();
    assert_eq!(one.as_ref(), goal.get(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_reads_hand_out_the_kept_messages_until_one_is_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let id = fill(&store, "shared", MESSAGES).await;
    store.flush().await.unwrap();

    let reader = open(dir.path());
    let all = reader.get_trace_messages_shared(&id).await.unwrap();
    let copies: Vec<Message> = all.iter().map(|m| (**m).clone()).collect();
    assert_all(&copies, false);
    // Read again, and a goal's messages: the very messages parsed by the first read.
    let again = reader.get_trace_messages_shared(&id).await.unwrap();
    assert_eq!(again.len(), all.len());
    assert!(all.iter().zip(&again).all(|(a, b)| Arc::ptr_eq(a, b)));
    let goal = reader.get_messages_by_goal_shared(&id, "2").await.unwrap();
    assert!(!goal.is_empty());
    for message in &goal {
        let kept = &all[message.sequence as usize - 1];
        assert!(Arc::ptr_eq(message, kept), "message {}", message.sequence);
    }
    // Copies of the caller's own are equal to them, whether cached or not.
    let owned = reader.get_messages_by_goal(&id, "2").await.unwrap();
    assert_eq!(
        owned.iter().collect::<Vec<_>>(),
        goal.iter().map(|m| &**m).collect::<Vec<_>>()
    );
    let fresh = open(dir.path());
    assert_eq!(fresh.get_messages_by_goal(&id, "2").await.unwrap(), owned);

    // A rewrite: later reads get the new version, and the other messages are still the kept
    // ones.
    let update = MessageUpdate {
        content: Some(agent_execution::Content::Text("rewritten 1".into())),
        ..MessageUpdate::default()
    };
    store
        .update_message(&format!("{id}-0001"), update)
        .await
        .unwrap();
    let after = reader.get_trace_messages_shared(&id).await.unwrap();
    assert_eq!(after.len(), all.len());
    assert_eq!(after[0].content.text(), "rewritten 1");
    assert!(
        after[1..]
            .iter()
            .zip(&all[1..])
            .all(|(a, b)| Arc::ptr_eq(a, b)),
        "an untouched message was parsed again"
    );
}
