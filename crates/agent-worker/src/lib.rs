//! Runs that execute away from where they were asked for: the queue [`Worker`], the
//! [`RunnerFactory`] it (and the HTTP API) builds runners with, what a queued run carries
//! ([`QueuedSettings`], [`ApprovalMode`], [`BuildChoices`]: streaming and the [`SandboxMode`])
//! and the [`WorkspaceRoots`] a run may work in. A queued run's task is expanded by the factory
//! where it runs ([`task`]: a custom command becomes its prompt, as at every door).
//!
//! This crate owns the worker's loop (claim, lease, heartbeat, cancel, messages and approvals
//! through the [`RunQueue`](agent_execution::queue::RunQueue)) and the settings shared by the
//! nodes that queue runs and the workers that execute them. It depends on `agent-execution`
//! (the store and the queue trait), `agent-runner` and `agent-tools` (the sandbox mode), and
//! must not depend on the HTTP server, a concrete store or queue, or a model provider: `agent
//! worker` serves no HTTP, and the composition root gives it a queue, a store and a factory.
//!
//! ```
//! use agent_worker::{ApprovalMode, QueuedSettings};
//!
//! let settings = QueuedSettings { model: Some("gpt-4.1".into()), approval: ApprovalMode::Never, ..Default::default() };
//! let stored = settings.to_json();
//! assert_eq!(stored["approval"], "never");
//! assert_eq!(QueuedSettings::from_json(&stored), Ok(settings));
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod approval;
pub mod choices;
mod factory;
pub mod queue;
pub mod task;
mod worker;
pub mod workspace;

pub use agent_tools::SandboxMode;
pub use approval::{ApprovalMode, NEVER_REASON};
pub use choices::BuildChoices;
pub use factory::{FactoryError, RunnerFactory};
pub use queue::QueuedSettings;
pub use worker::{Worker, WorkerConfig};
pub use workspace::{WorkspaceError, WorkspaceRoots};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
