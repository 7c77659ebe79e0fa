//! An in-process mock model server for the integration tests: an axum app on 127.0.0.1:0 that
//! answers from a queue of canned responses in the real wire formats and records every request.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use futures::StreamExt;
use serde_json::Value;

/// One canned answer.
pub enum MockResponse {
    /// A JSON body with a status and extra headers.
    Json {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: Value,
    },
    /// A server-sent-events body sent as these raw pieces, `pause` apart, then either the end of
    /// the body or (with `hang`) silence forever.
    Sse {
        pieces: Vec<String>,
        pause: Duration,
        hang: bool,
    },
    /// Response headers only after `delay`.
    Slow { delay: Duration },
}

impl MockResponse {
    pub fn json(body: Value) -> Self {
        MockResponse::Json {
            status: 200,
            headers: Vec::new(),
            body,
        }
    }

    pub fn error(status: u16, body: Value) -> Self {
        MockResponse::Json {
            status,
            headers: Vec::new(),
            body,
        }
    }

    /// An SSE body of `data:` events (OpenAI style), each piece one event.
    pub fn data_events(events: &[Value], done: bool) -> Self {
        let mut pieces: Vec<String> = events.iter().map(|e| format!("data: {e}\n\n")).collect();
        if done {
            pieces.push("data: [DONE]\n\n".to_string());
        }
        MockResponse::Sse {
            pieces,
            pause: Duration::ZERO,
            hang: false,
        }
    }

    /// An SSE body of typed events (Anthropic style): `event: <type>` then `data:`.
    pub fn typed_events(events: &[Value]) -> Self {
        let pieces = events
            .iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect();
        MockResponse::Sse {
            pieces,
            pause: Duration::ZERO,
            hang: false,
        }
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

#[derive(Default)]
struct Shared {
    responses: Mutex<VecDeque<MockResponse>>,
    requests: Mutex<Vec<Recorded>>,
    body_dropped: Arc<AtomicBool>,
}

/// A running mock server.
pub struct MockServer {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

/// Sets a flag when the streamed body is dropped, which happens when the client goes away.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared.requests.lock().unwrap().push(Recorded {
        path: uri.path().to_string(),
        headers,
        body,
    });
    let next = shared.responses.lock().unwrap().pop_front();
    match next {
        None => Response::builder()
            .status(StatusCode::IM_A_TEAPOT)
            .body(Body::from("the mock server has no response left"))
            .unwrap(),
        Some(MockResponse::Json {
            status,
            headers,
            body,
        }) => {
            let mut builder = Response::builder()
                .status(status)
                .header("content-type", "application/json");
            for (name, value) in headers {
                builder = builder.header(name, value);
            }
            builder.body(Body::from(body.to_string())).unwrap()
        }
        Some(MockResponse::Slow { delay }) => {
            tokio::time::sleep(delay).await;
            Response::builder()
                .status(200)
                .body(Body::from("{}"))
                .unwrap()
        }
        Some(MockResponse::Sse {
            pieces,
            pause,
            hang,
        }) => {
            let flag = DropFlag(shared.body_dropped.clone());
            let stream = futures::stream::iter(pieces).then(move |piece| async move {
                if !pause.is_zero() {
                    tokio::time::sleep(pause).await;
                }
                Ok::<_, std::convert::Infallible>(Bytes::from(piece))
            });
            let tail = futures::stream::once(async move {
                let _flag = flag;
                if hang {
                    futures::future::pending::<()>().await;
                }
                Ok(Bytes::new())
            });
            Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(stream.chain(tail)))
                .unwrap()
        }
    }
}

impl MockServer {
    pub async fn start(responses: Vec<MockResponse>) -> MockServer {
        let shared = Arc::new(Shared::default());
        shared.responses.lock().unwrap().extend(responses);
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        MockServer { addr, shared }
    }

    /// The OpenAI-style base URL (with `/v1`).
    pub fn openai_base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The Anthropic-style base URL (without `/v1`).
    pub fn anthropic_base(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }

    pub fn body_dropped(&self) -> bool {
        self.shared.body_dropped.load(Ordering::SeqCst)
    }
}

/// A retry policy with tiny delays for tests.
pub fn fast_retry(max_attempts: u32) -> agent_llm::RetryPolicy {
    agent_llm::RetryPolicy::default()
        .with_max_attempts(max_attempts)
        .with_delays(Duration::from_millis(1), Duration::from_millis(5))
}
