//! `ApiConfig`: where the server listens, how it protects itself, and what runs started over
//! HTTP may do.
//!
//! **Security rule:** the server binds 127.0.0.1 by default. Binding any other address requires
//! a bearer token; [`ApiConfig::validate`] refuses the configuration otherwise, so an unsafe
//! server never starts.
//!
//! **Safe defaults for runs:** risky tool calls of runs started over HTTP wait for a decision
//! ([`ApprovalMode::Ask`]), and a run's workspace must lie under one of
//! [`ApiConfig::workspace_roots`] (by default, the runner factory's own workspace).
//!
//! **Bounded connections:** at most [`ApiConfig::max_connections`] open at once, and a request
//! head must arrive within [`ApiConfig::header_timeout`], so idle and slow clients cannot keep
//! others out.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

pub use agent_worker::{ApprovalMode, SandboxMode};

use crate::error::ApiError;

/// The default port.
pub const DEFAULT_PORT: u16 = 8000;

/// The default request body limit: 1 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 1024 * 1024;

/// The default cap on open connections: well under the usual open-file limit of 1,024, which
/// the trace store's files share.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// The default time a client has to send a request head.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The highest connection cap accepted.
pub const MAX_CONNECTIONS_LIMIT: usize = 1 << 20;

/// How the server listens and which requests it accepts.
#[derive(Clone)]
pub struct ApiConfig {
    /// The address to bind; 127.0.0.1 by default.
    pub host: IpAddr,
    /// The port to bind; 0 picks a free one.
    pub port: u16,
    /// The bearer token every request must carry. Required when `host` is not a loopback
    /// address. It is never printed by `Debug`.
    pub token: Option<String>,
    /// The largest request body accepted, in bytes; larger ones get 413.
    pub body_limit: usize,
    /// The most connections open at once, WebSockets included. At the cap the connection idle
    /// longest (no request in flight, not a WebSocket) is closed to make room, and when none is
    /// idle a new one gets 503 `connection_limit` and is closed.
    pub max_connections: usize,
    /// How long a client has to send a request head, counted from when the server starts
    /// waiting for one: when the connection opens and after each response, so a connection
    /// kept alive with no request is closed after this long too.
    pub header_timeout: Duration,
    /// Web origins (e.g. `http://localhost:5173`) allowed to call the API from a browser
    /// (CORS). Empty, the default, means CORS is off: only same-origin pages and non-browser
    /// clients may call. `*` allows any origin.
    pub cors_origins: Vec<String>,
    /// The live watch's keepalive and back-pressure settings.
    pub watch: WatchConfig,
    /// On shutdown, how long to wait for cancelled runs to record their end.
    pub shutdown_grace: Duration,
    /// How runs started over HTTP treat risky tool calls; a request may ask for stricter
    /// handling, never looser. [`ApprovalMode::Ask`] by default.
    pub approval: ApprovalMode,
    /// The sandbox of the commands of runs started over HTTP, as the runner factory applies it:
    /// a request may ask for a stricter one, never looser (403 `sandbox_not_allowed`).
    /// [`SandboxMode::WorkspaceWrite`] by default.
    pub sandbox: SandboxMode,
    /// The folders runs started over HTTP may work in: a run's workspace (after `..` and
    /// symbolic links are resolved) must be one of them or lie under one. Empty, the default:
    /// only the runner factory's workspace and the folders under it.
    pub workspace_roots: Vec<PathBuf>,
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: DEFAULT_PORT,
            token: None,
            body_limit: DEFAULT_BODY_LIMIT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            cors_origins: Vec::new(),
            watch: WatchConfig::default(),
            shutdown_grace: Duration::from_secs(5),
            approval: ApprovalMode::default(),
            sandbox: SandboxMode::default(),
            workspace_roots: Vec::new(),
        }
    }
}

impl fmt::Debug for ApiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("body_limit", &self.body_limit)
            .field("max_connections", &self.max_connections)
            .field("header_timeout", &self.header_timeout)
            .field("cors_origins", &self.cors_origins)
            .field("watch", &self.watch)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("approval", &self.approval)
            .field("sandbox", &self.sandbox)
            .field("workspace_roots", &self.workspace_roots)
            .finish()
    }
}

impl ApiConfig {
    /// The socket address to bind.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::new(self.host, self.port)
    }

    /// Checks the configuration: a non-loopback host needs a token, a token must not be empty
    /// and CORS origins must be valid header values.
    pub fn validate(&self) -> Result<(), ApiError> {
        if let Some(token) = &self.token
            && token.trim().is_empty()
        {
            return Err(ApiError::Config("the API token is empty".into()));
        }
        if !self.host.is_loopback() && self.token.is_none() {
            return Err(ApiError::Config(format!(
                "refusing to listen on {} without a token: anyone who can reach that address \
                 could read traces and start runs. Set a token (`--token` or the environment), \
                 or bind 127.0.0.1",
                self.host
            )));
        }
        if self.body_limit == 0 {
            return Err(ApiError::Config("the body limit must be above 0".into()));
        }
        if self.max_connections == 0 || self.max_connections > MAX_CONNECTIONS_LIMIT {
            return Err(ApiError::Config(format!(
                "the connection cap must be between 1 and {MAX_CONNECTIONS_LIMIT}"
            )));
        }
        if self.header_timeout.is_zero() {
            return Err(ApiError::Config(
                "the request head timeout must be above 0".into(),
            ));
        }
        for origin in &self.cors_origins {
            if origin.parse::<axum::http::HeaderValue>().is_err() || origin.is_empty() {
                return Err(ApiError::Config(format!("invalid CORS origin {origin:?}")));
            }
        }
        if self.watch.ping_interval.is_zero() || self.watch.send_timeout.is_zero() {
            return Err(ApiError::Config(
                "the watch ping interval and send timeout must be above 0".into(),
            ));
        }
        Ok(())
    }
}

/// Keepalive and back-pressure of the live watch (`WS /api/traces/{id}/watch`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchConfig {
    /// How often the server pings each client. A client that has sent nothing (no pong, no
    /// message) for two intervals is closed.
    pub ping_interval: Duration,
    /// How long one write to a client may take. A client that accepts no data for this long is
    /// closed (code 1008, reason `client too slow`).
    pub send_timeout: Duration,
    /// At most this many ready events are written before one flush.
    pub max_batch: usize,
}

impl Default for WatchConfig {
    fn default() -> Self {
        Self {
            ping_interval: Duration::from_secs(20),
            send_timeout: Duration::from_secs(30),
            max_batch: 256,
        }
    }
}
