//! Conformance checks of a trace's own record: creating it with a generated or chosen id,
//! reading it back, updating and finishing it, and the errors for unknown or duplicate traces.

use std::sync::Arc;

use super::{assert_consistent, names};
use crate::message::NewMessage;
use crate::store::{StoreError, TraceStore};
use crate::trace::{
    ModelSettings, NewTrace, TraceLimits, TraceMode, TraceOutcome, TraceStatus, TraceUpdate,
};

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

    // The limits a run was started with are stored with the trace and can be changed.
    let limits = TraceLimits {
        max_iterations: Some(7),
        max_cost: Some(0.25),
    };
    let limited = store
        .create_trace(NewTrace::agent("limited").with_limits(limits))
        .await
        .unwrap();
    assert_eq!(limited.limits, Some(limits));
    assert_eq!(trace.limits, None);
    let read = store.get_trace(&limited.trace_id).await.unwrap().unwrap();
    assert_eq!(read.limits, Some(limits));
    let raised = TraceLimits {
        max_cost: Some(1.0),
        ..limits
    };
    let updated = store
        .update_trace(
            &limited.trace_id,
            TraceUpdate {
                limits: Some(Some(raised)),
                ..TraceUpdate::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.limits, Some(raised));
    let read = store.get_trace(&limited.trace_id).await.unwrap().unwrap();
    assert_eq!(read.limits, Some(raised));

    // Another model chosen in a session is stored for the trace's next runs.
    let switched = ModelSettings {
        provider: Some("openai".into()),
        model: Some("other-model".into()),
        ..ModelSettings::default()
    };
    let update = TraceUpdate {
        model_settings: Some(switched.clone()),
        ..TraceUpdate::default()
    };
    store.update_trace(&limited.trace_id, update).await.unwrap();
    let read = store.get_trace(&limited.trace_id).await.unwrap().unwrap();
    assert_eq!(read.model_settings, Some(switched));
    assert_eq!(read.limits, Some(raised));
}
