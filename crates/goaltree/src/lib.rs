//! The common path for a first agent, in one dependency.
//!
//! This crate owns nothing of its own: it re-exports the workspace's crates under short names
//! (`goal`, `llm`, `execution`, `tools`, `runner`, and by feature `store_fs`, `store_pg`,
//! `mcp`, `api`) and a [`prelude`] with the types a first agent names. It must not depend on a
//! front end (the command line, the terminal UI, the editor protocol) or hold logic: what a
//! crate below does is that crate's to do.
//!
#![cfg_attr(docsrs, feature(doc_cfg))]
#![doc = include_str!("../README.md")]

pub use agent_execution as execution;
pub use agent_goal as goal;
pub use agent_llm as llm;
pub use agent_runner as runner;
pub use agent_tools as tools;

#[cfg(feature = "api")]
pub use agent_api as api;
#[cfg(feature = "mcp")]
pub use agent_mcp as mcp;
#[cfg(feature = "store-fs")]
pub use agent_store_fs as store_fs;
#[cfg(feature = "store-pg")]
pub use agent_store_pg as store_pg;

/// The types a first agent names: the runner and its options, a model client, the tools, a
/// store and what a run returns.
pub mod prelude {
    pub use agent_execution::{InMemoryTraceStore, TraceStatus, TraceStore};
    pub use agent_goal::{GoalStatus, GoalTree};
    #[cfg(feature = "anthropic")]
    pub use agent_llm::{AnthropicClient, AnthropicConfig};
    pub use agent_llm::{LlmClient, ScriptedClient, ScriptedTurn};
    #[cfg(feature = "openai")]
    pub use agent_llm::{OpenAiClient, OpenAiConfig};
    pub use agent_runner::{
        AgentRunner, Approval, RunError, RunOutcome, RunnerOptions, StopReason,
    };
    #[cfg(feature = "store-fs")]
    pub use agent_store_fs::FileSystemTraceStore;
    pub use agent_tools::{Tool, ToolRegistry, TypedTool};
}
