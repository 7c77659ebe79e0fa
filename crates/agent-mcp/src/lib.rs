//! Model Context Protocol servers as agent tools.
//!
//! Any MCP server — a child process spoken to over stdio, or a streamable HTTP endpoint — adds
//! its tools to an agent's `ToolRegistry`, named `mcp__<server>__<tool>`, with the server's
//! descriptions and JSON schemas, and its resources through two tools of their own. Built on the official Rust SDK, `rmcp`. Depends on
//! `agent-execution` (the `Tool` trait) and `agent-llm` (the TLS setup), never on a store, the
//! HTTP server or the command line.
//!
//! - [`McpConfig`], [`ServerConfig`]: the configuration (`[mcp.servers.<name>]` in `agent.toml`).
//! - [`McpServers`]: the servers of a session, started together; their tools go into a registry.
//! - [`McpServer`]: one server and its connection; [`McpTool`]: one of its tools. Its prompts
//!   ([`McpServer::prompts`], [`McpServer::get_prompt`]) and resources
//!   ([`McpServer::listed_resources`], [`McpServer::read_resource`]); the model reads resources
//!   through two tools, [`LIST_RESOURCES_TOOL`] and [`READ_RESOURCE_TOOL`].
//! - [`ClientOptions`]: what the client offers servers: the workspace as its root, and an
//!   [`Elicitor`] to answer a server's questions to the person (declined without one).
//! - With the `oauth` feature: [`login`] and [`TokenStore`], signing in to HTTP servers that
//!   ask for OAuth — a person through the browser, or without one by the [`Grant`] configured
//!   (the client credentials grant, cross-app access), the token fetched again when it expires.
//!
//! Failures never stop a run: a server that fails to start is reported and left out; a call that
//! times out, a server that stops mid-call or answers with an error give the model an error
//! result and the user a `tracing` warning. A server that stopped is started again on its next
//! call, at most [`ServerConfig::restart_limit`] times. Child processes run in their own process
//! group, killed when the session ends.
//!
//! ```no_run
//! use agent_tools::ToolRegistry;
//! use agent_mcp::{McpConfig, McpServers, ServerConfig};
//!
//! # async fn example() -> Result<(), agent_mcp::McpError> {
//! let mut config = McpConfig::default();
//! let mut everything = ServerConfig::stdio("npx", ["-y", "@modelcontextprotocol/server-everything"]);
//! everything.read_only = vec!["echo".into()];
//! config.servers.insert("everything".into(), everything);
//!
//! let servers = McpServers::start(config.select(&[])?).await;
//! let mut registry = ToolRegistry::with_builtins();
//! servers.register(&mut registry);
//! assert!(registry.get("mcp__everything__echo").is_some());
//! // ... run the agent with `registry` ...
//! servers.shutdown().await;
//! # Ok(())
//! # }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

#[cfg(feature = "oauth")]
mod assertion;
#[cfg(feature = "oauth")]
mod auth;
mod catalog;
mod challenge;
mod client;
#[cfg(feature = "oauth")]
mod client_credentials;
mod config;
mod connection;
mod content;
#[cfg(feature = "oauth")]
mod cross_app;
mod error;
mod handler;
mod http;
mod process;
mod resource_tools;
mod server;
mod servers;
#[cfg(feature = "oauth")]
mod token_request;
mod tool;
mod version;

#[cfg(feature = "oauth")]
pub use auth::{SignInState, TokenStore};
pub use client::{
    Browser, ClientOptions, ElicitationAnswer, ElicitationKind, ElicitationRequest, Elicitor,
    NoElicitor, Tokens,
};
#[cfg(feature = "oauth")]
pub use client_credentials::login;
pub use config::{
    DEFAULT_MAX_RESTARTS, DEFAULT_STARTUP_TIMEOUT, Grant, MAX_SERVER_NAME_LEN, McpConfig,
    OAuthConfig, ServerConfig, TransportKind, expand_env, validate_name,
};
pub use content::{prompt_text, resource_text, result_text};
pub use error::McpError;
pub use resource_tools::{LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL};
pub use server::McpServer;
pub use servers::McpServers;
pub use tool::{McpTool, TOOL_PREFIX, tool_name};

/// The MCP protocol types of the SDK this crate is built on (tool listings, call results).
pub use rmcp::model;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
