//! Plan mode over HTTP: `POST /api/plans` plans a task in a new trace (the `plan` profile writes
//! only the goal tree; the trace becomes `planned`), people change the plan
//! ([`super::goals`]), and `POST /api/traces/{id}/run` carries it out in the same trace.
//!
//! Both runs are runs of this server like any other: they need a runner factory (403
//! `runs_unavailable` without one), take the same settings as a new run, checked the same way
//! (limits, approval mode, workspace roots), are tracked (cancel and shutdown reach them; a
//! second run of the trace is 409 `run_in_progress`) and are recorded as events that watchers
//! follow. The planning and the plan's storage are [`agent_plan::plan`]'s.

use agent_execution::TraceStatus;
use agent_plan::plan::{self, PlanOutcome};
use agent_runner::agents::PLAN;
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use crate::error::{ApiError, ReadTrace};
use crate::extract::{ApiJson, TraceIdPath};
use crate::routes::ErrorResponse;
use crate::routes::goals::plan_error;
use crate::routes::run_settings::{RunSettings, StartRun, optional_settings, settle};
use crate::routes::runs::RunAccepted;
use crate::routes::traces::not_found;
use crate::state::AppState;

/// The routes of this module.
pub(crate) fn router() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/api/plans", post(start_plan))
        .route("/api/traces/{trace_id}/run", post(run_plan))
}

/// Plans a task in a new trace: the planning run (the `plan` profile: read-only tools, only the
/// goal tree written) goes on in the background, and the trace becomes `planned` when it is
/// done, its goals all pending, ready to be changed and run.
#[utoipa::path(
    post,
    path = "/api/plans",
    tag = "plans",
    request_body = StartRun,
    responses(
        (status = 202, description = "The planning run started; watch the trace, whose status becomes `planned`", body = RunAccepted,
            headers(("Location" = String, description = "The new trace's URL"))),
        (status = 400, description = "The body is malformed (a limit that is not a positive number names its field), the task is empty, the workspace is not a folder (`invalid_workspace`), or the run was refused (`run_rejected`)", body = ErrorResponse),
        (status = 403, description = "`runs_unavailable`, `workspace_not_allowed`, `approval_not_allowed` or `not_writable`, as for a new run", body = ErrorResponse),
        (status = 413, description = "The body is over the size limit", body = ErrorResponse),
        (status = 415, description = "The body is not `application/json`", body = ErrorResponse),
        (status = 503, description = "`runs_unavailable`: this server is shutting down", body = ErrorResponse),
    )
)]
pub(crate) async fn start_plan(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<StartRun>,
) -> Result<Response, ApiError> {
    let factory = state.require_factory()?;
    state.runs().check_open()?;
    let (task, settings) = request.settings()?;
    let planner = factory
        .options()
        .with_agent(PLAN)
        .map_err(|error| ApiError::Internal(error.to_string()))?;
    let (options, choices) = settle(&state, planner, settings, None)?;
    let runner = factory.build_with(state.store().clone(), options, &choices)?;
    let trace_id = plan::begin(&runner, &task).await.map_err(plan_error)?;
    let reservation = state.runs().reserve(&trace_id)?;
    let cancel = reservation.cancel_token();
    let id = trace_id.clone();
    tokio::spawn(async move {
        // Held until the plan is stored: the trace counts as running here meanwhile.
        let _reservation = reservation;
        let ended = match runner.drive(&id, cancel).await {
            Ok(outcome) => plan::finish(runner.store().as_ref(), &outcome)
                .await
                .map_err(|error| error.to_string()),
            Err(error) => Err(error.to_string()),
        };
        match ended {
            Ok(PlanOutcome::Planned { .. }) => tracing::info!(trace_id = %id, "plan stored"),
            Ok(PlanOutcome::Stopped(outcome)) => {
                tracing::info!(trace_id = %id, status = ?outcome.status, "planning stopped");
            }
            Err(error) => tracing::warn!(trace_id = %id, %error, "planning failed"),
        }
    });
    tracing::info!(%trace_id, "planning started over HTTP");
    let mut headers = HeaderMap::new();
    if let Ok(location) = HeaderValue::from_str(&format!("/api/traces/{trace_id}")) {
        headers.insert(header::LOCATION, location);
    }
    Ok((
        StatusCode::ACCEPTED,
        headers,
        Json(RunAccepted { trace_id }),
    )
        .into_response())
}

/// Carries out a stored plan (status `planned`) in its own trace: the plan, as people left it,
/// is the model's plan from the first call. The body is optional; when present it is a JSON
/// object of the same settings as a new run.
#[utoipa::path(
    post,
    path = "/api/traces/{trace_id}/run",
    tag = "plans",
    params(("trace_id" = String, Path, description = "The trace holding the plan")),
    request_body(content = Option<RunSettings>, description = "Optional overrides; may be empty"),
    responses(
        (status = 202, description = "The plan is being carried out", body = RunAccepted),
        (status = 400, description = "The trace id or body is invalid (a limit that is not a positive number names its field), or the workspace is not a folder (`invalid_workspace`)", body = ErrorResponse),
        (status = 403, description = "`runs_unavailable`, `workspace_not_allowed`, `approval_not_allowed` or `not_writable`, as for a new run", body = ErrorResponse),
        (status = 404, description = "No such trace", body = ErrorResponse),
        (status = 409, description = "`not_a_plan` (the trace is not a stored plan: it runs, ran or is still being planned), `run_in_progress` or `trace_locked`", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
        (status = 413, description = "The body is over the size limit", body = ErrorResponse),
        (status = 415, description = "A body that is not `application/json`", body = ErrorResponse),
        (status = 503, description = "`runs_unavailable`: this server is shutting down", body = ErrorResponse),
    )
)]
pub(crate) async fn run_plan(
    State(state): State<AppState>,
    TraceIdPath(trace_id): TraceIdPath,
    headers: HeaderMap,
    body: Bytes,
) -> Result<(StatusCode, Json<RunAccepted>), ApiError> {
    let factory = state.require_factory()?;
    let settings = optional_settings(&headers, &body)?;
    let trace = state
        .store()
        .get_trace(&trace_id)
        .await
        .reading(&trace_id)?
        .ok_or_else(|| not_found(&trace_id))?;
    if state.runs().is_running(&trace_id) {
        return Err(ApiError::conflict(
            "run_in_progress",
            format!("trace {trace_id} is already running in this server"),
        ));
    }
    if trace.status != TraceStatus::Planned {
        // The same answer, in the same words, as the runner's own check.
        plan::check_is_plan(state.store().as_ref(), &trace_id)
            .await
            .map_err(plan_error)?;
    }
    let reservation = state.runs().reserve(&trace_id)?;
    let (options, choices) = settle(&state, factory.options(), settings, None)?;
    let runner = factory.build_with(state.store().clone(), options, &choices)?;
    plan::prepare_run(&runner, &trace_id)
        .await
        .map_err(plan_error)?;
    let handle = runner
        .resume_in_background(&trace_id, reservation.cancel_token())
        .await?;
    reservation.attach(handle);
    tracing::info!(%trace_id, "plan run started over HTTP");
    Ok((StatusCode::ACCEPTED, Json(RunAccepted { trace_id })))
}
