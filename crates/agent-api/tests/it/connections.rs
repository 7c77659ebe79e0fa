//! The server's connections over a real listener: idle connections past the cap do not keep
//! clients out, a request head that does not arrive in time closes its connection, a kept-alive
//! connection with no request is closed after as long, and when every connection has a request
//! in flight a new one gets 503 `connection_limit`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_api::{ApiConfig, AppState, Server};
use agent_execution::InMemoryTraceStore;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

struct Running {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

async fn start(config: ApiConfig) -> Running {
    let state = AppState::builder(Arc::new(InMemoryTraceStore::new()))
        .config(ApiConfig { port: 0, ..config })
        .build()
        .unwrap();
    let server = Server::bind(state).await.unwrap();
    let addr = server.local_addr();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));
    Running { addr, _stop: stop }
}

/// One `GET /api/traces` on a new connection: the status line and how long it took.
async fn list(addr: SocketAddr) -> (String, Duration) {
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    let text = String::from_utf8_lossy(&answer);
    (
        text.lines().next().unwrap_or("").to_owned(),
        started.elapsed(),
    )
}

/// Whether the server closed the connection: a read ends (EOF or reset) within `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut rest = Vec::new();
    tokio::time::timeout(within, stream.read_to_end(&mut rest))
        .await
        .is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_past_the_cap_do_not_keep_clients_out() {
    // The head timeout is long: only the cap's eviction can make room here.
    let server = start(ApiConfig {
        max_connections: 100,
        header_timeout: Duration::from_secs(60),
        ..ApiConfig::default()
    })
    .await;
    agent_test_support::fds::raise_own_open_file_limit(2_048);
    let addr = server.addr;
    let prober = tokio::spawn(async move {
        let mut slowest = Duration::ZERO;
        let mut answered = 0;
        for _ in 0..40 {
            let (status, took) = list(addr).await;
            assert_eq!(status, "HTTP/1.1 200 OK");
            slowest = slowest.max(took);
            answered += 1;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        (answered, slowest)
    });
    let mut idle = Vec::new();
    for _ in 0..1_100 {
        idle.push(TcpStream::connect(addr).await.unwrap());
    }
    // Some send part of a head, as a slow client would.
    for stream in idle.iter_mut().step_by(3) {
        let _ = stream.write_all(b"GET /api/tra").await;
    }
    let (answered, slowest) = prober.await.unwrap();
    let (status, after) = list(addr).await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    let mut still_open = 0;
    for stream in &mut idle {
        if !closed_within(stream, Duration::from_millis(1)).await {
            still_open += 1;
        }
    }
    eprintln!(
        "1,100 idle connections against a cap of 100: {answered} requests answered meanwhile, \
         the slowest in {slowest:?}; one more after them in {after:?}; {still_open} idle \
         connections still open"
    );
    assert!(slowest < Duration::from_secs(1), "{slowest:?}");
    assert!(still_open <= 100, "{still_open} idle connections open");
}

#[tokio::test]
async fn a_request_head_that_does_not_arrive_in_time_closes_the_connection() {
    let server = start(ApiConfig {
        header_timeout: Duration::from_millis(500),
        ..ApiConfig::default()
    })
    .await;
    // Part of a head, then nothing.
    let mut partial = TcpStream::connect(server.addr).await.unwrap();
    partial
        .write_all(b"GET /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    assert!(closed_within(&mut partial, Duration::from_secs(5)).await);
    let partial_closed = started.elapsed();
    // Nothing at all.
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    let started = Instant::now();
    assert!(closed_within(&mut silent, Duration::from_secs(5)).await);
    let silent_closed = started.elapsed();
    // A request answered, then the connection kept alive with no other request.
    let mut kept = TcpStream::connect(server.addr).await.unwrap();
    kept.write_all(b"GET /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut buffer = [0_u8; 4096];
    let read = kept.read(&mut buffer).await.unwrap();
    assert!(buffer[..read].starts_with(b"HTTP/1.1 200 OK"));
    let started = Instant::now();
    assert!(closed_within(&mut kept, Duration::from_secs(5)).await);
    let kept_closed = started.elapsed();
    eprintln!(
        "head timeout 500 ms: a partial head closed after {partial_closed:?}, a silent \
         connection after {silent_closed:?}, an idle kept-alive one after {kept_closed:?}"
    );
    for took in [partial_closed, silent_closed, kept_closed] {
        assert!(took >= Duration::from_millis(400), "{took:?}");
        assert!(took < Duration::from_secs(2), "{took:?}");
    }
}

#[tokio::test]
async fn with_every_connection_busy_a_new_one_is_refused_with_503() {
    let server = start(ApiConfig {
        max_connections: 2,
        header_timeout: Duration::from_secs(60),
        ..ApiConfig::default()
    })
    .await;
    // Two requests in flight: their handlers wait for bodies that never come.
    let mut busy = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        stream
            .write_all(
                b"POST /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n\
                  Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
            )
            .await
            .unwrap();
        busy.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (status, _) = list(server.addr).await;
    assert_eq!(status, "HTTP/1.1 503 Service Unavailable");
    // One request ends: its connection is free again and the next client is answered.
    busy.pop();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (status, _) = list(server.addr).await;
    assert_eq!(status, "HTTP/1.1 200 OK");
}

#[test]
fn a_cap_of_zero_or_a_zero_head_timeout_is_refused() {
    for config in [
        ApiConfig {
            max_connections: 0,
            ..ApiConfig::default()
        },
        ApiConfig {
            header_timeout: Duration::ZERO,
            ..ApiConfig::default()
        },
    ] {
        assert!(config.validate().is_err(), "{config:?}");
    }
}
