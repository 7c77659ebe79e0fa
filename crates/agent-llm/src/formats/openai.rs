//! The OpenAI chat-completions wire format: request bodies, responses, stream chunks and error
//! bodies. No I/O here.

use std::collections::HashMap;

use eventsource_stream::Event;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::LlmError;
use crate::formats::sse::SseDecoder;
use crate::formats::{ErrorInfo, looks_like_context_overflow};
use crate::types::{ChatEvent, ChatMessage, ChatRequest, ChatResponse, Reasoning, ToolCall, Usage};

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
            let mut object = json!({"role": "assistant", "content": text});
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
struct WireUsage {
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
        }
    }
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
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
    fn reasoning(&mut self) -> Vec<(String, String)> {
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
struct WireChoice {
    #[serde(default, alias = "delta")]
    message: Option<WireMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
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
    for (position, call) in message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let function = call
            .function
            .ok_or_else(|| LlmError::malformed("a tool call has no function"))?;
        tool_calls.push(ToolCall {
            id: call.id.unwrap_or_else(|| format!("call_{position}")),
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
fn stream_error(error: &Value) -> LlmError {
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
    ErrorInfo {
        context_overflow: looks_like_context_overflow(code, &message),
        message,
    }
}

/// Decodes a chat-completions stream: `data:` chunks, then `data: [DONE]`.
#[derive(Debug, Default)]
pub(crate) struct StreamDecoder {
    started: bool,
    /// Wire tool-call index to the call's position among this response's tool calls and id.
    tool_calls: HashMap<usize, (usize, String)>,
    /// How many tool calls have started.
    tool_count: usize,
    finished: bool,
    done: bool,
}

impl StreamDecoder {
    fn tool_call(&mut self, call: WireToolCall, events: &mut Vec<ChatEvent>) {
        let wire_index = call.index.unwrap_or(self.tool_count);
        let function = call.function.unwrap_or(WireFunction {
            name: None,
            arguments: None,
        });
        // Some servers number every call 0; a new id with a name starts a new call all the same.
        let known = self.tool_calls.get(&wire_index).filter(|(_, id)| {
            let new_call = function
                .name
                .as_deref()
                .is_some_and(|name| !name.is_empty())
                && call
                    .id
                    .as_deref()
                    .is_some_and(|new| !new.is_empty() && new != id);
            !new_call
        });
        let index = match known {
            Some(&(index, _)) => index,
            None => {
                let index = self.tool_count;
                self.tool_count += 1;
                let id = call.id.unwrap_or_else(|| format!("call_{index}"));
                self.tool_calls.insert(wire_index, (index, id.clone()));
                events.push(ChatEvent::ToolCallStart {
                    index,
                    id,
                    name: function.name.clone().unwrap_or_default(),
                });
                index
            }
        };
        if let Some(fragment) = function.arguments.filter(|fragment| !fragment.is_empty()) {
            events.push(ChatEvent::ToolCallArgs { index, fragment });
        }
    }
}

impl SseDecoder for StreamDecoder {
    fn decode(&mut self, event: &Event) -> Result<Vec<ChatEvent>, LlmError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(Vec::new());
        }
        let chunk: WireResponse = serde_json::from_str(data)
            .map_err(|err| LlmError::malformed(format!("invalid stream chunk {data:?}: {err}")))?;
        if let Some(error) = chunk.error {
            return Err(stream_error(&error));
        }
        let mut events = Vec::new();
        if !self.started {
            self.started = true;
            events.push(ChatEvent::Started {
                response_id: chunk.id,
                model: chunk.model,
            });
        }
        for choice in chunk.choices {
            if let Some(mut delta) = choice.message {
                for (field, delta) in delta.reasoning() {
                    events.push(ChatEvent::ReasoningText { field, delta });
                }
                if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
                    events.push(ChatEvent::Text(text));
                }
                for call in delta.tool_calls.unwrap_or_default() {
                    self.tool_call(call, &mut events);
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finished = true;
                events.push(ChatEvent::Finish { reason });
            }
        }
        if let Some(usage) = chunk.usage {
            events.push(ChatEvent::Usage(usage.into()));
        }
        Ok(events)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn end(&mut self) -> Result<Vec<ChatEvent>, LlmError> {
        if self.finished {
            Ok(Vec::new())
        } else {
            Err(LlmError::network(
                "the stream ended before the response was complete",
            ))
        }
    }
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
        assert_eq!(body["messages"][2]["content"], Value::Null);
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

    fn decode(decoder: &mut StreamDecoder, chunk: Value) -> Vec<ChatEvent> {
        let event = Event {
            data: chunk.to_string(),
            ..Event::default()
        };
        decoder.decode(&event).unwrap()
    }

    #[test]
    fn calls_that_share_wire_index_zero_are_told_apart_by_id() {
        let mut decoder = StreamDecoder::default();
        let call = |id: &str, name: &str, args: &str| {
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "id": id, "function": {"name": name, "arguments": args}}
            ]}}]})
        };
        let mut events = decode(&mut decoder, call("a", "one", "{}"));
        events.extend(decode(&mut decoder, call("b", "two", "{\"x\":")));
        events.extend(decode(
            &mut decoder,
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}}]}),
        ));
        let starts: Vec<_> = events
            .iter()
            .filter_map(|event| match event {
                ChatEvent::ToolCallStart { index, id, .. } => Some((*index, id.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(starts, [(0, "a"), (1, "b")]);
        assert_eq!(
            events.last(),
            Some(&ChatEvent::ToolCallArgs {
                index: 1,
                fragment: "1}".into()
            })
        );
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
