//! The agent runner: the think–act–observe loop over a trace store, a model and a tool registry.
//!
//! This crate owns the loop ([`AgentRunner`]) and when it builds and compacts its context (the
//! view and compaction's rules are `agent-context`'s, re-exported as [`context`],
//! [`context_incremental`] and [`compaction`]; the full compaction's model call is here), the goal tools,
//! `explore` / `delegate` sub-traces, agent profiles as data ([`agents`], [`profiles`]), the
//! loop guard's warnings and stops (its detector is `agent_execution::loop_guard`), approvals
//! (the policy types, [`approval`] and [`approval_rules`], are `agent-tools`'), resume, and the
//! checkpoints of the workspace taken at goal boundaries ([`CheckpointOptions`], through an
//! `agent-checkpoint` [`Checkpointer`](agent_checkpoint::Checkpointer) the embedder gives). It
//! depends on `agent-goal`, `agent-llm` (types and the client trait, no provider),
//! `agent-execution`, `agent-context`, `agent-tools` and `agent-checkpoint`,
//! and must not depend on a concrete store, a model provider, the HTTP server or the command
//! line: those are given to it. It reads no configuration file: profiles come as data.
//!
//! [`AgentRunner::run`] creates a trace for a task and loops — build the context, call the
//! model with the tool specs, record the assistant message (tied to the current goal), run its
//! tool calls, record their results — until the model answers without tool calls, a limit is
//! hit, the run is cancelled or the model fails; [`RunOutcome::stop`] says which. Every step is
//! recorded in the store, so [`AgentRunner::resume`] continues a stopped trace from where it was.
//!
//! ```
//! use std::sync::Arc;
//! use agent_execution::{InMemoryTraceStore, TraceStatus};
//! use agent_llm::{ScriptedClient, ScriptedTurn};
//! use agent_runner::{AgentRunner, Approval, RunnerOptions, StopReason};
//! use agent_tools::ToolRegistry;
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let workspace = std::env::temp_dir();
//! let model = ScriptedClient::new(vec![
//!     ScriptedTurn::tool_call("goal", json!({"add": "Say hello", "focus": "1"})),
//!     ScriptedTurn::tool_call("goal", json!({"done": "Said hello."})),
//!     ScriptedTurn::text("Hello!"),
//! ]);
//! // Risky tools are refused unless the embedder says otherwise.
//! let options = RunnerOptions::new("scripted", &workspace).with_approval(Approval::Allow);
//! let store = Arc::new(InMemoryTraceStore::new());
//! let runner = AgentRunner::new(store, Arc::new(model), ToolRegistry::with_builtins(), options);
//! let outcome = runner.run("Greet the user").await.unwrap();
//! assert_eq!(outcome.status, TraceStatus::Completed);
//! assert_eq!(outcome.stop, StopReason::Completed);
//! assert_eq!(outcome.response.as_deref(), Some("Hello!"));
//! # });
//! ```
//!
//! # Safe defaults
//!
//! - Without [`RunnerOptions::approval`] set, risky tools (`bash`, `write_file`, `edit_file`,
//!   MCP tools not marked read-only) are refused with a result the model sees; set
//!   [`Approval::Allow`] or [`Approval::Ask`] with an [`ApprovalHandler`] to let them run.
//! - `explore` and `delegate` are offered only when [`SubAgentOptions::enabled`] is set
//!   ([`RunnerOptions::with_sub_agents`]).
//!
//! # Structure
//!
//! Services and settings are apart: the `Engine` holds the store, the model clients, the tools
//! as given and the options with every profile; an [`AgentSpec`] is one agent's resolved
//! settings, as plain data. The loop and the sub-agents take both, and a sub-trace runs the
//! same loop through a driver the runner installs, so no module calls back into its caller.
//!
//! # Sub-agents
//!
//! `explore(branches, background?)` runs one sub-trace per branch side by side and merges what
//! they found into one report; `delegate(task)` runs one sub-trace to completion. Sub-traces are
//! traces of their own (`{parent}@{agent_type}-{YYYYMMDDHHMMSS}-{seq:03}`, sibling folders on
//! disk) run by the same loop with the tools, limits and depth limit of their agent type
//! ([`SubAgentOptions`], [`AgentTypeConfig`], [`ToolFilter`]): by default explore branches get
//! read-only tools and cannot explore again, delegates get every tool.
//!
//! - **Statistics.** A trace's totals (`total_messages`, `total_tokens`, `total_cost`) count its
//!   own messages only, so adding up traces never counts anything twice. The work of
//!   sub-traces is visible on the parent in three places: each `sub_trace_completed` event
//!   carries the sub-trace's totals; the tool message of the `explore` / `delegate` call has
//!   metadata `sub_traces` (`[{trace_id, status, stats}]`) and `sub_trace_stats` (their sum),
//!   and its text states them; [`stats_with_sub_traces`] adds a trace and all its descendants up
//!   (and [`RunOutcome::stats_with_sub_traces`] carries that sum for a run).
//! - **Budgets.** `max_cost` limits what a trace and all its sub-traces spend together: a model
//!   call of an explore branch or a delegate counts toward its own agent type's `max_cost` and
//!   toward the budget of every trace above it, so branches stop (`failed`, `max_cost: …`) once
//!   the main trace's budget is spent, and the main run stops before its next model call
//!   ([`StopReason::MaxCost`]). The running totals are kept in memory for the traces being run,
//!   from what the store held when each run started.
//! - **Stored limits.** A new main trace stores its `max_iterations` and `max_cost`
//!   ([`agent_execution::TraceLimits`]); a later run of it applies them unless the caller
//!   overrode them ([`RunnerOptions::overrides`], [`RunLimits::for_trace`]). `max_cost` is a
//!   budget of the trace across all its runs; `max_iterations` counts the model calls of each
//!   run, those of its sub-traces included: a sub-trace's own limit may be lower, and its calls
//!   also count toward the limit of every run above it ([`StopReason::MaxIterations`]).
//! - **Cut answers.** An answer cut off at the model's length limit is continued
//!   ([`continuation`]), and a run whose answer stays cut ends [`StopReason::Truncated`].
//! - **Cancel.** Sub-traces run under child tokens of the run's token: cancelling the run
//!   cancels them, and each records `cancelled`.
//! - **Resume.** A crash or a cancel in the middle of an `explore` or `delegate` call leaves the
//!   call without a result. Resuming the trace finishes the call before the next model call:
//!   branches that completed or failed keep their outcome, unfinished ones resume where they
//!   stopped, missing ones are created, and the merge is recorded as if nothing had happened.
//!   Other interrupted calls get an "interrupted" result.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod act;
mod agent;
pub mod agents;
mod approve;
mod branch_copies;
mod checkpoint_options;
mod checkpoints;
mod closing;
mod compact_now;
pub use agent_context::{compaction, context, context_incremental};
pub use agent_execution::continuation;
mod delegate;
mod engine;
mod error;
mod explore;
mod goal_budgets;
mod goal_checks;
mod goal_tools;
mod handoff;
mod inbox;
mod interrupted;
mod judge;
mod late;
mod model;
mod new_trace;
mod notice;
mod options;
pub mod profiles;
mod record;
mod report;
mod resume;
mod runner;
mod spec;
mod step;
mod stuck;
mod subagent_tools;
mod subagents;
mod summarise;
mod turns;
mod window;

pub use agent_execution::meta::{tokens_estimated, usage_is_estimated};
pub use agent_execution::outcome::{RunOutcome, StopReason};
pub use agent_execution::run_limits::{LimitOverrides, RunLimits};
/// What the records say, kept where callers have long named it: the check of a limit's value,
/// the loop guard's thresholds, a trace's lineage and its totals with its sub-traces.
pub use agent_execution::{
    LimitError, LoopGuard, RecordedAgents, check_max_cost, check_max_iterations, parse_max_cost,
    parse_max_iterations, recorded_agents, stats_with_sub_traces,
};
pub use agent_goal::DEFAULT_SYSTEM_PROMPT;
pub use agent_goal::REPORT_PROMPT;
/// What the loop says of a plan it holds a run to: the goals left open, a goal's judge.
pub use agent_goal::{JUDGE_PROMPT, PendingGoal};
/// What a model client did to get an answer despite its server (a retry, a rate limit), and by
/// which trace's call ([`AgentRunner::notices`]).
pub use agent_llm::notice::{Notice, SourcedNotice};
/// Who decides on risky calls, which lives with the tools it is about.
pub use agent_tools::approval::{
    self, Approval, ApprovalDecision, ApprovalHandler, ApprovalRequest, RerunApprover, RerunRequest,
};
/// The interaction model every front end shares (a session's approvals, the typed form of a
/// server's question, the slash commands), which lives with the approvals it is about.
pub use agent_tools::interaction;
/// The rules checked before a risky call asks ([`RunnerOptions::approval_rules`]), which live with
/// the tools they are about.
pub use agent_tools::rules::{self as approval_rules, ApprovalRules, RuleError, RuleVerdict};
pub use agents::{AgentTypeConfig, ApprovalPolicy, ProfileOrigin, RiskLimit, ToolFilter};
/// The attribute [`ApprovalHandler`] implementations need.
pub use async_trait::async_trait;
pub use checkpoint_options::{CheckpointOptions, RollbackConfirm};
pub use compaction::{COMPACTION_PROMPT, CompactionStrategy, ContextBudget};
pub use error::RunError;
pub use goal_tools::{
    GoalTool, MAX_GOAL_TEXT_CHARS, MAX_GOALS_PER_CALL, MAX_PLAN_GOALS, ReadProgressTool,
};
pub use model::USAGE_KEY;
pub use options::{Instruction, RunnerOptions, SubAgentOptions};
pub use profiles::UnknownProfile;
pub use runner::{AgentRunner, RunEvent, RunHandle, RunSender};
pub use spec::{Access, AgentSpec};
/// The cancellation token runs take ([`AgentRunner::resume_in_background`]).
pub use tokio_util::sync::CancellationToken;
pub use turns::TURN_KEY;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
