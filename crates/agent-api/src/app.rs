//! The whole service as one axum [`Router`]: the routes of each resource, the OpenAPI document,
//! the body limit, the guards (token, origin, host) and CORS when configured.

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::get;

use crate::openapi;
use crate::routes::{
    elicitations, fork, goal_run, goals, method_not_allowed, pictures, plans, rewind, runs,
    templates, traces, unknown_route, viewer, watch,
};
use crate::security;
use crate::state::AppState;

/// The whole service: every route, the body limit, the guards (token, origin, host) and CORS
/// when configured.
pub fn router(state: AppState) -> Router {
    let traces = Router::new()
        .route(
            "/api/traces",
            get(traces::list_traces).post(runs::start_run),
        )
        .merge(traces::router())
        .merge(pictures::router())
        .merge(runs::router())
        .merge(elicitations::router())
        .merge(fork::router())
        .merge(rewind::router())
        .merge(templates::router())
        .merge(plans::router())
        .merge(goals::router())
        .merge(goal_run::router())
        .merge(watch::router());
    let app = Router::new()
        .merge(viewer::router())
        .route("/api/openapi.json", get(openapi::openapi))
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
