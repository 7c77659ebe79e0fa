//! Traces, messages and events, the `TraceStore` trait, trace ids, and the agent runner.
//!
//! Depends on `agent-goal` and `agent-llm`, never on a concrete store or the HTTP server.

pub mod tools;
