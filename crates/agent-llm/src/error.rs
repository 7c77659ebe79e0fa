//! The one error type of this crate, with variants a caller acts on.

use std::time::Duration;

/// Which deadline passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutKind {
    /// Connecting and getting the response headers (and, without streaming, the body) took
    /// longer than the request timeout.
    Request,
    /// A streaming response sent no bytes for longer than the idle timeout.
    Idle,
}

impl std::fmt::Display for TimeoutKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimeoutKind::Request => "request",
            TimeoutKind::Idle => "idle stream",
        })
    }
}

/// Everything that can go wrong when asking a model.
///
/// The variants are what a caller decides on: compact on
/// [`ContextWindowExceeded`](LlmError::ContextWindowExceeded), back off on
/// [`RateLimited`](LlmError::RateLimited), stop and tell the user on
/// [`Authentication`](LlmError::Authentication). Clients already retry what is worth retrying
/// (see `RetryPolicy`, with the `http` feature), so an error that reaches the caller is final for that call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The API key is missing, wrong or lacks permission (401, 403).
    #[error("authentication failed ({status}): {message}")]
    Authentication {
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The provider asks to slow down (429).
    #[error("rate limited{}: {message}", retry_after.map(|d| format!(" (retry after {d:?})")).unwrap_or_default())]
    RateLimited {
        /// How long the provider asked to wait, from `Retry-After` / `retry-after-ms`.
        retry_after: Option<Duration>,
        /// The provider's message.
        message: String,
    },
    /// The prompt does not fit the model's context window; compact and try again.
    #[error("context window exceeded: {message}")]
    ContextWindowExceeded {
        /// The provider's message.
        message: String,
    },
    /// The provider rejected the request for another reason: another 4xx, or a 5xx whose body
    /// says the request failed validation (llama.cpp's Python server answers a request it
    /// cannot parse with a 500 and a pydantic dump). Sending it again cannot help.
    ///
    /// The message is the provider's whole text (for the trace); the error's display shortens
    /// it to one line.
    #[error("bad request ({status}): {}", one_line(message))]
    BadRequest {
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The provider failed (5xx, Anthropic's 529 overloaded, or an error event mid-stream).
    #[error("server error ({status}): {}", one_line(message))]
    Server {
        /// The HTTP status (0 for an error reported inside a stream).
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The connection failed or was cut.
    #[error("network error: {message}")]
    Network {
        /// What failed.
        message: String,
    },
    /// A deadline passed.
    #[error("{kind} timeout after {after:?}")]
    Timeout {
        /// Which deadline.
        kind: TimeoutKind,
        /// Its length.
        after: Duration,
    },
    /// The server ended a successful response cleanly without sending any data: an empty
    /// `200` body or an event stream without a single event. llama.cpp's server does so when it
    /// cannot stream an answer (a prompt over its context, or streaming with automatic tool
    /// choice); the OpenAI-compatible client then asks again without streaming, which gets the
    /// server's real answer or error.
    #[error("the server ended the response without sending any data: {message}")]
    EmptyResponse {
        /// What was asked and received.
        message: String,
    },
    /// The provider answered something that is not its documented wire format (a stream that
    /// ends cleanly before the answer is complete among others).
    #[error("malformed response: {message}")]
    MalformedResponse {
        /// What was wrong.
        message: String,
    },
    /// A scripted client was asked for more turns than its script has.
    #[error("the script has no turn left: all {served} scripted turns were already served")]
    ScriptExhausted {
        /// How many turns the script had.
        served: usize,
    },
    /// The client is misconfigured (invalid base URL, header or script).
    #[error("invalid configuration: {message}")]
    Config {
        /// What is wrong.
        message: String,
    },
    /// The client cannot do what was asked (a web search on a provider that offers none).
    #[error("not supported: {message}")]
    Unsupported {
        /// What cannot be done, and by whom.
        message: String,
    },
    /// A tool the provider runs on its own servers (its web search) failed, though the request
    /// succeeded: the provider's error code says why (`max_uses_exceeded`, `too_many_requests`,
    /// `query_too_long`, `unavailable`, ...).
    #[error("the provider's {tool} failed: {code}")]
    ServerTool {
        /// The tool (`web_search`).
        tool: String,
        /// The provider's error code.
        code: String,
    },
}

impl LlmError {
    /// Whether trying the same request again may succeed: rate limits, server errors, network
    /// errors and timeouts.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            LlmError::RateLimited { .. }
                | LlmError::Server { .. }
                | LlmError::Network { .. }
                | LlmError::Timeout { .. }
        )
    }

    /// A malformed-response error with this message.
    pub(crate) fn malformed(message: impl Into<String>) -> Self {
        LlmError::MalformedResponse {
            message: message.into(),
        }
    }

    /// An empty-response error with this message.
    #[cfg(feature = "http")]
    pub(crate) fn empty(message: impl Into<String>) -> Self {
        LlmError::EmptyResponse {
            message: message.into(),
        }
    }

    /// A network error with this message.
    #[cfg(feature = "http")]
    pub(crate) fn network(message: impl Into<String>) -> Self {
        LlmError::Network {
            message: message.into(),
        }
    }

    /// A configuration error with this message.
    pub(crate) fn config(message: impl Into<String>) -> Self {
        LlmError::Config {
            message: message.into(),
        }
    }
}

/// The longest display of a provider's message, in characters.
const ONE_LINE_MAX: usize = 240;

/// A provider's message on one line: whitespace runs (newlines included) become one space, and
/// a text longer than [`ONE_LINE_MAX`] characters is cut with `…`.
pub(crate) fn one_line(message: &str) -> String {
    let joined = message.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.char_indices().nth(ONE_LINE_MAX) {
        Some((cut, _)) => format!("{}…", &joined[..cut]),
        None => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_messages_display_on_one_line() {
        let error = LlmError::BadRequest {
            status: 500,
            message: format!("7 validation errors:\n  {}\n  more", "x".repeat(400)),
        };
        let shown = error.to_string();
        assert!(!shown.contains('\n'), "{shown}");
        assert!(shown.starts_with("bad request (500): 7 validation errors: xxx"));
        assert!(shown.ends_with('…'));
        let LlmError::BadRequest { message, .. } = error else {
            unreachable!()
        };
        assert!(
            message.ends_with("more"),
            "the whole text stays in the value"
        );
    }
}
