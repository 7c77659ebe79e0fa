//! `FileSystemTraceStore`: the embedded default trace store, one folder per trace.
//!
//! Depends on `agent-execution` for the `TraceStore` trait and the models it stores.
