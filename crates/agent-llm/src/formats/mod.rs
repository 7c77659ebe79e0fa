//! Wire formats: how the chat types map to each provider's JSON, separate from the transport.
//!
//! Nothing here imports from the transport (`http.rs`, `retry.rs`) or from reqwest: the
//! transport hands bodies and server-sent events in and gets chat types back.

#[cfg(feature = "anthropic")]
pub(crate) mod anthropic;
#[cfg(feature = "anthropic")]
mod anthropic_reply;
#[cfg(feature = "anthropic")]
pub(crate) mod anthropic_search;
#[cfg(feature = "anthropic")]
mod anthropic_stream;
pub(crate) mod images;
#[cfg(feature = "openai")]
pub(crate) mod openai;
#[cfg(feature = "openai")]
mod openai_reply;
#[cfg(feature = "openai")]
mod openai_stream;
#[cfg(feature = "openai-responses")]
pub(crate) mod responses;
#[cfg(feature = "openai")]
pub(crate) mod server_window;
pub(crate) mod sse;

/// What a provider's error body says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ErrorInfo {
    /// The provider's message (or the raw body).
    pub(crate) message: String,
    /// Whether the body says the prompt is too long for the model.
    pub(crate) context_overflow: bool,
    /// Whether the body says the request itself is invalid (a schema validation error), which
    /// no retry can fix even when it comes with a 5xx status.
    pub(crate) invalid_request: bool,
}

impl ErrorInfo {
    /// What a body with this message (and error code, when it has one) says.
    pub(crate) fn new(message: String, code: Option<&str>) -> Self {
        ErrorInfo {
            context_overflow: looks_like_context_overflow(code, &message),
            invalid_request: looks_like_validation_error(&message),
            message,
        }
    }
}

/// Whether an error message is a request-validation failure: pydantic's dump (llama.cpp's
/// Python server, vLLM, LiteLLM, all on FastAPI), or a "validation error" of other servers.
pub(crate) fn looks_like_validation_error(message: &str) -> bool {
    const PHRASES: &[&str] = &[
        "validation error",
        "input should be a valid",
        "field required",
        "extra inputs are not permitted",
        "unprocessable entity",
        "is not supported",
    ];
    let message = message.to_lowercase();
    PHRASES.iter().any(|phrase| message.contains(phrase))
}

/// Whether an error code or message says the prompt does not fit the context window, in the
/// words of OpenAI, Anthropic, vLLM, llama.cpp and other compatible servers.
pub(crate) fn looks_like_context_overflow(code: Option<&str>, message: &str) -> bool {
    const PHRASES: &[&str] = &[
        "context_length_exceeded",
        "context length",
        "context window",
        "maximum context",
        "prompt is too long",
        "exceed_context_size",
        "exceeds the available context",
        "context size",
        "too many tokens",
        "input is too long",
    ];
    let message = message.to_lowercase();
    code.is_some_and(|code| {
        code == "context_length_exceeded" || code == "exceed_context_size_error"
    }) || PHRASES.iter().any(|phrase| message.contains(phrase))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_overflow_phrases_are_recognised() {
        assert!(looks_like_context_overflow(
            Some("context_length_exceeded"),
            ""
        ));
        assert!(looks_like_context_overflow(
            None,
            "prompt is too long: 210000 tokens > 200000 maximum"
        ));
        assert!(looks_like_context_overflow(
            None,
            "This model's maximum context length is 8192 tokens"
        ));
        assert!(!looks_like_context_overflow(None, "invalid temperature"));
    }

    #[test]
    fn validation_errors_are_recognised() {
        assert!(looks_like_validation_error(
            "7 validation errors:\n  {'type': 'string_type', 'msg': 'Input should be a valid string'}"
        ));
        assert!(!looks_like_validation_error("CUDA out of memory"));
        assert!(!looks_like_validation_error("Internal Server Error"));
    }
}
