//! The MCP servers a client asks a session to use (`mcpServers` of `session/new`, `load`,
//! `resume` and `fork`), as plain data the [`crate::Host`] starts.

use std::path::PathBuf;

use agent_client_protocol::v1::schema::McpServer;

/// One MCP server a client named for a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionMcpServer {
    /// A program speaking MCP on its stdin and stdout.
    Stdio {
        /// The name the client gave it.
        name: String,
        /// The program.
        command: PathBuf,
        /// Its arguments.
        args: Vec<String>,
        /// Its environment variables.
        env: Vec<(String, String)>,
    },
    /// A streamable HTTP server.
    Http {
        /// The name the client gave it.
        name: String,
        /// Its URL.
        url: String,
        /// Headers sent with every request.
        headers: Vec<(String, String)>,
    },
}

/// The servers of a request that this agent can reach (stdio and HTTP; SSE and servers
/// tunnelled through the client are left out with a warning).
pub(crate) fn servers_of(requested: &[McpServer]) -> Vec<SessionMcpServer> {
    requested
        .iter()
        .filter_map(|server| match server {
            McpServer::Stdio(stdio) => Some(SessionMcpServer::Stdio {
                name: stdio.name.clone(),
                command: stdio.command.clone(),
                args: stdio.args.clone(),
                env: stdio
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect(),
            }),
            McpServer::Http(http) => Some(SessionMcpServer::Http {
                name: http.name.clone(),
                url: http.url.clone(),
                headers: http
                    .headers
                    .iter()
                    .map(|h| (h.name.clone(), h.value.clone()))
                    .collect(),
            }),
            other => {
                tracing::warn!(
                    ?other,
                    "an MCP server of this transport is not supported; left out"
                );
                None
            }
        })
        .collect()
}
