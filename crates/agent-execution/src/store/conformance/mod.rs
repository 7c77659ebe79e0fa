//! The conformance suite every `TraceStore` implementation must pass (test support, compiled for
//! this crate's tests and with the `conformance` feature).
//!
//! [`run_all`] runs every check, each on a fresh store from the factory; the checks are public too
//! so a failing one can be run alone. They panic on failure, like any test.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod structure;

pub use structure::{
    concurrent_writers_lose_nothing, invalid_ids_are_refused, listing_filters_and_limits,
    sub_traces_report_to_their_parent, the_feed_has_no_gap_and_no_duplicate,
};

use std::sync::Arc;

use agent_goal::{Goal, GoalCommand, GoalStatus, GoalType};
use serde_json::{Map, Value, json};

use crate::event::{Event, EventKind};
use crate::message::{MessageUpdate, NewMessage, Role};
use crate::store::{StoreError, TraceState, TraceStore, WriteOp, WriteOutput};
use crate::trace::{NewTrace, TraceMode, TraceOutcome, TraceStatus, TraceUpdate};

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

fn command(json: Value) -> GoalCommand {
    serde_json::from_value(json).unwrap()
}

fn assistant(text: Option<&str>, tools: &[&str]) -> NewMessage {
    let calls = tools
        .iter()
        .enumerate()
        .map(|(i, name)| agent_llm::ToolCall::new(format!("call_{i}"), *name, "{}"))
        .collect();
    NewMessage::assistant(crate::AssistantContent::new(text.map(str::to_owned), calls))
}

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

/// Creating, reading and the first event of a trace.
pub async fn traces_are_created_and_read<S: TraceStore>(store: Arc<S>) {
    let trace = store
        .create_trace(NewTrace::agent("Explore the code").with_model("m"))
        .await
        .unwrap();
    assert!(
        uuid::Uuid::parse_str(&trace.trace_id).is_ok(),
        "{}",
        trace.trace_id
    );
    assert_eq!(trace.status, TraceStatus::Running);
    assert_eq!(trace.mode, TraceMode::Agent);
    assert_eq!(trace.model.as_deref(), Some("m"));
    assert_eq!(
        store.get_trace(&trace.trace_id).await.unwrap(),
        Some(trace.clone())
    );
    let tree = store.get_goal_tree(&trace.trace_id).await.unwrap().unwrap();
    assert_eq!(tree.mission(), "Explore the code");
    assert!(tree.goals().is_empty());
    let events = store.get_events(&trace.trace_id, 0).await.unwrap();
    assert_eq!(names(&events), ["trace_created"]);
    assert!(store.get_trace("no-such-trace").await.unwrap().is_none());
    assert!(
        store
            .get_goal_tree("no-such-trace")
            .await
            .unwrap()
            .is_none()
    );
    assert!(matches!(
        store.get_events("no-such-trace", 0).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store
            .add_message("no-such-trace", NewMessage::user("x"))
            .await,
        Err(StoreError::NotFound { .. })
    ));
    let named = store
        .create_trace(NewTrace::call("one call").with_id("my-trace"))
        .await
        .unwrap();
    assert_eq!(named.trace_id, "my-trace");
    assert_eq!(named.mode, TraceMode::Call);
    assert!(matches!(
        store
            .create_trace(NewTrace::call("again").with_id("my-trace"))
            .await,
        Err(StoreError::AlreadyExists { .. })
    ));
    let updated = store
        .update_trace(
            "my-trace",
            TraceUpdate {
                status: Some(TraceStatus::Waiting),
                error: Some(Some("needs approval".into())),
                ..TraceUpdate::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.status, TraceStatus::Waiting);
    assert_eq!(store.get_trace("my-trace").await.unwrap(), Some(updated));
    let finished = store
        .finish_trace("my-trace", TraceOutcome::completed("done"))
        .await
        .unwrap();
    assert_eq!(finished.summary.as_deref(), Some("done"));
    let events = store.get_events("my-trace", 1).await.unwrap();
    assert_eq!(
        names(&events),
        ["trace_updated", "trace_updated", "trace_completed"]
    );
    assert!(matches!(
        store
            .finish_trace(
                "my-trace",
                TraceOutcome {
                    status: TraceStatus::Running,
                    summary: None,
                    error: None
                }
            )
            .await,
        Err(StoreError::Invalid(_))
    ));
    assert_consistent(&*store, "my-trace").await;
}

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
    let last = store.get_events(&id, 0).await.unwrap();
    assert_eq!(last.last().unwrap().name(), "message_updated");
    assert!(matches!(
        store.update_message(&format!("{id}-0042"), update).await,
        Err(StoreError::MessageNotFound { .. })
    ));
    assert_consistent(&*store, &id).await;
}

/// Goal commands write the tree and emit goal events, cascades included; refused commands write
/// nothing.
pub async fn goal_commands_emit_events<S: TraceStore>(store: Arc<S>) {
    let id = store
        .create_trace(NewTrace::agent("task"))
        .await
        .unwrap()
        .trace_id;
    let outcome = store
        .apply_goal_command(&id, command(json!({"add": "A, B", "focus": "1"})))
        .await
        .unwrap();
    assert_eq!(outcome.added, ["1", "2"]);
    let events = store.get_events(&id, 1).await.unwrap();
    assert_eq!(
        names(&events),
        [
            "goal_added",
            "goal_added",
            "goal_tree_updated",
            "trace_updated"
        ]
    );
    assert_eq!(
        store
            .get_trace(&id)
            .await
            .unwrap()
            .unwrap()
            .current_goal_id
            .as_deref(),
        Some("1")
    );
    store
        .apply_goal_command(&id, command(json!({"add": "A1", "focus": "1.1"})))
        .await
        .unwrap();
    let since = store.get_events(&id, 0).await.unwrap().len() as u64;
    store
        .apply_goal_command(&id, command(json!({"done": "A1 works"})))
        .await
        .unwrap();
    let events = store.get_events(&id, since).await.unwrap();
    let updated: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::GoalUpdated {
                goal_id,
                updates,
                affected_goals,
            } => Some((goal_id.clone(), updates.clone(), affected_goals.clone())),
            _ => None,
        })
        .collect();
    let updated_ids: Vec<_> = updated.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(
        updated_ids,
        ["3", "1"],
        "the child, then the parent completed by cascade"
    );
    assert_eq!(updated[0].1.get("status"), Some(&json!("completed")));
    assert_eq!(updated[0].1.get("summary"), Some(&json!("A1 works")));
    assert_eq!(updated[1].2[0].status, Some(GoalStatus::Completed));
    let tree = store.get_goal_tree(&id).await.unwrap().unwrap();
    assert_eq!(tree.get("1").unwrap().status, GoalStatus::Completed);

    // A refused command changes nothing.
    let count = store.get_events(&id, 0).await.unwrap().len();
    let refused = store
        .apply_goal_command(&id, command(json!({"focus": "9"})))
        .await;
    assert!(matches!(refused, Err(StoreError::Goal(_))), "{refused:?}");
    assert_eq!(store.get_events(&id, 0).await.unwrap().len(), count);
    assert_eq!(store.get_goal_tree(&id).await.unwrap().unwrap(), tree);

    // Explorations.
    store
        .apply_goal_command(&id, command(json!({"focus": "2"})))
        .await
        .unwrap();
    let start = store
        .start_explore(&id, "Compare approaches", vec!["b1".into(), "b2".into()])
        .await
        .unwrap();
    let tree = store.get_goal_tree(&id).await.unwrap().unwrap();
    assert_eq!(tree.get(&start).unwrap().goal_type, GoalType::ExploreStart);
    let merge = store
        .finish_explore(&id, &start, "b1 is simpler", Some("b1".into()))
        .await
        .unwrap();
    let tree = store.get_goal_tree(&id).await.unwrap().unwrap();
    assert_eq!(tree.get(&merge).unwrap().goal_type, GoalType::ExploreMerge);

    // Direct edits of the tree.
    let goal = Goal::new(
        "50",
        Some("2".into()),
        "planned elsewhere",
        &tree.get("2").unwrap().created_at,
    );
    store.add_goal(&id, goal.clone()).await.unwrap();
    assert!(matches!(
        store.add_goal(&id, goal).await,
        Err(StoreError::Invalid(_))
    ));
    let mut updates = Map::new();
    updates.insert("description".into(), json!("renamed"));
    let renamed = store.update_goal(&id, "50", updates).await.unwrap();
    assert_eq!(renamed.description, "renamed");
    let last = store.get_events(&id, 0).await.unwrap();
    let EventKind::GoalTreeUpdated { .. } = &last.last().unwrap().kind else {
        panic!("a tree edit ends with goal_tree_updated");
    };
    let mut bad = Map::new();
    bad.insert("status".into(), json!("sideways"));
    assert!(matches!(
        store.update_goal(&id, "50", bad).await,
        Err(StoreError::Invalid(_))
    ));
    let mut tree = store.get_goal_tree(&id).await.unwrap().unwrap();
    let number = tree.display_number("50").unwrap();
    tree.apply(&command(json!({ "delete": number }))).unwrap();
    store.update_goal_tree(&id, tree.clone()).await.unwrap();
    assert_eq!(store.get_goal_tree(&id).await.unwrap().unwrap(), tree);
    let last = store.get_events(&id, 0).await.unwrap();
    assert!(names(&last).contains(&"goal_removed"));
    assert_consistent(&*store, &id).await;
}

/// A batch is one commit: all or nothing, consecutive ids, all but the last event marked.
pub async fn batches_are_atomic_and_ordered<S: TraceStore>(store: Arc<S>) {
    let id = store
        .create_trace(NewTrace::agent("task"))
        .await
        .unwrap()
        .trace_id;
    store
        .apply_goal_command(&id, command(json!({"add": "A", "focus": "1"})))
        .await
        .unwrap();
    let before = store.get_events(&id, 0).await.unwrap();
    let failed = store
        .batch(
            &id,
            vec![
                WriteOp::AddMessage(NewMessage::user("hello").goal("1")),
                WriteOp::Goal(command(json!({"focus": "7"}))),
            ],
        )
        .await;
    assert!(matches!(failed, Err(StoreError::Goal(_))));
    assert_eq!(
        store.get_events(&id, 0).await.unwrap(),
        before,
        "nothing was written"
    );
    assert_eq!(
        store.get_trace(&id).await.unwrap().unwrap().total_messages,
        0
    );

    let outputs = store
        .batch(
            &id,
            vec![
                WriteOp::AddMessage(assistant(Some("Working."), &["goal"]).goal("1")),
                WriteOp::Goal(command(json!({"done": "finished"}))),
                WriteOp::AddMessage(NewMessage::tool("call_0", "goal", "ok").goal("1")),
                WriteOp::UpdateTrace(TraceUpdate {
                    model: Some("m2".into()),
                    ..TraceUpdate::default()
                }),
            ],
        )
        .await
        .unwrap();
    assert_eq!(outputs.len(), 4);
    assert!(matches!(&outputs[0], WriteOutput::Message(m) if m.sequence == 1));
    assert!(matches!(&outputs[1], WriteOutput::GoalOutcome(_)));
    assert!(matches!(&outputs[2], WriteOutput::Message(m) if m.sequence == 2));
    assert!(matches!(&outputs[3], WriteOutput::Trace(t) if t.model.as_deref() == Some("m2")));
    let events = store.get_events(&id, before.len() as u64).await.unwrap();
    assert!(events.len() >= 4);
    let (last, rest) = events.split_last().unwrap();
    assert!(rest.iter().all(|e| e.commit_continues));
    assert!(!last.commit_continues);
    assert_eq!(
        store
            .get_events(&id, 2)
            .await
            .unwrap()
            .first()
            .map(|e| e.event_id),
        Some(3),
        "events since an id start right after it"
    );
    assert!(store.get_events(&id, 10_000).await.unwrap().is_empty());
    assert_consistent(&*store, &id).await;
}
