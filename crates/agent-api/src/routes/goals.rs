//! People's edits of a trace's plan: the whole goal tree (`PUT /api/traces/{id}/goal_tree`,
//! a list of edits or a plan text) and one goal at a time (`POST /api/traces/{id}/goals`,
//! `PATCH` and `DELETE /api/traces/{id}/goals/{goal_id}`, `POST .../abandon`).
//!
//! Every edit goes through [`agent_plan::plan_edits::apply`] (a plan text through
//! [`agent_plan::plan::edit`]), so it follows the goal tree's rules — a goal that started can
//! only be abandoned — and is recorded as goal events that watchers see. A refused edit is 409
//! `edit_refused`, a trace whose run is going on 409 `run_in_progress`, an unknown trace or
//! goal 404. No runner is needed: the edits are only written.

use agent_execution::{GoalTree, Trace, TraceStatus};
use agent_plan::PlanError;
use agent_plan::plan_edits::{self, GoalError, PlanEdit, PlanEditError};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{patch, post, put};
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::{ApiError, ReadTrace};
use crate::extract::{ApiJson, GoalPath, TraceIdPath};
use crate::routes::ErrorResponse;
use crate::routes::goal_bodies::{AbandonGoal, GoalChange, NewGoal, PlanChange};
use crate::routes::runs::status_name;
use crate::routes::traces::not_found;
use crate::schemas::GoalTreeDoc;
use crate::state::AppState;

/// The routes of this module.
pub(crate) fn router() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/api/traces/{trace_id}/goal_tree", put(replace_plan))
        .route("/api/traces/{trace_id}/goals", post(add_goal))
        .route(
            "/api/traces/{trace_id}/goals/{goal_id}",
            patch(change_goal).delete(delete_goal),
        )
        .route(
            "/api/traces/{trace_id}/goals/{goal_id}/abandon",
            post(abandon_goal),
        )
}

/// The plan after a change.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PlanChanged {
    /// The trace.
    trace_id: String,
    /// Its goal tree after the change.
    #[schema(value_type = GoalTreeDoc)]
    goal_tree: GoalTree,
}

/// The plan after a goal was added.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct GoalCreated {
    /// The trace.
    trace_id: String,
    /// The new goal's id.
    goal_id: String,
    /// The goal tree with the new goal.
    #[schema(value_type = GoalTreeDoc)]
    goal_tree: GoalTree,
}

/// Changes the plan of a trace that is not running: a list of edits (all or none) or, for a
/// stored plan, a new plan text.
#[utoipa::path(
    put,
    path = "/api/traces/{trace_id}/goal_tree",
    tag = "plans",
    params(("trace_id" = String, Path, description = "The trace")),
    request_body = PlanChange,
    responses(
        (status = 200, description = "The plan was changed", body = PlanChanged),
        (status = 400, description = "The trace id or body is invalid (not exactly one of `edits` and `plan_text`, over 50 edits, an empty or too long text, an invalid agent name, a plan over 1000 goals), or the plan text cannot be read (`invalid_plan`)", body = ErrorResponse),
        (status = 403, description = "`not_writable`: the trace folder is read-only to the server", body = ErrorResponse),
        (status = 404, description = "No such trace, or an edit names no goal of it", body = ErrorResponse),
        (status = 409, description = "`edit_refused` (the goal tree refused an edit, e.g. of a goal that started; the message names the edit's position), `run_in_progress`, `not_a_plan` (a plan text for a trace that is not a stored plan) or `trace_locked`", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
        (status = 413, description = "The body is over the size limit", body = ErrorResponse),
        (status = 415, description = "A body that is not `application/json`", body = ErrorResponse),
    )
)]
pub(crate) async fn replace_plan(
    State(state): State<AppState>,
    TraceIdPath(trace_id): TraceIdPath,
    ApiJson(change): ApiJson<PlanChange>,
) -> Result<Json<PlanChanged>, ApiError> {
    check_editable(&state, &trace_id).await?;
    let goal_tree = match (change.edits, change.plan_text) {
        (Some(edits), None) => apply(&state, &trace_id, &edits, true).await?,
        (None, Some(text)) => {
            check_plan_text(&text)?;
            agent_plan::plan::edit(state.store().as_ref(), &trace_id, &text)
                .await
                .map_err(plan_error)?
        }
        _ => {
            return Err(ApiError::bad_request(
                "invalid_request",
                "give exactly one of `edits` and `plan_text`",
            ));
        }
    };
    tracing::info!(%trace_id, "plan changed over HTTP");
    Ok(Json(PlanChanged {
        trace_id,
        goal_tree,
    }))
}

/// Adds a pending goal to the plan of a trace that is not running.
#[utoipa::path(
    post,
    path = "/api/traces/{trace_id}/goals",
    tag = "plans",
    params(("trace_id" = String, Path, description = "The trace")),
    request_body = NewGoal,
    responses(
        (status = 201, description = "The goal was added", body = GoalCreated),
        (status = 400, description = "The trace id or body is invalid (an empty description, an invalid agent name)", body = ErrorResponse),
        (status = 403, description = "`not_writable`: the trace folder is read-only to the server", body = ErrorResponse),
        (status = 404, description = "No such trace, or no such parent goal", body = ErrorResponse),
        (status = 409, description = "`edit_refused` (e.g. under a finished goal), `run_in_progress` or `trace_locked`", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
        (status = 413, description = "The body is over the size limit", body = ErrorResponse),
        (status = 415, description = "A body that is not `application/json`", body = ErrorResponse),
    )
)]
pub(crate) async fn add_goal(
    State(state): State<AppState>,
    TraceIdPath(trace_id): TraceIdPath,
    ApiJson(goal): ApiJson<NewGoal>,
) -> Result<(StatusCode, Json<GoalCreated>), ApiError> {
    check_editable(&state, &trace_id).await?;
    let edit = PlanEdit::Add {
        description: goal.description,
        parent_id: goal.parent_id,
        index: goal.index,
        agent: goal.agent,
        check: goal.check,
        judge: goal.judge,
        budget: goal.budget,
    };
    let goal_tree = apply(&state, &trace_id, &[edit], false).await?;
    // Ids are handed out in order, so the new goal has the newest one.
    let goal_id = goal_tree.next_id().saturating_sub(1).to_string();
    tracing::info!(%trace_id, %goal_id, "goal added over HTTP");
    let created = GoalCreated {
        trace_id,
        goal_id,
        goal_tree,
    };
    Ok((StatusCode::CREATED, Json(created)))
}

/// Rewords a pending goal, names its agent, and/or moves it (with its sub-goals); both in one
/// change when both are given.
#[utoipa::path(
    patch,
    path = "/api/traces/{trace_id}/goals/{goal_id}",
    tag = "plans",
    params(
        ("trace_id" = String, Path, description = "The trace"),
        ("goal_id" = String, Path, description = "The goal's id (not its display number)"),
    ),
    request_body = GoalChange,
    responses(
        (status = 200, description = "The goal was changed", body = PlanChanged),
        (status = 400, description = "The trace id or body is invalid (no field, an empty description, an invalid agent name)", body = ErrorResponse),
        (status = 403, description = "`not_writable`: the trace folder is read-only to the server", body = ErrorResponse),
        (status = 404, description = "No such trace, goal or parent goal", body = ErrorResponse),
        (status = 409, description = "`edit_refused` (the goal started: it can only be abandoned; or a move under itself or a finished goal), `run_in_progress` or `trace_locked`", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
        (status = 413, description = "The body is over the size limit", body = ErrorResponse),
        (status = 415, description = "A body that is not `application/json`", body = ErrorResponse),
    )
)]
pub(crate) async fn change_goal(
    State(state): State<AppState>,
    path: GoalPath,
    ApiJson(change): ApiJson<GoalChange>,
) -> Result<Json<PlanChanged>, ApiError> {
    let GoalPath { trace_id, goal_id } = path;
    check_editable(&state, &trace_id).await?;
    let mut edits = Vec::new();
    let fields = [
        &change.description,
        &change.agent,
        &change.check,
        &change.judge,
    ];
    if fields.iter().any(|f| f.is_some()) || change.budget.is_some() {
        edits.push(PlanEdit::Update {
            goal_id: goal_id.clone(),
            description: change.description,
            agent: change.agent,
            check: change.check,
            judge: change.judge,
            budget: change.budget,
        });
    }
    if change.parent_id.is_some() || change.index.is_some() {
        let parent_id = match change.parent_id {
            Some(parent) => parent,
            // Kept: the goal moves among its siblings.
            None => current_parent(&state, &trace_id, &goal_id).await?,
        };
        edits.push(PlanEdit::Move {
            goal_id: goal_id.clone(),
            parent_id,
            index: change.index,
        });
    }
    if edits.is_empty() {
        return Err(ApiError::bad_request(
            "invalid_request",
            "give at least one of `description`, `agent`, `check`, `judge`, `budget`, \
             `parent_id` and `index`",
        ));
    }
    let goal_tree = apply(&state, &trace_id, &edits, false).await?;
    tracing::info!(%trace_id, %goal_id, "goal changed over HTTP");
    Ok(Json(PlanChanged {
        trace_id,
        goal_tree,
    }))
}

/// Deletes a pending goal and its sub-goals.
#[utoipa::path(
    delete,
    path = "/api/traces/{trace_id}/goals/{goal_id}",
    tag = "plans",
    params(
        ("trace_id" = String, Path, description = "The trace"),
        ("goal_id" = String, Path, description = "The goal's id (not its display number)"),
    ),
    responses(
        (status = 200, description = "The goal was deleted", body = PlanChanged),
        (status = 400, description = "The trace id is invalid", body = ErrorResponse),
        (status = 403, description = "`not_writable`: the trace folder is read-only to the server", body = ErrorResponse),
        (status = 404, description = "No such trace or goal", body = ErrorResponse),
        (status = 409, description = "`edit_refused` (the goal started: abandon it instead), `run_in_progress` or `trace_locked`", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
    )
)]
pub(crate) async fn delete_goal(
    State(state): State<AppState>,
    path: GoalPath,
) -> Result<Json<PlanChanged>, ApiError> {
    let GoalPath { trace_id, goal_id } = path;
    check_editable(&state, &trace_id).await?;
    let edit = PlanEdit::Delete {
        goal_id: goal_id.clone(),
    };
    let goal_tree = apply(&state, &trace_id, &[edit], false).await?;
    tracing::info!(%trace_id, %goal_id, "goal deleted over HTTP");
    Ok(Json(PlanChanged {
        trace_id,
        goal_tree,
    }))
}

/// Abandons a goal that is not finished, with its unfinished sub-goals.
#[utoipa::path(
    post,
    path = "/api/traces/{trace_id}/goals/{goal_id}/abandon",
    tag = "plans",
    params(
        ("trace_id" = String, Path, description = "The trace"),
        ("goal_id" = String, Path, description = "The goal's id (not its display number)"),
    ),
    request_body = AbandonGoal,
    responses(
        (status = 200, description = "The goal was abandoned", body = PlanChanged),
        (status = 400, description = "The trace id or body is invalid (an empty reason)", body = ErrorResponse),
        (status = 403, description = "`not_writable`: the trace folder is read-only to the server", body = ErrorResponse),
        (status = 404, description = "No such trace or goal", body = ErrorResponse),
        (status = 409, description = "`edit_refused` (the goal is finished), `run_in_progress` or `trace_locked`", body = ErrorResponse),
        (status = 410, description = "`trace_unreadable`: the trace's files are damaged or cannot be read", body = ErrorResponse),
        (status = 413, description = "The body is over the size limit", body = ErrorResponse),
        (status = 415, description = "A body that is not `application/json`", body = ErrorResponse),
    )
)]
pub(crate) async fn abandon_goal(
    State(state): State<AppState>,
    path: GoalPath,
    ApiJson(abandon): ApiJson<AbandonGoal>,
) -> Result<Json<PlanChanged>, ApiError> {
    let GoalPath { trace_id, goal_id } = path;
    check_editable(&state, &trace_id).await?;
    let edit = PlanEdit::Abandon {
        goal_id: goal_id.clone(),
        reason: abandon.reason,
    };
    let goal_tree = apply(&state, &trace_id, &[edit], false).await?;
    tracing::info!(%trace_id, %goal_id, "goal abandoned over HTTP");
    Ok(Json(PlanChanged {
        trace_id,
        goal_tree,
    }))
}

/// Refuses a plan text over the limits of a plan: more goals than
/// [`agent_runner::MAX_PLAN_GOALS`] or a line longer than [`agent_runner::MAX_GOAL_TEXT_CHARS`].
fn check_plan_text(text: &str) -> Result<(), ApiError> {
    let lines = text
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.trim_start().starts_with('#'));
    let mut goals = 0;
    for line in lines {
        goals += 1;
        if line.chars().count() > agent_runner::MAX_GOAL_TEXT_CHARS {
            return Err(ApiError::bad_request(
                "invalid_plan",
                format!(
                    "a line of the plan is longer than {} characters",
                    agent_runner::MAX_GOAL_TEXT_CHARS
                ),
            ));
        }
    }
    if goals > agent_runner::MAX_PLAN_GOALS {
        return Err(ApiError::bad_request(
            "invalid_plan",
            format!(
                "a plan holds at most {} goals",
                agent_runner::MAX_PLAN_GOALS
            ),
        ));
    }
    Ok(())
}

/// The trace, if it exists, can be read and has no run going on (here or, by its status,
/// elsewhere).
pub(crate) async fn check_editable(state: &AppState, trace_id: &str) -> Result<Trace, ApiError> {
    let trace = state
        .store()
        .get_trace(trace_id)
        .await
        .reading(trace_id)?
        .ok_or_else(|| not_found(trace_id))?;
    if state.runs().is_running(trace_id)
        || matches!(trace.status, TraceStatus::Running | TraceStatus::Waiting)
    {
        return Err(running(trace_id));
    }
    Ok(trace)
}

fn running(trace_id: &str) -> ApiError {
    ApiError::conflict(
        "run_in_progress",
        format!("trace {trace_id} is running; edit its plan once the run has ended"),
    )
}

/// The parent of goal `goal_id`; 404 when the trace has no such goal.
async fn current_parent(
    state: &AppState,
    trace_id: &str,
    goal_id: &str,
) -> Result<Option<String>, ApiError> {
    let tree = state
        .store()
        .get_goal_tree(trace_id)
        .await
        .reading(trace_id)?
        .ok_or_else(|| not_found(trace_id))?;
    tree.get(goal_id)
        .map(|goal| goal.parent_id.clone())
        .ok_or_else(|| ApiError::NotFound(format!("trace {trace_id} has no goal {goal_id}")))
}

/// Applies `edits` through the runner's plan edits; `numbered` names a refused edit by its
/// position (for a list the client sent).
async fn apply(
    state: &AppState,
    trace_id: &str,
    edits: &[PlanEdit],
    numbered: bool,
) -> Result<GoalTree, ApiError> {
    plan_edits::apply(state.store().as_ref(), trace_id, edits)
        .await
        .map_err(|error| match error {
            PlanEditError::NotFound { trace_id } => not_found(&trace_id),
            PlanEditError::Running { trace_id } => running(&trace_id),
            PlanEditError::Refused { index, source } => {
                goal_error(&source, numbered.then_some(index))
            }
            PlanEditError::TooLarge(message) => ApiError::bad_request("invalid_request", message),
            PlanEditError::Store(error) => error.into(),
            other => ApiError::Internal(other.to_string()),
        })
}

/// A refusal of the goal tree: 404 for a goal it does not have, 400 for a malformed value, 409
/// `edit_refused` for an edit its rules forbid.
fn goal_error(error: &GoalError, index: Option<usize>) -> ApiError {
    let message = match index {
        Some(index) => format!("edit {index}: {error}"),
        None => error.to_string(),
    };
    match error {
        GoalError::UnknownId { .. } => ApiError::NotFound(message),
        GoalError::EmptyText { .. }
        | GoalError::InvalidAgent { .. }
        | GoalError::CheckAndJudge
        | GoalError::EmptyBudget => ApiError::bad_request("invalid_request", message),
        _ => ApiError::conflict("edit_refused", message),
    }
}

/// The error of a plan-mode operation.
pub(crate) fn plan_error(error: PlanError) -> ApiError {
    match error {
        PlanError::NotFound { trace_id } => not_found(&trace_id),
        PlanError::NotAPlan { trace_id, status } => ApiError::conflict(
            "not_a_plan",
            format!(
                "trace {trace_id} is not a stored plan (its status is {})",
                status_name(status)
            ),
        ),
        PlanError::Parse(error) => ApiError::bad_request("invalid_plan", error.to_string()),
        PlanError::Goal(error) => goal_error(&error, None),
        PlanError::Run(error) => error.into(),
        PlanError::Store(error) => error.into(),
        other => ApiError::Internal(other.to_string()),
    }
}
