//! The router: one module per resource, the guards around them, and the JSON answers for
//! unknown routes and methods.
//!
//! - [`traces`]: list, read, messages, events.
//! - [`runs`]: start, cancel, resume, messages, approvals; [`run_settings`]: what a request may
//!   set about a run (limits, approval mode, workspace) and how it is checked.
//! - [`fork`]: fork a trace at a goal or after a message.
//! - [`templates`]: list plan templates, start a run from one.
//! - [`plans`]: plan a task, run a stored plan; [`goals`]: people's edits of a plan.
//! - [`watch`]: the live WebSocket.
//! - [`viewer`]: `GET /` (the viewer page) and its script and style sheet under `/static/`.
//! - here: `GET /api/openapi.json`.

pub(crate) mod fork;
pub(crate) mod goals;
pub(crate) mod plans;
pub(crate) mod queued;
pub(crate) mod run_settings;
pub(crate) mod runs;
pub(crate) mod templates;
pub(crate) mod traces;
pub(crate) mod viewer;
pub(crate) mod watch;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::openapi::openapi_json;
use crate::security;
use crate::state::AppState;

/// The shape of every error response.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorResponse {
    error: ErrorObject,
}

/// What went wrong.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorObject {
    /// Machine-readable, e.g. `invalid_trace_id`, `not_found`, `invalid_json`.
    code: String,
    /// For people.
    message: String,
}

/// The whole service: every route, the body limit, the guards (token, origin, host) and CORS
/// when configured.
pub fn router(state: AppState) -> Router {
    let traces = Router::new()
        .route(
            "/api/traces",
            get(traces::list_traces).post(runs::start_run),
        )
        .merge(traces::router())
        .merge(runs::router())
        .merge(fork::router())
        .merge(templates::router())
        .merge(plans::router())
        .merge(goals::router())
        .merge(watch::router());
    let app = Router::new()
        .merge(viewer::router())
        .route("/api/openapi.json", get(openapi))
        .merge(traces)
        .fallback(unknown_route)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(state.config().body_limit))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            security::guard,
        ));
    let app = match security::cors_layer(state.config()) {
        Some(cors) => app.layer(cors),
        None => app,
    };
    app.with_state(state)
}

/// The OpenAPI document of this API.
#[utoipa::path(
    get,
    path = "/api/openapi.json",
    tag = "meta",
    responses((status = 200, description = "This document", content_type = "application/json"))
)]
pub(crate) async fn openapi() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], openapi_json())
}

async fn unknown_route() -> ApiError {
    ApiError::NotFound("no such route".into())
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}
