//! The routes, one module per resource, and the JSON answers for unknown routes and methods
//! (`app.rs` puts them together with the guards).
//!
//! - [`traces`]: list, read, messages, events.
//! - [`runs`]: start, cancel, resume, messages, approvals; [`run_settings`]: what a request may
//!   set about a run (limits, approval mode, workspace) and how it is checked.
//! - [`elicitations`]: the questions MCP servers ask the person of a served run.
//! - [`fork`]: fork a trace at a goal or after a message; [`rewind`]: put a workspace's files
//!   back as at a goal's start (and fork there), a goal's diff.
//! - [`templates`]: list plan templates, start a run from one.
//! - [`plans`]: plan a task, run a stored plan; [`goals`]: people's edits of a plan;
//!   [`goal_run`]: `/goal` over HTTP, a person's goal and the run that works on it.
//! - [`watch`]: the live WebSocket.
//! - [`viewer`]: `GET /` (the viewer page) and its script and style sheet under `/static/`.

pub(crate) mod elicitations;
pub(crate) mod fork;
pub(crate) mod goal_bodies;
pub(crate) mod goal_run;
pub(crate) mod goals;
pub(crate) mod pictures;
pub(crate) mod plans;
pub(crate) mod queued;
pub(crate) mod rewind;
pub(crate) mod run_settings;
pub(crate) mod runs;
pub(crate) mod templates;
pub(crate) mod traces;
pub(crate) mod viewer;
pub(crate) mod watch;

use serde::Serialize;
use utoipa::ToSchema;

use crate::error::ApiError;

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

/// The answer to a path no route has.
pub(crate) async fn unknown_route() -> ApiError {
    ApiError::NotFound("no such route".into())
}

/// The answer to a method a route does not take.
pub(crate) async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}
