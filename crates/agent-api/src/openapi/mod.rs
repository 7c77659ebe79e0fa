//! The OpenAPI 3 document, generated from the route handlers and the schema mirrors. It is
//! served at `/api/openapi.json` and committed as `crates/agent-api/openapi.json`; a test fails
//! when the committed file is stale (`cargo xtask openapi` rewrites it). The schema mirrors of
//! the serde-only models are `schemas.rs`'s, which the routes name too.

mod ids;

use utoipa::OpenApi;

use axum::http::header;
use axum::response::IntoResponse;

use crate::approvals::PendingApproval;
use crate::routes::{
    ErrorObject, ErrorResponse, elicitations, fork, goal_run, goals, pictures, plans, rewind, runs,
    templates, traces, watch,
};
use crate::schemas;
use ids::TraceIdRules;

/// The API's OpenAPI document.
#[derive(OpenApi)]
#[openapi(
    modifiers(&TraceIdRules),
    info(
        title = "agent-api",
        description = "Traces of agent runs: list, inspect, watch live over WebSocket, start, \
            cancel, resume, fork, rewind files to a goal, approve, answer an MCP server's questions, plan a task, edit the plan and run it. Errors are `{\"error\": {\"code\", \"message\"}}`. When the \
            server has a token, send `Authorization: Bearer <token>`.",
        license(name = "MIT OR Apache-2.0"),
    ),
    paths(
        traces::list_traces,
        traces::get_trace,
        traces::list_messages,
        traces::list_events,
        pictures::get_picture,
        watch::watch_trace,
        runs::start_run,
        runs::cancel_run,
        runs::resume_run,
        runs::send_message,
        goal_run::set_goal,
        fork::fork_trace,
        rewind::rewind_trace,
        rewind::goal_diff,
        runs::decide_approval,
        elicitations::list_elicitations,
        elicitations::answer_elicitation,
        templates::list_templates,
        templates::start_template_run,
        plans::start_plan,
        plans::run_plan,
        goals::replace_plan,
        goals::add_goal,
        goals::change_goal,
        goals::delete_goal,
        goals::abandon_goal,
        openapi,
    ),
    components(schemas(
        ErrorResponse,
        ErrorObject,
        PendingApproval,
        crate::elicitations::PendingElicitation,
        schemas::EventDoc,
        schemas::ConnectedEventDoc,
        schemas::MessageMetadataDoc,
    )),
    tags(
        (name = "traces", description = "Reading and watching traces"),
        (name = "runs", description = "Starting and steering runs"),
        (name = "plans", description = "Planning a task, changing the plan, running it"),
        (name = "meta", description = "This document"),
    )
)]
pub struct ApiDoc;

/// The document as pretty JSON with a final newline: the committed file's exact text.
pub fn openapi_json() -> String {
    let mut json = ApiDoc::openapi()
        .to_pretty_json()
        .unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}"));
    json.push('\n');
    json
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
