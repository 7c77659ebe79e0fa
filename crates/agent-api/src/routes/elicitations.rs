//! The questions MCP servers ask the person during a served run's tool calls (elicitation):
//! list those of a trace waiting for an answer, and answer one (accept with the form's content,
//! decline, or cancel). The board itself is `elicitations.rs`'s.

use axum::Json;
use axum::extract::State;
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::elicitations::{ElicitationReply, PendingElicitation};
use crate::error::{ApiError, ReadTrace};
use crate::extract::{ApiJson, ElicitationPath, TraceIdPath};
use crate::routes::ErrorResponse;
use crate::routes::traces::not_found;
use crate::state::AppState;

/// The routes of this module.
pub(crate) fn router() -> axum::Router<AppState> {
    axum::Router::new()
        .route(
            "/api/traces/{trace_id}/elicitations",
            get(list_elicitations),
        )
        .route(
            "/api/traces/{trace_id}/elicitations/{elicitation_id}",
            post(answer_elicitation),
        )
}

/// The questions of a trace waiting for an answer.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PendingElicitations {
    /// The trace.
    trace_id: String,
    /// Oldest first.
    elicitations: Vec<PendingElicitation>,
}

/// Lists the questions MCP servers asked a trace's run that wait for an answer.
#[utoipa::path(
    get,
    path = "/api/traces/{trace_id}/elicitations",
    tag = "runs",
    params(("trace_id" = String, Path, description = "The trace")),
    responses(
        (status = 200, description = "The waiting questions (none when the run is not served here)", body = PendingElicitations),
        (status = 400, description = "The trace id is invalid", body = ErrorResponse),
        (status = 404, description = "No such trace", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
    )
)]
pub(crate) async fn list_elicitations(
    State(state): State<AppState>,
    TraceIdPath(trace_id): TraceIdPath,
) -> Result<Json<PendingElicitations>, ApiError> {
    state
        .store()
        .get_trace(&trace_id)
        .await
        .reading(&trace_id)?
        .ok_or_else(|| not_found(&trace_id))?;
    let elicitations = state.elicitations().pending(&trace_id);
    Ok(Json(PendingElicitations {
        trace_id,
        elicitations,
    }))
}

/// What the person does with a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Action {
    /// Answers it: with `content` for a form; for a page, says the person went there.
    Accept,
    /// Refuses it.
    Decline,
    /// Dismisses it without choosing.
    Cancel,
}

/// The answer to a question.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Answer {
    /// `accept`, `decline` or `cancel`.
    action: Action,
    /// The form's values by field name, checked against the requested schema (accept only).
    #[schema(value_type = Option<Object>)]
    content: Option<Map<String, Value>>,
}

/// The answer reached the waiting server.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AnswerRecorded {
    /// The trace.
    trace_id: String,
    /// The question answered.
    elicitation_id: String,
    /// What was done.
    action: Action,
}

/// Answers a question an MCP server asked during a tool call of a run this server serves.
#[utoipa::path(
    post,
    path = "/api/traces/{trace_id}/elicitations/{elicitation_id}",
    tag = "runs",
    params(
        ("trace_id" = String, Path, description = "The trace"),
        ("elicitation_id" = String, Path, description = "The waiting question, from the list"),
    ),
    request_body = Answer,
    responses(
        (status = 200, description = "The answer was delivered", body = AnswerRecorded),
        (status = 400, description = "The body is malformed, or `invalid_content`: the content does not fit the requested schema (the message says which field; the question keeps waiting)", body = ErrorResponse),
        (status = 404, description = "No such question is waiting", body = ErrorResponse),
        (status = 409, description = "`already_answered` or `not_waiting`", body = ErrorResponse),
        (status = 413, description = "The body is over the size limit", body = ErrorResponse),
        (status = 415, description = "The body is not `application/json`", body = ErrorResponse),
    )
)]
pub(crate) async fn answer_elicitation(
    State(state): State<AppState>,
    path: ElicitationPath,
    ApiJson(answer): ApiJson<Answer>,
) -> Result<Json<AnswerRecorded>, ApiError> {
    let reply = match (answer.action, answer.content) {
        (Action::Accept, content) => ElicitationReply::Accept(content.unwrap_or_default()),
        (Action::Decline, None) => ElicitationReply::Decline,
        (Action::Cancel, None) => ElicitationReply::Cancel,
        (_, Some(_)) => {
            return Err(ApiError::bad_request(
                "invalid_content",
                "only an accepted answer has content",
            ));
        }
    };
    state
        .elicitations()
        .answer(&path.trace_id, &path.elicitation_id, reply)?;
    tracing::info!(trace_id = %path.trace_id, elicitation_id = %path.elicitation_id,
        action = ?answer.action, "an MCP server's question answered over HTTP");
    Ok(Json(AnswerRecorded {
        trace_id: path.trace_id,
        elicitation_id: path.elicitation_id,
        action: answer.action,
    }))
}
