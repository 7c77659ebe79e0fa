//! The OpenAI chat-completions wire format: request bodies, responses, stream chunks and error
//! bodies. No I/O here.

use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use crate::error::LlmError;
use crate::formats::{ErrorInfo, looks_like_context_overflow};
use crate::types::{ChatMessage, ChatRequest, ChatResponse, Reasoning, ToolCall, Usage};

pub(crate) use super::openai_stream::StreamDecoder;

/// The message fields OpenAI-compatible servers carry reasoning in: `reasoning_content`
/// (DeepSeek, Qwen, GLM, Kimi, llama.cpp, vLLM) and `reasoning` (OpenRouter, newer vLLM).
const REASONING_FIELDS: [&str; 2] = ["reasoning_content", "reasoning"];

/// Whether `model` takes `max_completion_tokens` instead of `max_tokens` (OpenAI's reasoning
/// models and GPT-5 reject the older name).
fn uses_max_completion_tokens(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    ["o1", "o3", "o4", "gpt-5"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

fn message_json(message: &ChatMessage) -> Value {
    match message {
        ChatMessage::System(text) => json!({"role": "system", "content": text}),
        ChatMessage::User(text) => json!({"role": "user", "content": text}),
        ChatMessage::Assistant {
            text,
            tool_calls,
            reasoning,
        } => {
            // `content` is a string even on a turn of tool calls only: OpenAI accepts `""` as
            // it accepts `null`, and llama.cpp's Python server refuses `null` with a 500.
            let content = text.as_deref().unwrap_or("");
            let mut object = json!({"role": "assistant", "content": content});
            // Reasoning goes back only in the field the server sent it in: Anthropic and
            // Responses reasoning never reach an OpenAI-compatible server, and a message without
            // reasoning text gets no field (strict servers refuse unknown fields).
            for (field, text) in reasoning_fields(reasoning) {
                object[field] = Value::String(text);
            }
            if !tool_calls.is_empty() {
                object["tool_calls"] = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        })
                    })
                    .collect();
            }
            object
        }
        ChatMessage::Tool {
            tool_call_id,
            content,
        } => {
            json!({"role": "tool", "tool_call_id": tool_call_id, "content": content})
        }
    }
}

/// The reasoning texts of a message joined per field, in the order the fields first appear.
fn reasoning_fields(reasoning: &[Reasoning]) -> Vec<(&str, String)> {
    let mut fields: Vec<(&str, String)> = Vec::new();
    for piece in reasoning {
        let Reasoning::Text { field, text } = piece else {
            continue;
        };
        match fields.iter_mut().find(|(name, _)| name == field) {
            Some((_, joined)) => joined.push_str(text),
            None => fields.push((field.as_str(), text.clone())),
        }
    }
    fields
}

/// The messages of a request as JSON, adjacent system messages joined into one (blank line
/// between them): the static system prompt and the plan arrive as two messages, and some chat
/// templates accept only one. The static part stays a byte-identical prefix either way.
fn messages_json(messages: &[ChatMessage]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    let mut previous_was_system = false;
    for message in messages {
        if let ChatMessage::System(text) = message
            && previous_was_system
            && let Some(Value::String(content)) =
                out.last_mut().and_then(|last| last.get_mut("content"))
        {
            content.push_str("\n\n");
            content.push_str(text);
            continue;
        }
        previous_was_system = matches!(message, ChatMessage::System(_));
        out.push(message_json(message));
    }
    out
}

/// The JSON body of a chat-completions request.
pub(crate) fn request_body(request: &ChatRequest, stream: bool) -> Value {
    let mut body = json!({
        "model": request.model,
        "messages": messages_json(&request.messages),
        "stream": stream,
    });
    if stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                })
            })
            .collect();
        // Sent whenever tools are: llama.cpp's server renders the tools into the prompt only
        // when a choice is given, and `auto` is what every server assumes without one.
        if let Some(choice) = request.effective_tool_choice() {
            body["tool_choice"] = json!(choice.as_str());
        }
    }
    if let Some(temperature) = request.temperature {
        body["temperature"] = json!(temperature);
    }
    if let Some(max_tokens) = request.max_tokens {
        let field = if uses_max_completion_tokens(&request.model) {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body[field] = json!(max_tokens);
    }
    if !request.stop.is_empty() {
        body["stop"] = json!(request.stop);
    }
    if let Some(effort) = &request.reasoning_effort {
        body["reasoning_effort"] = json!(effort);
    }
    body
}

#[derive(Deserialize)]
pub(super) struct WireUsage {
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
pub(super) struct WireFunction {
    #[serde(default)]
    pub(super) name: Option<String>,
    /// A string of JSON as OpenAI sends it; an object (as some Ollama and LiteLLM versions
    /// send) is taken as its JSON text.
    #[serde(default, deserialize_with = "arguments_text")]
    pub(super) arguments: Option<String>,
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
pub(super) struct WireToolCall {
    #[serde(default)]
    pub(super) index: Option<usize>,
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) function: Option<WireFunction>,
}

#[derive(Deserialize)]
pub(super) struct WireMessage {
    #[serde(default)]
    pub(super) content: Option<String>,
    #[serde(default)]
    pub(super) tool_calls: Option<Vec<WireToolCall>>,
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
    pub(super) fn reasoning(&mut self) -> Vec<(String, String)> {
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
pub(super) struct WireChoice {
    #[serde(default, alias = "delta")]
    pub(super) message: Option<WireMessage>,
    #[serde(default)]
    pub(super) finish_reason: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct WireResponse {
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) model: Option<String>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub(super) choices: Vec<WireChoice>,
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
    #[serde(default)]
    pub(super) error: Option<Value>,
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
pub(super) fn stream_error(error: &Value) -> LlmError {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ToolSpec;

    #[test]
    fn request_bodies_follow_the_wire_format() {
        let mut request = ChatRequest::new(
            "gpt-4o",
            vec![
                ChatMessage::system("sys"),
                ChatMessage::user("hi"),
                ChatMessage::assistant(None, vec![ToolCall::new("c1", "f", "{}")]),
                ChatMessage::tool_result("c1", "ok"),
            ],
        )
        .with_tools(vec![ToolSpec::new(
            "f",
            "does f",
            json!({"type": "object"}),
        )]);
        request.max_tokens = Some(10);
        request.stop = vec!["END".into()];
        let body = request_body(&request, true);
        assert_eq!(body["messages"][2]["content"], "");
        assert_eq!(body["tool_choice"], "auto");
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["name"],
            "f"
        );
        assert_eq!(body["messages"][3]["tool_call_id"], "c1");
        assert_eq!(body["tools"][0]["function"]["parameters"]["type"], "object");
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["max_tokens"], 10);
        assert_eq!(body["stop"][0], "END");
        request.model = "o3-mini".into();
        assert_eq!(request_body(&request, false)["max_completion_tokens"], 10);
    }

    #[test]
    fn adjacent_system_messages_are_sent_as_one() {
        let request = ChatRequest::new(
            "gpt-4o",
            vec![
                ChatMessage::system("static"),
                ChatMessage::system("## Current Plan"),
                ChatMessage::user("task"),
                ChatMessage::system("later note"),
            ],
        );
        let body = request_body(&request, false);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "static\n\n## Current Plan"},
                {"role": "user", "content": "task"},
                {"role": "system", "content": "later note"},
            ])
        );
    }

    #[test]
    fn error_bodies_are_read() {
        let info = parse_error(
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
        );
        assert!(info.context_overflow);
        assert_eq!(parse_error("plain text").message, "plain text");
    }
}
