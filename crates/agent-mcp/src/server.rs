//! One MCP server and its live connection (`connection.rs`): start (a child process or an HTTP
//! session), the handshake, the tool list, calls bounded by a timeout, restarts after the server
//! stopped, and shutdown. A child process runs in its own process group, killed when the
//! connection is dropped, so nothing it started outlives the session.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, JsonObject, Resource, ServerCapabilities,
    Tool as McpToolInfo,
};
use tokio::time::Instant;

use crate::client::ClientOptions;
use crate::config::{ServerConfig, TransportKind, validate_name};
use crate::connection::Connection;
use crate::error::McpError;
use crate::handler::{Handler, ListChanges};

/// A configured MCP server, started: its tools and a connection that is restarted when the
/// server stops (up to its restart limit).
///
/// Dropping it (and every tool holding it) ends the connection and kills the child process
/// group; [`McpServer::shutdown`] does the same gracefully.
pub struct McpServer {
    name: String,
    config: ServerConfig,
    kind: TransportKind,
    /// The tools as last listed: at start, and again after the server said they changed.
    tools: std::sync::RwLock<Vec<McpToolInfo>>,
    /// The resources as last listed (see `catalog.rs`): empty until then.
    pub(crate) resources: std::sync::RwLock<Vec<Resource>>,
    /// The client side of each connection (counts the list changes the server announced).
    handler: Handler,
    /// What the server said about using it in its handshake (`instructions`).
    instructions: Option<String>,
    /// What the server said it offers in its handshake.
    capabilities: ServerCapabilities,
    state: tokio::sync::Mutex<State>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("tools", &self.listed_tools().len())
            .finish_non_exhaustive()
    }
}

struct State {
    connection: Option<Arc<Connection>>,
    restarts: u32,
    last_failure: String,
    shut_down: bool,
}

impl McpServer {
    /// Starts the server named `name` (stdio or HTTP), completes the handshake and lists its
    /// tools; the handshake and the listing each get the server's startup timeout.
    ///
    /// # Errors
    ///
    /// [`McpError::Config`] for an invalid configuration, [`McpError::Start`] when the process
    /// cannot be started, the server cannot be reached or fails the handshake or the listing,
    /// [`McpError::StartTimeout`] when it takes too long.
    pub async fn start(name: &str, config: ServerConfig) -> Result<Arc<Self>, McpError> {
        Self::start_with(name, config, Arc::new(ClientOptions::default())).await
    }

    /// [`McpServer::start`] with what the client offers the server: roots, and someone to
    /// answer its questions.
    ///
    /// # Errors
    ///
    /// As [`McpServer::start`].
    pub async fn start_with(
        name: &str,
        config: ServerConfig,
        options: Arc<ClientOptions>,
    ) -> Result<Arc<Self>, McpError> {
        validate_name(name)?;
        let kind = config.transport(name)?;
        let timeout = config.startup_timeout();
        let handler = Handler {
            server: name.to_owned(),
            changes: Arc::new(ListChanges::new()),
            options,
            callers: Arc::default(),
            challenge: Arc::default(),
        };
        let connection = Connection::open(name, &config, kind, &handler).await?;
        let listed =
            tokio::time::timeout(timeout, connection.service.peer().list_all_tools()).await;
        let tools = match listed {
            Ok(Ok(tools)) => tools,
            #[cfg(feature = "oauth")]
            Ok(Err(error)) if crate::auth::refused_for_auth(&error) => {
                return Err(McpError::SignInRequired {
                    server: name.to_owned(),
                    message: "the server wants a token to list its tools".into(),
                });
            }
            Ok(Err(error)) => {
                return Err(McpError::Start {
                    server: name.to_owned(),
                    message: format!("listing its tools failed: {error}"),
                    stderr: connection.stderr(),
                });
            }
            Err(_) => {
                return Err(McpError::StartTimeout {
                    server: name.to_owned(),
                    after: timeout,
                    stderr: connection.stderr(),
                });
            }
        };
        tracing::debug!(server = name, tools = tools.len(), "MCP server started");
        let info = connection.service.peer_info();
        let capabilities = info.as_ref().map(|info| info.capabilities.clone());
        let instructions = info
            .as_ref()
            .and_then(|info| info.instructions.clone())
            .filter(|text| !text.trim().is_empty());
        Ok(Arc::new(Self {
            name: name.to_owned(),
            config,
            kind,
            tools: std::sync::RwLock::new(tools),
            resources: std::sync::RwLock::default(),
            handler,
            instructions,
            capabilities: capabilities.unwrap_or_default(),
            state: tokio::sync::Mutex::new(State {
                connection: Some(Arc::new(connection)),
                restarts: 0,
                last_failure: String::new(),
                shut_down: false,
            }),
        }))
    }

    /// The instructions the server gave in its handshake, if any: how to use its tools, for
    /// the system prompt.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server's configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// How the server is reached.
    pub fn transport(&self) -> TransportKind {
        self.kind
    }

    /// Every tool the server listed (when it started, or when [`McpServer::refresh_tools`]
    /// last listed them), offered or not.
    pub fn listed_tools(&self) -> Vec<McpToolInfo> {
        self.tools
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// How many times the server said its tool list changed (`notifications/tools/list_changed`);
    /// a receiver wakes at each change.
    pub fn tool_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.handler.changes.tools.subscribe()
    }

    /// What the server said it offers (tools, prompts, resources) in its handshake.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.capabilities
    }

    /// Notes a tool call of `trace_id` in flight until the guard is dropped, so the server's
    /// questions meanwhile are asked for that trace.
    pub(crate) fn calling_for(&self, trace_id: &str) -> crate::handler::CallerGuard {
        self.handler.callers.enter(trace_id)
    }

    /// The counters of the server's list changes (tools, prompts, resources).
    pub(crate) fn list_changes(&self) -> &ListChanges {
        &self.handler.changes
    }

    /// Lists the server's tools again (after it said they changed), within its startup
    /// timeout.
    ///
    /// # Errors
    ///
    /// What a call would fail with when the server cannot be reached, or
    /// [`McpError::StartTimeout`] when listing takes too long.
    pub async fn refresh_tools(&self) -> Result<(), McpError> {
        let connection = self.connection().await?;
        let timeout = self.config.startup_timeout();
        match tokio::time::timeout(timeout, connection.service.peer().list_all_tools()).await {
            Ok(Ok(tools)) => {
                *self
                    .tools
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = tools;
                Ok(())
            }
            Ok(Err(error)) => Err(self.failed(&connection, "listing its tools", error).await),
            Err(_) => Err(McpError::StartTimeout {
                server: self.name.clone(),
                after: timeout,
                stderr: connection.stderr(),
            }),
        }
    }

    /// The process id of the running child process (stdio servers), if it is running.
    pub async fn process_id(&self) -> Option<u32> {
        let state = self.state.lock().await;
        state
            .connection
            .as_ref()
            .and_then(|connection| connection.group.as_ref().map(|group| group.pid))
    }

    /// Whether the connection is up: the server has not stopped (as far as the client has
    /// noticed) and the session was not shut down.
    pub async fn is_running(&self) -> bool {
        let state = self.state.lock().await;
        state
            .connection
            .as_ref()
            .is_some_and(|connection| !connection.is_closed())
    }

    /// How many times the server was restarted.
    pub async fn restarts(&self) -> u32 {
        self.state.lock().await.restarts
    }

    /// Calls the tool `tool` (its MCP name) with `arguments`, within `timeout` (which includes
    /// restarting the server when it had stopped).
    ///
    /// # Errors
    ///
    /// [`McpError::Timeout`] when no answer came in time (the call is cancelled),
    /// [`McpError::Stopped`] when the connection ended during the call (the server is restarted
    /// on the next call), [`McpError::GaveUp`] when it stopped too often, [`McpError::Refused`]
    /// when it answered with an error, and the errors of [`McpServer::start`] when a restart
    /// fails.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        timeout: Duration,
    ) -> Result<CallToolResult, McpError> {
        let deadline = Instant::now() + timeout;
        let timed_out = || McpError::Timeout {
            server: self.name.clone(),
            tool: tool.to_owned(),
            after: timeout,
        };
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        let mut stepped_up = false;
        loop {
            let connection = tokio::time::timeout_at(deadline, self.connection())
                .await
                .map_err(|_| timed_out())??;
            let call = connection.service.call_tool(params.clone());
            let outcome = tokio::time::timeout_at(deadline, call).await;
            // A protected name the call created does not stay for the next one to read.
            if let Some(group) = &connection.group {
                group.take_created();
            }
            return match outcome {
                Err(_) => Err(timed_out()),
                Ok(Ok(result)) => Ok(result),
                Ok(Err(ServiceError::Timeout { .. })) => Err(timed_out()),
                Ok(Err(error)) => {
                    #[cfg(feature = "oauth")]
                    if !stepped_up && (self.renew(&error).await || self.step_up(&error).await) {
                        stepped_up = true;
                        continue;
                    }
                    Err(self
                        .failed(&connection, &format!("calling {tool}"), error)
                        .await)
                }
            };
        }
    }

    /// When the server signs in with the client credentials grant and refused the token (or it
    /// expired), fetches a new one and connects again; true when the call may be retried.
    #[cfg(feature = "oauth")]
    async fn renew(&self, error: &ServiceError) -> bool {
        use crate::client_credentials::{configured, expired, fetch};
        let Some(tokens) = &self.handler.options.tokens else {
            return false;
        };
        let refused =
            crate::auth::refused_for_auth(error) || expired(&self.name, &self.config, tokens);
        if !configured(&self.config) || !refused {
            return false;
        }
        let fetched = fetch(&self.name, &self.config, tokens).await;
        self.reconnect_after(fetched).await
    }

    /// When `error` is the server's `403 insufficient_scope`, signs in again with the wider
    /// scope it asks for (if a browser was given) and connects again with the new token; true
    /// when the call may be retried.
    #[cfg(feature = "oauth")]
    async fn step_up(&self, error: &ServiceError) -> bool {
        let options = &self.handler.options;
        // The transport drops the challenge from the error; the client kept it.
        let kept = self.handler.challenge.take();
        let (Some(scope), Some(tokens), Some(browser)) = (
            crate::auth::wanted_scope(error).or_else(|| crate::auth::scope_in(&kept?)),
            &options.tokens,
            &options.browser,
        ) else {
            return false;
        };
        let open = |page: &str| browser.open(page);
        let signed_in = crate::auth::step_up(&self.name, &self.config, tokens, &scope, &open).await;
        self.reconnect_after(signed_in).await
    }

    /// After a new token (`signed_in`), connects again with it and keeps the connection; true
    /// when the call may be retried, false (said in the log) when either step failed.
    #[cfg(feature = "oauth")]
    async fn reconnect_after(&self, signed_in: Result<(), McpError>) -> bool {
        let opened = match signed_in {
            Ok(()) => Connection::open(&self.name, &self.config, self.kind, &self.handler).await,
            Err(error) => Err(error),
        };
        match opened {
            Ok(connection) => {
                self.state.lock().await.connection = Some(Arc::new(connection));
                true
            }
            Err(error) => {
                tracing::warn!("{error}");
                false
            }
        }
    }

    /// Ends the connection: closes the server's stdin (or the HTTP session), waits a moment for
    /// it to exit, then kills its process group. Later calls fail with [`McpError::ShutDown`].
    pub async fn shutdown(&self) {
        let connection = {
            let mut state = self.state.lock().await;
            state.shut_down = true;
            state.connection.take()
        };
        if let Some(connection) = connection {
            connection.close().await;
        }
    }

    /// The live connection, restarted first when the server had stopped.
    pub(crate) async fn connection(&self) -> Result<Arc<Connection>, McpError> {
        let mut state = self.state.lock().await;
        if state.shut_down {
            return Err(McpError::ShutDown {
                server: self.name.clone(),
            });
        }
        if let Some(connection) = &state.connection {
            if !connection.is_closed() {
                return Ok(connection.clone());
            }
            state.last_failure =
                format!("the connection closed{}", tail_note(&connection.stderr()));
            tracing::warn!(server = %self.name, "MCP server stopped between calls");
            state.connection = None;
        }
        let limit = self.config.restart_limit();
        if state.restarts >= limit {
            return Err(McpError::GaveUp {
                server: self.name.clone(),
                restarts: state.restarts,
                last: state.last_failure.clone(),
            });
        }
        state.restarts += 1;
        tracing::warn!(
            server = %self.name,
            "restarting MCP server (restart {} of {limit})",
            state.restarts
        );
        match Connection::open(&self.name, &self.config, self.kind, &self.handler).await {
            Ok(connection) => {
                let connection = Arc::new(connection);
                state.connection = Some(connection.clone());
                Ok(connection)
            }
            Err(error) => {
                state.last_failure = error.to_string();
                Err(error)
            }
        }
    }

    /// Turns a failed request into an error; a broken connection is dropped (killing the
    /// process group) so the next call starts the server again.
    pub(crate) async fn failed(
        &self,
        connection: &Arc<Connection>,
        doing: &str,
        error: ServiceError,
    ) -> McpError {
        match error {
            ServiceError::McpError(data) => McpError::Refused {
                server: self.name.clone(),
                doing: doing.to_owned(),
                message: format!("{} (code {})", data.message, data.code.0),
            },
            ServiceError::TransportClosed
            | ServiceError::TransportSend(_)
            | ServiceError::Cancelled { .. } => {
                // Give the stderr reader a moment to collect the last words of a crash.
                tokio::time::sleep(Duration::from_millis(50)).await;
                let stderr = connection.stderr();
                let message = error.to_string();
                let mut state = self.state.lock().await;
                if state
                    .connection
                    .as_ref()
                    .is_some_and(|current| Arc::ptr_eq(current, connection))
                {
                    state.connection = None;
                    state.last_failure = format!("{message}{}", tail_note(&stderr));
                }
                McpError::Stopped {
                    server: self.name.clone(),
                    doing: doing.to_owned(),
                    message,
                    stderr,
                }
            }
            other => McpError::Refused {
                server: self.name.clone(),
                doing: doing.to_owned(),
                message: other.to_string(),
            },
        }
    }
}

fn tail_note(stderr: &str) -> String {
    match stderr.lines().last() {
        Some(line) => format!(" (stderr: {line})"),
        None => String::new(),
    }
}
