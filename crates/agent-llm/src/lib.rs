//! Chat types, the LLM client trait and model providers (OpenAI-compatible, Anthropic, scripted).
//!
//! This crate stands alone: it depends on no other crate of the workspace.
