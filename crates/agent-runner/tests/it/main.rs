//! The integration tests of `agent-runner`, in one test binary: whole runs against a scripted or
//! mock model over the in-memory store.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

mod agent_depth;
mod background_delegates;
mod budgets;
mod compaction_recovery;
mod context_props;
mod continue_trace;
mod defaults;
mod explore_copies;
mod fork;
mod goals_held;
mod honest_ends;
mod hostile_output;
mod instructions;
mod loop_guard;
mod profiles;
mod prompt_cache;
mod reasoning;
mod runner;
mod session_model;
mod shared_reads;
mod small_windows;
mod streaming;
mod subagents;
mod subagents_resume;
mod support;
mod tool_specs;
mod wire_fidelity;
