//! A session of the connection (a trace and the runner working on it), the table of them, and
//! the errors that name one.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use agent_client_protocol::Error;
use agent_runner::AgentRunner;
use tokio_util::sync::CancellationToken;

/// ACP's "resource not found" (an unknown session).
const NOT_FOUND: i32 = -32002;

/// One session: a trace and the runner that works on it.
pub(crate) struct Session {
    /// The working directory the client named.
    pub(crate) cwd: PathBuf,
    /// The runner, built for `cwd`.
    pub(crate) runner: Arc<AgentRunner>,
    /// Whether the trace exists (a new session's trace is created by its first prompt).
    pub(crate) created: bool,
    /// The turn going on, if any: its number and its cancellation.
    pub(crate) turn: Option<(u64, CancellationToken)>,
    /// The session's "allow always" answers, by the rules every front end shares.
    pub(crate) approvals: Arc<agent_runner::interaction::SessionApprovals>,
    /// The tools the client rejected for the rest of the session ("reject always").
    pub(crate) rejected: std::collections::HashSet<String>,
    /// The tool calls announced to the client (`tool_call`), so each is announced once.
    pub(crate) announced: std::collections::HashSet<String>,
}

/// The sessions of one connection, by id (the trace id).
pub(crate) type Sessions = tokio::sync::Mutex<HashMap<String, Session>>;

/// The error for a session id that names no session.
pub(crate) fn unknown(id: &str) -> Error {
    Error::new(NOT_FOUND, format!("no session {id}"))
}

/// An internal error, with its message.
pub(crate) fn internal(error: &dyn std::fmt::Display) -> Error {
    Error::new(-32603, error.to_string())
}
