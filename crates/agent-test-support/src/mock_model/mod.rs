//! The mock model server: an axum app on 127.0.0.1, port 0, that speaks the OpenAI-compatible
//! chat-completions format (`POST {base}/chat/completions`), the OpenAI Responses format
//! (`POST {base}/responses`, see `responses.rs`) and the Anthropic Messages format
//! (`POST /v1/messages`), answers each request with the next scripted [`Reply`] (or a fallback
//! when the queue is empty), and records every request for assertions.
//!
//! ```no_run
//! # async fn example() {
//! use agent_test_support::mock_model::{MockModelServer, Turn, Usage};
//! use serde_json::json;
//!
//! let server = MockModelServer::start().await;
//! server.push(Turn::tool_call("call_1", "read_file", json!({"path": "a.rs"})));
//! server.push(Turn::text("Done.").with_usage(Usage::new(120, 8)));
//! // ... point a client at server.openai_base() or server.anthropic_base() ...
//! assert_eq!(server.requests()[0].path, "/v1/chat/completions");
//! # }
//! ```
//!
//! A [`Turn`] is rendered in the request's format: JSON, or a stream (fragmented text and tool
//! arguments, `usage` only when asked for with `stream_options.include_usage`) when the request
//! says `"stream": true`; its [`WebSearch`]es as the provider's server-side search blocks (see
//! `web_search.rs`). Raw replies ([`Reply::json`], [`Reply::sse`], ...) are sent as they
//! are. Requests that break a provider's documented rules get that provider's 400 (see
//! `rules.rs`, and `reasoning.rs` for the rules about reasoning sent back) and consume no
//! reply. [`MockModelServer::llama_cpp`] starts a server that also keeps the rules and the
//! stream shape of llama.cpp's Python server (`llamacpp.rs`). `GET {base}/models` lists the
//! models of [`MockModelServer::serve_models`]. [`MockModelServer::serve_as`] plays a local
//! server's window (llama.cpp's `llama-server`, vLLM, Ollama, or one that says nothing: where it
//! says it, how it refuses a prompt over it), and [`MockModelServer::count_prompts`] reports the
//! prompt tokens of what a chat template shows the model (see `local.rs`). Requests about the
//! server rather than a chat (`/props`, the model list, Ollama's API) are kept apart
//! ([`MockModelServer::info_requests`]).

mod llamacpp;
mod local;
mod reasoning;
mod refuse;
mod reply;
mod responses;
mod rules;
mod sending;
mod turn;
mod web_search;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use serde_json::{Value, json};

pub use local::{LocalServer, Template};
pub use reasoning::{DEFAULT_REASONING, signature as thinking_signature};
pub use reply::{Reply, SSE_DONE, sse_data, sse_event};
pub use turn::{Turn, Usage};
pub use web_search::WebSearch;

use refuse::{error_body, json_response, plain, refusal, too_long};

/// The wire format of a request, told by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    /// OpenAI-compatible chat completions: a path ending in `/chat/completions`.
    OpenAi,
    /// Anthropic Messages: `/v1/messages`.
    Anthropic,
    /// OpenAI Responses: a path ending in `/responses`.
    Responses,
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// Its position among the requests, from 0.
    pub index: usize,
    /// The HTTP method.
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The headers, names in lower case, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (`Null` when it is not JSON).
    pub body: Value,
}

impl RecordedRequest {
    /// The first value of a header (the name in any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The wire format its path names.
    pub fn format(&self) -> Option<WireFormat> {
        if self.path.ends_with("/chat/completions") {
            Some(WireFormat::OpenAi)
        } else if self.path == "/v1/messages" {
            Some(WireFormat::Anthropic)
        } else if self.path.ends_with("/responses") {
            Some(WireFormat::Responses)
        } else {
            None
        }
    }

    /// Whether it asked for a streamed answer.
    pub fn is_stream(&self) -> bool {
        self.body["stream"] == Value::Bool(true)
    }
}

type Fallback = Box<dyn Fn(&RecordedRequest) -> Reply + Send + Sync>;

#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    fallback: Mutex<Option<Arc<Fallback>>>,
    requests: Mutex<Vec<RecordedRequest>>,
    disconnects: AtomicUsize,
    /// The largest request body, in bytes, that fits the model's window (0: any).
    context_bytes: AtomicUsize,
    issued: responses::Issued,
    reasoning: reasoning::ReasoningState,
    /// Whether the server plays llama.cpp's (see `llamacpp.rs`).
    llama_cpp: std::sync::atomic::AtomicBool,
    /// What `GET /models` lists (`mock-model` when empty).
    models: Mutex<Vec<String>>,
    /// The local server it plays (see `local.rs`).
    local: Mutex<Option<LocalServer>>,
    /// What its chat template shows the model, when it counts prompts itself.
    template: Mutex<Option<Template>>,
    /// The requests about the server rather than a chat (`/props`, the model list, Ollama's
    /// `/api/show` and `/api/ps`).
    info_requests: Mutex<Vec<RecordedRequest>>,
    /// How many requests were refused with a 400 as over the window.
    window_refusals: AtomicUsize,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running mock model server; it stops when dropped.
pub struct MockModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl MockModelServer {
    /// Starts a server with no reply queued.
    pub async fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("the mock model server cannot bind 127.0.0.1:0");
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, shared, task }
    }

    /// Starts a server with these replies queued.
    pub async fn with_replies<R: Into<Reply>>(replies: impl IntoIterator<Item = R>) -> Self {
        let server = Self::start().await;
        for reply in replies {
            server.push(reply);
        }
        server
    }

    /// Starts a server in DeepSeek thinking mode: every answer carries `reasoning_content`, and
    /// an assistant message with tool calls sent back without it is refused (see
    /// `reasoning.rs`).
    pub async fn deepseek_thinking() -> Self {
        let server = Self::start().await;
        server.shared.reasoning.deepseek_thinking();
        server
    }

    /// Starts a server that answers as llama.cpp's OpenAI-compatible Python server does (see
    /// the rules in `llamacpp.rs`): a 500 for an assistant `content` of `null`, an empty `200`
    /// stream for a streamed request with `tool_choice: "auto"` or over the context window
    /// ([`MockModelServer::limit_context`]), tools offered only with a `tool_choice`, and
    /// streams without `usage`.
    pub async fn llama_cpp() -> Self {
        let server = Self::start().await;
        server.shared.llama_cpp.store(true, Ordering::SeqCst);
        server
    }

    /// Plays `server`: answers `GET /props`, the model list and Ollama's `/api/show` as it does
    /// (see `local.rs`), and refuses a prompt over its window in its words. Without
    /// [`count_prompts`](Self::count_prompts), its template shows everything.
    pub fn serve_as(&self, server: LocalServer) {
        *lock(&self.shared.local) = Some(server);
        lock(&self.shared.template).get_or_insert(Template::FULL);
    }

    /// Reports, on every answer whose turn has no usage of its own, the prompt tokens of the
    /// request as `template` renders it (and an estimate of the answer's).
    pub fn count_prompts(&self, template: Template) {
        *lock(&self.shared.template) = Some(template);
    }

    /// The requests about the server rather than a chat (`GET /props`, `GET {base}/models`,
    /// `POST /api/show`, `GET /api/ps`), in order; [`requests`](Self::requests) leaves them out.
    pub fn info_requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.info_requests).clone()
    }

    /// How many requests it refused with a 400 as over the model's window
    /// ([`limit_context`](Self::limit_context), [`serve_as`](Self::serve_as)); an empty stream
    /// that llama-cpp-python's rules answer a streamed one with is not counted.
    pub fn window_refusals(&self) -> usize {
        self.shared.window_refusals.load(Ordering::SeqCst)
    }

    /// The model ids `GET {base}/models` lists, in this order.
    pub fn serve_models(&self, models: &[&str]) {
        *lock(&self.shared.models) = models.iter().map(|m| (*m).to_owned()).collect();
    }

    /// Queues a reply.
    pub fn push(&self, reply: impl Into<Reply>) {
        lock(&self.shared.replies).push_back(reply.into());
    }

    /// What to answer once the queue is empty (by default a 418 error saying so).
    pub fn when_empty(&self, fallback: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static) {
        *lock(&self.shared.fallback) = Some(Arc::new(Box::new(fallback)));
    }

    /// Gives the model a context window: a request whose body is over `bytes` is refused with
    /// the provider's context-length error (OpenAI's `context_length_exceeded`, Anthropic's
    /// `prompt is too long`), as real servers refuse a prompt over the window.
    pub fn limit_context(&self, bytes: usize) {
        self.shared.context_bytes.store(bytes, Ordering::SeqCst);
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The OpenAI-style base URL (with `/v1`).
    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// The Anthropic-style base URL (without `/v1`).
    pub fn anthropic_base(&self) -> String {
        self.url()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// How many requests it received.
    pub fn request_count(&self) -> usize {
        lock(&self.shared.requests).len()
    }

    /// How many queued replies are left.
    pub fn replies_left(&self) -> usize {
        lock(&self.shared.replies).len()
    }

    /// How many streamed bodies the client dropped before they ended.
    pub fn disconnects(&self) -> usize {
        self.shared.disconnects.load(Ordering::SeqCst)
    }
}

impl Drop for MockModelServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let info = is_info(&method, uri.path());
    let request = {
        let mut requests = if info {
            lock(&shared.info_requests)
        } else {
            lock(&shared.requests)
        };
        let request = RecordedRequest {
            index: requests.len(),
            method: method.to_string(),
            path: uri.path().to_owned(),
            headers: headers
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_owned(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        };
        requests.push(request.clone());
        request
    };
    let local = *lock(&shared.local);
    if info {
        let mut models = lock(&shared.models).clone();
        if models.is_empty() {
            models.push("mock-model".to_owned());
        }
        if let Some((status, body)) = local.and_then(|local| local.info(&request, &models)) {
            return json_response(status, &[], &body);
        }
        if request.method != "GET" || !request.path.ends_with("/models") {
            return plain(404, "no such route on the mock model server");
        }
        let data: Vec<Value> = models
            .iter()
            .map(|id| json!({"id": id, "object": "model", "owned_by": "mock"}))
            .collect();
        return json_response(200, &[], &json!({"object": "list", "data": data}));
    }
    if let Some(refusal) = refusal(&request, &shared) {
        return refusal;
    }
    let limit = shared.context_bytes.load(Ordering::SeqCst);
    // A local server's window, in its prompt tokens: the tokens and the window when over it.
    let over_window = local
        .filter(|_| request.format() == Some(WireFormat::OpenAi))
        .map(|local| (local, local::prompt_tokens(&request.body, Template::FULL)))
        .filter(|(local, tokens)| *tokens > local.window());
    let llama_cpp = shared.llama_cpp.load(Ordering::SeqCst);
    let overflow = (limit > 0 && body.len() > limit) || over_window.is_some();
    if llama_cpp
        && request.format() == Some(WireFormat::OpenAi)
        && let Some(refusal) = llamacpp::refusal(&request, overflow)
    {
        return refusal;
    }
    if limit > 0 && body.len() > limit {
        shared.window_refusals.fetch_add(1, Ordering::SeqCst);
        return json_response(400, &[], &too_long(&request, body.len() / 4, limit / 4));
    }
    if let Some((local, tokens)) = over_window {
        shared.window_refusals.fetch_add(1, Ordering::SeqCst);
        return json_response(400, &[], &local.too_long(tokens));
    }
    let next = lock(&shared.replies).pop_front();
    let reply = match next {
        Some(reply) => reply,
        None => {
            let fallback = lock(&shared.fallback).clone();
            match fallback {
                Some(fallback) => fallback(&request),
                None => Reply::error(
                    418,
                    error_body(&request, "mock", "the mock model server has no reply left"),
                ),
            }
        }
    };
    respond(reply, &request, &shared).await
}

/// Whether a request asks about the server rather than for a chat: `GET /props`, the model
/// list, Ollama's `POST /api/show` and `GET /api/ps`.
fn is_info(method: &Method, path: &str) -> bool {
    (method == Method::GET && (path.ends_with("/models") || path == "/props" || path == "/api/ps"))
        || (method == Method::POST && path == "/api/show")
}

async fn respond(reply: Reply, request: &RecordedRequest, shared: &Arc<Shared>) -> Response {
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let pieces = match reply.body {
        reply::Body::Hang => futures::future::pending().await,
        reply::Body::Json(body) => return json_response(reply.status, &reply.headers, &body),
        reply::Body::Turn(turn) => {
            let turn = turn.or_model(request.body["model"].as_str());
            let template = *lock(&shared.template);
            let turn = match template {
                Some(template) if request.format() == Some(WireFormat::OpenAi) => {
                    turn.or_usage(local::prompt_tokens(&request.body, template) as u64)
                }
                _ => turn,
            };
            let mut turn = turn;
            if let Err(message) = web_search::prepare(&mut turn.web_searches, request) {
                let body = error_body(request, "mock", &message);
                return json_response(418, &[], &body);
            }
            let turn = turn.prepared(&shared.reasoning, request.format());
            let llama_cpp = shared.llama_cpp.load(Ordering::SeqCst);
            let turn = if llama_cpp {
                llamacpp::prepare(turn, request)
            } else {
                turn
            };
            match (request.format(), request.is_stream()) {
                (Some(WireFormat::Responses), false) => {
                    let sources = responses::wants_sources(request);
                    let body = responses::response(&turn, &shared.issued, sources);
                    return json_response(reply.status, &reply.headers, &body);
                }
                (Some(WireFormat::Responses), true) => {
                    let sources = responses::wants_sources(request);
                    responses::events(&turn, &shared.issued, sources)
                        .iter()
                        .map(|e| Bytes::from(sse_event(e)))
                        .collect()
                }
                (Some(WireFormat::Anthropic), false) => {
                    return json_response(reply.status, &reply.headers, &turn.anthropic_message());
                }
                (Some(WireFormat::Anthropic), true) => turn
                    .anthropic_events()
                    .iter()
                    .map(|e| Bytes::from(sse_event(e)))
                    .collect(),
                (_, false) => {
                    return json_response(reply.status, &reply.headers, &turn.openai_completion());
                }
                (_, true) if llama_cpp => {
                    let mut pieces: Vec<Bytes> = llamacpp::chunks(&turn)
                        .iter()
                        .map(|c| Bytes::from(sse_data(c)))
                        .collect();
                    pieces.push(Bytes::from_static(SSE_DONE.as_bytes()));
                    pieces
                }
                (_, true) => {
                    let usage = request.body["stream_options"]["include_usage"] == true;
                    let mut pieces: Vec<Bytes> = turn
                        .openai_chunks()
                        .iter()
                        // The usage chunk is the one without choices; it comes only on request.
                        .filter(|c| usage || c["choices"] != json!([]))
                        .map(|c| Bytes::from(sse_data(c)))
                        .collect();
                    pieces.push(Bytes::from_static(SSE_DONE.as_bytes()));
                    pieces
                }
            }
        }
        reply::Body::Sse(pieces) => pieces,
    };
    let pieces = match reply.stream.split_every {
        Some(bytes) => reply::recut(pieces, bytes),
        None => pieces,
    };
    let mut builder = Response::builder()
        .status(reply.status)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache");
    for (name, value) in &reply.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder
        .body(Body::from_stream(sending::stream(
            pieces,
            reply.stream,
            shared.clone(),
        )))
        .expect("a valid event-stream response")
}
