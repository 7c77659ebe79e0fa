//! Listening and shutting down: [`Server::bind`], [`Server::run`] and [`serve`], which does
//! both.
//!
//! **Shutdown order:** when the shutdown future completes, the server stops taking runs,
//! cancels every run it owns and waits up to `shutdown_grace` for their traces to record
//! `cancelled` (so watchers see the final events and the traces can be resumed), then closes
//! the live watches (code 1001) and lets in-flight requests finish, for at most another
//! `shutdown_grace`.
//!
//! Connections are capped and idle ones timed out (`connections.rs`).

use std::future::Future;
use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpSocket};
use tokio_util::sync::CancellationToken;

use crate::app::router;
use crate::connections::{Connections, Limits};
use crate::error::ApiError;
use crate::state::AppState;

/// How many connections may wait to be accepted (the kernel caps it at `net.core.somaxconn`).
/// While the server is at its connection cap, each accept first closes an idle connection, so
/// a burst of new connections queues; a full queue drops their SYNs, and a client whose SYN is
/// dropped waits a second before it tries again.
const BACKLOG: u32 = 4096;

/// A listening socket on `addr` with [`BACKLOG`], reusing the address as a plain bind does.
fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// A bound server, not yet serving.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    state: AppState,
}

impl Server {
    /// Binds the configured address (port 0 picks a free port). Fails if the configuration is
    /// unsafe or the address cannot be bound.
    pub async fn bind(state: AppState) -> Result<Self, ApiError> {
        state.config().validate()?;
        let wanted = state.config().addr();
        let listener = listen(wanted).map_err(|source| ApiError::Bind {
            addr: wanted.to_string(),
            source,
        })?;
        let addr = listener.local_addr().map_err(|source| ApiError::Bind {
            addr: wanted.to_string(),
            source,
        })?;
        Ok(Self {
            listener,
            addr,
            state,
        })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server's base URL, e.g. `http://127.0.0.1:8000`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Serves until `shutdown` completes, then shuts down gracefully (see the module
    /// documentation).
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ApiError> {
        let Self {
            listener,
            addr,
            state,
        } = self;
        tracing::info!(url = %format!("http://{addr}"), read_only = state.factory().is_none(),
            token = state.config().token.is_some(), "agent-api listening");
        let grace = state.config().shutdown_grace;
        let stopping = CancellationToken::new();
        let signal = {
            let state = state.clone();
            let stopping = stopping.clone();
            async move {
                shutdown.await;
                tracing::info!("agent-api shutting down");
                let left = state.runs().shutdown(grace).await;
                if left > 0 {
                    tracing::warn!(left, "some runs did not record their end in time");
                }
                state.shutdown_token().cancel();
                stopping.cancel();
            }
        };
        let connections = Connections::new(Limits {
            max_connections: state.config().max_connections,
            header_timeout: state.config().header_timeout,
        });
        // Runs end and watches close before the connections are told to.
        tokio::spawn(signal);
        let server = connections.serve(listener, router(state), stopping.clone());
        tokio::select! {
            () = server => Ok(()),
            () = async {
                stopping.cancelled().await;
                tokio::time::sleep(grace).await;
            } => {
                tracing::warn!("connections still open after the shutdown grace period; closing");
                Ok(())
            }
        }
    }
}

/// Binds the configured address and serves until `shutdown` completes.
///
/// ```no_run
/// # async fn example(store: std::sync::Arc<dyn agent_execution::TraceStore>) -> Result<(), agent_api::ApiError> {
/// let state = agent_api::AppState::builder(store).build()?;
/// agent_api::serve(state, async {
///     let _ = tokio::signal::ctrl_c().await;
/// })
/// .await
/// # }
/// ```
pub async fn serve(
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ApiError> {
    Server::bind(state).await?.run(shutdown).await
}
