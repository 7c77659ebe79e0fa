//! Conformance checks of sub-traces, listing, id validation, concurrent writers and the live
//! feed.

use std::sync::Arc;

use agent_goal::GoalCommand;
use futures::StreamExt;
use serde_json::json;

use super::{assert_consistent, command, names};
use crate::event::EventKind;
use crate::feed::watch;
use crate::message::NewMessage;
use crate::store::{StoreError, TraceStore};
use crate::trace::{NewTrace, TraceFilter, TraceMode, TraceOutcome, TraceStatus, TraceUpdate};

/// Sub-traces get derived ids and report start and end to their parent.
pub async fn sub_traces_report_to_their_parent<S: TraceStore>(store: Arc<S>) {
    let parent = store
        .create_trace(NewTrace::agent("main"))
        .await
        .unwrap()
        .trace_id;
    store
        .apply_goal_command(&parent, command(json!({"add": "A", "focus": "1"})))
        .await
        .unwrap();
    let first = store
        .create_trace(NewTrace::sub_trace(
            &parent,
            Some("1".into()),
            "explore",
            "branch A",
        ))
        .await
        .unwrap();
    let second = store
        .create_trace(NewTrace::sub_trace(
            &parent,
            Some("1".into()),
            "explore",
            "branch B",
        ))
        .await
        .unwrap();
    let prefix = format!("{parent}@explore-");
    assert!(first.trace_id.starts_with(&prefix), "{}", first.trace_id);
    assert!(first.trace_id.ends_with("-001"), "{}", first.trace_id);
    assert!(second.trace_id.ends_with("-002"), "{}", second.trace_id);
    assert_eq!(
        first.trace_id.len(),
        prefix.len() + "20260204220012-001".len()
    );
    assert_eq!(first.parent_trace_id.as_deref(), Some(parent.as_str()));
    assert_eq!(first.parent_goal_id.as_deref(), Some("1"));
    assert_eq!(first.agent_type.as_deref(), Some("explore"));
    assert_eq!(
        store
            .get_goal_tree(&first.trace_id)
            .await
            .unwrap()
            .unwrap()
            .mission(),
        "branch A"
    );

    store
        .add_message(&first.trace_id, NewMessage::user("go").usage(7, 0.1))
        .await
        .unwrap();
    store
        .finish_trace(&first.trace_id, TraceOutcome::completed("A works"))
        .await
        .unwrap();
    let child_events = store.get_events(&first.trace_id, 0).await.unwrap();
    assert_eq!(child_events.last().unwrap().name(), "trace_completed");
    let EventKind::TraceCompleted { stats, status } = &child_events.last().unwrap().kind else {
        unreachable!()
    };
    assert_eq!(
        (stats.total_messages, stats.total_tokens, *status),
        (1, 7, TraceStatus::Completed)
    );

    let events = store.get_events(&parent, 0).await.unwrap();
    let started: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SubTraceStarted {
                trace_id,
                parent_goal_id,
                agent_type,
                task,
            } => Some((
                trace_id.clone(),
                parent_goal_id.clone(),
                agent_type.clone(),
                task.clone(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        [
            (
                first.trace_id.clone(),
                Some("1".into()),
                "explore".into(),
                "branch A".into()
            ),
            (
                second.trace_id.clone(),
                Some("1".into()),
                "explore".into(),
                "branch B".into()
            ),
        ]
    );
    let Some(EventKind::SubTraceCompleted {
        trace_id,
        status,
        summary,
        stats,
    }) = events.last().map(|e| &e.kind)
    else {
        panic!(
            "the parent's last event is sub_trace_completed: {:?}",
            names(&events)
        );
    };
    assert_eq!(trace_id, &first.trace_id);
    assert_eq!(*status, TraceStatus::Completed);
    assert_eq!(summary.as_deref(), Some("A works"));
    assert_eq!(stats.total_tokens, 7);

    let subs = store.get_sub_traces(&parent).await.unwrap();
    let ids: Vec<_> = subs.iter().map(|t| t.trace_id.as_str()).collect();
    assert_eq!(ids, [second.trace_id.as_str(), first.trace_id.as_str()]);
    assert!(matches!(
        store
            .create_trace(NewTrace::sub_trace("missing", None, "explore", "x"))
            .await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store
            .create_trace(NewTrace::sub_trace(&parent, None, "a/b", "x"))
            .await,
        Err(StoreError::InvalidId { .. })
    ));
    assert_consistent(&*store, &parent).await;
    assert_consistent(&*store, &first.trace_id).await;
}

/// Listing filters by mode, status and parent, sorts newest first and applies the limit.
pub async fn listing_filters_and_limits<S: TraceStore>(store: Arc<S>) {
    let mut created = Vec::new();
    for (index, new) in [
        NewTrace::agent("a0"),
        NewTrace::call("c1"),
        NewTrace::agent("a2"),
        NewTrace::call("c3"),
    ]
    .into_iter()
    .enumerate()
    {
        let trace = store.create_trace(new).await.unwrap();
        if index == 2 {
            store
                .finish_trace(&trace.trace_id, TraceOutcome::failed("boom"))
                .await
                .unwrap();
        }
        created.push(trace.trace_id);
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    let child = store
        .create_trace(NewTrace::sub_trace(&created[0], None, "delegate", "sub"))
        .await
        .unwrap()
        .trace_id;
    let ids =
        |traces: Vec<crate::Trace>| traces.into_iter().map(|t| t.trace_id).collect::<Vec<_>>();
    let all = ids(store.list_traces(&TraceFilter::default()).await.unwrap());
    assert_eq!(
        all,
        [
            child.clone(),
            created[3].clone(),
            created[2].clone(),
            created[1].clone(),
            created[0].clone()
        ]
    );
    let calls = TraceFilter {
        mode: Some(TraceMode::Call),
        ..TraceFilter::default()
    };
    assert_eq!(
        ids(store.list_traces(&calls).await.unwrap()),
        [created[3].clone(), created[1].clone()]
    );
    let failed = TraceFilter {
        status: Some(TraceStatus::Failed),
        ..TraceFilter::default()
    };
    assert_eq!(
        ids(store.list_traces(&failed).await.unwrap()),
        [created[2].clone()]
    );
    let limited = TraceFilter {
        limit: Some(2),
        ..TraceFilter::default()
    };
    assert_eq!(
        ids(store.list_traces(&limited).await.unwrap()),
        [child.clone(), created[3].clone()]
    );
    let children = TraceFilter {
        parent_trace_id: Some(created[0].clone()),
        ..TraceFilter::default()
    };
    assert_eq!(ids(store.list_traces(&children).await.unwrap()), [child]);
    let running_agents = TraceFilter {
        mode: Some(TraceMode::Agent),
        status: Some(TraceStatus::Running),
        limit: Some(10),
        ..TraceFilter::default()
    };
    assert_eq!(
        ids(store.list_traces(&running_agents).await.unwrap()).len(),
        2
    );
    let none = TraceFilter {
        limit: Some(0),
        ..TraceFilter::default()
    };
    assert!(store.list_traces(&none).await.unwrap().is_empty());
}

/// Every entry point refuses ids that could escape the store's folder.
pub async fn invalid_ids_are_refused<S: TraceStore>(store: Arc<S>) {
    for bad in [
        "",
        "../escape",
        "a/b",
        "a\\b",
        "nul\0",
        ".hidden",
        "line\nbreak",
    ] {
        let invalid = |result: Result<(), StoreError>| {
            assert!(
                matches!(result, Err(StoreError::InvalidId { .. })),
                "{bad:?}: {result:?}"
            );
        };
        invalid(store.get_trace(bad).await.map(drop));
        invalid(store.get_goal_tree(bad).await.map(drop));
        invalid(store.get_trace_messages(bad).await.map(drop));
        invalid(store.get_messages_by_goal(bad, "1").await.map(drop));
        invalid(store.get_trace_messages_shared(bad).await.map(drop));
        invalid(store.get_messages_by_goal_shared(bad, "1").await.map(drop));
        invalid(store.get_events(bad, 0).await.map(drop));
        invalid(store.get_message(&format!("{bad}-0001")).await.map(drop));
        invalid(
            store
                .add_message(bad, NewMessage::user("x"))
                .await
                .map(drop),
        );
        invalid(
            store
                .update_trace(bad, TraceUpdate::default())
                .await
                .map(drop),
        );
        invalid(
            store
                .apply_goal_command(bad, GoalCommand::default())
                .await
                .map(drop),
        );
        invalid(
            store
                .create_trace(NewTrace::agent("x").with_id(bad))
                .await
                .map(drop),
        );
        invalid(store.get_sub_traces(bad).await.map(drop));
    }
    assert!(matches!(
        store
            .create_trace(NewTrace::agent("x").with_id("x".repeat(256)))
            .await,
        Err(StoreError::InvalidId { .. })
    ));
    assert!(matches!(
        store.get_message("no-sequence").await,
        Err(StoreError::InvalidId { .. })
    ));
}

/// Eight writers on one trace and eight on sibling sub-traces, with goal updates racing message
/// appends: nothing is lost, sequences and event ids stay dense.
pub async fn concurrent_writers_lose_nothing<S: TraceStore + 'static>(store: Arc<S>) {
    const WRITERS: usize = 8;
    const EACH: usize = 20;
    let id = store
        .create_trace(NewTrace::agent("parallel"))
        .await
        .unwrap()
        .trace_id;
    store
        .apply_goal_command(&id, command(json!({"add": "A", "focus": "1"})))
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for writer in 0..WRITERS {
        let store = store.clone();
        let id = id.clone();
        tasks.push(tokio::spawn(async move {
            let sub = store
                .create_trace(NewTrace::sub_trace(
                    &id,
                    Some("1".into()),
                    "explore",
                    format!("w{writer}"),
                ))
                .await
                .unwrap()
                .trace_id;
            for step in 0..EACH {
                store
                    .add_message(
                        &id,
                        NewMessage::tool(format!("{writer}-{step}"), "bash", "out")
                            .goal("1")
                            .usage(1, 0.0),
                    )
                    .await
                    .unwrap();
                store
                    .add_message(&sub, NewMessage::user(format!("{step}")).usage(1, 0.0))
                    .await
                    .unwrap();
                if step % 5 == 0 {
                    let add = command(json!({"add": format!("w{writer} s{step}")}));
                    store.apply_goal_command(&id, add).await.unwrap();
                }
            }
            sub
        }));
    }
    let mut subs = Vec::new();
    for task in tasks {
        subs.push(task.await.unwrap());
    }
    let trace = store.get_trace(&id).await.unwrap().unwrap();
    assert_eq!(trace.total_messages, (WRITERS * EACH) as u64);
    let tree = store.get_goal_tree(&id).await.unwrap().unwrap();
    assert_eq!(
        tree.get("1").unwrap().self_stats.message_count,
        (WRITERS * EACH) as u64
    );
    assert_eq!(tree.goals().len(), 1 + WRITERS * EACH / 5);
    let mut call_ids: Vec<_> = store
        .get_messages_by_goal(&id, "1")
        .await
        .unwrap()
        .into_iter()
        .filter_map(|m| m.tool_call_id)
        .collect();
    call_ids.sort();
    call_ids.dedup();
    assert_eq!(call_ids.len(), WRITERS * EACH);
    assert_consistent(&*store, &id).await;
    subs.sort();
    subs.dedup();
    assert_eq!(subs.len(), WRITERS, "sub-trace ids are unique");
    for sub in &subs {
        assert_eq!(
            store.get_trace(sub).await.unwrap().unwrap().total_messages,
            EACH as u64
        );
        assert_consistent(&*store, sub).await;
    }
}

/// A watcher sees every event after its starting point exactly once, in order, while writes go
/// on; one that starts late gets the stored events first.
pub async fn the_feed_has_no_gap_and_no_duplicate<S: TraceStore + 'static>(store: Arc<S>) {
    const MESSAGES: u64 = 300;
    let id = store
        .create_trace(NewTrace::agent("watched"))
        .await
        .unwrap()
        .trace_id;
    let writer = {
        let store = store.clone();
        let id = id.clone();
        tokio::spawn(async move {
            for step in 0..MESSAGES {
                store
                    .add_message(&id, NewMessage::user(format!("{step}")))
                    .await
                    .unwrap();
                if step % 50 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        })
    };
    // Start watching while the writer is already running.
    tokio::task::yield_now().await;
    let total = 1 + MESSAGES;
    let seen: Vec<u64> = watch(store.clone(), &id, 0)
        .take(total as usize)
        .map(|event| event.unwrap().event_id)
        .collect()
        .await;
    writer.await.unwrap();
    assert_eq!(seen, (1..=total).collect::<Vec<_>>());
    let late: Vec<u64> = watch(store.clone(), &id, total - 5)
        .take(5)
        .map(|event| event.unwrap().event_id)
        .collect()
        .await;
    assert_eq!(late, (total - 4..=total).collect::<Vec<_>>());
    let mut missing = watch(store.clone(), "no-such-trace", 0);
    assert!(matches!(
        missing.next().await,
        Some(Err(StoreError::NotFound { .. }))
    ));
    assert!(missing.next().await.is_none());
}
