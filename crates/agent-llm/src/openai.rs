//! The client for OpenAI-compatible chat completions: OpenAI, DeepSeek, Qwen (DashScope
//! compatible mode), Ollama, vLLM, llama.cpp's server, LM Studio and others.

use crate::client::{ChatStream, LlmClient, response_events, stream_of};
use crate::error::LlmError;
use crate::formats::openai as format;
use crate::http::{Timeouts, Transport, check_headers, endpoint, is_json, sse_stream};
use crate::models::ModelInfo;
use crate::retry::RetryPolicy;
use crate::types::ChatRequest;

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
    /// Whether to ask for a streamed response (`stream: true`); some servers only do one.
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
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.extra_headers.push((name.into(), value.into()));
        self
    }

    /// The same config with streaming on or off.
    pub fn with_streaming(self, streaming: bool) -> Self {
        OpenAiConfig { streaming, ..self }
    }

    /// The same config with this retry policy.
    pub fn with_retry(self, retry: RetryPolicy) -> Self {
        OpenAiConfig { retry, ..self }
    }

    /// The same config with these deadlines.
    pub fn with_timeouts(self, timeouts: Timeouts) -> Self {
        OpenAiConfig { timeouts, ..self }
    }
}

/// A client for an OpenAI-compatible chat-completions API.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    config: OpenAiConfig,
    endpoint: String,
    transport: Transport,
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
        })
    }

    /// The client's config.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }
}

#[async_trait::async_trait]
impl LlmClient for OpenAiClient {
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        let streaming = self.config.streaming;
        let body = format::request_body(&request, streaming);
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
        let response = self.transport.send(build, format::parse_error).await?;
        // A server that ignores `stream: true` and answers with one JSON body is read as such.
        if streaming && !is_json(&response) {
            let decoder = format::StreamDecoder::default();
            Ok(sse_stream(response, self.transport.timeouts.idle, decoder))
        } else {
            let body = self.transport.read_body(response).await?;
            Ok(stream_of(response_events(format::parse_response(&body)?)))
        }
    }

    fn model_info(&self, model: &str) -> ModelInfo {
        let info = ModelInfo::lookup(model);
        match self.config.context_window {
            Some(window) => info.with_context_window(window),
            None => info,
        }
    }
}
