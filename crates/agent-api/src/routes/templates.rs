//! Plan templates (`agent_plan::plan_templates`): list the templates of the server's
//! workspace and start a run from one with values for its parameters. Templates are read from
//! `.agent/plans/` of the server's default workspace (`agent serve --workspace`), whatever
//! workspace a run then works in; starting a run needs a runner factory, as every run does.

use std::collections::BTreeMap;

use agent_plan::plan;
use agent_plan::plan_templates::{self, PlanTemplate, TemplateError};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::routes::ErrorResponse;
use crate::routes::run_settings::{RunSettings, settle};
use crate::routes::runs::RunAccepted;
use crate::state::AppState;

/// The routes of this module.
pub(crate) fn router() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/api/plan_templates", get(list_templates))
        .route("/api/plan_templates/{name}/runs", post(start_template_run))
}

/// The templates of the server's workspace.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TemplateList {
    /// By name.
    templates: Vec<TemplateInfo>,
}

/// A plan template.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TemplateInfo {
    /// Its name (the file `.agent/plans/<name>.md`).
    name: String,
    /// What it is for ("" when not given).
    description: String,
    /// The task of the runs it starts, with `{{name}}` placeholders; null: a run names its
    /// task.
    mission: Option<String>,
    /// Its parameters, by name.
    params: Vec<TemplateParamInfo>,
}

/// A parameter of a template.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TemplateParamInfo {
    /// Its name, as in `{{name}}`.
    name: String,
    /// Its value when a run gives none; null: a run must give one.
    default: Option<String>,
}

impl From<PlanTemplate> for TemplateInfo {
    fn from(template: PlanTemplate) -> Self {
        Self {
            name: template.name,
            description: template.description,
            mission: template.mission,
            params: template
                .params
                .into_iter()
                .map(|p| TemplateParamInfo {
                    name: p.name,
                    default: p.default,
                })
                .collect(),
        }
    }
}

/// A run of a template: values for its parameters, optionally a task, and the settings of a
/// new run (`model`, `max_iterations`, `max_cost`, `approval`, `workspace`, as for
/// `POST /api/traces`). Unknown fields are refused.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct TemplateRun {
    /// Values for the template's parameters (`{{name}}` in its mission and goals); a
    /// parameter with a default may be left out.
    #[serde(default)]
    vars: BTreeMap<String, String>,
    /// The run's task; absent: the template's mission, placeholders filled.
    task: Option<String>,
    /// The settings of the run, as for `POST /api/traces`.
    #[serde(flatten)]
    settings: RunSettings,
}

impl TemplateRun {
    /// Reads a request body: `vars` and `task` here, every other field a run setting (read
    /// apart, so an unknown field is refused by name).
    fn from_body(mut body: Map<String, Value>) -> Result<Self, ApiError> {
        let invalid = |field: &str, error: serde_json::Error| {
            ApiError::bad_request("invalid_request", format!("{field}{error}"))
        };
        let vars = body.remove("vars").unwrap_or(Value::Null);
        let vars = serde_json::from_value::<Option<BTreeMap<String, String>>>(vars)
            .map_err(|error| invalid("`vars` is an object of strings: ", error))?
            .unwrap_or_default();
        let task = body.remove("task").unwrap_or(Value::Null);
        let task = serde_json::from_value(task).map_err(|error| invalid("`task`: ", error))?;
        let settings =
            serde_json::from_value(Value::Object(body)).map_err(|error| invalid("", error))?;
        Ok(Self {
            vars,
            task,
            settings,
        })
    }
}

/// Lists the plan templates of the server's workspace (`.agent/plans/*.md`).
#[utoipa::path(
    get,
    path = "/api/plan_templates",
    tag = "runs",
    responses(
        (status = 200, description = "The templates, by name", body = TemplateList),
        (status = 403, description = "`runs_unavailable`: this server is read-only (started without a model), so it has no workspace", body = ErrorResponse),
        (status = 409, description = "`invalid_template`: a template file cannot be read; the message names it", body = ErrorResponse),
    )
)]
pub(crate) async fn list_templates(
    State(state): State<AppState>,
) -> Result<Json<TemplateList>, ApiError> {
    let workspace = state.require_factory()?.options().workspace;
    let templates = plan_templates::list(&workspace).map_err(template_error)?;
    Ok(Json(TemplateList {
        templates: templates.into_iter().map(TemplateInfo::from).collect(),
    }))
}

/// Starts a run from the plan template `name`: a new trace whose task is the request's, else
/// the template's mission, and whose goals are the template's, placeholders filled from
/// `vars` and the defaults.
#[utoipa::path(
    post,
    path = "/api/plan_templates/{name}/runs",
    tag = "runs",
    params(("name" = String, Path, description = "The template's name")),
    request_body = TemplateRun,
    responses(
        (status = 202, description = "The run started", body = RunAccepted,
            headers(("Location" = String, description = "The new trace's URL"))),
        (status = 400, description = "`invalid_template_name`: the name is not one (a path separator, `..`); `invalid_vars`: a value for no parameter, a parameter with neither a value nor a default, or a value over several lines, named; `invalid_request`: no task and no mission, or a malformed setting", body = ErrorResponse),
        (status = 403, description = "`runs_unavailable`, `workspace_not_allowed`, `approval_not_allowed` or `not_writable`, as for a new run", body = ErrorResponse),
        (status = 404, description = "No such template", body = ErrorResponse),
        (status = 409, description = "`invalid_template`: the template file cannot be read", body = ErrorResponse),
        (status = 413, description = "The body is over the size limit", body = ErrorResponse),
        (status = 415, description = "The body is not `application/json`", body = ErrorResponse),
        (status = 503, description = "`runs_unavailable`: this server is shutting down", body = ErrorResponse),
    )
)]
pub(crate) async fn start_template_run(
    State(state): State<AppState>,
    Path(name): Path<String>,
    ApiJson(body): ApiJson<Map<String, Value>>,
) -> Result<Response, ApiError> {
    let request = TemplateRun::from_body(body)?;
    let factory = state.require_factory()?;
    state.runs().check_open()?;
    let defaults = factory.options();
    let template = plan_templates::load(&defaults.workspace, &name).map_err(template_error)?;
    let rendered = template.render(&request.vars).map_err(template_error)?;
    let Some(task) = request
        .task
        .or(rendered.mission)
        .filter(|task| !task.trim().is_empty())
    else {
        return Err(ApiError::bad_request(
            "invalid_request",
            format!("the plan template {name:?} has no mission: give a `task`"),
        ));
    };
    let (options, choices) = settle(&state, defaults, request.settings, None)?;
    let runner = factory.build_with(state.store().clone(), options, &choices)?;
    let trace_id = runner.create(&task).await?;
    plan::load_into(runner.store().as_ref(), &trace_id, &rendered.text)
        .await
        .map_err(|error| ApiError::Internal(error.to_string()))?;
    let reservation = state.runs().reserve(&trace_id)?;
    let handle = runner
        .resume_in_background(&trace_id, reservation.cancel_token())
        .await?;
    reservation.attach(handle);
    tracing::info!(%trace_id, template = %name, "run started from a plan template over HTTP");
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

/// The answer for a template error: what the client asked for is wrong (400, 404), or the
/// template file is (409), or the server failed (500).
fn template_error(error: TemplateError) -> ApiError {
    match &error {
        TemplateError::InvalidName { .. } => {
            ApiError::bad_request("invalid_template_name", error.to_string())
        }
        TemplateError::NotFound { name, .. } => {
            ApiError::NotFound(format!("there is no plan template {name:?}"))
        }
        TemplateError::Invalid { .. } | TemplateError::Plan { .. } => {
            ApiError::conflict("invalid_template", error.to_string())
        }
        _ if error.is_request_error() => ApiError::bad_request("invalid_vars", error.to_string()),
        _ => ApiError::Internal(error.to_string()),
    }
}
