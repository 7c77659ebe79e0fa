//! What an OpenAI-compatible chat-completions server sends back, read without I/O: the wire
//! shapes of a response and of a stream chunk (which the stream decoder, `openai_stream.rs`,
//! shares), whole responses, and error bodies and objects.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::error::LlmError;
use crate::formats::{ErrorInfo, looks_like_context_overflow};
use crate::types::{ChatResponse, Reasoning, ToolCall, Usage};

/// The message fields OpenAI-compatible servers carry reasoning in: `reasoning_content`
/// (DeepSeek, Qwen, GLM, Kimi, llama.cpp, vLLM) and `reasoning` (OpenRouter, newer vLLM).
const REASONING_FIELDS: [&str; 2] = ["reasoning_content", "reasoning"];

#[derive(Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl From<WireUsage> for Usage {
    fn from(wire: WireUsage) -> Self {
        Usage {
            prompt_tokens: wire.prompt_tokens,
            completion_tokens: wire.completion_tokens,
            cached_tokens: wire
                .prompt_tokens_details
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0),
            estimated: false,
        }
    }
}

#[derive(Deserialize, Default)]
pub(crate) struct WireFunction {
    #[serde(default)]
    pub(crate) name: Option<String>,
    /// A string of JSON as OpenAI sends it; an object (as some Ollama and LiteLLM versions
    /// send) is taken as its JSON text.
    #[serde(default, deserialize_with = "arguments_text")]
    pub(crate) arguments: Option<String>,
}

/// Tool call arguments as JSON text, whether the server sent a string or a JSON value.
fn arguments_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<Value>::deserialize(deserializer)? {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text),
        Some(other) => Some(other.to_string()),
    })
}

#[derive(Deserialize)]
pub(crate) struct WireToolCall {
    #[serde(default)]
    pub(crate) index: Option<usize>,
    #[serde(default)]
    pub(crate) id: Option<String>,
    #[serde(default)]
    pub(crate) function: Option<WireFunction>,
}

#[derive(Deserialize)]
pub(crate) struct WireMessage {
    #[serde(default)]
    pub(crate) content: Option<String>,
    #[serde(default)]
    pub(crate) tool_calls: Option<Vec<WireToolCall>>,
    /// The legacy single call, read when a server sends it without `tool_calls`.
    #[serde(default)]
    function_call: Option<WireFunction>,
    #[serde(default)]
    reasoning_content: Option<Value>,
    #[serde(default)]
    reasoning: Option<Value>,
}

impl WireMessage {
    /// The non-empty reasoning texts of the message (or delta), with the field each came in.
    /// `reasoning` is read only when it is a string (some servers put an object there), and
    /// not when it repeats `reasoning_content` (servers moving from one name to the other send
    /// both).
    pub(crate) fn reasoning(&mut self) -> Vec<(String, String)> {
        let mut values = [self.reasoning_content.take(), self.reasoning.take()];
        if values[0].is_some() && values[0] == values[1] {
            values[1] = None;
        }
        REASONING_FIELDS
            .iter()
            .zip(values)
            .filter_map(|(field, value)| match value {
                Some(Value::String(text)) if !text.is_empty() => Some((field.to_string(), text)),
                _ => None,
            })
            .collect()
    }
}

#[derive(Deserialize)]
pub(crate) struct WireChoice {
    #[serde(default, alias = "delta")]
    pub(crate) message: Option<WireMessage>,
    #[serde(default)]
    pub(crate) finish_reason: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct WireResponse {
    #[serde(default)]
    pub(crate) id: Option<String>,
    #[serde(default)]
    pub(crate) model: Option<String>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub(crate) choices: Vec<WireChoice>,
    #[serde(default)]
    pub(crate) usage: Option<WireUsage>,
    #[serde(default)]
    pub(crate) error: Option<Value>,
}

/// A list that a server may send as `null`.
fn null_as_empty<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

/// Reads a complete (non-streaming) chat-completions response.
pub(crate) fn parse_response(body: &str) -> Result<ChatResponse, LlmError> {
    let wire: WireResponse = serde_json::from_str(body)
        .map_err(|err| LlmError::malformed(format!("invalid chat completion: {err}")))?;
    if let Some(error) = wire.error {
        return Err(stream_error(&error));
    }
    let choice = wire
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| LlmError::malformed("the chat completion has no choices"))?;
    let mut message = choice
        .message
        .ok_or_else(|| LlmError::malformed("the choice has no message"))?;
    let reasoning = message
        .reasoning()
        .into_iter()
        .map(|(field, text)| Reasoning::Text { field, text })
        .collect();
    let mut tool_calls = Vec::new();
    let mut wire_calls = message.tool_calls.unwrap_or_default();
    if wire_calls.is_empty()
        && let Some(function) = message.function_call.take()
    {
        wire_calls.push(WireToolCall {
            index: None,
            id: None,
            function: Some(function),
        });
    }
    for (position, call) in wire_calls.into_iter().enumerate() {
        let function = call
            .function
            .ok_or_else(|| LlmError::malformed("a tool call has no function"))?;
        tool_calls.push(ToolCall {
            // Some servers (Ollama, older vLLM) send no id or an empty one.
            id: call
                .id
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| format!("call_{position}")),
            name: function
                .name
                .ok_or_else(|| LlmError::malformed("a tool call has no name"))?,
            arguments: function.arguments.unwrap_or_default(),
        });
    }
    Ok(ChatResponse {
        text: message.content.filter(|text| !text.is_empty()),
        tool_calls,
        usage: wire.usage.map(Usage::from),
        finish_reason: choice.finish_reason,
        response_id: wire.id,
        model: wire.model,
        reasoning,
    })
}

/// The error an `{"error": …}` object inside a response or stream stands for.
pub(crate) fn stream_error(error: &Value) -> LlmError {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| error.to_string());
    let code = error.get("code").and_then(Value::as_str);
    if looks_like_context_overflow(code, &message) {
        LlmError::ContextWindowExceeded { message }
    } else {
        LlmError::Server { status: 0, message }
    }
}

/// Reads an error body: `{"error": {"message", "type", "code"}}`, or any text.
pub(crate) fn parse_error(body: &str) -> ErrorInfo {
    let value: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let error = value.get("error").unwrap_or(&value);
    let message = match error {
        Value::Object(_) => error
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string),
        Value::String(text) => Some(text.clone()),
        _ => None,
    }
    .unwrap_or_else(|| body.trim().to_string());
    let code = error.get("code").and_then(Value::as_str);
    ErrorInfo::new(message, code)
}
