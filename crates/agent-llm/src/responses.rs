//! The client for the OpenAI Responses API (`POST {base}/responses`), the API Codex CLI speaks
//! and the only one some OpenAI models are served on ([`responses_only`]).

use crate::client::{ChatStream, LlmClient, response_events, stream_of};
use crate::error::LlmError;
use crate::formats::responses as format;
use crate::http::{
    OPENAI_BASE_URL, Timeouts, Transport, check_headers, endpoint, is_json, sse_stream,
};
use crate::models::ModelInfo;
use crate::retry::RetryPolicy;
use crate::types::ChatRequest;
use crate::web_search::{WebSearchAnswer, WebSearchOptions};

/// The name prefixes of OpenAI models served only on the Responses API, not on chat
/// completions.
const RESPONSES_ONLY_PREFIXES: &[&str] = &[
    "o1-pro",
    "o3-pro",
    "o3-deep-research",
    "o4-mini-deep-research",
    "codex-mini",
    "gpt-5-codex",
    "gpt-5-pro",
    "computer-use-preview",
];

/// Whether OpenAI serves `model` only on the Responses API (`o1-pro`, `o3-pro`, the
/// deep-research models, `codex-mini`, `gpt-5-codex`, `gpt-5-pro`, `computer-use-preview`,
/// with any dated suffix; a `provider/` prefix is ignored). Callers that default to chat
/// completions use it to pick [`OpenAiResponsesClient`] for these models.
///
/// ```
/// assert!(agent_llm::responses_only("gpt-5-codex"));
/// assert!(agent_llm::responses_only("o3-pro-2025-06-10"));
/// assert!(!agent_llm::responses_only("gpt-5"));
/// ```
pub fn responses_only(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    RESPONSES_ONLY_PREFIXES
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// How an [`OpenAiResponsesClient`] talks to its server.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiResponsesConfig {
    /// The API base, version path included (`https://api.openai.com/v1`); requests go to
    /// `{base_url}/responses`.
    pub base_url: String,
    /// The API key, sent as `Authorization: Bearer …` when set.
    pub api_key: Option<String>,
    /// More headers sent with every request (for example `OpenAI-Organization`).
    pub extra_headers: Vec<(String, String)>,
    /// `reasoning.effort` for reasoning models (`minimal`, `low`, `medium`, `high`); the
    /// server's default when `None`.
    pub reasoning_effort: Option<String>,
    /// `reasoning.summary` for reasoning models (`auto`, `concise`, `detailed`); `auto` by
    /// default, `None` asks for no summary (organisations that are not verified get none).
    pub reasoning_summary: Option<String>,
    /// The deadlines.
    pub timeouts: Timeouts,
    /// The retry policy.
    pub retry: RetryPolicy,
    /// The context window to report for every model, overriding the built-in table.
    pub context_window: Option<usize>,
}

impl Default for OpenAiResponsesConfig {
    /// OpenAI's API, summaries on, no key.
    fn default() -> Self {
        OpenAiResponsesConfig {
            base_url: OPENAI_BASE_URL.to_string(),
            api_key: None,
            extra_headers: Vec::new(),
            reasoning_effort: None,
            reasoning_summary: Some("auto".to_string()),
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            context_window: None,
        }
    }
}

impl OpenAiResponsesConfig {
    /// A config for `base_url` (version path included) with this key.
    pub fn new(base_url: impl Into<String>, api_key: Option<String>) -> Self {
        OpenAiResponsesConfig {
            base_url: base_url.into(),
            api_key,
            ..OpenAiResponsesConfig::default()
        }
    }

    /// A config from the environment, as the official SDKs read it: the key from
    /// `OPENAI_API_KEY`, the base from `OPENAI_BASE_URL` (default OpenAI's,
    /// `https://api.openai.com/v1`).
    pub fn from_env() -> Self {
        let non_empty = |name| {
            std::env::var(name)
                .ok()
                .filter(|value: &String| !value.trim().is_empty())
        };
        OpenAiResponsesConfig {
            base_url: non_empty("OPENAI_BASE_URL").unwrap_or_else(|| OPENAI_BASE_URL.to_string()),
            api_key: non_empty("OPENAI_API_KEY"),
            ..OpenAiResponsesConfig::default()
        }
    }

    /// The same config with one more header.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.extra_headers.push((name.into(), value.into()));
        self
    }

    /// The same config with this reasoning effort.
    #[must_use]
    pub fn with_reasoning_effort(self, effort: impl Into<String>) -> Self {
        OpenAiResponsesConfig {
            reasoning_effort: Some(effort.into()),
            ..self
        }
    }

    /// The same config with this retry policy.
    #[must_use]
    pub fn with_retry(self, retry: RetryPolicy) -> Self {
        OpenAiResponsesConfig { retry, ..self }
    }

    /// The same config with these deadlines.
    #[must_use]
    pub fn with_timeouts(self, timeouts: Timeouts) -> Self {
        OpenAiResponsesConfig { timeouts, ..self }
    }
}

/// A client for the OpenAI Responses API. It always streams and never stores responses on the
/// server (`store: false`): each request carries the whole conversation, reasoning items
/// included.
#[derive(Debug, Clone)]
pub struct OpenAiResponsesClient {
    config: OpenAiResponsesConfig,
    endpoint: String,
    transport: Transport,
}

impl OpenAiResponsesClient {
    /// A client with this config. Fails on an invalid base URL or header.
    pub fn new(config: OpenAiResponsesConfig) -> Result<Self, LlmError> {
        let endpoint = endpoint(&config.base_url, "/responses")?;
        check_headers(&config.extra_headers)?;
        let transport = Transport::new(config.retry.clone(), config.timeouts)?;
        Ok(OpenAiResponsesClient {
            config,
            endpoint,
            transport,
        })
    }

    /// The client's config.
    pub fn config(&self) -> &OpenAiResponsesConfig {
        &self.config
    }

    /// A request of `body` to the endpoint with the client's key and headers.
    fn post(&self, client: &reqwest::Client, body: &serde_json::Value) -> reqwest::RequestBuilder {
        let mut builder = client.post(&self.endpoint).json(body);
        if let Some(key) = &self.config.api_key {
            builder = builder.bearer_auth(key);
        }
        for (name, value) in &self.config.extra_headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        builder
    }
}

#[async_trait::async_trait]
impl LlmClient for OpenAiResponsesClient {
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        let reasoning = format::ReasoningOptions {
            effort: self.config.reasoning_effort.as_deref(),
            summary: self.config.reasoning_summary.as_deref(),
        };
        let body = format::request_body(&request, &reasoning);
        let build = |client: &reqwest::Client| {
            self.post(client, &body)
                .header(reqwest::header::ACCEPT, "text/event-stream")
        };
        let response = self.transport.send(build, format::parse_error).await?;
        // A server that ignores `stream: true` and answers with one response object is read
        // as such.
        if is_json(&response) {
            let body = self.transport.read_body(response).await?;
            Ok(stream_of(response_events(format::parse_response(&body)?)))
        } else {
            let decoder = format::StreamDecoder::default();
            Ok(sse_stream(response, self.transport.timeouts.idle, decoder))
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

    /// One non-streamed request declaring the `web_search` tool.
    async fn web_search(
        &self,
        model: &str,
        query: &str,
        options: &WebSearchOptions,
    ) -> Result<WebSearchAnswer, LlmError> {
        let body = format::search_body(model, query, options);
        let response = self
            .transport
            .send(|client| self.post(client, &body), format::parse_error)
            .await?;
        let text = self.transport.read_body(response).await?;
        format::read_search(&text, options)
    }
}
