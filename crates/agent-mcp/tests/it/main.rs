//! The integration tests of `agent-mcp`, in one test binary: the reference MCP servers
//! installed by `scripts/setup-mcp.sh` as agent tools, and servers that go wrong.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod failures;
mod servers;
mod support;
