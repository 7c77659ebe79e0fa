//! Plan mode (JManus's plan, then execute) on top of the runner: a plan is a trace whose goal
//! tree the model wrote and people may change before it runs.
//!
//! This crate owns plan mode ([`plan`]: plan a task, store it as a `planned` trace, edit it as
//! text, ready it to run), people's edits of a stored plan ([`plan_edits`]), `/goal` for every
//! front end ([`goal_command`]: a person's goal, with its check, given to a session), plan templates
//! saved in the workspace ([`plan_templates`]), the front matter they and profile files are
//! written with ([`front_matter`]), and going back to a point of a plan ([`rewind`]: the
//! workspace's files put back from the checkpoints taken as a goal or a turn started, and the
//! trace forked there, for every front end). The loop stays the runner's: this crate drives an
//! [`agent_runner::AgentRunner`] it is given and writes through a
//! [`agent_execution::TraceStore`] it is given.
//!
//! It depends on `agent-goal`, `agent-execution`, `agent-runner` and `agent-checkpoint`, and
//! must not depend on a
//! concrete store, a model provider, the HTTP server or the command line. Only
//! [`plan_templates`] touches files: the templates folder of the workspace it is given.
//!
//! ```
//! use agent_plan::plan_templates::PlanTemplate;
//!
//! let template = PlanTemplate::parse("review", "Read the code\nTest it\n")?;
//! let plan = template.render(&Default::default())?;
//! assert_eq!(plan.text, "Read the code\nTest it\n");
//! # Ok::<(), agent_plan::plan_templates::TemplateError>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod front_matter;
pub mod goal_command;
pub mod plan;
pub mod plan_edits;
pub mod plan_templates;
pub mod rewind;

pub use plan::{PlanError, PlanOutcome};
pub use plan_edits::PlanEditError;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
