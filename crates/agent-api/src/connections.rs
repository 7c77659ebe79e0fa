//! The connections of a [`Server`](crate::Server): accepted one by one, each served by hyper's
//! HTTP/1 connection with a timeout for request heads, and never more than
//! [`ApiConfig::max_connections`](crate::ApiConfig::max_connections) open at once.
//!
//! **The cap:** each open connection (a WebSocket included, for as long as it lives) holds one
//! permit. When none is left, the connection that has been idle longest (no request in flight,
//! not a WebSocket: one that sent nothing, part of a head, or waits between requests) is closed
//! to make room, so clients that send requests are answered however many idle connections are
//! held open. When every connection has a request in flight, the new one gets a `503
//! connection_limit` and is closed: the server stays under its open-file limit instead of
//! failing to accept anyone.
//!
//! **The head timeout:** hyper closes a connection whose request head has not arrived
//! [`ApiConfig::header_timeout`](crate::ApiConfig::header_timeout) after it started waiting for
//! it. It starts waiting when the connection opens and again after each response, so the same
//! timeout closes idle kept-alive connections.

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{Request, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// How long an accept waits for an evicted connection to give its permit back.
const EVICTION_WAIT: Duration = Duration::from_secs(1);

/// The body of the answer to a connection over the cap.
const OVER_CAP_BODY: &str = r#"{"error":{"code":"connection_limit","message":"too many open connections; try again shortly"}}"#;

/// The answer to a connection over the cap, written once before it is closed.
fn over_cap() -> String {
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{OVER_CAP_BODY}",
        OVER_CAP_BODY.len()
    )
}

/// The limits of the connections.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_connections: usize,
    pub(crate) header_timeout: Duration,
}

/// The open connections and their permits.
pub(crate) struct Connections {
    limits: Limits,
    permits: Arc<Semaphore>,
    open: Mutex<HashMap<u64, Arc<Conn>>>,
    next_id: AtomicU64,
    epoch: Instant,
}

/// One open connection, as the cap sees it.
struct Conn {
    /// Requests whose handler is running.
    in_flight: AtomicUsize,
    /// Set once the connection became a WebSocket: it is never evicted.
    upgraded: AtomicBool,
    /// Milliseconds since the epoch when the connection last opened or finished a request.
    last_active: AtomicU64,
    /// Cancelled to close the connection (gracefully: a response being written is finished).
    evict: CancellationToken,
}

impl Connections {
    pub(crate) fn new(limits: Limits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            permits: Arc::new(Semaphore::new(limits.max_connections)),
            open: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            epoch: Instant::now(),
        })
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Accepts connections until `stopping` is cancelled, then waits for every connection
    /// (WebSockets included) to close.
    pub(crate) async fn serve(
        self: Arc<Self>,
        listener: TcpListener,
        router: Router,
        stopping: CancellationToken,
    ) {
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(error) => {
                        accept_failed(&error).await;
                        continue;
                    }
                },
                () = stopping.cancelled() => break,
            };
            let Some(permit) = self.permit().await else {
                tracing::debug!("connection refused: every connection has a request in flight");
                // The socket is new: its send buffer takes the answer at once.
                let _ = stream.try_write(over_cap().as_bytes());
                continue;
            };
            // Registered before its task runs, so the next accept can already evict it.
            let (id, conn) = self.register();
            let this = self.clone();
            let (router, stopping) = (router.clone(), stopping.clone());
            tokio::spawn(async move {
                this.connection(stream, (id, conn), permit, router, stopping)
                    .await;
            });
        }
        drop(listener);
        let all = u32::try_from(self.limits.max_connections).unwrap_or(u32::MAX);
        let _ = self.permits.acquire_many(all).await;
    }

    /// A permit: a free one, or the one of the connection idle longest, closed for it.
    async fn permit(&self) -> Option<OwnedSemaphorePermit> {
        if let Ok(permit) = self.permits.clone().try_acquire_owned() {
            return Some(permit);
        }
        if !self.evict_idlest() {
            return None;
        }
        tokio::time::timeout(EVICTION_WAIT, self.permits.clone().acquire_owned())
            .await
            .ok()?
            .ok()
    }

    /// Closes the connection idle longest; false when every one is busy or a WebSocket.
    fn evict_idlest(&self) -> bool {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let idlest = open
            .values()
            .filter(|conn| {
                !conn.evict.is_cancelled()
                    && !conn.upgraded.load(Ordering::Acquire)
                    && conn.in_flight.load(Ordering::Acquire) == 0
            })
            .min_by_key(|conn| conn.last_active.load(Ordering::Acquire));
        match idlest {
            Some(conn) => {
                conn.evict.cancel();
                true
            }
            None => false,
        }
    }

    /// A new connection in the open set.
    fn register(&self) -> (u64, Arc<Conn>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            in_flight: AtomicUsize::new(0),
            upgraded: AtomicBool::new(false),
            last_active: AtomicU64::new(self.now_ms()),
            evict: CancellationToken::new(),
        });
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, conn.clone());
        (id, conn)
    }

    /// Serves one connection until it closes, is evicted or the server stops.
    async fn connection(
        self: Arc<Self>,
        stream: TcpStream,
        (id, conn): (u64, Arc<Conn>),
        permit: OwnedSemaphorePermit,
        router: Router,
        stopping: CancellationToken,
    ) {
        // The permit and the entry go with the stream, so a WebSocket keeps both after hyper
        // hands it over.
        let io = TokioIo::new(Counted {
            stream,
            _slot: Slot {
                connections: self.clone(),
                id,
                _permit: permit,
            },
        });
        let service = {
            let conn = conn.clone();
            let this = self.clone();
            hyper::service::service_fn(move |request: Request<Incoming>| {
                let busy = Busy::start(conn.clone(), this.clone());
                let router = router.clone();
                async move {
                    let response = router.oneshot(request).await;
                    if let Ok(response) = &response
                        && response.status() == StatusCode::SWITCHING_PROTOCOLS
                    {
                        busy.conn.upgraded.store(true, Ordering::Release);
                    }
                    drop(busy);
                    response
                }
            })
        };
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.limits.header_timeout);
        let served = builder.serve_connection(io, service).with_upgrades();
        tokio::pin!(served);
        tokio::select! {
            result = served.as_mut() => {
                log_end(result);
                return;
            }
            () = conn.evict.cancelled() => {}
            () = stopping.cancelled() => {}
        }
        // Idle (nothing sent yet, part of a head, or between requests): dropping the connection
        // closes it. A request in flight is answered first, then the connection is closed.
        if conn.in_flight.load(Ordering::Acquire) > 0 {
            served.as_mut().graceful_shutdown();
            log_end(served.await);
        }
    }
}

fn log_end(result: Result<(), hyper::Error>) {
    if let Err(error) = result {
        tracing::debug!(%error, "connection closed with an error");
    }
}

/// A request in flight on a connection, until it is dropped (also when the connection closes
/// mid-request).
struct Busy {
    conn: Arc<Conn>,
    connections: Arc<Connections>,
}

impl Busy {
    fn start(conn: Arc<Conn>, connections: Arc<Connections>) -> Self {
        conn.in_flight.fetch_add(1, Ordering::AcqRel);
        Self { conn, connections }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.conn
            .last_active
            .store(self.connections.now_ms(), Ordering::Release);
        self.conn.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A connection's permit and its entry in the open set, released when the stream is dropped.
struct Slot {
    connections: Arc<Connections>,
    id: u64,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.connections
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

/// A TCP stream that holds its connection's [`Slot`].
struct Counted {
    stream: TcpStream,
    _slot: Slot,
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// After a failed accept: errors of the one connection are skipped, others (e.g. out of file
/// descriptors) are logged and the loop pauses so it does not spin.
async fn accept_failed(error: &io::Error) {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        error.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    ) {
        return;
    }
    tracing::warn!(%error, "accepting a connection failed");
    tokio::time::sleep(Duration::from_millis(100)).await;
}
