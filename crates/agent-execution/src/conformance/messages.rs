//! Conformance checks of messages: ids, sequences and descriptions, statistics rolled up into
//! goals and the trace, reads by trace, goal and id, and metadata updates.

use std::sync::Arc;

use serde_json::{Map, json};

use super::{assert_consistent, assistant, command, names};
use crate::event::{Event, EventKind};
use crate::message::{MessageUpdate, NewMessage, Role};
use crate::store::{StoreError, TraceStore};
use crate::trace::NewTrace;

/// Messages get ids, sequences and descriptions; their statistics roll up into the goal, its
/// ancestors and the trace; `message_added` lists the affected goals.
pub async fn messages_roll_up_statistics<S: TraceStore>(store: Arc<S>) {
    let id = store
        .create_trace(NewTrace::agent("task"))
        .await
        .unwrap()
        .trace_id;
    store
        .apply_goal_command(&id, command(json!({"add": "Parent", "focus": "1"})))
        .await
        .unwrap();
    store
        .apply_goal_command(&id, command(json!({"add": "Child", "focus": "1.1"})))
        .await
        .unwrap();
    let first = store
        .add_message(&id, NewMessage::user("Fix it. Now.").usage(5, 0.0))
        .await
        .unwrap();
    assert_eq!(first.message_id, format!("{id}-0001"));
    assert_eq!(first.sequence, 1);
    assert_eq!(first.description, "Fix it.");
    assert_eq!(first.role, Role::User);
    let call = store
        .add_message(
            &id,
            assistant(None, &["read_file", "read_file", "bash"])
                .goal("2")
                .usage(100, 0.5),
        )
        .await
        .unwrap();
    assert_eq!(call.sequence, 2);
    assert_eq!(call.description, "tool call: read_file, read_file, bash");
    let result = store
        .add_message(
            &id,
            NewMessage::tool("call_0", "read_file", "contents")
                .goal("2")
                .usage(50, 0.25),
        )
        .await
        .unwrap();
    assert_eq!(result.description, "read_file");
    assert_eq!(result.tool_call_id.as_deref(), Some("call_0"));

    let tree = store.get_goal_tree(&id).await.unwrap().unwrap();
    let child = tree.get("2").unwrap();
    assert_eq!(child.self_stats.message_count, 2);
    assert_eq!(child.self_stats.total_tokens, 150);
    assert!((child.self_stats.total_cost - 0.75).abs() < 1e-9);
    assert!(
        child
            .self_stats
            .preview
            .as_deref()
            .unwrap()
            .contains("read_file")
    );
    let parent = tree.get("1").unwrap();
    assert_eq!(parent.self_stats.message_count, 0);
    assert_eq!(parent.cumulative_stats.message_count, 2);
    assert_eq!(parent.cumulative_stats.total_tokens, 150);
    let trace = store.get_trace(&id).await.unwrap().unwrap();
    assert_eq!((trace.total_messages, trace.total_tokens), (3, 155));
    assert!((trace.total_cost - 0.75).abs() < 1e-9);

    let events = store.get_events(&id, 0).await.unwrap();
    let Some(Event {
        kind: EventKind::MessageAdded {
            message,
            affected_goals,
        },
        ..
    }) = events.last()
    else {
        panic!("the last event is message_added: {:?}", names(&events));
    };
    assert_eq!(message, &result);
    let ids: Vec<_> = affected_goals.iter().map(|a| a.goal_id.as_str()).collect();
    assert_eq!(ids, ["2", "1"]);
    assert_eq!(
        affected_goals[0].self_stats.as_ref().unwrap().message_count,
        2
    );
    assert!(affected_goals[1].self_stats.is_none());
    assert_eq!(affected_goals[1].cumulative_stats.total_tokens, 150);

    // A message for an unknown goal is refused and writes nothing.
    let before = store.get_events(&id, 0).await.unwrap().len();
    assert!(matches!(
        store
            .add_message(&id, NewMessage::user("x").goal("99"))
            .await,
        Err(StoreError::Goal(_))
    ));
    assert_eq!(store.get_events(&id, 0).await.unwrap().len(), before);

    let all = store.get_trace_messages(&id).await.unwrap();
    assert_eq!(all, [first.clone(), call.clone(), result.clone()]);
    assert_eq!(
        store.get_messages_by_goal(&id, "2").await.unwrap(),
        [call.clone(), result.clone()]
    );
    assert!(
        store
            .get_messages_by_goal(&id, "1")
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store.get_message(&call.message_id).await.unwrap(),
        Some(call.clone())
    );
    // The shared reads return the same messages, twice (the second time from a store's cache).
    for _ in 0..2 {
        let shared = store.get_trace_messages_shared(&id).await.unwrap();
        assert_eq!(
            shared.iter().map(|m| &**m).collect::<Vec<_>>(),
            [&first, &call, &result]
        );
        let shared = store.get_messages_by_goal_shared(&id, "2").await.unwrap();
        assert_eq!(
            shared.iter().map(|m| &**m).collect::<Vec<_>>(),
            [&call, &result]
        );
    }
    assert_eq!(
        store.get_message(&format!("{id}-0099")).await.unwrap(),
        None
    );

    let mut metadata = Map::new();
    metadata.insert("compacted".into(), json!("summarised in goal 1"));
    let update = MessageUpdate {
        metadata,
        ..MessageUpdate::default()
    };
    let updated = store
        .update_message(&result.message_id, update.clone())
        .await
        .unwrap();
    assert_eq!(
        updated.metadata.get("compacted"),
        Some(&json!("summarised in goal 1"))
    );
    assert_eq!(updated.tokens, result.tokens);
    assert_eq!(
        store.get_message(&result.message_id).await.unwrap(),
        Some(updated.clone())
    );
    assert_eq!(
        store.get_messages_by_goal(&id, "2").await.unwrap()[1],
        updated
    );
    assert_eq!(store.get_trace_messages(&id).await.unwrap()[2], updated);
    assert_eq!(
        *store.get_messages_by_goal_shared(&id, "2").await.unwrap()[1],
        updated
    );
    assert_eq!(
        *store.get_trace_messages_shared(&id).await.unwrap()[2],
        updated
    );
    let last = store.get_events(&id, 0).await.unwrap();
    assert_eq!(last.last().unwrap().name(), "message_updated");
    assert!(matches!(
        store.update_message(&format!("{id}-0042"), update).await,
        Err(StoreError::MessageNotFound { .. })
    ));
    assert_consistent(&*store, &id).await;
}
