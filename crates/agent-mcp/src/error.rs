//! The one error type of the crate. Every variant names the server, so a message read by the
//! model or the user says which server failed and how.

use std::time::Duration;

/// What went wrong with an MCP server.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The server's configuration is invalid.
    #[error("MCP server {server}: {message}")]
    Config {
        /// The server.
        server: String,
        /// What is wrong.
        message: String,
    },
    /// A server was asked for by name but is not configured.
    #[error("there is no MCP server named {name:?} (configured: {})", list(known))]
    UnknownServer {
        /// The name asked for.
        name: String,
        /// The configured names.
        known: Vec<String>,
    },
    /// The server could not be started or reached, or failed the handshake.
    #[error(
        "MCP server {server} failed to start: {message}{}",
        stderr_note(stderr)
    )]
    Start {
        /// The server.
        server: String,
        /// Why.
        message: String,
        /// The last lines the server wrote to stderr, if any.
        stderr: String,
    },
    /// The server did not finish starting in time.
    #[error(
        "MCP server {server} did not answer the handshake within {} s{}",
        after.as_secs_f64(),
        stderr_note(stderr)
    )]
    StartTimeout {
        /// The server.
        server: String,
        /// The startup timeout.
        after: Duration,
        /// The last lines the server wrote to stderr, if any.
        stderr: String,
    },
    /// A tool call got no answer in time.
    #[error(
        "MCP server {server} did not answer the call to {tool} within {} s; the call was cancelled",
        after.as_secs_f64()
    )]
    Timeout {
        /// The server.
        server: String,
        /// The tool (MCP name).
        tool: String,
        /// The call timeout.
        after: Duration,
    },
    /// The connection to the server ended (the process exited or the HTTP session broke).
    #[error(
        "MCP server {server} stopped while {doing}: {message}; it will be restarted on the next \
         call{}",
        stderr_note(stderr)
    )]
    Stopped {
        /// The server.
        server: String,
        /// What was going on, for example "calling echo".
        doing: String,
        /// What the transport reported.
        message: String,
        /// The last lines the server wrote to stderr, if any.
        stderr: String,
    },
    /// The server stopped more often than it may be restarted.
    #[error(
        "MCP server {server} stopped and was restarted {restarts} times; it is not started again \
         in this session (last failure: {last})"
    )]
    GaveUp {
        /// The server.
        server: String,
        /// How many restarts were made.
        restarts: u32,
        /// The last failure.
        last: String,
    },
    /// The server answered a request with a JSON-RPC error.
    #[error("MCP server {server} refused {doing}: {message}")]
    Refused {
        /// The server.
        server: String,
        /// What was asked, for example "calling echo".
        doing: String,
        /// The server's error message (and code).
        message: String,
    },
    /// The server asks for OAuth sign-in and there is no token for it (or the token was
    /// refused and could not be refreshed): `agent mcp login NAME` signs in.
    #[error("MCP server {server} needs sign-in: run `agent mcp login {server}` ({message})")]
    SignInRequired {
        /// The server.
        server: String,
        /// What the server or the authorization server said.
        message: String,
    },
    /// Signing in failed: discovery, registration, the browser step or the token exchange.
    #[error("signing in to MCP server {server} failed: {message}")]
    SignIn {
        /// The server.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// The session was shut down; no more calls are made.
    #[error("MCP server {server} was shut down")]
    ShutDown {
        /// The server.
        server: String,
    },
}

impl McpError {
    /// The server the error is about, when it is about one.
    pub fn server(&self) -> Option<&str> {
        match self {
            Self::Config { server, .. }
            | Self::Start { server, .. }
            | Self::StartTimeout { server, .. }
            | Self::Timeout { server, .. }
            | Self::Stopped { server, .. }
            | Self::GaveUp { server, .. }
            | Self::Refused { server, .. }
            | Self::SignInRequired { server, .. }
            | Self::SignIn { server, .. }
            | Self::ShutDown { server } => Some(server),
            Self::UnknownServer { .. } => None,
        }
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

fn stderr_note(stderr: &str) -> String {
    if stderr.trim().is_empty() {
        String::new()
    } else {
        format!("\nits stderr ended with:\n{}", stderr.trim_end())
    }
}
