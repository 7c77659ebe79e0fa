//! The integration tests of `agent-api`, in one test binary: the routes through `oneshot`, run
//! control (approval modes, workspace roots, limits), connections over a real listener (cap,
//! head timeout), damaged traces, the live watch over a real
//! listener (with a message posted to a running trace), the viewer's files, the OpenAPI document
//! and the regressions schemathesis found.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approval_modes;
mod build_choices;
mod common;
mod connections;
mod damaged_traces;
mod estimates;
mod fork;
mod goal_run;
mod hostile_api;
mod images;
mod live_messages;
mod messages;
mod openapi;
mod plan_templates;
mod plans;
mod prefixes;
mod rewind;
mod routes;
mod runs;
mod viewer;
mod watch;
mod workspace_roots;
