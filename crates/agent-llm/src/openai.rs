//! The client for OpenAI-compatible chat completions: OpenAI, DeepSeek, Qwen (DashScope
//! compatible mode), Ollama, vLLM, llama.cpp's server, LM Studio and others.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use futures::StreamExt;
use reqwest::Response;
use serde_json::Value;

use crate::client::{ChatStream, LlmClient, response_events, stream_of};
use crate::error::LlmError;
use crate::formats::openai as format;
use crate::http::{
    NOTICE_TARGET, Timeouts, Transport, check_headers, endpoint, is_json, sse_stream,
};
use crate::models::ModelInfo;
use crate::retry::RetryPolicy;
use crate::types::ChatRequest;
use crate::window::ContextWindow;

/// The base URL of OpenAI's API.
pub const OPENAI_DEFAULT_BASE_URL: &str = crate::http::OPENAI_BASE_URL;

/// How an [`OpenAiClient`] talks to its server.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiConfig {
    /// The API base, version path included (`http://localhost:11434/v1`); requests go to
    /// `{base_url}/chat/completions`.
    pub base_url: String,
    /// The API key, sent as `Authorization: Bearer …` when set (local servers need none).
    pub api_key: Option<String>,
    /// More headers sent with every request (for example `OpenAI-Organization`).
    pub extra_headers: Vec<(String, String)>,
    /// Whether to ask for a streamed response (`stream: true`). When a server refuses to
    /// stream a model's answer (an empty `200` stream, or an error saying streaming is not
    /// supported), the client asks again without streaming and keeps to that for the model;
    /// `false` never asks for a stream.
    pub streaming: bool,
    /// The deadlines.
    pub timeouts: Timeouts,
    /// The retry policy.
    pub retry: RetryPolicy,
    /// The context window to report for every model, overriding the built-in table (for local
    /// models).
    pub context_window: Option<usize>,
}

impl Default for OpenAiConfig {
    /// OpenAI's API, streaming, no key.
    fn default() -> Self {
        OpenAiConfig {
            base_url: OPENAI_DEFAULT_BASE_URL.to_string(),
            api_key: None,
            extra_headers: Vec::new(),
            streaming: true,
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            context_window: None,
        }
    }
}

impl OpenAiConfig {
    /// A config for `base_url` (version path included) with this key.
    pub fn new(base_url: impl Into<String>, api_key: Option<String>) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            api_key,
            ..OpenAiConfig::default()
        }
    }

    /// A config from the environment, as the official SDKs read it: the key from
    /// `OPENAI_API_KEY`, the base from `OPENAI_BASE_URL` (default
    /// [`OPENAI_DEFAULT_BASE_URL`]).
    pub fn from_env() -> Self {
        let non_empty = |name| {
            std::env::var(name)
                .ok()
                .filter(|value: &String| !value.trim().is_empty())
        };
        OpenAiConfig {
            base_url: non_empty("OPENAI_BASE_URL")
                .unwrap_or_else(|| OPENAI_DEFAULT_BASE_URL.to_string()),
            api_key: non_empty("OPENAI_API_KEY"),
            ..OpenAiConfig::default()
        }
    }

    /// The same config with one more header.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.extra_headers.push((name.into(), value.into()));
        self
    }

    /// The same config with streaming on or off.
    #[must_use]
    pub fn with_streaming(self, streaming: bool) -> Self {
        OpenAiConfig { streaming, ..self }
    }

    /// The same config with this retry policy.
    #[must_use]
    pub fn with_retry(self, retry: RetryPolicy) -> Self {
        OpenAiConfig { retry, ..self }
    }

    /// The same config with these deadlines.
    #[must_use]
    pub fn with_timeouts(self, timeouts: Timeouts) -> Self {
        OpenAiConfig { timeouts, ..self }
    }
}

/// A client for an OpenAI-compatible chat-completions API.
///
/// Clones share the models found not to stream (see [`OpenAiConfig::streaming`]) and the
/// windows learned from the server ([`LlmClient::learn_window`]).
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    config: OpenAiConfig,
    endpoint: String,
    transport: Transport,
    /// The models whose server refused to stream their answers.
    unstreamed: Arc<Mutex<HashSet<String>>>,
    /// What the server said of each model's window when asked.
    windows: Arc<Mutex<HashMap<String, Option<ContextWindow>>>>,
}

/// How one request is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Delivery {
    /// `stream: true`, read as server-sent events.
    Streamed,
    /// One JSON body.
    Whole,
}

impl OpenAiClient {
    /// A client with this config. Fails on an invalid base URL or header.
    pub fn new(config: OpenAiConfig) -> Result<Self, LlmError> {
        let endpoint = endpoint(&config.base_url, "/chat/completions")?;
        check_headers(&config.extra_headers)?;
        let transport = Transport::new(config.retry.clone(), config.timeouts)?;
        Ok(OpenAiClient {
            config,
            endpoint,
            transport,
            unstreamed: Arc::default(),
            windows: Arc::default(),
        })
    }

    /// The client's config.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// The same client asking for streamed answers or not (see [`OpenAiConfig::streaming`]).
    #[must_use]
    pub fn with_streaming(mut self, streaming: bool) -> Self {
        self.config.streaming = streaming;
        self
    }

    /// Whether requests for `model` ask for a stream (unless a request says otherwise with
    /// [`ChatRequest::stream`]): the config says so and the server has not refused to stream
    /// this model.
    pub fn streams(&self, model: &str) -> bool {
        self.config.streaming && !self.refused_streaming(model)
    }

    /// Whether the server refused to stream answers of `model`.
    fn refused_streaming(&self, model: &str) -> bool {
        self.unstreamed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(model)
    }

    /// Keeps `model` to whole answers from now on, and says so once.
    fn stop_streaming(&self, model: &str, why: &str) {
        let newly = self
            .unstreamed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(model.to_string());
        if newly {
            let notice = crate::notice::Notice::WholeAnswers {
                model: model.to_owned(),
                why: why.to_owned(),
            };
            tracing::info!(target: NOTICE_TARGET, model, "{notice}");
            crate::notice::give(&notice);
        }
    }

    async fn send(&self, request: &ChatRequest, delivery: Delivery) -> Result<Response, LlmError> {
        let streaming = delivery == Delivery::Streamed;
        let body = format::request_body(request, streaming);
        let build = |client: &reqwest::Client| {
            let mut builder = client.post(&self.endpoint).json(&body);
            if let Some(key) = &self.config.api_key {
                builder = builder.bearer_auth(key);
            }
            if streaming {
                builder = builder.header(reqwest::header::ACCEPT, "text/event-stream");
            }
            for (name, value) in &self.config.extra_headers {
                builder = builder.header(name.as_str(), value.as_str());
            }
            builder
        };
        self.transport.send(build, format::parse_error).await
    }

    /// The answer as one JSON body.
    async fn whole(&self, request: &ChatRequest) -> Result<ChatStream, LlmError> {
        let response = self.send(request, Delivery::Whole).await?;
        self.read_whole(response).await
    }

    async fn read_whole(&self, response: Response) -> Result<ChatStream, LlmError> {
        let body = self.transport.read_body(response).await?;
        if body.trim().is_empty() {
            return Err(LlmError::empty("the response body is empty"));
        }
        Ok(stream_of(response_events(format::parse_response(&body)?)))
    }

    /// The answer as a stream, or why the server declined to stream it (an empty stream, or
    /// an error saying it cannot stream this request).
    async fn streamed(
        &self,
        request: &ChatRequest,
    ) -> Result<Result<ChatStream, &'static str>, LlmError> {
        const EMPTY: &str = "it ended a streamed response without data";
        let response = match self.send(request, Delivery::Streamed).await {
            Ok(response) => response,
            Err(error) if refuses_streaming(&error) => {
                return Ok(Err("it said streaming is not supported"));
            }
            Err(error) => return Err(error),
        };
        // A server that ignores `stream: true` and answers with one JSON body is read as such.
        if is_json(&response) {
            return self.read_whole(response).await.map(Ok);
        }
        let decoder = format::StreamDecoder::default();
        let mut stream = sse_stream(response, self.transport.timeouts.idle, decoder);
        // The first event tells an answer from a server that ended the stream without one.
        match stream.next().await {
            Some(Err(LlmError::EmptyResponse { .. })) | None => Ok(Err(EMPTY)),
            Some(first) => Ok(Ok(Box::pin(
                futures::stream::once(async { first }).chain(stream),
            ))),
        }
    }
}

/// Whether an error to a streamed request says the server cannot stream it (llama.cpp's
/// "Automatic streaming tool choice is not supported").
fn refuses_streaming(error: &LlmError) -> bool {
    match error {
        LlmError::BadRequest { message, .. } | LlmError::Server { message, .. } => {
            let message = message.to_lowercase();
            message.contains("stream") && message.contains("not supported")
        }
        _ => false,
    }
}

#[async_trait::async_trait]
impl LlmClient for OpenAiClient {
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        let asked = request.stream.unwrap_or(self.config.streaming);
        if !asked || self.refused_streaming(&request.model) {
            return self.whole(&request).await;
        }
        let why = match self.streamed(&request).await? {
            Ok(stream) => return Ok(stream),
            Err(why) => why,
        };
        // The server declined to stream. Asked for a whole answer, it gives its real answer, or
        // its real error (llama.cpp's context overflow is an empty stream but a proper 400),
        // and only an answer shows that streaming was the trouble.
        let answer = self.whole(&request).await?;
        self.stop_streaming(&request.model, why);
        Ok(answer)
    }

    /// The table's facts, with the configured window, else the one the server said.
    fn model_info(&self, model: &str) -> ModelInfo {
        let info = ModelInfo::lookup(model);
        let window = self
            .config
            .context_window
            .or_else(|| self.known_window(model).map(|window| window.tokens));
        match window {
            Some(window) => info.with_context_window(window),
            None => info,
        }
    }

    /// Asks the server (never OpenAI's own API, whose models the table knows, and not when the
    /// window is configured), once per model; a server that says nothing gets the table's
    /// window, [`WindowSource::Table`](crate::WindowSource::Table) or
    /// [`Assumed`](crate::WindowSource::Assumed).
    async fn learn_window(&self, model: &str) -> Option<ContextWindow> {
        if self.config.context_window.is_some()
            || self.config.base_url.trim_end_matches('/') == OPENAI_DEFAULT_BASE_URL
        {
            return None;
        }
        if let Some(known) = self.windows().get(model) {
            return *known;
        }
        // A server that says nothing leaves the table's window (or the default, assumed).
        let server = crate::window_probe::Server {
            base_url: &self.config.base_url,
            api_key: self.config.api_key.as_deref(),
            extra_headers: &self.config.extra_headers,
        };
        let window = crate::window_probe::ask(&server, model)
            .await
            .unwrap_or_else(|| ContextWindow::from_table(model));
        self.windows().insert(model.to_owned(), Some(window));
        Some(window)
    }

    fn known_window(&self, model: &str) -> Option<ContextWindow> {
        self.windows().get(model).copied().flatten()
    }
}

impl OpenAiClient {
    fn windows(&self) -> std::sync::MutexGuard<'_, HashMap<String, Option<ContextWindow>>> {
        self.windows.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The models an OpenAI-compatible server serves (`GET {base_url}/models`), by id, in the
/// order it lists them. A local server (llama.cpp, vLLM, LM Studio, Ollama) usually serves
/// one, which is what a caller without a model name asks for.
pub async fn list_models(config: &OpenAiConfig) -> Result<Vec<String>, LlmError> {
    let endpoint = endpoint(&config.base_url, "/models")?;
    check_headers(&config.extra_headers)?;
    let transport = Transport::new(config.retry.clone(), config.timeouts)?;
    let build = |client: &reqwest::Client| {
        let mut builder = client.get(&endpoint);
        if let Some(key) = &config.api_key {
            builder = builder.bearer_auth(key);
        }
        for (name, value) in &config.extra_headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        builder
    };
    let response = transport.send(build, format::parse_error).await?;
    let body = transport.read_body(response).await?;
    let value: Value = serde_json::from_str(&body)
        .map_err(|err| LlmError::malformed(format!("invalid model list: {err}")))?;
    let Some(models) = value.get("data").and_then(Value::as_array) else {
        return Err(LlmError::malformed("the model list has no `data` array"));
    };
    Ok(models
        .iter()
        .filter_map(|model| model.get("id").and_then(Value::as_str))
        .map(str::to_string)
        .collect())
}
