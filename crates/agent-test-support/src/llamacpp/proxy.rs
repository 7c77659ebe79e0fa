//! A recording proxy between a client (the `agent` binary) and the model server.
//!
//! The agent sends no temperature, seed or completion cap (but on a summary), and a 135M model
//! left to itself samples freely and may talk until its window is full: the proxy adds the
//! fields of its `sampling` object to every chat-completions request that lacks them, and holds
//! a larger `max_tokens` to its own, so runs are short and repeatable. It records each request as forwarded, the answer's status and body, and how
//! long the server took (from the request forwarded to the answer's last byte), which is the
//! server's side of the benchmark's overhead figure. Each request goes to the server on a
//! connection of its own and the answer is passed through as it comes (streams included),
//! with `Connection: close`.

use std::io::{BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::http::{dechunk, header, is_chunked, read_head, read_headers};

/// One request through the proxy.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The method and path, e.g. `POST /v1/chat/completions`.
    pub target: String,
    /// The JSON body as forwarded (`Value::Null` when there was none).
    pub request: Value,
    /// The server's status; 0 when it could not be reached or sent no status line.
    pub status: u16,
    /// The answer's body (chunked transfer decoded; as much as arrived when it was cut).
    pub body: Vec<u8>,
    /// Seconds from the request forwarded to the answer's end.
    pub seconds: f64,
}

impl Exchange {
    /// The answer's body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Whether the request asked for a streamed answer.
    pub fn streamed(&self) -> bool {
        self.request.get("stream").and_then(Value::as_bool) == Some(true)
    }
}

#[derive(Default)]
struct Shared {
    upstream: Mutex<Option<SocketAddr>>,
    exchanges: Mutex<Vec<Exchange>>,
    in_flight: AtomicUsize,
    stopped: AtomicBool,
}

/// A proxy on a free loopback port; it stops accepting when dropped.
pub struct Proxy {
    address: SocketAddr,
    shared: Arc<Shared>,
    sampling: Arc<Value>,
}

impl Proxy {
    /// Starts a proxy to `upstream` that adds the fields of `sampling` (a JSON object, e.g.
    /// `{"temperature": 0, "seed": 1, "max_tokens": 128}`) to chat-completions requests that
    /// lack them.
    pub fn start(upstream: SocketAddr, sampling: Value) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let shared = Arc::new(Shared::default());
        *shared.upstream.lock().unwrap() = Some(upstream);
        let sampling = Arc::new(sampling);
        let (accepting, fields) = (shared.clone(), sampling.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if accepting.stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = client else { continue };
                let (shared, fields) = (accepting.clone(), fields.clone());
                std::thread::spawn(move || relay(client, &shared, &fields));
            }
        });
        Self {
            address,
            shared,
            sampling,
        }
    }

    /// The OpenAI-compatible base URL to give the agent, `http://127.0.0.1:<port>/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    /// Sends later requests to another server (a restarted one).
    pub fn set_upstream(&self, upstream: SocketAddr) {
        *self.shared.upstream.lock().unwrap() = Some(upstream);
    }

    /// The fields added to requests.
    pub fn sampling(&self) -> &Value {
        &self.sampling
    }

    /// Every finished request so far, in the order they ended.
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.shared.exchanges.lock().unwrap().clone()
    }

    /// The finished chat-completions requests so far.
    pub fn completions(&self) -> Vec<Exchange> {
        self.exchanges()
            .into_iter()
            .filter(|e| e.target.ends_with("/chat/completions"))
            .collect()
    }

    /// Requests forwarded whose answer has not ended yet.
    pub fn in_flight(&self) -> usize {
        self.shared.in_flight.load(Ordering::SeqCst)
    }

    /// Waits (up to `limit`) until a request is in flight; false when none came.
    pub fn wait_in_flight(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if self.in_flight() > 0 {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees the flag.
        let _ = TcpStream::connect(self.address);
    }
}

/// Reads one request from `client`, forwards it and passes the answer back, then records it.
fn relay(client: TcpStream, shared: &Shared, sampling: &Value) {
    let Ok(mut reader) = client.try_clone().map(BufReader::new) else {
        return;
    };
    let mut first = String::new();
    if std::io::BufRead::read_line(&mut reader, &mut first).unwrap_or(0) == 0 {
        return;
    }
    let mut words = first.split_whitespace();
    let (method, path) = (
        words.next().unwrap_or("GET").to_owned(),
        words.next().unwrap_or("/").to_owned(),
    );
    let Ok(headers) = read_headers(&mut reader) else {
        return;
    };
    let length: usize = header(&headers, "content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let mut request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if path.ends_with("/chat/completions")
        && let (Some(fields), Some(object)) = (sampling.as_object(), request.as_object_mut())
    {
        for (key, value) in fields {
            let entry = object.entry(key.clone()).or_insert_with(|| value.clone());
            // A cap the agent sets (a summary's) is held to the pinned one too.
            if key == "max_tokens"
                && let (Some(asked), Some(pinned)) = (entry.as_u64(), value.as_u64())
                && asked > pinned
            {
                *entry = value.clone();
            }
        }
    }
    let forwarded = if request.is_null() {
        body
    } else {
        request.to_string().into_bytes()
    };
    shared.in_flight.fetch_add(1, Ordering::SeqCst);
    let started = Instant::now();
    let upstream = *shared.upstream.lock().unwrap();
    let (status, answer) = match upstream {
        Some(upstream) => forward(upstream, &method, &path, &headers, &forwarded, &client),
        None => (0, Vec::new()),
    };
    let seconds = started.elapsed().as_secs_f64();
    let _ = client.shutdown(Shutdown::Both);
    shared.exchanges.lock().unwrap().push(Exchange {
        target: format!("{method} {path}"),
        request,
        status,
        body: answer,
        seconds,
    });
    shared.in_flight.fetch_sub(1, Ordering::SeqCst);
}

/// Sends the request upstream and copies the answer to `client` as it comes: the status and
/// the body (decoded). A server that cannot be reached gives status 0 and nothing is written,
/// so the client sees its connection closed, as with a dead server.
fn forward(
    upstream: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: &[u8],
    mut client: &TcpStream,
) -> (u16, Vec<u8>) {
    let Ok(mut server) = TcpStream::connect_timeout(&upstream, Duration::from_secs(5)) else {
        return (0, Vec::new());
    };
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {upstream}\r\n");
    for (name, value) in headers {
        if !matches!(name.as_str(), "host" | "content-length" | "connection") {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    if server.write_all(head.as_bytes()).is_err() || server.write_all(body).is_err() {
        return (0, Vec::new());
    }
    let Ok(reader) = server.try_clone() else {
        return (0, Vec::new());
    };
    let mut reader = BufReader::new(reader);
    let Ok((status, answer_headers)) = read_head(&mut reader) else {
        return (0, Vec::new());
    };
    let mut head = format!("HTTP/1.1 {status} \r\n");
    for (name, value) in &answer_headers {
        if name != "connection" {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    head.push_str("Connection: close\r\n\r\n");
    let _ = client.write_all(head.as_bytes());
    let mut raw = Vec::new();
    let mut buffer = [0; 8192];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                raw.extend_from_slice(&buffer[..n]);
                if client.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let body = if is_chunked(&answer_headers) {
        dechunk(&raw)
    } else {
        raw
    };
    (status, body)
}
