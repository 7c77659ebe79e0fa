//! The HTTP and WebSocket service over a trace store: read traces, watch them live, start and
//! steer runs, and the OpenAPI document of it all.
//!
//! It takes an `Arc<dyn TraceStore>` and never names a concrete store; runs are built by a
//! [`RunnerFactory`] the composition root provides, so it never names a model provider either.
//!
//! - [`ApiConfig`]: address, token, body limit, connection cap and head timeout, CORS, watch
//!   keepalive, the [`ApprovalMode`], [`SandboxMode`] and workspace roots of runs started over
//!   HTTP ([`config`], [`WorkspaceRoots`]).
//! - [`AppState`]: store, factory, configuration, [`RunRegistry`], [`HttpApprovals`], and the
//!   checkpoints of a trace folder ([`AppStateBuilder::checkpoints`]) for rewinds and diffs.
//! - [`router`]: every route of SPEC §7 plus run control (a trace id in a path may be a unique
//!   prefix of one); [`serve`] / [`Server`] listen and shut down gracefully.
//! - With a [`RunQueue`] (nodes sharing a database), runs are queued rather than run here, and a
//!   worker (`agent-worker`, which holds no HTTP) claims and executes them with its own factory.
//! - [`ApiError`]: the one place errors become `{"error": {"code", "message"}}` responses.
//! - [`openapi_json`]: the OpenAPI document served at `/api/openapi.json`.
//!
//! ```
//! use std::sync::Arc;
//! use agent_api::{ApiConfig, AppState, router};
//! use agent_execution::InMemoryTraceStore;
//!
//! let state = AppState::builder(Arc::new(InMemoryTraceStore::new()))
//!     .config(ApiConfig::default())
//!     .build()
//!     .unwrap();
//! let app: axum::Router = router(state);
//!
//! // Any address but loopback needs a token.
//! let open = ApiConfig { host: "0.0.0.0".parse().unwrap(), ..ApiConfig::default() };
//! assert!(AppState::builder(Arc::new(InMemoryTraceStore::new())).config(open).build().is_err());
//! # drop(app);
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod app;
pub mod approvals;
mod board;
pub mod config;
mod connections;
pub mod elicitations;
mod error;
mod extract;
mod goal_schemas;
mod metadata_doc;
mod openapi;
mod routes;
pub mod runs;
mod schemas;
mod security;
mod server;
mod state;

pub use agent_execution::queue::RunQueue;
pub use agent_worker::{
    ApprovalMode, BuildChoices, FactoryError, QueuedSettings, RunnerFactory, SandboxMode,
    WorkspaceError, WorkspaceRoots,
};
pub use app::router;
pub use approvals::{HttpApprovals, PendingApproval};
pub use config::{ApiConfig, WatchConfig};
pub use elicitations::{
    ElicitationMode, ElicitationQuestion, ElicitationReply, HttpElicitations, PendingElicitation,
};
pub use error::ApiError;
pub use openapi::{ApiDoc, openapi_json};
pub use routes::watch::Connected;
pub use runs::{RunRegistry, TrackedRun};
pub use server::{Server, serve};
pub use state::{AppState, AppStateBuilder};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
