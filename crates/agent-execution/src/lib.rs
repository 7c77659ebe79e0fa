//! The record of an execution: traces, messages and events, the `TraceStore` trait, trace ids,
//! the live feed and the run queue. The name is seed 002's (its "execution module"); this crate
//! runs nothing: the loop is `agent-runner`'s.
//!
//! Depends on `agent-goal` and `agent-llm`'s types, never on the runner, a concrete store or the
//! HTTP server.
//!
//! - [`Trace`], [`Message`], [`Event`]: the record of a run ([`trace`], [`message`], [`event`]).
//! - [`ids`]: trace and message ids and [`validate_trace_id`], used on every id from outside;
//!   [`lookup`]: an id or a unique prefix of one, resolved.
//! - [`TraceStore`]: where records live. Every write goes through [`plan_commit`], so statistics
//!   roll-up and events are the same in every store; [`InMemoryTraceStore`] is the in-memory one.
//! - [`watch`]: the live event feed of a trace (stored events, then live ones, no gap).
//! - [`meta`]: the keys of message metadata, named once for the runner and every reader.
//! - [`outcome`]: how a run ended ([`outcome::RunOutcome`], [`outcome::StopReason`]), what the
//!   runner returns and every front end reports.
//! - [`limits`]: the one check of a run limit's value; [`lineage`]: the agent types and main
//!   trace above a sub-trace, read by following its parent links; [`loop_guard`]: what a
//!   trace's newest turns say about a stuck agent (a pure detector the runner acts on);
//!   [`goal_budget`]: what the current goal spent against its budget, and what is to be done;
//!   [`followthrough`]: what a final answer given with goals of the plan still open calls for;
//!   [`sub_trace_report`]: how a sub-trace ended, as the trace that started it is told;
//!   [`background`]: the sub-traces running in the background of the trace that started them
//!   (it holds their tasks; the loop that runs them is the runner's).
//! - [`fork::fork`]: a new trace holding another's history and plan up to an earlier point.
//! - [`queue::RunQueue`]: runs queued for workers on other nodes, and how any node steers them.
//!
//! ```
//! use agent_execution::{AssistantContent, InMemoryTraceStore, NewMessage, NewTrace, TraceStore};
//! use agent_goal::GoalCommand;
//! use agent_llm::ToolCall;
//!
//! # tokio_test();
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn tokio_test() {
//! let store = InMemoryTraceStore::new();
//! let trace = store.create_trace(NewTrace::agent("Fix the bug")).await.unwrap();
//! let plan = GoalCommand { add: Some("Read the code".into()), focus: Some("1".into()), ..Default::default() };
//! store.apply_goal_command(&trace.trace_id, plan).await.unwrap();
//! let turn = AssistantContent {
//!     tool_calls: vec![ToolCall::new("c1", "read_file", "{}")],
//!     ..AssistantContent::default()
//! };
//! let message = store
//!     .add_message(&trace.trace_id, NewMessage::assistant(turn).goal("1").usage(120, 0.001))
//!     .await
//!     .unwrap();
//! assert_eq!(message.description, "tool call: read_file");
//! let tree = store.get_goal_tree(&trace.trace_id).await.unwrap().unwrap();
//! assert_eq!(tree.goals()[0].self_stats.total_tokens, 120);
//! # }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod background;
pub mod budget;
mod bus;
pub mod call_ids;
#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
pub mod content;
pub mod continuation;
mod delta_sink;
pub mod empty_answer;
pub mod event;
pub mod feed;
pub mod followthrough;
pub mod fork;
pub mod goal_budget;
pub mod ids;
pub mod limits;
pub mod lineage;
pub mod lookup;
pub mod loop_guard;
pub mod message;
pub mod meta;
pub mod model_choice;
pub mod outcome;
pub mod queue;
pub mod run_limits;
pub mod shell_logs;
pub mod store;
pub mod sub_agent_tools;
pub mod sub_trace_report;
pub mod trace;
pub mod unanswered;

/// The goal types the [`TraceStore`] contract speaks of, so implementers need not name `agent-goal`.
pub use agent_goal::{GoalCommand, GoalTree};
/// The attribute [`TraceStore`] implementations need, re-exported so they need not name the crate.
pub use async_trait::async_trait;
pub use content::{AssistantContent, Content, Reasoning, ToolCall, ToolResultContent};
pub use delta_sink::DeltaSink;
pub use event::{AffectedGoal, Event, EventKind, LoopAction, LoopPattern, NoticeKind};
pub use feed::{
    DeltaKind, EventBus, EventStream, LiveDelta, LiveEvent, LiveStream, watch, watch_live,
};
pub use ids::{InvalidId, validate_trace_id};
pub use limits::{
    LimitError, check_max_cost, check_max_iterations, parse_max_cost, parse_max_iterations,
};
pub use lineage::{RecordedAgents, recorded_agents, stats_with_sub_traces};
pub use loop_guard::LoopGuard;
pub use message::{Message, MessageUpdate, NewMessage, Role, describe};
pub use store::{
    Commit, Copied, Doorbell, InMemoryTraceStore, StoreError, TraceState, TraceStore, TraceTxn,
    Undo, WriteOp, WriteOutput, commit_ops, copy_trace, plan_commit,
};
pub use trace::{
    ForkOrigin, ModelSettings, NewTrace, ParentLink, Trace, TraceFilter, TraceLimits, TraceMode,
    TraceOutcome, TraceStats, TraceStatus, TraceUpdate,
};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
