//! `POST /api/traces/{trace_id}/fork`: a new trace with the history and plan of another just
//! before one of its goals started, or after one of its messages (see
//! [`agent_execution::fork`]). It needs no runner: the fork is only written, and is continued
//! like any stopped trace (`POST /api/traces/{trace_id}/resume`).

use agent_execution::fork::{self, ForkError, ForkPoint};
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::{ApiError, ReadTrace};
use crate::extract::{ApiJson, TraceIdPath};
use crate::routes::ErrorResponse;
use crate::routes::traces::not_found;
use crate::state::AppState;

/// The routes of this module.
pub(crate) fn router() -> axum::Router<AppState> {
    axum::Router::new().route("/api/traces/{trace_id}/fork", post(fork_trace))
}

/// Where to fork: exactly one of the two fields.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ForkRequest {
    /// Fork just before this goal (its display number, e.g. `"2.1"`) started: the goal is
    /// pending again and everything after it is left out.
    goal: Option<String>,
    /// Fork after this message (its sequence number) and the tool results of its turn.
    message_sequence: Option<u64>,
}

/// The fork that was made.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ForkCreated {
    /// The new trace.
    trace_id: String,
}

/// The answer to a failed fork: 404 for a trace that is gone, 400 `unknown_fork_point` for a
/// goal or message it does not have, 410 for damaged files.
pub(crate) fn fork_error(trace_id: &str, error: ForkError) -> ApiError {
    match error {
        ForkError::NotFound { .. } => not_found(trace_id),
        error if error.is_bad_request() => {
            ApiError::bad_request("unknown_fork_point", error.to_string())
        }
        error @ ForkError::Damaged { .. } => ApiError::TraceUnreadable(error.to_string()),
        ForkError::Store(error) => error.into(),
        error => ApiError::Internal(error.to_string()),
    }
}

/// Forks a trace into a new one, stored `cancelled` (a stopped run) with `forked_from` naming
/// the original, which is left untouched. Resume the fork to continue it.
#[utoipa::path(
    post,
    path = "/api/traces/{trace_id}/fork",
    tag = "runs",
    params(("trace_id" = String, Path, description = "The trace to fork")),
    request_body = ForkRequest,
    responses(
        (status = 201, description = "The fork was created", body = ForkCreated),
        (status = 400, description = "The trace id or body is invalid, or the goal or message is unknown (`unknown_fork_point`) or the goal never started", body = ErrorResponse),
        (status = 403, description = "`not_writable`: the trace folder is read-only to the server", body = ErrorResponse),
        (status = 404, description = "No such trace", body = ErrorResponse),
        (status = 409, description = "`run_in_progress`: the trace is running in this server", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
        (status = 413, description = "The body is over the size limit", body = ErrorResponse),
        (status = 415, description = "A body that is not `application/json`", body = ErrorResponse),
    )
)]
pub(crate) async fn fork_trace(
    State(state): State<AppState>,
    TraceIdPath(trace_id): TraceIdPath,
    ApiJson(request): ApiJson<ForkRequest>,
) -> Result<Response, ApiError> {
    let point = match (request.goal, request.message_sequence) {
        (Some(goal), None) => ForkPoint::Goal(goal),
        (None, Some(sequence)) => ForkPoint::Message(sequence),
        _ => {
            return Err(ApiError::bad_request(
                "invalid_body",
                "give exactly one of `goal` and `message_sequence`",
            ));
        }
    };
    // A trace that cannot be read is told as such, before the fork writes anything.
    if state
        .store()
        .get_trace(&trace_id)
        .await
        .reading(&trace_id)?
        .is_none()
    {
        return Err(not_found(&trace_id));
    }
    if state.runs().is_running(&trace_id) {
        return Err(ApiError::conflict(
            "run_in_progress",
            format!("trace {trace_id} is running in this server; cancel it or wait"),
        ));
    }
    let forked = fork::fork(state.store().as_ref(), &trace_id, &point)
        .await
        .map_err(|error| fork_error(&trace_id, error))?;
    tracing::info!(%trace_id, fork = %forked.trace_id, "trace forked over HTTP");
    let mut headers = HeaderMap::new();
    if let Ok(location) = HeaderValue::from_str(&format!("/api/traces/{}", forked.trace_id)) {
        headers.insert(header::LOCATION, location);
    }
    let body = ForkCreated {
        trace_id: forked.trace_id,
    };
    Ok((StatusCode::CREATED, headers, Json(body)).into_response())
}
