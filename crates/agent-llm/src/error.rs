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
/// (see [`crate::RetryPolicy`]), so an error that reaches the caller is final for that call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
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
    /// The provider rejected the request for another reason (other 4xx).
    #[error("bad request ({status}): {message}")]
    BadRequest {
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The provider failed (5xx, Anthropic's 529 overloaded, or an error event mid-stream).
    #[error("server error ({status}): {message}")]
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
    /// The provider answered something that is not its documented wire format.
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
