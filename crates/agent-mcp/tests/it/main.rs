//! The integration tests of `agent-mcp`, in one test binary: the reference MCP servers
//! installed by `scripts/setup-mcp.sh` as agent tools, prompts and resources, and servers that
//! go wrong.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod catalog;
mod failures;
mod servers;
mod support;
