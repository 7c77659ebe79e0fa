//! What the Anthropic Messages API sends back, read without I/O: a whole message, its usage and
//! error bodies and events. Both the request side (`anthropic.rs`) and the stream decoder
//! (`anthropic_stream.rs`) use it, and it uses neither.

use serde_json::Value;

use crate::error::LlmError;
use crate::formats::{ErrorInfo, looks_like_context_overflow};
use crate::types::{ChatResponse, Reasoning, ToolCall, Usage};

/// Usage from an Anthropic `usage` object; `prompt_tokens` counts cache reads and writes too.
pub(crate) fn usage_of(usage: &Value) -> Usage {
    let field = |name: &str| usage.get(name).and_then(Value::as_u64).unwrap_or(0);
    let cached = field("cache_read_input_tokens");
    Usage {
        prompt_tokens: field("input_tokens") + cached + field("cache_creation_input_tokens"),
        completion_tokens: field("output_tokens"),
        cached_tokens: cached,
        estimated: false,
    }
}

pub(crate) fn string(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Reads a complete (non-streaming) Messages response.
pub(crate) fn parse_response(body: &str) -> Result<ChatResponse, LlmError> {
    let value: Value = serde_json::from_str(body)
        .map_err(|err| LlmError::malformed(format!("invalid message: {err}")))?;
    if value.get("type").and_then(Value::as_str) == Some("error") {
        return Err(error_event(&value));
    }
    let content = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::malformed("the message has no content"))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    let mut reasoning = Vec::new();
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("thinking") => reasoning.push(Reasoning::Thinking {
                thinking: string(block, "thinking").unwrap_or_default(),
                signature: string(block, "signature").unwrap_or_default(),
            }),
            Some("redacted_thinking") => reasoning.push(Reasoning::RedactedThinking {
                data: string(block, "data").unwrap_or_default(),
            }),
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => tool_calls.push(ToolCall {
                id: string(block, "id").unwrap_or_else(|| format!("toolu_{}", tool_calls.len())),
                name: string(block, "name")
                    .ok_or_else(|| LlmError::malformed("a tool_use block has no name"))?,
                arguments: block
                    .get("input")
                    .map_or_else(|| "{}".to_string(), Value::to_string),
            }),
            _ => {}
        }
    }
    Ok(ChatResponse {
        text: (!text.is_empty()).then_some(text),
        tool_calls,
        usage: value.get("usage").map(usage_of),
        finish_reason: string(&value, "stop_reason"),
        response_id: string(&value, "id"),
        model: string(&value, "model"),
        reasoning,
    })
}

/// The error an `error` event (or body) stands for.
pub(crate) fn error_event(value: &Value) -> LlmError {
    let error = value.get("error").unwrap_or(value);
    let message = string(error, "message").unwrap_or_else(|| error.to_string());
    match error.get("type").and_then(Value::as_str) {
        Some("rate_limit_error") => LlmError::RateLimited {
            retry_after: None,
            message,
        },
        Some("overloaded_error") => LlmError::Server {
            status: 529,
            message,
        },
        Some("authentication_error" | "permission_error") => LlmError::Authentication {
            status: 401,
            message,
        },
        _ if looks_like_context_overflow(None, &message) => {
            LlmError::ContextWindowExceeded { message }
        }
        Some("invalid_request_error") => LlmError::BadRequest {
            status: 400,
            message,
        },
        _ => LlmError::Server { status: 0, message },
    }
}

/// Reads an error body: `{"type": "error", "error": {"type", "message"}}`, or any text.
pub(crate) fn parse_error(body: &str) -> ErrorInfo {
    let value: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let message = value
        .get("error")
        .and_then(|error| string(error, "message"))
        .unwrap_or_else(|| body.trim().to_string());
    ErrorInfo::new(message, None)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn error_events_map_to_variants() {
        let overloaded = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        assert!(error_event(&overloaded).is_retryable());
        let long = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 1 tokens > 0 maximum"}});
        assert!(matches!(
            error_event(&long),
            LlmError::ContextWindowExceeded { .. }
        ));
        assert!(parse_error(&long.to_string()).context_overflow);
    }
}
