//! `/goal` over HTTP: `POST /api/traces/{trace_id}/goal` gives an existing trace a person's
//! goal — a top-level goal of its plan, with a check that gates `done` and a budget when given —
//! and continues the trace with the message that starts the work, as the chat's `/goal` does
//! (the runner's `goal_command` does both). The run then keeps working until every goal is done
//! or abandoned, or it is cancelled.
//!
//! A trace running in this server, or one whose status says it runs elsewhere, is refused with
//! 409 `run_in_progress`: the goal waits for the turn to end. With a run queue the goal is
//! written here and the continued run is queued for a worker.

use agent_execution::TraceStatus;
use agent_plan::goal_command::{
    self, CheckAuthor, GoalBudget, GoalCheck, GoalCommandError, NewGoal,
};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::{ApiError, ReadTrace};
use crate::extract::{ApiJson, TraceIdPath};
use crate::goal_schemas::GoalBudgetDoc;
use crate::routes::ErrorResponse;
use crate::routes::queued;
use crate::routes::run_settings::{RunSettings, settle};
use crate::routes::traces::not_found;
use crate::state::AppState;

/// The routes of this module.
pub(crate) fn router() -> axum::Router<AppState> {
    axum::Router::new().route("/api/traces/{trace_id}/goal", post(set_goal))
}

/// A person's goal: what is to be achieved, and what gates `done` on it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GoalBody {
    /// What is to be achieved (at most 4,000 characters).
    #[schema(
        pattern = r"[^\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    text: String,
    /// A shell command that must exit 0 before the goal can be marked done; it runs in the
    /// run's sandbox without asking.
    check: Option<String>,
    /// What a judge must find before the goal can be marked done (empty: the goal's text);
    /// not with `check`.
    judge: Option<String>,
    /// What the goal may spend.
    #[schema(value_type = Option<GoalBudgetDoc>)]
    budget: Option<GoalBudget>,
}

/// The goal was set and the run that works on it started (or was queued).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct GoalAccepted {
    /// The trace; watch it at `/api/traces/{trace_id}/watch`.
    trace_id: String,
    /// The new goal's id.
    goal_id: String,
    /// Its display number in the plan.
    number: String,
}

/// Gives a trace that is not running a person's goal and continues it to work on it.
#[utoipa::path(
    post,
    path = "/api/traces/{trace_id}/goal",
    tag = "runs",
    params(("trace_id" = String, Path, description = "The trace")),
    request_body = GoalBody,
    responses(
        (status = 202, description = "The goal is in the plan and the run started (or was queued)", body = GoalAccepted),
        (status = 400, description = "The trace id or body is invalid: an empty or too long text, both `check` and `judge`, an empty `check`, a budget that sets nothing", body = ErrorResponse),
        (status = 403, description = "`runs_unavailable`: this server is read-only (started without a model); `workspace_not_allowed` or `not_writable`, as for a new run", body = ErrorResponse),
        (status = 404, description = "No such trace", body = ErrorResponse),
        (status = 409, description = "`run_in_progress` (the goal waits for the turn to end) or `trace_locked`", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
        (status = 413, description = "The body is over the size limit", body = ErrorResponse),
        (status = 415, description = "A body that is not `application/json`", body = ErrorResponse),
        (status = 503, description = "`runs_unavailable`: this server is shutting down", body = ErrorResponse),
    )
)]
pub(crate) async fn set_goal(
    State(state): State<AppState>,
    TraceIdPath(trace_id): TraceIdPath,
    ApiJson(body): ApiJson<GoalBody>,
) -> Result<(StatusCode, Json<GoalAccepted>), ApiError> {
    if state.queue().is_none() {
        state.require_factory()?;
    }
    let goal = new_goal(body)?;
    let trace = state
        .store()
        .get_trace(&trace_id)
        .await
        .reading(&trace_id)?
        .ok_or_else(|| not_found(&trace_id))?;
    if state.runs().is_running(&trace_id)
        || matches!(trace.status, TraceStatus::Running | TraceStatus::Waiting)
    {
        return Err(ApiError::conflict(
            "run_in_progress",
            format!("trace {trace_id} is running; set the goal once its turn has ended"),
        ));
    }
    let store = state.store();
    if let Some(queue) = state.queue() {
        state.runs().check_open()?;
        let set = goal_command::add_goal(store.as_ref(), &trace_id, &goal)
            .await
            .map_err(goal_error)?;
        queued::message(&state, queue, &trace, &set.message).await?;
        return Ok(accepted(set));
    }
    let factory = state.require_factory()?;
    let reservation = state.runs().reserve(&trace_id)?;
    let (options, choices) = settle(
        &state,
        factory.options(),
        RunSettings::default(),
        trace.model,
    )?;
    let runner = factory.build_with(store.clone(), options, &choices)?;
    let set = goal_command::add_goal(store.as_ref(), &trace_id, &goal)
        .await
        .map_err(goal_error)?;
    let handle = runner
        .continue_in_background(&trace_id, &set.message, reservation.cancel_token())
        .await?;
    reservation.attach(handle);
    tracing::info!(%trace_id, goal_id = %set.goal_id, "goal set over HTTP");
    Ok(accepted(set))
}

fn accepted(set: goal_command::GoalSet) -> (StatusCode, Json<GoalAccepted>) {
    let accepted = GoalAccepted {
        trace_id: set.trace_id,
        goal_id: set.goal_id,
        number: set.number,
    };
    (StatusCode::ACCEPTED, Json(accepted))
}

/// The goal the body asks for, or a 400 saying what is wrong with it.
fn new_goal(body: GoalBody) -> Result<NewGoal, ApiError> {
    let bad = |message: &str| ApiError::bad_request("invalid_request", message.to_owned());
    let text = body.text.trim();
    if text.is_empty() {
        return Err(bad("the goal's `text` is empty"));
    }
    if text.chars().count() > agent_runner::MAX_GOAL_TEXT_CHARS {
        return Err(bad(&format!(
            "the goal's `text` is longer than {} characters",
            agent_runner::MAX_GOAL_TEXT_CHARS
        )));
    }
    let check = match (body.check, body.judge) {
        (Some(_), Some(_)) => return Err(bad("give either `check` or `judge`, not both")),
        (Some(command), None) if command.trim().is_empty() => {
            return Err(bad("`check` needs the command to run"));
        }
        (Some(command), None) => Some(GoalCheck::command(command.trim(), CheckAuthor::Person)),
        (None, Some(criteria)) => Some(GoalCheck::judge(criteria.trim(), CheckAuthor::Person)),
        (None, None) => None,
    };
    if body.budget.is_some_and(|budget| budget.is_empty()) {
        return Err(bad(
            "`budget` sets nothing: give iterations, tokens or seconds",
        ));
    }
    Ok(NewGoal {
        text: text.to_owned(),
        check,
        budget: body.budget,
    })
}

/// A goal the plan or the store refused.
fn goal_error(error: GoalCommandError) -> ApiError {
    match error {
        GoalCommandError::Run(error) => error.into(),
        GoalCommandError::Running { trace_id } => ApiError::conflict(
            "run_in_progress",
            format!("trace {trace_id} is running; set the goal once its turn has ended"),
        ),
        other => ApiError::bad_request("invalid_request", other.to_string()),
    }
}
