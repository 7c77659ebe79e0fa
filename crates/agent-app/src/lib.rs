//! The application behind every front end of the agent: what an embedder needs to build an
//! agent the way the `agent` command does, and what every door of that command (`run`, the
//! chat's line mode and full-screen UI, `plan`, `demo`, ACP sessions, `serve`, `worker`) builds
//! it with, so that a setting, a rule or a protection lives once.
//!
//! - [`config`]: `agent.toml` and the environment as layers, each with its source, read once
//!   per process ([`Config`]), and the typed [`Overrides`] a front end puts on top.
//! - [`App`]: a configuration with one front end's overrides, and what it resolves — the
//!   workspace, the store ([`store`]), the sandbox ([`sandbox`], a value: the trace folder of the
//!   store actually opened is protected), the model ([`provider`]), the MCP servers ([`mcp`]).
//! - [`factory`]: the one [`AppFactory`] every door asks for its runners, with the profiles
//!   ([`profiles`]), project instructions ([`instructions`]), checkpoints ([`checkpoints`]),
//!   approval rules and tools of the configuration; a door says only what is its own (who
//!   answers approvals, an editor's tools). It is also the [`RunnerFactory`] of `serve` and
//!   `worker`, so their runs get the same settings as `agent run`. The web tools (`web_fetch`,
//!   `web_search`, with the settings of `[web]`) are given to every runner there, `web_search`
//!   answered by the search service of `search_url` or by the main model's provider where it
//!   searches the web itself (`[web] search`).
//! - [`skills`]: Agent Skills (`SKILL.md` folders in `.agent/skills/`, `.claude/skills/`,
//!   `.agents/skills/` and the user's folder), listed in every prompt and loaded by the model
//!   with the `skill` tool.
//! - [`commands`]: custom commands (`.agent/commands/*.md`, `.claude/commands/*.md`, the
//!   user's), expanded from `/name args` by one function for every door
//!   ([`AppFactory::expand`]).
//! - [`images`]: pictures attached to a task apart from its text (`--image FILE`,
//!   [`AppFactory::prompt`]); `@shot.png` in any door's text is the runner's.
//! - [`hooks`]: lifecycle hooks with Claude Code's conventions (`[[hooks.PreToolUse]]` in
//!   agent.toml), run as the runner's `agent_tools::hooks::Hooks` by every runner the factory
//!   builds, each run recorded in the trace.
//! - [`plugins`]: plugin folders (Claude Code's `.claude-plugin/plugin.json` layout) installed
//!   in the user's folder, whose skills and commands join the others.
//! - [`trust`]: the project files the user accepted (a project's hooks run only then).
//! - [`recorded`]: what a trace ran with, filled into a later run of it.
//!
//! This crate must not depend on a command-line parser, a terminal library or a front end
//! (clap, ratatui, crossterm, `agent-tui`, `agent-acp`, `agent-api`), and prints nothing: what a
//! person should be told comes back as notices, and errors are [`Error`]s, whose
//! [`Error::Usage`] a command line turns into its usage exit code. The model providers and the
//! PostgreSQL store are cargo features (`openai`, `openai-responses`, `anthropic`, `postgres`),
//! and so are the web tools (`web`).
//!
//! ```no_run
//! # async fn example() -> Result<(), agent_app::Error> {
//! use std::sync::Arc;
//!
//! use agent_app::factory::RunRequest;
//! use agent_app::{App, AppFactory, Overrides};
//! use agent_runner::Approval;
//!
//! let mut overrides = Overrides::default();
//! overrides.workspace = Some("/home/me/project".into());
//! let app = App::load(overrides)?;
//! let store = app.open_store().await?;
//! let sandbox = app.sandbox(&store.location)?;
//! let factory = AppFactory::new(app, store, sandbox, Arc::default())?;
//! let built = factory.runner(RunRequest::new().approval(Approval::Allow))?;
//! let trace_id = built.runner.create("Add a test for the parser").await.ok();
//! # let _ = trace_id;
//! # Ok(())
//! # }
//! ```
//!
//! [`RunnerFactory`]: agent_worker::RunnerFactory
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod app;
pub mod checkpoints;
pub mod commands;
pub mod config;
mod error;
pub mod factory;
pub mod hooks;
pub mod images;
pub mod instructions;
pub mod mcp;
pub mod plugins;
pub mod profiles;
pub mod provider;
pub mod recorded;
pub mod sandbox;
pub mod skills;
pub mod store;
pub mod trust;

pub use app::{App, check_workspace};
pub use config::{Config, Overrides};
pub use error::{Error, Result};
pub use factory::{AppFactory, RunRequest};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
