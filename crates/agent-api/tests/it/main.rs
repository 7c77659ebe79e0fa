//! The integration tests of `agent-api`, in one test binary: the routes through `oneshot`, run
//! control, the live watch over a real listener, the viewer's files, the OpenAPI document and
//! the regressions schemathesis found.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod fork;
mod hostile_api;
mod messages;
mod openapi;
mod routes;
mod runs;
mod viewer;
mod watch;
