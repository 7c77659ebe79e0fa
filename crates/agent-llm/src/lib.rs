//! Chat types, the LLM client trait and model providers: OpenAI-compatible chat completions,
//! the OpenAI Responses API, Anthropic Messages, and a scripted provider for tests and offline
//! demos.
//!
//! The runner talks to models only through this crate. It owns the provider-neutral chat types
//! ([`ChatMessage`], [`ToolCall`], [`ToolSpec`], [`Usage`], [`ChatRequest`], [`ChatResponse`]),
//! the object-safe [`LlmClient`] trait whose primitive is a stream of [`ChatEvent`]s, the one
//! error type [`LlmError`], retries with backoff ([`RetryPolicy`]) and deadlines
//! ([`Timeouts`]), what a client does to work around its server ([`notice`]), token estimation
//! ([`estimate_tokens`]) and costs ([`PriceTable`]), and pictures ([`ChatImage`]: read from
//! bytes, sent in each wire format, counted by [`ImageTokens`], and which models take them,
//! [`Vision`]). It stands
//! alone: it depends on no other crate of the workspace, so other projects can use it by
//! itself.
//!
//! ```
//! use std::sync::Arc;
//! use agent_llm::{ChatMessage, ChatRequest, LlmClient, ScriptedClient, ScriptedTurn};
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let scripted = ScriptedClient::new(vec![
//!     ScriptedTurn::tool_call("goal", json!({"add": "A, B"})),
//!     ScriptedTurn::text("done"),
//! ]);
//! let client: Arc<dyn LlmClient> = Arc::new(scripted.clone());
//! let request = ChatRequest::new("scripted", vec![ChatMessage::user("Plan it.")]);
//! let first = client.complete(request.clone()).await.unwrap();
//! assert_eq!(first.tool_calls[0].name, "goal");
//! assert_eq!(first.tool_calls[0].arguments, r#"{"add":"A, B"}"#);
//! let second = client.complete(request).await.unwrap();
//! assert_eq!(second.text.as_deref(), Some("done"));
//! assert_eq!(scripted.requests().len(), 2);
//! # });
//! ```
//!
//! # Features
//!
//! All on by default. Without any, the crate is the chat types, [`LlmClient`],
//! [`ScriptedClient`], [`ModelInfo`], [`PriceTable`] and token estimation, and it must not
//! depend on an HTTP or TLS stack or a tokenizer: no reqwest, hyper, rustls, ring or
//! tiktoken-rs (`cargo tree -e normal -p goaltree-llm --no-default-features` shows none).
//!
//! | feature | brings |
//! |---|---|
//! | `openai` | [`OpenAiClient`] and the OpenAI chat-completions wire format; [`StreamFormat::OpenAi`] for [`decode_recorded_stream`]. Enables `http`. |
//! | `openai-responses` | [`OpenAiResponsesClient`], [`responses_only`] and the OpenAI Responses wire format; [`StreamFormat::OpenAiResponses`]. Enables `http`. |
//! | `anthropic` | [`AnthropicClient`], [`PromptCache`] and the Anthropic Messages wire format; [`StreamFormat::Anthropic`]. Enables `http`. |
//! | `http` | the transport both providers share, on reqwest, rustls with ring, eventsource-stream and rand: [`Timeouts`], [`RetryPolicy`], [`ensure_crypto_provider`]. Implied by the providers; of no use alone. |
//! | `tiktoken` | [`estimate_tokens`] and the functions built on it count with tiktoken's `o200k_base` encoding. Without it they estimate one token per 4 bytes of UTF-8, rounded up: deterministic and free, close for English prose, high for multi-byte scripts. |
//!
//! [`StreamFormat`] and [`decode_recorded_stream`] exist with any provider feature; the
//! enum has a variant per enabled provider and is `#[non_exhaustive]`.
//!
//! # Providers
//!
//! - [`OpenAiClient`]: any OpenAI-compatible chat-completions server. Its base URL includes the
//!   version path (`http://host:port/v1`) and requests go to `{base}/chat/completions`;
//!   [`OpenAiConfig::from_env`] reads `OPENAI_BASE_URL` and `OPENAI_API_KEY`.
//! - [`OpenAiResponsesClient`]: the OpenAI Responses API, which Codex CLI speaks and some
//!   OpenAI models are only served on ([`responses_only`] names them). Same base URL and
//!   environment as [`OpenAiClient`]; requests go to `{base}/responses` with `store: false`,
//!   so the model's reasoning comes back as encrypted [`Reasoning::Item`]s that the next
//!   request returns before the function calls they preceded.
//! - [`AnthropicClient`]: Anthropic Messages. Its base URL has no version path
//!   (`http://host:port`) and requests go to `{base}/v1/messages`;
//!   [`AnthropicConfig::from_env`] reads `ANTHROPIC_BASE_URL` and `ANTHROPIC_API_KEY`.
//! - [`ScriptedClient`]: answers from a script, deterministically, and records the requests.
//!
//! Web search: [`AnthropicClient`] (the `web_search_20250305` server tool) and
//! [`OpenAiResponsesClient`] (the `web_search` tool) run a search on the provider's servers with
//! [`LlmClient::web_search`] ([`WebSearchOptions`] in, [`WebSearchAnswer`] out: the model's
//! report, the pages with titles, links and quoted text, the queries run);
//! [`LlmClient::offers_web_search`] says which clients can. A search the provider could not
//! complete is [`LlmError::ServerTool`] with the provider's error code.
//!
//! Context windows: a local server runs its model with the window it was started with.
//! [`LlmClient::learn_window`] asks the server where it says it (llama.cpp's `/props`, the model
//! list's `max_model_len` or `meta.n_ctx`, Ollama's `/api/show`) and remembers the answer, a
//! [`ContextWindow`] with its [`WindowSource`]; [`stated_window`] reads the window out of a
//! refusal's message.
//!
//! Prompt caching: a request may carry several system messages; all but the last are static
//! and the last is the part that changes from call to call (the runner sends its system prompt,
//! then the plan). OpenAI-compatible servers get adjacent system messages joined into one, so
//! the static part is a byte-identical prefix that their automatic prefix caches reuse (some
//! chat templates take a single system message only). Anthropic gets one system block per
//! message with `cache_control` breakpoints on the tool specs, the static blocks and the newest
//! message ([`PromptCache`]). Both report cache reads in [`Usage::cached_tokens`], which
//! [`PriceTable`] prices at the cached-input rate.
//!
//! # The script format
//!
//! A script is JSON: either an array of turns, or an object with `turns` and optionally
//! `routes` (below), `fallback` (a final answer repeated once the turns run out; without it the
//! client returns [`LlmError::ScriptExhausted`]) and `context_window` (reported for every
//! model). Turns are answered in order, one per request, whatever the request says. A turn has:
//!
//! | field | meaning |
//! |---|---|
//! | `text` | the assistant's text |
//! | `tool_calls` | `[{"name", "arguments", "id"?}]`; `arguments` is a JSON value sent as its JSON text, or a string sent as it is (so malformed arguments can be scripted); `id` defaults to `call_<turn>_<n>` |
//! | `usage` | `{"prompt_tokens", "completion_tokens", "cached_tokens"?}`; estimated from the request and the answer when absent |
//! | `finish_reason` | defaults to `tool_calls` when there are tool calls, else `stop` |
//! | `error` | `{"kind", "message", "retry_after_ms"?}` returned instead of an answer; `kind` is one of `authentication`, `rate_limited`, `context_window_exceeded`, `bad_request`, `server`, `network`, `timeout`, `malformed_response` |
//! | `delay_ms` | a wait before answering |
//!
//! ```
//! use agent_llm::{ChatMessage, ChatRequest, LlmClient, LlmError, ScriptedClient};
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let client = ScriptedClient::from_json(json!({
//!     "turns": [
//!         {
//!             "text": "Let me look.",
//!             "tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}],
//!             "usage": {"prompt_tokens": 1200, "completion_tokens": 40}
//!         },
//!         {"error": {"kind": "context_window_exceeded", "message": "prompt is too long"}},
//!         {"text": "The README explains the build."}
//!     ]
//! }))
//! .unwrap();
//! let request = ChatRequest::new("scripted", vec![ChatMessage::user("What is in the README?")]);
//!
//! let first = client.complete(request.clone()).await.unwrap();
//! assert_eq!(first.tool_calls[0].id, "call_1_1");
//! assert_eq!(first.tool_calls[0].arguments, r#"{"path":"README.md"}"#);
//! assert_eq!(first.usage.unwrap().prompt_tokens, 1200);
//! assert!(matches!(
//!     client.complete(request.clone()).await,
//!     Err(LlmError::ContextWindowExceeded { .. })
//! ));
//! let third = client.complete(request.clone()).await.unwrap();
//! assert_eq!(third.finish_reason.as_deref(), Some("stop"));
//! assert!(third.usage.unwrap().prompt_tokens > 0, "usage is estimated when not scripted");
//! assert!(matches!(client.complete(request).await, Err(LlmError::ScriptExhausted { served: 3 })));
//! # });
//! ```
//!
//! ## Routes
//!
//! Conversations that run at the same time (the branches of an exploration, a delegated task)
//! reach the client in no fixed order. A route gives them their own queues:
//! `{"when_task_contains": "<text>", "turns": [...], "fallback"?: "<text>"}` answers, in order,
//! the requests whose **task** — the first user message — contains the text; other requests
//! take the main `turns`. When several routes match, the one whose text ends latest in the task
//! wins (the first listed on a tie): a sub-agent's first message states its own assignment after
//! any background, and the background may quote the other assignments. A route that runs out
//! answers its own `fallback`, else the script's, else [`LlmError::ScriptExhausted`]; it never
//! takes turns of the main queue. [`ScriptedClient::route_requests`] returns what a route saw.
//!
//! ```
//! use agent_llm::{ChatMessage, ChatRequest, LlmClient, ScriptedClient};
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let client = ScriptedClient::from_json(json!({
//!     "turns": [{"text": "main answer"}],
//!     "routes": [
//!         {"when_task_contains": "Try JWT", "turns": [{"text": "JWT works"}]},
//!         {"when_task_contains": "Try sessions", "turns": [{"text": "sessions need Redis"}]}
//!     ]
//! }))
//! .unwrap();
//! let ask = |task: &str| ChatRequest::new("scripted", vec![ChatMessage::user(task)]);
//!
//! // The background names both branches; the assignment at the end picks the route.
//! let branch = ask("Background: we weigh Try JWT against Try sessions.\n\nYour branch: Try sessions");
//! assert_eq!(client.complete(branch).await.unwrap().text.as_deref(), Some("sessions need Redis"));
//! let other = ask("Your branch: Try JWT");
//! assert_eq!(client.complete(other).await.unwrap().text.as_deref(), Some("JWT works"));
//! let main = ask("Add authentication");
//! assert_eq!(client.complete(main).await.unwrap().text.as_deref(), Some("main answer"));
//! assert_eq!(client.route_requests(1).len(), 1);
//! # });
//! ```
// Without a feature, its items are linked to the documentation built with every feature.
#![cfg_attr(
    not(feature = "openai"),
    doc = "[`OpenAiClient`]: https://docs.rs/goaltree-llm/latest/agent_llm/struct.OpenAiClient.html"
)]
#![cfg_attr(
    not(feature = "openai"),
    doc = "[`OpenAiConfig::from_env`]: https://docs.rs/goaltree-llm/latest/agent_llm/struct.OpenAiConfig.html#method.from_env"
)]
#![cfg_attr(
    not(feature = "openai-responses"),
    doc = "[`OpenAiResponsesClient`]: https://docs.rs/goaltree-llm/latest/agent_llm/struct.OpenAiResponsesClient.html"
)]
#![cfg_attr(
    not(feature = "openai-responses"),
    doc = "[`responses_only`]: https://docs.rs/goaltree-llm/latest/agent_llm/fn.responses_only.html"
)]
#![cfg_attr(
    not(feature = "anthropic"),
    doc = "[`AnthropicClient`]: https://docs.rs/goaltree-llm/latest/agent_llm/struct.AnthropicClient.html"
)]
#![cfg_attr(
    not(feature = "anthropic"),
    doc = "[`AnthropicConfig::from_env`]: https://docs.rs/goaltree-llm/latest/agent_llm/struct.AnthropicConfig.html#method.from_env"
)]
#![cfg_attr(
    not(feature = "anthropic"),
    doc = "[`PromptCache`]: https://docs.rs/goaltree-llm/latest/agent_llm/enum.PromptCache.html"
)]
#![cfg_attr(
    not(any(
        feature = "openai",
        feature = "openai-responses",
        feature = "anthropic"
    )),
    doc = "[`StreamFormat`]: https://docs.rs/goaltree-llm/latest/agent_llm/enum.StreamFormat.html"
)]
#![cfg_attr(
    not(feature = "openai"),
    doc = "[`StreamFormat::OpenAi`]: https://docs.rs/goaltree-llm/latest/agent_llm/enum.StreamFormat.html#variant.OpenAi"
)]
#![cfg_attr(
    not(feature = "openai-responses"),
    doc = "[`StreamFormat::OpenAiResponses`]: https://docs.rs/goaltree-llm/latest/agent_llm/enum.StreamFormat.html#variant.OpenAiResponses"
)]
#![cfg_attr(
    not(feature = "anthropic"),
    doc = "[`StreamFormat::Anthropic`]: https://docs.rs/goaltree-llm/latest/agent_llm/enum.StreamFormat.html#variant.Anthropic"
)]
#![cfg_attr(
    not(any(
        feature = "openai",
        feature = "openai-responses",
        feature = "anthropic"
    )),
    doc = "[`decode_recorded_stream`]: https://docs.rs/goaltree-llm/latest/agent_llm/fn.decode_recorded_stream.html"
)]
#![cfg_attr(
    not(feature = "http"),
    doc = "[`RetryPolicy`]: https://docs.rs/goaltree-llm/latest/agent_llm/struct.RetryPolicy.html"
)]
#![cfg_attr(
    not(feature = "http"),
    doc = "[`Timeouts`]: https://docs.rs/goaltree-llm/latest/agent_llm/struct.Timeouts.html"
)]
#![cfg_attr(
    not(feature = "http"),
    doc = "[`ensure_crypto_provider`]: https://docs.rs/goaltree-llm/latest/agent_llm/fn.ensure_crypto_provider.html"
)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

#[cfg(feature = "anthropic")]
mod anthropic;
mod client;
mod cost;
mod error;
// The wire formats (each provider's gated by its feature inside `formats`) and the transport
// need the crates of `http`. `http` without a provider exposes only `Timeouts`, `RetryPolicy`
// and `ensure_crypto_provider`; the rest then has no caller.
#[cfg(feature = "http")]
#[cfg_attr(
    not(any(
        feature = "openai",
        feature = "anthropic",
        feature = "openai-responses"
    )),
    allow(dead_code)
)]
mod formats;
#[cfg(feature = "http")]
#[cfg_attr(
    not(any(
        feature = "openai",
        feature = "anthropic",
        feature = "openai-responses"
    )),
    allow(dead_code)
)]
mod http;
mod image;
mod image_message;
mod models;
pub mod notice;
#[cfg(feature = "tiktoken")]
mod o200k;
#[cfg(feature = "openai")]
mod openai;
mod provider_kind;
mod reasoning;
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "openai-responses"
))]
mod replay;
#[cfg(feature = "openai-responses")]
mod responses;
#[cfg(feature = "http")]
#[cfg_attr(
    not(any(
        feature = "openai",
        feature = "anthropic",
        feature = "openai-responses"
    )),
    allow(dead_code)
)]
mod retry;
mod scripted;
mod tokens;
mod turn;
mod types;
mod usage;
mod web_search;
mod window;
#[cfg(feature = "openai")]
mod window_probe;

#[cfg(feature = "anthropic")]
pub use anthropic::{
    ANTHROPIC_DEFAULT_BASE_URL, ANTHROPIC_VERSION, AnthropicClient, AnthropicConfig,
};
/// The attribute [`LlmClient`] implementations need, re-exported so they need not name the crate.
pub use async_trait::async_trait;
pub use client::{ChatStream, LlmClient, ResponseCollector, collect_stream};
pub use cost::{ModelPrice, PriceTable};
pub use error::{LlmError, TimeoutKind};
#[cfg(feature = "anthropic")]
pub use formats::anthropic::PromptCache;
#[cfg(feature = "http")]
pub use http::{NOTICE_TARGET, Timeouts, ensure_crypto_provider};
pub use image::{
    ChatImage, ImageError, ImageTokens, MAX_IMAGE_BYTES, Vision, media_type as image_media_type,
    supports_images,
};
pub use image_message::leave_out_images;
pub use models::{DEFAULT_CONTEXT_WINDOW, ModelInfo};
#[cfg(feature = "openai")]
pub use openai::{OPENAI_DEFAULT_BASE_URL, OpenAiClient, OpenAiConfig, list_models};
pub use provider_kind::{ProviderKind, ReasoningEffort, UnknownEffort, UnknownProvider};
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "openai-responses"
))]
pub use replay::{StreamFormat, decode_recorded_stream};
#[cfg(feature = "openai-responses")]
pub use responses::{OpenAiResponsesClient, OpenAiResponsesConfig, responses_only};
#[cfg(feature = "http")]
pub use retry::RetryPolicy;
pub use scripted::{
    Script, ScriptRoute, ScriptedClient, ScriptedError, ScriptedErrorKind, ScriptedToolCall,
    ScriptedTurn,
};
pub use tokens::{
    estimate_message_tokens, estimate_messages_tokens, estimate_request_tokens, estimate_tokens,
    estimate_tools_tokens, prepare_token_estimates,
};
pub use types::{
    ChatEvent, ChatMessage, ChatRequest, ChatResponse, FinishReason, Reasoning, Role, ToolCall,
    ToolChoice, ToolSpec, Usage,
};
pub use web_search::{WebSearchAnswer, WebSearchOptions, WebSource};
pub use window::{
    ContextWindow, OLLAMA_DEFAULT_WINDOW, WindowSource, stated_prompt, stated_window,
};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
