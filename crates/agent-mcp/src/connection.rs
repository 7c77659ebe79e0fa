//! A live session with one MCP server: the child process or HTTP session, the handshake within
//! the startup timeout (a server answering with a protocol version this client does not speak
//! is refused), and a bounded graceful close. A child process runs in its own process group,
//! killed when the connection is dropped.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};

use crate::config::{ServerConfig, TransportKind};
use crate::error::McpError;
use crate::handler::Handler;
use crate::http::{HttpTransport, http_transport};
use crate::process::{ProcessGroup, StderrTail, spawn};
use crate::version::supported;

/// How long a graceful shutdown (close stdin, wait for the exit) may take before the process
/// group is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// A live session with a server.
pub(crate) struct Connection {
    pub(crate) service: RunningService<RoleClient, Handler>,
    /// The child's process group (stdio servers); killed when the connection is dropped.
    pub(crate) group: Option<ProcessGroup>,
    stderr: StderrTail,
}

impl Connection {
    /// Starts the server and completes the handshake within the startup timeout. A server that
    /// signs in with the client credentials grant gets a token first when the one on file has
    /// expired, and when it answers `401` to the one it has.
    pub(crate) async fn open(
        name: &str,
        config: &ServerConfig,
        kind: TransportKind,
        handler: &Handler,
    ) -> Result<Self, McpError> {
        #[cfg(feature = "oauth")]
        if let Some(tokens) = handler.options.tokens.as_ref()
            && crate::client_credentials::configured(config)
        {
            use crate::client_credentials::{expired, fetch};
            // Without a token the server's `401` says where to get one.
            let fetched = expired(name, config, tokens);
            if fetched {
                fetch(name, config, tokens).await?;
            }
            return match Self::open_once(name, config, kind, handler).await {
                Err(McpError::SignInRequired { .. }) if !fetched => {
                    fetch(name, config, tokens).await?;
                    Self::open_once(name, config, kind, handler).await
                }
                opened => opened,
            };
        }
        Self::open_once(name, config, kind, handler).await
    }

    async fn open_once(
        name: &str,
        config: &ServerConfig,
        kind: TransportKind,
        handler: &Handler,
    ) -> Result<Self, McpError> {
        let client = || handler.clone();
        let timeout = config.startup_timeout();
        let start_error = |message: String, stderr: &StderrTail| McpError::Start {
            server: name.to_owned(),
            message,
            stderr: stderr.text(),
        };
        let stderr = StderrTail::default();
        let (service, group) = match kind {
            TransportKind::Stdio => {
                let options = &handler.options;
                let sandbox = options.sandbox.as_ref().map(|sandbox| {
                    let workspace = options
                        .roots
                        .first()
                        .map_or(Path::new("."), |r| r.as_path());
                    (sandbox, workspace)
                });
                let (transport, group) = spawn(name, config, &stderr, sandbox)?;
                let handshake = tokio::time::timeout(timeout, client().serve(transport)).await;
                (handshake, group)
            }
            TransportKind::Http => {
                let tokens = handler.options.tokens.as_ref();
                let handshake =
                    match http_transport(name, config, tokens, &handler.challenge).await? {
                        HttpTransport::Plain(transport) => {
                            tokio::time::timeout(timeout, client().serve(transport)).await
                        }
                        #[cfg(feature = "oauth")]
                        HttpTransport::SignedIn(transport) => {
                            tokio::time::timeout(timeout, client().serve(transport)).await
                        }
                    };
                (handshake, None)
            }
        };
        match service {
            Ok(Ok(service)) => {
                let version = service
                    .peer_info()
                    .map(|info| info.protocol_version.clone())
                    .unwrap_or_default();
                if !supported(&version) {
                    let _ = service.cancel().await;
                    return Err(start_error(
                        format!(
                            "the server answered with protocol version {version}, which this client does not speak"
                        ),
                        &stderr,
                    ));
                }
                Ok(Self {
                    service,
                    group,
                    stderr,
                })
            }
            Ok(Err(error)) => {
                #[cfg(feature = "oauth")]
                if kind == TransportKind::Http
                    && let Some(url) = &config.url
                    && let Ok(Some(_)) = crate::auth::challenge(url).await
                {
                    return Err(McpError::SignInRequired {
                        server: name.to_owned(),
                        message: "the server answers 401 Unauthorized without a valid token".into(),
                    });
                }
                // A process that exited leaves its reason on stderr; let the reader catch up.
                tokio::time::sleep(Duration::from_millis(100)).await;
                Err(start_error(
                    format!("the handshake failed: {error}"),
                    &stderr,
                ))
            }
            Err(_) => Err(McpError::StartTimeout {
                server: name.to_owned(),
                after: timeout,
                stderr: stderr.text(),
            }),
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }

    pub(crate) fn stderr(&self) -> String {
        self.stderr.text()
    }

    /// Closes the session gracefully (bounded), then kills the process group.
    pub(crate) async fn close(self: Arc<Self>) {
        match Arc::try_unwrap(self) {
            Ok(mut connection) => {
                let _ = connection.service.close_with_timeout(SHUTDOWN_GRACE).await;
                // Dropping the connection kills whatever is left of the group.
            }
            Err(shared) => {
                // A call is still holding the connection: do not wait for it.
                if let Some(group) = &shared.group {
                    group.kill();
                }
            }
        }
    }
}
