//! Reading traces: the list, one trace with its goal tree, sub-traces and pending approvals,
//! its messages, and its events after an id (the HTTP fallback of the live watch).
//!
//! A trace whose files are damaged or cannot be read is 410 `trace_unreadable` with the
//! reason, on every route that reads it; the list leaves such traces out.

use std::sync::Arc;

use agent_execution::GoalTree;
use agent_execution::{Event, Message, Trace, TraceFilter, TraceMode, TraceStats, TraceStatus};
use axum::Json;
use axum::extract::State;
use axum::routing::get;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::approvals::PendingApproval;
use crate::error::{ApiError, ReadTrace};
use crate::extract::{ApiQuery, TraceIdPath};
use crate::routes::ErrorResponse;
use crate::schemas::{
    EventDoc, GoalTreeDoc, MessageDoc, TraceDoc, TraceModeDoc, TraceStatsDoc, TraceStatusDoc,
};
use crate::state::AppState;

/// How many traces a list returns when `limit` is not given.
pub(crate) const DEFAULT_LIST_LIMIT: usize = 100;

/// The largest `limit` a list accepts.
pub(crate) const MAX_LIST_LIMIT: usize = 10_000;

/// The routes of this module.
pub(crate) fn router() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/api/traces/{trace_id}", get(get_trace))
        .route("/api/traces/{trace_id}/messages", get(list_messages))
        .route("/api/traces/{trace_id}/events", get(list_events))
}

/// Filters of the trace list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ListQuery {
    /// Only traces of this mode.
    #[param(value_type = Option<TraceModeDoc>)]
    mode: Option<TraceMode>,
    /// Only traces with this status.
    #[param(value_type = Option<TraceStatusDoc>)]
    status: Option<TraceStatus>,
    /// Only the sub-traces of this trace.
    parent_trace_id: Option<String>,
    /// At most this many traces, newest first (default 100, at most 10000).
    #[param(minimum = 1, maximum = 10000)]
    limit: Option<usize>,
}

/// A list of traces, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TraceList {
    /// Main traces and sub-traces.
    #[schema(value_type = Vec<TraceDoc>)]
    pub(crate) traces: Vec<Trace>,
    /// The ids of the listed traces stored as `running` or `waiting` whose writer is gone (the
    /// process that ran them died): they can be resumed.
    pub(crate) interrupted: Vec<String>,
}

/// Lists traces (main traces and sub-traces), newest first.
#[utoipa::path(
    get,
    path = "/api/traces",
    tag = "traces",
    params(ListQuery),
    responses(
        (status = 200, description = "The traces", body = TraceList),
        (status = 400, description = "A filter is malformed", body = ErrorResponse),
    )
)]
pub(crate) async fn list_traces(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Json<TraceList>, ApiError> {
    let limit = query.limit.unwrap_or(DEFAULT_LIST_LIMIT);
    if limit == 0 || limit > MAX_LIST_LIMIT {
        return Err(ApiError::bad_request(
            "invalid_query",
            format!("limit must be between 1 and {MAX_LIST_LIMIT}"),
        ));
    }
    if let Some(parent) = &query.parent_trace_id {
        agent_execution::validate_trace_id(parent)?;
    }
    let filter = TraceFilter {
        mode: query.mode,
        status: query.status,
        parent_trace_id: query.parent_trace_id,
        limit: Some(limit),
    };
    let traces = state.store().list_traces(&filter).await?;
    let mut interrupted = Vec::new();
    for trace in &traces {
        if is_interrupted(&state, trace).await {
            interrupted.push(trace.trace_id.clone());
        }
    }
    Ok(Json(TraceList {
        traces,
        interrupted,
    }))
}

/// Whether `trace` is stored as running or waiting but no writer holds it any more (the store
/// can tell: see `TraceStore::writer_alive`). A store that cannot tell, or fails to, says no.
async fn is_interrupted(state: &AppState, trace: &Trace) -> bool {
    matches!(trace.status, TraceStatus::Running | TraceStatus::Waiting)
        && matches!(
            state.store().writer_alive(&trace.trace_id).await,
            Ok(Some(false))
        )
}

/// One trace with everything a viewer needs to draw it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TraceDetail {
    /// The trace.
    #[schema(value_type = TraceDoc)]
    pub(crate) trace: Trace,
    /// Its goal tree.
    #[schema(value_type = GoalTreeDoc)]
    pub(crate) goal_tree: GoalTree,
    /// Its sub-traces (`parent_trace_id` = this trace), newest first.
    #[schema(value_type = Vec<TraceDoc>)]
    pub(crate) sub_traces: Vec<Trace>,
    /// Risky tool calls of a run of this server waiting for a decision, oldest first.
    pub(crate) pending_approvals: Vec<PendingApproval>,
    /// The questions MCP servers asked its run that wait for an answer (as
    /// `GET /api/traces/{id}/elicitations` lists them).
    pub(crate) pending_elicitations: Vec<crate::elicitations::PendingElicitation>,
    /// The totals of the trace and all its sub-traces, recursively (`trace` counts its own
    /// messages only): what its `max_cost` budget counts.
    #[schema(value_type = TraceStatsDoc)]
    pub(crate) total_stats_with_sub_traces: TraceStats,
    /// True when the trace is stored as running or waiting but the process that ran it is gone:
    /// it will not move again until it is resumed.
    pub(crate) interrupted: bool,
    /// True when some of the token counts in the totals (the trace's or a sub-trace's) are the
    /// runtime's estimates: a model server that reported no usage (`metadata.usage.estimated`
    /// on the messages concerned).
    pub(crate) tokens_estimated: bool,
    /// True when the trace's files can be rewound to a goal's start (`POST .../rewind`): this
    /// server keeps checkpoints and the trace has some.
    pub(crate) checkpoints: bool,
}

/// A trace, its goal tree, its sub-traces and its pending approvals.
#[utoipa::path(
    get,
    path = "/api/traces/{trace_id}",
    tag = "traces",
    params(("trace_id" = String, Path, description = "The trace")),
    responses(
        (status = 200, description = "The trace", body = TraceDetail),
        (status = 400, description = "The trace id is invalid", body = ErrorResponse),
        (status = 404, description = "No such trace", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
    )
)]
pub(crate) async fn get_trace(
    State(state): State<AppState>,
    TraceIdPath(trace_id): TraceIdPath,
) -> Result<Json<TraceDetail>, ApiError> {
    let store = state.store();
    // The pending calls before the trace: a run records its trace `waiting` before it asks, so
    // the trace read after a call is listed shows it `waiting` (until the call is decided), never
    // the `running` of a read made before the call was asked.
    let mut pending_approvals = state.approvals().pending(&trace_id);
    pending_approvals.extend(crate::routes::queued::waiting(&state, &trace_id).await);
    let trace = store
        .get_trace(&trace_id)
        .await
        .reading(&trace_id)?
        .ok_or_else(|| not_found(&trace_id))?;
    let goal_tree = store
        .get_goal_tree(&trace_id)
        .await
        .reading(&trace_id)?
        .unwrap_or_else(|| GoalTree::new(trace.task.clone()));
    let sub_traces = store.get_sub_traces(&trace_id).await?;
    let total_stats_with_sub_traces =
        agent_runner::stats_with_sub_traces(store.as_ref(), &trace_id)
            .await
            .reading(&trace_id)?;
    let interrupted = is_interrupted(&state, &trace).await;
    let tokens_estimated = tokens_estimated(&state, &trace_id).await?;
    Ok(Json(TraceDetail {
        trace,
        goal_tree,
        sub_traces,
        pending_approvals,
        pending_elicitations: state.elicitations().pending(&trace_id),
        total_stats_with_sub_traces,
        interrupted,
        tokens_estimated,
        checkpoints: state
            .checkpoints()
            .is_some_and(|checkpoints| checkpoints.has(&trace_id)),
    }))
}

/// Whether a model call of the trace or of one of its sub-traces (recursively) has estimated
/// token counts.
async fn tokens_estimated(state: &AppState, trace_id: &str) -> Result<bool, ApiError> {
    let store = state.store().as_ref();
    let mut pending = vec![trace_id.to_owned()];
    while let Some(id) = pending.pop() {
        if agent_runner::tokens_estimated(store, &id)
            .await
            .reading(&id)?
        {
            return Ok(true);
        }
        let subs = store.get_sub_traces(&id).await.reading(&id)?;
        pending.extend(subs.into_iter().map(|sub| sub.trace_id));
    }
    Ok(false)
}

/// Filter of the message list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct MessagesQuery {
    /// Only the messages attached directly to this goal (its internal id).
    goal_id: Option<String>,
}

/// Messages of a trace, in sequence order.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct MessageList {
    /// The messages.
    #[schema(value_type = Vec<MessageDoc>)]
    pub(crate) messages: Vec<Arc<Message>>,
}

/// The messages of a trace, optionally only those of one goal.
#[utoipa::path(
    get,
    path = "/api/traces/{trace_id}/messages",
    tag = "traces",
    params(("trace_id" = String, Path, description = "The trace"), MessagesQuery),
    responses(
        (status = 200, description = "The messages, in sequence order", body = MessageList),
        (status = 400, description = "The trace id is invalid", body = ErrorResponse),
        (status = 404, description = "No such trace", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
    )
)]
pub(crate) async fn list_messages(
    State(state): State<AppState>,
    TraceIdPath(trace_id): TraceIdPath,
    ApiQuery(query): ApiQuery<MessagesQuery>,
) -> Result<Json<MessageList>, ApiError> {
    let store = state.store();
    if store
        .get_trace(&trace_id)
        .await
        .reading(&trace_id)?
        .is_none()
    {
        return Err(not_found(&trace_id));
    }
    let messages = match &query.goal_id {
        // Shared with the store's cache: the response is written from them, not from copies.
        Some(goal_id) => store.get_messages_by_goal_shared(&trace_id, goal_id).await,
        None => store.get_trace_messages_shared(&trace_id).await,
    }
    .reading(&trace_id)?;
    Ok(Json(MessageList { messages }))
}

/// Where an event read starts.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct EventsQuery {
    /// Only events with a greater id (default 0: every event).
    #[param(minimum = 0)]
    pub(crate) since_event_id: Option<u64>,
}

/// Events of a trace, in id order.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct EventList {
    /// The events.
    #[schema(value_type = Vec<EventDoc>)]
    pub(crate) events: Vec<Event>,
}

/// The events of a trace after an id: the HTTP fallback of the live watch.
#[utoipa::path(
    get,
    path = "/api/traces/{trace_id}/events",
    tag = "traces",
    params(("trace_id" = String, Path, description = "The trace"), EventsQuery),
    responses(
        (status = 200, description = "The events after `since_event_id`, in id order", body = EventList),
        (status = 400, description = "The trace id or `since_event_id` is invalid", body = ErrorResponse),
        (status = 404, description = "No such trace", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
    )
)]
pub(crate) async fn list_events(
    State(state): State<AppState>,
    TraceIdPath(trace_id): TraceIdPath,
    ApiQuery(query): ApiQuery<EventsQuery>,
) -> Result<Json<EventList>, ApiError> {
    let events = state
        .store()
        .get_events(&trace_id, query.since_event_id.unwrap_or(0))
        .await
        .reading(&trace_id)?;
    Ok(Json(EventList { events }))
}

pub(crate) fn not_found(trace_id: &str) -> ApiError {
    ApiError::NotFound(format!("trace {trace_id} not found"))
}
