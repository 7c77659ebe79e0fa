//! The model's view of a trace: what the next model call sees, built from the goal tree and the
//! stored messages, and the rules that keep it small.
//!
//! This crate owns context building ([`context`]: the reference builder, [`build_context`]),
//! its incremental fast path ([`context_incremental`]: the loop's [`IncrementalContext`], kept
//! equal to the reference by property tests) and compaction's rules ([`compaction`]: goal
//! compaction, prune, the full compaction's prompt and summary message), the model's window
//! against what every request carries ([`window`]) and whether a server's prompt counts show
//! its template hides the tools or their results from the model ([`prompt_watch`]). All of it is pure:
//! no I/O, no model call, no store. The model call that writes a full compaction's summary is
//! the loop's (`agent-runner`), which re-exports these modules under the same names.
//!
//! It depends on `agent-goal`, `agent-llm` (types and token estimates only) and
//! `agent-execution` (message types), and must not depend on the runner, a store, a provider
//! or the command line.
//!
//! ```
//! use agent_context::ContextBudget;
//! use agent_context::context::{ContextInput, build_context};
//! use agent_execution::Message;
//! use agent_goal::GoalTree;
//!
//! let tree = GoalTree::new("Say hello");
//! // The trace's messages: owned, or shared with a store (`Vec<Arc<Message>>`).
//! let messages: Vec<Message> = Vec::new();
//! let view = build_context(&ContextInput {
//!     system_prompt: "You are helpful.",
//!     tree: &tree,
//!     messages: &messages,
//!     budget: &ContextBudget::for_window(8_192),
//!     strategy: Default::default(),
//!     estimate: &|text: &str| text.len() / 4,
//! });
//! // The system prompt and the plan, as two system messages; no conversation yet.
//! assert_eq!(view.messages.len(), 2);
//! assert!(!view.needs_full_compaction);
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod compaction;
pub mod context;
pub mod context_incremental;
pub mod leave_out;
mod plan_fit;
pub mod prompt_watch;
pub mod window;

pub use compaction::{COMPACTION_PROMPT, CompactionStrategy, ContextBudget};
pub use context::build_context;
pub use context_incremental::IncrementalContext;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
