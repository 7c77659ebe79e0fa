//! The client for Anthropic's Messages API.

use crate::client::{ChatStream, LlmClient, response_events, stream_of};
use crate::error::LlmError;
use crate::formats::anthropic::{self as format, PromptCache};
use crate::formats::anthropic_search as search;
use crate::http::{Timeouts, Transport, check_headers, endpoint, is_json, sse_stream};
use crate::models::ModelInfo;
use crate::retry::RetryPolicy;
use crate::types::ChatRequest;
use crate::web_search::{WebSearchAnswer, WebSearchOptions};

/// How many times a search that pauses (`pause_turn`) is sent back to go on.
const SEARCH_CONTINUATIONS: usize = 3;

/// The most tokens the model may write of a web search's results.
const SEARCH_ANSWER_TOKENS: u32 = 4_096;

/// The base URL of Anthropic's API (no version path).
pub const ANTHROPIC_DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The `anthropic-version` header sent by default.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// How an [`AnthropicClient`] talks to its server.
#[derive(Debug, Clone, PartialEq)]
pub struct AnthropicConfig {
    /// The API base without the version path (`https://api.anthropic.com`); requests go to
    /// `{base_url}/v1/messages`.
    pub base_url: String,
    /// The API key, sent as `x-api-key`.
    pub api_key: Option<String>,
    /// The `anthropic-version` header.
    pub version: String,
    /// More headers sent with every request (for example `anthropic-beta`).
    pub extra_headers: Vec<(String, String)>,
    /// Whether to ask for a streamed response.
    pub streaming: bool,
    /// `max_tokens` for requests that set none (the API requires one); capped by the model's
    /// known output limit.
    pub default_max_tokens: u32,
    /// The deadlines.
    pub timeouts: Timeouts,
    /// The retry policy.
    pub retry: RetryPolicy,
    /// The context window to report for every model, overriding the built-in table.
    pub context_window: Option<usize>,
    /// Which parts of a request are marked for Anthropic's prompt cache.
    pub prompt_cache: PromptCache,
}

impl Default for AnthropicConfig {
    /// Anthropic's API, streaming, no key.
    fn default() -> Self {
        AnthropicConfig {
            base_url: ANTHROPIC_DEFAULT_BASE_URL.to_string(),
            api_key: None,
            version: ANTHROPIC_VERSION.to_string(),
            extra_headers: Vec::new(),
            streaming: true,
            default_max_tokens: 8_192,
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            context_window: None,
            prompt_cache: PromptCache::default(),
        }
    }
}

impl AnthropicConfig {
    /// A config for `base_url` (no version path) with this key.
    pub fn new(base_url: impl Into<String>, api_key: Option<String>) -> Self {
        AnthropicConfig {
            base_url: base_url.into(),
            api_key,
            ..AnthropicConfig::default()
        }
    }

    /// A config from the environment, as the official SDKs read it: the key from
    /// `ANTHROPIC_API_KEY`, the base from `ANTHROPIC_BASE_URL` (default
    /// [`ANTHROPIC_DEFAULT_BASE_URL`]).
    pub fn from_env() -> Self {
        let non_empty = |name| {
            std::env::var(name)
                .ok()
                .filter(|value: &String| !value.trim().is_empty())
        };
        AnthropicConfig {
            base_url: non_empty("ANTHROPIC_BASE_URL")
                .unwrap_or_else(|| ANTHROPIC_DEFAULT_BASE_URL.to_string()),
            api_key: non_empty("ANTHROPIC_API_KEY"),
            ..AnthropicConfig::default()
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
        AnthropicConfig { streaming, ..self }
    }

    /// The same config with this retry policy.
    #[must_use]
    pub fn with_retry(self, retry: RetryPolicy) -> Self {
        AnthropicConfig { retry, ..self }
    }

    /// The same config with these deadlines.
    #[must_use]
    pub fn with_timeouts(self, timeouts: Timeouts) -> Self {
        AnthropicConfig { timeouts, ..self }
    }

    /// The same config with these prompt-cache breakpoints.
    #[must_use]
    pub fn with_prompt_cache(self, prompt_cache: PromptCache) -> Self {
        AnthropicConfig {
            prompt_cache,
            ..self
        }
    }
}

/// A client for Anthropic's Messages API.
#[derive(Debug, Clone)]
pub struct AnthropicClient {
    config: AnthropicConfig,
    endpoint: String,
    transport: Transport,
}

impl AnthropicClient {
    /// A client with this config. Fails on an invalid base URL or header.
    pub fn new(config: AnthropicConfig) -> Result<Self, LlmError> {
        let endpoint = endpoint(&config.base_url, "/v1/messages")?;
        check_headers(&config.extra_headers)?;
        check_headers(&[("anthropic-version".to_string(), config.version.clone())])?;
        let transport = Transport::new(config.retry.clone(), config.timeouts)?;
        Ok(AnthropicClient {
            config,
            endpoint,
            transport,
        })
    }

    /// The client's config.
    pub fn config(&self) -> &AnthropicConfig {
        &self.config
    }

    /// A request of `body` to the Messages endpoint with the client's headers.
    fn post(
        &self,
        client: &reqwest::Client,
        body: &serde_json::Value,
        streaming: bool,
    ) -> reqwest::RequestBuilder {
        let mut builder = client
            .post(&self.endpoint)
            .header("anthropic-version", self.config.version.as_str())
            .json(body);
        if let Some(key) = &self.config.api_key {
            builder = builder.header("x-api-key", key.as_str());
        }
        if streaming {
            builder = builder.header(reqwest::header::ACCEPT, "text/event-stream");
        }
        for (name, value) in &self.config.extra_headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        builder
    }

    fn max_tokens(&self, model: &str) -> u32 {
        let limit = ModelInfo::lookup(model)
            .max_output_tokens
            .unwrap_or(u32::MAX);
        self.config.default_max_tokens.min(limit)
    }
}

#[async_trait::async_trait]
impl LlmClient for AnthropicClient {
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        let streaming = self.config.streaming;
        let body = format::request_body(
            &request,
            streaming,
            self.max_tokens(&request.model),
            self.config.prompt_cache,
        );
        let build = |client: &reqwest::Client| self.post(client, &body, streaming);
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

    fn offers_web_search(&self) -> bool {
        true
    }

    /// One non-streamed request declaring the web search tool; a reply that pauses is sent
    /// back (at most three times) so that the model finishes.
    async fn web_search(
        &self,
        model: &str,
        query: &str,
        options: &WebSearchOptions,
    ) -> Result<WebSearchAnswer, LlmError> {
        let mut answer = WebSearchAnswer::default();
        let mut failures = Vec::new();
        let mut paused = Vec::new();
        for _ in 0..=SEARCH_CONTINUATIONS {
            // What the model writes of the results is short; a whole answer's room would let
            // one non-streamed request run for minutes.
            let room = self.max_tokens(model).min(SEARCH_ANSWER_TOKENS);
            let body = search::search_body(model, query, options, room, &paused);
            let response = self
                .transport
                .send(
                    |client| self.post(client, &body, false),
                    format::parse_error,
                )
                .await?;
            let text = self.transport.read_body(response).await?;
            let reply = search::read_reply(&text, &mut answer, &mut failures)?;
            if !reply.paused {
                break;
            }
            paused.push(reply.content);
        }
        if answer.sources.is_empty()
            && let Some(code) = failures.pop()
        {
            return Err(LlmError::ServerTool {
                tool: "web_search".to_owned(),
                code,
            });
        }
        Ok(answer)
    }
}
