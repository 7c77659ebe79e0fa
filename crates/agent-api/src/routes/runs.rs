//! Run control: start a run, cancel it, resume a stopped trace, continue one with a message,
//! and decide on a risky tool call. Starting, resuming and continuing need a runner factory
//! (403 `runs_unavailable` without one); cancel and approvals act on the runs this server owns.
//!
//! Every run started here gets the server's approval mode (a request may ask for a stricter
//! one, never a looser one: 403 `approval_not_allowed`) and a workspace under the server's
//! workspace roots (403 `workspace_not_allowed`); its limits are checked as the command line
//! checks them (400 naming the field). The settings themselves are `run_settings`.

use agent_execution::TraceStatus;
use agent_execution::message::UserInput;
use agent_runner::ApprovalDecision;
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::{ApiError, ReadTrace};
use crate::extract::{ApiJson, ApprovalPath, TraceIdPath};
use crate::routes::ErrorResponse;
use crate::routes::queued;
use crate::routes::run_settings::{
    ImageInput, RunSettings, StartRun, optional_settings, pictures, settle,
};
use crate::routes::traces::not_found;
use crate::state::AppState;

/// The routes of this module.
pub(crate) fn router() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/api/traces/{trace_id}/cancel", post(cancel_run))
        .route("/api/traces/{trace_id}/resume", post(resume_run))
        .route("/api/traces/{trace_id}/messages", post(send_message))
        .route(
            "/api/traces/{trace_id}/approvals/{tool_call_id}",
            post(decide_approval),
        )
}

/// A run the server accepted; it goes on in the background.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RunAccepted {
    /// The trace that records the run; watch it at `/api/traces/{trace_id}/watch`.
    pub(crate) trace_id: String,
}

/// Starts a run of a task in a new trace.
#[utoipa::path(
    post,
    path = "/api/traces",
    tag = "runs",
    request_body = StartRun,
    responses(
        (status = 201, description = "The run started", body = RunAccepted,
            headers(("Location" = String, description = "The new trace's URL"))),
        (status = 400, description = "The body is malformed (a limit that is not a positive number names its field), the workspace is not a folder (`invalid_workspace`), the run was refused (`run_rejected`), a picture is not one (`invalid_picture`), the model takes no pictures (`no_vision`), or pictures were sent to a server with a run queue (`images_unsupported`)", body = ErrorResponse),
        (status = 403, description = "`runs_unavailable`: this server is read-only (started without a model); `workspace_not_allowed`: the workspace is outside the server's workspace roots; `approval_not_allowed`: the request asks for looser approvals than the server's mode; `not_writable`: the trace folder is read-only", body = ErrorResponse),
        (status = 413, description = "The body is over the size limit", body = ErrorResponse),
        (status = 415, description = "The body is not `application/json`", body = ErrorResponse),
        (status = 503, description = "`runs_unavailable`: this server is shutting down", body = ErrorResponse),
    )
)]
pub(crate) async fn start_run(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<StartRun>,
) -> Result<Response, ApiError> {
    state.runs().check_open()?;
    let images = request.images()?;
    let trace_id = if let Some(queue) = state.queue() {
        refuse_queued_pictures(&images)?;
        let (task, settings) = request.settings()?;
        queued::start(&state, queue, &task, settings).await?
    } else {
        let factory = state.require_factory()?;
        let (task, settings) = request.settings()?;
        let (options, choices) = settle(&state, factory.options(), settings, None)?;
        // A custom command (`/name args`) becomes its prompt, as at every door.
        let task = factory.task(&task, &options.workspace)?;
        let runner = factory.build_with(state.store().clone(), options, &choices)?;
        let handle = runner
            .start(UserInput {
                text: &task,
                images: &images,
            })
            .await?;
        state.runs().track(handle).trace_id
    };
    tracing::info!(%trace_id, "run started over HTTP");
    let mut headers = HeaderMap::new();
    if let Ok(location) = HeaderValue::from_str(&format!("/api/traces/{trace_id}")) {
        headers.insert(header::LOCATION, location);
    }
    Ok((StatusCode::CREATED, headers, Json(RunAccepted { trace_id })).into_response())
}

/// Asks a run of this server to stop. The trace ends `cancelled` shortly after and can be
/// resumed.
#[utoipa::path(
    post,
    path = "/api/traces/{trace_id}/cancel",
    tag = "runs",
    params(("trace_id" = String, Path, description = "The trace")),
    responses(
        (status = 202, description = "The run is being cancelled", body = RunAccepted),
        (status = 400, description = "The trace id is invalid", body = ErrorResponse),
        (status = 404, description = "No such trace", body = ErrorResponse),
        (status = 409, description = "`not_running`: this server runs no such trace", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
    )
)]
pub(crate) async fn cancel_run(
    State(state): State<AppState>,
    TraceIdPath(trace_id): TraceIdPath,
) -> Result<(StatusCode, Json<RunAccepted>), ApiError> {
    if state.runs().cancel(&trace_id) {
        tracing::info!(%trace_id, "run cancelled over HTTP");
        return Ok((StatusCode::ACCEPTED, Json(RunAccepted { trace_id })));
    }
    if let Some(queue) = state.queue()
        && queued::cancel(queue, &trace_id).await?
    {
        tracing::info!(%trace_id, "queued run asked to stop over HTTP");
        return Ok((StatusCode::ACCEPTED, Json(RunAccepted { trace_id })));
    }
    let trace = state
        .store()
        .get_trace(&trace_id)
        .await
        .reading(&trace_id)?
        .ok_or_else(|| not_found(&trace_id))?;
    let read_only = if state.is_read_only() {
        "; this server is read-only and runs nothing of its own"
    } else {
        ""
    };
    Err(ApiError::conflict(
        "not_running",
        format!(
            "trace {trace_id} is not running in this server (its status is {}){read_only}",
            status_name(trace.status)
        ),
    ))
}

/// Continues a stopped trace (cancelled, failed, interrupted) under the same id. The body is
/// optional; when present it is a JSON object of the same settings as a new run.
#[utoipa::path(
    post,
    path = "/api/traces/{trace_id}/resume",
    tag = "runs",
    params(("trace_id" = String, Path, description = "The trace")),
    request_body(content = Option<RunSettings>, description = "Optional overrides; may be empty"),
    responses(
        (status = 202, description = "The run resumed", body = RunAccepted),
        (status = 400, description = "The trace id or body is invalid (a limit that is not a positive number names its field), or the workspace is not a folder (`invalid_workspace`)", body = ErrorResponse),
        (status = 403, description = "`runs_unavailable`: this server is read-only (started without a model); `workspace_not_allowed`, `approval_not_allowed` or `not_writable`, as for a new run", body = ErrorResponse),
        (status = 404, description = "No such trace", body = ErrorResponse),
        (status = 409, description = "`run_in_progress`, `already_completed` or `trace_locked`", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
        (status = 413, description = "The body is over the size limit", body = ErrorResponse),
        (status = 415, description = "A body that is not `application/json`", body = ErrorResponse),
        (status = 503, description = "`runs_unavailable`: this server is shutting down", body = ErrorResponse),
    )
)]
pub(crate) async fn resume_run(
    State(state): State<AppState>,
    TraceIdPath(trace_id): TraceIdPath,
    headers: HeaderMap,
    body: Bytes,
) -> Result<(StatusCode, Json<RunAccepted>), ApiError> {
    if state.queue().is_none() {
        state.require_factory()?;
    }
    let settings = optional_settings(&headers, &body)?;
    let trace = state
        .store()
        .get_trace(&trace_id)
        .await
        .reading(&trace_id)?
        .ok_or_else(|| not_found(&trace_id))?;
    if trace.status == TraceStatus::Completed {
        return Err(ApiError::conflict(
            "already_completed",
            format!("trace {trace_id} has already completed; start a new run instead"),
        ));
    }
    if let Some(queue) = state.queue() {
        state.runs().check_open()?;
        queued::resumable(&trace)?;
        queued::resume(&state, queue, &trace, settings).await?;
        return Ok((StatusCode::ACCEPTED, Json(RunAccepted { trace_id })));
    }
    let factory = state.require_factory()?;
    let reservation = state.runs().reserve(&trace_id)?;
    let (options, choices) = settle(&state, factory.options(), settings, trace.model)?;
    let runner = factory.build_with(state.store().clone(), options, &choices)?;
    let handle = runner
        .resume_in_background(&trace_id, reservation.cancel_token())
        .await?;
    reservation.attach(handle);
    tracing::info!(%trace_id, "run resumed over HTTP");
    Ok((StatusCode::ACCEPTED, Json(RunAccepted { trace_id })))
}

/// A user message for a trace.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UserMessage {
    /// The message.
    #[schema(
        pattern = r"[^\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    content: String,
    /// Pictures after the text (see `StartRun`'s `images`); only with a message that starts
    /// the trace's next turn (409 `run_in_progress` while it runs).
    #[serde(default)]
    images: Vec<ImageInput>,
}

/// A queued run or message carries text only: its pictures are refused, not dropped.
fn refuse_queued_pictures(images: &[agent_execution::message::ChatImage]) -> Result<(), ApiError> {
    if images.is_empty() {
        return Ok(());
    }
    Err(ApiError::bad_request(
        "images_unsupported",
        "pictures are not carried through this server's run queue; send them to a server \
         that runs its traces itself",
    ))
}

/// Where a user message went.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct MessageAccepted {
    /// The trace; watch it at `/api/traces/{trace_id}/watch`.
    trace_id: String,
    /// `true`: the trace was running in this server, and its run shows the message to the
    /// model before its next call; `false`: the trace had ended, and the message started its
    /// next turn.
    queued: bool,
}

/// Sends a user message to a trace: a trace running in this server gets it before its next
/// model call; an ended one (completed, failed or cancelled) continues with it under the same
/// id, its plan and history carried over. Either way it shows in the event stream as
/// `message_added`.
#[utoipa::path(
    post,
    path = "/api/traces/{trace_id}/messages",
    tag = "runs",
    params(("trace_id" = String, Path, description = "The trace")),
    request_body = UserMessage,
    responses(
        (status = 202, description = "The message was queued for the run, or started the next turn", body = MessageAccepted),
        (status = 400, description = "The trace id or body is invalid, the message is empty, or its pictures are refused (`invalid_picture`, `no_vision`, `images_unsupported`)", body = ErrorResponse),
        (status = 403, description = "`runs_unavailable`: this server is read-only (started without a model); `workspace_not_allowed` or `not_writable`, as for a new run", body = ErrorResponse),
        (status = 404, description = "No such trace", body = ErrorResponse),
        (status = 409, description = "`run_in_progress` (the run is starting or ending) or `trace_locked`", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
        (status = 413, description = "The body is over the size limit", body = ErrorResponse),
        (status = 415, description = "A body that is not `application/json`", body = ErrorResponse),
        (status = 503, description = "`runs_unavailable`: this server is shutting down", body = ErrorResponse),
    )
)]
pub(crate) async fn send_message(
    State(state): State<AppState>,
    TraceIdPath(trace_id): TraceIdPath,
    ApiJson(message): ApiJson<UserMessage>,
) -> Result<(StatusCode, Json<MessageAccepted>), ApiError> {
    if state.queue().is_none() {
        state.require_factory()?;
    }
    let content = message.content;
    let images = pictures(&message.images)?;
    if content.trim().is_empty() {
        return Err(ApiError::bad_request(
            "invalid_request",
            "the message is empty",
        ));
    }
    let trace = state
        .store()
        .get_trace(&trace_id)
        .await
        .reading(&trace_id)?
        .ok_or_else(|| not_found(&trace_id))?;
    if !images.is_empty() && state.runs().is_running(&trace_id) {
        return Err(ApiError::conflict(
            "run_in_progress",
            "pictures can be sent only with a message that starts the trace's next turn; \
             this trace is running",
        ));
    }
    if state.runs().send(&trace_id, &content) {
        tracing::info!(%trace_id, "message queued for the run over HTTP");
        let queued = true;
        return Ok((
            StatusCode::ACCEPTED,
            Json(MessageAccepted { trace_id, queued }),
        ));
    }
    if let Some(queue) = state.queue() {
        refuse_queued_pictures(&images)?;
        state.runs().check_open()?;
        let queued = queued::message(&state, queue, &trace, &content).await?;
        return Ok((
            StatusCode::ACCEPTED,
            Json(MessageAccepted { trace_id, queued }),
        ));
    }
    let factory = state.require_factory()?;
    let reservation = state.runs().reserve(&trace_id)?;
    let (options, choices) = settle(
        &state,
        factory.options(),
        RunSettings::default(),
        trace.model,
    )?;
    let runner = factory.build_with(state.store().clone(), options, &choices)?;
    let handle = runner
        .continue_in_background(
            &trace_id,
            UserInput {
                text: &content,
                images: &images,
            },
            reservation.cancel_token(),
        )
        .await?;
    reservation.attach(handle);
    tracing::info!(%trace_id, "trace continued over HTTP");
    let queued = false;
    Ok((
        StatusCode::ACCEPTED,
        Json(MessageAccepted { trace_id, queued }),
    ))
}

/// A decision on a risky tool call.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Decision {
    /// `true` runs the call; `false` refuses it and tells the model.
    approve: bool,
    /// Why it was refused, shown to the model.
    reason: Option<String>,
}

/// The decision was delivered to the waiting run.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DecisionRecorded {
    /// The trace.
    trace_id: String,
    /// The call decided on.
    tool_call_id: String,
    /// Whether it was approved.
    approved: bool,
}

/// Approves or refuses a risky tool call a run of this server waits on.
#[utoipa::path(
    post,
    path = "/api/traces/{trace_id}/approvals/{tool_call_id}",
    tag = "runs",
    params(
        ("trace_id" = String, Path, description = "The trace"),
        ("tool_call_id" = String, Path, description = "The waiting call, from `pending_approvals`"),
    ),
    request_body = Decision,
    responses(
        (status = 200, description = "The decision was delivered", body = DecisionRecorded),
        (status = 400, description = "The trace id or body is invalid", body = ErrorResponse),
        (status = 404, description = "No such call is waiting (a read-only server runs nothing, so none ever is)", body = ErrorResponse),
        (status = 409, description = "`already_decided` or `not_waiting`", body = ErrorResponse),
        (status = 413, description = "The body is over the size limit", body = ErrorResponse),
        (status = 415, description = "The body is not `application/json`", body = ErrorResponse),
    )
)]
pub(crate) async fn decide_approval(
    State(state): State<AppState>,
    path: ApprovalPath,
    ApiJson(decision): ApiJson<Decision>,
) -> Result<Json<DecisionRecorded>, ApiError> {
    let verdict = if decision.approve {
        ApprovalDecision::Approve
    } else {
        ApprovalDecision::Reject {
            reason: decision.reason.unwrap_or_default(),
        }
    };
    let local = state
        .approvals()
        .resolve(&path.trace_id, &path.tool_call_id, verdict.clone());
    let decided = match (local, state.queue()) {
        (Err(ApiError::NotFound(_)), Some(queue)) => {
            queued::decide(queue, &path.trace_id, &path.tool_call_id, &verdict).await
        }
        (result, _) => result,
    };
    decided.map_err(|error| match error {
        ApiError::NotFound(message) if state.is_read_only() => ApiError::NotFound(format!(
            "{message}: this server is read-only and runs nothing of its own"
        )),
        other => other,
    })?;
    tracing::info!(trace_id = %path.trace_id, tool_call_id = %path.tool_call_id,
        approved = decision.approve, "tool call decided over HTTP");
    Ok(Json(DecisionRecorded {
        trace_id: path.trace_id,
        tool_call_id: path.tool_call_id,
        approved: decision.approve,
    }))
}

/// A status as its JSON name (`planned`, `running`, ...).
pub(crate) fn status_name(status: TraceStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{status:?}"))
}
